// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream .cu source linking strata::cuda: nvcc must get C++20 and the CUDA targets from the target
// alone, and the program must link against the CUDA runtime it brings.
#include "gpu.hpp"

#if !defined(STRATA_BACKEND_CUDA) || !STRATA_BACKEND_CUDA
#error "cuda.cu was not compiled as a CUDA translation unit"
#endif

int main() { return run_square("CUDA"); }
