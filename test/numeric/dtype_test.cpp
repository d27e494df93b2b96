// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::dtype: the shared vocabulary of element-type names (numeric/dtype.hpp) that the examples,
// benchmarks and the PyTorch extension parse --dtype with.
#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/numeric/dtype.hpp"
#include "strata/ops/attention/types.hpp"
#include "strata/ops/conv/host.hpp"
#include "strata/ops/gemm/gemm.hpp"

using strata::dtype;

static_assert(strata::dtype_from_string("bfloat16") == strata::dtype::bf16);
static_assert(!strata::dtype_from_string("FP16").has_value(), "names are case-sensitive");

// The per-operator enums of earlier releases are deprecated aliases of strata::dtype for one
// release: code written against them still compiles (with warnings, silenced here) and means the same.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(std::is_same_v<strata::ops::gemm::dtype, strata::dtype>);
static_assert(std::is_same_v<strata::ops::conv::dtype, strata::dtype>);
static_assert(std::is_same_v<strata::attn::dtype, strata::dtype>);
static_assert(strata::ops::gemm::dtype::f32 == strata::dtype::fp32 && strata::ops::gemm::dtype::f16 == strata::dtype::fp16 &&
              strata::ops::gemm::dtype::i8 == strata::dtype::int8 && strata::ops::gemm::dtype::i32 == strata::dtype::int32);
static_assert(strata::ops::conv::dtype::f16 == strata::dtype::fp16 && strata::attn::dtype::e4m3 == strata::dtype::e4m3);
#pragma GCC diagnostic pop

TEST_CASE("every spelling of the shared vocabulary names its dtype", "[numeric][dtype]") {
  const std::vector<std::pair<const char*, dtype>> expected = {
      {"fp32", strata::dtype::fp32}, {"f32", strata::dtype::fp32},      {"float32", strata::dtype::fp32}, {"float", strata::dtype::fp32},
      {"tf32", strata::dtype::tf32}, {"fp16", strata::dtype::fp16},     {"f16", strata::dtype::fp16},     {"float16", strata::dtype::fp16},
      {"half", strata::dtype::fp16}, {"bf16", strata::dtype::bf16},     {"bfloat16", strata::dtype::bf16}, {"int8", strata::dtype::int8},
      {"i8", strata::dtype::int8},   {"int32", strata::dtype::int32},   {"i32", strata::dtype::int32},    {"int4", strata::dtype::int4},
      {"e4m3", strata::dtype::e4m3}, {"fp8", strata::dtype::e4m3},      {"fp8_e4m3", strata::dtype::e4m3}, {"e5m2", strata::dtype::e5m2},
      {"fp8_e5m2", strata::dtype::e5m2}};
  REQUIRE(std::size(strata::dtype_spellings) == expected.size());
  for (const auto& [name, t] : expected) {
    INFO(name);
    CHECK(strata::dtype_from_string(name) == t);
    CHECK(strata::parse_dtype(name, {t}, "test") == t);
  }
  // The canonical name is a spelling of the same dtype.
  for (const auto& [name, t] : expected) CHECK(strata::dtype_from_string(strata::to_string(t)) == t);
}

TEST_CASE("an unknown dtype name lists every accepted spelling", "[numeric][dtype]") {
  std::string why;
  CHECK_FALSE(strata::try_parse_dtype("float64", {strata::dtype::fp32}, &why).has_value());
  CHECK_THAT(why, Catch::StartsWith("'float64' is not a dtype; the accepted names are fp32 (f32, float32, float), tf32, "
                                    "fp16 (f16, float16, half), bf16 (bfloat16), int8 (i8), int32 (i32), int4, "
                                    "e4m3 (fp8, fp8_e4m3), e5m2 (fp8_e5m2)"));
  CHECK_FALSE(strata::try_parse_dtype("", {strata::dtype::fp32}).has_value());
}

TEST_CASE("a dtype the caller does not take lists the ones it does", "[numeric][dtype]") {
  std::string why;
  CHECK_FALSE(strata::try_parse_dtype("half", {strata::dtype::bf16, strata::dtype::e4m3}, &why).has_value());
  CHECK(why == "'half' (fp16) is not taken here; the dtypes taken are bf16, e4m3");
  try {
    (void)strata::parse_dtype("int4", {strata::dtype::fp32, strata::dtype::fp16}, "strata_ops.gemm");
    FAIL("int4 was accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.op() == "strata_ops.gemm");
    CHECK(e.argument() == "dtype");
    CHECK_THAT(std::string(e.what()), Catch::Contains("the dtypes taken are fp32, fp16"));
  }
}
