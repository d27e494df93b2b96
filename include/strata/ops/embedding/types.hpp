// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/types.hpp -- what an embedding-bag call is made of: row formats, the output and
// gradient element type, pooling, bounds policies, table and feature descriptions, the device status
// record and the bounds error.
//
// Vocabulary (FBGEMM's table-batched embeddings, "TBE"):
//   table    an array of `num_rows` rows of `dim` values, stored in one row format
//   feature  one lookup stream: a table (feature_table_map) and a batch of `batch_size` bags
//            (several features may share a table; batch sizes may differ: "variable batch size")
//   bag      the indices of one sample of one feature; pooled into one output row
//   CSR      indices[] holds every bag of every feature, feature-major then sample-major;
//            offsets[g] .. offsets[g + 1] are the positions of global bag g (bag_base(f) + sample),
//            so offsets has total_bags + 1 entries. Without offsets, every bag holds `bag_size` indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/numeric/dtype.hpp"
#include "strata/runtime/error.hpp"

namespace strata::embedding {

/// How the rows of a bag become one output row.
///   sum   sum_i w_i * row(idx_i)
///   mean  (sum_i row(idx_i)) / n, n = the positions that contribute (padding and skipped ones do not)
///   max   element-wise maximum over the contributing rows
///   none  no pooling: position i of `indices` produces output row i (a plain gather, [N, D])
/// An empty bag (or one with no contributing position) gives zeros in every mode: the mean of nothing
/// is 0 and the max of nothing is 0, as PyTorch's EmbeddingBag does.
enum class pooling { sum, mean, max, none };

/// Row storage formats (lookup::row_format). Not strata::dtype: a row-wise quantized row carries a
/// scale and a bias besides its elements, which no element type says. Outputs and gradients are plain
/// elements and take strata::dtype instead (element_type below).
///   int8_rowwise  each row: `dim` unsigned bytes q, then fp32 scale, fp32 bias (little endian);
///                 value = scale * q + bias. FBGEMM's "fused 8-bit rowwise" layout.
///   int4_rowwise  each row: ceil(dim / 2) bytes, element 2k in the low nibble of byte k and element
///                 2k+1 in the high nibble, then fp16 scale, fp16 bias; value = scale * q + bias.
///                 FBGEMM's "fused 4-bit rowwise" layout.
///   fp8_e4m3      OCP E4M3 (strata::f8_e4m3), no scale.
enum class scalar { fp32, fp16, bf16, fp8_e4m3, int8_rowwise, int4_rowwise };

/// strata::to_string(dtype) is reachable as embedding::to_string too (as in strata::ops::gemm and
/// strata::attn), so that an element_type prints by it.
using strata::to_string;

/// The row format whose elements are `t`: fp32, fp16, bf16, e4m3 (fp8_e4m3), and int8 / int4 for
/// the row-wise quantized formats (the only int8 and int4 rows there are); nothing for the other
/// dtypes. What a --dtype option means for the rows (examples/embedding.cpp, the benchmark).
constexpr std::optional<scalar> row_format_of(strata::dtype t) {
  switch (t) {
    case strata::dtype::fp32: return scalar::fp32;
    case strata::dtype::fp16: return scalar::fp16;
    case strata::dtype::bf16: return scalar::bf16;
    case strata::dtype::e4m3: return scalar::fp8_e4m3;
    case strata::dtype::int8: return scalar::int8_rowwise;
    case strata::dtype::int4: return scalar::int4_rowwise;
    default: return std::nullopt;
  }
}

/// The element type of an output (forward_args::output_format) or a gradient
/// (backward_args::grad_format): a strata::dtype, of which the entries take fp32, fp16 and bf16 and
/// refuse the others by name. A struct rather than strata::dtype itself for one release (issue 30):
/// these fields took embedding::scalar before, and code that still assigns `scalar::fp16` compiles
/// through the deprecated constructor, with a warning naming the replacement. It converts to
/// strata::dtype, so it compares with one (`a.output_format == strata::dtype::bf16`), switches and
/// prints as one (to_string). Once the scalar constructor goes, the fields become strata::dtype.
struct element_type {
  strata::dtype type = strata::dtype::fp32;

  constexpr element_type() = default;
  constexpr element_type(strata::dtype t) : type(t) {}
  /// Row formats map to the dtype of their elements (fp8_e4m3: e4m3; int8_rowwise, int4_rowwise:
  /// int8, int4), which the entries refuse as outputs just as they refused these formats before.
  [[deprecated("output_format and grad_format are strata::dtype: write strata::dtype::fp32, fp16 or bf16 "
               "for embedding::scalar::fp32, fp16 or bf16 (docs/api.md)")]]
  constexpr element_type(scalar s)
      : type(s == scalar::fp16           ? strata::dtype::fp16
             : s == scalar::bf16         ? strata::dtype::bf16
             : s == scalar::fp8_e4m3     ? strata::dtype::e4m3
             : s == scalar::int8_rowwise ? strata::dtype::int8
             : s == scalar::int4_rowwise ? strata::dtype::int4
                                         : strata::dtype::fp32) {}
  constexpr operator strata::dtype() const { return type; }
};
static_assert(std::is_trivially_copyable_v<element_type> && sizeof(element_type) == sizeof(strata::dtype));

/// Old code compared these fields with a scalar; it still compiles for one release.
[[deprecated("output_format and grad_format are strata::dtype: compare with strata::dtype::fp32, fp16 or bf16 "
             "(docs/api.md)")]]
constexpr bool operator==(element_type a, scalar s) {
  return row_format_of(a.type) == s;
}

enum class index_type { int32, int64 };

/// What a bad index or a malformed bag does. Under every policy no memory outside the tables, the
/// indices, the offsets and the outputs is read or written, and the status record counts the bad ones.
///   error  (default) the bad position contributes nothing (as skip) and the host entry throws
///          strata::embedding::bounds_error naming the operator, feature, table, bag, position and value
///   clamp  a bad index reads as a row of zeros: it counts for mean and gives 0 to max;
///          a malformed bag's range is clamped into [0, num_indices] with end >= start
///   skip   a bad index is dropped (does not count for mean); a malformed bag is empty
/// Bad index: idx < 0 or idx >= num_rows of its table. Malformed bag: offsets[g] < 0,
/// offsets[g + 1] < offsets[g], or offsets[g + 1] > num_indices.
/// (FBGEMM's BoundsCheckMode IGNORE/WARNING redirect a bad index to row 0, which reads real data;
/// clamp here reads nothing instead. FATAL is a device assert; error here is a C++ exception.)
enum class bounds { error, clamp, skip };

/// Optimizers fused into the backward pass (see optimizer.hpp for the exact formulas).
enum class optimizer { sgd, adagrad, rowwise_adagrad };

/// No padding index for this table.
inline constexpr long long no_padding = -1;

/// One table, as the host describes it. `rows` is device memory of num_rows * row_stride_bytes bytes.
struct table {
  const void* rows = nullptr;
  long long num_rows = 0;
  int dim = 0;
  /// Bytes from one row to the next; 0 means packed (packed_row_bytes(format, dim)). Rows are read
  /// with 16-byte loads when `rows` is 16-byte aligned and the stride is a multiple of 16; with
  /// pairs of 8-byte loads when both are multiples of 8 and a row's payload rounded up to 16 bytes
  /// fits in the stride (int8 row-wise rows of a dim that is a multiple of 8, packed); else by element.
  long long row_stride_bytes = 0;
  /// Rows equal to it contribute nothing: not to sums, not to the mean's count, not to max, and they
  /// get no gradient (PyTorch's EmbeddingBag padding_idx; normalize a negative PyTorch padding_idx
  /// to num_rows + padding_idx first). no_padding (-1) for none; otherwise in [0, num_rows).
  long long padding_index = no_padding;
};

/// One feature: which table it reads and how many bags (samples) it has. Its pooled outputs go to
/// output + output_offset + sample * output_stride (elements); output_offset < 0 asks for the default
/// layout: FBGEMM's [B, sum of dims] when every feature has the same batch size, else feature-major
/// blocks [batch_size, dim] one after another.
struct feature {
  int table = 0;
  long long batch_size = 0;
  long long output_offset = -1;
  long long output_stride = 0;
};

/// Bytes of one packed row of `dim` values in `format` (with the quantization parameters).
STRATA_HOST_DEVICE constexpr long long packed_row_bytes(scalar format, long long dim) {
  switch (format) {
    case scalar::fp32: return 4 * dim;
    case scalar::fp16:
    case scalar::bf16: return 2 * dim;
    case scalar::fp8_e4m3: return dim;
    case scalar::int8_rowwise: return dim + 8;
    case scalar::int4_rowwise: return (dim + 1) / 2 + 4;
  }
  return 0;
}

constexpr const char* to_string(scalar s) {
  switch (s) {
    case scalar::fp32: return "fp32";
    case scalar::fp16: return "fp16";
    case scalar::bf16: return "bf16";
    case scalar::fp8_e4m3: return "fp8_e4m3";
    case scalar::int8_rowwise: return "int8_rowwise";
    case scalar::int4_rowwise: return "int4_rowwise";
  }
  return "?";
}
constexpr const char* to_string(pooling p) {
  switch (p) {
    case pooling::sum: return "sum";
    case pooling::mean: return "mean";
    case pooling::max: return "max";
    case pooling::none: return "none";
  }
  return "?";
}
constexpr const char* to_string(bounds b) {
  switch (b) {
    case bounds::error: return "error";
    case bounds::clamp: return "clamp";
    case bounds::skip: return "skip";
  }
  return "?";
}

/// The device's report of bad input, in caller-provided workspace. Kernels cannot throw: each one
/// that finds a bad index or a malformed bag counts it and keeps the smallest position / bag with
/// integer atomics (so the report is the same on every run and any worker count); the host entry
/// reads it back after the launch. All-ones means "none".
struct status_record {
  unsigned long long first_bad_position;  // smallest position in `indices` holding a bad index
  unsigned long long first_bad_bag;       // smallest global bag id with malformed offsets
  unsigned long long bad_positions;       // how many bad indices were met (each position once)
  unsigned long long bad_bags;            // how many malformed bags
  unsigned long long reserved[4];
};
inline constexpr unsigned long long status_none = ~0ull;

/// What read_status() returns on the host.
struct status {
  unsigned long long bad_positions = 0;
  unsigned long long bad_bags = 0;
  long long first_bad_position = -1;  // -1: none
  long long first_bad_bag = -1;       // -1: none
  bool ok() const { return bad_positions == 0 && bad_bags == 0; }
};

/// A bad index or malformed offsets under bounds::error. what() reads e.g.
///   strata::embedding_bag: index out of range: feature 2 (table 1, 1000 rows), bag 17, position 4093
///   (4th of the bag), value -3
/// kind() tells which; for a malformed bag position() is -1 and value() is offsets[bag + 1].
class bounds_error : public invalid_argument {
 public:
  enum class kind_t { index, offsets };
  bounds_error(std::string op, kind_t k, int feature, int table, long long bag, long long position, long long value,
               const std::string& detail)
      : invalid_argument(std::move(op), k == kind_t::index ? "indices" : "offsets", detail),
        kind_(k), feature_(feature), table_(table), bag_(bag), position_(position), value_(value) {}
  kind_t kind() const noexcept { return kind_; }
  int feature() const noexcept { return feature_; }
  int table() const noexcept { return table_; }
  long long bag() const noexcept { return bag_; }  // the sample inside its feature
  long long position() const noexcept { return position_; }
  long long value() const noexcept { return value_; }

 private:
  kind_t kind_;
  int feature_, table_;
  long long bag_, position_, value_;
};

}  // namespace strata::embedding
