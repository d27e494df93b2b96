// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/runtime.hpp -- the CUDA backend of strata/runtime/runtime.hpp: stream,
// device_buffer, copies, device queries, launch, and the device context kernels receive.
#pragma once

#include "strata/config/config.hpp"

#if !STRATA_BACKEND_CUDA
#error "strata/runtime/cuda/runtime.hpp is the CUDA backend: compile this translation unit with nvcc (include <strata/strata.hpp>)"
#endif

#include "strata/runtime/cuda/device.hpp"
#include "strata/runtime/cuda/device_context.hpp"
#include "strata/runtime/cuda/error.hpp"
#include "strata/runtime/cuda/launch.hpp"
#include "strata/runtime/cuda/memory.hpp"
#include "strata/runtime/cuda/stream.hpp"
