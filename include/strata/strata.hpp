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
#include "strata/numeric/numeric.hpp"
