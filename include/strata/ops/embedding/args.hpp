// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/args.hpp -- the arguments of strata::embedding_bag and
// strata::embedding_bag_backward. Host structs over device pointers; the spans are read on the host
// during the call only.
#pragma once

#include <span>

#include "strata/ops/embedding/types.hpp"

namespace strata::embedding {

/// The lookup both directions share: tables, features, indices, offsets, weights, pooling, policy.
struct lookup {
  scalar row_format = scalar::fp32;      // one format for every table of the call
  std::span<const table> tables = {};
  std::span<const feature> features = {};  // the feature-to-table map and the batch size of each
  const void* indices = nullptr;         // num_indices entries
  long long num_indices = 0;
  index_type indices_type = index_type::int64;  // indices and offsets
  /// CSR: total_bags + 1 entries (total_bags = sum of batch sizes), of indices_type. Null: fixed-size
  /// bags of bag_size indices each, and num_indices must be total_bags * bag_size.
  const void* offsets = nullptr;
  long long bag_size = 0;
  /// One weight per index (sum and none pooling only, as PyTorch and FBGEMM), or null.
  const float* per_sample_weights = nullptr;
  pooling mode = pooling::sum;
  bounds policy = bounds::error;
};

struct forward_args {
  lookup in = {};
  void* output = nullptr;                // see feature::output_offset; pooling none: [num_indices, stride]
  element_type output_format = strata::dtype::fp32;  // fp32, fp16 or bf16 (a strata::dtype; types.hpp)
  long long output_row_stride = 0;       // pooling none: elements between rows; 0: the largest dim
};

/// What the backward pass produces.
///   dense   one fp32 gradient per table, num_rows x dim packed, fully written (untouched rows: 0)
///   sparse  the unique (table, row) pairs met, in ascending (table, row) order, with their gradients
///   fused   the optimizer's update applied to the table rows in place (fp32, fp16, bf16 rows)
enum class gradient { dense, sparse, fused };

struct backward_args {
  lookup in = {};                        // the forward's lookup (tables, indices, offsets, ...)
  const void* grad_output = nullptr;     // the gradient of the forward's output, in its layout
  element_type grad_format = strata::dtype::fp32;  // fp32, fp16 or bf16 (a strata::dtype; types.hpp)
  long long grad_row_stride = 0;         // pooling none: as forward_args::output_row_stride
  gradient kind = gradient::dense;

  std::span<float* const> dense_grads = {};  // dense: one per table

  int* sparse_tables = nullptr;          // sparse: capacity num_indices each
  long long* sparse_rows = nullptr;
  float* sparse_grads = nullptr;         // row u at sparse_grads + u * sparse_grad_stride
  long long sparse_grad_stride = 0;      // 0: the largest dim
  long long* sparse_count = nullptr;     // device: how many unique rows were written

  optimizer opt = optimizer::sgd;        // fused
  float learning_rate = 0.01f;
  float eps = 1e-8f;                     // adagrad and rowwise adagrad
  /// adagrad: per table num_rows * dim floats; rowwise adagrad: num_rows floats; sgd: empty.
  std::span<float* const> optimizer_state = {};
};

}  // namespace strata::embedding
