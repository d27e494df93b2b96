// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/swapped.hpp -- swapped<Atom>: the atom with its operands exchanged, D = A B computed
// by the instruction as D^T = B^T A^T.
//
//   using S = strata::mma::swapped<strata::mma::cdna_16x16x16_f32bf16>;
//   mma::mma<S>(warp, a, b, c);   // runs v_mfma_f32_16x16x16bf16_1k(b, a, c)
//
// Why. An atom's C layout is fixed by the hardware, and where it is not its A layout a product
// P = f(Q K^T) cannot feed P V from registers (attention's P, mma::c_is_a). For MFMA 16x16x16 a lane
// holds C column lane % 16 (rows 4 (lane / 16) + v), but A row lane % 16 (columns 4 (lane / 16) + v):
// the C of S is the layout of the A of S^T. Computing S^T = K Q^T -- the same instruction with its
// operands exchanged -- leaves each lane holding row lane % 16 of S at columns 4 (lane / 16) + v,
// which is the A layout: the "transposed formulation" (FlashAttention's CDNA ports compute S^T = K Q^T
// and O^T = V^T P^T for this reason). As an atom: A's element (i, k) goes where the instruction takes
// B's element (k, i), and so on, so every table is the base's transposed:
//   a_coord(l, v) = base::b_coord(l, v)^T,  b_coord(l, v) = base::a_coord(l, v)^T,
//   c_coord(l, v) = base::c_coord(l, v)^T,
// and the registers are unchanged: the instruction receives this atom's B fragment as its A and
// this atom's A fragment as its B. Kernels keep their D = A B shape and layout-generic code
// (accumulator_rows, vector_fragments, warp_tile); only the tables differ.
//
// On the emulator the product runs from these tables (mma/detail/execute.hpp) like any atom's;
// test/mma/cdna_test.cpp checks them against the base atom run on the exchanged fragments.
#pragma once

#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"

namespace strata::mma {

namespace detail {
/// k_per_lane (vector_fragments.hpp) where the base atom has it: an MFMA layout, whose square blocks
/// give the swapped atom the base's own A and B tables (checked in swapped).
template <class Atom>
struct swapped_k_per_lane {};
template <class Atom>
  requires requires { Atom::k_per_lane; }
struct swapped_k_per_lane<Atom> {
  static constexpr int k_per_lane = Atom::k_per_lane;
};
/// Whether Atom's B table transposed is its A table (and so its A transposed its B).
template <class Atom>
constexpr bool swap_keeps_operand_tables() {
  if constexpr (Atom::a_values != Atom::b_values) {
    return false;
  } else {
    for (int l = 0; l < Atom::warp_size; ++l)
      for (int v = 0; v < Atom::a_values; ++v) {
        const coord a = Atom::a_coord(l, v), b = Atom::b_coord(l, v);
        if (a.row != b.col || a.col != b.row) return false;
      }
    return true;
  }
}
}  // namespace detail

template <class Atom>
struct swapped : detail::swapped_k_per_lane<Atom> {
  using base = Atom;
  static constexpr int M = Atom::N, N = Atom::M, K = Atom::K;
  static constexpr int warp_size = Atom::warp_size;
  static constexpr int a_values = Atom::b_values, b_values = Atom::a_values, c_values = Atom::c_values;
  static constexpr bool b_broadcast = false;
  static_assert(!Atom::b_broadcast, "mma::swapped: the base atom's B must be partitioned over the lanes, as its A is");
  using a_type = typename Atom::b_type;
  using b_type = typename Atom::a_type;
  using c_type = typename Atom::c_type;
  using a_fragment = typename Atom::b_fragment;
  using b_fragment = typename Atom::a_fragment;
  using c_fragment = typename Atom::c_fragment;
  static constexpr auto family = Atom::family;
  static constexpr const char* name = Atom::name;
  template <class Target>
  static constexpr bool available_on = Atom::template available_on<Target>;
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    Atom::template require_target<Target>();
  }

  STRATA_HOST_DEVICE static constexpr coord a_coord(int lane, int v) { return transposed(Atom::b_coord(lane, v)); }
  STRATA_HOST_DEVICE static constexpr coord b_coord(int lane, int v) { return transposed(Atom::a_coord(lane, v)); }
  STRATA_HOST_DEVICE static constexpr coord c_coord(int lane, int v) { return transposed(Atom::c_coord(lane, v)); }

  STRATA_DEVICE static void device_mma(const a_fragment& a, const b_fragment& b, const c_fragment& c, c_fragment& d) {
    Atom::device_mma(b, a, c, d);
  }

 private:
  STRATA_HOST_DEVICE static constexpr coord transposed(coord x) { return {x.col, x.row}; }
  static_assert(!requires { Atom::k_per_lane; } || detail::swap_keeps_operand_tables<Atom>(),
                "mma::swapped: k_per_lane is only carried over where the swapped A and B tables are the base's");
  static_assert(!requires(typename Atom::a_fragment& f) { Atom::prepare(f); },
                "mma::swapped: atoms whose operands are rewritten after loading (prepare) are not supported");
};

}  // namespace strata::mma
