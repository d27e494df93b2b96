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
// must be 16-byte aligned; the caller's row stride decides the bank conflicts: the attention pads each
// stage row by 16 bytes so the eight rows of one matrix fall in eight distinct 4-bank groups; the GEMM's
// fixed-order tiles XOR-swizzle their stages instead (Swizzle, tensor/swizzle.hpp: element (row, col)
// of the stage at Swizzle(row * ld + col); rows along K only), which also keeps cp.async's row writes
// conflict-free.
// With a swizzle, rows 8 apart must be whole swizzle periods apart (8 * ld a multiple of
// Swizzle::period) and the first row m0 / n0 a multiple of 8: each lane's swizzled offset then
// depends on its row within 8 and the column only, one per k-group, and every 16-row piece adds a
// constant (one base per k-group, the rest immediates).
// The emulator executes ldmatrix from the same documented maps, so the sm80 GEMM tests check this.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/ldmatrix.hpp"
#include "strata/mma/mma_sync.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata::mma {

template <class Atom>
inline constexpr bool ldmatrix_loadable = std::is_same_v<Atom, sm80_16x8x16_f32f16> || std::is_same_v<Atom, sm80_16x8x16_f32bf16>;

template <class Atom, int WarpM, int WarpN, int TileK, class Swizzle = no_swizzle>
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

  static constexpr bool swizzled = Swizzle::bits > 0;

  /// A swizzled stage (k-contiguous: rows along K, the only layout the swizzle is chosen for): the
  /// offset of this lane's k-group-0 read of rows row8 + r, column col (row8 a multiple of 8, r < 8,
  /// col 0 or 8). The swizzle sees only (r, col); row8 adds whole periods (checked on the emulator).
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static int swizzled_offset(Ctx& ctx, bool k_contiguous, int row8, int r, int col, int ld) {
    if constexpr (Ctx::emulated) {
      if (!k_contiguous || (8 * ld) % Swizzle::period != 0 || row8 % 8 != 0)
        kernel_bug(ctx.emulated_thread(), "ldmatrix_fragments: a swizzled stage must be k-contiguous, with 8 * ld a "
                                          "multiple of the swizzle's period and the first row a multiple of 8");
    } else {
      (void)ctx;
      (void)k_contiguous;
    }
    return row8 * ld + static_cast<int>(Swizzle{}(r * ld + col));
  }

  /// The address XOR that takes a lane's read of k-group 0 to the k-group at column `k` (a multiple
  /// of 16) of a swizzled stage: the k-group's column bits lie inside the row, apart from the lane's
  /// own column (0 or 8) and from the row bits the swizzle reads, so the swizzle maps column c + k to
  /// (the image of c) XOR k; a stage on a 128-byte boundary (checked on the emulator) lets that XOR act
  /// on the address. One LOP3 per k-group and stage instead of a register each.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static unsigned k_group_flip(Ctx& ctx, const T* s, int k) {
    if constexpr (Ctx::emulated) {
      if (reinterpret_cast<std::uintptr_t>(s) % 128 != 0 || k % 16 != 0 || k * int(sizeof(T)) >= 128)
        kernel_bug(ctx.emulated_thread(), "ldmatrix_fragments: a swizzled stage must start on a 128-byte boundary, with "
                                          "k-groups 16 columns apart inside a row of at most 128 bytes");
    } else {
      (void)ctx;
      (void)s;
    }
    return static_cast<unsigned>(k * static_cast<int>(sizeof(T)));
  }

  /// A(m0 .. m0 + WarpM, k0 .. k0 + TileK) of a stage: element (m, k) at s[m * ld + k] when
  /// k_contiguous, else at s[k * ld + m]; swizzled: at s[Swizzle(m * ld + k)], k_contiguous only.
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE static void load_a(Ctx& ctx, Fragments& a, const T* s, int ld, bool k_contiguous, int m0, int k0 = 0) {
    const int lane = ctx.lane().index();
    const int mat = lane / 8, r = lane % 8;
    if constexpr (swizzled) {
      // One lane base (k-group 0's), each k-group an XOR of it, each 16 rows an immediate.
      const T* lane0 = s + swizzled_offset(ctx, k_contiguous, m0 + 8 * (mat & 1), r, 8 * (mat >> 1), ld);
      STRATA_UNROLL
      for (int kk = 0; kk < atoms_k; ++kk) {
        const unsigned flip = k_group_flip(ctx, s, k0 + kk * 16);
        STRATA_UNROLL
        for (int i = 0; i < atoms_m; ++i) {
          const auto regs = copy::ldmatrix<4>::load(ctx, lane0, flip, i * 16 * ld * int(sizeof(T)));
          STRATA_UNROLL
          for (int j = 0; j < 4; ++j) set_pair(a.f[i][kk], j, regs[j]);
        }
      }
    } else {
      s += k_contiguous ? k0 : k0 * ld;
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
  }

  /// B(k0 .. k0 + TileK, n0 .. n0 + WarpN) of a stage: element (k, n) at s[n * ld + k] when
  /// k_contiguous, else at s[k * ld + n]; swizzled: at s[Swizzle(n * ld + k)], k_contiguous only.
  template <class Ctx, class Fragments>
  STRATA_HOST_DEVICE static void load_b(Ctx& ctx, Fragments& b, const T* s, int ld, bool k_contiguous, int n0, int k0 = 0) {
    const int lane = ctx.lane().index();
    const int mat = lane / 8, r = lane % 8;
    if constexpr (!swizzled) s += k_contiguous ? k0 : k0 * ld;
    [[maybe_unused]] const T* lane0 = s;
    if constexpr (swizzled) lane0 = s + swizzled_offset(ctx, k_contiguous, n0 + 8 * (mat >> 1), r, 8 * (mat & 1), ld);
    STRATA_UNROLL
    for (int kk = 0; kk < atoms_k; ++kk) {
      [[maybe_unused]] unsigned flip = 0;
      if constexpr (swizzled) flip = k_group_flip(ctx, s, k0 + kk * 16);
      STRATA_UNROLL
      for (int j = 0; j < atoms_n; j += 2) {
        const auto regs = [&] {
          if constexpr (swizzled) {
            return copy::ldmatrix<4>::load(ctx, lane0, flip, j * 8 * ld * int(sizeof(T)));
          } else {
            const int n = n0 + j * 8 + 8 * (mat >> 1), k = kk * 16 + 8 * (mat & 1);
            return k_contiguous ? copy::ldmatrix<4>::load(ctx, s + (n + r) * ld + k)
                                : copy::ldmatrix<4, true>::load(ctx, s + (k + r) * ld + n);
          }
        }();
        set_pair(b.f[kk][j], 0, regs[0]);
        set_pair(b.f[kk][j], 1, regs[1]);
        set_pair(b.f[kk][j + 1], 0, regs[2]);
        set_pair(b.f[kk][j + 1], 1, regs[3]);
      }
    }
  }
};

}  // namespace strata::mma
