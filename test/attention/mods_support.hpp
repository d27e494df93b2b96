// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/attention/mods_support.hpp -- the score and mask modifiers (ops/attention/mods.hpp) the attention
// tests run every kernel with: a relative-position bias, FlexAttention's document mask in two forms, a
// mask that hides every key of some rows, and a differentiable squashing score modifier.
#pragma once

#include <cmath>

#include "strata/config/config.hpp"

namespace attn_test {

/// A relative-position bias: s + w (h + 1) ((q - k) % 3).
struct bias_mod {
  float w = 0.05f;
  STRATA_HOST_DEVICE float operator()(float s, int, int h, int q, int k) const { return s + w * (h + 1) * ((q - k) % 3); }
};
/// A document mask: keys and queries in different 8-blocks are hidden.
struct doc_mask {
  STRATA_HOST_DEVICE bool operator()(int, int, int q, int k) const { return q / 8 == k / 8; }
};
/// Rows 2, 7, 12, ... see no key at all (O 0, LSE -inf, zero gradients).
struct none_mask {
  STRATA_HOST_DEVICE bool operator()(int, int, int q, int) const { return q % 5 != 2; }
};
/// FlexAttention's document mask: a query sees only keys of its own document (`len` positions each).
struct same_document {
  int len = 7;
  STRATA_HOST_DEVICE bool operator()(int, int, int q, int k) const { return q / len == k / len; }
};
/// A differentiable score modifier: a smooth squashing plus a per-head relative-position bias. Its
/// derivative with respect to the score is 1 + 0.25 (1 - tanh^2 s).
struct squash_bias {
  STRATA_HOST_DEVICE float operator()(float s, int, int h, int q, int k) const {
    return s + 0.25f * ::tanhf(s) - 0.02f * static_cast<float>((h + 1) * (q - k));
  }
  STRATA_HOST_DEVICE float grad(float s, int, int, int, int) const {
    const float t = ::tanhf(s);
    return 1.f + 0.25f * (1.f - t * t);
  }
};

}  // namespace attn_test
