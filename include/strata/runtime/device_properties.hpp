// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/device_properties.hpp -- what the runtime reports about a device, on every backend.
#pragma once

#include <cstddef>
#include <string>

namespace strata {

struct device_properties {
  std::string name;                       // "NVIDIA H200", "AMD Instinct MI300X", "Strata host emulator"
  std::string arch;                       // "sm_90", "gfx942", "host"
  int multiprocessor_count = 0;           // SMs or CUs (emulator: worker threads)
  int warp_size = 32;
  std::size_t shared_memory_per_block = 0;  // largest opt-in shared memory per block, bytes
  std::size_t l2_bytes = 0;                 // total L2 as reported by the runtime
  int chiplets = 1;                         // chiplets presented as this device (XCDs, dies)
  int units_per_chiplet = 0;                // multiprocessor_count / chiplets
};

}  // namespace strata
