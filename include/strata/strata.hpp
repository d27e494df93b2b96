// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/strata.hpp -- the umbrella header: everything a kernel or a host program needs.
#pragma once

#include "strata/arch/arch.hpp"
#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"
#include "strata/config/version.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/hierarchy/levels.hpp"
#include "strata/runtime/runtime.hpp"
#include "strata/numeric/dtype.hpp"
#include "strata/numeric/numeric.hpp"
// The parts kernels are built from (issue: tiles, layouts, copy and MMA atoms, pipelines).
#include "strata/copy/copy.hpp"
#include "strata/epilogue/epilogue.hpp"
#include "strata/mma/mma.hpp"
#include "strata/pipeline/pipeline.hpp"
#include "strata/tensor/tensor.hpp"
