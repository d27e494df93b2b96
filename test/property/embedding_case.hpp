// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/embedding_case.hpp -- randomized calls of strata::embedding_bag and
// strata::embedding_bag_backward: 1-3 tables of random rows / dims / row strides / padding index in
// every row format, 1-4 features (batch sizes incl. 0), CSR bags of 0-8 indices or fixed-size bags,
// int32 / int64 indices, per-sample weights, every pooling, every bounds policy (clamp / skip with
// bad indices and malformed offsets; error with a bad index must throw embedding::bounds_error),
// output formats and strides; backward as dense or sparse gradients or a fused SGD / Adagrad /
// row-wise Adagrad update. Outputs poisoned; compared with ops/embedding/reference.hpp at
// test/embedding's tolerances. With `fuzz`, the draws also break the arguments. No Catch2. Emulator
// builds only (device pointers are host memory, so the reference reads the device buffers).
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "random_source.hpp"
#include "strata/embedding.hpp"
#include "strata/ops/embedding/reference.hpp"

namespace strata_property::embedding {

namespace E = strata::embedding;

/// Device bytes with poisoned guard bytes on each side (checked after the call).
struct buffer {
  std::unique_ptr<strata::device_buffer<unsigned char>> mem;
  unsigned char* data = nullptr;
  std::size_t bytes = 0;
  void alloc(std::size_t n, int mis = 0, int fill = 0xFF) {
    bytes = n;
    // data: 256-byte aligned (workspaces need it) plus `mis`, with at least 64 guard bytes each side.
    mem = std::make_unique<strata::device_buffer<unsigned char>>(n + 64 + 256 + 64);
    std::memset(mem->data(), 0xA5, mem->size());
    const auto base = reinterpret_cast<std::uintptr_t>(mem->data()) + 64;
    data = mem->data() + ((base + 255) / 256 * 256 - reinterpret_cast<std::uintptr_t>(mem->data())) + mis;
    std::memset(data, fill, n);
  }
  bool guards_intact() const {
    if (!mem) return true;
    for (unsigned char* p = mem->data(); p < data; ++p)
      if (*p != 0xA5) return false;
    for (unsigned char* p = data + bytes; p < mem->data() + mem->size(); ++p)
      if (*p != 0xA5) return false;
    return true;
  }
};

/// Output and gradient elements: fp32, fp16 or bf16 (a strata::dtype).
inline void put_value(strata::dtype t, unsigned char* p, double v) {
  const float x = static_cast<float>(v);
  switch (t) {
    case strata::dtype::fp32: std::memcpy(p, &x, 4); return;
    case strata::dtype::fp16: { const auto b = strata::f16(x).bits(); std::memcpy(p, &b, 2); return; }
    case strata::dtype::bf16: { const auto b = strata::bf16(x).bits(); std::memcpy(p, &b, 2); return; }
    default: return;
  }
}
inline double get_value(strata::dtype t, const unsigned char* p) {
  if (t == strata::dtype::fp32) { float x; std::memcpy(&x, p, 4); return x; }
  std::uint16_t b;
  std::memcpy(&b, p, 2);
  return t == strata::dtype::fp16 ? double(float(strata::f16::from_bits(b))) : double(float(strata::bf16::from_bits(b)));
}
inline int out_bytes(strata::dtype t) { return t == strata::dtype::fp32 ? 4 : 2; }

/// Random row bytes of one table (as test/embedding/support.hpp's make_rows, any stride).
inline void fill_rows(E::scalar fmt, unsigned char* h, long long rows, int dim, long long stride, std::mt19937_64& g) {
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  for (long long i = 0; i < rows * stride; ++i) h[i] = static_cast<unsigned char>(g());
  for (long long r = 0; r < rows; ++r) {
    unsigned char* row = h + r * stride;
    for (int c = 0; c < dim; ++c) {
      const float x = val(g);
      switch (fmt) {
        case E::scalar::fp32: std::memcpy(row + 4 * c, &x, 4); break;
        case E::scalar::fp16: { auto b = strata::f16(x).bits(); std::memcpy(row + 2 * c, &b, 2); break; }
        case E::scalar::bf16: { auto b = strata::bf16(x).bits(); std::memcpy(row + 2 * c, &b, 2); break; }
        case E::scalar::fp8_e4m3: row[c] = strata::f8_e4m3(x * 8.f).bits(); break;
        default: break;
      }
    }
    if (fmt == E::scalar::int8_rowwise) {
      const float sc = 0.001f + 0.01f * (val(g) + 1.f), bi = val(g);
      std::memcpy(row + dim, &sc, 4);
      std::memcpy(row + dim + 4, &bi, 4);
    } else if (fmt == E::scalar::int4_rowwise) {
      const auto sc = strata::f16(0.01f + 0.05f * (val(g) + 1.f)).bits(), bi = strata::f16(val(g)).bits();
      std::memcpy(row + (dim + 1) / 2, &sc, 2);
      std::memcpy(row + (dim + 1) / 2 + 2, &bi, 2);
    }
  }
}

inline double forward_tolerance(double want, double mag, long long terms, strata::dtype out) {
  const double eps = out == strata::dtype::fp16 ? std::ldexp(1.0, -11) : out == strata::dtype::bf16 ? std::ldexp(1.0, -8) : 0.0;
  // fp16 outputs below 2^-14 are subnormal: their rounding is absolute, half of 2^-24.
  const double sub = out == strata::dtype::fp16 ? std::ldexp(1.0, -25) : 0.0;
  return (static_cast<double>(terms) + 4) * std::ldexp(1.0, -23) * mag + eps * std::fabs(want) * 1.01 + sub + 1e-30;
}
inline double grad_tolerance(const E::reference::backward_result& r, std::size_t t, std::size_t e) {
  return (static_cast<double>(r.terms[t][e]) + 4) * std::ldexp(1.0, -23) * r.mag[t][e] + 1e-30;
}

struct embedding_case {
  E::scalar fmt = E::scalar::fp32;
  std::vector<E::table> tables;
  std::vector<E::feature> features;
  std::vector<buffer> rows;
  std::vector<std::vector<unsigned char>> rows_before;
  buffer idx, off, weights, out, grad, work;
  long long n = 0, bags = 0;
  E::forward_args fa;
  // Backward.
  bool backward = false;
  E::backward_args ba;
  std::vector<buffer> dense, state;
  std::vector<float*> dense_ptrs, state_ptrs;
  std::vector<std::vector<float>> state_before;
  buffer sp_tables, sp_rows, sp_grads, sp_count;

  std::string describe() const {
    std::ostringstream s;
    const E::lookup& in = backward ? ba.in : fa.in;
    s << "rows " << E::to_string(in.row_format) << " tables";
    for (auto& t : in.tables) s << " {" << t.num_rows << "x" << t.dim << " stride " << t.row_stride_bytes << " pad " << t.padding_index << (t.rows ? "" : " null") << "}";
    s << " features";
    for (auto& f : in.features) s << " {t" << f.table << " b" << f.batch_size << "}";
    s << " n " << in.num_indices << (in.indices_type == E::index_type::int32 ? " int32" : " int64") << (in.offsets ? " csr" : " fixed ")
      << (in.offsets ? "" : std::to_string(in.bag_size)) << (in.per_sample_weights ? " weights" : "") << " pooling " << E::to_string(in.mode)
      << " policy " << E::to_string(in.policy);
    if (!backward) s << " out " << E::to_string(fa.output_format) << " stride " << fa.output_row_stride;
    else s << " grad " << E::to_string(ba.grad_format) << " kind " << static_cast<int>(ba.kind) << " opt " << static_cast<int>(ba.opt)
           << " stride " << ba.grad_row_stride;
    s << " work " << work.bytes;
    return s.str();
  }
  /// Flips a byte of the first output element (the oracle's self-test); false when there is none.
  bool corrupt_output() {
    unsigned char* p = nullptr;
    if (!backward) p = out.bytes ? out.data + out_bytes(fa.output_format) - 1 : nullptr;  // the sign / exponent byte
    else if (ba.kind == E::gradient::dense) { for (auto& d : dense) if (d.bytes) { p = d.data + 3; break; } }
    else if (ba.kind == E::gradient::sparse) p = sp_count.data;
    if (!p) return false;
    p[0] ^= 0x5A;
    return true;
  }
  void run(strata::stream& s) const {
    if (backward) strata::embedding_bag_backward(s, ba, {work.data, work.bytes});
    else strata::embedding_bag(s, fa, {work.data, work.bytes});
    s.synchronize();
  }
  std::string inputs_intact() const {
    for (std::size_t t = 0; t < rows.size(); ++t) {
      if (!rows[t].guards_intact()) return "bytes next to table " + std::to_string(t) + " were written";
      if (!(backward && ba.kind == E::gradient::fused) && rows[t].bytes && std::memcmp(rows[t].data, rows_before[t].data(), rows[t].bytes) != 0)
        return "table " + std::to_string(t) + " was written";
    }
    if (!idx.guards_intact() || !off.guards_intact() || !weights.guards_intact()) return "bytes next to indices / offsets / weights were written";
    return "";
  }
  std::string check() const { return backward ? check_backward() : check_forward(); }
  /// True when the input holds a bad index or a malformed bag (the reference's status).
  bool input_bad() const {
    E::forward_args f;
    f.in = backward ? ba.in : fa.in;
    return !E::reference::embedding_bag(f).st.ok();
  }

  std::string check_forward() const {
    const auto ref = E::reference::embedding_bag(fa);
    const int ob = out_bytes(fa.output_format);
    if (!out.guards_intact()) return "bytes next to the output were written";
    if (ref.out.size() * ob > out.bytes) return "internal: output smaller than the reference's";
    for (std::size_t i = 0; i < ref.out.size(); ++i) {
      const unsigned char* p = out.data + i * ob;
      if (std::isnan(ref.out[i])) {
        for (int k = 0; k < ob; ++k)
          if (p[k] != 0xFF) return "output element " + std::to_string(i) + " (not part of any output row) was written";
        continue;
      }
      const double got = get_value(fa.output_format, p);
      const double tol = forward_tolerance(ref.out[i], ref.mag[i], ref.terms[i], fa.output_format);
      if (!(std::fabs(got - ref.out[i]) <= tol))
        return "output element " + std::to_string(i) + " = " + std::to_string(got) + ", want " + std::to_string(ref.out[i]) +
               " (tolerance " + std::to_string(tol) + ")";
    }
    return inputs_intact();
  }

  std::string check_backward() const {
    // The reference reads the rows as they were before the call (a fused update rewrites them).
    E::backward_args ha = ba;
    std::vector<E::table> host_tables(ba.in.tables.begin(), ba.in.tables.end());
    for (std::size_t t = 0; t < host_tables.size(); ++t) host_tables[t].rows = rows_before[t].data();
    ha.in.tables = host_tables;
    const auto ref = E::reference::embedding_bag_backward(ha);
    std::ostringstream why;
    if (!grad.guards_intact()) return "bytes next to grad_output were written";
    switch (ba.kind) {
      case E::gradient::dense:
        for (std::size_t t = 0; t < tables.size(); ++t) {
          if (!dense[t].guards_intact()) return "bytes next to dense_grads[" + std::to_string(t) + "] were written";
          for (std::size_t e = 0; e < ref.grad[t].size(); ++e) {
            float x;
            std::memcpy(&x, dense[t].data + 4 * e, 4);
            if (!(std::fabs(x - ref.grad[t][e]) <= grad_tolerance(ref, t, e))) {
              why << "dense_grads[" << t << "][" << e << "] = " << x << ", want " << ref.grad[t][e];
              return why.str();
            }
          }
        }
        break;
      case E::gradient::sparse: {
        std::vector<std::pair<int, long long>> want;
        for (std::size_t t = 0; t < tables.size(); ++t)
          for (long long r = 0; r < tables[t].num_rows; ++r)
            if (ref.terms[t][static_cast<std::size_t>(r * tables[t].dim)] > 0) want.emplace_back(static_cast<int>(t), r);
        long long count;
        std::memcpy(&count, sp_count.data, 8);
        if (count != static_cast<long long>(want.size())) {
          why << "sparse_count = " << count << ", want " << want.size();
          return why.str();
        }
        long long max_dim = 1;
        for (auto& t : tables) max_dim = std::max<long long>(max_dim, t.dim);
        const long long stride = ba.sparse_grad_stride ? ba.sparse_grad_stride : max_dim;
        for (std::size_t u = 0; u < want.size(); ++u) {
          int t;
          long long r;
          std::memcpy(&t, sp_tables.data + 4 * u, 4);
          std::memcpy(&r, sp_rows.data + 8 * u, 8);
          if (t != want[u].first || r != want[u].second) {
            why << "sparse entry " << u << " is (" << t << ", " << r << "), want (" << want[u].first << ", " << want[u].second << ")";
            return why.str();
          }
          for (int c = 0; c < tables[t].dim; ++c) {
            float x;
            std::memcpy(&x, sp_grads.data + 4 * (u * stride + c), 4);
            const auto e = static_cast<std::size_t>(r * tables[t].dim + c);
            if (!(std::fabs(x - ref.grad[t][e]) <= grad_tolerance(ref, static_cast<std::size_t>(t), e))) {
              why << "sparse gradient " << u << " col " << c << " = " << x << ", want " << ref.grad[t][e];
              return why.str();
            }
          }
        }
        for (auto* b : {&sp_tables, &sp_rows, &sp_grads, &sp_count})
          if (!b->guards_intact()) return "bytes next to a sparse output were written";
        break;
      }
      case E::gradient::fused: {
        std::vector<std::vector<double>> want_rows, st;
        for (std::size_t t = 0; t < tables.size(); ++t) {
          const auto& tb = tables[t];
          const long long rs = tb.row_stride_bytes ? tb.row_stride_bytes : E::packed_row_bytes(fmt, tb.dim);
          want_rows.emplace_back();
          for (long long r = 0; r < tb.num_rows; ++r)
            for (int c = 0; c < tb.dim; ++c) want_rows.back().push_back(E::reference::element(fmt, rows_before[t].data() + r * rs, tb.dim, c));
          st.emplace_back(state_before.size() > t ? std::vector<double>(state_before[t].begin(), state_before[t].end()) : std::vector<double>());
        }
        E::reference::apply_optimizer(ha, ref, want_rows, st);
        const double fmt_eps = fmt == E::scalar::fp32 ? std::ldexp(1.0, -23) : fmt == E::scalar::fp16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
        for (std::size_t t = 0; t < tables.size(); ++t) {
          const auto& tb = tables[t];
          const long long rs = tb.row_stride_bytes ? tb.row_stride_bytes : E::packed_row_bytes(fmt, tb.dim);
          const long long rb = E::packed_row_bytes(fmt, tb.dim);
          for (long long r = 0; r < tb.num_rows; ++r) {
            const unsigned char* got_row = rows[t].data + r * rs;
            const unsigned char* old_row = rows_before[t].data() + r * rs;
            if (std::memcmp(got_row + rb, old_row + rb, static_cast<std::size_t>(rs - rb)) != 0)
              return "table " + std::to_string(t) + " row " + std::to_string(r) + ": bytes past the row (stride padding) were written";
            for (int c = 0; c < tb.dim; ++c) {
              const auto e = static_cast<std::size_t>(r * tb.dim + c);
              if (ref.terms[t][e] == 0) {
                if (std::memcmp(got_row, old_row, static_cast<std::size_t>(rb)) != 0)
                  return "table " + std::to_string(t) + " row " + std::to_string(r) + " has no gradient but was written";
                break;
              }
              const double x = E::reference::element(fmt, got_row, tb.dim, c);
              const double dg = grad_tolerance(ref, t, e);
              const double h = ba.opt == E::optimizer::sgd ? 1.0 : ba.opt == E::optimizer::adagrad ? st[t][e] : st[t][static_cast<std::size_t>(r)];
              const double step = ba.opt == E::optimizer::sgd ? ba.learning_rate : ba.learning_rate / (std::sqrt(h) + ba.eps);
              const double old = E::reference::element(fmt, old_row, tb.dim, c);
              const double tol = 2 * step * dg + fmt_eps * (std::fabs(want_rows[t][e]) + 1e-3) * 1.01 + 1e-5 * std::fabs(want_rows[t][e] - old);
              if (!(std::fabs(x - want_rows[t][e]) <= tol)) {
                why << "table " << t << " row " << r << " col " << c << " = " << x << ", want " << want_rows[t][e] << " (tolerance " << tol << ")";
                return why.str();
              }
            }
          }
        }
        for (auto& b : state)
          if (!b.guards_intact()) return "bytes next to optimizer_state were written";
        break;
      }
    }
    return inputs_intact();
  }
};

/// Draws a forward (backward = false) or backward case; false when it would exceed max_bytes.
template <class Src>
bool make_case(Src& src, bool fuzz, bool backward, embedding_case& ec, std::size_t max_bytes = 4u << 20) {
  const E::scalar formats[] = {E::scalar::fp32, E::scalar::fp16, E::scalar::bf16, E::scalar::fp8_e4m3, E::scalar::int8_rowwise, E::scalar::int4_rowwise};
  const E::scalar plain_formats[] = {E::scalar::fp32, E::scalar::fp16, E::scalar::bf16};
  const strata::dtype outs[] = {strata::dtype::fp32, strata::dtype::fp16, strata::dtype::bf16};
  // (fuzz) output types the entries refuse among them: one per row format, as the draws were when
  // output formats were row formats (embedding::scalar).
  const strata::dtype any_outs[] = {strata::dtype::fp32, strata::dtype::fp16, strata::dtype::bf16,
                                    strata::dtype::e4m3, strata::dtype::int8, strata::dtype::int4};
  ec.backward = backward;
  const int kinds = backward ? static_cast<int>(src.range(0, 2)) : 0;  // dense, sparse, fused
  ec.fmt = src.pick(formats);
  if (backward && kinds == 2 && !fuzz) ec.fmt = src.pick(plain_formats);  // fused updates: fp32 / fp16 / bf16 rows
  const int T = static_cast<int>(src.range(1, 3));
  const std::uint64_t seed = src.seed();
  std::mt19937_64 g(seed);
  for (int t = 0; t < T; ++t) {
    E::table tb;
    tb.num_rows = src.chance(0.1) ? 0 : src.range(1, 60);
    tb.dim = src.extent(70, 16, 1);
    const long long packed = E::packed_row_bytes(ec.fmt, tb.dim);
    const int eb = (ec.fmt == E::scalar::fp32) ? 4 : (ec.fmt == E::scalar::fp16 || ec.fmt == E::scalar::bf16) ? 2 : 1;
    if (src.chance(0.3)) tb.row_stride_bytes = packed + eb * src.range(1, 8);
    else if (src.chance(0.2)) tb.row_stride_bytes = (packed + 15) / 16 * 16;
    if (tb.num_rows > 0 && src.chance(0.3)) tb.padding_index = src.range(0, tb.num_rows - 1);
    ec.tables.push_back(tb);
  }
  const int F = static_cast<int>(src.range(1, 4));
  for (int f = 0; f < F; ++f) ec.features.push_back({.table = static_cast<int>(src.range(0, T - 1)), .batch_size = src.extent(6, 4)});
  const E::pooling modes[] = {E::pooling::sum, E::pooling::mean, E::pooling::max, E::pooling::none};
  const E::pooling bmodes[] = {E::pooling::sum, E::pooling::mean, E::pooling::none};
  E::lookup in;
  in.mode = backward ? src.pick(bmodes) : src.pick(modes);
  const E::bounds policies[] = {E::bounds::error, E::bounds::clamp, E::bounds::skip};
  in.policy = src.pick(policies);
  in.indices_type = src.chance(0.5) ? E::index_type::int64 : E::index_type::int32;
  const bool csr = src.chance(0.7);
  // Bags: CSR of 0..8 indices (some empty), or fixed size 0..4.
  std::vector<long long> indices, offsets;
  for (auto& f : ec.features) ec.bags += f.batch_size;
  if (!csr) in.bag_size = src.range(0, 4);
  if (csr) offsets.push_back(0);
  const bool bad_input = in.policy != E::bounds::error ? src.chance(0.5) : src.chance(0.1);
  for (auto& f : ec.features) {
    const E::table& tb = ec.tables[static_cast<std::size_t>(f.table)];
    for (long long b = 0; b < f.batch_size; ++b) {
      const long long len = csr ? (src.chance(0.2) ? 0 : src.range(0, 8)) : in.bag_size;
      for (long long i = 0; i < len; ++i) {
        long long r = tb.num_rows > 0 ? static_cast<long long>(g() % static_cast<std::uint64_t>(tb.num_rows)) : 0;
        if (tb.padding_index >= 0 && g() % 5 == 0) r = tb.padding_index;
        if (tb.num_rows == 0 || (bad_input && g() % 6 == 0)) {
          const long long bads[] = {-1, tb.num_rows, tb.num_rows + 1000, -1000000007LL};
          r = bads[g() % 4];
          if (tb.num_rows == 0 && !bad_input && in.policy == E::bounds::error) {  // no valid row: keep the bag empty
            continue;
          }
        }
        indices.push_back(r);
      }
      if (csr) offsets.push_back(static_cast<long long>(indices.size()));
    }
  }
  if (!csr) in.bag_size = ec.bags > 0 ? static_cast<long long>(indices.size()) / ec.bags : in.bag_size;
  if (!csr && ec.bags > 0 && static_cast<long long>(indices.size()) != ec.bags * in.bag_size) {
    // A skipped index (empty table) broke the fixed size: fall back to CSR-free consistency.
    indices.resize(static_cast<std::size_t>(ec.bags * in.bag_size), 0);
  }
  // A malformed bag (not for the forward's pooling none: overlapping bags there write the same output
  // rows, which docs/embedding.md leaves unspecified; see /tmp/property_fuzz_notes.md).
  if (csr && bad_input && !(in.mode == E::pooling::none && !backward) && offsets.size() > 2 && g() % 2 == 0) {
    const std::size_t k = 1 + g() % (offsets.size() - 2);
    const long long bads[] = {offsets[k - 1] - 2, static_cast<long long>(indices.size()) + 5, -3};
    offsets[k] = bads[g() % 3];
  }
  ec.n = static_cast<long long>(indices.size());
  const bool use_weights = (in.mode == E::pooling::sum || in.mode == E::pooling::none) && src.chance(0.4);
  strata::dtype out_fmt = src.pick(outs);
  long long max_dim = 1;
  for (auto& t : ec.tables) max_dim = std::max<long long>(max_dim, t.dim);
  long long row_stride = 0;
  if (in.mode == E::pooling::none && src.chance(0.3)) row_stride = max_dim + src.range(0, 5);
  // Breakages (fuzz).
  int mis_idx = 0, mis_out = 0;
  bool null_idx = false, null_out = false, null_rows = false;
  double work_scale = 1.0;
  bool give_work = true, force_weights = false;
  long long n_claim = ec.n;
  if (fuzz) {
    if (src.chance(0.04)) ec.tables[0].dim = static_cast<int>(src.range(-1, 2));
    if (src.chance(0.04)) ec.tables[0].num_rows = src.range(-2, 0);
    if (src.chance(0.04)) ec.tables[0].row_stride_bytes = src.range(-3, 5);
    if (src.chance(0.04)) ec.tables[0].padding_index = src.range(-3, 100);
    if (src.chance(0.04)) ec.features[0].table = static_cast<int>(src.range(-1, 4));
    if (src.chance(0.04)) ec.features[0].batch_size = src.range(-2, 0);
    if (src.chance(0.04)) n_claim = ec.n - src.range(1, 3);  // shorter than the array (a longer claim lies about the buffer)
    if (src.chance(0.04)) in.bag_size = src.range(-2, 5);
    if (src.chance(0.04)) out_fmt = src.pick(any_outs);
    if (src.chance(0.04)) row_stride = src.range(-2, 3);
    if (src.chance(0.03)) null_idx = true;
    if (src.chance(0.03)) null_out = true;
    if (src.chance(0.03)) null_rows = true;
    if (src.chance(0.04)) mis_idx = static_cast<int>(src.range(1, 3));
    if (src.chance(0.04)) mis_out = static_cast<int>(src.range(1, 3));
    if (src.chance(0.05)) give_work = src.chance(0.5), work_scale = src.real(0, 0.99);
    if (src.chance(0.03)) in.mode = E::pooling::max;
    if (src.chance(0.03)) force_weights = true;  // weights with mean / max pooling must be rejected
  }
  max_dim = 1;  // of the final descriptors
  for (auto& t : ec.tables) max_dim = std::max<long long>(max_dim, t.dim);
  // Rows: only what the final descriptors claim (a valid call cannot read past it).
  std::size_t total = 0;
  for (auto& tb : ec.tables) {
    const long long rs = tb.row_stride_bytes > 0 ? tb.row_stride_bytes : E::packed_row_bytes(ec.fmt, std::max(0, tb.dim));
    total += static_cast<std::size_t>(std::max<long long>(0, tb.num_rows) * std::max<long long>(0, rs));
  }
  if (total > max_bytes) return false;
  for (auto& tb : ec.tables) {
    const long long rs = tb.row_stride_bytes > 0 ? tb.row_stride_bytes : E::packed_row_bytes(ec.fmt, std::max(0, tb.dim));
    const long long bytes = std::max<long long>(0, tb.num_rows) * std::max<long long>(0, rs);
    ec.rows.emplace_back();
    ec.rows.back().alloc(static_cast<std::size_t>(bytes), 0, 0);
    if (tb.dim > 0 && rs > 0 && tb.num_rows > 0 && rs >= E::packed_row_bytes(ec.fmt, tb.dim)) fill_rows(ec.fmt, ec.rows.back().data, tb.num_rows, tb.dim, rs, g);
    ec.rows_before.emplace_back(ec.rows.back().data, ec.rows.back().data + bytes);
    tb.rows = null_rows ? nullptr : ec.rows.back().data;
  }
  const int ib = in.indices_type == E::index_type::int64 ? 8 : 4;
  auto encode = [&](buffer& b, const std::vector<long long>& v, int mis) {
    b.alloc(v.size() * ib, mis);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (ib == 8) std::memcpy(b.data + 8 * i, &v[i], 8);
      else { const auto x = static_cast<std::int32_t>(v[i]); std::memcpy(b.data + 4 * i, &x, 4); }
    }
  };
  encode(ec.idx, indices, mis_idx);
  in.indices = null_idx ? nullptr : ec.idx.data;
  in.num_indices = n_claim;
  if (csr) {
    encode(ec.off, offsets, 0);
    in.offsets = ec.off.data;
  }
  if (use_weights || force_weights) {
    ec.weights.alloc(indices.size() * 4);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (std::size_t i = 0; i < indices.size(); ++i) { const float w = u(g); std::memcpy(ec.weights.data + 4 * i, &w, 4); }
    in.per_sample_weights = reinterpret_cast<const float*>(ec.weights.data);
  }
  in.row_format = ec.fmt;
  in.tables = ec.tables;
  in.features = ec.features;
  // Output / gradient extent: the reference's plan (default layouts) or n rows of `stride`.
  long long out_elems = 0;
  if (in.mode == E::pooling::none) out_elems = std::max<long long>(0, ec.n) * (row_stride > 0 ? row_stride : max_dim);
  else
    for (auto& f : ec.features)
      if (f.table >= 0 && f.table < T) out_elems += std::max<long long>(0, f.batch_size) * std::max(0, ec.tables[static_cast<std::size_t>(f.table)].dim);
  const int ob = out_bytes(out_fmt == strata::dtype::fp16 || out_fmt == strata::dtype::bf16 ? out_fmt : strata::dtype::fp32);
  if (static_cast<std::size_t>(out_elems) * ob > max_bytes) return false;
  if (!backward) {
    ec.out.alloc(static_cast<std::size_t>(out_elems) * ob, mis_out);
    ec.fa.in = in;
    ec.fa.output = null_out ? nullptr : ec.out.data;
    ec.fa.output_format = out_fmt;
    ec.fa.output_row_stride = row_stride;
    if (give_work) ec.work.alloc(static_cast<std::size_t>(static_cast<double>(strata::embedding_bag_workspace_size(ec.fa)) * work_scale));
    return true;
  }
  // Backward: grad_output random in the output layout.
  ec.grad.alloc(static_cast<std::size_t>(out_elems) * ob, mis_out);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if (out_fmt == strata::dtype::fp32 || out_fmt == strata::dtype::fp16 || out_fmt == strata::dtype::bf16)
    for (long long i = 0; i < out_elems; ++i) put_value(out_fmt, ec.grad.data + i * ob, u(g));
  ec.ba.in = in;
  ec.ba.grad_output = null_out ? nullptr : ec.grad.data;
  ec.ba.grad_format = out_fmt;
  ec.ba.grad_row_stride = row_stride;
  ec.ba.kind = static_cast<E::gradient>(kinds);
  switch (ec.ba.kind) {
    case E::gradient::dense:
      for (auto& tb : ec.tables) {
        ec.dense.emplace_back();
        ec.dense.back().alloc(static_cast<std::size_t>(std::max<long long>(0, tb.num_rows) * std::max(0, tb.dim)) * 4);
      }
      for (auto& d : ec.dense) ec.dense_ptrs.push_back(reinterpret_cast<float*>(d.data));
      if (fuzz && src.chance(0.04)) ec.dense_ptrs.pop_back();
      ec.ba.dense_grads = ec.dense_ptrs;
      break;
    case E::gradient::sparse: {
      const std::size_t cap = static_cast<std::size_t>(std::max<long long>(0, ec.n));
      long long stride = src.chance(0.3) ? max_dim + src.range(0, 4) : 0;
      if (fuzz && src.chance(0.04)) stride = src.range(-1, 2);
      ec.sp_tables.alloc(cap * 4);
      ec.sp_rows.alloc(cap * 8);
      ec.sp_grads.alloc(cap * static_cast<std::size_t>(stride > 0 ? stride : max_dim) * 4);
      ec.sp_count.alloc(8);
      ec.ba.sparse_tables = reinterpret_cast<int*>(ec.sp_tables.data);
      ec.ba.sparse_rows = reinterpret_cast<long long*>(ec.sp_rows.data);
      ec.ba.sparse_grads = reinterpret_cast<float*>(ec.sp_grads.data);
      ec.ba.sparse_grad_stride = stride;
      ec.ba.sparse_count = reinterpret_cast<long long*>(ec.sp_count.data);
      if (fuzz && src.chance(0.04)) ec.ba.sparse_count = nullptr;
      break;
    }
    case E::gradient::fused: {
      const E::optimizer opts[] = {E::optimizer::sgd, E::optimizer::adagrad, E::optimizer::rowwise_adagrad};
      ec.ba.opt = src.pick(opts);
      const float lrs[] = {0.05f, 0.01f, 0.5f};
      ec.ba.learning_rate = src.pick(lrs);
      ec.ba.eps = src.chance(0.5) ? 1e-6f : 1e-8f;
      if (fuzz && src.chance(0.04)) ec.ba.eps = -1.f;
      if (ec.ba.opt != E::optimizer::sgd) {
        std::uniform_real_distribution<float> pos(0.1f, 1.f);
        for (auto& tb : ec.tables) {
          const long long cnt = std::max<long long>(0, ec.ba.opt == E::optimizer::adagrad ? tb.num_rows * std::max(0, tb.dim) : tb.num_rows);
          ec.state_before.emplace_back(static_cast<std::size_t>(cnt));
          for (auto& x : ec.state_before.back()) x = pos(g);
          ec.state.emplace_back();
          ec.state.back().alloc(static_cast<std::size_t>(cnt) * 4);
          if (cnt) std::memcpy(ec.state.back().data, ec.state_before.back().data(), static_cast<std::size_t>(cnt) * 4);
        }
        for (auto& st : ec.state) ec.state_ptrs.push_back(reinterpret_cast<float*>(st.data));
        ec.ba.optimizer_state = ec.state_ptrs;
      }
      break;
    }
  }
  if (give_work) ec.work.alloc(static_cast<std::size_t>(static_cast<double>(strata::embedding_bag_backward_workspace_size(ec.ba)) * work_scale));
  return true;
}

}  // namespace strata_property::embedding
