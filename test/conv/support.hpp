// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/conv/support.hpp -- one checker for every convolution test: random inputs (never zero), the
// output poisoned (or holding the residual / the previous dw when beta != 0, read in place), guard
// elements after it and in the gaps of strided layouts that must come back untouched; the result
// against ops/conv/reference.hpp in double, within a tolerance that follows the data types.
//
// A launcher runs the convolution: the host entry (entry_launcher) or one kernel instantiation on
// the emulator (kernel_launcher<K>), both with the host entry's epilogue, so that every
// configuration is checked by the same code.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../gemm/support.hpp"
#include "strata/conv.hpp"

namespace strata_test::conv {

namespace sc = strata::ops::conv;
using strata_test::gemm::as_double;
using strata_test::gemm::mantissa_bits;
using strata_test::gemm::random_values;

struct case_t {
  sc::problem pr;
  bool nchw = false;     // activations channels-first (element-wise gathers, strided stores)
  int pixel_pad = 0;     // channels-last with pixel stride C + pixel_pad: gaps that must stay untouched
  float alpha = 1.f, beta = 0.f;
  bool bias = false;
  sc::activation act = sc::activation::none;
  int split_k = 1;       // wgrad
  std::uint64_t seed = 1;
};

inline std::string str(const sc::spatial& s) {
  return std::to_string(s.d) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}
inline std::string describe(sc::kind k, const case_t& c) {
  const auto& p = c.pr;
  return std::string(sc::to_string(k)) + " n " + std::to_string(p.n) + " c " + std::to_string(p.c) + " k " +
         std::to_string(p.k) + " g " + std::to_string(p.groups) + " in " + str(p.input) + " filter " + str(p.filter) +
         " stride " + str(p.stride) + " pad " + str(p.pad) + "/" + str(p.pad_end) + " dil " + str(p.dilation) +
         (c.nchw ? " nchw" : "") + " pixel_pad " + std::to_string(c.pixel_pad) + " alpha " + std::to_string(c.alpha) +
         " beta " + std::to_string(c.beta) + (c.bias ? " bias" : "") + " act " + std::to_string(int(c.act)) +
         " split_k " + std::to_string(c.split_k) + " seed " + std::to_string(c.seed);
}

/// The strides the case gives an activation of extent e with `ch` channels.
inline sc::strides layout_of(const case_t& c, sc::spatial e, int ch) {
  if (c.nchw) return sc::channels_first(e, ch);
  const long long px = ch + c.pixel_pad;
  return {(long long)e.d * e.h * e.w * px, (long long)e.h * e.w * px, (long long)e.w * px, px, 1};
}
/// Elements a tensor with strides s spans.
inline std::size_t span_of(sc::strides s, sc::spatial e, int n, int ch) {
  return std::size_t((n - 1) * s.n + (e.d - 1) * s.d + (e.h - 1) * s.h + (e.w - 1) * s.w + (ch - 1) * s.c + 1);
}

template <class T>
T poison() {
  if constexpr (std::is_integral_v<T>) return T(0x5A);
  else return T(std::numeric_limits<float>::quiet_NaN());
}

inline double activate(double v, sc::activation a) {
  switch (a) {
    case sc::activation::none: return v;
    case sc::activation::relu: return v < 0 ? 0 : v;
    case sc::activation::silu: return v / (1 + std::exp(-v));
    case sc::activation::gelu_tanh: return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case sc::activation::sigmoid: return 1 / (1 + std::exp(-v));
  }
  return v;
}

/// Launches through the host entry.
struct entry_launcher {
  void operator()(strata::stream& s, sc::kind k, const sc::problem& p, const sc::tensor& a, const sc::tensor& b,
                  const sc::tensor& d, const sc::options& o) const {
    if (k == sc::kind::fprop) strata::conv(s, p, a, b, d, o);
    else if (k == sc::kind::dgrad) strata::conv_backward_data(s, p, a, b, d, o);
    else strata::conv_backward_weight(s, p, a, b, d, o);
  }
};

/// Launches through the typed host entries, strata::conv<TA, TD> and the two backward passes.
template <class TA, class TD>
struct typed_entry_launcher {
  void operator()(strata::stream& s, sc::kind k, const sc::problem& p, const sc::tensor& a, const sc::tensor& b,
                  const sc::tensor& d, const sc::options& o) const {
    if (k == sc::kind::fprop) strata::conv<TA, TD>(s, p, a, b, d, o);
    else if (k == sc::kind::dgrad) strata::conv_backward_data<TA, TD>(s, p, a, b, d, o);
    else strata::conv_backward_weight<TA, TD>(s, p, a, b, d, o);
  }
};

/// Launches fprop or dgrad through the 1x1 GEMM path of platform P (sc::detail::run_one_by_one: P's
/// GEMM configurations, the tiles compiled for the pass's pair of operand orders), run here on the
/// emulator as P's targets. The case must be a 1x1 pass.
template <class P, class TA, class TD>
struct one_by_one_launcher {
  void operator()(strata::stream& s, sc::kind k, const sc::problem& p, const sc::tensor& a, const sc::tensor& b,
                  const sc::tensor& d, const sc::options& o) const {
    REQUIRE(k != sc::kind::wgrad);
    const bool ran = k == sc::kind::fprop ? sc::detail::run_one_by_one<P, sc::kind::fprop, TA, TD>(s, p, a, b, d, o)
                                          : sc::detail::run_one_by_one<P, sc::kind::dgrad, TA, TD>(s, p, a, b, d, o);
    REQUIRE(ran);
    s.synchronize();
  }
};

/// Launches one kernel instantiation K (its epilogue must be the entry's: entry_epilogue<TD> for
/// fprop and dgrad, wgrad_epilogue<TD> for wgrad), split-K through gemm::reduce_kernel.
template <class K>
struct kernel_launcher {
  void operator()(strata::stream& s, sc::kind k, const sc::problem& p, const sc::tensor& a, const sc::tensor& b,
                  const sc::tensor& d, const sc::options& o) const {
    REQUIRE(k == K::conv_kind);
    using TA = typename K::ta;
    using TD = typename K::td;
    using E = typename K::epilogue_type;
    const sc::spatial oe = sc::output_extent(p);
    const sc::tensor& in_t = k == sc::kind::dgrad ? d : a;
    const sc::tensor& out_t = k == sc::kind::fprop ? d : (k == sc::kind::dgrad ? a : b);
    const auto ins = sc::detail::strides_of(in_t, p.input, p.c), outs = sc::detail::strides_of(out_t, oe, p.k);
    const sc::geometry g = sc::make_geometry(p, ins, outs);
    typename E::params ep;
    if constexpr (K::conv_kind == sc::kind::wgrad)
      ep = E::make_params({.alpha = o.alpha, .beta = o.beta, .c = strata::epilogue::row_major(static_cast<const TD*>(d.data), g.filter_row())}, {});
    else
      ep = sc::detail::entry_params<TD>(o, k == sc::kind::fprop ? outs : ins, k == sc::kind::fprop ? oe : p.input,
                                        k == sc::kind::fprop ? p.k : p.c);
    using Acc = typename K::acc_type;
    // The kernel's operands by GEMM role: wgrad's A is dy, its B is x (the entry's order is x, dy).
    const bool swap = k == sc::kind::wgrad;
    const TA* pa = static_cast<const TA*>((swap ? b : a).data);
    const TA* pb = static_cast<const TA*>((swap ? a : b).data);
    TD* pd = static_cast<TD*>(const_cast<void*>(d.data));
    auto probe = K::make_params(g, pa, pb, pd, ep, o.split_k);
    strata::device_buffer<Acc> work(std::max<std::size_t>(1, K::partial_elements(probe)));
    auto pp = K::make_params(g, pa, pb, pd, ep, o.split_k, work.data());
    strata::launch(s, K::launch_shape_of(pp), K{}, pp);
    if (pp.splits > 1) {
      using R = strata::ops::gemm::reduce_kernel<typename K::target, Acc, E>;
      typename R::params rp{pp.size, pp.splits, work.data(),
                            {pp.d, g.filter_row(), strata::ops::gemm::layout::row_major, (long long)g.k_group * g.filter_row()}, ep};
      strata::launch(s, R::launch_shape_of(rp), R{}, rp);
    }
    s.synchronize();
  }
};

/// Runs kind k of case c through `launch` and checks every output element, the gaps and the guard.
/// Returns the worst relative error.
template <class TA, class TD, class Launch>
double check(sc::kind k, const case_t& c, Launch&& launch, bool tf32 = false) {
  INFO(describe(k, c));
  const auto& p = c.pr;
  strata::stream s;
  const sc::spatial oe = sc::output_extent(p);
  const sc::strides xs = layout_of(c, p.input, p.c), ys = layout_of(c, oe, p.k);
  const std::size_t nx = span_of(xs, p.input, p.n, p.c), ny = span_of(ys, oe, p.n, p.k);
  const std::size_t nw = std::size_t(p.k) * p.taps() * p.c_per_group();
  // Inputs: the side that is read gets random values everywhere (gaps too: a kernel reading a gap
  // would then produce a wrong sum, not a lucky zero).
  const auto hx = random_values<TA>(nx, c.seed), hy = random_values<TA>(ny, c.seed + 1);
  const auto hw = random_values<TA>(nw, c.seed + 2);
  const auto hbias = random_values<float>(std::size_t(k == sc::kind::dgrad ? p.c : p.k), c.seed + 3);

  // The output: its extent, strides and elements.
  const bool filter_out = k == sc::kind::wgrad;
  const sc::strides os = k == sc::kind::fprop ? ys : xs;
  const sc::spatial oext = k == sc::kind::fprop ? oe : p.input;
  const int och = k == sc::kind::fprop ? p.k : p.c;
  const std::size_t nout = filter_out ? nw : span_of(os, oext, p.n, och);
  constexpr std::size_t guard = 67;
  // Initial output: random when beta != 0 (the residual, or dw accumulated into), else poison; the
  // gaps and the guard hold known values that must survive.
  std::vector<TD> hd0 = c.beta != 0.f ? random_values<TD>(nout + guard, c.seed + 4) : std::vector<TD>(nout + guard, poison<TD>());
  for (std::size_t i = nout; i < nout + guard; ++i) hd0[i] = poison<TD>();

  auto dx = strata_test::to_device(s, hx);
  auto dy = strata_test::to_device(s, hy);
  auto dw = strata_test::to_device(s, hw);
  auto dbias = strata_test::to_device(s, hbias);
  auto dd = strata_test::to_device(s, hd0);

  const auto dt = [](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) return strata::dtype::fp32;
    else if constexpr (std::is_same_v<T, strata::f16>) return strata::dtype::fp16;
    else if constexpr (std::is_same_v<T, strata::bf16>) return strata::dtype::bf16;
    else if constexpr (std::is_same_v<T, std::int8_t>) return strata::dtype::int8;
    else return strata::dtype::int32;
  };
  const strata::dtype ta = dt(TA{}), td = dt(TD{});
  const sc::tensor tx{dx.data(), ta, xs}, ty{dy.data(), ta, ys}, tw{dw.data(), ta, {}};
  sc::options o{.alpha = c.alpha, .beta = c.beta, .act = c.act, .tf32 = tf32, .split_k = c.split_k};
  if (c.bias) o.bias = dbias.data();
  sc::tensor tout{dd.data(), td, filter_out ? sc::strides{} : os};
  if (c.beta != 0.f && !filter_out) o.residual = tout;  // the residual is the output itself (read in place)
  strata::device_buffer<std::uint8_t> work(sc::workspace_size(p, k, o) + 16);
  o.work = {work.data(), work.size()};
  if (k == sc::kind::fprop) launch(s, k, p, tx, tw, tout, o);
  else if (k == sc::kind::dgrad) launch(s, k, p, ty, tw, tout, o);
  else launch(s, k, p, tx, ty, tout, o);
  const auto out = strata_test::to_host(s, dd);

  std::vector<double> ref;
  if (k == sc::kind::fprop) ref = sc::reference::fprop(p, hx.data(), xs, hw.data());
  else if (k == sc::kind::dgrad) ref = sc::reference::dgrad(p, hy.data(), ys, hw.data());
  else ref = sc::reference::wgrad(p, hx.data(), xs, hy.data(), ys);

  const int red = sc::reference::reduction_length(p, k);
  const bool integer = std::is_integral_v<TD>;
  const double tol = strata::ops::gemm::reference::tolerance(red, mantissa_bits<TD>(), tf32, integer);
  std::vector<char> covered(nout, 0);
  double worst = 0;
  const auto compare = [&](std::size_t at, double acc, int channel, const char* where) {
    covered[at] = 1;
    double want = c.alpha * acc;
    if (c.beta != 0.f) want += c.beta * as_double(hd0[at]);
    if (c.bias) want += hbias[channel];
    want = activate(want, c.act);
    if constexpr (std::is_integral_v<TD>) {
      want = std::nearbyint(want);
      want = std::min<double>(std::max<double>(want, std::numeric_limits<TD>::min()), std::numeric_limits<TD>::max());
    }
    const double got = as_double(out[at]);
    const double scale = std::max({std::abs(want), std::abs(c.alpha) * std::max(1, red) * 0.25, 1.0});
    const double err = std::abs(got - want) / scale;
    if (!(err <= tol)) {
      INFO(where << " element " << at << " = " << got << ", want " << want << " (tolerance " << tol << ")");
      REQUIRE(err <= tol);
    }
    worst = std::max(worst, err);
  };
  if (filter_out) {
    for (std::size_t i = 0; i < nw; ++i) compare(i, ref[i], 0, "dw");
  } else {
    const sc::strides packed = sc::channels_last(oext, och);
    for (int n = 0; n < p.n; ++n)
      for (int z = 0; z < oext.d; ++z)
        for (int h = 0; h < oext.h; ++h)
          for (int w = 0; w < oext.w; ++w)
            for (int ch = 0; ch < och; ++ch)
              compare(std::size_t(sc::reference::at(os, n, z, h, w, ch)), ref[sc::reference::at(packed, n, z, h, w, ch)], ch,
                      k == sc::kind::fprop ? "y" : "dx");
  }
  // Gaps of the layout and the guard after it: untouched.
  for (std::size_t i = 0; i < nout + guard; ++i)
    if (i >= nout || !covered[i]) {
      const bool same = as_double(out[i]) == as_double(hd0[i]) || (std::isnan(as_double(out[i])) && std::isnan(as_double(hd0[i])));
      if (!same) {
        INFO("element " << i << " outside the output tensor was written: " << as_double(out[i]));
        REQUIRE(same);
      }
    }
  REQUIRE(worst <= tol);
  return worst;
}

/// fprop and dgrad of case c through platform P's 1x1 GEMM path (one_by_one_launcher).
template <class P, class TA, class TD>
void check_one_by_one(const case_t& c) {
  check<TA, TD>(sc::kind::fprop, c, one_by_one_launcher<P, TA, TD>{});
  check<TA, TD>(sc::kind::dgrad, c, one_by_one_launcher<P, TA, TD>{});
}

}  // namespace strata_test::conv
