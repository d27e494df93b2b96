// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/conv_bench.cpp -- strata's convolution (strata::conv, conv_backward_data,
// conv_backward_weight) against cuDNN in TFLOP/s, same shapes, same run, on a CUDA GPU (CUDA builds
// only: timed with CUDA events).
//
//   strata_bench_conv [--dtype f16|bf16] [--set resnet50|unet|all] [--pass fprop|dgrad|wgrad|all]
//                     [--n N] [--reps R] [--heuristic]
//
// Layers: every distinct convolution of ResNet-50 and the 3x3 convolutions of a 2D U-Net at 256 x 256
// (examples/conv_layers.hpp), at batch --n (default 32). Layout: activations NHWC (x, y, dx, dy),
// filters KRSC (what cuDNN calls an NHWC filter), inputs and outputs in --dtype, fp32 accumulation
// (cuDNN: compute type CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, the legacy cudnn_cnn.h API). cuDNN's
// algorithm is the fastest cudnnFindConvolution*AlgorithmEx measures with a 1 GiB workspace, or with
// --heuristic the first that cudnnGetConvolution*Algorithm_v7 proposes (quicker to start). strata's
// weight gradient gets the workspace its split-K heuristic asks for (ops::conv::workspace_size).
// FLOPs: 2 x (output elements) x (reduction length), the same count for all three passes.
//
// Every layer and pass is also checked: up to 1024 sampled output elements of each library (fewer for
// the weight gradient's long reductions, so the host reference stays near 2^28 multiply-adds) against
// a double-precision sum over the same inputs, max relative error with |ref| floored at sqrt(terms) / 4.
// strata fails above 4 ulps of the output type; cuDNN above 16 (it may pick Winograd or FFT
// algorithms, whose transforms round more). Any failure: WRONG in the table, FAIL last, exit status 1.
// Timing: median of --reps calls, each between two events, after two warm-ups; inputs are random
// (never zeros) and the same for both libraries; outputs are NaN before the first call, so an element
// that no call writes fails the check.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <strata/conv.hpp>

#include "../examples/conv_layers.hpp"

#if !STRATA_BACKEND_CUDA
int main() {
  std::puts("strata_bench_conv: build with the CUDA backend (nvcc) to measure; nothing to do here");
  return 0;
}
#else
#include <cuda_runtime.h>
#include <cudnn.h>

#include "cuda_timing.hpp"

namespace sc = strata::ops::conv;

namespace {

using strata_bench::cuda_ok;
using strata_bench::die;
using strata_bench::median_seconds;

void dnn_ok(cudnnStatus_t st, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS) die(what, cudnnGetErrorString(st));
}

// ---- inputs -------------------------------------------------------------------------------------------

/// Random 16-bit values on the host and the device; every tensor of one role (x, dy, w) is a prefix of
/// its pool, so no layer needs new data and the host can recompute any output element.
struct pool {
  std::vector<std::uint16_t> host;
  strata::device_buffer<std::uint16_t> dev;
};

pool make_pool(strata::stream& s, std::size_t n, std::uint64_t seed, bool bf) {
  pool p{std::vector<std::uint16_t>(n), strata::device_buffer<std::uint16_t>(std::max<std::size_t>(n, 1))};
  std::uint64_t x = (seed + 0x51ED27) * 0xD1B54A32D192ED03ull;
  for (auto& v : p.host) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const float f = float(double(x >> 11) * 0x1.0p-53 * 2.0 - 1.0);  // uniform in [-1, 1)
    v = bf ? strata::bf16(f).bits() : strata::f16(f).bits();
  }
  strata::copy_to_device(s, p.dev.data(), p.host.data(), n);
  s.synchronize();
  return p;
}

/// Every 16-bit pattern as a double: the reference reads its inputs through this table.
std::vector<double> decode_table(bool bf) {
  std::vector<double> t(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = std::uint16_t(b);
    t[b] = bf ? double(float(strata::bf16::from_bits(bits))) : double(float(strata::f16::from_bits(bits)));
  }
  return t;
}

// ---- shapes -------------------------------------------------------------------------------------------

/// Element counts and packed index arithmetic of one problem: x (N, D, H, W, C), dy / y (N, Z, P, Q, K)
/// and w (K, T, R, S, C/G), all packed channels-last.
struct extents {
  sc::problem p;
  sc::spatial o;
  int cg, kg;
  std::size_t nx, ny, nw;

  explicit extents(const sc::problem& pr) : p(pr), o(sc::output_extent(pr)), cg(pr.c_per_group()), kg(pr.k_per_group()) {
    nx = std::size_t(p.n) * p.input.d * p.input.h * p.input.w * p.c;
    ny = std::size_t(p.n) * o.d * o.h * o.w * p.k;
    nw = std::size_t(p.k) * p.taps() * cg;
  }
  std::size_t x_at(int n, int d, int h, int w, int c) const {
    return (((std::size_t(n) * p.input.d + d) * p.input.h + h) * p.input.w + w) * p.c + c;
  }
  std::size_t y_at(int n, int z, int q, int r, int k) const {
    return (((std::size_t(n) * o.d + z) * o.h + q) * o.w + r) * p.k + k;
  }
  std::size_t w_at(int k, int t, int r, int s, int c) const {
    return (((std::size_t(k) * p.filter.d + t) * p.filter.h + r) * p.filter.w + s) * cg + c;
  }
  std::size_t outputs(sc::kind k) const { return k == sc::kind::fprop ? ny : (k == sc::kind::dgrad ? nx : nw); }
  /// Terms of each output's sum (padding included): fprop T R S C/G, dgrad T R S K/G, wgrad N Z P Q.
  double terms(sc::kind k) const {
    if (k == sc::kind::fprop) return double(p.taps()) * cg;
    if (k == sc::kind::dgrad) return double(p.taps()) * kg;
    return double(p.n) * o.d * o.h * o.w;
  }
};

/// "32x56x56x64>256 3x3/1 p1" (N x [D x] H x W x C > K, filter / stride, padding, groups, dilation).
std::string describe(const sc::problem& p) {
  const bool three = p.input.d > 1 || p.filter.d > 1;
  std::string s = std::to_string(p.n) + "x" + (three ? std::to_string(p.input.d) + "x" : "") + std::to_string(p.input.h) +
                  "x" + std::to_string(p.input.w) + "x" + std::to_string(p.c) + ">" + std::to_string(p.k) + " " +
                  (three ? std::to_string(p.filter.d) + "x" : "") + std::to_string(p.filter.h) + "x" +
                  std::to_string(p.filter.w) + "/" + std::to_string(p.stride.h);
  if (p.pad.h || p.pad.w) s += " p" + std::to_string(p.pad.h);
  if (p.groups > 1) s += " g" + std::to_string(p.groups);
  if (p.dilation.h > 1 || p.dilation.w > 1) s += " d" + std::to_string(p.dilation.h);
  return s;
}

// ---- reference ----------------------------------------------------------------------------------------

/// The double-precision value of output element `i` (packed, as extents numbers it) of pass `kind`.
double reference_at(const extents& e, sc::kind kind, std::size_t i, const std::vector<double>& val, const pool& x,
                    const pool& dy, const pool& w) {
  const sc::problem& p = e.p;
  const auto X = [&](std::size_t j) { return val[x.host[j]]; };
  const auto DY = [&](std::size_t j) { return val[dy.host[j]]; };
  const auto W = [&](std::size_t j) { return val[w.host[j]]; };
  double sum = 0;
  if (kind == sc::kind::fprop) {
    // y[n, z, q, r, k] = sum over taps and the group's channels of x * w.
    const int k = int(i % p.k);
    std::size_t pix = i / p.k;
    const int oq = int(pix % e.o.w);
    pix /= e.o.w;
    const int op = int(pix % e.o.h);
    pix /= e.o.h;
    const int oz = int(pix % e.o.d);
    const int n = int(pix / e.o.d);
    const int c0 = (k / e.kg) * e.cg;
    for (int t = 0; t < p.filter.d; ++t)
      for (int r = 0; r < p.filter.h; ++r)
        for (int s = 0; s < p.filter.w; ++s) {
          const int d = oz * p.stride.d - p.pad.d + t * p.dilation.d;
          const int h = op * p.stride.h - p.pad.h + r * p.dilation.h;
          const int ww = oq * p.stride.w - p.pad.w + s * p.dilation.w;
          if (d < 0 || d >= p.input.d || h < 0 || h >= p.input.h || ww < 0 || ww >= p.input.w) continue;
          const std::size_t xb = e.x_at(n, d, h, ww, c0), wb = e.w_at(k, t, r, s, 0);
          for (int c = 0; c < e.cg; ++c) sum += X(xb + c) * W(wb + c);
        }
  } else if (kind == sc::kind::dgrad) {
    // dx[n, d, h, w, c] = sum over every (output pixel, tap) that read x[n, d, h, w, c] of dy * w.
    const int c = int(i % p.c);
    std::size_t pix = i / p.c;
    const int iw = int(pix % p.input.w);
    pix /= p.input.w;
    const int ih = int(pix % p.input.h);
    pix /= p.input.h;
    const int id = int(pix % p.input.d);
    const int n = int(pix / p.input.d);
    const int g = c / e.cg, cc = c - g * e.cg;
    // The output coordinate that reads input coordinate `in` through tap `f`, or -1.
    const auto source = [](int in, int f, int stride, int pad, int dil, int extent) {
      const int v = in + pad - f * dil;
      if (v < 0 || v % stride != 0 || v / stride >= extent) return -1;
      return v / stride;
    };
    for (int t = 0; t < p.filter.d; ++t) {
      const int z = source(id, t, p.stride.d, p.pad.d, p.dilation.d, e.o.d);
      if (z < 0) continue;
      for (int r = 0; r < p.filter.h; ++r) {
        const int q = source(ih, r, p.stride.h, p.pad.h, p.dilation.h, e.o.h);
        if (q < 0) continue;
        for (int s = 0; s < p.filter.w; ++s) {
          const int u = source(iw, s, p.stride.w, p.pad.w, p.dilation.w, e.o.w);
          if (u < 0) continue;
          const std::size_t yb = e.y_at(n, z, q, u, 0);
          for (int k = g * e.kg; k < (g + 1) * e.kg; ++k) sum += DY(yb + k) * W(e.w_at(k, t, r, s, cc));
        }
      }
    }
  } else {
    // dw[k, t, r, s, c] = sum over the batch and the output pixels of dy * the x that tap read.
    const int c = int(i % e.cg);
    std::size_t rest = i / e.cg;
    const int s = int(rest % p.filter.w);
    rest /= p.filter.w;
    const int r = int(rest % p.filter.h);
    rest /= p.filter.h;
    const int t = int(rest % p.filter.d);
    const int k = int(rest / p.filter.d);
    const int cx = (k / e.kg) * e.cg + c;
    for (int n = 0; n < p.n; ++n)
      for (int z = 0; z < e.o.d; ++z) {
        const int d = z * p.stride.d - p.pad.d + t * p.dilation.d;
        if (d < 0 || d >= p.input.d) continue;
        for (int q = 0; q < e.o.h; ++q) {
          const int h = q * p.stride.h - p.pad.h + r * p.dilation.h;
          if (h < 0 || h >= p.input.h) continue;
          for (int u = 0; u < e.o.w; ++u) {
            const int ww = u * p.stride.w - p.pad.w + s * p.dilation.w;
            if (ww < 0 || ww >= p.input.w) continue;
            sum += DY(e.y_at(n, z, q, u, k)) * X(e.x_at(n, d, h, ww, cx));
          }
        }
      }
  }
  return sum;
}

/// The elements to check: the first, the last, and random ones in between (fewer when each is a long
/// sum, so that the reference stays near 2^28 multiply-adds).
std::vector<std::size_t> sample_indices(std::size_t count, double terms, std::uint64_t seed) {
  const int want = int(std::clamp(double(1 << 28) / std::max(terms, 1.0), 64.0, 1024.0));
  std::vector<std::size_t> v{0, count - 1};
  std::uint64_t x = 0x2545F4914F6CDD1Dull ^ (seed * 0x9E3779B97F4A7C15ull);
  while (int(v.size()) < want && v.size() < count) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v.push_back(std::size_t(x % count));
  }
  return v;
}

/// The sampled elements of a device tensor.
std::vector<std::uint16_t> gather(const std::uint16_t* dev, const std::vector<std::size_t>& idx) {
  std::vector<std::uint16_t> got(idx.size());
  for (std::size_t j = 0; j < idx.size(); ++j)
    cuda_ok(cudaMemcpy(&got[j], dev + idx[j], 2, cudaMemcpyDeviceToHost), "copy a sampled element");
  return got;
}

/// Max relative error of the sampled elements against the reference (|ref| floored at sqrt(terms) / 4).
double max_error(const std::vector<std::uint16_t>& got, const std::vector<double>& ref, const std::vector<double>& val,
                 double terms) {
  const double floor = std::sqrt(terms) / 4 + 1e-30;
  double worst = 0;
  for (std::size_t j = 0; j < got.size(); ++j) {
    const double err = std::abs(val[got[j]] - ref[j]) / std::max(std::abs(ref[j]), floor);
    worst = std::isfinite(err) ? std::max(worst, err) : INFINITY;
  }
  return worst;
}

// ---- cuDNN --------------------------------------------------------------------------------------------

/// One problem's cuDNN descriptors (NHWC tensors, NHWC = KRSC filter, cross-correlation, fp32 compute).
struct dnn_conv {
  cudnnTensorDescriptor_t x{}, y{};  // the input side (x, dx) and the output side (y, dy)
  cudnnFilterDescriptor_t w{};
  cudnnConvolutionDescriptor_t conv{};
  std::string why;  // empty when cuDNN can express the problem
  int algo = -1;
  std::size_t work = 0;

  dnn_conv(const extents& e, cudnnDataType_t dt) {
    const sc::problem& p = e.p;
    if (!(p.pad == p.pad_end)) {
      why = "asymmetric padding";
      return;
    }
    dnn_ok(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    dnn_ok(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    dnn_ok(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    dnn_ok(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    // 2D problems as 4D descriptors (cuDNN's fastest kernels are 2D ones), 3D ones as 5D; dimensions
    // are listed N, C, [D,] H, W whatever the memory format.
    const bool three = p.input.d > 1 || p.filter.d > 1 || p.stride.d > 1 || p.pad.d > 0 || p.dilation.d > 1;
    const int nb = three ? 5 : 4, sp = nb - 2, first = three ? 0 : 1;
    int xd[5], yd[5], wd[5], pad[3], stride[3], dil[3], got[5];
    xd[0] = p.n, xd[1] = p.c, yd[0] = p.n, yd[1] = p.k, wd[0] = p.k, wd[1] = e.cg;
    for (int i = 0; i < sp; ++i) {
      const int a = first + i;  // the spatial axis: 0 d, 1 h, 2 w
      xd[2 + i] = p.input[a], yd[2 + i] = e.o[a], wd[2 + i] = p.filter[a];
      pad[i] = a == 0 ? p.pad.d : (a == 1 ? p.pad.h : p.pad.w);
      stride[i] = p.stride[a], dil[i] = p.dilation[a];
    }
    const auto fail = [&](cudnnStatus_t st, const char* what) {
      if (st == CUDNN_STATUS_SUCCESS) return false;
      why = std::string(what) + ": " + cudnnGetErrorString(st);
      return true;
    };
    if (fail(cudnnSetTensorNdDescriptorEx(x, CUDNN_TENSOR_NHWC, dt, nb, xd), "x descriptor") ||
        fail(cudnnSetTensorNdDescriptorEx(y, CUDNN_TENSOR_NHWC, dt, nb, yd), "y descriptor") ||
        fail(cudnnSetFilterNdDescriptor(w, dt, CUDNN_TENSOR_NHWC, nb, wd), "filter descriptor") ||
        fail(cudnnSetConvolutionNdDescriptor(conv, sp, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "convolution descriptor") ||
        fail(cudnnSetConvolutionGroupCount(conv, p.groups), "group count") ||
        fail(cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH), "math type") ||
        fail(cudnnGetConvolutionNdForwardOutputDim(conv, x, w, nb, got), "output extent"))
      return;
    if (!std::equal(yd, yd + nb, got)) why = "cuDNN computes a different output extent";
  }
  ~dnn_conv() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
  dnn_conv(const dnn_conv&) = delete;
  dnn_conv& operator=(const dnn_conv&) = delete;

  /// The first algorithm of a ranked list that ran (Find) or is supported (Get_v7) within `limit`
  /// bytes of workspace; adopts the math type it was ranked with.
  template <class Perf>
  bool adopt(const Perf* perf, int count, std::size_t limit) {
    for (int i = 0; i < count; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
        algo = int(perf[i].algo);
        work = perf[i].memory;
        cudnnSetConvolutionMathType(conv, perf[i].mathType);
        return true;
      }
    why = "no algorithm";
    return false;
  }

  /// Picks the algorithm for `kind`: measured (Find...Ex, which writes `out`) or by heuristic.
  bool choose(cudnnHandle_t h, sc::kind kind, bool heuristic, const void* in_a, const void* in_b, void* out, void* ws,
              std::size_t ws_bytes) {
    int n = 0;
    cudnnStatus_t st;
    if (kind == sc::kind::fprop) {
      cudnnConvolutionFwdAlgoPerf_t perf[16];
      st = heuristic ? cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 16, &n, perf)
                     : cudnnFindConvolutionForwardAlgorithmEx(h, x, in_a, w, in_b, conv, y, out, 16, &n, perf, ws, ws_bytes);
      if (st == CUDNN_STATUS_SUCCESS) return adopt(perf, n, ws_bytes);
    } else if (kind == sc::kind::dgrad) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[16];
      st = heuristic ? cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, y, conv, x, 16, &n, perf)
                     : cudnnFindConvolutionBackwardDataAlgorithmEx(h, w, in_b, y, in_a, conv, x, out, 16, &n, perf, ws, ws_bytes);
      if (st == CUDNN_STATUS_SUCCESS) return adopt(perf, n, ws_bytes);
    } else {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[16];
      st = heuristic ? cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, y, conv, w, 16, &n, perf)
                     : cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x, in_a, y, in_b, conv, w, out, 16, &n, perf, ws, ws_bytes);
      if (st == CUDNN_STATUS_SUCCESS) return adopt(perf, n, ws_bytes);
    }
    why = std::string("algorithm search: ") + cudnnGetErrorString(st);
    return false;
  }

  /// fprop: in_a = x, in_b = w, out = y. dgrad: in_a = dy, in_b = w, out = dx. wgrad: in_a = x,
  /// in_b = dy, out = dw.
  cudnnStatus_t run(cudnnHandle_t h, sc::kind kind, const void* in_a, const void* in_b, void* out, void* ws) const {
    const float one = 1.f, zero = 0.f;
    if (kind == sc::kind::fprop)
      return cudnnConvolutionForward(h, &one, x, in_a, w, in_b, conv, cudnnConvolutionFwdAlgo_t(algo), ws, work, &zero, y, out);
    if (kind == sc::kind::dgrad)
      return cudnnConvolutionBackwardData(h, &one, w, in_b, y, in_a, conv, cudnnConvolutionBwdDataAlgo_t(algo), ws, work,
                                          &zero, x, out);
    return cudnnConvolutionBackwardFilter(h, &one, x, in_a, y, in_b, conv, cudnnConvolutionBwdFilterAlgo_t(algo), ws, work,
                                          &zero, w, out);
  }
};

// ---- command line -------------------------------------------------------------------------------------

struct args {
  std::string set = "all", pass = "all";
  bool bf = false, heuristic = false;
  int n = 32, reps = 20;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("usage", (f + " needs a value").c_str());
      return argv[++i];
    };
    auto num = [&](long hi) {
      const std::string v = next();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || x < 1 || x > hi)
        die("usage", (f + " must be an integer in 1.." + std::to_string(hi) + ", got '" + v + "'").c_str());
      return int(x);
    };
    if (f == "--set") a.set = next();
    else if (f == "--pass") a.pass = next();
    else if (f == "--dtype") {
      std::string why;
      const auto t = strata::try_parse_dtype(next(), {strata::dtype::bf16, strata::dtype::fp16}, &why);
      if (!t) die("usage", ("--dtype " + why).c_str());
      a.bf = *t == strata::dtype::bf16;
    } else if (f == "--n") a.n = num(4096);
    else if (f == "--reps") a.reps = num(1 << 20);
    else if (f == "--heuristic") a.heuristic = true;
    else die("usage", ("unknown argument " + f + " (strata_bench_conv [--dtype f16|bf16] [--set resnet50|unet|all] "
                       "[--pass fprop|dgrad|wgrad|all] [--n N] [--reps R] [--heuristic])").c_str());
  }
  if (a.set != "all" && a.set != "resnet50" && a.set != "unet")
    die("usage", ("--set must be resnet50, unet or all, got '" + a.set + "'").c_str());
  if (a.pass != "all" && a.pass != "fprop" && a.pass != "dgrad" && a.pass != "wgrad")
    die("usage", ("--pass must be fprop, dgrad, wgrad or all, got '" + a.pass + "'").c_str());
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  strata_bench::program = "strata_bench_conv";
  const args a = parse(argc, argv);
  std::vector<strata_examples::conv_layer> layers;
  if (a.set == "all" || a.set == "resnet50")
    for (auto& l : strata_examples::resnet50_layers(a.n)) layers.push_back({"resnet50 " + l.name, l.problem});
  if (a.set == "all" || a.set == "unet")
    for (auto& l : strata_examples::unet_layers(a.n)) layers.push_back({"unet " + l.name, l.problem});
  std::vector<sc::kind> kinds;
  for (const auto k : {sc::kind::fprop, sc::kind::dgrad, sc::kind::wgrad})
    if (a.pass == "all" || a.pass == sc::to_string(k)) kinds.push_back(k);

  std::size_t max_x = 1, max_y = 1, max_w = 1, max_out = 1;
  for (const auto& l : layers) {
    const extents e(l.problem);
    max_x = std::max(max_x, e.nx), max_y = std::max(max_y, e.ny), max_w = std::max(max_w, e.nw);
    for (const auto k : kinds) max_out = std::max(max_out, e.outputs(k));
  }
  const bool bf = a.bf;
  const auto dt = bf ? strata::dtype::bf16 : strata::dtype::fp16;
  const cudnnDataType_t ddt = bf ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  strata::stream s;
  const cudaStream_t st = s.native_handle();
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; cuDNN %zu; dtype %s, NHWC activations, KRSC filters, fp32 accumulation; batch %d; "
              "cuDNN algorithm %s; median of %d calls\n\n",
              prop.name, prop.multiProcessorCount, cudnnGetVersion(), bf ? "bf16" : "f16", a.n,
              a.heuristic ? "by heuristic (Get_v7)" : "measured (FindEx)", a.reps);
  const pool px = make_pool(s, max_x, 1, bf), pdy = make_pool(s, max_y, 2, bf), pw = make_pool(s, max_w, 3, bf);
  const std::vector<double> val = decode_table(bf);
  std::fprintf(stderr, "inputs ready: %zu + %zu + %zu random values\n", max_x, max_y, max_w);
  strata::device_buffer<std::uint16_t> out_strata(max_out), out_dnn(max_out);
  const std::size_t dnn_ws_bytes = std::size_t(1) << 30;
  strata::device_buffer<unsigned char> dnn_ws(dnn_ws_bytes);
  cudnnHandle_t h{};
  dnn_ok(cudnnCreate(&h), "cudnnCreate");
  dnn_ok(cudnnSetStream(h, st), "cudnnSetStream");

  const double ulp = bf ? 0x1.0p-7 : 0x1.0p-10;  // output rounding (fp32 accumulation adds little)
  const double tol_strata = 4 * ulp, tol_dnn = 16 * ulp;
  int failures = 0;
  std::printf("| layer | pass | shape | strata ms | strata TFLOP/s | cuDNN ms | cuDNN TFLOP/s | strata/cuDNN | strata max err | "
              "cuDNN max err | |\n");
  std::printf("|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (const auto& l : layers) {
    const extents e(l.problem);
    const sc::problem& p = e.p;
    for (const auto kind : kinds) {
      const std::size_t nout = e.outputs(kind);
      const double terms = e.terms(kind);
      const double flops = 2.0 * double(nout) * terms;
      // Inputs and output of the pass: fprop (x, w) -> y, dgrad (dy, w) -> dx, wgrad (x, dy) -> dw.
      const void* in_a = kind == sc::kind::dgrad ? static_cast<const void*>(pdy.dev.data()) : px.dev.data();
      const void* in_b = kind == sc::kind::wgrad ? static_cast<const void*>(pdy.dev.data()) : pw.dev.data();
      cuda_ok(cudaMemsetAsync(out_strata.data(), 0xff, nout * 2, st), "poison");  // NaN in f16 and bf16
      cuda_ok(cudaMemsetAsync(out_dnn.data(), 0xff, nout * 2, st), "poison");
      const auto idx = sample_indices(nout, terms, std::uint64_t(nout) * 3 + int(kind));
      std::vector<double> ref(idx.size());
      for (std::size_t j = 0; j < idx.size(); ++j) ref[j] = reference_at(e, kind, idx[j], val, px, pdy, pw);

      // strata
      sc::options o;
      const std::size_t wbytes = sc::workspace_size(p, kind, o);
      strata::device_buffer<unsigned char> work(std::max<std::size_t>(wbytes, 1));
      if (wbytes > 0) o.work = {work.data(), wbytes};
      const sc::tensor tx{px.dev.data(), dt, sc::channels_last(p.input, p.c)}, ty{pdy.dev.data(), dt, sc::channels_last(e.o, p.k)},
          tw{pw.dev.data(), dt, {}};
      double t_s = 0, e_s = INFINITY;
      std::string note;
      try {
        t_s = median_seconds(st, a.reps, [&] {
          if (kind == sc::kind::fprop) strata::conv(s, p, tx, tw, {out_strata.data(), dt, sc::channels_last(e.o, p.k)}, o);
          else if (kind == sc::kind::dgrad)
            strata::conv_backward_data(s, p, ty, tw, {out_strata.data(), dt, sc::channels_last(p.input, p.c)}, o);
          else strata::conv_backward_weight(s, p, tx, ty, {out_strata.data(), dt, {}}, o);
        });
        e_s = max_error(gather(out_strata.data(), idx), ref, val, terms);
      } catch (const std::exception& ex) {
        note = std::string("strata: ") + ex.what();
      }

      // cuDNN
      double t_c = 0, e_c = 0;
      dnn_conv dc(e, ddt);
      if (dc.why.empty() && dc.choose(h, kind, a.heuristic, in_a, in_b, out_dnn.data(), dnn_ws.data(), dnn_ws_bytes)) {
        cuda_ok(cudaStreamSynchronize(st), "cuDNN algorithm search");
        cuda_ok(cudaMemsetAsync(out_dnn.data(), 0xff, nout * 2, st), "poison");  // FindEx wrote it
        cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
        t_c = median_seconds(st, a.reps, [&] {
          const cudnnStatus_t r = dc.run(h, kind, in_a, in_b, out_dnn.data(), dnn_ws.data());
          if (r != CUDNN_STATUS_SUCCESS) status = r;
        });
        if (status != CUDNN_STATUS_SUCCESS) {
          t_c = 0;
          dc.why = cudnnGetErrorString(status);
        } else {
          e_c = max_error(gather(out_dnn.data(), idx), ref, val, terms);
        }
      }
      if (!dc.why.empty()) note += (note.empty() ? "" : "; ") + std::string("cuDNN: ") + dc.why;

      const bool ok_s = e_s <= tol_strata, ok_c = !(t_c > 0) || e_c <= tol_dnn;
      failures += !ok_s + !ok_c;
      std::string verdict = ok_s ? "" : "WRONG";
      if (!ok_c) verdict += verdict.empty() ? "cuDNN WRONG" : ", cuDNN WRONG";
      if (!note.empty()) verdict += (verdict.empty() ? "" : "; ") + note;
      char dnn_ms[32] = "n/a", dnn_tf[32] = "n/a", ratio[32] = "n/a", dnn_err[32] = "n/a";
      if (t_c > 0) {
        std::snprintf(dnn_ms, sizeof dnn_ms, "%.4f", t_c * 1e3);
        std::snprintf(dnn_tf, sizeof dnn_tf, "%.1f", flops / t_c / 1e12);
        std::snprintf(dnn_err, sizeof dnn_err, "%.2e", e_c);
        if (t_s > 0) std::snprintf(ratio, sizeof ratio, "%.2f", t_c / t_s);
      }
      std::printf("| %s | %s | %s | %.4f | %.1f | %s | %s | %s | %.2e | %s | %s |\n", l.name.c_str(), sc::to_string(kind),
                  describe(p).c_str(), t_s * 1e3, t_s > 0 ? flops / t_s / 1e12 : 0.0, dnn_ms, dnn_tf, ratio, e_s, dnn_err,
                  verdict.c_str());
      std::fflush(stdout);
    }
  }
  cudnnDestroy(h);
  std::printf("\n%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
#endif
