// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/copy.hpp -- every copy atom: vector copies with predication, the block-wide tile copy,
// cp.async (sm80+), ldmatrix (sm80+), AMD buffer loads (gfx90a+) and shared-memory vector loads.
#pragma once

#include "strata/copy/buffer.hpp"
#include "strata/copy/cp_async.hpp"
#include "strata/copy/ldmatrix.hpp"
#include "strata/copy/tile.hpp"
#include "strata/copy/vector.hpp"
