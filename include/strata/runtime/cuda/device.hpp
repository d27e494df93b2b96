// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/device.hpp -- device_count() and get_device_properties() on CUDA: the shared
// implementation in runtime/gpu/device.hpp over the CUDA table (runtime/cuda/api.hpp).
#pragma once

#include "strata/runtime/cuda/api.hpp"
#include "strata/runtime/gpu/device.hpp"
