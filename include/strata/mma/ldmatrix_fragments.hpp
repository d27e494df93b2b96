// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/ldmatrix_fragments.hpp -- A and B fragments of the m16n8k16 f16/bf16 mma.sync atom
// loaded from shared memory with ldmatrix.x4 (one instruction per 16x16 piece of A, or per 16 x 16
// (k x n) piece of B covering two atoms), instead of one 16-bit load per element.
//
//   using L = strata::mma::ldmatrix_fragments<Atom, WarpM, WarpN, TileK>;   // Atom: sm80_16x8x16<T>
//   L::load_a(ctx, frags, smem_a, lda, a_k_contiguous, m0);   // A stage (BLK_M x BLK_K) at row m0
//   L::load_b(ctx, frags, smem_b, ldb, b_k_contiguous, n0);   // B stage (BLK_K x BLK_N) at col n0
//
// Why the maps are right (PTX ISA: "Matrix Fragments for mma.m16n8k16" and the ldmatrix figures,
// both quoted in strata/mma/mma_sync.hpp and strata/copy/ldmatrix.hpp):
//   register j of an A fragment holds (row g + 8 (j & 1), cols 2t, 2t+1 + 8 (j >> 1)), g = lane / 4,
//   t = lane % 4; ldmatrix gives lane l (row l / 4, cols 2 (l % 4), +1) of 8x8 matrix j, so matrix j
//   must be rows 8 (j & 1).., cols 8 (j >> 1).. of the 16x16 piece: stored k-contiguous (A row-major)
//   that is a plain ldmatrix; stored m-contiguous (A column-major) it is the same matrix transposed,
//   which .trans delivers.
//   register j of a B fragment holds (k 2t, 2t+1 + 8 j, col n = g): matrix 2 b + j is n-block b, k half
//   j; plain when B is stored n-major (k-contiguous, B column-major), .trans when k-major.
// Every lane gives one row address (x4: lanes 8 m .. 8 m + 7 address rows 0..7 of matrix m). Rows
// must be 16-byte aligned; the caller's row stride decides the bank conflicts (gemm::kernel pads each
// stage row by 16 bytes so the eight rows of one matrix fall in eight distinct 4-bank groups).
// The emulator executes ldmatrix from the same documented maps, so the sm80 GEMM tests check this.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/ldmatrix.hpp"
#include "strata/mma/mma_sync.hpp"

namespace strata::mma {

template <class Atom>
inline constexpr bool ldmatrix_loadable = std::is_same_v<Atom, sm80_16x8x16_f32f16> || std::is_same_v<Atom, sm80_16x8x16_f32bf16>;

template <class Atom, int WarpM, int WarpN, int TileK>
struct ldmatrix_fragments {
  static_assert(ldmatrix_loadable<Atom>, "ldmatrix_fragments: only the m16n8k16 f16/bf16 atoms");
  static_assert(WarpM % 16 == 0 && WarpN % 16 == 0 && TileK % 16 == 0,
                "ldmatrix_fragments: warp tile rows, columns and tile_k must be multiples of 16 (x4 loads)");
  using T = typename Atom::a_type;
  static constexpr int atoms_m = WarpM / Atom::M, atoms_n = WarpN / Atom::N, atoms_k = TileK / Atom::K;

  template <class Fragment>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void set_pair(Fragment& f, int reg, std::uint32_t word) {
    f.v[2 * reg] = T::from_bits(static_cast<std::uint16_t>(word & 0xFFFFu));
    f.v[2 * reg + 1] = T::from_bits(static_cast<std::uint16_t>(word >> 16));
  }

  /// A(m0 .. m0 + WarpM, 0 .. TileK) of a stage: element (m, k) at s[m * ld + k] when k_contiguous,
  /// else at s[k * ld + m].
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE static void load_a(Ctx& ctx, Fragments& a, const T* s, int ld, bool k_contiguous, int m0) {
    const int lane = ctx.lane().index();
    const int mat = lane / 8, r = lane % 8;
    STRATA_UNROLL
    for (int i = 0; i < atoms_m; ++i)
      STRATA_UNROLL
      for (int kk = 0; kk < atoms_k; ++kk) {
        const int row = m0 + i * 16 + 8 * (mat & 1), col = kk * 16 + 8 * (mat >> 1);
        const auto regs = k_contiguous ? copy::ldmatrix<4>::load(ctx, s + (row + r) * ld + col)
                                       : copy::ldmatrix<4, true>::load(ctx, s + (col + r) * ld + row);
        STRATA_UNROLL
        for (int j = 0; j < 4; ++j) set_pair(a.f[i][kk], j, regs[j]);
      }
  }

  /// B(0 .. TileK, n0 .. n0 + WarpN) of a stage: element (k, n) at s[n * ld + k] when k_contiguous,
  /// else at s[k * ld + n].
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE static void load_b(Ctx& ctx, Fragments& b, const T* s, int ld, bool k_contiguous, int n0) {
    const int lane = ctx.lane().index();
    const int mat = lane / 8, r = lane % 8;
    STRATA_UNROLL
    for (int kk = 0; kk < atoms_k; ++kk)
      STRATA_UNROLL
      for (int j = 0; j < atoms_n; j += 2) {
        const int n = n0 + j * 8 + 8 * (mat >> 1), k = kk * 16 + 8 * (mat & 1);
        const auto regs = k_contiguous ? copy::ldmatrix<4>::load(ctx, s + (n + r) * ld + k)
                                       : copy::ldmatrix<4, true>::load(ctx, s + (k + r) * ld + n);
        set_pair(b.f[kk][j], 0, regs[0]);
        set_pair(b.f[kk][j], 1, regs[1]);
        set_pair(b.f[kk][j + 1], 0, regs[2]);
        set_pair(b.f[kk][j + 1], 1, regs[3]);
      }
  }
};

}  // namespace strata::mma
