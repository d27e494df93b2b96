// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream HIP source linking strata::hip, compiled by hipcc (as the C++ compiler) or CMake's HIP
// language: the offload targets and the HIP runtime must come from the target alone.
#include "gpu.hpp"

#if !defined(STRATA_BACKEND_HIP) || !STRATA_BACKEND_HIP
#error "hip.cpp was not compiled as a HIP translation unit"
#endif

int main() { return run_square("HIP"); }
