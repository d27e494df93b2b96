// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::gemm's and the grouped GEMM's pointer tables, walked (issue 30, item 1): every row refuses a
// null pointer, a misaligned one, a short workspace and an overlap by name; every pointer field of
// the options has a row.
#include <catch2/catch.hpp>

#include <vector>

#include "pointer_table.hpp"
#include "strata/gemm.hpp"

namespace sg = strata::ops::gemm;
using strata::dtype;
using sg::layout;

TEST_CASE("gemm: the pointer table, walked", "[pointer-table][gemm]") {
  strata::stream s;
  strata::device_buffer<float> ba(4096), bb(4096), bc(4096), bd(4096), bias(64), scales(64);
  strata::device_buffer<unsigned char> work(1 << 20);
  const std::string G = "strata::gemm";
  // fp32 with C (beta != 0), a bias and split-K partials in options.work.
  const sg::matrix a{ba.data(), 16, 256, 256, layout::row_major, strata::dtype::fp32};
  const sg::matrix b{bb.data(), 256, 16, 16, layout::row_major, strata::dtype::fp32};
  const sg::matrix c{bc.data(), 16, 16, 16, layout::row_major, strata::dtype::fp32};
  const sg::matrix d{bd.data(), 16, 16, 16, layout::row_major, strata::dtype::fp32};
  sg::options o{.beta = 0.5f, .bias = bias.data(), .split_k = 4};
  o.work = {work.data(), work.size()};
  const auto t = pointer_walk::walk(G, [&] { strata::gemm<float>(s, a, b, c, d, o); },
                                    {{"a", a.data}, {"b", b.data}, {"c", c.data}, {"d", d.data}, {"options.bias", o.bias},
                                     {"options.work", o.work.data}});
  CHECK(t.find("options.work")->bytes > 0);
  // fp8 with per-row and per-column scales; C is D exactly.
  const sg::matrix a8{ba.data(), 16, 32, 32, layout::row_major, strata::dtype::e4m3}, b8{bb.data(), 32, 16, 16, layout::row_major, strata::dtype::e4m3};
  const sg::matrix d8{bd.data(), 16, 16, 16, layout::row_major, strata::dtype::bf16};
  const sg::options o8{.beta = 1.f, .a_scale = scales.data(), .b_scale = scales.data() + 32, .a_scale_per_row = true,
                       .b_scale_per_col = true};
  pointer_walk::walk(G, [&] { strata::gemm<strata::f8_e4m3>(s, a8, b8, d8, d8, o8); },
                     {{"options.a_scale", o8.a_scale}, {"options.b_scale", o8.b_scale}});
  pointer_walk::fields_have_rows<sg::options>("strata::ops::gemm::options", 0,
                                              {"options.bias", "options.work", "options.a_scale", "options.b_scale"});
}

TEST_CASE("gemm: the probes of issue 30 are refused by name", "[pointer-table][gemm]") {
  strata::stream s;
  strata::device_buffer<float> ba(256), bb(256), bd(256), other(256);
  const sg::matrix a{ba.data(), 8, 8, 8, layout::row_major, strata::dtype::fp32}, b{bb.data(), 8, 8, 8, layout::row_major, strata::dtype::fp32};
  const sg::matrix d{bd.data(), 8, 8, 8, layout::row_major, strata::dtype::fp32};
  const auto refuse = [&](const sg::matrix& aa, const sg::matrix& bb_, const sg::matrix& dd, const sg::options& o,
                          const char* arg) -> std::string {
    try {
      strata::gemm(s, aa, bb_, dd, dd, o);
    } catch (const strata::invalid_argument& e) {
      CHECK(e.argument() == arg);
      return e.what();
    }
    FAIL("accepted; expected a refusal naming " << arg);
    return {};
  };
  // options.bias over D; 2 bytes off float alignment.
  CHECK_THAT(refuse(a, b, d, {.bias = bd.data() + 60}, "options.bias"),
             Catch::Equals("strata::gemm: argument 'options.bias' overlaps d (it is read while d is written)"));
  CHECK_THAT(refuse(a, b, d, {.bias = reinterpret_cast<const float*>(reinterpret_cast<const char*>(other.data()) + 2)}, "options.bias"),
             Catch::Equals("strata::gemm: argument 'options.bias' is not aligned to a float (4 bytes)"));
  // The fp8 scales over D.
  const sg::matrix a8{ba.data(), 8, 8, 8, layout::row_major, strata::dtype::e4m3}, b8{bb.data(), 8, 8, 8, layout::row_major, strata::dtype::e4m3};
  const sg::matrix d8{bd.data(), 8, 8, 8, layout::row_major, strata::dtype::bf16};
  CHECK_THAT(refuse(a8, b8, d8, {.a_scale = bd.data() + 4}, "options.a_scale"),
             Catch::Equals("strata::gemm: argument 'options.a_scale' overlaps d (it is read while d is written)"));
  CHECK_THAT(refuse(a8, b8, d8, {.b_scale = bd.data() + 24, .b_scale_per_col = true}, "options.b_scale"),
             Catch::Contains("argument 'options.b_scale' overlaps d"));
  // A == B is allowed (inputs share memory freely); C == D exactly is allowed.
  CHECK_NOTHROW(strata::gemm(s, a, a, d, d, {.beta = 1.f}));
}

TEST_CASE("grouped gemm: the pointer table, walked", "[pointer-table][gemm]") {
  strata::stream s;
  strata::device_buffer<float> ba(4096), bb(4096), bc(4096), bd(4096);
  using entry = sg::group_entry<float, float, float>;
  strata::device_buffer<unsigned char> work(sg::grouped_workspace_size<float, float>(2));
  std::vector<entry> problems{{.m = 8, .n = 8, .k = 8, .a = ba.data(), .lda = 8, .b = bb.data(), .ldb = 8, .d = bd.data(), .ldd = 8,
                               .c = bc.data(), .ldc = 8},
                              {.m = 4, .n = 8, .k = 16, .a = ba.data() + 1024, .lda = 16, .b = bb.data() + 1024, .ldb = 8,
                               .d = bd.data() + 1024, .ldd = 8, .c = bd.data() + 1024, .ldc = 8}};
  pointer_walk::walk("strata::gemm",
                     [&] {
                       sg::run_grouped<float, float>(s, problems, layout::row_major, layout::row_major, layout::row_major, 1.f,
                                                     0.5f, {work.data(), work.size()});
                     },
                     {{"problems[0].a", ba.data()}, {"problems[0].b", bb.data()}, {"problems[0].c", bc.data()},
                      {"problems[0].d", bd.data()}, {"problems[1].c", bd.data() + 1024}, {"work", work.data()}});
  pointer_walk::fields_have_rows<entry>("strata::ops::gemm::group_entry", 0,
                                        {"problems[0].a", "problems[0].b", "problems[0].d", "problems[0].c"});
}
