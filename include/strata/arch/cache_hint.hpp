// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/cache_hint.hpp -- loads and stores that tell the caches the data is used once.
//
// Streaming data (a GEMM's output, an embedding table scanned once) should not evict what other
// blocks of the chiplet reuse from its L2. CUDA: ld/st.global.cs (evict-first); HIP: non-temporal
// loads and stores; the host: plain accesses.
#pragma once

#include "strata/config/config.hpp"

namespace strata {

template <class T>
STRATA_HOST_DEVICE T load_streaming(const T* p) {
#if STRATA_CUDA_DEVICE_PASS
  return __ldcs(p);
#elif STRATA_HIP_DEVICE_PASS
  return __builtin_nontemporal_load(p);
#else
  return *p;
#endif
}

template <class T>
STRATA_HOST_DEVICE void store_streaming(T* p, T v) {
#if STRATA_CUDA_DEVICE_PASS
  __stcs(p, v);
#elif STRATA_HIP_DEVICE_PASS
  __builtin_nontemporal_store(v, p);
#else
  *p = v;
#endif
}

}  // namespace strata
