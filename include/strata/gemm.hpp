// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/gemm.hpp -- the GEMM operator: kernel template, shipped configurations, host entry, reference.
#pragma once

#include "strata/strata.hpp"
#include "strata/ops/gemm/kernel.hpp"
#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/reference.hpp"
#include "strata/ops/gemm/gemm.hpp"
#include "strata/ops/gemm/stream_k.hpp"
