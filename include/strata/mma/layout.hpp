// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/layout.hpp -- how an MMA atom spreads its operands over the lanes of a warp.
//
// Every atom (fma.hpp, mma_sync.hpp, mfma.hpp) declares, as constexpr data:
//   M, N, K, warp_size                  the shape D(MxN) = A(MxK) * B(KxN) + C(MxN) and the lanes that run it
//   a_type, b_type, c_type              element types of the operands (C and D share c_type)
//   a_values, b_values, c_values        elements each lane holds
//   a_coord(lane, v) -> {row=m, col=k}  which element of A is value v of that lane's A fragment
//   b_coord(lane, v) -> {row=k, col=n}
//   c_coord(lane, v) -> {row=m, col=n}  (also D)
//   b_broadcast                         true if every lane holds all of B (the scalar FMA atom)
//   family, name, available_on<Target>
//
// Value v is the v-th element of the lane's fragment, lowest first: the order of the elements in the
// instruction's registers (low half / low byte first). So a fragment is a plain array, device code
// reinterprets it as the instruction's registers, and the emulator gathers and scatters with the
// same maps. These maps are the only lane arithmetic in Strata (STYLE.md, habit 1).
#pragma once

#include "strata/config/config.hpp"

namespace strata::mma {

/// A (row, column) position inside one operand tile: (m, k) for A, (k, n) for B, (m, n) for C/D.
struct coord {
  int row;
  int col;
  friend constexpr bool operator==(coord, coord) = default;
};

enum class operand { a, b, c };

/// The per-lane values of one operand: a plain array in the layout's value order.
template <class T, int N>
struct fragment {
  using value_type = T;
  static constexpr int size = N;
  T v[N];
  STRATA_HOST_DEVICE constexpr T& operator[](int i) { return v[i]; }
  STRATA_HOST_DEVICE constexpr const T& operator[](int i) const { return v[i]; }
};

/// Whether at(t, v) for threads t < Threads and values v < Values owns each element of a Rows x Cols
/// tile exactly once: every operand map of the warp atoms, and wgmma's accumulator map over its 128
/// threads.
template <int Rows, int Cols, int Threads, int Values, class At>
constexpr bool owns_each_once(At at) {
  if (Threads * Values != Rows * Cols) return false;
  bool seen[Rows * Cols] = {};
  for (int t = 0; t < Threads; ++t)
    for (int v = 0; v < Values; ++v) {
      const coord c = at(t, v);
      if (c.row < 0 || c.row >= Rows || c.col < 0 || c.col >= Cols || seen[c.row * Cols + c.col]) return false;
      seen[c.row * Cols + c.col] = true;
    }
  return true;
}

/// One operand's layout of an atom, with the checks every atom must pass.
template <class Atom, operand Op>
struct fragment_layout {
  static constexpr int rows = Op == operand::b ? Atom::K : Atom::M;
  static constexpr int cols = Op == operand::a ? Atom::K : Atom::N;
  static constexpr int lanes = Atom::warp_size;
  static constexpr int values = Op == operand::a ? Atom::a_values : Op == operand::b ? Atom::b_values : Atom::c_values;
  /// Every lane holds the whole operand (scalar FMA's B): the layout is a copy per lane, not a partition.
  static constexpr bool broadcast = Op == operand::b && Atom::b_broadcast;

  STRATA_HOST_DEVICE static constexpr coord at(int lane, int v) {
    if constexpr (Op == operand::a) return Atom::a_coord(lane, v);
    else if constexpr (Op == operand::b) return Atom::b_coord(lane, v);
    else return Atom::c_coord(lane, v);
  }

  /// True if (lane, v) -> (row, col) is a bijection onto the rows x cols tile (for a broadcast
  /// operand: if each lane's values cover the tile exactly once). Checked at compile time for every
  /// atom by check_layouts<Atom>() below, and by the unit tests.
  static constexpr bool bijective() {
    if constexpr (broadcast) {
      if (values != rows * cols) return false;
      for (int l = 0; l < lanes; ++l) {
        bool seen[rows * cols] = {};
        for (int v = 0; v < values; ++v) {
          const coord c = at(l, v);
          if (c.row < 0 || c.row >= rows || c.col < 0 || c.col >= cols || seen[c.row * cols + c.col]) return false;
          seen[c.row * cols + c.col] = true;
        }
      }
      return true;
    } else {
      return owns_each_once<rows, cols, lanes, values>([](int l, int v) { return at(l, v); });
    }
  }
};

/// Every operand layout of Atom is a bijection (each matrix element owned exactly once). Atoms
/// static_assert this in their emulator path, so a wrong table cannot even be compiled.
template <class Atom>
constexpr bool check_layouts() {
  return fragment_layout<Atom, operand::a>::bijective() && fragment_layout<Atom, operand::b>::bijective() &&
         fragment_layout<Atom, operand::c>::bijective();
}

}  // namespace strata::mma
