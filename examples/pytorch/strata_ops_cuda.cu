// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/pytorch/strata_ops_cuda.cu -- the CUDA build of strata_ops.cpp (see its header comment).
#define STRATA_TORCH_CUDA 1
#include "strata_ops.cpp"
