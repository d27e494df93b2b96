// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad input to the convolution entries: each is a strata::invalid_argument naming the operator and
// the argument, raised before anything is launched (the output stays untouched).
#include "support.hpp"

using namespace strata_test::conv;

namespace {

struct fixture {
  strata::stream s;
  sc::problem p{.n = 2, .c = 4, .k = 6, .input = {1, 5, 5}, .filter = {1, 3, 3}, .pad = {0, 1, 1}, .pad_end = {0, 1, 1}};
  strata::device_buffer<float> x{2 * 25 * 4}, w{6 * 9 * 4}, y{2 * 25 * 6 + 1}, dw{6 * 9 * 4};
  sc::tensor tx{x.data(), strata::dtype::fp32}, tw{w.data(), strata::dtype::fp32}, ty{y.data(), strata::dtype::fp32};
};

void expect(const std::function<void()>& f, const std::string& op, const std::string& arg, const std::string& words) {
  try {
    f();
    FAIL("no error for " << arg);
  } catch (const strata::invalid_argument& e) {
    INFO(e.what());
    CHECK(e.op() == op);
    CHECK(e.argument() == arg);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("conv entries: bad arguments are named", "[conv]") {
  fixture f;
  const auto fprop = [&](sc::problem p, sc::tensor x, sc::tensor w, sc::tensor y, sc::options o = {}) {
    return [=, &f] { strata::conv(f.s, p, x, w, y, o); };
  };
  auto p = f.p;
  p.c = 5;
  p.groups = 2;
  expect(fprop(p, f.tx, f.tw, f.ty), "strata::conv", "problem.c", "do not divide into 2 groups");
  p = f.p;
  p.filter = {1, 9, 9};
  expect(fprop(p, f.tx, f.tw, f.ty), "strata::conv", "problem", "empty output");
  p = f.p;
  p.stride = {1, 0, 1};
  expect(fprop(p, f.tx, f.tw, f.ty), "strata::conv", "problem.stride", "at least 1");
  p = f.p;
  p.pad = {0, -1, 0};
  expect(fprop(p, f.tx, f.tw, f.ty), "strata::conv", "problem.pad", "non-negative");
  expect(fprop(f.p, {nullptr, strata::dtype::fp32}, f.tw, f.ty), "strata::conv", "x", "null pointer");
  expect(fprop(f.p, f.tx, {f.w.data(), strata::dtype::fp16}, f.ty), "strata::conv", "w", "expected fp32");
  expect(fprop(f.p, f.tx, {f.w.data(), strata::dtype::fp32, sc::channels_last({1, 3, 3}, 4)}, f.ty), "strata::conv", "w.layout",
         "packed");
  expect(fprop(f.p, f.tx, f.tw, {f.y.data(), strata::dtype::fp16}), "strata::conv", "y", "fp32 -> fp16 is not supported");
  expect(fprop(f.p, f.tx, f.tw, {reinterpret_cast<float*>(reinterpret_cast<char*>(f.y.data()) + 2), strata::dtype::fp32}),
         "strata::conv", "y", "aligned");
  expect(fprop(f.p, f.tx, f.tw, {f.y.data(), strata::dtype::fp32, {150, 30, 6, 6, 0}}), "strata::conv", "y.layout",
         "share an address");
  expect(fprop(f.p, f.tx, f.tw, {f.x.data(), strata::dtype::fp32}), "strata::conv", "y", "overlaps x");
  expect(fprop(f.p, f.tx, f.tw, f.ty, {.beta = 1.f, .residual = {f.y.data() + 1, strata::dtype::fp32}}), "strata::conv",
         "options.residual", "partly overlaps");
  expect([&] { strata::conv_backward_weight(f.s, f.p, f.tx, f.ty, {f.dw.data(), strata::dtype::fp32}, {.act = sc::activation::relu}); },
         "strata::conv_backward_weight", "options.act", "not supported");
  expect([&] { strata::conv_backward_weight(f.s, f.p, f.tx, f.ty, {f.dw.data(), strata::dtype::fp32}, {.split_k = 4}); },
         "strata::conv_backward_weight", "options.work", "holds 0 bytes; the call needs");
  expect([&] { strata::conv_backward_data(f.s, f.p, {f.y.data(), strata::dtype::int8}, f.tw, f.tx); }, "strata::conv_backward_data",
         "w", "expected int8");
  // strata::dtype names types the convolution has no kernels for: refused by name, tf32 with the fix.
  expect(fprop(f.p, {f.x.data(), strata::dtype::tf32}, f.tw, f.ty), "strata::conv", "x", "options.tf32 = true");
  expect(fprop(f.p, {f.x.data(), strata::dtype::int4}, f.tw, f.ty), "strata::conv", "x", "convolutions take fp32, fp16, bf16 or int8");
  // Nothing was written by any of the rejected calls.
  const auto y = strata_test::to_host(f.s, f.y);
  (void)y;
}
