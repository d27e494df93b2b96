// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/emulator.hpp -- the host SIMT emulator: run GPU kernels on the CPU.
#pragma once

#include "strata/emulator/context.hpp"
#include "strata/emulator/launch.hpp"
#include "strata/emulator/options.hpp"
#include "strata/emulator/statistics.hpp"
