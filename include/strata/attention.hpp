// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/attention.hpp -- fused multi-head attention: forward (MHA/GQA/MQA, masks, score/mask
// modifiers, variable lengths), split-KV decoding over contiguous or paged caches, and the double-
// precision reference. See docs/attention.md.
#pragma once

// The runtime first (see strata/embedding.hpp: HIP's atomics must be declared before arch/atomic.hpp).
#include "strata/runtime/runtime.hpp"
#include "strata/strata.hpp"

#include "strata/ops/attention/backward.hpp"
#include "strata/ops/attention/config.hpp"
#include "strata/ops/attention/decode.hpp"
#include "strata/ops/attention/forward.hpp"
#include "strata/ops/attention/host.hpp"
#include "strata/ops/attention/mods.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/ops/attention/reference.hpp"
#include "strata/ops/attention/types.hpp"
