// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared-memory wavefronts per warp per tile of the shipped sm80 configurations, counted by the emulator
// (emulator/statistics.hpp) under the bank model of emulator/detail/bank_model.hpp, against a budget.
//
// Each budget is today's measured value, so a change that adds bank conflicts fails here with the
// measured breakdown; a change that removes some should lower its budget in the same commit. Beside
// each: the ideal (every counted request at its minimum, as measured) and the goal. The counts cover
// the atoms' accesses (ldmatrix, cp.async writes, warp_tile fragment loads and stores); plain C++
// shared accesses are not in them (they show up as `uncounted` in the race-check build only).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "../gemm/support.hpp"
#include "strata/attention.hpp"

namespace emu = strata::emulator;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;

namespace {

struct budget {
  const char* config;
  long long max_per_warp_tile;  // today's measured wavefronts per warp per tile: fail above
  long long ideal;              // the ideal of the same requests, per warp per tile (measured)
};

/// The launch of `kernel` among the recorded ones (a host entry may launch more than one kernel).
const emu::launch_statistics& launch_of(const emu::statistics_recorder& rec, const std::string& kernel) {
  for (const auto& l : rec.launches())
    if (l.kernel.find(kernel) != std::string::npos) return l;
  FAIL("no launch of " << kernel << " was recorded");
  return rec.launches().front();
}

void check_budget(const budget& b, const emu::launch_statistics& l, long long tiles_per_block) {
  const long long warp_tiles = l.blocks * l.warps_per_block * tiles_per_block;
  const emu::access_traffic t = l.shared.total();
  REQUIRE(t.wavefronts % warp_tiles == 0);  // every warp does the same per tile: exact, or a counting bug
  const long long per = t.wavefronts / warp_tiles, ideal = t.ideal / warp_tiles;
  std::string kinds;
  for (int k = 0; k < emu::shared_access_kinds; ++k) {
    const emu::access_traffic& a = l.shared.by_kind[k];
    if (!a.requests) continue;
    kinds += "\n  " + std::string(emu::to_string(static_cast<emu::shared_access>(k))) + ": " +
             std::to_string(a.requests / warp_tiles) + " requests, " + std::to_string(a.wavefronts / warp_tiles) +
             " wavefronts (ideal " + std::to_string(a.ideal / warp_tiles) + ") per warp per tile";
  }
  if (l.shared.uncounted)
    kinds += "\n  uncounted plain shared accesses: " + std::to_string(*l.shared.uncounted / warp_tiles) +
             " lane accesses per warp per tile";
  std::printf("%s: %lld wavefronts per warp per tile (ideal %lld, budget %lld)%s\n", b.config, per, ideal,
              b.max_per_warp_tile, kinds.c_str());
  INFO(b.config << ": " << per << " wavefronts per warp per tile (ideal " << ideal << "), budget "
                << b.max_per_warp_tile << kinds);
  CHECK(per <= b.max_per_warp_tile);
  CHECK(ideal == b.ideal);
  CHECK(l.shared.unpaired == 0);
}

/// The GEMM launch of Kernel over m_tiles x n_tiles block tiles and k_tiles K steps.
template <class Kernel>
emu::launch_statistics gemm_launch(int m_tiles, int n_tiles, int k_tiles, strata::ops::gemm::layout b_order,
                                   strata::ops::gemm::layout a_order) {
  using namespace strata_test::gemm;
  constexpr auto S = Kernel::tiles;
  emu::statistics_recorder rec;
  check<Kernel>({.m = m_tiles * S.tile_m, .n = n_tiles * S.tile_n, .k = k_tiles * S.tile_k, .a = a_order, .b = b_order,
                 .beta = 0.5f, .seed = 7});
  const auto l = launch_of(rec, Kernel::name);
  REQUIRE(l.blocks == m_tiles * n_tiles);
  return l;
}

/// The traffic of `more` (one main-loop step more) less that of `base`: one step's.
emu::launch_statistics one_step_more(const emu::launch_statistics& base, emu::launch_statistics more) {
  for (int k = 0; k < emu::shared_access_kinds; ++k) {
    more.shared.by_kind[k].requests -= base.shared.by_kind[k].requests;
    more.shared.by_kind[k].wavefronts -= base.shared.by_kind[k].wavefronts;
    more.shared.by_kind[k].ideal -= base.shared.by_kind[k].ideal;
  }
  if (more.shared.uncounted && base.shared.uncounted) *more.shared.uncounted -= *base.shared.uncounted;
  more.shared.unpaired += base.shared.unpaired;  // both must be 0
  return more;
}

/// Per K step: the traffic of k_tiles + 1 steps less that of k_tiles, so that what a block does once
/// (the double-buffered loop's read of a stage past its range, kernel::double_buffered_loop) does not
/// count as the steady state's cost; the budgets are per warp per K step.
template <class Kernel>
void gemm_budget(const budget& b, int m_tiles, int n_tiles, int k_tiles,
                 strata::ops::gemm::layout b_order = strata::ops::gemm::layout::row_major,
                 strata::ops::gemm::layout a_order = strata::ops::gemm::layout::row_major) {
  check_budget(b, one_step_more(gemm_launch<Kernel>(m_tiles, n_tiles, k_tiles, b_order, a_order),
                                gemm_launch<Kernel>(m_tiles, n_tiles, k_tiles + 1, b_order, a_order)),
               1);
}

/// The attention forward of (D, D) bf16 on Target (sm80 unless named) with its default configuration:
/// 2 query tiles of one head, `key_tiles` full key tiles each (no mask: every tile does the same work).
template <int D, class Target = arch::sm80>
emu::launch_statistics attention_forward(int key_tiles, emu::options opt = {.workers = 1}) {
  namespace A = strata::attn;
  using K = A::forward_kernel<bf16, D, D, Target>;
  const int sq = 2 * K::BM, sk = key_tiles * K::BN;
  strata::stream s(opt);
  std::vector<bf16> hq(static_cast<std::size_t>(sq) * D), hk(static_cast<std::size_t>(sk) * D);
  for (std::size_t i = 0; i < hq.size(); ++i) hq[i] = bf16(0.01f * static_cast<float>(i % 17));
  for (std::size_t i = 0; i < hk.size(); ++i) hk[i] = bf16(0.02f * static_cast<float>(i % 13));
  auto q = strata_test::to_device(s, hq), k = strata_test::to_device(s, hk),
       v = strata_test::to_device(s, hk), o = strata_test::to_device(s, hq);
  const auto t = strata::dtype::bf16;
  emu::statistics_recorder rec;
  A::run<bf16, D, D, Target>(s, A::bshd(q.data(), t, 1, sq, 1, D), A::bshd(k.data(), t, 1, sk, 1, D),
                                 A::bshd(v.data(), t, 1, sk, 1, D), A::bshd(o.data(), t, 1, sq, 1, D));
  const auto l = launch_of(rec, "attention_forward");
  REQUIRE(l.blocks == 2);
  return l;
}

/// attention_decode of (D, D) bf16 on sm80: one query token of a GQA group of 8 heads (one block, its
/// rows the group's heads) against a dense cache of `key_tiles` full 64-key tiles, one split.
template <int D>
emu::launch_statistics attention_decode(int key_tiles) {
  namespace A = strata::attn;
  constexpr int H = 8, BN = A::default_config<arch::sm80, bf16, D, D, A::forward_tile::split_keys>().block_n;
  const int sk = key_tiles * BN;
  strata::stream s(emu::options{.workers = 1});
  std::vector<bf16> hq(static_cast<std::size_t>(H) * D), hk(static_cast<std::size_t>(sk) * D);
  for (std::size_t i = 0; i < hq.size(); ++i) hq[i] = bf16(0.01f * static_cast<float>(i % 17));
  for (std::size_t i = 0; i < hk.size(); ++i) hk[i] = bf16(0.02f * static_cast<float>(i % 13));
  auto q = strata_test::to_device(s, hq), k = strata_test::to_device(s, hk), v = strata_test::to_device(s, hk),
       o = strata_test::to_device(s, hq);
  auto lens = strata_test::to_device(s, std::vector<int>{sk});
  const auto t = strata::dtype::bf16;
  A::decode_args dec;
  dec.cache_seqlens = lens.data();
  dec.num_splits = 1;
  emu::statistics_recorder rec;
  strata::attention_decode<arch::sm80>(s, A::bshd(q.data(), t, 1, 1, H, D), A::bshd(k.data(), t, 1, sk, 1, D),
                                       A::bshd(v.data(), t, 1, sk, 1, D), A::bshd(o.data(), t, 1, 1, H, D), dec, {}, {});
  const auto l = launch_of(rec, "attention_forward");
  REQUIRE(l.blocks == 1);
  return l;
}

/// The attention backward's tensor-core dK/dV kernel of (D, D) bf16 on sm80: one 64-key tile of one
/// head against `query_tiles` 64-row query tiles (no mask: every step does the same work). The LSE is
/// zeros and O is Q: the counts do not depend on the values.
template <int D>
emu::launch_statistics attention_backward_dkdv(int query_tiles) {
  namespace A = strata::attn;
  using K = A::backward_dkdv_mma_kernel<bf16, D, D, arch::sm80>;
  const int sq = query_tiles * K::BM, sk = K::BN;
  strata::stream s(emu::options{.workers = 1});
  std::vector<bf16> hq(static_cast<std::size_t>(sq) * D), hk(static_cast<std::size_t>(sk) * D);
  for (std::size_t i = 0; i < hq.size(); ++i) hq[i] = bf16(0.01f * static_cast<float>(i % 17));
  for (std::size_t i = 0; i < hk.size(); ++i) hk[i] = bf16(0.02f * static_cast<float>(i % 13));
  auto q = strata_test::to_device(s, hq), k = strata_test::to_device(s, hk), v = strata_test::to_device(s, hk);
  auto dq = strata_test::to_device(s, hq), dk = strata_test::to_device(s, hk), dv = strata_test::to_device(s, hk);
  auto lse = strata_test::to_device(s, std::vector<float>(static_cast<std::size_t>(sq), 0.f));
  const auto t = strata::dtype::bf16;
  const A::tensor tq = A::bshd(q.data(), t, 1, sq, 1, D), tk = A::bshd(k.data(), t, 1, sk, 1, D),
                  tv = A::bshd(v.data(), t, 1, sk, 1, D);
  A::options opt;
  opt.lse = lse.data();
  strata::device_buffer<unsigned char> ws(strata::attention_backward_workspace_size<arch::sm80>(tq, tk, tv, opt));
  emu::statistics_recorder rec;
  A::run_backward<bf16, D, D, arch::sm80>(s, tq, tk, tv, tq, tq, A::bshd(dq.data(), t, 1, sq, 1, D), A::bshd(dk.data(), t, 1, sk, 1, D),
                                          A::bshd(dv.data(), t, 1, sk, 1, D), opt, {ws.data(), ws.size()});
  const auto l = launch_of(rec, "attention_backward_dkdv_mma");
  REQUIRE(l.blocks == 1);
  return l;
}

}  // namespace

// GEMM: what the CUDA entry dispatches for bf16 with 16-byte aligned rows (gemm.hpp, dispatch): the
// skinny (M <= 16), medium (M <= 128) and large tiles, each run as arch::sm80 on the emulator. A tile is
// one K step (tile_k) of one block tile: cp.async of the A and B stages, then ldmatrix.x4 fragments,
// measured as the difference between k_tiles + 1 and k_tiles steps (gemm_budget).
// The epilogue writes D from the accumulators to global memory directly (no shared staging).
// Measured 2026-12: the ldmatrix.x4 loads are at their ideal (4 each) thanks to the 16-byte row padding;
// medium and large lose 8 per warp-tile in their cp.async writes, whose 80-byte padded rows (32 bf16 +
// 16 bytes) put two rows in one quarter-warp phase with 4 banks shared (2-way in half the phases).
// The tiles compiled for A row-major x B column-major (what the entry runs for that layout) XOR-swizzle
// their stages instead (gemm::kernel::swizzled_stages, since 2026-12-07) and are at the ideal.
TEST_CASE("wavefront budgets: GEMM sm80 bf16 configurations", "[wavefronts][gemm]") {
  using E = strata::epilogue::chain<strata::epilogue::alpha_beta<bf16>, strata::epilogue::convert_to<bf16>>;
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_skinny, 16>>({"gemm sm80_skinny 16x64x64", 52, 52}, 2, 2, 3);
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16>>({"gemm sm80_medium 64x64x32", 56, 48}, 2, 2, 3);
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16>>({"gemm sm80_large 128x128x32", 72, 64}, 2, 1, 3);
  // A row-major x B column-major, the benchmarked layout, in the tiles compiled for it (what the entry
  // runs for that layout). Both stages run along K in 64-byte rows, XOR-swizzled (tensor/swizzle.hpp):
  // every cp.async write phase and every ldmatrix phase touches 8 distinct 16-byte bank groups. With
  // the 16-byte padding they had until 2026-12-07 the writes were 2-way: 64 (medium), 80 (large) and
  // 112 (wide) wavefronts.
  using sg_layout = strata::ops::gemm::layout;
  constexpr auto tn = strata::ops::gemm::operand_orders::a_row_b_col;
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16, tn>>({"gemm sm80_medium 64x64x32 A row x B col", 48, 48}, 2, 2,
                                                                         3, sg_layout::col_major);
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16, tn>>({"gemm sm80_large 128x128x32 A row x B col", 64, 64}, 2, 1,
                                                                        3, sg_layout::col_major);
  // The 128 x 256 tile (64 x 64 warp tiles, double-buffered fragments) the entry runs for large outputs:
  // its warp tile does twice the large tile's MMAs per K step for 88 wavefronts against 64, 31 % less
  // shared-memory traffic per MMA.
  gemm_budget<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_wide, 16, tn>>({"gemm sm80_wide 128x256x32 A row x B col", 88, 88}, 1, 1,
                                                                       3, sg_layout::col_major);
}

// GEMM on CDNA (gfx942, 64-lane wavefronts, the LDS model of bank_model.hpp): the MFMA tiles the HIP
// entry dispatches for bf16. Their stages are written with plain vector stores (copy::vector_copy, no
// context), which the counter cannot see; the count is the fragment loads' (warp_tile, element pairs
// merged). The race-check build reports the stage writes as uncounted. Measured 2026-12-06: the
// fragment loads cost 10x and 9x their ideal (320 / 32, 576 / 64): unpadded 64-byte stage rows read
// element-wise by 64 lanes, many rows per bank group. Goal: the ideal (padded or swizzled LDS rows and
// wide fragment loads, issue 35 item 8).
TEST_CASE("wavefront budgets: GEMM CDNA bf16 configurations (gfx942)", "[wavefronts][gemm][cdna]") {
  using E = strata::epilogue::chain<strata::epilogue::alpha_beta<bf16>, strata::epilogue::convert_to<bf16>>;
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, false>>({"gemm cdna skinny (gfx942)", 320, 32}, 2, 2, 3);
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, true>>({"gemm cdna large (gfx942)", 576, 64}, 1, 1, 3);
  // The tiles the entry runs for A row-major x B column-major with 16-byte rows (2026-12-06): fragments
  // read as 16-byte runs along a permuted K (mma::vector_fragments) and the stage writes counted too
  // (copy::tile_stream::store, 16 bytes each). Both at their ideal: 64 wavefronts for the large tile's 8
  // ds_read_b128, where the element-wise loads above cost 576 for the same data, and 32 for its 4
  // ds_write_b128 because the stages are XOR-swizzled (swizzle_for, 64-byte rows): with the 16-byte
  // padding instead, 80-byte rows put two rows in one 8-lane write phase with a 16-byte bank group
  // shared, 64 against 32, and no padding serves both the reads (8 rows per phase: an odd stride in
  // 16-byte units) and the writes (2 rows per phase: a stride of 4 modulo 8).
  using sg_layout = strata::ops::gemm::layout;
  constexpr auto tn = strata::ops::gemm::operand_orders::a_row_b_col;
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, false, 16, tn>>({"gemm cdna skinny A row x B col (gfx942)", 52, 52}, 2, 2, 3,
                                                               sg_layout::col_major);
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, true, 16, tn>>({"gemm cdna large A row x B col (gfx942)", 96, 96}, 1, 1, 3,
                                                              sg_layout::col_major);
  // The other pairs of orders (2026-12-07): an operand stored along M or N is written into its stage
  // transposed, 2 bytes per lane and element (copy::tile_stream_transposed), as many wavefronts at the
  // ideal as the 16-byte writes. In the large tile the two half-waves write rows c and c + 8 of the
  // stage (32 keys each: one vector column per half), which the 64-byte-row swizzle puts on the same
  // 16 banks: 2-way, 16 wavefronts more per operand. The skinny tile's transposed B (64-row tiles: a
  // whole wave on one vector column) is at the ideal.
  constexpr auto nn = strata::ops::gemm::operand_orders::a_row_b_row, tt = strata::ops::gemm::operand_orders::a_col_b_row;
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, false, 16, nn>>({"gemm cdna skinny A row x B row (gfx942)", 52, 52}, 2, 2, 3);
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, true, 16, nn>>({"gemm cdna large A row x B row (gfx942)", 112, 96}, 1, 1, 3);
  gemm_budget<cfg::cdna<arch::gfx942, bf16, E, true, 16, tt>>({"gemm cdna large A col x B row (gfx942)", 128, 96}, 1, 1, 3,
                                                              sg_layout::row_major, sg_layout::col_major);
}

// Attention forward, bf16, default_config<sm80, bf16, D, D>. A tile is one key tile of one block. History: the attention review (shared/research/attention-
// forensic.md, section 3) modelled the first kernel's d128 at 4 416 wavefronts per warp per tile (S
// and P through shared fp32 / bf16 tiles, element-wise K and V fragments from unpadded rows, 8-way and
// 4-way conflicts); the atoms' part of it was 2 368 (d64: 1 312), the budget here until 2026-12-06.
// Then (issue 33, forward.hpp): the softmax runs in registers, P is the A operand in registers, and
// K / V are read with ldmatrix / ldmatrix.trans from rows padded by 16 bytes, so every request is at
// its ideal: d128 (4 warps of 16 rows, 64-key tiles) = K 128 + V 128 ldmatrix wavefronts (64 x4
// requests) + cp.async 64 = 320 per warp per 64 keys; d64 = 128 + 32 = 160 per 64 keys, 320 per
// 128-key tile (the same per key).
// 2026-12-07 (issue 33 item 6), d128 takes FlashAttention-2's tall tile (config.hpp, forward_tile::tall:
// 4 warps of 32 rows, 32-key tiles, Q staged in shared memory): per warp and tile, K 64 + Q 64 + V 64
// ldmatrix wavefronts (48 x4 requests) + cp.async 32 = 224 for 32 rows and 32 keys, i.e. 448 per 32
// rows and 64 keys against 640 with 16-row warps (0.70x). Q's own staging copy happens once per block,
// so both are measured as the difference between 4 and 3 key tiles. d64 takes it too, with 64-key
// tiles: K 64 + Q 32 + V 64 ldmatrix wavefronts (40 x4 requests) + cp.async 32 = 192 per warp for 32
// rows and 64 keys, against 320 per 16 rows and 128 keys before (0.60x per query row).
TEST_CASE("wavefront budgets: attention forward sm80 bf16 d64 and d128", "[wavefronts][attention]") {
  check_budget({"attention forward bf16 d64 (tall tile)", 192, 192},
               one_step_more(attention_forward<64>(3), attention_forward<64>(4)), 1);
  check_budget({"attention forward bf16 d128 (tall tile)", 224, 224},
               one_step_more(attention_forward<128>(3), attention_forward<128>(4)), 1);
}

// The same on gfx942 (MFMA 16x16x16, one wavefront of 64 lanes per block's warp, the LDS model of
// bank_model.hpp). Its K/V stages are written with plain vector stores (no cp.async on CDNA), which
// the counter cannot see; the count is the fragment loads and the P store. Before 2026-12-06: 1 376
// (fragment loads 1 344 of ideal 136, S store 32 of 16). With the register softmax and the padded
// stage rows (issue 33): 352 = fragment loads 320 (ideal 136: K, V and P element-wise, the MFMA path
// has no ldmatrix yet) + P store 32 (ideal 8); P still goes through shared memory, because the MFMA
// accumulator layout is not its A layout (mma::c_is_a).
// 2026-12-07: V is kept transposed in its stages (V^T, forward.hpp: the copy transposes through
// registers) and K, P and V^T are read with mma::vector_fragments (16-byte reads in a permuted key /
// head-dim order): 152 = fragment loads 136, at their ideal (K 64 + V^T 64 + P 8, 17 requests) + P
// store 16 (ideal 8; P's rows are padded by 16 bytes now).
// 2026-12-08: the atom runs with its operands exchanged (S^T = K Q^T, mma::swapped): its accumulator is
// its A layout, so P stays in registers and V^T's stages keep the keys in the order the 16-byte reads
// hand them to P V (forward.hpp, v_column): 128 = K 64 + V^T 64, the fragment loads alone, at the ideal.
TEST_CASE("wavefront budgets: attention forward gfx942 bf16 d128", "[wavefronts][attention][cdna]") {
  check_budget({"attention forward bf16 d128 (gfx942)", 128, 128}, attention_forward<128, arch::gfx942>(3), 3);
}

// attention_decode's key split (issue 33 item 7, config.hpp forward_tile::split_keys), bf16 d128 on
// sm80: the four warps share the block's 16 rows and each reads its 16 keys of every 64-key tile. Per
// warp and tile: K 32 + V 32 ldmatrix wavefronts (16 x4 requests) + its quarter of the tile's
// cp.async, 64 = 128, all at their ideal, against 320 with the standard tile it ran before (every
// warp read all 64 keys of K and V for its own 16 rows, which in a decode block were mostly padding).
// The merge of (m, l, O) after the loop uses plain shared accesses once per block: not in the count.
TEST_CASE("wavefront budgets: attention decode sm80 bf16 d128 (key split)", "[wavefronts][attention]") {
  check_budget({"attention decode bf16 d128 (key split)", 128, 128}, one_step_more(attention_decode<128>(3), attention_decode<128>(4)), 1);
}

// Attention backward, the tensor-core dK/dV kernel (issue 34, backward_mma.hpp), bf16 on sm80: 8 warps
// per 64-key tile; a tile here is one 64-row query step of one warp, measured as the difference between
// 3 and 2 query steps (the K / V copy and fragment setup happen once per block), counted per block
// because the stage copies are not split evenly over the warps. Per warp and step at d128:
// ldmatrix.x4 requests for S^T (8 K steps x (1 A + 2 B)), dP^T (the same), dV and dK (4 x (1 + 4) each)
// and dQ_t (4 x (1 + 4)): 108 requests, 432 wavefronts, all at their ideal on the 16-byte padded rows
// (8 warps: 864 requests, 3 456 wavefronts); plus the cp.async writes of the Q and dO stages (64
// requests) and of the rows' LSE2 and Di (2), 260 wavefronts, at their ideal: 3 716 per block and
// step, 2.9 per HMMA (the forward: 2.5). P^T and dS^T are written (32-bit pairs) and LSE2 / Di read
// with plain shared accesses, which the counter does not see. d64: 480 requests, 1 920 + 132.
TEST_CASE("wavefront budgets: attention backward dK/dV sm80 bf16 d64 and d128", "[wavefronts][attention]") {
  // Per block (8 warps) and step: the stage copies are not split evenly over the warps.
  auto per_block = [](emu::launch_statistics l) {
    l.warps_per_block = 1;
    return l;
  };
  check_budget({"attention backward dK/dV bf16 d64 (per block)", 2052, 2052},
               per_block(one_step_more(attention_backward_dkdv<64>(2), attention_backward_dkdv<64>(3))), 1);
  check_budget({"attention backward dK/dV bf16 d128 (per block)", 3716, 3716},
               per_block(one_step_more(attention_backward_dkdv<128>(2), attention_backward_dkdv<128>(3))), 1);
}

TEST_CASE("wavefront counts do not depend on the worker count or the schedule", "[wavefronts][attention]") {
  const auto ref = attention_forward<64>(2);
  for (const auto& o : {emu::options{.workers = 2, .order = emu::schedule::reverse},
                        emu::options{.workers = 2, .order = emu::schedule::random, .seed = 99}}) {
    const auto l = attention_forward<64>(2, o);
    for (int k = 0; k < emu::shared_access_kinds; ++k) {
      CHECK(l.shared.by_kind[k].requests == ref.shared.by_kind[k].requests);
      CHECK(l.shared.by_kind[k].wavefronts == ref.shared.by_kind[k].wavefronts);
      CHECK(l.shared.by_kind[k].ideal == ref.shared.by_kind[k].ideal);
    }
  }
}
