// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/cuda/tensor_map.hpp -- a TMA tensor map (copy/tma.hpp) encoded by the CUDA driver.
//
// cuTensorMapEncodeTiled is a driver API call; the runtime hands out the driver's entry point
// (cudaGetDriverEntryPointByVersion), so a CUDA build links cudart only, as before. The map is
// encoded for copying: elements as unsigned integers of their size (the TMA moves bytes; floating
// point types matter only for NaN fill, unused here), zero fill out of bounds, no interleave,
// 128-byte L2 promotion. Included by copy/tma.hpp on CUDA builds.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "strata/copy/tma.hpp"
#include "strata/runtime/error.hpp"

namespace strata::copy::detail {

inline tensor_map encode_tensor_map(const tma_tensor& t) {
  using encode_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static encode_fn encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw backend_error("cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)", int(e),
                          std::string("the CUDA driver offers no cuTensorMapEncodeTiled (a driver for CUDA 12 or "
                                      "later is needed for TMA): ") + cudaGetErrorString(e));
    return reinterpret_cast<encode_fn>(fn);
  }();
  const CUtensorMapDataType type = t.element == tma_element::f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : t.element_bytes == 1         ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : t.element_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                   : t.element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                          : CU_TENSOR_MAP_DATA_TYPE_INT64;
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  for (int d = 0; d < t.rank; ++d) {
    dims[d] = cuuint64_t(t.dims[d]);
    box[d] = cuuint32_t(t.box[d]);
    element_strides[d] = 1;
    if (d > 0) strides[d - 1] = cuuint64_t(t.strides[d]);
  }
  const CUtensorMapSwizzle swizzle = t.swizzle == tma_swizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : t.swizzle == tma_swizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : t.swizzle == tma_swizzle::b32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                                     : CU_TENSOR_MAP_SWIZZLE_NONE;
  static_assert(sizeof(CUtensorMap) == sizeof(tensor_map) && alignof(CUtensorMap) <= alignof(tensor_map));
  tensor_map m{};
  const CUresult r = encode(reinterpret_cast<CUtensorMap*>(&m), type, cuuint32_t(t.rank), const_cast<void*>(t.base), dims,
                            strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw backend_error("cuTensorMapEncodeTiled", int(r), "the driver refused the tensor map (rank " +
                                                            std::to_string(t.rank) + ")");
  return m;
}

}  // namespace strata::copy::detail
