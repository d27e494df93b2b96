// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The convolution's pointer tables (fprop, dgrad, wgrad), walked (issue 30, item 1).
#include <catch2/catch.hpp>

#include "pointer_table.hpp"
#include "strata/conv.hpp"

namespace sc = strata::ops::conv;

TEST_CASE("conv: the pointer tables of the three passes, walked", "[pointer-table][conv]") {
  strata::stream s;
  // N 1, C 8, K 8, 6 x 6 input, 3 x 3 filter, padding 1: 6 x 6 output.
  const sc::problem pr{.n = 1, .c = 8, .k = 8, .input = {1, 6, 6}, .filter = {1, 3, 3}, .pad = {0, 1, 1}, .pad_end = {0, 1, 1}};
  strata::device_buffer<float> x(288), w(576), y(288), res(288), bias(8), dx(288), dy(288), dw(576);
  strata::device_buffer<unsigned char> work(1 << 20);
  const sc::tensor tx{x.data(), strata::dtype::fp32}, tw{w.data(), strata::dtype::fp32}, ty{y.data(), strata::dtype::fp32};
  const sc::tensor tdx{dx.data(), strata::dtype::fp32}, tdy{dy.data(), strata::dtype::fp32}, tdw{dw.data(), strata::dtype::fp32};
  sc::options o{.beta = 1.f, .bias = bias.data()};
  o.residual = {res.data(), strata::dtype::fp32};
  pointer_walk::walk("strata::conv", [&] { strata::conv<float>(s, pr, tx, tw, ty, o); },
                     {{"x", x.data()}, {"w", w.data()}, {"y", y.data()}, {"options.residual", res.data()}, {"options.bias", bias.data()}});
  pointer_walk::walk("strata::conv_backward_data", [&] { strata::conv_backward_data<float>(s, pr, tdy, tw, tdx, o); },
                     {{"dy", dy.data()}, {"w", w.data()}, {"dx", dx.data()}, {"options.residual", res.data()}, {"options.bias", bias.data()}});
  sc::options ow{.split_k = 4};
  ow.work = {work.data(), work.size()};
  const auto t = pointer_walk::walk("strata::conv_backward_weight", [&] { strata::conv_backward_weight<float>(s, pr, tx, tdy, tdw, ow); },
                                    {{"x", x.data()}, {"dy", dy.data()}, {"dw", dw.data()}, {"options.work", work.data()}});
  CHECK(t.find("options.work")->bytes > 0);
  // The residual may be the output exactly (same pointer, strides), and nothing in between.
  sc::options same{.beta = 1.f};
  same.residual = ty;
  CHECK_NOTHROW(strata::conv<float>(s, pr, tx, tw, ty, same));
  pointer_walk::fields_have_rows<sc::options>("strata::ops::conv::options", 0, {"options.bias", "options.residual", "options.work"});
}
