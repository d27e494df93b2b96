// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/numeric/numeric.hpp -- umbrella for Strata's narrow floating-point storage types:
// f16, bf16, f8_e4m3, f8_e5m2 (bit-exact on every backend), the overflow rule and the traits.
#pragma once

#include "strata/numeric/bf16.hpp"
#include "strata/numeric/f16.hpp"
#include "strata/numeric/f8.hpp"
#include "strata/numeric/overflow.hpp"
#include "strata/numeric/traits.hpp"
