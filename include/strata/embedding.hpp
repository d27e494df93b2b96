// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/embedding.hpp -- the embedding-lookup operators (table-batched embedding bags): forward,
// backward with dense / sparse gradients or fused optimizers, bounds policies, and the reference.
// See docs/embedding.md.
#pragma once

// The runtime first: on HIP, strata/arch/atomic.hpp calls atomicAdd & co. from templates with
// fundamental argument types (no ADL), so hip_runtime must be declared before it is parsed.
// (strata/strata.hpp includes arch/atomic.hpp before the runtime; reported to the lead.)
#include "strata/runtime/runtime.hpp"
#include "strata/strata.hpp"

#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/backward.hpp"
#include "strata/ops/embedding/backward_host.hpp"
#include "strata/ops/embedding/config.hpp"
#include "strata/ops/embedding/forward.hpp"
#include "strata/ops/embedding/host.hpp"
#include "strata/ops/embedding/optimizer.hpp"
#include "strata/ops/embedding/types.hpp"
