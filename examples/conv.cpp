// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/conv.cpp -- strata::conv (and its two gradients) on the backend of this build (the host
// emulator unless built for CUDA or HIP), with an optional check against the direct double reference.
//
//   conv --n N --h H --w W --c C --k K --r R --s S [--d D --t T] [--stride 1,1] [--pad 1,1]
//        [--pad-end 1,1] [--dilation 1,1] [--groups G] [--dtype fp16|bf16|fp32|tf32|int8]
//        [--pass fprop|dgrad|wgrad|all] [--layout nhwc|nchw] [--epilogue none|bias_relu]
//        [--check] [--bench]
//   conv --resnet50 [--n N] [--dtype ...] [--pass ...] [--check] [--bench]    every ResNet-50 layer
//   conv --unet [--n N] ...                                                  the U-Net 3x3 layers
//
// Spatial lists take one value (every dimension), two (h,w) or three (d,h,w); --pad-end defaults
// to --pad (symmetric). Without --d / --t the convolution is 2D; --h 1 --r 1 makes it 1D. The output
// type is the input's (int32 for int8). With --check the last line is PASS or FAIL: the maximum
// relative error (|out - ref| / max(|ref|, terms / 4, 1)) against the tolerance of the dtype and the
// reduction length (ops/gemm/reference.hpp). Arguments the library rejects are printed with the
// library's message (and FAIL under --check). On the emulator a pass over about 2^31 multiply-adds is
// refused with a message instead of running for many minutes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <strata/conv.hpp>

#include "command_line.hpp"
#include "conv_layers.hpp"
#include "random_inputs.hpp"

namespace sc = strata::ops::conv;

namespace {

constexpr long long max_number = (1LL << 31) - 1;

/// "a", "a,b" (h, w) or "a,b,c" (d, h, w): the flag's value, each at least `lo`.
sc::spatial triple(strata_examples::command_line& cl, long long lo) {
  const std::string v = cl.value();
  std::vector<int> xs;
  std::stringstream in(v);
  std::string item;
  while (std::getline(in, item, ',')) xs.push_back(cl.integer<int>(item, lo, max_number));
  if (xs.size() == 1) return {xs[0], xs[0], xs[0]};
  if (xs.size() == 2) return {1, xs[0], xs[1]};
  if (xs.size() == 3) return {xs[0], xs[1], xs[2]};
  cl.fail(cl.flag() + " takes 1, 2 (h,w) or 3 (d,h,w) comma-separated values, got '" + v + "'");
}

using strata_examples::random_values;

struct settings {
  strata::dtype in = strata::dtype::fp16, out = strata::dtype::fp16;
  bool tf32 = false, nchw = false, bias_relu = false, check = false, bench = false;
};

/// One pass of one problem; returns 0 on success (and PASS under --check), 1 on failure.
template <class TA, class TD>
int run(const sc::problem& p, sc::kind kind, const settings& st, const std::string& label, double& worst_all) {
  strata::stream s;
  const sc::spatial oe = sc::output_extent(p);
  const auto layout = [&](sc::spatial e, int ch) { return st.nchw ? sc::channels_first(e, ch) : sc::channels_last(e, ch); };
  const sc::strides xs = layout(p.input, p.c), ys = layout(oe, p.k);
  const std::size_t nx = std::size_t(p.n) * p.input.d * p.input.h * p.input.w * p.c;
  const std::size_t ny = std::size_t(p.n) * std::max(0, oe.d * oe.h * oe.w) * p.k;
  const std::size_t nw = std::size_t(p.k) * p.taps() * std::max(0, p.c_per_group());
  const auto hx = random_values<TA>(nx, 1), hy = random_values<TA>(ny, 2), hw = random_values<TA>(nw, 3);
  const int out_ch = kind == sc::kind::dgrad ? p.c : p.k;
  const auto hbias = random_values<float>(std::size_t(std::max(out_ch, 1)), 4);
  const std::size_t nout = kind == sc::kind::fprop ? ny : (kind == sc::kind::dgrad ? nx : nw);
  strata::device_buffer<TA> dx(std::max<std::size_t>(nx, 1)), dy(std::max<std::size_t>(ny, 1)), dw(std::max<std::size_t>(nw, 1));
  strata::device_buffer<TD> dout(std::max<std::size_t>(nout, 1));
  strata::device_buffer<float> dbias(hbias.size());
  strata::copy_to_device(s, dx.data(), hx.data(), nx);
  strata::copy_to_device(s, dy.data(), hy.data(), ny);
  strata::copy_to_device(s, dw.data(), hw.data(), nw);
  strata::copy_to_device(s, dbias.data(), hbias.data(), hbias.size());
  const std::vector<TD> poison(nout, TD(-7));
  strata::copy_to_device(s, dout.data(), poison.data(), nout);
  const bool epi = st.bias_relu && kind != sc::kind::wgrad;
  sc::options o{.bias = epi ? dbias.data() : nullptr, .act = epi ? sc::activation::relu : sc::activation::none, .tf32 = st.tf32};
  strata::device_buffer<unsigned char> work(sc::workspace_size(p, kind, o) + 16);
  o.work = {work.data(), work.size()};
  const sc::tensor tx{dx.data(), st.in, xs}, ty{dy.data(), st.in, ys}, tw{dw.data(), st.in, {}};
  const auto call = [&] {
    if (kind == sc::kind::fprop) strata::conv(s, p, tx, tw, {dout.data(), st.out, ys}, o);
    else if (kind == sc::kind::dgrad) strata::conv_backward_data(s, p, ty, tw, {dout.data(), st.out, xs}, o);
    else strata::conv_backward_weight(s, p, tx, ty, {dout.data(), st.out, {}}, o);
  };
  const double macs = double(sc::reference::reduction_length(p, kind)) * double(nout);
  const auto t0 = std::chrono::steady_clock::now();
  call();
  s.synchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-26s %s %s -> %s: %.3f ms, %.3f GFLOP/s\n", label.c_str(), sc::to_string(kind), strata::ops::gemm::to_string(st.in),
              strata::ops::gemm::to_string(st.out), ms, ms > 0 ? 2 * macs / ms / 1e6 : 0.0);
  if (st.bench) {
    const int reps = 3;
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) call();
    s.synchronize();
    const double bms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() / reps;
    std::printf("  bench: %.3f ms per call, %.3f GFLOP/s (%d calls)\n", bms, bms > 0 ? 2 * macs / bms / 1e6 : 0.0, reps);
  }
  if (!st.check) return 0;
  std::vector<TD> got(nout);
  strata::copy_to_host(s, got.data(), dout.data(), nout);
  s.synchronize();
  std::vector<double> ref;
  if (kind == sc::kind::fprop) ref = sc::reference::fprop(p, hx.data(), xs, hw.data());
  else if (kind == sc::kind::dgrad) ref = sc::reference::dgrad(p, hy.data(), ys, hw.data());
  else ref = sc::reference::wgrad(p, hx.data(), xs, hy.data(), ys);
  const int red = sc::reference::reduction_length(p, kind);
  const double tol = strata::ops::gemm::reference::tolerance(red, st.tf32 ? 10 : strata::ops::gemm::reference::mantissa_bits<TD>(), false,
                                                             std::is_integral_v<TD>);
  // The reference is packed channels-last (KRSC for dw); the output is in the chosen layout.
  const sc::spatial e = kind == sc::kind::fprop ? oe : p.input;
  const sc::strides os = kind == sc::kind::fprop ? ys : xs, packed = sc::channels_last(e, out_ch);
  double worst = 0;
  const auto compare = [&](double want, TD v, int ch) {
    if (epi) want = std::max(0.0, want + hbias[ch]);
    if constexpr (std::is_integral_v<TD>) want = std::nearbyint(want);
    const double err = std::abs(sc::reference::to_double(v) - want) / std::max({std::abs(want), red / 4.0, 1.0});
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  };
  if (kind == sc::kind::wgrad) {
    for (std::size_t i = 0; i < nw; ++i) compare(ref[i], got[i], 0);
  } else {
    for (int n = 0; n < p.n; ++n)
      for (int z = 0; z < e.d; ++z)
        for (int h = 0; h < e.h; ++h)
          for (int w = 0; w < e.w; ++w)
            for (int ch = 0; ch < out_ch; ++ch)
              compare(ref[sc::reference::at(packed, n, z, h, w, ch)], got[sc::reference::at(os, n, z, h, w, ch)], ch);
  }
  std::printf("  max relative error %.3g (tolerance %.3g)\n", worst, tol);
  worst_all = std::max(worst_all, worst / tol);
  return worst <= tol ? 0 : 1;
}

int dispatch(const sc::problem& p, sc::kind kind, const settings& st, const std::string& label, double& worst) {
  switch (st.in) {
    case strata::dtype::fp32: return run<float, float>(p, kind, st, label, worst);
    case strata::dtype::fp16: return run<strata::f16, strata::f16>(p, kind, st, label, worst);
    case strata::dtype::bf16: return run<strata::bf16, strata::bf16>(p, kind, st, label, worst);
    case strata::dtype::int8: return run<std::int8_t, std::int32_t>(p, kind, st, label, worst);
    default: return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long n = -1, h = -1, w = -1, c = -1, k = -1, r = -1, s = -1, d = 1, t = 1, groups = 1;
  sc::spatial stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  sc::spatial pad_end{-1, -1, -1};
  std::string dtype = "fp16", pass = "fprop", layout = "nhwc", epilogue = "none", net;
  settings st;
  strata_examples::command_line cl(
      "conv",
      "usage: conv --n N --h H --w W --c C --k K --r R --s S [--d D --t T] [--stride 1,1] [--pad 1,1]\n"
      "            [--pad-end 1,1] [--dilation 1,1] [--groups G] [--dtype fp16|bf16|fp32|tf32|int8]\n"
      "            [--pass fprop|dgrad|wgrad|all] [--layout nhwc|nchw] [--epilogue none|bias_relu] [--check] [--bench]\n"
      "       conv --resnet50|--unet [--n N] [--dtype ...] [--pass ...] [--check] [--bench]",
      argc, argv, strata_examples::usage_shown::after_errors);
  while (cl.next()) {
    if (cl.is("--n")) n = cl.integer(1, max_number);
    else if (cl.is("--h")) h = cl.integer(1, max_number);
    else if (cl.is("--w")) w = cl.integer(1, max_number);
    else if (cl.is("--d")) d = cl.integer(1, max_number);
    else if (cl.is("--c")) c = cl.integer(1, max_number);
    else if (cl.is("--k")) k = cl.integer(1, max_number);
    else if (cl.is("--r")) r = cl.integer(1, max_number);
    else if (cl.is("--s")) s = cl.integer(1, max_number);
    else if (cl.is("--t")) t = cl.integer(1, max_number);
    else if (cl.is("--groups")) groups = cl.integer(1, max_number);
    else if (cl.is("--stride")) stride = triple(cl, 1);
    else if (cl.is("--pad")) pad = triple(cl, 0);
    else if (cl.is("--pad-end")) pad_end = triple(cl, 0);
    else if (cl.is("--dilation")) dilation = triple(cl, 1);
    else if (cl.is("--dtype")) dtype = cl.value();
    else if (cl.is("--pass")) pass = cl.value();
    else if (cl.is("--layout")) layout = cl.value();
    else if (cl.is("--epilogue")) epilogue = cl.value();
    else if (cl.is("--check")) st.check = true;
    else if (cl.is("--bench")) st.bench = true;
    else if (cl.is("--resnet50")) net = "resnet50";
    else if (cl.is("--unet")) net = "unet";
    else cl.unknown();
  }
  using D = strata::dtype;
  std::string why;
  const auto type = strata::try_parse_dtype(dtype, {D::fp32, D::tf32, D::fp16, D::bf16, D::int8}, &why);
  if (!type) cl.fail("--dtype " + why);
  if (*type == D::fp32) st.in = st.out = strata::dtype::fp32;
  else if (*type == D::tf32) st.in = st.out = strata::dtype::fp32, st.tf32 = true;
  else if (*type == D::fp16) st.in = st.out = strata::dtype::fp16;
  else if (*type == D::bf16) st.in = st.out = strata::dtype::bf16;
  else st.in = strata::dtype::int8, st.out = strata::dtype::int32;
  if (layout != "nhwc" && layout != "nchw") cl.fail("--layout must be nhwc or nchw, got '" + layout + "'");
  st.nchw = layout == "nchw";
  if (epilogue != "none" && epilogue != "bias_relu") cl.fail("--epilogue must be none or bias_relu, got '" + epilogue + "'");
  st.bias_relu = epilogue == "bias_relu";
  std::vector<sc::kind> kinds;
  if (pass == "fprop" || pass == "all") kinds.push_back(sc::kind::fprop);
  if (pass == "dgrad" || pass == "all") kinds.push_back(sc::kind::dgrad);
  if (pass == "wgrad" || pass == "all") kinds.push_back(sc::kind::wgrad);
  if (kinds.empty()) cl.fail("--pass must be fprop, dgrad, wgrad or all, got '" + pass + "'");

  std::vector<strata_examples::conv_layer> layers;
  if (!net.empty()) {
    const int batch = n < 0 ? 1 : int(n);
    layers = net == "resnet50" ? strata_examples::resnet50_layers(batch) : strata_examples::unet_layers(batch);
  } else {
    if (n < 0 || h < 0 || w < 0 || c < 0 || k < 0 || r < 0 || s < 0) cl.fail("--n, --h, --w, --c, --k, --r and --s are required");
    sc::problem p{.n = int(n), .c = int(c), .k = int(k), .groups = int(groups), .input = {int(d), int(h), int(w)},
                  .filter = {int(t), int(r), int(s)}, .stride = stride, .pad = pad,
                  .pad_end = pad_end.d < 0 ? pad : pad_end, .dilation = dilation};
    if (d == 1 && t == 1) p.stride.d = 1, p.pad.d = 0, p.pad_end.d = 0, p.dilation.d = 1;  // 2D: depth stays 1
    layers.push_back({"conv", p});
  }

  int failures = 0;
  double worst = 0;
  for (const auto& layer : layers) {
    const sc::problem& p = layer.problem;
    for (const auto kind : kinds) {
      try {
        // Size guards before allocating: the library validates the rest (and names the argument).
        const sc::spatial oe = sc::output_extent(p);
        const double in_el = double(p.n) * p.input.d * p.input.h * p.input.w * p.c;
        const double out_el = double(p.n) * oe.d * oe.h * oe.w * p.k;
        const double w_el = double(p.k) * p.taps() * (p.groups > 0 ? p.c / p.groups : 0);
        if (in_el + out_el + w_el > 4e8) cl.fail("the tensors would need more than ~1.6 GB; choose smaller sizes");
        if (p.groups > 0 && p.c % p.groups == 0 && oe.d > 0 && oe.h > 0 && oe.w > 0) {
          const double macs = out_el * p.taps() * (p.c / p.groups);
#if STRATA_BACKEND_HOST
          if (macs > 2147483648.0)
            cl.fail(layer.name + ": " + std::to_string((long long)macs) +
                    " multiply-adds is too large for the CPU emulator (limit 2^31, a few minutes); choose smaller sizes "
                    "or build for a GPU (-DSTRATA_ENABLE_CUDA=ON / -DSTRATA_ENABLE_HIP=ON)");
#endif
          (void)macs;
        }
        failures += dispatch(p, kind, st, layer.name, worst);
      } catch (const strata::error& e) {
        std::fprintf(stderr, "conv: %s\n", e.what());
        ++failures;
      }
    }
  }
  if (st.check) std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
