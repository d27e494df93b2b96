// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host entries strata::conv, conv_backward_data and conv_backward_weight on the emulator (FMA
// configurations): every dtype combination, 1D / 2D / 3D, stride, asymmetric padding, dilation,
// groups, depthwise, the 1x1 fast path, NCHW and padded channels-last layouts, fused epilogues,
// split-K for wgrad. Every case runs all three kinds unless it says otherwise.
#include "support.hpp"

using namespace strata_test::conv;
using strata::bf16;
using strata::f16;
using act = sc::activation;

namespace {
const entry_launcher entry{};
constexpr sc::kind all_kinds[] = {sc::kind::fprop, sc::kind::dgrad, sc::kind::wgrad};

sc::problem p2d(int n, int h, int w, int c, int k, int r, int s) {
  return {.n = n, .c = c, .k = k, .input = {1, h, w}, .filter = {1, r, s}};
}

template <class TA, class TD>
void all(case_t c) {
  for (auto k : all_kinds) {
    case_t ck = c;
    if (k == sc::kind::wgrad) {  // the weight gradient has no bias or activation
      ck.bias = false;
      ck.act = act::none;
    }
    check<TA, TD>(k, ck, entry);
  }
}
}  // namespace

TEST_CASE("conv entry: 2D 3x3 with padding, f32", "[conv]") {
  sc::problem p = p2d(2, 7, 9, 5, 6, 3, 3);
  p.pad = p.pad_end = {0, 1, 1};
  all<float, float>({.pr = p, .seed = 11});
  all<float, float>({.pr = p, .alpha = -0.5f, .beta = 0.75f, .bias = true, .act = act::relu, .seed = 12});
}

TEST_CASE("conv typed entries: strata::conv<TA, TD> and the backward passes compile and run one pair", "[conv]") {
  sc::problem p = p2d(2, 6, 5, 3, 4, 3, 2);
  p.pad = p.pad_end = {0, 1, 0};
  for (auto k : all_kinds) {
    check<bf16, float>(k, {.pr = p, .seed = 15}, typed_entry_launcher<bf16, float>{});
    check<std::int8_t, std::int32_t>(k, {.pr = p, .seed = 16}, typed_entry_launcher<std::int8_t, std::int32_t>{});
  }
  // A tensor of another dtype names the argument and the call.
  strata::stream s;
  strata::device_buffer<bf16> x(2 * 6 * 5 * 3), w(4 * 3 * 2 * 3), y(2 * 6 * 4 * 4);
  const sc::tensor tx{x.data(), strata::dtype::bf16}, tw{w.data(), strata::dtype::bf16}, ty{y.data(), strata::dtype::bf16};
  CHECK_THROWS_WITH(strata::conv<f16>(s, p, tx, tw, ty),
                    Catch::Matchers::Contains("strata::conv: argument 'x' has dtype bf16, but this call is strata::conv<f16, f16>"));
  CHECK_THROWS_WITH((strata::conv_backward_data<bf16, float>(s, p, ty, tw, tx)),
                    Catch::Matchers::Contains("argument 'dx' has dtype bf16, but this call is strata::conv_backward_data<bf16, float>"));
}

TEST_CASE("conv entry: 1D, stride 2, asymmetric padding, dilation 2, f16 -> f16", "[conv]") {
  const sc::problem p{.n = 3, .c = 4, .k = 7, .input = {1, 1, 17}, .filter = {1, 1, 4}, .stride = {1, 1, 2},
                      .pad = {0, 0, 1}, .pad_end = {0, 0, 2}, .dilation = {1, 1, 2}};
  all<f16, f16>({.pr = p, .bias = true, .act = act::gelu_tanh, .seed = 21});
}

TEST_CASE("conv entry: 3D with mixed strides, paddings, dilations, bf16 -> f32 and bf16", "[conv]") {
  const sc::problem p{.n = 1, .c = 3, .k = 5, .input = {3, 4, 5}, .filter = {2, 3, 2}, .stride = {1, 2, 1},
                      .pad = {1, 0, 1}, .pad_end = {0, 1, 0}, .dilation = {1, 1, 2}};
  all<bf16, float>({.pr = p, .seed = 31});
  all<bf16, bf16>({.pr = p, .beta = 1.f, .act = act::sigmoid, .seed = 32});
}

TEST_CASE("conv entry: groups, stride 2, and a residual read in place", "[conv]") {
  sc::problem p = p2d(2, 6, 7, 6, 9, 3, 3);
  p.groups = 3;
  p.stride = {1, 2, 2};
  p.pad = {0, 1, 0};
  p.pad_end = {0, 0, 1};
  all<float, float>({.pr = p, .alpha = 1.5f, .beta = -1.f, .bias = true, .act = act::relu, .seed = 41});
  all<f16, float>({.pr = p, .pixel_pad = 3, .seed = 42});
}

TEST_CASE("conv entry: depthwise (direct kernel) with a channel multiplier", "[conv]") {
  sc::problem p = p2d(2, 5, 6, 4, 8, 3, 3);
  p.groups = 4;
  p.pad = p.pad_end = {0, 1, 1};
  all<f16, float>({.pr = p, .bias = true, .act = act::silu, .seed = 51});
  p.k = 4;
  p.stride = {1, 2, 1};
  p.dilation = {1, 1, 2};
  all<float, float>({.pr = p, .nchw = true, .beta = 0.5f, .seed = 52});
  all<std::int8_t, std::int32_t>({.pr = p, .seed = 53});
}

TEST_CASE("conv entry: 1x1 (the GEMM fast path) and 1x1 variants that are not", "[conv]") {
  const sc::problem p = p2d(2, 6, 5, 7, 5, 1, 1);
  all<float, float>({.pr = p, .beta = 1.f, .bias = true, .act = act::relu, .seed = 61});
  all<bf16, bf16>({.pr = p, .pixel_pad = 2, .seed = 62});  // pixels one stride apart: still the fast path
  all<float, float>({.pr = p, .nchw = true, .seed = 63});   // channel stride != 1: implicit GEMM
  // Channel counts of whole 16-byte vectors (the GEMM's 16-byte reads), and int8 (fprop and dgrad both
  // take the fast path; wgrad stays an implicit GEMM).
  all<f16, f16>({.pr = p2d(1, 3, 7, 16, 24, 1, 1), .bias = true, .act = act::relu, .seed = 65});
  all<std::int8_t, std::int32_t>({.pr = p2d(2, 4, 3, 5, 9, 1, 1), .beta = 1.f, .seed = 66});
  sc::problem q = p;
  q.stride = {1, 2, 2};  // strided 1x1 (ResNet downsampling): implicit GEMM
  all<f16, f16>({.pr = q, .seed = 64});
}

TEST_CASE("conv entry: NCHW activations", "[conv]") {
  sc::problem p = p2d(2, 5, 7, 3, 4, 3, 2);
  p.stride = {1, 2, 1};
  p.pad = {0, 1, 1};
  all<float, float>({.pr = p, .nchw = true, .bias = true, .seed = 71});
  all<bf16, bf16>({.pr = p, .nchw = true, .beta = 0.5f, .seed = 72});
}

TEST_CASE("conv entry: int8 -> int32 and int8 -> int8 (requantized, saturating)", "[conv]") {
  sc::problem p = p2d(2, 5, 5, 6, 4, 3, 3);
  p.pad = p.pad_end = {0, 1, 1};
  all<std::int8_t, std::int32_t>({.pr = p, .beta = 1.f, .seed = 81});
  all<std::int8_t, std::int8_t>({.pr = p, .alpha = 0.125f, .seed = 82});  // sums reach ~+-700: saturates
  all<std::int8_t, std::int8_t>({.pr = p, .alpha = 0.5f, .act = act::relu, .seed = 83});
}

TEST_CASE("conv entry: odd sizes: 1x1 image, a filter larger than the input, one channel", "[conv]") {
  sc::problem a = p2d(3, 1, 1, 2, 3, 3, 3);
  a.pad = a.pad_end = {0, 1, 1};
  all<float, float>({.pr = a, .seed = 91});
  sc::problem b = p2d(1, 2, 3, 3, 2, 5, 5);
  b.pad = b.pad_end = {0, 2, 2};
  all<f16, f16>({.pr = b, .seed = 92});
  all<float, float>({.pr = p2d(1, 4, 4, 1, 1, 2, 2), .seed = 93});
}

TEST_CASE("conv entry: wgrad split-K, accumulating into dw", "[conv]") {
  sc::problem p = p2d(2, 9, 8, 3, 4, 3, 3);
  p.pad = p.pad_end = {0, 1, 1};
  check<float, float>(sc::kind::wgrad, {.pr = p, .split_k = 3, .seed = 101}, entry);
  check<bf16, bf16>(sc::kind::wgrad, {.pr = p, .alpha = 0.5f, .beta = 1.f, .split_k = 5, .seed = 102}, entry);
  check<std::int8_t, std::int32_t>(sc::kind::wgrad, {.pr = p, .split_k = 2, .seed = 103}, entry);
}
