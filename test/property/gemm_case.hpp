// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/gemm_case.hpp -- one randomized strata::gemm call: descriptors drawn from a source
// (random_source.hpp), buffers sized from them (inputs random, D poisoned or aliasing C, workspace
// poisoned), snapshots for the oracle. With `fuzz`, the draws also break the arguments (short lds,
// null or misaligned pointers, mismatched shapes or dtypes, bad batch strides and options, small
// workspaces) so that the entry must reject them. No Catch2.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gemm_oracle.hpp"
#include "random_source.hpp"

namespace strata_property::gemm {

namespace sg = strata::ops::gemm;
using strata_oracle::gemm::span;

struct buffer {
  std::unique_ptr<strata::device_buffer<unsigned char>> mem;
  unsigned char* at = nullptr;
};

struct gemm_case {
  sg::matrix a, b, c, d;
  sg::options o;
  buffer ab, bb, cb, db, biasb, workb;
  std::vector<unsigned char> c_before, d_before;
  std::vector<float> bias_host;
  long long d_elems = 0;
  bool fp8 = false;  // a fp8 combination (the host build runs them on its emulator, scales absent = 1)
  std::string describe() const { return strata_oracle::gemm::describe(a, b, c, d, o); }
  std::string check() const {
    return strata_oracle::gemm::check(a, b, c, d, o, c_before.data(), d_before.data(), d_elems, o.bias ? bias_host.data() : nullptr);
  }
  void run(strata::stream& s) const { strata::gemm(s, a, b, c, d, o); s.synchronize(); }
};

inline void store(strata::dtype t, unsigned char* p, long long i, double v) {
  switch (t) {
    case strata::dtype::fp32: { const float x = static_cast<float>(v); std::memcpy(p + 4 * i, &x, 4); return; }
    case strata::dtype::int32: { const std::int32_t x = static_cast<std::int32_t>(v); std::memcpy(p + 4 * i, &x, 4); return; }
    case strata::dtype::fp16: { const auto b = strata::f16(static_cast<float>(v)).bits(); std::memcpy(p + 2 * i, &b, 2); return; }
    case strata::dtype::bf16: { const auto b = strata::bf16(static_cast<float>(v)).bits(); std::memcpy(p + 2 * i, &b, 2); return; }
    case strata::dtype::int8: p[i] = static_cast<unsigned char>(static_cast<std::int8_t>(v)); return;
    case strata::dtype::e4m3: p[i] = strata::f8_e4m3(static_cast<float>(v)).bits(); return;
    case strata::dtype::e5m2: p[i] = strata::f8_e5m2(static_cast<float>(v)).bits(); return;
    default: return;  // tf32, int4: no GEMM operand has them
  }
}

/// Random values never zero: floats +-[0.25, 1], integers +-[1, 9] (as test/gemm/support.hpp).
inline void fill(strata::dtype t, unsigned char* p, long long n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  const bool integer = t == strata::dtype::int8 || t == strata::dtype::int32;
  for (long long i = 0; i < n; ++i) {
    const bool neg = g() & 1;
    const double v = integer ? static_cast<double>(1 + g() % 9) : mag(g);
    store(t, p, i, neg ? -v : v);
  }
}

inline long long ld_for(sg::layout l, int rows, int cols) { return l == sg::layout::row_major ? cols : rows; }

/// Draws a case; false when its buffers would exceed max_bytes (the caller skips it).
template <class Src>
bool make_case(Src& src, bool fuzz, gemm_case& gc, std::size_t max_bytes = 4u << 20) {
  using strata::dtype;
  struct combo { dtype a, d; };
  static constexpr combo valid[] = {{strata::dtype::fp32, strata::dtype::fp32},  {strata::dtype::fp16, strata::dtype::fp32},  {strata::dtype::fp16, strata::dtype::fp16},
                                    {strata::dtype::fp16, strata::dtype::bf16}, {strata::dtype::bf16, strata::dtype::fp32}, {strata::dtype::bf16, strata::dtype::fp16},
                                    {strata::dtype::bf16, strata::dtype::bf16}, {strata::dtype::int8, strata::dtype::int32}};
  static constexpr combo fp8s[] = {{strata::dtype::e4m3, strata::dtype::bf16}, {strata::dtype::e5m2, strata::dtype::bf16}};
  combo cb = src.pick(valid);
  if (src.chance(0.1)) cb = src.pick(fp8s);
  gc.fp8 = cb.a == strata::dtype::e4m3 || cb.a == strata::dtype::e5m2;
  const int hi_mn = fuzz ? 48 : 130, hi_k = fuzz ? 48 : 160;
  int m = src.extent(hi_mn), n = src.extent(hi_mn), k = src.extent(hi_k);
  const int batch = src.chance(0.3) ? static_cast<int>(src.range(2, 3)) : 1;
  gc.o.batch = batch;
  const sg::layout layouts[] = {sg::layout::row_major, sg::layout::col_major};
  auto mk = [&](int rows, int cols, dtype t) {
    sg::matrix x;
    x.rows = rows, x.cols = cols, x.type = t, x.order = src.pick(layouts);
    x.ld = std::max<long long>(1, ld_for(x.order, rows, cols)) + (src.chance(0.4) ? src.range(1, 5) : 0);
    return x;
  };
  gc.a = mk(m, k, cb.a);
  gc.b = mk(k, n, cb.a);
  gc.d = mk(m, n, cb.d);
  auto stride_of = [&](const sg::matrix& x, bool may_broadcast) -> long long {
    if (batch == 1) return src.chance(0.5) ? 0 : span(x, 1);
    if (may_broadcast && src.chance(0.2)) return 0;
    const long long outer = x.order == sg::layout::row_major ? x.rows : x.cols;
    return std::max<long long>(1, outer * x.ld) + (src.chance(0.4) ? src.range(1, 9) : 0);
  };
  gc.a.batch_stride = stride_of(gc.a, true);
  gc.b.batch_stride = stride_of(gc.b, true);
  gc.d.batch_stride = stride_of(gc.d, false);
  const float alphas[] = {1.f, 0.75f, -1.5f, 2.f, 0.5f}, betas[] = {0.f, 0.f, 1.f, 0.5f, -0.25f};
  gc.o.alpha = src.pick(alphas);
  gc.o.beta = src.pick(betas);
  const bool alias = src.chance(0.5) || (gc.o.beta != 0.f && batch > 1 && src.chance(0.5));
  if (alias) gc.c = gc.d;
  else if (gc.o.beta != 0.f && batch > 1) gc.c = gc.d, gc.c.data = nullptr;  // same strides, own buffer
  else gc.c = mk(m, n, cb.d), gc.c.batch_stride = stride_of(gc.c, false);
  const bool bias = src.chance(0.5);
  gc.o.act = src.chance(0.5) ? sg::activation::relu : sg::activation::none;
  const int splits[] = {0, 0, 1, 2, 3, 5, 16};
  gc.o.split_k = src.pick(splits);
  if (src.chance(0.2)) gc.o.stream_k = true, gc.o.stream_k_blocks = static_cast<int>(src.range(0, 6));
  bool give_work = src.chance(0.85) || (!fuzz && (gc.o.split_k > 1 || gc.o.stream_k));
  double work_scale = 1.0;
  // Broken arguments (fuzz only): each applies with a small probability.
  int mis_a = 0, mis_b = 0, mis_d = 0;
  bool null_a = false, null_b = false, null_d = false, null_bias = false;
  if (fuzz) {
    const dtype all[] = {strata::dtype::fp32, strata::dtype::fp16, strata::dtype::bf16, strata::dtype::int8, strata::dtype::int32, strata::dtype::e4m3, strata::dtype::e5m2};
    if (src.chance(0.05)) gc.a.type = src.pick(all), gc.b.type = gc.a.type;
    if (src.chance(0.05)) gc.b.type = src.pick(all);
    if (src.chance(0.05)) gc.d.type = src.pick(all), gc.c.type = gc.d.type;
    if (!alias && src.chance(0.04)) gc.c.type = src.pick(all);  // (C aliasing D stays D's twin)
    if (src.chance(0.04)) gc.a.ld -= src.range(1, 3);
    if (src.chance(0.04)) gc.b.ld -= src.range(1, 3);
    if (src.chance(0.04)) gc.d.ld -= src.range(1, 3);
    if (!alias && src.chance(0.03)) gc.c.ld -= src.range(1, 3);
    if (src.chance(0.04)) gc.a.rows += static_cast<int>(src.range(-2, 2));
    if (src.chance(0.04)) gc.b.cols += static_cast<int>(src.range(-2, 2));
    if (!alias && src.chance(0.04)) gc.c.rows += static_cast<int>(src.range(-2, 2));
    if (src.chance(0.03)) gc.d.rows = -static_cast<int>(src.range(1, 3)), gc.d.cols = std::max(gc.d.cols, 0);
    if (src.chance(0.03)) gc.a.cols = -1, gc.b.rows = -1;
    if (src.chance(0.04)) gc.o.batch = static_cast<int>(src.range(-1, 4));
    if (src.chance(0.04)) gc.a.batch_stride = src.range(-3, 5);
    if (src.chance(0.04)) gc.d.batch_stride = src.range(-3, 5);
    if (!alias && src.chance(0.03)) gc.c.batch_stride = src.range(0, 5);
    if (src.chance(0.04)) gc.o.split_k = static_cast<int>(src.range(-2, 40));
    if (src.chance(0.04)) gc.o.stream_k_blocks = static_cast<int>(src.range(-2, 40)), gc.o.stream_k = src.chance(0.5);
    if (src.chance(0.06)) give_work = src.chance(0.5), work_scale = src.real(0.0, 0.99);
    if (src.chance(0.03)) null_a = true;
    if (src.chance(0.03)) null_b = true;
    if (src.chance(0.03)) null_d = true;
    if (src.chance(0.02)) null_bias = true;
    if (src.chance(0.04)) mis_a = static_cast<int>(src.range(1, 3));
    if (src.chance(0.04)) mis_b = static_cast<int>(src.range(1, 3));
    if (src.chance(0.04)) mis_d = static_cast<int>(src.range(1, 3));
    if (src.chance(0.03)) gc.o.alpha = src.chance(0.5) ? 0.f : 1e30f;
  }
  if (alias) gc.c = gc.d;  // D's breakages are C's too
  gc.fp8 = gc.a.type == strata::dtype::e4m3 || gc.a.type == strata::dtype::e5m2;
  // Allocations from the final descriptors (what a correct entry may touch), capped.
  const int eb = std::max(1, gc.o.batch);
  auto bytes_of = [&](const sg::matrix& x) { return static_cast<std::size_t>(std::max<long long>(0, span(x, eb))) * sg::size_of(x.type); };
  const std::size_t na = bytes_of(gc.a), nb = bytes_of(gc.b), nd = bytes_of(gc.d), nc = alias ? 0 : bytes_of(gc.c);
  const std::size_t nbias = static_cast<std::size_t>(std::max(0, n)) * 4;
  std::size_t nwork = 0;
  if (give_work && gc.d.rows >= 0 && gc.d.cols >= 0)
    nwork = static_cast<std::size_t>(static_cast<double>(sg::workspace_size(gc.d, gc.o)) * work_scale);
  if (na + nb + nc + nd + nbias + nwork > max_bytes) return false;
  const std::uint64_t seed = src.seed();
  auto alloc = [&](buffer& bf, std::size_t bytes, int mis) {
    bf.mem = std::make_unique<strata::device_buffer<unsigned char>>(bytes + 16);
    bf.at = bf.mem->data() + mis;
    std::memset(bf.mem->data(), 0xFF, bytes + 16);
  };
  alloc(gc.ab, na, mis_a);
  alloc(gc.bb, nb, mis_b);
  alloc(gc.db, nd, mis_d);
  fill(gc.a.type, gc.ab.at, static_cast<long long>(na / sg::size_of(gc.a.type)), seed);
  fill(gc.b.type, gc.bb.at, static_cast<long long>(nb / sg::size_of(gc.b.type)), seed + 1);
  gc.a.data = null_a ? nullptr : gc.ab.at;
  gc.b.data = null_b ? nullptr : gc.bb.at;
  gc.d.data = null_d ? nullptr : gc.db.at;
  gc.d_elems = static_cast<long long>(nd / sg::size_of(gc.d.type));
  if (alias) {
    // C is D: D starts as random C values.
    fill(gc.d.type, gc.db.at, gc.d_elems, seed + 2);
    gc.c.data = gc.d.data;
  } else {
    alloc(gc.cb, nc, 0);
    fill(gc.c.type, gc.cb.at, static_cast<long long>(nc / sg::size_of(gc.c.type)), seed + 2);
    gc.c.data = gc.cb.at;
  }
  gc.d_before.assign(gc.db.at, gc.db.at + nd);
  gc.c_before = alias ? gc.d_before : std::vector<unsigned char>(gc.cb.at, gc.cb.at + nc);
  if (bias) {
    alloc(gc.biasb, nbias, 0);
    gc.bias_host.resize(static_cast<std::size_t>(std::max(0, n)));
    fill(strata::dtype::fp32, gc.biasb.at, static_cast<long long>(gc.bias_host.size()), seed + 3);
    if (nbias) std::memcpy(gc.bias_host.data(), gc.biasb.at, nbias);
    gc.o.bias = null_bias ? nullptr : reinterpret_cast<const float*>(gc.biasb.at);
  }
  if (give_work) {
    alloc(gc.workb, nwork, 0);
    gc.o.work = {gc.workb.at, nwork};
  }
  return true;
}

}  // namespace strata_property::gemm
