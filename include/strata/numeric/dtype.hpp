// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/dtype.hpp -- one vocabulary for element types named at run time: strata::dtype, its
// canonical names, and the spellings users type (--dtype in the examples and benchmarks, the PyTorch
// extension's dtype strings).
//
//   std::string why;
//   const auto t = strata::try_parse_dtype(argv[i], {strata::dtype::fp16, strata::dtype::bf16}, &why);
//   if (!t) usage("--dtype " + why);   // or strata::parse_dtype(name, accepted, "my_op"), which throws
//
// Accepted spellings (case-sensitive, as PyTorch's and NumPy's names are):
//   fp32  f32 float32 float       tf32  (fp32 storage, TF32 tensor-core products)
//   fp16  f16 float16 half        bf16  bfloat16
//   int8  i8                      int32 i32            int4
//   e4m3  fp8 fp8_e4m3            e5m2  fp8_e5m2
// An unknown name is an error listing every accepted spelling; a known name the caller does not take
// is an error listing what it takes.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "strata/runtime/error.hpp"

namespace strata {

/// An element type chosen at run time. tf32 is fp32 storage whose products run on TF32 tensor cores.
///
/// f32, f16, i8 and i32 are the spellings of the GEMM's and convolution's former enum
/// (strata::ops::gemm::dtype, now a deprecated alias of this one): deprecated enumerators with the
/// same values, kept for one release so old code compiles with a warning (docs/api.md).
enum class dtype {
  fp32, tf32, fp16, bf16, int8, int32, int4, e4m3, e5m2,
  f32 [[deprecated("use strata::dtype::fp32")]] = fp32,
  f16 [[deprecated("use strata::dtype::fp16")]] = fp16,
  i8 [[deprecated("use strata::dtype::int8")]] = int8,
  i32 [[deprecated("use strata::dtype::int32")]] = int32,
};

/// The canonical name of a dtype (the first spelling of each in the table below). A C string, as
/// every to_string of the library, so messages can append it to a std::string.
constexpr const char* to_string(dtype t) {
  switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::tf32: return "tf32";
    case dtype::fp16: return "fp16";
    case dtype::bf16: return "bf16";
    case dtype::int8: return "int8";
    case dtype::int32: return "int32";
    case dtype::int4: return "int4";
    case dtype::e4m3: return "e4m3";
    case dtype::e5m2: return "e5m2";
  }
  return "?";
}

/// Bytes per stored element: fp32, tf32 (fp32 storage) and int32 4; fp16 and bf16 2; int8 and the fp8
/// formats 1. int4 packs two elements per byte, so it has no whole-byte size: 0 (an operator that takes
/// it computes its packed sizes itself). The one table of element sizes: the GEMM, the convolution,
/// attention and the embedding outputs all read it.
constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::fp32: case dtype::tf32: case dtype::int32: return 4;
    case dtype::fp16: case dtype::bf16: return 2;
    case dtype::int8: case dtype::e4m3: case dtype::e5m2: return 1;
    case dtype::int4: return 0;
  }
  return 0;
}

struct dtype_spelling {
  std::string_view name;
  dtype type;
};

/// Every spelling parse_dtype accepts, canonical name first for each dtype.
inline constexpr dtype_spelling dtype_spellings[] = {
    {"fp32", dtype::fp32},  {"f32", dtype::fp32},       {"float32", dtype::fp32},  {"float", dtype::fp32},
    {"tf32", dtype::tf32},  {"fp16", dtype::fp16},      {"f16", dtype::fp16},      {"float16", dtype::fp16},
    {"half", dtype::fp16},  {"bf16", dtype::bf16},      {"bfloat16", dtype::bf16}, {"int8", dtype::int8},
    {"i8", dtype::int8},    {"int32", dtype::int32},    {"i32", dtype::int32},     {"int4", dtype::int4},
    {"e4m3", dtype::e4m3},  {"fp8", dtype::e4m3},       {"fp8_e4m3", dtype::e4m3}, {"e5m2", dtype::e5m2},
    {"fp8_e5m2", dtype::e5m2},
};

/// The dtype a spelling names, or nothing for an unknown one.
constexpr std::optional<dtype> dtype_from_string(std::string_view name) {
  for (const auto& s : dtype_spellings)
    if (s.name == name) return s.type;
  return std::nullopt;
}

/// "fp32 (f32, float32, float), tf32, fp16 (f16, float16, half), ...": every spelling, for messages.
inline std::string dtype_spelling_list() {
  std::string out;
  for (std::size_t i = 0; i < std::size(dtype_spellings); ++i) {
    const auto& s = dtype_spellings[i];
    const bool first = i == 0 || dtype_spellings[i - 1].type != s.type;
    const bool last = i + 1 == std::size(dtype_spellings) || dtype_spellings[i + 1].type != s.type;
    if (first) out += (i ? ", " : "") + std::string(s.name) + (last ? "" : " (");
    else out += std::string(s.name) + (last ? ")" : ", ");
  }
  return out;
}

/// The dtype `name` spells when `accepted` holds it. Otherwise nothing, and `why` (if given) says what
/// is wrong: every accepted spelling for an unknown name, the dtypes `accepted` holds for a known one.
inline std::optional<dtype> try_parse_dtype(std::string_view name, std::initializer_list<dtype> accepted,
                                            std::string* why = nullptr) {
  const std::optional<dtype> t = dtype_from_string(name);
  if (!t) {
    if (why) *why = "'" + std::string(name) + "' is not a dtype; the accepted names are " + dtype_spelling_list();
    return std::nullopt;
  }
  std::string takes;
  for (dtype a : accepted) {
    if (a == *t) return a;
    takes += (takes.empty() ? "" : ", ") + std::string(to_string(a));
  }
  if (why) *why = "'" + std::string(name) + "' (" + std::string(to_string(*t)) + ") is not taken here; the dtypes taken are " + takes;
  return std::nullopt;
}

/// try_parse_dtype that throws strata::invalid_argument naming `op` and `arg` (e.g. "--dtype") instead.
inline dtype parse_dtype(std::string_view name, std::initializer_list<dtype> accepted, const std::string& op,
                         const std::string& arg = "dtype") {
  std::string why;
  if (const auto t = try_parse_dtype(name, accepted, &why)) return *t;
  throw invalid_argument(op, arg, why);
}

}  // namespace strata
