// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/mods.hpp -- user score and mask modifiers (FlexAttention / FA4 style).
//
// A score modifier is a trivially copyable functor
//   STRATA_HOST_DEVICE float operator()(float score, int batch, int head, int q, int k) const;
// applied to every logit after scaling, soft-capping and ALiBi, before masking. A mask modifier is
//   STRATA_HOST_DEVICE bool operator()(int batch, int head, int q, int k) const;   // true: keep
// combined (AND) with causal / window masks. q and k are positions inside the sequence. Both are
// template arguments of forward_kernel and of the typed host entry strata::attention<...>(), and are
// stored in the kernel object, so they may carry state (a bias pointer, a document-id table).
//
// The backward (strata::attention_backward, attn::run_backward) takes the same modifiers. A mask
// modifier needs nothing more. A score modifier must also give its derivative with respect to the
// score, at the score it was given:
//   STRATA_HOST_DEVICE float grad(float score, int batch, int head, int q, int k) const;
// (the backward cannot differentiate a functor itself). A score modifier without it is a compile-time
// error in the backward (concept differentiable_score_mod), never a silently wrong gradient.
#pragma once

#include <concepts>

#include "strata/config/config.hpp"

namespace strata::attn {

struct no_score_mod {
  STRATA_HOST_DEVICE constexpr float operator()(float s, int, int, int, int) const { return s; }
  STRATA_HOST_DEVICE constexpr float grad(float, int, int, int, int) const { return 1.f; }
};

/// A score modifier the backward can use: it states d score_mod(s) / d s.
template <class M>
concept differentiable_score_mod = requires(const M& m, float s, int i) {
  { m.grad(s, i, i, i, i) } -> std::convertible_to<float>;
};
struct no_mask_mod {
  STRATA_HOST_DEVICE constexpr bool operator()(int, int, int, int) const { return true; }
};

}  // namespace strata::attn
