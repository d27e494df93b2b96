// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/ldmatrix.hpp -- warp-wide loads of 8x8 matrices of 16-bit elements from shared memory
// into the register fragments MMA atoms take (PTX ldmatrix, sm75+; a Strata atom on sm80+ targets).
//
//   using atom = strata::copy::ldmatrix<4>;            // .x4: four 8x8 matrices
//   auto r = atom::load(ctx, row_address);              // std::uint32_t r[4]: two b16 per register
//   auto t = strata::copy::ldmatrix<2, true>::load(ctx, row_address);   // .x2.trans
//
// The documented gather (PTX ISA, "Warp-level matrix load instruction: ldmatrix", the .m8n8 .b16
// figures and the table of thread groups supplying addresses):
//   addresses  lanes 8*m .. 8*m+7 give the addresses of rows 0..7 of matrix m (m < Num); each row is 8
//              contiguous b16 (16 bytes, 16-byte aligned, in shared memory). With .x1 only lanes 0-7,
//              with .x2 lanes 0-15 supply addresses; the other lanes' addresses are ignored.
//   registers  destination register m of every lane holds matrix m. Lane l holds row l/4, columns
//              2*(l%4) and 2*(l%4)+1 (lower 16 bits: the even column): four consecutive lanes hold a row.
//              With .trans the matrix is delivered transposed: lane l holds elements (row 2*(l%4),
//              column l/4) and (row 2*(l%4)+1, column l/4) of the matrix as stored.
// These maps are the constexpr functions below; the emulator executes them, so a kernel that gets the
// lane arithmetic wrong produces a visibly wrong fragment on the CPU.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"

namespace strata::copy {

/// (matrix, row, column) of an element of the loaded 8x8 matrices, as stored in memory.
struct matrix_coord {
  int matrix, row, col;
  friend constexpr bool operator==(const matrix_coord&, const matrix_coord&) = default;
};

/// The registers an ldmatrix fills: N 32-bit words, each two b16 (low half: the even column).
/// (A plain aggregate rather than std::array, whose operator[] is host-only under nvcc.)
template <int N>
struct b16x2_registers {
  std::uint32_t r[N];
  STRATA_HOST_DEVICE constexpr std::uint32_t& operator[](int i) { return r[i]; }
  STRATA_HOST_DEVICE constexpr const std::uint32_t& operator[](int i) const { return r[i]; }
  STRATA_HOST_DEVICE static constexpr int size() { return N; }
};

template <int Num, bool Trans = false>
struct ldmatrix {
  static_assert(Num == 1 || Num == 2 || Num == 4, "ldmatrix loads 1, 2 or 4 matrices (.x1, .x2, .x4)");

  static constexpr int matrices = Num;
  static constexpr bool transposed = Trans;
  using fragment = b16x2_registers<Num>;

  /// Lanes whose addresses are used (8 per matrix), and the (matrix, row) each one's address gives.
  static constexpr int address_lanes = 8 * Num;
  STRATA_HOST_DEVICE static constexpr matrix_coord address_of(int lane) { return {lane / 8, lane % 8, 0}; }

  /// The stored element that lane `lane` receives in half `half` (0: low 16 bits) of register `reg`.
  STRATA_HOST_DEVICE static constexpr matrix_coord value_of(int lane, int reg, int half) {
    const int group = lane / 4, pair = 2 * (lane % 4) + half;
    return Trans ? matrix_coord{reg, pair, group} : matrix_coord{reg, group, pair};
  }

  /// The warp-wide load: `row` is this lane's row address (used for lanes below address_lanes).
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static fragment load(Ctx& ctx, const void* row) {
    return load(ctx, row, 0u, 0);
  }

  /// load() from the row address (`base` XOR `flip`) + `offset` bytes, with the XOR on the 32-bit
  /// shared-memory address on CUDA devices (on a generic pointer it took 64-bit arithmetic): a
  /// swizzled stage's k-groups are one lane base XOR a constant (mma::ldmatrix_fragments), and the
  /// offset of each further row block stays an immediate of the instruction. `flip` must only touch
  /// address bits that are zero in `offset` and in the 128-byte alignment of the stage.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static fragment load(Ctx& ctx, const void* base, unsigned flip, int offset) {
    static_assert(detail::target_lacks_ldmatrix<typename Ctx::target>::ok);
    static_assert(Ctx::warp_size == 32, "ldmatrix is a 32-lane warp instruction");
    fragment out{};
    if constexpr (Ctx::emulated) {
      const auto* row = reinterpret_cast<const unsigned char*>(reinterpret_cast<std::uintptr_t>(base) ^ flip) + offset;
      emulate(ctx, row, out);
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      const unsigned a = (static_cast<unsigned>(__cvta_generic_to_shared(base)) ^ flip) + static_cast<unsigned>(offset);
      if constexpr (Num == 1 && !Trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(out[0]) : "r"(a) : "memory");
      else if constexpr (Num == 1)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(out[0]) : "r"(a) : "memory");
      else if constexpr (Num == 2 && !Trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(out[0]), "=r"(out[1]) : "r"(a) : "memory");
      else if constexpr (Num == 2)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(out[0]), "=r"(out[1]) : "r"(a) : "memory");
      else if constexpr (!Trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3]) : "r"(a) : "memory");
      else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3]) : "r"(a) : "memory");
#else
      (void)base;
      (void)flip;
      (void)offset;
#endif
    }
    return out;
  }

 private:
  struct lane_io {
    const void* row;
    fragment* out;
  };

  /// Every lane parks its row address; the last lane to arrive performs the documented gather from the
  /// maps above into every lane's registers.
  template <class Ctx>
  static void emulate(Ctx& ctx, const void* row, fragment& out) {
    auto& t = ctx.emulated_thread();
    if (t.warp->lanes != 32)
      kernel_bug(t, "ldmatrix needs a full warp of 32 lanes; this warp has " + std::to_string(t.warp->lanes));
    if (t.lane < address_lanes) {
      const auto* p = static_cast<const unsigned char*>(row);
      const unsigned char* smem = t.block->smem;
      if (p < smem || p + 16 > smem + t.unit->info->shared_total)
        kernel_bug(t, "ldmatrix reads shared memory only; lane " + std::to_string(t.lane) +
                          "'s row address is not in this block's shared memory");
      if (reinterpret_cast<std::uintptr_t>(row) % 16 != 0)
        kernel_bug(t, "ldmatrix: lane " + std::to_string(t.lane) + "'s row address is not 16-byte aligned");
    }
    // Shared-memory statistics: one warp request (emulator/statistics.hpp), counted where every lane's
    // row address is at hand; the gather's own reads below are the atom's, not plain loads.
    auto counted = enter_counted_atom(t);
    lane_io io{row, &out};
    ctx.warp().gather(Trans ? "ldmatrix.trans" : "ldmatrix", &io, [&t](void* const* all, int lanes) {
      if (counting_shared(t)) {
        const void* rows[address_lanes];
        for (int l = 0; l < address_lanes; ++l) rows[l] = static_cast<lane_io*>(all[l])->row;
        count_ldmatrix(t, rows, Num);
      }
      for (int l = 0; l < lanes; ++l) {
        fragment& f = *static_cast<lane_io*>(all[l])->out;
        for (int r = 0; r < Num; ++r) {
          std::uint32_t word = 0;
          for (int h = 0; h < 2; ++h) {
            const matrix_coord c = value_of(l, r, h);
            const auto* src = static_cast<const unsigned char*>(static_cast<lane_io*>(all[8 * c.matrix + c.row])->row);
            std::uint16_t e;
            std::memcpy(&e, src + 2 * c.col, 2);
            word |= static_cast<std::uint32_t>(e) << (16 * h);
          }
          f[r] = word;
        }
      }
    });
  }
};

}  // namespace strata::copy
