// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/host.hpp -- the host entries:
//
//   strata::conv(stream, problem, x, w, y, options)                   y  = act(alpha conv(x, w) + beta residual + bias)
//   strata::conv_backward_data(stream, problem, dy, w, dx, options)   dx = act(alpha conv^T(dy, w) + beta residual + bias)
//   strata::conv_backward_weight(stream, problem, x, dy, dw, options) dw = alpha grad_w + beta dw
//
//   namespace sc = strata::ops::conv;
//   sc::problem pr{.n = 8, .c = 64, .k = 64, .input = {1, 56, 56}, .filter = {1, 3, 3},
//                  .pad = {0, 1, 1}, .pad_end = {0, 1, 1}};
//   strata::conv(stream, pr, {x, strata::dtype::fp16}, {w, strata::dtype::fp16}, {y, strata::dtype::fp16},
//                {.bias = bias, .act = sc::activation::relu});
//
// Tensors are {pointer, dtype, strides}; strides {} mean packed channels-last for the tensor's shape
// (sc::channels_first(...) gives NCDHW). Filters are always packed KTRSC (types.hpp).
//
// Dispatch (docs/conv.md):
//   fprop, groups == C > 1        depthwise_kernel (direct)
//   fprop or dgrad, 1x1x1 filter, stride 1, no padding, groups 1, channels-last pixels of one stride
//                                 gemm::kernel on the activations as matrices (the 1x1 fast path: no gathers)
//   everything else               conv::kernel<kind> (implicit GEMM) at the GEMM heuristic's tile
//                                 (host FMA; CUDA mma.sync, fp32 FMA unless tf32; HIP MFMA), with
//                                 16-byte gathers when the strides, channel counts and pointers allow,
//                                 element-wise gathers otherwise
//   wgrad split-K                 options.split_k, or the GEMM heuristic when options.work is given
//
// Data types (strata::dtype, input -> output, accumulation): fp32 -> fp32 (fp32; tf32 multiplies with
// options.tf32 on CUDA); fp16 -> fp16 | fp32 and bf16 -> bf16 | fp32 (fp32); int8 -> int32 | int8
// (int32; an int8 output is alpha * acc + ..., rounded and saturated: the requantizing convolution).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "strata/epilogue/epilogue.hpp"
#include "strata/ops/conv/depthwise.hpp"
#include "strata/ops/conv/epilogue.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/conv/types.hpp"
#include "strata/ops/gemm/gemm.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/pointer_table.hpp"
#include "strata/runtime/runtime.hpp"
#include "strata/runtime/workspace.hpp"

namespace strata::ops::conv {

/// Element types are strata::dtype, as in every entry; `dtype` here (the GEMM's former enum) stays one
/// release as a deprecated alias (docs/api.md, "Migrating from the per-operator enums").
using dtype [[deprecated("use strata::dtype (fp32, fp16, bf16, int8, int32); see docs/api.md")]] = strata::dtype;

/// A tensor in device memory. `layout` all zero: packed channels-last for its shape.
struct tensor {
  const void* data = nullptr;
  strata::dtype type = strata::dtype::fp32;
  strides layout{};
};

struct options {
  float alpha = 1.f;
  float beta = 0.f;             // fprop, dgrad: scales `residual`; wgrad: dw = alpha grad + beta dw
  const float* bias = nullptr;  // fprop: K floats, dgrad: C floats (one per output channel); not wgrad
  activation act = activation::none;  // after bias; fprop and dgrad
  tensor residual{};            // fprop, dgrad: read when beta != 0; the output's shape and dtype, may be the output itself
  bool tf32 = false;            // f32 inputs on CUDA: TF32 tensor cores instead of full fp32 FMA
  int split_k = 0;              // wgrad: 0 = heuristic (needs options.work), 1 = none, n = n splits
  workspace work{};             // wgrad split-K partials: workspace_size(problem, kind::wgrad, options)
};

namespace detail {

[[noreturn]] inline void bad(const char* op, const std::string& arg, const std::string& why) {
  throw invalid_argument(op, arg, why);
}

inline std::string str(const spatial& s) {
  return "(" + std::to_string(s.d) + ", " + std::to_string(s.h) + ", " + std::to_string(s.w) + ")";
}


/// The tile shape and atom for this build's backend (the GEMM entry's families), at the alignment the
/// gathers allow; fn(kernel*) launches it.
template <kind Kind, class TA, class E, class Fn>
void dispatch(int m, bool vec16, bool tf32, Fn&& fn) {
  namespace cf = gemm::configs;
#if STRATA_BACKEND_CUDA
  if constexpr (std::is_same_v<TA, float>) {
    if (!tf32) return fn(static_cast<kernel<Kind, arch::sm80, mma::fma_atom<float, float, 32>, cf::fma_default, E>*>(nullptr));
  }
  using atom = typename cf::sm80_atom<TA>::type;
  // (fprop's kernel already knows its operand orders at compile time: one ldmatrix form. The GEMM tile
  // compiled for them, with XOR-swizzled stages, took the K loop from 6.97 to 7.66 static instructions
  // per HMMA on sm_90a, 2026-12-08: the padded stages stay.)
  const auto pick = [&](auto shape_tag) {
    constexpr gemm::shape S = decltype(shape_tag)::value;
    if (vec16) fn(static_cast<kernel<Kind, arch::sm80, atom, S, E, order::default_for<arch::sm80>, 16>*>(nullptr));
    else fn(static_cast<kernel<Kind, arch::sm80, atom, S, E>*>(nullptr));
  };
  if (m <= 128) pick(std::integral_constant<gemm::shape, cf::sm80_medium>{});
  else pick(std::integral_constant<gemm::shape, cf::sm80_large>{});
#elif STRATA_BACKEND_HIP
  // MFMA for every input type; fp32 on the f32 MFMA (full fp32 products) with its shallower tile.
  using T = arch::STRATA_GEMM_HIP_TARGET;
  (void)tf32;
  using atom = typename cf::cdna_atom<T, TA, true>::type;
  constexpr gemm::shape S = sizeof(TA) == 4 ? cf::cdna_large_f32 : cf::cdna_large;
  // fprop with 16-byte gathers: the register-staged loop of the GEMM's A row-major x B column-major
  // tile (16-byte loads in flight during the MFMAs, swizzled stages, 16-byte fragment reads), where
  // the element-wise tile reads every operand element with its own 1-4 byte load.
  if constexpr (Kind == kind::fprop) {
    if (vec16)
      return fn(static_cast<kernel<Kind, T, atom, S, E, order::default_for<T>, 16, gemm::operand_orders::a_row_b_col>*>(nullptr));
  }
  fn(static_cast<kernel<Kind, T, atom, S, E>*>(nullptr));
  (void)m, (void)vec16;
#else
  (void)vec16, (void)tf32;
  using atom = mma::fma_atom<TA, cf::fma_acc<TA>, 32>;
  if (m <= 32) fn(static_cast<kernel<Kind, arch::host, atom, cf::fma_skinny, E>*>(nullptr));
  else fn(static_cast<kernel<Kind, arch::host, atom, cf::fma_default, E>*>(nullptr));
#endif
}

/// The target this build's depthwise and 1x1 kernels run on.
#if STRATA_BACKEND_CUDA
using entry_target = arch::sm80;
#elif STRATA_BACKEND_HIP
using entry_target = arch::STRATA_GEMM_HIP_TARGET;
#else
using entry_target = arch::host;
#endif

/// The role of each tensor of one entry, for messages and checks.
struct roles {
  const char* op;
  kind k;
  const char* a;  // fprop "x", dgrad "dy", wgrad "x"
  const char* b;  // fprop "w", dgrad "w",  wgrad "dy"
  const char* d;  // fprop "y", dgrad "dx", wgrad "dw"
};

inline void check_problem(const char* op, const problem& p) {
  if (p.n < 1) bad(op, "problem.n", "must be at least 1, got " + std::to_string(p.n));
  if (p.groups < 1) bad(op, "problem.groups", "must be at least 1, got " + std::to_string(p.groups));
  if (p.groups > 65535) bad(op, "problem.groups", "must be at most 65535 (one grid z index per group), got " + std::to_string(p.groups));
  if (p.c < 1) bad(op, "problem.c", "must be at least 1, got " + std::to_string(p.c));
  if (p.k < 1) bad(op, "problem.k", "must be at least 1, got " + std::to_string(p.k));
  if (p.c % p.groups != 0)
    bad(op, "problem.c", std::to_string(p.c) + " input channels do not divide into " + std::to_string(p.groups) + " groups");
  if (p.k % p.groups != 0)
    bad(op, "problem.k", std::to_string(p.k) + " output channels do not divide into " + std::to_string(p.groups) + " groups");
  const auto positive = [&](const spatial& s, const char* name) {
    if (s.d < 1 || s.h < 1 || s.w < 1) bad(op, std::string("problem.") + name, "must be at least 1 in every dimension, got " + str(s));
  };
  const auto non_negative = [&](const spatial& s, const char* name) {
    if (s.d < 0 || s.h < 0 || s.w < 0) bad(op, std::string("problem.") + name, "must be non-negative, got " + str(s));
  };
  positive(p.input, "input");
  positive(p.filter, "filter");
  positive(p.stride, "stride");
  positive(p.dilation, "dilation");
  non_negative(p.pad, "pad");
  non_negative(p.pad_end, "pad_end");
  const spatial o = output_extent(p);
  if (o.d < 1 || o.h < 1 || o.w < 1)
    bad(op, "problem", "produces an empty output " + str(o) + ": the dilated filter " +
                           str({p.dilation.d * (p.filter.d - 1) + 1, p.dilation.h * (p.filter.h - 1) + 1,
                                p.dilation.w * (p.filter.w - 1) + 1}) +
                           " is larger than the padded input " +
                           str({p.input.d + p.pad.d + p.pad_end.d, p.input.h + p.pad.h + p.pad_end.h,
                                p.input.w + p.pad.w + p.pad_end.w}));
  // Every GEMM extent (and every element offset inside a group's operands) is an int on the device.
  const long long in_pix = (long long)p.n * p.input.d * p.input.h * p.input.w;
  const long long out_pix = (long long)p.n * o.d * o.h * o.w;
  const long long limit = 0x7fffffffLL;
  if (in_pix * p.c > (1LL << 62) / 8 || out_pix * p.k > (1LL << 62) / 8) bad(op, "problem", "is too large");
  if (in_pix > limit || out_pix > limit) bad(op, "problem", "has more than 2^31 - 1 pixels per tensor; split the batch");
  if (p.taps() * std::max(p.c_per_group(), p.k_per_group()) > limit) bad(op, "problem.filter", "is too large (T R S C/G above 2^31 - 1)");
}

/// A tensor's strides, defaulted to packed channels-last for extent `e` with `channels`.
inline strides strides_of(const tensor& t, spatial e, int channels) {
  return t.layout == strides{} ? channels_last(e, channels) : t.layout;
}

/// Checks one activation tensor: dtype, non-negative strides; an output also needs strides that give
/// every element its own address. (Its pointer is the pointer table's: pointer_table_of.)
inline void check_activation(const char* op, const tensor& t, const char* name, strata::dtype want, spatial e, int n,
                             int channels, bool output) {
  const std::string nm = name;
  if (t.type != want)
    bad(op, nm, std::string("has dtype ") + to_string(t.type) + ", expected " + to_string(want));
  const strides s = strides_of(t, e, channels);
  const std::array<std::pair<long long, long long>, 5> dims_ = {
      {{s.n, n}, {s.d, e.d}, {s.h, e.h}, {s.w, e.w}, {s.c, channels}}};
  for (const auto& [st, ext] : dims_)
    if (st < 0) bad(op, nm + ".layout", "has a negative stride");
  if (output) {
    // Non-overlapping: sorted by stride, each dimension must step past the whole of the smaller ones.
    auto d = dims_;
    std::sort(d.begin(), d.end());
    long long span = 1;
    for (const auto& [st, ext] : d) {
      if (ext <= 1) continue;
      if (st < span)
        bad(op, nm + ".layout", "has strides under which two elements share an address (an output needs distinct elements)");
      span = st * ext;
    }
  }
}

/// The bytes a tensor spans from its pointer (strides are non-negative: check_activation).
inline std::uint64_t bytes_of(const tensor& t, strides s, spatial e, int n, int channels) {
  const long long last = (n - 1) * s.n + (e.d - 1) * s.d + (e.h - 1) * s.h + (e.w - 1) * s.w + (channels - 1) * s.c;
  return std::uint64_t((last + 1) * (long long)gemm::size_of(t.type));
}

/// The pointer table of one pass (fprop: x, w, y; dgrad: dy, w, dx; wgrad: x, dy, dw), after
/// check_arguments. `work_needed`: the bytes of options.work the call uses (wgrad split-K; else 0).
///   r.a, r.b          inputs, element-aligned, their extents (the filter K T R S C/G elements)
///   r.d               the output
///   options.residual  input when beta != 0 (fprop, dgrad); may be the output exactly (same pointer and strides)
///   options.bias      input, one float per output channel (fprop K, dgrad C), float-aligned
///   options.work      workspace, 16-byte aligned, work_needed bytes of options.work.bytes
template <kind Kind>
pointer_table pointer_table_of(const roles& r, const problem& pr, const tensor& a, const tensor& b, const tensor& d,
                               const options& o, std::size_t work_needed) {
  pointer_table t(r.op);
  const spatial oe = output_extent(pr);
  const std::uint64_t filter = std::uint64_t(pr.k) * std::uint64_t(pr.taps()) * std::uint64_t(pr.c_per_group());
  const auto activation = [&](const char* name, const tensor& x, spatial e, int channels, bool out) -> pointer_arg& {
    pointer_arg& row = out ? t.output(name, x.data) : t.input(name, x.data);
    return row.aligned(gemm::size_of(x.type), "its element size").spans(bytes_of(x, strides_of(x, e, channels), e, pr.n, channels));
  };
  const auto weights = [&](const char* name, const tensor& w, bool out) -> pointer_arg& {
    pointer_arg& row = out ? t.output(name, w.data) : t.input(name, w.data);
    return row.aligned(gemm::size_of(w.type), "its element size").spans(filter * gemm::size_of(w.type));
  };
  const spatial de = Kind == kind::fprop ? oe : pr.input;
  const int dc = Kind == kind::fprop ? pr.k : pr.c;
  if constexpr (Kind == kind::fprop) {
    activation(r.a, a, pr.input, pr.c, false);
    weights(r.b, b, false);
    activation(r.d, d, oe, pr.k, true);
  } else if constexpr (Kind == kind::dgrad) {
    activation(r.a, a, oe, pr.k, false);
    weights(r.b, b, false);
    activation(r.d, d, pr.input, pr.c, true);
  } else {
    activation(r.a, a, pr.input, pr.c, false);
    activation(r.b, b, oe, pr.k, false);
    weights(r.d, d, true);
  }
  if constexpr (Kind != kind::wgrad) {
    const strides ds = strides_of(d, de, dc), rs = strides_of(o.residual, de, dc);
    t.rows()[2].keyed(layout_key({ds.n, ds.d, ds.h, ds.w, ds.c, (long long)d.type}));
    pointer_arg& res = t.input("options.residual", o.residual.data)
                           .may_be(r.d, layout_key({rs.n, rs.d, rs.h, rs.w, rs.c, (long long)o.residual.type}));
    if (o.beta != 0.f) res.aligned(gemm::size_of(o.residual.type), "its element size").spans(bytes_of(o.residual, rs, de, pr.n, dc));
    t.input("options.bias", o.bias).aligned(alignof(float), "a float").spans(o.bias ? std::uint64_t(dc) * sizeof(float) : 0);
  } else {
    t.input("options.residual", o.residual.data);  // refused by check_arguments (wgrad has none)
    t.input("options.bias", o.bias);
  }
  t.workspace("options.work", o.work.data, o.work.bytes).aligned(16).spans(work_needed).needs("strata::ops::conv::workspace_size");
  return t;
}

/// 16-byte gathers: every vector of channels is contiguous and 16-byte aligned.
inline bool vectorizable(const tensor& t, strides s, int channels_per_group, std::size_t elem) {
  const long long v = 16 / (long long)elem;
  return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0 && s.c == 1 && channels_per_group % v == 0 && s.n % v == 0 &&
         s.d % v == 0 && s.h % v == 0 && s.w % v == 0;
}

/// True when the pixels of a tensor are one stride apart (w, then h, d, n packed): then it is a matrix.
inline bool uniform_pixels(strides s, spatial e) {
  return s.h == s.w * e.w && s.d == s.h * e.h && s.n == s.d * e.d;
}

template <class TD>
typename entry_epilogue<TD>::params entry_params(const options& o, strides os, spatial e, int channels) {
  typename entry_op<TD>::params q{};
  q.alpha = o.alpha;
  q.beta = o.beta;
  q.residual = static_cast<const TD*>(o.residual.data);
  const strides rs = o.beta != 0.f ? strides_of(o.residual, e, channels) : os;
  q.map = {e, rs.n, rs.d, rs.h, rs.w};
  q.stride_c = rs.c;
  q.bias = o.bias;
  q.act = o.act;
  return entry_epilogue<TD>::make_params(q, {});
}

inline int device_units() { return gemm::detail::device_units(); }

/// The 1x1 fast path of fprop and dgrad: a 1x1x1 filter at stride 1 without padding, groups 1,
/// channels-last activations whose pixels are one stride apart, maps every pixel to itself, so the
/// activations are plain matrices (pixels x channels, ld = the pixel stride) and the pass is one GEMM:
///   fprop  y (P x K)  = x (P x C)  * w^T, w read as a column-major (C x K) matrix (ld C)
///   dgrad  dx (P x C) = dy (P x K) * w,   w read as a row-major (K x C) matrix (ld C)
/// The GEMM's (row, column) are the conv kernel's (pixel, channel), so the epilogue is the same. The
/// configuration is platform P's GEMM choice (gemm::detail::dispatch), with the tiles compiled for the
/// pass's pair of operand orders (A row-major and B column-major for fprop, both row-major for dgrad)
/// when every row is 16-byte aligned: on CUDA the copy streams, swizzled stages and, for large fprop
/// outputs, the 128 x 256 tile (sm_90a, bf16: 2.12-3.16 static instructions per HMMA against 13.28
/// for the any-layout 128 x 128 tile); on CDNA the register-staged loop with 16-byte fragment reads.
/// Returns false (nothing launched) when the problem is not such a 1x1 pass. The caller (run) has
/// checked the arguments.
template <class P, kind Kind, class TA, class TD>
bool run_one_by_one(stream& s, const problem& pr, const tensor& a, const tensor& b, const tensor& d, const options& o) {
  static_assert(Kind != kind::wgrad, "run_one_by_one: fprop and dgrad");
  const spatial oe = output_extent(pr);
  const tensor& in_t = Kind == kind::dgrad ? d : a;
  const tensor& out_t = Kind == kind::fprop ? d : a;
  const strides ins = strides_of(in_t, pr.input, pr.c), outs = strides_of(out_t, oe, pr.k);
  const bool one_by_one = pr.filter == spatial{1, 1, 1} && pr.stride == spatial{1, 1, 1} && pr.pad == spatial{0, 0, 0} &&
                          pr.pad_end == spatial{0, 0, 0} && pr.groups == 1 && ins.c == 1 && outs.c == 1 &&
                          uniform_pixels(ins, pr.input) && uniform_pixels(outs, oe);
  if (!one_by_one) return false;
  using E = entry_epilogue<TD>;
  const auto ep = entry_params<TD>(o, Kind == kind::fprop ? outs : ins, Kind == kind::fprop ? oe : pr.input,
                                   Kind == kind::fprop ? pr.k : pr.c);
  const TA* pa = static_cast<const TA*>(a.data);
  const TA* pb = static_cast<const TA*>(b.data);
  TD* pd = static_cast<TD*>(const_cast<void*>(d.data));
  const std::size_t el = sizeof(TA);
  const int m = int((long long)pr.n * oe.d * oe.h * oe.w);
  const long long lda = Kind == kind::fprop ? ins.w : outs.w, ldd = Kind == kind::fprop ? outs.w : ins.w;
  const int n = Kind == kind::fprop ? pr.k : pr.c, k = Kind == kind::fprop ? pr.c : pr.k;
  const auto b_layout = Kind == kind::fprop ? gemm::layout::col_major : gemm::layout::row_major;
  constexpr auto orders = Kind == kind::fprop ? gemm::operand_orders::a_row_b_col : gemm::operand_orders::a_row_b_row;
  const int units = device_units();
  const gemm::detail::read_mode rm{.rows16 = gemm::detail::rows_aligned16(pa, lda, el) && gemm::detail::rows_aligned16(pb, pr.c, el),
                                   .tf32 = o.tf32,
                                   .orders = orders,
                                   .wide = gemm::detail::wide_output(m, n, units, 1),
                                   .few_large_tiles = gemm::detail::few_large_tiles(m, n, units)};
  gemm::detail::dispatch<P, TA, TD, true, true, orders>(m, [&](auto* tag) {
    using G0 = std::remove_pointer_t<decltype(tag)>;
    using G = gemm::kernel<typename G0::target, typename G0::atom, G0::tiles, E, typename G0::order_type, G0::align_bytes,
                           G0::orders>;
    const auto p = G::make_params({m, n, k, 1}, {pa, lda, gemm::layout::row_major, 0}, {pb, pr.c, b_layout, 0},
                                  {pd, ldd, gemm::layout::row_major, 0}, ep);
    launch(s, G::launch_shape_of(p), G{}, p);
  }, rm);
  return true;
}

template <kind Kind, class TA, class TD>
void run(stream& s, const roles& r, const problem& pr, const tensor& a, const tensor& b, const tensor& d, const options& o) {
  const spatial oe = output_extent(pr);
  // Activation strides by side: the input side (x, or dx for dgrad) and the output side (y, or dy).
  const tensor& in_t = Kind == kind::dgrad ? d : a;
  const tensor& out_t = Kind == kind::fprop ? d : (Kind == kind::dgrad ? a : b);
  const strides ins = strides_of(in_t, pr.input, pr.c);
  const strides outs = strides_of(out_t, oe, pr.k);
  const geometry g = make_geometry(pr, ins, outs);
  const std::size_t el = sizeof(TA);
  const int vec = int(16 / el);

  if constexpr (Kind != kind::wgrad) {
    pointer_table_of<Kind>(r, pr, a, b, d, o, 0).check();
    using E = entry_epilogue<TD>;
    const spatial de = Kind == kind::fprop ? oe : pr.input;
    const strides ds = Kind == kind::fprop ? outs : ins;
    const auto ep = entry_params<TD>(o, ds, de, Kind == kind::fprop ? pr.k : pr.c);
    const TA* pa = static_cast<const TA*>(a.data);
    const TA* pb = static_cast<const TA*>(b.data);
    TD* pd = static_cast<TD*>(const_cast<void*>(d.data));
    if constexpr (Kind == kind::fprop) {
      if (pr.groups > 1 && pr.groups == pr.c) {
        using K = depthwise_kernel<entry_target, TA, E>;
        const auto p = K::make_params(g, pa, pb, pd, ep);
        launch(s, K::launch_shape_of(p), K{}, p);
        return;
      }
    }
    // The 1x1 fast path (run_one_by_one): one GEMM on the activations as matrices.
    if (run_one_by_one<gemm::detail::build_platform, Kind, TA, TD>(s, pr, a, b, d, o)) return;
    // 16-byte gathers: A's channel vectors (x for fprop, dy for dgrad) and the filter rows.
    const bool vec16 = (Kind == kind::fprop ? vectorizable(a, ins, g.c_group, el) : vectorizable(a, outs, g.k_group, el)) &&
                       reinterpret_cast<std::uintptr_t>(b.data) % 16 == 0 && g.c_group % vec == 0;
    const int m = gemm_size<Kind>(g).m;
    dispatch<Kind, TA, E>(m, vec16, o.tf32, [&](auto* tag) {
      using K = std::remove_pointer_t<decltype(tag)>;
      const auto p = K::make_params(g, pa, pb, pd, ep);
      if (p.tiles > 0x7fffffffLL) bad(r.op, r.d, "has more output tiles than one grid holds (2^31 - 1)");
      launch(s, K::launch_shape_of(p), K{}, p);
    });
  } else {
    using E = wgrad_epilogue<TD>;
    const TA* px = static_cast<const TA*>(a.data);
    const TA* pdy = static_cast<const TA*>(b.data);
    TD* pdw = static_cast<TD*>(const_cast<void*>(d.data));
    const long long row = g.filter_row();
    const typename E::params ep =
        E::make_params({.alpha = o.alpha, .beta = o.beta, .c = epilogue::row_major(static_cast<const TD*>(pdw), row)}, {});
    const bool vec16 = vectorizable(a, ins, g.c_group, el) && vectorizable(b, outs, g.k_group, el);
    (void)vec;
    dispatch<Kind, TA, E>(g.k_group, vec16, o.tf32, [&](auto* tag) {
      using K = std::remove_pointer_t<decltype(tag)>;
      using Acc = typename K::acc_type;
      const gemm::problem sz = K::gemm_size(g);
      int splits = o.split_k;
      if (splits == 0)
        splits = o.work.data ? gemm::detail::heuristic_splits(sz.m * sz.batch, sz.n, sz.k, K::tiles.tile_m,
                                                              K::tiles.tile_n, K::tiles.tile_k, device_units())
                             : 1;
      splits = std::max(1, std::min(splits, std::max(1, (sz.k + K::tiles.tile_k - 1) / K::tiles.tile_k)));
      auto p = K::make_params(g, pdy, px, pdw, ep, splits, static_cast<Acc*>(o.work.data));  // wgrad: A = dy, B = x
      const std::size_t need = K::partial_elements(p) * sizeof(Acc);
      pointer_table_of<Kind>(r, pr, a, b, d, o, splits > 1 ? need : 0).check();  // split-K partials: options.work
      launch(s, K::launch_shape_of(p), K{}, p);
      if (splits > 1) {
        using R = gemm::reduce_kernel<typename K::target, Acc, E>;
        typename R::params rp{{sz.m, sz.n, sz.k, sz.batch}, splits, static_cast<const Acc*>(o.work.data),
                              {pdw, row, gemm::layout::row_major, (long long)g.k_group * row}, ep};
        launch(s, R::launch_shape_of(rp), R{}, rp);
      }
    });
  }
}

/// The checks of the entry before the pointers (problem, tensors, dtypes, epilogue operands); names no kernel.
template <kind Kind>
void check_arguments(const roles& r, const problem& pr, const tensor& a, const tensor& b, const tensor& d, const options& o) {
  const char* op = r.op;
  check_problem(op, pr);
  const spatial oe = output_extent(pr);
  // The extents of each role: fprop (x in, w, y out), dgrad (dy out, w, dx in), wgrad (x in, dy out, dw).
  const auto check_filter = [&](const tensor& w, const char* name, strata::dtype want, bool output) {
    if (w.type != want) bad(op, name, std::string("has dtype ") + to_string(w.type) + ", expected " + to_string(want));
    if (!(w.layout == strides{}))
      bad(op, std::string(name) + ".layout", "must be empty: filters are packed K x T x R x S x C/groups (KRSC)");
    (void)output;
  };
  const strata::dtype in_type = a.type;
  // tf32 is fp32 storage: the convolution spells TF32 products as fp32 data plus options.tf32 (as the GEMM).
  for (const auto& [t, name] : {std::pair{&a, r.a}, std::pair{&b, r.b}, std::pair{&d, r.d}})
    if (t->type == strata::dtype::tf32)
      bad(op, name, "has dtype tf32: describe the fp32 data as strata::dtype::fp32 and set options.tf32 = true for TF32 products");
  if (in_type != strata::dtype::fp32 && in_type != strata::dtype::fp16 && in_type != strata::dtype::bf16 && in_type != strata::dtype::int8)
    bad(op, r.a, std::string("has dtype ") + to_string(in_type) + "; convolutions take fp32, fp16, bf16 or int8 inputs");
  if constexpr (Kind == kind::fprop) {
    check_activation(op, a, r.a, in_type, pr.input, pr.n, pr.c, false);
    check_filter(b, r.b, in_type, false);
    check_activation(op, d, r.d, d.type, oe, pr.n, pr.k, true);
  } else if constexpr (Kind == kind::dgrad) {
    check_activation(op, a, r.a, in_type, oe, pr.n, pr.k, false);
    check_filter(b, r.b, in_type, false);
    check_activation(op, d, r.d, d.type, pr.input, pr.n, pr.c, true);
  } else {
    check_activation(op, a, r.a, in_type, pr.input, pr.n, pr.c, false);
    check_activation(op, b, r.b, in_type, oe, pr.n, pr.k, false);
    check_filter(d, r.d, d.type, true);
  }
  // Output dtype per input dtype.
  const strata::dtype out = d.type;
  const bool ok = (in_type == strata::dtype::fp32 && out == strata::dtype::fp32) ||
                  ((in_type == strata::dtype::fp16 || in_type == strata::dtype::bf16) && (out == in_type || out == strata::dtype::fp32)) ||
                  (in_type == strata::dtype::int8 && (out == strata::dtype::int32 || out == strata::dtype::int8));
  if (!ok)
    bad(op, r.d, std::string("dtype combination ") + to_string(in_type) + " -> " + to_string(out) +
                     " is not supported (fp32 -> fp32, fp16 -> fp16|fp32, bf16 -> bf16|fp32, int8 -> int32|int8; docs/conv.md)");
  // Epilogue operands.
  const spatial de = Kind == kind::fprop ? oe : pr.input;
  const int dc = Kind == kind::fprop ? pr.k : pr.c;
  if constexpr (Kind == kind::wgrad) {
    if (o.bias) bad(op, "options.bias", "is not supported by the weight gradient (a bias gradient is a reduction of dy)");
    if (o.act != activation::none) bad(op, "options.act", "is not supported by the weight gradient");
    if (o.residual.data) bad(op, "options.residual", "is not supported by the weight gradient (beta scales dw itself)");
  } else if (o.beta != 0.f) {
    check_activation(op, o.residual, "options.residual", out, de, pr.n, dc, false);
  }
  if (o.split_k < 0) bad(op, "options.split_k", "must be 0 (automatic) or positive");
  // The pointers (null, alignment, overlaps: the output may share no byte with an input, the residual
  // may be the output only exactly) are the pointer table's, checked by run() once the workspace the
  // call uses is known.
}

template <class TA, class TD>
inline constexpr bool supported_pair =
    (std::is_same_v<TA, float> && std::is_same_v<TD, float>) ||
    ((std::is_same_v<TA, f16> || std::is_same_v<TA, bf16>) && (std::is_same_v<TD, TA> || std::is_same_v<TD, float>)) ||
    (std::is_same_v<TA, std::int8_t> && (std::is_same_v<TD, std::int32_t> || std::is_same_v<TD, std::int8_t>));

/// The kernels of the dtype combination the tensors have (after check_arguments).
template <kind Kind>
void run_any(stream& s, const roles& r, const problem& pr, const tensor& a, const tensor& b, const tensor& d, const options& o) {
  const strata::dtype out = d.type;
  switch (a.type) {
    case strata::dtype::fp32: return run<Kind, float, float>(s, r, pr, a, b, d, o);
    case strata::dtype::fp16:
      if (out == strata::dtype::fp16) return run<Kind, f16, f16>(s, r, pr, a, b, d, o);
      return run<Kind, f16, float>(s, r, pr, a, b, d, o);
    case strata::dtype::bf16:
      if (out == strata::dtype::bf16) return run<Kind, bf16, bf16>(s, r, pr, a, b, d, o);
      return run<Kind, bf16, float>(s, r, pr, a, b, d, o);
    case strata::dtype::int8:
      if (out == strata::dtype::int8) return run<Kind, std::int8_t, std::int8_t>(s, r, pr, a, b, d, o);
      return run<Kind, std::int8_t, std::int32_t>(s, r, pr, a, b, d, o);
    default: break;
  }
}

/// Validates, then runs the kind's kernel for the dtype combination: every combination's kernels when
/// TA is gemm::runtime_dtype (read from the tensors), else TA -> TD's only.
template <kind Kind, class TA, class TD>
void entry(stream& s, const roles& r, const problem& pr, const tensor& a, const tensor& b, const tensor& d, const options& o) {
  check_arguments<Kind>(r, pr, a, b, d, o);
  if constexpr (std::is_same_v<TA, gemm::runtime_dtype>) {
    run_any<Kind>(s, r, pr, a, b, d, o);
  } else {
    static_assert(supported_pair<TA, TD>, "strata::conv<TA, TD>: the pairs are float -> float; f16 -> f16 or float; "
                                          "bf16 -> bf16 or float; int8_t -> int32_t or int8_t");
    using gemm::detail::dtype_of;
    using gemm::detail::type_name;
    const std::string typed = std::string("this call is ") + r.op + "<" + type_name<TA> + ", " + type_name<TD> + ">";
    if (a.type != dtype_of<TA>) bad(r.op, r.a, std::string("has dtype ") + to_string(a.type) + ", but " + typed);
    if (d.type != dtype_of<TD>) bad(r.op, r.d, std::string("has dtype ") + to_string(d.type) + ", but " + typed);
    run<Kind, TA, TD>(s, r, pr, a, b, d, o);
  }
}

}  // namespace detail

/// Bytes of workspace a call may use (wgrad split-K partials; 0 for fprop and dgrad): an upper bound
/// over the heuristic, 16 splits (or options.split_k) of 4-byte partials of every group's dw.
inline std::size_t workspace_size(const problem& p, kind k, const options& o = {}) {
  if (k != kind::wgrad) return 0;
  const int splits = o.split_k == 0 ? 16 : std::max(1, o.split_k);
  return splits > 1 ? std::size_t(splits) * std::size_t(p.k) * std::size_t(p.taps()) * std::size_t(p.c_per_group()) * 4 : 0;
}

}  // namespace strata::ops::conv

namespace strata {

// Each entry has a runtime-typed form, strata::conv(s, p, x, w, y), which reads the dtypes from the
// tensors and so compiles every combination's kernels, and a typed form, strata::conv<TA[, TD]>(...),
// which compiles TA -> TD's only (TD defaults to TA, int32 for int8). Both are templates so that
// including the header compiles no kernel (strata::gemm's comment says why).

/// y = act(alpha * conv(x, w) + beta * residual + bias): see strata/ops/conv/host.hpp.
template <class TA = ops::gemm::runtime_dtype, class TD = ops::gemm::detail::natural_output<TA>>
void conv(stream& s, const ops::conv::problem& p, const ops::conv::tensor& x, const ops::conv::tensor& w,
                 const ops::conv::tensor& y, const ops::conv::options& o = {}) {
  ops::conv::detail::entry<ops::conv::kind::fprop, TA, TD>(s, {"strata::conv", ops::conv::kind::fprop, "x", "w", "y"}, p, x, w, y, o);
}

/// dx = act(alpha * conv_transpose(dy, w) + beta * residual + bias): the data gradient of strata::conv,
/// and the transposed convolution of dy.
template <class TA = ops::gemm::runtime_dtype, class TD = ops::gemm::detail::natural_output<TA>>
void conv_backward_data(stream& s, const ops::conv::problem& p, const ops::conv::tensor& dy,
                               const ops::conv::tensor& w, const ops::conv::tensor& dx, const ops::conv::options& o = {}) {
  ops::conv::detail::entry<ops::conv::kind::dgrad, TA, TD>(s, {"strata::conv_backward_data", ops::conv::kind::dgrad, "dy", "w", "dx"},
                                                   p, dy, w, dx, o);
}

/// dw = alpha * dL/dw + beta * dw: the weight gradient of strata::conv (split-K over the pixels).
template <class TA = ops::gemm::runtime_dtype, class TD = ops::gemm::detail::natural_output<TA>>
void conv_backward_weight(stream& s, const ops::conv::problem& p, const ops::conv::tensor& x,
                                 const ops::conv::tensor& dy, const ops::conv::tensor& dw, const ops::conv::options& o = {}) {
  ops::conv::detail::entry<ops::conv::kind::wgrad, TA, TD>(s, {"strata::conv_backward_weight", ops::conv::kind::wgrad, "x", "dy", "dw"},
                                                   p, x, dy, dw, o);
}

}  // namespace strata

// The instances a precompiled kernel library provides (extern under STRATA_PRECOMPILED_ENTRIES).
#include "strata/ops/conv/precompiled.hpp"
