// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/hip/runtime.hpp -- the HIP backend of strata/runtime/runtime.hpp: stream,
// device_buffer, copies, device queries, launch, and the device context kernels receive.
#pragma once

#include "strata/config/config.hpp"

#if !STRATA_BACKEND_HIP
#error "strata/runtime/hip/runtime.hpp is the HIP backend: compile this translation unit with hipcc (include <strata/strata.hpp>)"
#endif

#include "strata/runtime/hip/device.hpp"
#include "strata/runtime/hip/device_context.hpp"
#include "strata/runtime/hip/error.hpp"
#include "strata/runtime/hip/launch.hpp"
#include "strata/runtime/hip/memory.hpp"
#include "strata/runtime/hip/stream.hpp"
