// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/vector_fragments.hpp -- A and B fragments of the MFMA atoms read from a shared stage
// whose rows run along K (A row-major, B column-major) with a few wide loads per lane (ds_read_b128 /
// b64 / b32) instead of one 1- or 2-byte load per element.
//
//   using L = strata::mma::vector_fragments<Atom, WarpM, WarpN, TileK>;   // Atom: an MFMA atom
//   L::load_a(ctx, frags, smem_a, lda, m0);   // A stage (BLK_M x TileK), element (m, k) at s[m * lda + k]
//   L::load_b(ctx, frags, smem_b, ldb, n0);   // B stage (BLK_N x TileK), element (k, n) at s[n * ldb + k]
//   (then warp_tile<Atom, WarpM, WarpN, TileK>::mma on the fragments, as with warp_tile's own loads)
//
// Why the K order may change. An MFMA lane holds KL consecutive k values of its row (mfma.hpp: A (i,
// k) = (lane % MN, KL * (lane / MN) + v)), so with TileK / K atoms along K a lane's values are TileK /
// K runs of KL elements, K apart: 2-byte reads, or at best 8-byte ones, each with its own address. But
// the product over a stage is a sum over its TileK values of k in any order, as long as A and B use
// the same one. So this loader gives atom kk's value v of lane group g = lane / MN the stage column
//     k = g * R + kk * KL + v,        R = TileK / (64 / MN) = the lane's whole share of the stage,
// a bijection on [0, TileK) that maps every atom onto TileK / atoms_k distinct columns (one k slice of
// the product per atom, as before). Each lane's values for the whole stage are then ONE run of R
// contiguous elements: for the bf16 32x32x8 atom at TileK 32, 16 elements = two ds_read_b128 per row
// of atoms, where the atom's own order took 16 ds_read_u16. A and B must both come from this loader
// (or from loaders with the same map); results are the same sums in another order, so they agree with
// warp_tile's loads to rounding, and runs are deterministic as before.
//
// Requirements (static_asserts): an MFMA-layout atom (vector_fragment_loadable); R elements of the
// atom's operand type a multiple of 4 bytes; the caller's row stride and stage base aligned to the
// read width (`read_bytes`, 16 where R allows). Bank conflicts: a b128 read is served 8 lanes at a time
// (8 consecutive rows of one lane group). Rows padded by 16 bytes put them in 8 distinct 16-byte bank
// groups; so does an XOR swizzle of unpadded rows (Swizzle, tensor/swizzle.hpp's swizzle_for: offsets
// relative to the stage base s), which also keeps the stage's 16-byte writes conflict-free, where the
// padding leaves 2-way conflicts on 64-byte rows (gemm::kernel).
//
// On the emulator every read is counted as a fragment load of its width for the launch's
// shared-memory statistics, and the fragments the atom receives are the ones the GPU builds, so the
// CDNA GEMM tests check the map.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/vector.hpp"
#include "strata/mma/mfma.hpp"
#include "strata/mma/mfma_ocp_fp8.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata::mma {

/// MFMA-layout atoms: a lane holds k_per_lane consecutive k values of one row of A (column of B).
template <class Atom>
inline constexpr bool vector_fragment_loadable = requires {
  requires Atom::warp_size == 64;
  { Atom::k_per_lane } -> std::convertible_to<int>;
};

template <class Atom, int WarpM, int WarpN, int TileK, class Swizzle = no_swizzle>
struct vector_fragments {
  static_assert(vector_fragment_loadable<Atom>, "vector_fragments: only the MFMA-layout atoms (mfma.hpp)");
  static_assert(std::is_same_v<typename Atom::a_type, typename Atom::b_type>, "vector_fragments: A and B of one type");
  static_assert(Atom::M == Atom::N, "vector_fragments: square MFMA blocks (A's rows and B's columns alike)");
  static_assert(WarpM % Atom::M == 0 && WarpN % Atom::N == 0 && TileK % Atom::K == 0,
                "vector_fragments: the warp tile and TileK must be multiples of the atom");
  using T = typename Atom::a_type;
  static constexpr int atoms_m = WarpM / Atom::M, atoms_n = WarpN / Atom::N, atoms_k = TileK / Atom::K;
  static constexpr int kl = Atom::k_per_lane;
  static constexpr int groups = 64 / Atom::M;          // lane groups along K
  static constexpr int run = TileK / groups;           // R: elements of a row one lane reads per stage
  static constexpr int run_bytes = run * static_cast<int>(sizeof(T));
  static_assert(run == atoms_k * kl, "vector_fragments: the atom's K is k_per_lane x 64 / M");
  static_assert(run_bytes % 4 == 0, "vector_fragments: a lane's share of a stage row must be whole 32-bit words");
  /// The widest read that divides the run: 16 bytes where it can.
  static constexpr int read_bytes = run_bytes % 16 == 0 ? 16 : run_bytes % 8 == 0 ? 8 : 4;
  static constexpr int read_elements = read_bytes / static_cast<int>(sizeof(T));
  static constexpr int reads = run_bytes / read_bytes;  // per row of atoms

  /// Stage column of atom kk's value v for lane `lane` (the map above).
  STRATA_HOST_DEVICE static constexpr int k_of(int lane, int kk, int v) { return (lane / Atom::M) * run + kk * kl + v; }

  /// A(m0 .. m0 + WarpM, 0 .. TileK) of a stage: element (m, k) at s[Swizzle(m * ld + k)].
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void load_a(Ctx& ctx, Fragments& a, const T* s, int ld, int m0) {
    load_rows<atoms_m>(ctx, s, ld, m0, [&](int i, int kk, int v, T x) { a.f[i][kk].v[v] = x; });
  }

  /// B(0 .. TileK, n0 .. n0 + WarpN) of a stage: element (k, n) at s[Swizzle(n * ld + k)].
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void load_b(Ctx& ctx, Fragments& b, const T* s, int ld, int n0) {
    load_rows<atoms_n>(ctx, s, ld, n0, [&](int j, int kk, int v, T x) { b.f[kk][j].v[v] = x; });
  }

 private:
  /// Atoms rows of atoms (Atom::M = Atom::N rows each) from row r0 on: set(atom, kk, v, value) for
  /// every value of this lane's fragments. Rows Atom::M apart are whole swizzle periods apart (checked),
  /// so each read's swizzled offset is computed once for all of them.
  template <int Atoms, class Ctx, class Set>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void load_rows(Ctx& ctx, const T* s, int ld, int r0, Set&& set) {
    const int lane = ctx.lane().index();
    const long long first = static_cast<long long>(r0 + lane % Atom::M) * ld + k_of(lane, 0, 0);
    if constexpr (Ctx::emulated) {
      if (Atoms > 1 && (static_cast<long long>(Atom::M) * ld) % Swizzle::period != 0)
        kernel_bug(ctx.emulated_thread(), "mma::vector_fragments: rows one atom apart are not whole swizzle periods apart");
    }
    STRATA_UNROLL
    for (int i = 0; i < Atoms; ++i) {
      T values[run];
      read_run(ctx, values, s, first, static_cast<long long>(i) * Atom::M * ld);
      STRATA_UNROLL
      for (int kk = 0; kk < atoms_k; ++kk)
        STRATA_UNROLL
        for (int v = 0; v < kl; ++v) set(i, kk, v, values[kk * kl + v]);
    }
  }

  /// The lane's run of `run` elements at logical offset `first` (+ `rows`, a whole number of swizzle
  /// periods) of stage s: `reads` loads of read_bytes each, each at its swizzled offset.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void read_run(Ctx& ctx, T (&values)[run], const T* s, long long first,
                                                             long long rows) {
    STRATA_UNROLL
    for (int r = 0; r < reads; ++r) {
      const T* p = s + Swizzle{}(first + r * read_elements) + rows;
      if constexpr (Ctx::emulated) {
        auto& t = ctx.emulated_thread();
        if (reinterpret_cast<std::uintptr_t>(p) % read_bytes != 0)
          kernel_bug(t, "mma::vector_fragments: a " + std::to_string(read_bytes) +
                            "-byte fragment read from an address not aligned to it (the stage's row stride or base)");
        [[maybe_unused]] auto counted = enter_counted_atom(t);
        if (counting_shared(t)) count_fragment_access(t, false, p, read_bytes);
      }
      const auto w = copy::shared_load<T, read_elements>(p);
      STRATA_UNROLL
      for (int e = 0; e < read_elements; ++e) values[r * read_elements + e] = w.v[e];
    }
  }
};

}  // namespace strata::mma
