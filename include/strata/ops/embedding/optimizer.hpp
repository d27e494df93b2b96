// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/optimizer.hpp -- the optimizers fused into the embedding backward pass, as
// plain functions that the kernel and the reference both call, so the formulas live in one place.
//
// For one row w[0..D) of a table with gradient g[0..D) (the sum over every occurrence of the row in
// the batch of weight_i * scale_bag * grad_output[bag], where scale_bag is 1 / (contributing rows of
// the bag) for mean pooling and 1 otherwise), learning rate lr and epsilon eps:
//
//   sgd              w[j] <- w[j] - lr * g[j]
//   adagrad          h[j] <- h[j] + g[j]^2                      (h: one fp32 state per element)
//                    w[j] <- w[j] - lr * g[j] / (sqrt(h[j]) + eps)
//   rowwise_adagrad  m    <- (sum_j g[j]^2) / D                 (FBGEMM's row-wise Adagrad)
//                    h    <- h + m                              (h: one fp32 state per row)
//                    w[j] <- w[j] - lr * g[j] / (sqrt(h) + eps)
//
// Rows that no index of the batch names are not touched (their gradient is zero; FBGEMM's sparse
// update). Arithmetic is fp32; fp16 / bf16 rows are read, updated in fp32 and rounded to nearest
// even once (no stochastic rounding). No weight decay.
#pragma once

#include <cmath>

#include "strata/config/config.hpp"

namespace strata::embedding::update {

STRATA_HOST_DEVICE inline float sgd(float w, float g, float lr) { return w - lr * g; }

/// Returns the new weight; `h` is the element's state, updated in place.
STRATA_HOST_DEVICE inline float adagrad(float w, float g, float& h, float lr, float eps) {
  h = h + g * g;
  return w - lr * g / (sqrtf(h) + eps);
}

/// The row's new state from its old state and the sum of squares of its gradient over `dim` columns.
STRATA_HOST_DEVICE inline float rowwise_state(float h, float sum_sq, int dim) { return h + sum_sq / static_cast<float>(dim); }

/// The new weight given the row's updated state.
STRATA_HOST_DEVICE inline float rowwise_adagrad(float w, float g, float h_new, float lr, float eps) {
  return w - lr * g / (sqrtf(h_new) + eps);
}

}  // namespace strata::embedding::update
