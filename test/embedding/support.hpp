// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/embedding/support.hpp -- building embedding problems for the tests: random tables of every
// format, CSR or fixed-size bags, device copies inside guard zones (poisoned sentinel regions before
// and after every buffer that must never be touched), and tolerances from the data type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <strata/embedding.hpp>
#include <strata/ops/embedding/reference.hpp>

#include "../unit/support.hpp"

namespace emb_test {

namespace E = strata::embedding;
using E::bounds;
using E::pooling;
using E::scalar;
using strata::dtype;

/// Device bytes with `guard` sentinel bytes before and after; `shift` moves the payload off 16-byte
/// alignment to exercise the element-wise path.
class guarded {
 public:
  static constexpr std::size_t guard = 256;
  static constexpr unsigned char sentinel = 0xA5;
  guarded() = default;
  guarded(strata::stream& s, std::size_t bytes, std::size_t shift = 0, int fill = -1)
      : bytes_(bytes), shift_(shift), buf_(std::make_unique<strata::device_buffer<unsigned char>>(bytes + 2 * guard + shift)) {
    std::vector<unsigned char> h(buf_->size(), sentinel);
    if (fill >= 0) std::fill(h.begin() + guard + shift, h.begin() + guard + shift + bytes, static_cast<unsigned char>(fill));
    strata::copy_to_device(s, buf_->data(), h.data(), h.size());
  }
  void* data() const { return buf_ ? buf_->data() + guard + shift_ : nullptr; }
  std::size_t bytes() const { return bytes_; }
  void upload(strata::stream& s, const void* src, std::size_t n) {
    strata::copy_to_device(s, buf_->data() + guard + shift_, static_cast<const unsigned char*>(src), n);
  }
  std::vector<unsigned char> download(strata::stream& s) const {
    std::vector<unsigned char> h(bytes_);
    strata::copy_to_host(s, h.data(), buf_->data() + guard + shift_, bytes_);
    s.synchronize();
    return h;
  }
  /// True when every sentinel byte (before and after the payload) is unchanged.
  bool guards_intact(strata::stream& s) const {
    if (!buf_) return true;
    std::vector<unsigned char> h(buf_->size());
    strata::copy_to_host(s, h.data(), buf_->data(), h.size());
    s.synchronize();
    for (std::size_t i = 0; i < guard + shift_; ++i)
      if (h[i] != sentinel) return false;
    for (std::size_t i = guard + shift_ + bytes_; i < h.size(); ++i)
      if (h[i] != sentinel) return false;
    return true;
  }

 private:
  std::size_t bytes_ = 0, shift_ = 0;
  std::unique_ptr<strata::device_buffer<unsigned char>> buf_;
};

/// Random rows of one table in `fmt`, `stride` bytes apart (padding bytes random too).
inline std::vector<unsigned char> make_rows(scalar fmt, long long rows, int dim, long long stride, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<unsigned char> h(static_cast<std::size_t>(rows * stride));
  for (auto& b : h) b = static_cast<unsigned char>(byte(g));
  for (long long r = 0; r < rows; ++r) {
    unsigned char* row = h.data() + r * stride;
    for (int c = 0; c < dim; ++c) {
      const float x = val(g);
      switch (fmt) {
        case scalar::fp32: std::memcpy(row + 4 * c, &x, 4); break;
        case scalar::fp16: { auto b = strata::f16(x).bits(); std::memcpy(row + 2 * c, &b, 2); break; }
        case scalar::bf16: { auto b = strata::bf16(x).bits(); std::memcpy(row + 2 * c, &b, 2); break; }
        case scalar::fp8_e4m3: row[c] = strata::f8_e4m3(x * 8.f).bits(); break;
        default: break;  // quantized: payload bytes stay random
      }
    }
    if (fmt == scalar::int8_rowwise) {
      const float sc = 0.001f + 0.01f * (val(g) + 1.f), bi = val(g);
      std::memcpy(row + dim, &sc, 4);
      std::memcpy(row + dim + 4, &bi, 4);
    } else if (fmt == scalar::int4_rowwise) {
      const auto sc = strata::f16(0.01f + 0.05f * (val(g) + 1.f)).bits(), bi = strata::f16(val(g)).bits();
      std::memcpy(row + (dim + 1) / 2, &sc, 2);
      std::memcpy(row + (dim + 1) / 2 + 2, &bi, 2);
    }
  }
  return h;
}

/// One embedding problem: host data (the reference reads it) and its guarded device copy.
struct problem {
  scalar fmt = scalar::fp32;
  std::vector<E::table> host_tables, dev_tables;
  std::vector<std::vector<unsigned char>> rows;
  std::vector<E::feature> features;
  std::vector<long long> indices;   // values (converted to the index type for the device)
  std::vector<long long> offsets;   // empty: fixed-size bags
  long long bag_size = 0;
  E::index_type itype = E::index_type::int64;
  std::vector<float> weights;
  pooling mode = pooling::sum;
  bounds policy = bounds::error;

  std::vector<guarded> dev_rows;
  guarded dev_idx, dev_off, dev_w;
  std::vector<unsigned char> idx_bytes, off_bytes;

  long long total_bags() const {
    long long n = 0;
    for (auto& f : features) n += f.batch_size;
    return n;
  }

  static std::vector<unsigned char> encode(const std::vector<long long>& v, E::index_type t) {
    std::vector<unsigned char> b;
    if (t == E::index_type::int64) {
      b.resize(v.size() * 8);
      if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    } else {
      std::vector<int> w(v.begin(), v.end());
      b.resize(w.size() * 4);
      if (!w.empty()) std::memcpy(b.data(), w.data(), b.size());
    }
    return b;
  }

  /// Copies everything to the device (rows shifted by `shift` bytes when asked).
  void upload(strata::stream& s, std::size_t row_shift = 0) {
    dev_rows.clear();
    dev_tables = host_tables;
    for (std::size_t t = 0; t < host_tables.size(); ++t) {
      dev_rows.emplace_back(s, rows[t].size(), row_shift);
      if (!rows[t].empty()) dev_rows.back().upload(s, rows[t].data(), rows[t].size());
      dev_tables[t].rows = dev_rows.back().data();
    }
    idx_bytes = encode(indices, itype);
    off_bytes = encode(offsets, itype);
    dev_idx = guarded(s, idx_bytes.size());
    if (!idx_bytes.empty()) dev_idx.upload(s, idx_bytes.data(), idx_bytes.size());
    dev_off = guarded(s, off_bytes.size());
    if (!off_bytes.empty()) dev_off.upload(s, off_bytes.data(), off_bytes.size());
    dev_w = guarded(s, weights.size() * 4);
    if (!weights.empty()) dev_w.upload(s, weights.data(), weights.size() * 4);
  }

  E::lookup host_lookup() const {
    E::lookup in;
    in.row_format = fmt;
    in.tables = host_tables;
    in.features = features;
    in.indices = idx_bytes.data();
    in.num_indices = static_cast<long long>(indices.size());
    in.indices_type = itype;
    in.offsets = offsets.empty() ? nullptr : off_bytes.data();
    in.bag_size = bag_size;
    in.per_sample_weights = weights.empty() ? nullptr : weights.data();
    in.mode = mode;
    in.policy = policy;
    return in;
  }
  E::lookup device_lookup() const {
    E::lookup in = host_lookup();
    in.tables = dev_tables;
    in.indices = dev_idx.data();
    in.offsets = offsets.empty() ? nullptr : dev_off.data();
    in.per_sample_weights = weights.empty() ? nullptr : static_cast<const float*>(dev_w.data());
    return in;
  }
  bool inputs_intact(strata::stream& s) const {
    for (auto& r : dev_rows)
      if (!r.guards_intact(s)) return false;
    return dev_idx.guards_intact(s) && dev_off.guards_intact(s) && dev_w.guards_intact(s);
  }
};

/// Tables of the given dims, features mapping round-robin onto them with varying batch sizes, CSR
/// bags of random length in [0, max_len] (plus the special lengths listed), indices uniform over the
/// rows, every 13th index the padding row of tables that have one.
inline problem make_problem(scalar fmt, const std::vector<int>& dims, int features, long long batch, int max_len,
                            std::uint64_t seed, bool csr = true, bool padding = true) {
  problem p;
  p.fmt = fmt;
  std::mt19937_64 g(seed);
  for (std::size_t t = 0; t < dims.size(); ++t) {
    E::table tb;
    tb.num_rows = 40 + 17 * static_cast<long long>(t);
    tb.dim = dims[t];
    tb.row_stride_bytes = 0;
    tb.padding_index = padding && t % 2 == 0 ? 3 : E::no_padding;
    p.rows.push_back(make_rows(fmt, tb.num_rows, tb.dim, E::packed_row_bytes(fmt, tb.dim), seed * 31 + t));
    p.host_tables.push_back(tb);
  }
  for (std::size_t t = 0; t < dims.size(); ++t) p.host_tables[t].rows = p.rows[t].data();
  for (int f = 0; f < features; ++f) p.features.push_back({.table = f % static_cast<int>(dims.size()), .batch_size = batch + f % 3});
  std::uniform_int_distribution<int> len(0, max_len);
  if (csr) p.offsets.push_back(0);
  const long long bags = p.total_bags();
  long long b = 0;
  for (int f = 0; f < features; ++f) {
    const E::table& tb = p.host_tables[p.features[f].table];
    std::uniform_int_distribution<long long> row(0, tb.num_rows - 1);
    for (long long s = 0; s < p.features[f].batch_size; ++s, ++b) {
      const int n = csr ? (s == 0 ? 0 : s == 1 ? 1 : len(g)) : max_len;
      for (int i = 0; i < n; ++i) {
        long long r = row(g);
        if (tb.padding_index >= 0 && p.indices.size() % 13 == 0) r = tb.padding_index;
        p.indices.push_back(r);
      }
      if (csr) p.offsets.push_back(static_cast<long long>(p.indices.size()));
    }
  }
  (void)bags;
  if (!csr) p.bag_size = max_len;
  return p;
}

/// Relative precision of an output element type (the rounding of the kernel's fp32 result).
inline double output_eps(dtype out) {
  return out == dtype::fp16 ? std::ldexp(1.0, -11) : out == dtype::bf16 ? std::ldexp(1.0, -8) : 0.0;
}

/// |got - want| allowed for one output element: fp32 accumulation over `terms` rows (one rounding per
/// addition and per dequantization or weighting, relative to sum|x|), then the output rounding.
inline double tolerance(double want, double mag, long long terms, dtype out) {
  const double acc = (static_cast<double>(terms) + 4) * std::ldexp(1.0, -23) * mag;
  return acc + output_eps(out) * std::fabs(want) * 1.01 + 1e-30;
}

/// Bytes of one output or gradient element (fp32, fp16 or bf16).
inline std::size_t element_size(dtype t) { return t == dtype::fp32 ? 4 : 2; }

inline std::vector<double> read_output(strata::stream& s, const guarded& out, dtype t, std::size_t n) {
  const auto h = out.download(s);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (t == dtype::fp32) { float x; std::memcpy(&x, h.data() + 4 * i, 4); v[i] = x; }
    else { std::uint16_t b; std::memcpy(&b, h.data() + 2 * i, 2);
      v[i] = t == dtype::fp16 ? double(strata::f16::from_bits(b)) : double(strata::bf16::from_bits(b)); }
  }
  return v;
}

/// Element types the entries must refuse as an output_format or grad_format, with the name their
/// message gives each: dtypes they have no kernels for, and row formats spelled the deprecated way
/// (embedding::scalar, which converts to the dtype of its elements).
inline std::vector<std::pair<E::element_type, const char*>> refused_element_types() {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return {{dtype::e4m3, "e4m3"}, {dtype::tf32, "tf32"}, {dtype::int32, "int32"},
          {scalar::int8_rowwise, "int8"}, {scalar::fp8_e4m3, "e4m3"}};
#pragma GCC diagnostic pop
}

/// Requires `call` to throw strata::invalid_argument naming `op` and `arg`, with the message `what`.
inline void require_refused(const std::function<void()>& call, const std::string& op, const std::string& arg,
                            const std::string& what) {
  try {
    call();
    FAIL(op << " accepted what it must refuse: " << what);
  } catch (const strata::invalid_argument& e) {
    CHECK(e.op() == op);
    CHECK(e.argument() == arg);
    CHECK(std::string(e.what()) == what);
  }
}

/// The raw poison pattern of an output element that the operator must not write.
inline bool is_poison(const std::vector<unsigned char>& h, dtype t, std::size_t i) {
  const std::size_t w = element_size(t);
  for (std::size_t k = 0; k < w; ++k)
    if (h[i * w + k] != 0xFF) return false;
  return true;
}

}  // namespace emb_test
