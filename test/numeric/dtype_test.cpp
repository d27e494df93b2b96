// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::dtype: the shared vocabulary of element-type names (numeric/dtype.hpp) that the examples,
// benchmarks and the PyTorch extension parse --dtype with.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "strata/numeric/dtype.hpp"

using strata::dtype;

static_assert(strata::dtype_from_string("bfloat16") == dtype::bf16);
static_assert(!strata::dtype_from_string("FP16").has_value(), "names are case-sensitive");

TEST_CASE("every spelling of the shared vocabulary names its dtype", "[numeric][dtype]") {
  const std::vector<std::pair<const char*, dtype>> expected = {
      {"fp32", dtype::fp32}, {"f32", dtype::fp32},      {"float32", dtype::fp32}, {"float", dtype::fp32},
      {"tf32", dtype::tf32}, {"fp16", dtype::fp16},     {"f16", dtype::fp16},     {"float16", dtype::fp16},
      {"half", dtype::fp16}, {"bf16", dtype::bf16},     {"bfloat16", dtype::bf16}, {"int8", dtype::int8},
      {"i8", dtype::int8},   {"int32", dtype::int32},   {"i32", dtype::int32},    {"int4", dtype::int4},
      {"e4m3", dtype::e4m3}, {"fp8", dtype::e4m3},      {"fp8_e4m3", dtype::e4m3}, {"e5m2", dtype::e5m2},
      {"fp8_e5m2", dtype::e5m2}};
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
  CHECK_FALSE(strata::try_parse_dtype("float64", {dtype::fp32}, &why).has_value());
  CHECK_THAT(why, Catch::StartsWith("'float64' is not a dtype; the accepted names are fp32 (f32, float32, float), tf32, "
                                    "fp16 (f16, float16, half), bf16 (bfloat16), int8 (i8), int32 (i32), int4, "
                                    "e4m3 (fp8, fp8_e4m3), e5m2 (fp8_e5m2)"));
  CHECK_FALSE(strata::try_parse_dtype("", {dtype::fp32}).has_value());
}

TEST_CASE("a dtype the caller does not take lists the ones it does", "[numeric][dtype]") {
  std::string why;
  CHECK_FALSE(strata::try_parse_dtype("half", {dtype::bf16, dtype::e4m3}, &why).has_value());
  CHECK(why == "'half' (fp16) is not taken here; the dtypes taken are bf16, e4m3");
  try {
    (void)strata::parse_dtype("int4", {dtype::fp32, dtype::fp16}, "strata_ops.gemm");
    FAIL("int4 was accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.op() == "strata_ops.gemm");
    CHECK(e.argument() == "dtype");
    CHECK_THAT(std::string(e.what()), Catch::Contains("the dtypes taken are fp32, fp16"));
  }
}
