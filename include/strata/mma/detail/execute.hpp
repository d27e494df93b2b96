// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/detail/execute.hpp -- one warp-wide MMA atom, on the device or on the emulator.
//
// Device: the atom's own device_mma() (inline PTX or an AMDGCN builtin) on the lane's registers.
// Emulator: every lane hands warp.gather() pointers to its fragments; the last lane to arrive
// gathers A, B and C from all lanes with the atom's layout maps, computes D = A*B + C and scatters
// D back with the same maps. The layout tables are therefore the one definition of the fragments.
//
// Emulated arithmetic:
//  - floating-point atoms: operands widened to float exactly (f16, bf16, fp8 and tf32 products are
//    exact in float: at most 11 + 11 significant bits), then D = C + sum_k A(m,k)*B(k,n) accumulated
//    in float, k ascending, rounding to nearest each step. The hardware's internal order and
//    rounding are not documented; results agree with it to within the fp32-accumulation bound
//    |D - exact| <= (K+1) * 2^-23 * (|C| + sum_k |A*B|) that the tests use.
//  - integer atoms: exact products, sums modulo 2^32 (two's complement wraparound), which is what
//    mma.sync without .satfinite and the MFMA i8 instructions do; bit-exact whatever the order.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"

#if STRATA_BACKEND_HOST || !STRATA_DEVICE_PASS
#include <string>

#include "strata/runtime/error.hpp"
#endif

namespace strata::mma::detail {

/// The pointers one lane contributes to an emulated MMA. c and d may alias (accumulate in place).
template <class Atom>
struct lane_io {
  const typename Atom::a_fragment* a;
  const typename Atom::b_fragment* b;
  const typename Atom::c_fragment* c;
  typename Atom::c_fragment* d;
};

template <class Atom>
inline constexpr bool integer_atom = std::is_integral_v<typename Atom::c_type>;

/// An operand element as the arithmetic sees it: float for float atoms, int32 for integer atoms.
/// An atom may define widen_a / widen_b to say how the hardware reads its operands (tf32).
template <class Atom, class T>
STRATA_HOST_DEVICE constexpr auto widen(const T& x) {
  if constexpr (integer_atom<Atom>) return static_cast<std::int32_t>(x);
  else return static_cast<float>(x);
}
template <class Atom>
STRATA_HOST_DEVICE constexpr auto widen_a(const typename Atom::a_type& x) {
  if constexpr (requires { Atom::widen_a(x); }) return Atom::widen_a(x);
  else return widen<Atom>(x);
}
template <class Atom>
STRATA_HOST_DEVICE constexpr auto widen_b(const typename Atom::b_type& x) {
  if constexpr (requires { Atom::widen_b(x); }) return Atom::widen_b(x);
  else return widen<Atom>(x);
}

#if !STRATA_DEVICE_PASS
/// The emulator's body of an atom: runs once per warp, on the last lane to arrive.
template <class Atom>
void emulate(void* const* io, int lanes) {
  static_assert(check_layouts<Atom>(),
                "an MMA atom's fragment layout must own every element of A, B and C exactly once");
  constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  using acc = std::conditional_t<integer_atom<Atom>, std::int32_t, float>;
  if (lanes != Atom::warp_size)
    throw emulator_error(std::string("MMA atom ") + Atom::name + " needs all " + std::to_string(Atom::warp_size) +
                         " lanes of the warp, but this warp has " + std::to_string(lanes) +
                         " (make the block size a multiple of the warp size)");
  acc A[M][K], B[K][N], C[M][N];
  for (int l = 0; l < lanes; ++l) {
    const auto& p = *static_cast<const lane_io<Atom>*>(io[l]);
    for (int v = 0; v < Atom::a_values; ++v) {
      const coord x = Atom::a_coord(l, v);
      A[x.row][x.col] = widen_a<Atom>((*p.a)[v]);
    }
    for (int v = 0; v < Atom::b_values; ++v) {
      const coord x = Atom::b_coord(l, v);
      B[x.row][x.col] = widen_b<Atom>((*p.b)[v]);
    }
    for (int v = 0; v < Atom::c_values; ++v) {
      const coord x = Atom::c_coord(l, v);
      C[x.row][x.col] = static_cast<acc>((*p.c)[v]);
    }
  }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      if constexpr (integer_atom<Atom>) {
        std::uint32_t s = static_cast<std::uint32_t>(C[m][n]);
        for (int k = 0; k < K; ++k) s += static_cast<std::uint32_t>(A[m][k] * B[k][n]);  // |a*b| <= 2^14
        C[m][n] = static_cast<std::int32_t>(s);  // modular conversion (C++20)
      } else {
        float s = C[m][n];
        for (int k = 0; k < K; ++k) s += A[m][k] * B[k][n];
        C[m][n] = s;
      }
    }
  for (int l = 0; l < lanes; ++l) {
    const auto& p = *static_cast<const lane_io<Atom>*>(io[l]);
    for (int v = 0; v < Atom::c_values; ++v) {
      const coord x = Atom::c_coord(l, v);
      (*p.d)[v] = static_cast<typename Atom::c_type>(C[x.row][x.col]);
    }
  }
}
#endif

/// D = A*B + C for one warp-wide atom; d may be the same object as c.
template <class Atom, class Warp>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void execute(const Warp& warp, const typename Atom::a_fragment& a,
                                                   const typename Atom::b_fragment& b,
                                                   const typename Atom::c_fragment& c, typename Atom::c_fragment& d) {
  if constexpr (std::remove_cvref_t<Warp>::emulated) {
#if !STRATA_DEVICE_PASS
    static_assert(std::remove_cvref_t<Warp>::size() == Atom::warp_size,
                  "this MMA atom is defined for a different warp size than the kernel's target: mma.sync atoms "
                  "need 32-lane warps (sm80/sm90a/sm100a), MFMA atoms need 64-lane wavefronts (gfx90a/gfx942)");
    lane_io<Atom> mine{&a, &b, &c, &d};
    warp.gather(Atom::name, &mine, &emulate<Atom>);
#endif
  } else {
    (void)warp;
#if STRATA_DEVICE_PASS
    static_assert(arch::current_warp_size == Atom::warp_size,
                  "this MMA atom is defined for a different warp size than the GPU this pass compiles for: "
                  "mma.sync atoms need NVIDIA's 32-lane warps, MFMA atoms need CDNA's 64-lane wavefronts");
    static_assert(Atom::template available_on<arch::current>,
                  "this MMA atom's instruction does not exist on the GPU this pass compiles for (see the "
                  "atom's available_on and the arch descriptor's `atoms`); pick an atom the target lists");
    Atom::device_mma(a, b, c, d);
#endif
  }
}

}  // namespace strata::mma::detail
