// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/arch/arch.hpp -- every target descriptor, and `current`: the target of this compile pass.
#pragma once

#include "strata/arch/dispatch.hpp"
#include "strata/arch/gfx90a.hpp"
#include "strata/arch/gfx942.hpp"
#include "strata/arch/gfx950.hpp"
#include "strata/arch/host.hpp"
#include "strata/arch/sm100a.hpp"
#include "strata/arch/sm80.hpp"
#include "strata/arch/sm90a.hpp"
#include "strata/arch/target.hpp"

namespace strata::arch {

static_assert(target<sm80> && target<sm90a> && target<sm100a> && target<gfx90a> && target<gfx942> &&
              target<gfx950> && target<host>);

/// The target of the code being compiled right now. On the host pass of a CUDA or HIP build (and on
/// the host backend) this is `host`; kernels that need a specific target name it explicitly.
#if STRATA_CUDA_DEVICE_PASS && (__CUDA_ARCH__ >= 1000)
using current = sm100a;
#elif STRATA_CUDA_DEVICE_PASS && (__CUDA_ARCH__ >= 900)
using current = sm90a;
#elif STRATA_CUDA_DEVICE_PASS
using current = sm80;
#elif STRATA_HIP_DEVICE_PASS && defined(__gfx950__)
using current = gfx950;
#elif STRATA_HIP_DEVICE_PASS && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
using current = gfx942;
#elif STRATA_HIP_DEVICE_PASS
using current = gfx90a;
#else
using current = host;
#endif

/// Warp size of the code being compiled (device pass) or of the host target.
inline constexpr int current_warp_size = current::warp_size;

}  // namespace strata::arch
