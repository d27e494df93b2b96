// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/device.hpp -- device_count() and get_device_properties() on HIP: the shared
// implementation in runtime/gpu/device.hpp over the HIP table (runtime/hip/api.hpp).
#pragma once

#include "strata/runtime/hip/api.hpp"
#include "strata/runtime/gpu/device.hpp"
