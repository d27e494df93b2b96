// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/config.hpp -- the attention kernel's configuration values and atom choice.
//
// A configuration is a printable value {block_m, block_n, warps, stages}; block_m is warps x the
// atom's M (each warp owns atom-M query rows of the tile). The defaults are chosen to fit the target's
// shared memory (two stages of a K and a V tile, plus the probability tile where P cannot stay in
// registers); they are not
// tuned on hardware yet (docs/attention.md: performance not measured).
#pragma once

#include <cstddef>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/mma.hpp"
#include "strata/mma/vector_fragments.hpp"
#include "strata/numeric/numeric.hpp"

namespace strata::attn {

struct kernel_config {
  int block_n = 0;  // keys per K/V tile; 0: no configuration fits this target
  int warps = 4;
  int stages = 2;
  bool q_in_shared = false;  // Q tile staged in shared memory and read per key tile, instead of held in
                             // registers for the whole loop (wide head dims: frees D / 4 registers)
  int v_slices = 1;          // blocks per query tile, each computing O for Dv / v_slices columns
                             // (forward.hpp; 16-bit head dim 512 on mma.sync)
  int row_atoms = 1;         // atoms of query rows per warp: block_m = warps x row_atoms x the atom's M
  bool key_split = false;    // the warps share one atom's query rows and split each key tile between them,
                             // merging (m, l, O) once at the end (forward.hpp): block_m = the atom's M
  friend constexpr bool operator==(const kernel_config&, const kernel_config&) = default;
};

/// Which optional per-score features a forward kernel compiles into its element loop. `none` leaves
/// soft-capping, ALiBi and dropout out entirely (each costs tens of instructions per score even when
/// switched off at run time: the division and tanh of the soft-cap, the distance of ALiBi, a Philox
/// draw for dropout); the host entries launch it whenever the options use none of the three. Masks
/// (causal, windows, lengths) and the score / mask mods are in both: they are cheap or compile-time.
enum class score_features { none, any };

/// Where a forward kernel reads K and V: `contiguous` rows (dense or packed variable-length: one
/// pointer per tile, advanced tile by tile) or a `paged` cache (a page lookup per 16-row chunk). Only
/// the decode entry with a block table launches the paged form.
enum class kv_storage { contiguous, paged };

/// The target the host entries use when the caller names none: the backend's first GPU target,
/// or the host emulator's own (scalar FMA) target.
#if STRATA_BACKEND_CUDA
using default_target = arch::sm80;
#elif STRATA_BACKEND_HIP
using default_target = arch::gfx90a;
#else
using default_target = arch::host;
#endif

namespace detail {

template <class Target, class Elem>
struct atom_choice {
  using type = mma::fma_atom<Elem, float, Target::warp_size>;  // every target, every type
};
template <class Target, class Elem>
  requires((std::is_same_v<Elem, f16> || std::is_same_v<Elem, bf16>) && Target::atoms.has(arch::atom_family::mma_sync_f16))
struct atom_choice<Target, Elem> {
  using type = mma::sm80_16x8x16<Elem>;
};
template <class Target, class Elem>
  requires((std::is_same_v<Elem, f16> || std::is_same_v<Elem, bf16>) && Target::atoms.has(arch::atom_family::mfma_f16) &&
           !Target::atoms.has(arch::atom_family::mma_sync_f16))
struct atom_choice<Target, Elem> {
  // 16x16x16, 16 query rows per wavefront, run with its operands exchanged (S^T = K Q^T, mma/swapped.hpp):
  // its accumulator then holds a row of S per lane in the layout of its A operand (mma::c_is_a), so
  // P stays in registers as the A of P V, and each lane's row is shared by 4 lanes, not 16 (two
  // shuffles per row reduction instead of four for each of four rows).
  using type = mma::swapped<mma::cdna_f32_16bit<16, Elem>>;
};
// fp8 e4m3 where the target has fp8 tensor cores: mma.sync m16n8k32 (sm89+), and CDNA3's FNUZ MFMA
// 16x16x32 reading OCP bytes (mfma_ocp_fp8.hpp: operands prepared, products scaled by 4). Elsewhere
// (sm80, gfx90a, the host target) the FMA atom above, which the emulator runs and GPU builds do not ship.
template <class Target, class Elem>
  requires(std::is_same_v<Elem, f8_e4m3> && mma::sm89_16x8x32_f32e4m3::available_on<Target>)
struct atom_choice<Target, Elem> {
  using type = mma::sm89_16x8x32_f32e4m3;
};
template <class Target, class Elem>
  requires(std::is_same_v<Elem, f8_e4m3> && mma::cdna3_16x16x32_f32e4m3_ocp::available_on<Target>)
struct atom_choice<Target, Elem> {
  using type = mma::cdna3_16x16x32_f32e4m3_ocp;
};

/// The scale the atom's products carry (mfma_ocp_fp8.hpp: 4 for OCP fp8 on CDNA3), 1 for the others.
template <class Atom>
constexpr float product_scale() {
  if constexpr (requires { Atom::product_scale; }) return Atom::product_scale;
  else return 1.f;
}

}  // namespace detail

/// The MMA atom of both products (S = Q K^T and O = P V): mma.sync m16n8k16 on NVIDIA, MFMA
/// 16x16x16 (operands exchanged) on CDNA, scalar FMA otherwise (fp32 everywhere, and every type on the host target).
template <class Target, class Elem>
using atom_for = typename detail::atom_choice<Target, Elem>::type;

/// The element type of O: the input's, except fp8 inputs, which write bf16 (as FlashAttention-3 does:
/// an fp8 output would round O to 3 mantissa bits and needs an output scale nobody knows in advance).
template <class Elem>
using out_elem = std::conditional_t<std::is_same_v<Elem, f8_e4m3>, bf16, Elem>;

/// Shared bytes of one configuration (an upper bound of forward_kernel::shared_storage): the K and V
/// stages and the staged Q in rows padded by 16 bytes, and the P tile unless P stays in registers.
/// `v_transposed` (v_transposed_for below): V's stages hold V^T (dv rows of block_n keys) and P's
/// rows are padded too.
template <class Elem>
constexpr std::size_t shared_bytes(int block_m, int block_n, int stages, int d, int dv, bool q_in_shared = false,
                                   bool p_in_registers = false, bool v_transposed = false) {
  const std::size_t e = sizeof(Elem), pad = 16;
  const auto bm = static_cast<std::size_t>(block_m), bn = static_cast<std::size_t>(block_n);
  const auto dk = static_cast<std::size_t>(d), dvv = static_cast<std::size_t>(dv);
  const std::size_t v_stage = v_transposed ? dvv * (bn * e + pad) : bn * (dvv * e + pad);
  return static_cast<std::size_t>(stages) * (bn * (dk * e + pad) + v_stage) +
         (p_in_registers ? 16 : bm * (bn * e + (v_transposed ? pad : 0))) + (q_in_shared ? bm * (dk * e + pad) : 16) + 64;
}

namespace detail {
/// Whether the forward keeps V transposed in its stages (V^T: each key row of V becomes a column, so
/// that P V's K -- the keys -- runs along shared memory) and reads P and V^T with mma::vector_fragments
/// (16-byte LDS reads): the MFMA atoms, on targets whose copies are synchronous (CDNA: the copy
/// transposes on its way through registers; cp.async cannot). Row-major V read along K cost one 2-byte
/// LDS per element per wave (forward.hpp). Where P stays in registers (the swapped 16-bit atom) the
/// keys of V^T are stored in the order the 16-byte reads give them to the product (forward.hpp,
/// v_column).
template <class Target, class A>
constexpr bool v_transposed_for() {
  return mma::vector_fragment_loadable<A> && !Target::atoms.has(arch::atom_family::cp_async);
}
}  // namespace detail

/// The query tile a forward configuration asks for. `tall`: FlashAttention-2's 128-row tile where it
/// applies (below), the standard one elsewhere. `standard`: one atom's rows per warp. The host entries
/// ask for `tall` for the plain kernel (no soft-cap, ALiBi, dropout or mods) of strata::attention, and
/// `standard` for the others: with the optional features or a score mod ptxas spilled 32-68 B under
/// the tall tile (sm_90a, 2026-12-07), and attention_decode's blocks hold 1-16 query tokens or one GQA
/// group's heads, so a taller tile would compute padding.
/// `split_keys`: attention_decode's tile (issue 33 item 7). The warps share one atom's query rows (the
/// 1-16 tokens or the group's heads a decode block holds) and each takes its own slice of every key
/// tile: with the standard tile three of the four warps computed rows of padding whenever a block held
/// 16 rows or fewer, and every warp read all of K and V from shared memory. Each warp keeps its own
/// running max, sum and O over its keys; the block merges them once after the key loop. 16-bit
/// mma.sync (4 warps, 64-key tiles, where they fit) and 16-bit MFMA (4 waves and 64 keys, or 2 waves
/// and 32 keys, where they fit); the FMA and fp8 kernels keep the standard tile.
enum class forward_tile { tall, standard, split_keys };

/// The default configuration of (target, element, head dims): the widest K/V tile that fits.
template <class Target, class Elem, int D, int Dv, forward_tile Tile = forward_tile::tall>
constexpr kernel_config default_config() {
  using A = atom_for<Target, Elem>;
  if constexpr (Tile == forward_tile::split_keys) {
    // The standard tile's choices (Q in shared memory, V slices), with 4 warps x 16 keys of a 64-key
    // tile: a warp's S is 16 x 16 (8 fp32 registers a lane, against 16-32 for the standard tile's),
    // so the tile is not capped by registers as the standard one is on sm_90a / sm_100a.
    kernel_config c = default_config<Target, Elem, D, Dv, forward_tile::standard>();
    const bool mma_sync16 = Target::atoms.has(arch::atom_family::mma_sync_f16) && sizeof(Elem) == 2;
    // MFMA 16x16x16 with its operands exchanged (P in registers, one row per lane: mma/swapped.hpp):
    // 4 waves x 16 of 64 keys where that fits 64 KiB of LDS (head dims up to 64), else 2 waves x 16
    // of 32 keys, so a decode block is 16 rows, not the standard tile's 64.
    const bool mfma16 = Target::warp_size == 64 && sizeof(Elem) == 2 && mma::c_is_a<A>;
    constexpr int shapes[2][2] = {{4, 64}, {2, 32}};  // (warps, block_n)
    for (const auto& [warps, bn] : shapes) {
      if (!mma_sync16 && !mfma16) break;
      if (mma_sync16 && warps != 4) break;
      if (c.block_n > 0 && c.row_atoms == 1 && !(mfma16 && (c.q_in_shared || c.v_slices > 1)) && (bn / warps) % A::K == 0 &&
          shared_bytes<Elem>(A::M, bn, c.stages, D, Dv / c.v_slices, c.q_in_shared, mma::c_is_a<A>, detail::v_transposed_for<Target, A>()) <=
              Target::shared_memory_per_block) {
        c.warps = warps;
        c.block_n = bn;
        c.key_split = true;
        return c;
      }
    }
    return c;
  }
  const int warps = A::M == Target::warp_size ? (Target::warp_size == 64 ? 1 : 2) : 4;
  const bool mma_sync = Target::atoms.has(arch::atom_family::mma_sync_f16);
  // FlashAttention-2's tile for prefill at head dims 64 and 128 on 16-bit mma.sync: 32 query rows per
  // warp (two atoms), 128 per block, Q staged in shared memory and read with ldmatrix per key tile.
  // Each K and V fragment a warp reads from shared memory then serves twice the rows: at D 128, per 32
  // keys and 32 rows, 192 ldmatrix wavefronts and 32 of cp.async against 256 and 64 with 16 rows
  // (shared memory bounds this kernel; docs/attention.md). The O accumulator (64 fp32 registers per
  // 16 rows at Dv 128) limits the key tile: ptxas takes all 255 registers at 32 keys per tile and
  // spills at 64 (D 128), and spills at 128 keys at D 64. D 96 (5.70 per HMMA) and 32 (8.19) stay
  // standard: their tall loops issue more per HMMA than the standard ones' and those head dims are rare.
  const bool tall = Tile == forward_tile::tall && mma_sync && sizeof(Elem) == 2 && D == Dv && (D == 64 || D == 128);
  const int row_atoms = tall ? 2 : 1;
  const int block_m = warps * A::M * row_atoms;
  // sm_90a / sm_100a: ptxas (13.0) spills a few bytes with 64-key tiles (16-bit D 64..192); 32 keys
  // do not, except on sm_100a for D >= 128, which needs 16 (test/compile/attention_kernels.cu).
  // MFMA with a V head dim of 192 or more: clang 15 spills 2 VGPRs on gfx90a (bf16 192) with 32 keys;
  // 16 do not (the 256 ones get 16 anyway from the 64 KiB of LDS).
  const bool sm100 = std::is_same_v<Target, arch::sm100a>;
  const bool wide_mfma = Target::vendor_id == arch::vendor::amd && Dv >= 192;
  int cap = (sm100 && D >= 128) || wide_mfma ? 16 : (sm100 || std::is_same_v<Target, arch::sm90a>) ? 32 : 64;
  // fp8 atoms take 32 keys per step (K = 32), so a tile has at least 32 keys. 32 compiles without
  // spills everywhere but at head dim 64 on mma.sync, where ptxas caps itself at 128 registers and
  // spills 8 B (sm_90a); 64 keys take 158-163 registers there and do not.
  const bool fp8 = sizeof(Elem) == 1 && A::K == 32;
  const int tall_cap = D == 128 ? 32 : 64;
  if (tall) cap = cap < tall_cap ? cap : tall_cap;
  if (fp8) cap = mma_sync && D == 64 ? 64 : 32;
  // mma.sync with both head dims 192 or more: the Q fragments (D / 4 registers per thread) and the O
  // accumulator (Dv / 2) do not both fit 255 registers (ptxas spilled 48-430 B at 256, and at 192 on
  // sm_100a), so Q is staged in shared memory and its fragments are read per key tile, and P V runs in
  // 64-column slices of V (forward.hpp, o_parts).
  // fp8 on mma.sync, QK head dim 192 or more: the same, for V's fragments (32 bytes of V per
  // 8 columns): sm_100a spilled 12-520 B at 192 and 192/128 without it, sm_90a 76 B at 256.
  const bool q_in_shared = tall || (mma_sync && ((sizeof(Elem) == 2 && D >= 192 && Dv >= 192) || (fp8 && D >= 192)));
  // mma.sync, 16-bit V head dim 512: O for all of Dv is 256 fp32 registers per thread, more than a
  // thread has, so two blocks share a query tile, each with 256 of V's columns (forward.hpp).
  // fp8 with a V head dim of 192 or more: the same, since the register softmax (2026-12-06): with the
  // whole O, ptxas spilled 4-200 B on sm_90a (256) and sm_100a (192); halves cost one more Q K^T per
  // tile (1.5x the FLOPs of the one-block kernel).
  const int v_slices = mma_sync && ((sizeof(Elem) == 2 && Dv >= 512) || (fp8 && Dv >= 192)) ? 2 : 1;
  // 16-bit mma.sync at head dims up to 64: 128 keys per tile (FlashAttention-2's sm80 forward takes
  // 128 there too), so the per-tile row work (the O rescale, the row max / sum shuffles, the loop's
  // own instructions) is spread over twice the keys.
  if (mma_sync && sizeof(Elem) == 2 && D <= 64 && Dv <= 64 && cap == 64 && !tall) cap = 128;
  for (int bn : {128, 64, 32, 16, 8}) {
    if (bn > cap) continue;
    if (bn % A::N != 0 || bn % A::K != 0) continue;
    if (shared_bytes<Elem>(block_m, bn, 2, D, Dv / v_slices, q_in_shared, mma::c_is_a<A>, detail::v_transposed_for<Target, A>()) <=
        Target::shared_memory_per_block)
      return {bn, warps, 2, q_in_shared, v_slices, row_atoms};
  }
  return {0, warps, 2, q_in_shared, v_slices, row_atoms};
}

/// Whether both query tiles' configurations of (target, element, head dims) have a K/V tile that fits.
template <class Target, class Elem, int D, int Dv>
constexpr bool fits_every_tile() {
  constexpr kernel_config tall = default_config<Target, Elem, D, Dv, forward_tile::tall>();
  constexpr kernel_config standard = default_config<Target, Elem, D, Dv, forward_tile::standard>();
  return tall.block_n > 0 && standard.block_n > 0;
}

/// Whether (target, element, head dims) is shipped for a GPU build: compiled by the compile check
/// (test/compile/attention_kernels.cu) without register spills or scratch. On a CUDA or HIP build the
/// host entries throw strata::unsupported for the others; the emulator runs every configuration that fits.
///   NVIDIA (mma.sync): fp16 / bf16 head dims 32, 64, 96, 128, 192/128, 192, 256 and 512 (the last
///     three with Q in shared memory; 512 with V split over two blocks, v_slices); fp32 (FMA) head
///     dim 32. Not shipped: fp32 >= 64.
///   AMD (MFMA 16x16x16, gfx90a and gfx942, the targets the compile check builds): fp16 / bf16 head
///     dims 32 .. 256 and 192/128. 512 does not fit 64 KiB of LDS; fp32 (FMA) spills VGPRs to scratch.
///   fp8 e4m3: head dims 32 .. 256 and 192/128 where the target has fp8 tensor cores (sm_90a, sm_100a
///     with mma.sync m16n8k32; gfx942 with MFMA 16x16x32), except 256 on sm_100a (ptxas spills 40 B
///     even with Q in shared memory); not on sm_80 or gfx90a, which have none.
template <class Target, class Elem, int D, int Dv>
constexpr bool shipped() {
  if (default_config<Target, Elem, D, Dv>().block_n == 0) return false;
  const bool nvidia = Target::vendor_id == arch::vendor::nvidia;
  if constexpr (std::is_same_v<Elem, float>) return nvidia && D == 32 && Dv == 32;
  if constexpr (std::is_same_v<Elem, f8_e4m3>)
    return atom_for<Target, Elem>::K == 32 && !(std::is_same_v<Target, arch::sm100a> && D == 256) &&
           ((D == Dv && D <= 256) || (D == 192 && Dv == 128));
  const bool checked = nvidia || std::is_same_v<Target, arch::gfx90a> || std::is_same_v<Target, arch::gfx942>;
  return checked && ((D == Dv && D <= 256) || (D == 192 && Dv == 128) || (nvidia && D == 512 && Dv == 512));
}

}  // namespace strata::attn
