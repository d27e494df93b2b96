// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/attention_case.hpp -- randomized calls of strata::attention, strata::attention_decode
// and strata::attention_backward: tensors with random layouts and padded strides, GQA, sequence
// lengths (0, 1, odd), every supported head dim pair, dtypes, causal / window / soft-cap / ALiBi /
// sinks / scale, decode with appended rows, dense or paged caches and split-KV; outputs poisoned; the
// oracle reads every tensor through its descriptor and compares with ops/attention/reference.hpp at
// test/attention's tolerances. With `fuzz`, the draws also break the arguments. No Catch2. Emulator
// builds only (device pointers are host memory).
#pragma once

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "random_source.hpp"
#include "strata/attention.hpp"

namespace strata_property::attention {

namespace A = strata::attn;

inline double load(strata::dtype t, const void* base, long long i) {
  const auto* p = static_cast<const unsigned char*>(base);
  switch (t) {
    case strata::dtype::fp32: { float x; std::memcpy(&x, p + 4 * i, 4); return x; }
    case strata::dtype::fp16: { std::uint16_t b; std::memcpy(&b, p + 2 * i, 2); return double(float(strata::f16::from_bits(b))); }
    case strata::dtype::bf16: { std::uint16_t b; std::memcpy(&b, p + 2 * i, 2); return double(float(strata::bf16::from_bits(b))); }
    case strata::dtype::e4m3: return double(float(strata::f8_e4m3::from_bits(p[i])));
    default: break;  // the dtypes attention does not take
  }
  return 0;
}
inline void store(strata::dtype t, void* base, long long i, double v) {
  auto* p = static_cast<unsigned char*>(base);
  switch (t) {
    case strata::dtype::fp32: { const float x = float(v); std::memcpy(p + 4 * i, &x, 4); return; }
    case strata::dtype::fp16: { const auto b = strata::f16(float(v)).bits(); std::memcpy(p + 2 * i, &b, 2); return; }
    case strata::dtype::bf16: { const auto b = strata::bf16(float(v)).bits(); std::memcpy(p + 2 * i, &b, 2); return; }
    case strata::dtype::e4m3: p[i] = strata::f8_e4m3(float(v)).bits(); return;
    default: return;  // the dtypes attention does not take
  }
}
// fp8: P rounded to e4m3 (relative 2^-4) and O to bf16, on |V| <= v_descale (docs/attention.md, fp8).
inline double o_tolerance(strata::dtype t, float v_descale = 1.f) {
  return t == strata::dtype::fp32 ? 2e-5 : t == strata::dtype::bf16 ? 2.5e-2 : t == strata::dtype::e4m3 ? 7e-2 * v_descale : 4e-3;
}
/// What the fp32 accumulation of S adds: a logit's error grows with the scale (the fuzzer draws up to
/// 100) and the head dim, about scale * D * 2^-23 for inputs in [-1, 1], and moves O by at most twice
/// that times max|V|. Negligible at the default scale 1/sqrt(D); what decides at scale 100, D 128
/// (a fuzzed fp32 case missed 2e-5 by 2e-6).
inline double logit_slack(const A::options& o, int d) {
  double scale = std::isnan(o.scale) ? 1.0 / std::sqrt(static_cast<double>(d)) : std::fabs(static_cast<double>(o.scale));
  scale *= static_cast<double>(o.q_descale) * o.k_descale;  // 1 unless fp8
  return scale * d * std::ldexp(1.0, -23);
}
inline double grad_tolerance(strata::dtype t) { return t == strata::dtype::fp32 ? 2e-4 : t == strata::dtype::bf16 ? 6e-2 : 1.5e-2; }

inline long long at(const A::tensor& t, long long b, long long s, long long h) {
  return b * t.batch_stride + s * t.row_stride + h * t.head_stride;
}
/// Elements a tensor spans (0 when it has no row).
inline long long span(const A::tensor& t) {
  if (t.batch <= 0 || t.seqlen <= 0 || t.heads <= 0 || t.dim <= 0) return 0;
  long long hi = t.dim, lo = 0;
  for (long long st : {t.batch_stride * (t.batch - 1), t.row_stride * (t.seqlen - 1), t.head_stride * (t.heads - 1)})
    (st >= 0 ? hi : lo) += st;
  return hi - lo;  // lo < 0 only for negative strides (fuzz): the allocation starts -lo elements earlier
}
inline long long low(const A::tensor& t) {
  if (span(t) == 0) return 0;
  long long lo = 0;
  for (long long st : {t.batch_stride * (t.batch - 1), t.row_stride * (t.seqlen - 1), t.head_stride * (t.heads - 1)})
    if (st < 0) lo += st;
  return lo;
}

/// Device memory with 64 spare bytes on each side; `data` is 16-byte aligned plus `mis` bytes.
struct buffer {
  std::unique_ptr<strata::device_buffer<unsigned char>> mem;
  unsigned char* data = nullptr;
  std::size_t bytes = 0;
  void alloc(std::size_t n, int mis = 0, int fill = 0xFF) {
    bytes = n;
    mem = std::make_unique<strata::device_buffer<unsigned char>>(n + 128);
    std::memset(mem->data(), fill, n + 128);
    data = mem->data() + 64 + mis;
  }
  std::vector<unsigned char> snapshot() const { return std::vector<unsigned char>(mem->data(), mem->data() + bytes + 128); }
};

/// A tensor of (b, s, h, d) with random layout (BSHD or BHSD) and padding that keeps strides at
/// multiples of 16 bytes, its buffer (random values in [-1, 1], or poison), and its element base.
struct tensor_buf {
  A::tensor t;
  buffer buf;
  long long base = 0;  // element offset of t.data in buf (-low(t))
};

template <class Src>
A::tensor draw_layout(Src& src, strata::dtype type, int b, int s, int h, int d) {
  const int unit = 16 / A::element_bytes(type);
  auto pad = [&] { return src.chance(0.3) ? unit * src.range(1, 2) : 0; };
  A::tensor t{nullptr, type, b, s, h, d, 0, 0, 0};
  if (src.chance(0.5)) {  // BSHD
    t.head_stride = d + pad();
    t.row_stride = static_cast<long long>(h) * t.head_stride + pad();
    t.batch_stride = static_cast<long long>(s) * t.row_stride + pad();
  } else {  // BHSD
    t.row_stride = d + pad();
    t.head_stride = static_cast<long long>(s) * t.row_stride + pad();
    t.batch_stride = static_cast<long long>(h) * t.head_stride + pad();
  }
  return t;
}

inline void alloc_tensor(tensor_buf& x, std::uint64_t seed, bool random, int mis = 0) {
  const long long n = span(x.t);
  const int e = A::element_bytes(x.t.type);
  x.buf.alloc(static_cast<std::size_t>(n) * e, mis);
  x.base = -low(x.t);
  if (random) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (long long i = 0; i < n; ++i) store(x.t.type, x.buf.data, i, u(g));
  }
  x.t.data = x.buf.data + x.base * e;
}

/// Values of row (b, s, h) of x as doubles.
inline void row(const A::tensor& x, long long b, long long s, long long h, std::vector<double>& out) {
  for (int c = 0; c < x.dim; ++c) out.push_back(load(x.type, x.data, at(x, b, s, h) + c));
}

inline std::vector<float> draw_floats(std::mt19937_64& g, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(std::max(0, n)));
  for (auto& x : v) x = static_cast<float>(u(g));
  return v;
}

struct dims { int d, dv; };

/// Common draws: dtype, head dims (small ones more often), options; `work` bounds the cost.
template <class Src>
void draw_common(Src& src, strata::dtype& type, dims& dd, bool fp8 = false) {
  const strata::dtype types[] = {strata::dtype::fp16, strata::dtype::bf16, strata::dtype::fp32};
  type = src.pick(types);
  if (fp8 && src.chance(0.2)) type = strata::dtype::e4m3;  // the forward only
  const dims all[] = {{32, 32}, {32, 32}, {32, 32}, {64, 64}, {64, 64}, {96, 96}, {128, 128}, {192, 128}, {192, 192}, {256, 256}, {512, 512}};
  dd = src.pick(all);
}

template <class Src>
void draw_options(Src& src, A::options& o, int heads, std::vector<float>& alibi, std::vector<float>& sinks, std::mt19937_64& g, bool fuzz) {
  if (src.chance(0.4)) o.scale = static_cast<float>(src.real(0.05, 0.5));
  o.causal = src.chance(0.3);
  o.align = src.chance(0.5) ? A::alignment::bottom_right : A::alignment::top_left;
  if (src.chance(0.2)) o.window_left = static_cast<int>(src.range(0, 9));
  if (src.chance(0.15)) o.window_right = static_cast<int>(src.range(0, 9));
  if (src.chance(0.2)) { const float caps[] = {1.5f, 4.f, 30.f}; o.softcap = src.pick(caps); }
  if (src.chance(0.2)) alibi = draw_floats(g, heads, 0.0, 0.5);
  if (src.chance(0.2)) sinks = draw_floats(g, heads, -1.0, 2.0);
  if (fuzz) {
    const float scales[] = {0.f, -1.f, std::numeric_limits<float>::infinity(), 1e-30f, 100.f};
    if (src.chance(0.04)) o.scale = src.pick(scales);
    if (src.chance(0.04)) o.window_left = static_cast<int>(src.range(-3, 2));
    if (src.chance(0.04)) o.window_right = static_cast<int>(src.range(-3, 2));
    const float caps[] = {-1.f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.5f};
    if (src.chance(0.04)) o.softcap = src.pick(caps);
    const float drops[] = {-0.5f, 1.f, 2.f};
    if (src.chance(0.03)) o.dropout_p = src.pick(drops);
  }
}

inline A::reference::problem problem_of(const A::options& o, int heads, int heads_k, dims dd, const std::vector<float>& alibi,
                                        const std::vector<float>& sinks) {
  A::reference::problem rp;
  rp.heads = heads, rp.heads_k = heads_k, rp.d = dd.d, rp.dv = dd.dv;
  rp.scale = std::isnan(o.scale) ? 1.0 / std::sqrt(static_cast<double>(static_cast<float>(dd.d))) : o.scale;
  rp.scale = static_cast<float>(rp.scale);
  rp.causal = o.causal, rp.align = o.align, rp.window_left = o.window_left, rp.window_right = o.window_right;
  rp.softcap = o.softcap, rp.alibi = alibi, rp.sinks = sinks;
  return rp;
}

inline bool is_poison(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0xFF) return false;
  return true;
}

/// Compares rows [0, sq) of batch b of `o` (and the LSE) with a reference result; marks the rows'
/// elements in `covered` (indexed from o's buffer start). Returns "" or the first mismatch.
inline std::string compare_rows(const A::tensor& o, long long obase, const float* lse, long long lse_b, long long lse_h,
                                const A::reference::result& ref, int b, int sq, int heads, int dv, double tol,
                                std::vector<char>& covered, double lse_tol = 1e-3) {
  std::ostringstream why;
  for (int i = 0; i < sq; ++i)
    for (int h = 0; h < heads; ++h) {
      const double rl = ref.lse[static_cast<std::size_t>(h) * sq + i];
      if (lse) {
        const float gl = lse[b * lse_b + h * lse_h + i];
        const bool ok = std::isinf(rl) ? (std::isinf(gl) && gl < 0) : std::fabs(gl - rl) <= lse_tol;
        if (!ok) {
          why << "lse b" << b << " i" << i << " h" << h << " = " << gl << ", want " << rl;
          return why.str();
        }
      }
      const long long r0 = at(o, b, i, h);
      for (int c = 0; c < dv; ++c) {
        covered[static_cast<std::size_t>(obase + r0 + c)] = 1;
        const double x = load(o.type, o.data, r0 + c);
        const double want = ref.o[(static_cast<std::size_t>(i) * heads + h) * dv + c];
        const bool ok = std::isinf(rl) ? x == 0.0 : std::fabs(x - want) <= tol;
        if (!ok) {
          why << "o b" << b << " i" << i << " h" << h << " d" << c << " = " << x << ", want " << want << " (tolerance " << tol << ")";
          return why.str();
        }
      }
    }
  return "";
}

inline std::string untouched(const tensor_buf& x, const std::vector<char>& covered) {
  const int e = A::element_bytes(x.t.type);
  const long long n = static_cast<long long>(x.buf.bytes) / e;
  for (long long i = 0; i < n; ++i)
    if (!covered[static_cast<std::size_t>(i)] && !is_poison(x.buf.data + i * e, static_cast<std::size_t>(e)))
      return "element " + std::to_string(i) + " of an output buffer outside every row was written";
  if (!is_poison(x.buf.mem->data(), 64) || !is_poison(x.buf.data + x.buf.bytes, 64 - (x.buf.data - x.buf.mem->data() - 64)))
    return "bytes next to an output buffer were written";
  return "";
}

inline std::string describe_tensor(const char* nm, const A::tensor& t) {
  std::ostringstream s;
  s << nm << "(" << A::to_string(t.type) << " " << t.batch << "x" << t.seqlen << "x" << t.heads << "x" << t.dim << " strides "
    << t.batch_stride << "," << t.row_stride << "," << t.head_stride << (t.data ? "" : " null") << ") ";
  return s.str();
}
inline std::string describe_options(const A::options& o, const std::vector<float>& alibi, const std::vector<float>& sinks) {
  std::ostringstream s;
  s << "scale " << o.scale << (o.causal ? " causal" : "") << (o.align == A::alignment::top_left ? " top-left" : "") << " window "
    << o.window_left << "/" << o.window_right << " softcap " << o.softcap << (alibi.empty() ? "" : " alibi")
    << (sinks.empty() ? "" : " sinks") << (o.lse ? " lse" : "") << " dropout " << o.dropout_p << " descale " << o.q_descale << ","
    << o.k_descale << "," << o.v_descale;
  return s.str();
}

// ---- forward ---------------------------------------------------------------------------------------

struct forward_case {
  strata::dtype type{};
  dims dd{};
  int batch = 1, heads = 1, heads_k = 1, sq = 0, sk = 0;
  tensor_buf q, k, v, o;
  buffer lse, alibi_buf, sinks_buf;
  std::vector<float> alibi, sinks;
  A::options opt;
  bool corrupted = false;
  std::string describe() const {
    return describe_tensor("q", q.t) + describe_tensor("k", k.t) + describe_tensor("v", v.t) + describe_tensor("o", o.t) +
           describe_options(opt, alibi, sinks);
  }
  /// Flips the first output element (the oracle's self-test); false when o has none.
  bool corrupt_output() { return q.t.batch > 0 && q.t.seqlen > 0 && (static_cast<unsigned char*>(o.t.data)[A::element_bytes(o.t.type) - 1] ^= 0x5A, true); }
  void run(strata::stream& s) const {
    strata::attention(s, q.t, k.t, v.t, o.t, opt);
    s.synchronize();
  }
  std::string check() const {
    // From the descriptors (a call that returned has validated them).
    const int batch = q.t.batch, heads = q.t.heads, heads_k = k.t.heads, sq = q.t.seqlen, sk = k.t.seqlen;
    const dims dd{q.t.dim, v.t.dim};
    const strata::dtype type = q.t.type;
    const A::reference::problem rp = problem_of(opt, heads, heads_k, dd, alibi, sinks);
    std::vector<char> covered(o.buf.bytes / A::element_bytes(o.t.type), 0);
    // fp8: the reference sees the stored values times their descale factors.
    const bool fp8 = type == strata::dtype::e4m3;
    auto scaled = [](std::vector<double>& x, std::size_t from, double f) {
      for (std::size_t i = from; i < x.size(); ++i) x[i] *= f;
    };
    for (int b = 0; b < batch; ++b) {
      A::reference::sequence rs;
      rs.sq = sq, rs.sk = sk;
      for (int i = 0; i < sq; ++i)
        for (int h = 0; h < heads; ++h) row(q.t, b, i, h, rs.q);
      for (int j = 0; j < sk; ++j)
        for (int h = 0; h < heads_k; ++h) row(k.t, b, j, h, rs.k);
      for (int j = 0; j < sk; ++j)
        for (int h = 0; h < heads_k; ++h) row(v.t, b, j, h, rs.v);
      if (fp8) scaled(rs.q, 0, opt.q_descale), scaled(rs.k, 0, opt.k_descale), scaled(rs.v, 0, opt.v_descale);
      const auto ref = A::reference::forward(rp, rs, b);
      const std::string e = compare_rows(o.t, o.base, opt.lse, static_cast<long long>(heads) * sq, sq, ref, b, sq, heads, dd.dv,
                                         o_tolerance(type, opt.v_descale) + 2 * logit_slack(opt, dd.d) * opt.v_descale, covered,
                                         1e-3 + logit_slack(opt, dd.d));
      if (!e.empty()) return e;
    }
    return untouched(o, covered);
  }
};

/// Cost bound of the emulator run: rows * keys * (d + dv) per head.
inline bool cheap(long long b, long long h, long long sq, long long sk, dims dd, long long budget) {
  return b * h * std::max(1LL, sq) * std::max(1LL, sk) * (dd.d + dd.dv) <= budget;
}

template <class Src>
bool make_forward(Src& src, bool fuzz, forward_case& fc, long long budget = 3000000, std::size_t max_bytes = 4u << 20,
                  bool fp8 = true) {
  draw_common(src, fc.type, fc.dd, fp8);
  fc.batch = static_cast<int>(src.range(1, 3));
  if (src.chance(0.05)) fc.batch = 0;
  fc.heads_k = static_cast<int>(src.range(1, 3));
  fc.heads = fc.heads_k * static_cast<int>(src.range(1, 3));
  fc.sq = src.extent(40, 16);
  fc.sk = src.extent(40, 16);
  while (!cheap(fc.batch, fc.heads, fc.sq, fc.sk, fc.dd, budget)) {
    if (fc.sk > 1) fc.sk /= 2;
    else if (fc.sq > 1) fc.sq /= 2;
    else if (fc.heads > 1) fc.heads = fc.heads_k = 1;
    else if (fc.batch > 1) fc.batch = 1;
    else break;
  }
  const std::uint64_t seed = src.seed();
  std::mt19937_64 g(seed);
  draw_options(src, fc.opt, fc.heads, fc.alibi, fc.sinks, g, fuzz);
  if (fc.type == strata::dtype::e4m3) {  // per-tensor descale factors (scores stay within a few units)
    const float qk[] = {0.5f, 1.f, 1.25f}, vs[] = {0.25f, 1.f, 3.f};
    fc.opt.q_descale = src.pick(qk), fc.opt.k_descale = src.pick(qk), fc.opt.v_descale = src.pick(vs);
    if (fuzz && src.chance(0.05)) fc.opt.k_descale = src.chance(0.5) ? 0.f : std::numeric_limits<float>::quiet_NaN();
  } else if (fuzz && src.chance(0.02)) {
    fc.opt.v_descale = 2.f;  // refused: descale factors are for fp8 inputs
  }
  // (fuzz) a V / O head dim of their own: drawn before the layouts so that O's rows never overlap.
  const int dv = fuzz && src.chance(0.04) ? static_cast<int>(src.range(-1, 80)) : fc.dd.dv;
  fc.q.t = draw_layout(src, fc.type, fc.batch, fc.sq, fc.heads, fc.dd.d);
  fc.k.t = draw_layout(src, fc.type, fc.batch, fc.sk, fc.heads_k, fc.dd.d);
  fc.v.t = draw_layout(src, fc.type, fc.batch, fc.sk, fc.heads_k, std::max(1, dv));
  fc.o.t = draw_layout(src, fc.type == strata::dtype::e4m3 ? strata::dtype::bf16 : fc.type, fc.batch, fc.sq, fc.heads, std::max(1, dv));
  fc.v.t.dim = fc.o.t.dim = dv;
  int mis_q = 0, mis_o = 0;
  bool null_k = false;
  if (fuzz) {
    const strata::dtype types[] = {strata::dtype::fp16, strata::dtype::bf16, strata::dtype::fp32};
    if (src.chance(0.04)) fc.k.t.type = src.pick(types);
    if (src.chance(0.04)) fc.o.t.type = src.pick(types);
    if (src.chance(0.04)) fc.k.t.dim = static_cast<int>(src.range(0, 80));
    if (src.chance(0.04)) fc.k.t.heads = static_cast<int>(src.range(-1, 4));
    if (src.chance(0.04)) fc.v.t.seqlen = static_cast<int>(src.range(-1, 40));
    if (src.chance(0.04)) fc.o.t.seqlen = static_cast<int>(src.range(0, 40));
    if (src.chance(0.04)) fc.q.t.batch = static_cast<int>(src.range(-1, 3));
    // Strides off by less than 16 bytes (must be rejected; overlapping rows are the caller's business).
    const int unit = 16 / A::element_bytes(fc.type);
    if (src.chance(0.04)) fc.q.t.row_stride += src.range(1, unit - 1);
    if (src.chance(0.04)) fc.o.t.head_stride += src.range(1, 16 / A::element_bytes(fc.o.t.type) - 1);
    if (src.chance(0.04)) fc.k.t.batch_stride = -fc.k.t.batch_stride;
    if (src.chance(0.03)) mis_q = static_cast<int>(src.range(1, 15));
    if (src.chance(0.03)) mis_o = static_cast<int>(src.range(1, 15));
    if (src.chance(0.03)) null_k = true;
    fc.corrupted = true;
  }
  const int e = A::element_bytes(fc.type);
  std::size_t total = 0;
  for (auto* x : {&fc.q, &fc.k, &fc.v, &fc.o}) total += static_cast<std::size_t>(span(x->t)) * A::element_bytes(x->t.type);
  if (total > max_bytes) return false;
  (void)e;
  alloc_tensor(fc.q, seed + 1, true, mis_q);
  alloc_tensor(fc.k, seed + 2, true);
  alloc_tensor(fc.v, seed + 3, true);
  alloc_tensor(fc.o, 0, false, mis_o);
  if (null_k) fc.k.t.data = nullptr;
  if (src.chance(0.7)) {
    fc.lse.alloc(static_cast<std::size_t>(std::max(0, fc.q.t.batch)) * std::max(0, fc.q.t.heads) * std::max(0, fc.q.t.seqlen) * 4);
    fc.opt.lse = reinterpret_cast<float*>(fc.lse.data);
  }
  if (!fc.alibi.empty()) {
    fc.alibi_buf.alloc(fc.alibi.size() * 4);
    std::memcpy(fc.alibi_buf.data, fc.alibi.data(), fc.alibi.size() * 4);
    fc.opt.alibi_slopes = reinterpret_cast<const float*>(fc.alibi_buf.data);
  }
  if (!fc.sinks.empty()) {
    fc.sinks_buf.alloc(fc.sinks.size() * 4);
    std::memcpy(fc.sinks_buf.data, fc.sinks.data(), fc.sinks.size() * 4);
    fc.opt.sinks = reinterpret_cast<const float*>(fc.sinks_buf.data);
  }
  return true;
}


// ---- decode ----------------------------------------------------------------------------------------

/// Pointer to element `idx` of tensor x inside `bytes`, a copy of x's whole buffer (spares included).
inline unsigned char* in_copy(std::vector<unsigned char>& bytes, const tensor_buf& x, long long idx) {
  const auto off = static_cast<const unsigned char*>(x.t.data) - x.buf.mem->data();
  return bytes.data() + off + idx * A::element_bytes(x.t.type);
}

struct decode_case {
  strata::dtype type{};
  dims dd{};
  int batch = 1, heads = 1, heads_k = 1, sq = 1, s_max = 0, s_new = 0, page = 0, pages_per_seq = 0, num_pages = 0;
  bool paged = false;
  tensor_buf q, o, kc, vc, kn, vn;
  buffer lens_buf, table_buf, lse, alibi_buf, sinks_buf, work;
  std::vector<int> lens, table;
  // Lengths or a block table the host cannot check (fuzzing with STRATA_FUZZ_DEVICE_DATA): the kernels
  // clamp them (docs/attention.md, "Device-side lengths"), the result is not meaningful, and only memory
  // safety is checked (by ASan in the sanitizer build).
  bool device_data_corrupt = false;
  std::vector<float> alibi, sinks;
  std::vector<unsigned char> kc_before, vc_before;
  A::options opt;
  A::decode_args dec;
  std::string describe() const {
    std::ostringstream s;
    s << describe_tensor("q", q.t) << describe_tensor("k_cache", kc.t) << describe_tensor("v_cache", vc.t)
      << describe_tensor("o", o.t) << (paged ? "paged page " + std::to_string(page) + " stride " + std::to_string(dec.paged.block_table_stride) : std::string("dense"))
      << " s_new " << s_new << " splits " << dec.num_splits << " work " << work.bytes << " lens";
    for (int l : lens) s << " " << l;
    return s.str() + " " + describe_options(opt, alibi, sinks);
  }
  bool corrupt_output() { return (static_cast<unsigned char*>(o.t.data)[A::element_bytes(o.t.type) - 1] ^= 0x5A, true); }
  void run(strata::stream& s) const {
    strata::attention_decode(s, q.t, kc.t, vc.t, o.t, dec, opt, {work.data, work.bytes});
    s.synchronize();
  }
  /// Element offset of key j of sequence b (head h) in the cache tensor x.
  long long key_at(const A::tensor& x, int b, int j, int h) const {
    if (!paged) return at(x, b, j, h);
    return at(x, table[static_cast<std::size_t>(b) * dec.paged.block_table_stride + j / page], j % page, h);
  }
  std::string check() const {
    if (device_data_corrupt) return "";
    const A::reference::problem rp = problem_of(opt, heads, heads_k, dd, alibi, sinks);
    std::vector<char> covered(o.buf.bytes / A::element_bytes(type), 0);
    std::vector<unsigned char> kc_want = kc_before, vc_want = vc_before;
    for (int b = 0; b < batch; ++b) {
      A::reference::sequence rs;
      rs.sq = sq, rs.sk = lens[b] + s_new;
      for (int i = 0; i < sq; ++i)
        for (int h = 0; h < heads; ++h) row(q.t, b, i, h, rs.q);
      for (int pass = 0; pass < 2; ++pass) {
        const tensor_buf& cache = pass ? vc : kc;
        const tensor_buf& nw = pass ? vn : kn;
        const std::vector<unsigned char>& before = pass ? vc_before : kc_before;
        std::vector<unsigned char>& want = pass ? vc_want : kc_want;
        auto& dst = pass ? rs.v : rs.k;
        const int dim = cache.t.dim, e = A::element_bytes(type);
        for (int j = 0; j < rs.sk; ++j)
          for (int h = 0; h < heads_k; ++h)
            for (int c = 0; c < dim; ++c) {
              if (j < lens[b]) {
                const long long idx = key_at(cache.t, b, j, h) + c;
                dst.push_back(load(type, in_copy(const_cast<std::vector<unsigned char>&>(before), cache, idx), 0));
              } else {
                const long long src_idx = at(nw.t, b, j - lens[b], h) + c;
                dst.push_back(load(type, nw.t.data, src_idx));
                std::memcpy(in_copy(want, cache, key_at(cache.t, b, j, h) + c), static_cast<const unsigned char*>(nw.t.data) + src_idx * e, e);
              }
            }
      }
      const auto ref = A::reference::forward(rp, rs, b);
      const std::string e = compare_rows(o.t, o.base, opt.lse, static_cast<long long>(heads) * sq, sq, ref, b, sq, heads, dd.dv,
                                         o_tolerance(type) + 2 * logit_slack(opt, dd.d), covered, 1e-3 + logit_slack(opt, dd.d));
      if (!e.empty()) return e;
    }
    if (std::memcmp(kc_want.data(), kc.buf.mem->data(), kc_want.size()) != 0) return "k_cache after the append differs from the expected cache";
    if (std::memcmp(vc_want.data(), vc.buf.mem->data(), vc_want.size()) != 0) return "v_cache after the append differs from the expected cache";
    return untouched(o, covered);
  }
};

template <class Src>
bool make_decode(Src& src, bool fuzz, decode_case& dc, long long budget = 3000000, std::size_t max_bytes = 4u << 20) {
  draw_common(src, dc.type, dc.dd);
  dc.batch = static_cast<int>(src.range(1, 3));
  dc.heads_k = static_cast<int>(src.range(1, 3));
  dc.heads = dc.heads_k * static_cast<int>(src.range(1, 4));
  dc.sq = static_cast<int>(src.chance(0.5) ? 1 : src.range(1, 16));
  dc.s_new = src.chance(0.5) ? 0 : static_cast<int>(src.range(1, 3));
  dc.s_max = std::max(dc.s_new, src.extent(96, 16));
  while (!cheap(dc.batch, dc.heads, dc.sq, dc.s_max, dc.dd, budget) && dc.s_max > std::max(1, dc.s_new)) dc.s_max = std::max(dc.s_new, dc.s_max / 2);
  dc.paged = src.chance(0.5);
  const std::uint64_t seed = src.seed();
  std::mt19937_64 g(seed);
  draw_options(src, dc.opt, dc.heads, dc.alibi, dc.sinks, g, fuzz);
  dc.lens.resize(static_cast<std::size_t>(dc.batch));
  for (auto& l : dc.lens) l = static_cast<int>(src.chance(0.2) ? (src.chance(0.5) ? 0 : dc.s_max - dc.s_new) : src.range(0, dc.s_max - dc.s_new));
  // (fuzz) a query length of its own (0, > 16): drawn before the layouts so that O's rows never overlap.
  if (fuzz && src.chance(0.04)) dc.sq = static_cast<int>(src.range(-1, 20));
  dc.q.t = draw_layout(src, dc.type, dc.batch, std::max(1, dc.sq), dc.heads, dc.dd.d);
  dc.o.t = draw_layout(src, dc.type, dc.batch, std::max(1, dc.sq), dc.heads, dc.dd.dv);
  dc.q.t.seqlen = dc.o.t.seqlen = dc.sq;
  int stride = 0;
  if (dc.paged) {
    dc.page = src.chance(0.5) ? 16 : 32;
    dc.pages_per_seq = std::max(1, (dc.s_max + dc.page - 1) / dc.page);
    stride = dc.pages_per_seq + static_cast<int>(src.chance(0.3) ? src.range(1, 2) : 0);
    dc.num_pages = dc.batch * dc.pages_per_seq + static_cast<int>(src.range(0, 2));
    dc.kc.t = draw_layout(src, dc.type, dc.num_pages, dc.page, dc.heads_k, dc.dd.d);
    dc.vc.t = draw_layout(src, dc.type, dc.num_pages, dc.page, dc.heads_k, dc.dd.dv);
  } else {
    dc.kc.t = draw_layout(src, dc.type, dc.batch, dc.s_max, dc.heads_k, dc.dd.d);
    dc.vc.t = draw_layout(src, dc.type, dc.batch, dc.s_max, dc.heads_k, dc.dd.dv);
  }
  if (dc.s_new > 0) {
    dc.kn.t = draw_layout(src, dc.type, dc.batch, dc.s_new, dc.heads_k, dc.dd.d);
    dc.vn.t = draw_layout(src, dc.type, dc.batch, dc.s_new, dc.heads_k, dc.dd.dv);
  }
  const int splits[] = {0, 0, 1, 2, 3, 4, 7};
  dc.dec.num_splits = src.pick(splits);
  bool give_work = true;
  double work_scale = 1.0;
  bool bad_table = false, null_lens = false;
  if (fuzz) {
    // Device-side data the host entry cannot check without a synchronization: cache lengths past the
    // cache and block-table entries outside the pool. Off unless STRATA_FUZZ_DEVICE_DATA is set; the
    // kernels clamp them, so such a case checks memory safety only (run it in the ASan build).
    static const bool device_data = std::getenv("STRATA_FUZZ_DEVICE_DATA") != nullptr;
    if (device_data && src.chance(0.04))
      dc.lens[src.range(0, dc.batch - 1)] = static_cast<int>(src.range(-3, dc.s_max + 40)), dc.device_data_corrupt = true;
    if (src.chance(0.04)) dc.dec.num_splits = static_cast<int>(src.range(-2, 300));
    if (src.chance(0.05)) give_work = src.chance(0.5), work_scale = src.real(0, 0.99);
    if (src.chance(0.03)) null_lens = true;
    if (device_data && src.chance(0.04)) bad_table = true, dc.device_data_corrupt = true;
    if (dc.paged && src.chance(0.04)) dc.page = static_cast<int>(src.range(-16, 48));
    // A shorter table than the cache lengths need is the same device-data mismatch.
    if (dc.paged && src.chance(0.04)) {
      stride = static_cast<int>(device_data ? src.range(-1, 3) : src.range(-1, 0));
      dc.device_data_corrupt = dc.device_data_corrupt || device_data;
    }
    if (src.chance(0.03)) dc.opt.cu_seqlens_q = reinterpret_cast<const int*>(&dc), dc.opt.cu_seqlens_k = dc.opt.cu_seqlens_q;
    if (src.chance(0.04) && dc.s_new > 0) dc.kn.t.heads = static_cast<int>(src.range(0, 4));
    if (src.chance(0.04) && dc.s_new > 0) dc.vn.t.seqlen = static_cast<int>(src.range(0, 4));
    if (src.chance(0.04)) dc.kc.t.dim = static_cast<int>(src.range(0, 64));
  }
  std::size_t total = 0;
  for (auto* x : {&dc.q, &dc.o, &dc.kc, &dc.vc, &dc.kn, &dc.vn}) total += static_cast<std::size_t>(span(x->t)) * A::element_bytes(x->t.type);
  if (total > max_bytes) return false;
  alloc_tensor(dc.q, seed + 1, true);
  alloc_tensor(dc.o, 0, false);
  alloc_tensor(dc.kc, seed + 2, true);
  alloc_tensor(dc.vc, seed + 3, true);
  if (dc.s_new > 0) alloc_tensor(dc.kn, seed + 4, true), alloc_tensor(dc.vn, seed + 5, true);
  dc.kc_before = dc.kc.buf.snapshot();
  dc.vc_before = dc.vc.buf.snapshot();
  dc.dec.k_new = dc.kn.t, dc.dec.v_new = dc.vn.t;
  dc.lens_buf.alloc(dc.lens.size() * 4);
  std::memcpy(dc.lens_buf.data, dc.lens.data(), dc.lens.size() * 4);
  dc.dec.cache_seqlens = null_lens ? nullptr : reinterpret_cast<const int*>(dc.lens_buf.data);
  if (dc.paged) {
    // Sequence b's logical page p: a random permutation of the pool; entries past a sequence's
    // pages hold other valid pages (fuzz: garbage, which the entry must never follow).
    std::vector<int> perm(static_cast<std::size_t>(dc.num_pages));
    for (int i = 0; i < dc.num_pages; ++i) perm[static_cast<std::size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), g);
    const int st = std::max(0, stride);
    dc.table.assign(static_cast<std::size_t>(dc.batch) * st, 0);
    for (int b = 0; b < dc.batch; ++b)
      for (int p = 0; p < st; ++p)
        dc.table[static_cast<std::size_t>(b) * st + p] =
            p < dc.pages_per_seq ? perm[static_cast<std::size_t>(b * dc.pages_per_seq + p)] : (fuzz ? -7 : perm[static_cast<std::size_t>(p % dc.num_pages)]);
    if (bad_table && !dc.table.empty()) dc.table[g() % dc.table.size()] = src.chance(0.5) ? -1 : dc.num_pages + 3;
    dc.table_buf.alloc(std::max<std::size_t>(4, dc.table.size() * 4));
    if (!dc.table.empty()) std::memcpy(dc.table_buf.data, dc.table.data(), dc.table.size() * 4);
    dc.dec.paged = {reinterpret_cast<const int*>(dc.table_buf.data), stride, dc.page, dc.num_pages};
  }
  const int max_keys = dc.paged ? std::max(0, stride) * std::max(0, dc.page) : dc.s_max;
  if (give_work) {
    // (Capped: for a broken q, e.g. seqlen < 0, the size function's arithmetic wraps around.)
    const std::size_t need = std::min(max_bytes, strata::attention_decode_workspace_size(dc.q.t, dc.dd.dv, std::max(0, dc.dec.num_splits), max_keys));
    dc.work.alloc(static_cast<std::size_t>(static_cast<double>(need) * work_scale));
  }
  if (src.chance(0.7)) {
    dc.lse.alloc(static_cast<std::size_t>(dc.batch) * dc.heads * std::max(0, dc.q.t.seqlen) * 4);
    dc.opt.lse = reinterpret_cast<float*>(dc.lse.data);
  }
  if (!dc.alibi.empty()) {
    dc.alibi_buf.alloc(dc.alibi.size() * 4);
    std::memcpy(dc.alibi_buf.data, dc.alibi.data(), dc.alibi.size() * 4);
    dc.opt.alibi_slopes = reinterpret_cast<const float*>(dc.alibi_buf.data);
  }
  if (!dc.sinks.empty()) {
    dc.sinks_buf.alloc(dc.sinks.size() * 4);
    std::memcpy(dc.sinks_buf.data, dc.sinks.data(), dc.sinks.size() * 4);
    dc.opt.sinks = reinterpret_cast<const float*>(dc.sinks_buf.data);
  }
  return true;
}

// ---- backward --------------------------------------------------------------------------------------

struct backward_case {
  forward_case f;  // valid; its run() gives o and the LSE
  tensor_buf dout, dq, dk, dv;
  buffer work, dsinks;
  A::options opt;  // f.opt plus what the backward takes
  std::string describe() const {
    return f.describe() + " | " + describe_tensor("dout", dout.t) + describe_tensor("dq", dq.t) + describe_tensor("dk", dk.t) +
           describe_tensor("dv", dv.t) + " work " + std::to_string(work.bytes) + (opt.dsinks ? " dsinks" : "");
  }
  bool corrupt_output() { return f.batch > 0 && f.sq > 0 && (static_cast<unsigned char*>(dq.t.data)[A::element_bytes(dq.t.type) - 1] ^= 0x5A, true); }
  void run(strata::stream& s) const {
    strata::attention_backward(s, f.q.t, f.k.t, f.v.t, f.o.t, dout.t, dq.t, dk.t, dv.t, opt, {work.data, work.bytes});
    s.synchronize();
  }
  std::string check() const {
    const int batch = f.batch, heads = f.heads, heads_k = f.heads_k, sq = f.sq, sk = f.sk;
    const A::reference::problem rp = problem_of(f.opt, heads, heads_k, f.dd, f.alibi, f.sinks);
    struct acc { double err = 0, mag = 0; };
    acc e_dq, e_dk, e_dv;
    std::vector<double> dsink_ref(f.sinks.size(), 0.0);
    std::vector<char> cq(dq.buf.bytes / A::element_bytes(f.type), 0), ck(dk.buf.bytes / A::element_bytes(f.type), 0),
        cv(dv.buf.bytes / A::element_bytes(f.type), 0);
    for (int b = 0; b < batch; ++b) {
      A::reference::sequence rs;
      rs.sq = sq, rs.sk = sk;
      std::vector<double> d_o;
      for (int i = 0; i < sq; ++i)
        for (int h = 0; h < heads; ++h) row(f.q.t, b, i, h, rs.q), row(dout.t, b, i, h, d_o);
      for (int j = 0; j < sk; ++j)
        for (int h = 0; h < heads_k; ++h) row(f.k.t, b, j, h, rs.k);
      for (int j = 0; j < sk; ++j)
        for (int h = 0; h < heads_k; ++h) row(f.v.t, b, j, h, rs.v);
      const auto g = A::reference::backward(rp, rs, b, d_o);
      for (std::size_t h = 0; h < dsink_ref.size(); ++h) dsink_ref[h] += g.dsinks[h];
      auto cmp = [&](const tensor_buf& x, std::vector<char>& cov, const std::vector<double>& ref, int rows, int hh, int dim, acc& a) {
        for (int i = 0; i < rows; ++i)
          for (int h = 0; h < hh; ++h)
            for (int c = 0; c < dim; ++c) {
              const long long idx = at(x.t, b, i, h) + c;
              cov[static_cast<std::size_t>(x.base + idx)] = 1;
              const double r = ref[(static_cast<std::size_t>(i) * hh + h) * dim + c];
              const double got = load(x.t.type, x.t.data, idx);
              a.err = std::max(a.err, std::isnan(got) ? INFINITY : std::fabs(got - r));
              a.mag = std::max(a.mag, std::fabs(r));
            }
      };
      cmp(dq, cq, g.dq, sq, heads, f.dd.d, e_dq);
      cmp(dk, ck, g.dk, sk, heads_k, f.dd.d, e_dk);
      cmp(dv, cv, g.dv, sk, heads_k, f.dd.dv, e_dv);
    }
    const double tol = grad_tolerance(f.type);
    const char* names[] = {"dq", "dk", "dv"};
    const acc* accs[] = {&e_dq, &e_dk, &e_dv};
    for (int w = 0; w < 3; ++w)
      if (!(accs[w]->err <= tol * std::max(1.0, accs[w]->mag)))
        return std::string(names[w]) + ": max error " + std::to_string(accs[w]->err) + " > " + std::to_string(tol) + " * max(1, " +
               std::to_string(accs[w]->mag) + ")";
    if (opt.dsinks)
      for (std::size_t h = 0; h < dsink_ref.size(); ++h)
        if (!(std::fabs(opt.dsinks[h] - dsink_ref[h]) <= tol * std::max(1.0, std::fabs(dsink_ref[h]))))
          return "dsinks[" + std::to_string(h) + "] = " + std::to_string(opt.dsinks[h]) + ", want " + std::to_string(dsink_ref[h]);
    for (const auto& pr : {std::make_pair(&dq, &cq), std::make_pair(&dk, &ck), std::make_pair(&dv, &cv)}) {
      const std::string u = untouched(*pr.first, *pr.second);
      if (!u.empty()) return u;
    }
    return "";
  }
};

template <class Src>
bool make_backward(Src& src, bool fuzz, backward_case& bc, long long budget = 1500000, std::size_t max_bytes = 4u << 20) {
  if (!make_forward(src, false, bc.f, budget, max_bytes / 2, /*fp8=*/false)) return false;  // fp8 is forward only
  forward_case& f = bc.f;
  if (!f.opt.lse) {
    f.lse.alloc(static_cast<std::size_t>(f.batch) * f.heads * f.sq * 4);
    f.opt.lse = reinterpret_cast<float*>(f.lse.data);
  }
  bc.opt = f.opt;
  const std::uint64_t seed = src.seed();
  bc.dout.t = draw_layout(src, f.type, f.batch, f.sq, f.heads, f.dd.dv);
  bc.dq.t = draw_layout(src, f.type, f.batch, f.sq, f.heads, f.dd.d);
  bc.dk.t = draw_layout(src, f.type, f.batch, f.sk, f.heads_k, f.dd.d);
  bc.dv.t = draw_layout(src, f.type, f.batch, f.sk, f.heads_k, f.dd.dv);
  bool want_dsinks = !f.sinks.empty() && src.chance(0.6);
  bool give_work = true, null_lse = false;
  double work_scale = 1.0;
  int mis_dk = 0;
  if (fuzz) {
    const strata::dtype types[] = {strata::dtype::fp16, strata::dtype::bf16, strata::dtype::fp32};
    if (src.chance(0.05)) bc.dout.t.type = src.pick(types);
    if (src.chance(0.05)) bc.dq.t.seqlen = static_cast<int>(src.range(0, 40));
    if (src.chance(0.05)) bc.dk.t.heads = static_cast<int>(src.range(0, 4));
    if (src.chance(0.05)) bc.dv.t.dim = static_cast<int>(src.range(0, 80));
    if (src.chance(0.04)) bc.dv.t.row_stride += src.range(1, 16 / A::element_bytes(f.type) - 1);
    if (src.chance(0.04)) mis_dk = static_cast<int>(src.range(1, 15));
    if (src.chance(0.05)) give_work = src.chance(0.5), work_scale = src.real(0, 0.99);
    if (src.chance(0.04)) null_lse = true;
    if (src.chance(0.04)) want_dsinks = true;
  }
  std::size_t total = 0;
  for (auto* x : {&bc.dout, &bc.dq, &bc.dk, &bc.dv}) total += static_cast<std::size_t>(span(x->t)) * A::element_bytes(x->t.type);
  if (total > max_bytes / 2) return false;
  alloc_tensor(bc.dout, seed + 7, true);
  alloc_tensor(bc.dq, 0, false);
  alloc_tensor(bc.dk, 0, false, mis_dk);
  alloc_tensor(bc.dv, 0, false);
  if (null_lse) bc.opt.lse = nullptr;
  if (want_dsinks) {
    bc.dsinks.alloc(static_cast<std::size_t>(f.heads) * 4);
    bc.opt.dsinks = reinterpret_cast<float*>(bc.dsinks.data);
  }
  if (give_work) {
    const std::size_t need = strata::attention_backward_workspace_size(f.q.t, f.k.t, f.v.t, bc.opt);
    bc.work.alloc(static_cast<std::size_t>(static_cast<double>(need) * work_scale));
  }
  return true;
}

}  // namespace strata_property::attention
