// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/accumulator_rows.hpp -- the rows of an atom's accumulator as a lane sees them, for
// row-wise work done in registers (a softmax over S = Q K^T, a per-row rescale of O).
//
//   using rows = strata::mma::accumulator_rows<Atom>;
//   rows::count            distinct rows each lane holds in one atom's C fragment (slots)
//   rows::slot_of(v)       the slot of C value v
//   rows::row_of(lane, s)  the row (0 .. M) of slot s in that lane
//   rows::reduce_max(warp, x) / reduce_sum(warp, x)
//                          the max / sum of x over the lanes that share the caller's row of a slot
//                          (xor shuffles over rows::lane_bits; none for the scalar FMA atom)
//   c_is_a<Atom>           the C fragments of K / N neighbouring atoms, in order, are exactly one A
//                          fragment (so P = softmax(S) is the A operand of P V without a shuffle)
//
// Everything is derived from the atom's c_coord / a_coord tables at compile time and checked there
// (`valid`): every lane holds the same pattern of rows; the lanes sharing a row differ exactly in the
// bits of lane_bits; a row never appears in two slots. For mma.sync m16n8: rows g and g + 8 (two
// slots), shared by the 4 lanes of a quad (bits 0, 1). For MFMA 16x16: four rows per lane, shared by
// 16 lanes (bits 0..3). For the FMA atom: one row per lane, shared by none.
#pragma once

#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"

namespace strata::mma {

template <class Atom>
struct accumulator_rows {
  static constexpr int lanes = Atom::warp_size;
  static constexpr int values = Atom::c_values;

 private:
  STRATA_HOST_DEVICE static constexpr int row(int lane, int v) { return Atom::c_coord(lane, v).row; }
  STRATA_HOST_DEVICE static constexpr int first_with_row(int v) {  // the first value of lane 0 on v's row
    for (int w = 0; w < v; ++w)
      if (row(0, w) == row(0, v)) return w;
    return v;
  }
  STRATA_HOST_DEVICE static constexpr int count_rows() {
    int n = 0;
    for (int v = 0; v < values; ++v) n += first_with_row(v) == v;
    return n;
  }
  STRATA_HOST_DEVICE static constexpr int compute_slot(int v) {
    int s = 0;
    for (int w = 0; w < first_with_row(v); ++w) s += first_with_row(w) == w;
    return s;
  }
  STRATA_HOST_DEVICE static constexpr int compute_lane_bits() {
    int bits = 0;
    for (int b = 1; b < lanes; b <<= 1) {
      bool same = true;
      for (int l = 0; l < lanes; ++l)
        for (int v = 0; v < values; ++v) same = same && row(l ^ b, v) == row(l, v);
      if (same) bits |= b;
    }
    return bits;
  }
  STRATA_HOST_DEVICE static constexpr int popcount(int x) {
    int n = 0;
    for (; x; x &= x - 1) ++n;
    return n;
  }
  // Linear in lanes x values (clang's constant evaluator counts steps: a pairwise check over 64-lane
  // MFMA layouts exceeded its limit).
  STRATA_HOST_DEVICE static constexpr bool check() {
    const int bits = compute_lane_bits();
    // The same pattern of shared rows in every lane.
    for (int l = 0; l < lanes; ++l)
      for (int v = 0; v < values; ++v)
        for (int w = 0; w < values; ++w)
          if ((row(l, v) == row(l, w)) != (row(0, v) == row(0, w))) return false;
    // (slot, lane group) -> row is a bijection onto the atom's M rows: as many pairs as rows, and
    // every row held somewhere. Then a row lives in one slot of one lane group only.
    if (count_rows() * (lanes >> popcount(bits)) != Atom::M) return false;
    for (int r = 0; r < Atom::M; ++r) {
      bool held = false;
      for (int l = 0; l < lanes && !held; ++l)
        for (int v = 0; v < values && !held; ++v) held = row(l, v) == r;
      if (!held) return false;
    }
    return true;
  }

 public:
  static constexpr int count = count_rows();
  static constexpr int lane_bits = compute_lane_bits();
  static constexpr bool valid = check();
  static_assert(valid, "accumulator_rows: the atom's accumulator rows are not a slot x lane-group partition");

  /// The slots and each slot's first value as tables, so that an unrolled loop indexes them with a
  /// constant (a call of the constexpr search in device code need not fold, and a register array
  /// indexed by a run-time slot goes to local memory).
  struct slot_tables {
    int slot[values];
    int first[values];  // first value of slot s (entries past count unused)
  };
  STRATA_HOST_DEVICE static constexpr slot_tables make_tables() {
    slot_tables t{};
    for (int v = 0; v < values; ++v) {
      t.slot[v] = compute_slot(v);
      if (first_with_row(v) == v) t.first[t.slot[v]] = v;
    }
    return t;
  }

  STRATA_HOST_DEVICE static constexpr int slot_of(int v) {
    constexpr slot_tables t = make_tables();
    return t.slot[v];
  }
  STRATA_HOST_DEVICE static constexpr int row_of(int lane, int slot) {
    constexpr slot_tables t = make_tables();
    return Atom::c_coord(lane, t.first[slot]).row;
  }
  /// True in one lane of each row group (the lowest): the lane that writes a per-row result.
  STRATA_HOST_DEVICE static constexpr bool row_leader(int lane) { return (lane & lane_bits) == 0; }

  template <class Warp>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static float reduce_max(Warp& warp, float x) {
    STRATA_UNROLL
    for (int b = lanes / 2; b > 0; b >>= 1)
      if (lane_bits & b) {
        const float o = warp.shfl_xor(x, b);
        x = o > x ? o : x;
      }
    return x;
  }
  template <class Warp>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static float reduce_sum(Warp& warp, float x) {
    STRATA_UNROLL
    for (int b = lanes / 2; b > 0; b >>= 1)
      if (lane_bits & b) x += warp.shfl_xor(x, b);
    return x;
  }
};

namespace detail {
template <class Atom>
constexpr bool c_is_a_check() {
  if constexpr (Atom::K % Atom::N != 0 || Atom::a_values != Atom::c_values * (Atom::K / Atom::N)) {
    return false;
  } else {
    for (int l = 0; l < Atom::warp_size; ++l)
      for (int v = 0; v < Atom::a_values; ++v) {
        const coord c = Atom::c_coord(l, v % Atom::c_values);
        const coord a = Atom::a_coord(l, v);
        if (a.row != c.row || a.col != c.col + Atom::N * (v / Atom::c_values)) return false;
      }
    return true;
  }
}
}  // namespace detail

/// Whether value v of an A fragment (M x K) is value v % c_values of the C fragment of atom
/// v / c_values among the K / N atoms that cover the same K columns: true for mma.sync m16n8k16
/// (PTX ISA 9.7.14.5.8: A's a0..a7 at (g + 8 ((v >> 1) & 1), 2t + (v & 1) + 8 (v >> 2)) are C's
/// c0..c3 of two neighbouring m16n8 atoms), false for m16n8k8 tf32, m16n8k32 8-bit and MFMA.
template <class Atom>
inline constexpr bool c_is_a = detail::c_is_a_check<Atom>();

}  // namespace strata::mma
