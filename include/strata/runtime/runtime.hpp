// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/runtime.hpp -- streams, device buffers, copies, device properties and launch for the
// backend this translation unit is compiled for. The same names exist on every backend:
//
//   strata::stream                      an in-order queue of work; stream::synchronize()
//   strata::device_buffer<T>            RAII device allocation of `count` elements
//   strata::copy_to_device / copy_to_host / copy_on_device(stream&, dst, src, count)   asynchronous
//   strata::zero_on_device(stream&, dst, count)                                        asynchronous
//   strata::device_count(), strata::get_device_properties(device)
//   strata::launch(stream&, launch_shape, kernel, params)   asynchronous, allocation-free
//
// Host emulator: strata/runtime/host/, CUDA: strata/runtime/cuda/, HIP: strata/runtime/hip/.
#pragma once

#include "strata/config/config.hpp"
#include "strata/runtime/chiplet_calibration.hpp"
#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"
#include "strata/runtime/workspace.hpp"

#if STRATA_BACKEND_CUDA
#include "strata/runtime/cuda/runtime.hpp"
#elif STRATA_BACKEND_HIP
#include "strata/runtime/hip/runtime.hpp"
#else
#include "strata/runtime/host/runtime.hpp"
#endif
