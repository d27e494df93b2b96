// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/mma_op.hpp -- strata::mma::mma<Atom>(warp, a, b, c): c = a * b + c for one atom.
//
// `warp` is ctx.warp() of any backend's context. Under the emulator's context (Warp::emulated) the
// atom runs from its layout tables through warp.gather(); under the CUDA / HIP contexts it is the
// atom's instruction. Every lane of the warp must call it (it is a warp collective), except for
// per-lane atoms (fma_atom), which each lane runs by itself.
//
// Target checks: on a device pass the atom must exist on the GPU being compiled for (static_assert).
// The kernel's own target descriptor is known to the context, not to the warp: warp_tile checks it
// with Atom::require_target<Ctx::target>(), and kernels calling mma() directly can do the same.
//
// Multi-architecture builds: a kernel for a newer target (fp8 on sm90a, gfx942) is also compiled by
// the older passes of the same build (sm_80, gfx90a), where its instruction does not exist. Such a
// kernel tests available_in_this_pass<Atom> and, where false, calls unavailable_in_this_pass()
// instead of its body (a launch on that older GPU then fails with a device trap, never a wrong result).
#pragma once

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/detail/execute.hpp"

namespace strata::mma {

/// False only in a device pass for a GPU that lacks Atom's instruction; true on the host and the
/// emulator (which run every atom).
template <class Atom>
inline constexpr bool available_in_this_pass = !STRATA_DEVICE_PASS || Atom::template available_on<arch::current>;

/// Stops the kernel: it was launched on a GPU older than its target (see above).
STRATA_HOST_DEVICE inline void unavailable_in_this_pass() {
#if STRATA_CUDA_DEVICE_PASS
  __trap();
#elif STRATA_HIP_DEVICE_PASS
  __builtin_trap();
#endif
}

template <class Atom, class Warp>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void mma(const Warp& warp, const typename Atom::a_fragment& a,
                                               const typename Atom::b_fragment& b, typename Atom::c_fragment& c) {
  if constexpr (requires { Atom::per_lane; }) {
    (void)warp;
    Atom::lane_mma(a, b, c, c);
  } else {
    detail::execute<Atom>(warp, a, b, c, c);
  }
}

/// The same with a separate result: d = a * b + c (d may be c).
template <class Atom, class Warp>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void mma(const Warp& warp, const typename Atom::a_fragment& a,
                                               const typename Atom::b_fragment& b, const typename Atom::c_fragment& c,
                                               typename Atom::c_fragment& d) {
  if constexpr (requires { Atom::per_lane; }) {
    (void)warp;
    Atom::lane_mma(a, b, c, d);
  } else {
    detail::execute<Atom>(warp, a, b, c, d);
  }
}

}  // namespace strata::mma
