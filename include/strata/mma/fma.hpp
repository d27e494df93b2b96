// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/fma.hpp -- the scalar FMA atom: every target, any warp size, no tensor cores.
//
// Each lane does d = a * b + c on its own values, so the atom needs no exchange between lanes and
// runs the same on the GPU and the emulator (no warp.gather). Seen as a warp-wide atom, so that the
// warp tile (warp_tile.hpp) can tile it like any other, it is an M = warp_size, N = 1, K = 1 product:
// lane l owns A(l, 0) and C(l, 0), and every lane holds a copy of the single B(0, 0)
// (b_broadcast: the one operand layout that is a copy per lane rather than a partition).
//
// Arithmetic: A and B widened to Acc, then a * b + c in Acc. Whether the compiler contracts that to
// one fused multiply-add depends on the backend (nvcc and clang device code do by default; x86-64
// host code without FMA instructions does not), so float results may differ by one rounding.
#pragma once

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"

namespace strata::mma {

template <class T = float, class Acc = T, int WarpSize = 32>
struct fma_atom {
  static_assert(WarpSize == 32 || WarpSize == 64, "warps have 32 or 64 lanes");
  static constexpr const char* name = "fma";
  static constexpr int M = WarpSize, N = 1, K = 1;
  static constexpr int warp_size = WarpSize;
  using a_type = T;
  using b_type = T;
  using c_type = Acc;
  static constexpr int a_values = 1, b_values = 1, c_values = 1;
  static constexpr bool b_broadcast = true;
  using a_fragment = fragment<a_type, 1>;
  using b_fragment = fragment<b_type, 1>;
  using c_fragment = fragment<c_type, 1>;
  /// Runs on each lane by itself: no warp-wide exchange on any backend.
  static constexpr bool per_lane = true;
  static constexpr arch::atom_family family = arch::atom_family::fma;
  template <class Target>
  static constexpr bool available_on = Target::atoms.has(family) && Target::warp_size == WarpSize;
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "fma_atom<T, Acc, WarpSize>: WarpSize must be the kernel target's warp "
                                        "size (use fma_atom<T, Acc, Ctx::warp_size>)");
  }

  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int) { return {lane, 0}; }
  STRATA_HOST_DEVICE static constexpr coord b_coord(int, int) { return {0, 0}; }
  STRATA_HOST_DEVICE static constexpr coord c_coord(int lane, int) { return {lane, 0}; }

  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void lane_mma(const a_fragment& a, const b_fragment& b,
                                                             const c_fragment& c, c_fragment& d) {
    d.v[0] = static_cast<Acc>(a.v[0]) * static_cast<Acc>(b.v[0]) + c.v[0];
  }
};

}  // namespace strata::mma
