// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/kernel.hpp -- the GEMM kernel template: D = epilogue(A * B), tiled over the hierarchy.
//
//   using ep     = strata::epilogue::chain<strata::epilogue::alpha_beta<bf16>, strata::epilogue::convert_to<bf16>>;
//   using kernel = strata::ops::gemm::kernel<strata::arch::sm80, strata::mma::sm80_16x8x16_f32bf16,
//                                       strata::ops::gemm::shape{128, 128, 32, 2, 2, 3}, ep>;
//   kernel::params p = kernel::make_params(problem, a, b, d, ep_params);   // host
//   strata::launch(stream, kernel::launch_shape(p), kernel{}, p);
//
// One block computes one tile_m x tile_n tile of D (of one batch entry, for one K split):
//
//   global A, B ──copy (cp.async where the target has it)──▶ shared stages (strata::pipeline)
//        ──warp_tile::load_a/load_b (the atom's fragment maps)──▶ registers ──atom──▶ accumulators
//        ──epilogue chain, per element with its (row, col) in D──▶ global D   (or fp32 partials, split-K)
//
// The block's warps form a warps_m x warps_n grid; each warp owns a (tile_m / warps_m) x
// (tile_n / warps_n) warp tile. Which output tile a block computes is the tile order's (Order) answer
// for its linear block id: group-M by default, the chiplet-aware order on chiplet targets.
//
// Shared tiles keep the operand's own major order (a column-major A is staged as tile_k rows of tile_m
// contiguous elements), so every global read is along the contiguous dimension and the warp tile reads
// the stage through a mma::matrix_ref of the same order. Every edge is predicated: the copies zero-fill
// what lies past M, N or K, and the epilogue writes only elements inside D; K = 0 runs no K step, so
// D = epilogue(0) (alpha_beta: beta * C).
//
// Kernel code talks only to the context, the pipeline, the copy and MMA atoms and the epilogue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/arch/arch.hpp"
#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/tile.hpp"
#include "strata/copy/tile_stream.hpp"
#include "strata/copy/tile_stream_transposed.hpp"
#include "strata/epilogue/epilogue.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/hierarchy/tile_order.hpp"
#include "strata/hierarchy/turn.hpp"
#include "strata/mma/ldmatrix_fragments.hpp"
#include "strata/arch/schedule.hpp"
#include "strata/mma/vector_fragments.hpp"
#include "strata/tensor/swizzle.hpp"
#include "strata/mma/mma.hpp"
#include "strata/pipeline/pipeline.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::ops::gemm {

/// Memory order of a matrix operand.
enum class layout { row_major, col_major };

/// A block tile configuration as a printable value (usable as a template argument).
struct shape {
  int tile_m = 64, tile_n = 64, tile_k = 32;  // block tile
  int warps_m = 2, warps_n = 2;               // warp grid of the block
  int stages = 2;                             // shared-memory pipeline depth
  // Fragments double-buffered by k-group where the kernel reads them with ldmatrix (kernel's
  // double_buffered_loop). It costs registers: about 20 in the 128 x 128 tile (122 -> 141 on sm_90a,
  // which would run one block per SM instead of two), so a shape whose occupancy hangs on it says no.
  bool double_buffer = true;
  // Whether the kernel has its split-K forms (parallel partials, serial running sum). A tile whose
  // registers are spent on its accumulators leaves them out: with them the 128 x 256 tile took 254
  // registers and spilled 24 bytes on sm_80 (serial running sum) and 36 on sm_100a (the partials'
  // stores); without, 224-230 and no spill on sm_80, sm_90a and sm_100a.
  bool split_k = true;
  constexpr int warps() const { return warps_m * warps_n; }
};

/// How a split-K kernel finishes its tile.
enum class split_mode {
  none,      // one split: the epilogue runs in the main kernel
  parallel,  // every split writes accumulator partials to the workspace; gemm::reduce_kernel sums them
  serial,    // the splits of a tile take turns, in split order, through a per-tile counter: split 0
             // stores its accumulators in the workspace, each later split adds its own, the last
             // one applies the epilogue to the sum and writes D. Deterministic, one launch.
};

/// A matrix operand as the kernel sees it: element (r, c) at data[r * ld + c] (row-major) or
/// data[c * ld + r] (column-major); consecutive batch entries `batch_stride` elements apart.
template <class T>
struct operand {
  T* data = nullptr;
  long long ld = 0;
  layout order = layout::row_major;
  long long batch_stride = 0;
};

namespace detail {
/// Whether n is a power of two of at least 16 (a stage row tensor/swizzle.hpp's swizzle_for takes).
constexpr bool pow2_at_least_16(int n) { return n >= 16 && (n & (n - 1)) == 0; }
/// The stage swizzle of gemm::kernel: swizzle_for<T, RowBytes> when On, else none (lazily: swizzle_for
/// refuses rows that are not a power of two).
template <bool On, class T, int RowBytes>
struct stage_swizzle_of {
  using type = no_swizzle;
};
template <class T, int RowBytes>
struct stage_swizzle_of<true, T, RowBytes> {
  using type = swizzle_for<T, RowBytes>;
};

// The epilogue ops that read a matrix of D's shape (alpha_beta's C, residual's R) move with the
// batch entry: shift their pointer by `offset` elements. Other ops (biases, scales) are shared by
// every batch entry.
template <class Op>
struct moves_with_batch : std::false_type {};
template <class T>
struct moves_with_batch<epilogue::alpha_beta<T>> : std::true_type {};
template <class T>
struct moves_with_batch<epilogue::residual<T>> : std::true_type {};

template <class Chain>
struct chain_ops;
template <class... Ops>
struct chain_ops<epilogue::chain<Ops...>> {
  template <class P, std::size_t... I>
  STRATA_HOST_DEVICE static void shift(P& p, long long offset, std::index_sequence<I...>) {
    (shift_one<Ops, I>(p, offset), ...);
  }
  template <class Op, std::size_t I, class P>
  STRATA_HOST_DEVICE static void shift_one(P& p, long long offset) {
    if constexpr (moves_with_batch<Op>::value) {
      auto& q = epilogue::get<I>(p);
      if constexpr (requires { q.c; }) {
        if (q.c.data) q.c.data += offset;
      } else {
        if (q.r.data) q.r.data += offset;
      }
    }
  }
  template <class P>
  STRATA_HOST_DEVICE static void shift(P& p, long long offset) {
    shift(p, offset, std::index_sequence_for<Ops...>{});
  }
};

template <class Chain, class P>
STRATA_HOST_DEVICE void shift_epilogue(P& p, long long offset) {
  if (offset != 0) chain_ops<Chain>::shift(p, offset);
}

template <class T>
STRATA_HOST_DEVICE constexpr T* at(const operand<T>& x, int r, int c) {
  return x.order == layout::row_major ? x.data + r * x.ld + c : x.data + c * x.ld + r;
}

template <class Atom>
inline constexpr bool is_tf32 = std::is_same_v<Atom, mma::sm80_16x8x8_f32tf32>;

}  // namespace detail

/// The storage orders of A and B a kernel is compiled for. `any` reads them from the params at run
/// time: both copy forms of each operand and both ldmatrix forms sit in the K loop, and a predicate
/// picks one per K step. A fixed pair compiles only its own copy and fragment forms. The host entry
/// runs one for every pair of orders with 16-byte rows (gemm.hpp, sm80_at_alignment). A row-major and
/// B column-major (y = x W^T with W stored row-major) is the pair whose stage rows both run along K:
/// only it takes the copy streams, swizzled stages and vector fragments (kernel::k_major_orders;
/// test/sass/budgets.txt: 13.28 -> 3.16 static instructions per HMMA, large tile). The other three
/// (x W with W stored (in, out) is a_row_b_row) copy whole stages with the block's copy loops.
enum class operand_orders { any, a_row_b_col, a_row_b_row, a_col_b_col, a_col_b_row };

/// The fixed pair for A's and B's storage orders.
constexpr operand_orders orders_of(layout a, layout b) {
  if (a == layout::row_major) return b == layout::col_major ? operand_orders::a_row_b_col : operand_orders::a_row_b_row;
  return b == layout::col_major ? operand_orders::a_col_b_col : operand_orders::a_col_b_row;
}

/// The enumerator's name, for messages.
constexpr const char* name_of(operand_orders o) {
  switch (o) {
    case operand_orders::a_row_b_col: return "a_row_b_col";
    case operand_orders::a_row_b_row: return "a_row_b_row";
    case operand_orders::a_col_b_col: return "a_col_b_col";
    case operand_orders::a_col_b_row: return "a_col_b_row";
    default: return "any";
  }
}

/// The problem one launch solves (per batch entry): D (m x n) = epilogue(A (m x k) * B (k x n)).
struct problem {
  int m = 0, n = 0, k = 0;
  int batch = 1;
};

/// D = Epilogue(A * B) with `Atom` on `Target`, tiled by `S`, tiles placed by `Order`.
///   AlignBytes  the alignment every row start of A and B is guaranteed to have (base pointers, lds
///               and tile offsets): it sets the copy width (16: cp.async 16 B on sm80). The host entry
///               checks it before choosing a 16-byte instantiation.
///   Orders      A's and B's storage orders, when fixed at compile time (operand_orders); make_params
///               refuses operands of other orders.
template <class Target, class Atom, shape S, class Epilogue, class Order = order::default_for<Target>,
          std::size_t AlignBytes = sizeof(typename Atom::a_type), operand_orders Orders = operand_orders::any>
struct kernel {
  using target = Target;
  using atom = Atom;
  using epilogue_type = Epilogue;
  using order_type = Order;
  using ta = typename Atom::a_type;
  using tb = typename Atom::b_type;
  using acc_type = typename Atom::c_type;
  using td = typename Epilogue::output_type;
  static constexpr shape tiles = S;
  static constexpr std::size_t align_bytes = AlignBytes;
  static constexpr operand_orders orders = Orders;
  static constexpr bool fixed_orders = Orders != operand_orders::any;
  /// With fixed orders: whether A (B) is row-major. Constants in the K loop.
  static constexpr bool a_row_fixed = Orders == operand_orders::a_row_b_col || Orders == operand_orders::a_row_b_row;
  static constexpr bool b_row_fixed = Orders == operand_orders::a_row_b_row || Orders == operand_orders::a_col_b_row;
  /// Both operands' stage rows run along K (A row-major, B column-major): the pair the copy streams,
  /// swizzled stages and vector fragments are built for.
  static constexpr bool k_major_orders = Orders == operand_orders::a_row_b_col;
  static constexpr const char* name = "strata::ops::gemm::kernel";

  // Preconditions, in words.
  static_assert(S.tile_m % S.warps_m == 0 && S.tile_n % S.warps_n == 0,
                "gemm::kernel: the block tile must divide evenly among the warps (tile_m % warps_m, tile_n % warps_n)");
  static_assert((S.tile_m / S.warps_m) % Atom::M == 0,
                "gemm::kernel: each warp's rows (tile_m / warps_m) must be a multiple of the atom's M");
  static_assert((S.tile_n / S.warps_n) % Atom::N == 0,
                "gemm::kernel: each warp's columns (tile_n / warps_n) must be a multiple of the atom's N");
  static_assert(S.tile_k % Atom::K == 0, "gemm::kernel: tile_k must be a multiple of the atom's K");
  static_assert(S.stages >= 2, "gemm::kernel: the pipeline needs at least 2 stages");
  static_assert(Atom::warp_size == Target::warp_size,
                "gemm::kernel: the atom's warp size is not the target's (fma_atom<T, Acc, Target::warp_size>)");
  static_assert(Atom::template available_on<Target>, "gemm::kernel: the atom does not exist on the kernel's target");

  static constexpr int threads = S.warps() * Target::warp_size;
  static constexpr int max_threads_per_block = threads;
  /// CUDA occupancy request for blocks under 256 threads: registers per thread up to 128 (the
  /// 64 Ki-register file of an sm80-, sm90- or sm100-class SM over blocks x threads). Given only the
  /// block size, ptxas (nvcc 13) chose 96 registers for the tf32 64 x 64 tile and 80 for the fp32 FMA
  /// tile and spilled 8 and 16 bytes under them; named, it allocates 107 and 128 without spills. The
  /// 256-thread tiles state none: they hold 64 accumulators per thread and take 212-255 registers,
  /// which a 128 cap would spill. HIP and the emulator ignore it.
  static constexpr int register_budget = 128;
  static constexpr int min_blocks_per_multiprocessor = threads >= 256 ? 0 : 65536 / (threads * register_budget);
  /// HIP occupancy request (the trampoline's amdgpu_waves_per_eu; CUDA and the emulator ignore it): at
  /// least two waves per SIMD, so at most 256 registers per lane for VGPRs and AGPRs together. Under
  /// that budget clang 15 selects the MFMA forms that accumulate in VGPRs; with one wave per SIMD
  /// allowed (512) it put the accumulators in AGPRs and moved all of them to VGPRs and back every K
  /// step (gfx940, the bf16 128 x 128 tile: 128 v_accvgpr moves per 16 MFMA, 280 registers, one wave
  /// per SIMD; with the request 216 registers, two waves, no moves, no spills).
  static constexpr int min_waves_per_eu = 2;
  static constexpr int warp_m = S.tile_m / S.warps_m, warp_n = S.tile_n / S.warps_n;
  using warp_tile = mma::warp_tile<Atom, warp_m, warp_n, S.tile_k>;

  // Global -> shared copies of one stage, one per operand order: the contiguous dimension is the
  // tile's columns. The block's thread count is fixed, so each thread's copy loop can unroll
  // (tile_copy's Threads). The 256-thread NVIDIA tiles with fixed operand orders do: the bf16 large
  // tile's K loop then holds no loop and 5.84 static instructions per HMMA (6.19 with the copy
  // loops), at 120 registers. The others keep the loop. Unrolled, the copy addresses were hoisted out
  // of the K loop and stayed live: the any-order large tile went from 128 to 174 registers (one block
  // per SM instead of two), ptxas spilled 20 bytes in the fp8 skinny tile under the 128-register cap
  // (sm_90a), and clang 15 spilled 4-14 SGPRs in the gfx940 MFMA tiles. (The fixed-order tiles copy
  // through streams, below, on targets with cp.async: there these copies serve only the K residue of
  // the padded A row-major x B column-major tiles.)
  static constexpr int copy_threads =
      fixed_orders && min_blocks_per_multiprocessor == 0 && Target::vendor_id == arch::vendor::nvidia ? threads : 0;
  template <class T, int Rows, int Cols>
  using stage_copy = copy::tile_copy<T, Rows, Cols, AlignBytes, copy::widest_vector_bytes<T, Cols, AlignBytes>, copy_threads>;
  using copy_a_row = stage_copy<ta, S.tile_m, S.tile_k>;  // (BLK_M, BLK_K)
  using copy_a_col = stage_copy<ta, S.tile_k, S.tile_m>;  // (BLK_K, BLK_M)
  using copy_b_row = stage_copy<tb, S.tile_k, S.tile_n>;  // (BLK_K, BLK_N)
  using copy_b_col = stage_copy<tb, S.tile_n, S.tile_k>;  // (BLK_N, BLK_K)

  // A row-major and B column-major on a target with cp.async: both operands' tiles advance along their
  // contiguous rows (K is the stage's columns), so the K loop copies them as streams
  // (copy::tile_stream): each thread's source pointers and M/N row predicates are set up once and
  // advanced by a constant; a full tile is one predicated cp.async per vector at constant offsets. The
  // K residue (a last partial tile) is loaded first, in the prologue, by the general copy, so every
  // copy inside the loop is of a full tile (gemm-forensic.md: the per-vector bounds, 64-bit address and
  // source-size arithmetic of block_copy_async were about 80 of the loop's 171 instructions).
  // The other fixed pairs stream the same way (2026-12-07): an operand whose rows run along M or N (A
  // column-major, B row-major) is a run down its rows, tile_k rows per K step, whose columns end at M
  // or N (copy::stream_edge::columns: each thread's source size is fixed for the run); its K residue
  // is a tile with fewer rows (tile_stream::copy_async_rows).
  static constexpr bool a_k_major = !fixed_orders || a_row_fixed;  // A's stage rows run along K
  static constexpr bool b_k_major = !fixed_orders || !b_row_fixed;
  template <class T, int MN, bool KMajor>
  using stream_tile =
      std::conditional_t<KMajor, copy::tile_copy<T, MN, S.tile_k, AlignBytes, copy::widest_vector_bytes<T, S.tile_k, AlignBytes>, threads>,
                         copy::tile_copy<T, S.tile_k, MN, AlignBytes, copy::widest_vector_bytes<T, MN, AlignBytes>, threads>>;
  using stream_tile_a = stream_tile<ta, S.tile_m, a_k_major>;  // (BLK_M, BLK_K), or (BLK_K, BLK_M)
  using stream_tile_b = stream_tile<tb, S.tile_n, b_k_major>;  // (BLK_N, BLK_K), or (BLK_K, BLK_N)
  static constexpr bool streamable = fixed_orders && (stream_tile_a::vector_bytes >= 4) &&
                                     (stream_tile_b::vector_bytes >= 4) && (threads % stream_tile_a::vectors_per_row == 0) &&
                                     (threads % stream_tile_b::vectors_per_row == 0);
  static constexpr bool use_streams = streamable && Target::atoms.has(arch::atom_family::cp_async);
  // Targets without cp.async (CDNA) run the same streams staged through registers: the next K step's
  // global loads are issued before the current stage's MMAs and written to the other stage after them,
  // one barrier per K step (register_staged_loop). Until 2026-12-06 the copies were plain loads whose
  // LDS writes waited for the global loads at the top of every K step, in a loop with a run-time trip
  // count per operand. A row-major and B column-major only.
  //
  // An operand stored along M or N (A column-major, B row-major) is written into its stage transposed
  // (copy::tile_stream_transposed: element stores, once per block), so that the stages of every pair
  // of orders run along K and the MFMA atoms read them 16 bytes per lane (mma::vector_fragments). Its
  // loads step down the rows, each thread on one row (Threads a multiple of tile_k).
  static constexpr bool transposable = fixed_orders && mma::vector_fragment_loadable<Atom> && sizeof(ta) == sizeof(tb) &&
                                       (a_k_major || threads % S.tile_k == 0) && (b_k_major || threads % S.tile_k == 0);
  static constexpr bool use_register_streams = streamable && (k_major_orders || transposable) && !use_streams;
  /// On the register-staged path: whether A's (B's) stage is written transposed.
  static constexpr bool transpose_a = use_register_streams && !a_k_major;
  static constexpr bool transpose_b = use_register_streams && !b_k_major;
  /// Every stage runs along K: the K-major pair, or any fixed pair on the register-staged path.
  static constexpr bool k_major_stages = k_major_orders || use_register_streams;
  static constexpr copy::stream_edge edge_a = a_k_major ? copy::stream_edge::rows : copy::stream_edge::columns;
  static constexpr copy::stream_edge edge_b = b_k_major ? copy::stream_edge::rows : copy::stream_edge::columns;
  using stream_a = std::conditional_t<streamable, copy::tile_stream<stream_tile_a, edge_a>, void>;
  using stream_b = std::conditional_t<streamable, copy::tile_stream<stream_tile_b, edge_b>, void>;
  // The register-staged loop's streams: straight where the operand runs along K, else transposed.
  using staged_stream_a = std::conditional_t<transpose_a, copy::tile_stream_transposed<stream_tile_a>, stream_a>;
  using staged_stream_b = std::conditional_t<transpose_b, copy::tile_stream_transposed<stream_tile_b>, stream_b>;

  // Fragments from shared memory: ldmatrix.x4 for the 16-bit m16n8k16 atoms on targets that have it
  // (one instruction per 16 x 16 piece), else one load per element through the atom's fragment map.
  static constexpr bool use_ldmatrix = mma::ldmatrix_loadable<Atom> && Target::atoms.has(arch::atom_family::ldmatrix) &&
                                       warp_m % 16 == 0 && warp_n % 16 == 0;
  // Fragments double-buffered by k-group (double_buffered_loop) on the ldmatrix path.
  static constexpr bool double_buffered = use_ldmatrix && S.double_buffer;
  // MFMA fragments from stages whose rows run along K (fixed orders: A row-major, B column-major):
  // each lane reads its share of a stage row with ds_read_b128 (mma::vector_fragments, K permuted
  // within the stage) instead of one 1- or 2-byte read per element.
  static constexpr bool use_vector_fragments = k_major_stages && mma::vector_fragment_loadable<Atom>;
  // The streamed fixed-order tiles XOR-swizzle their stages instead of padding them (tensor/swizzle.hpp's
  // swizzle_for: 16-byte units of a row XORed with the row's bank line): an 8-lane phase of a
  // fragment read (ldmatrix's 8 row addresses, or ds_read_b128's 8 rows at one column) and of a
  // 16-byte write (cp.async or ds_write_b128 of one or two whole rows) then both touch 8 distinct
  // 16-byte bank groups. The 16-byte padding serves only the reads: with 64-byte rows its 80-byte
  // stride left the writes 2-way (perfmodel_budgets, bf16 128 x 128 tile, per warp per K step: 128
  // wavefronts against 96 on gfx942 until 2026-12-06, 80 against 64 on sm80 until 2026-12-07).
  // On the cp.async path only rows under 128 bytes are swizzled: a 128-byte row is one write phase by
  // itself, which the padding keeps conflict-free too, and each swizzled k-group costs an address per
  // stage (sm_90a, the 16 x 64 x 64 tile: 76 instead of 70 static instructions per K step).
  static constexpr bool swizzled_stages = ((use_register_streams && use_vector_fragments) ||
                                           (use_streams && k_major_orders && use_ldmatrix && S.tile_k * int(sizeof(ta)) < 128)) &&
                                          sizeof(ta) == sizeof(tb) && detail::pow2_at_least_16(S.tile_k * int(sizeof(ta)));
  using stage_swizzle = typename detail::stage_swizzle_of<swizzled_stages, ta, S.tile_k * int(sizeof(ta))>::type;
  using ldmatrix_loader =
      std::conditional_t<use_ldmatrix, mma::ldmatrix_fragments<Atom, warp_m, warp_n, S.tile_k, stage_swizzle>, void>;
  using vector_loader =
      std::conditional_t<use_vector_fragments, mma::vector_fragments<Atom, warp_m, warp_n, S.tile_k, stage_swizzle>, void>;
  // Each stage row is padded by 16 bytes on the ldmatrix and vector-fragment paths: the eight 16-byte
  // rows of one 8x8 matrix (or of one 8-lane phase of ds_read_b128) then start 4 banks apart modulo 32
  // and never collide (unpadded, a 64-byte row put rows 0, 2, 4, 6 on the same banks: 4-way
  // conflicts). Rows stay 16-byte aligned for cp.async and 16-byte LDS writes.
  static constexpr bool padded_stages = (use_ldmatrix || use_vector_fragments) && !swizzled_stages;
  static constexpr int pad_a = padded_stages ? int(16 / sizeof(ta)) : 0, pad_b = padded_stages ? int(16 / sizeof(tb)) : 0;
  static constexpr int lda_row = S.tile_k + pad_a, lda_col = S.tile_m + pad_a;  // A row-/column-major stage
  static_assert(!use_vector_fragments || (lda_row * sizeof(ta)) % 16 == 0,
                "gemm::kernel: vector fragment reads need 16-byte stage rows (tile_k * sizeof(ta) a multiple of 16)");
  static constexpr int ldb_row = S.tile_n + pad_b, ldb_col = S.tile_k + pad_b;  // B row-/column-major stage
  // The stage rows the streams write: along K, or along M / N.
  static constexpr int lda_stream = a_k_major ? lda_row : lda_col, ldb_stream = b_k_major ? ldb_col : ldb_row;
  // A stage holds either order's form (any), or only the fixed order's.
  static constexpr int a_stage_row = S.tile_m * lda_row, a_stage_col = S.tile_k * lda_col;
  static constexpr int b_stage_row = S.tile_k * ldb_row, b_stage_col = S.tile_n * ldb_col;
  static constexpr int a_stage = fixed_orders ? (a_row_fixed || transpose_a ? a_stage_row : a_stage_col)
                                              : (a_stage_row > a_stage_col ? a_stage_row : a_stage_col);
  static constexpr int b_stage = fixed_orders ? (b_row_fixed && !transpose_b ? b_stage_row : b_stage_col)
                                              : (b_stage_row > b_stage_col ? b_stage_row : b_stage_col);

  static_assert(!swizzled_stages || ((8 * lda_row) % stage_swizzle::period == 0 && (S.tile_m * lda_row) % stage_swizzle::period == 0 &&
                                       (S.tile_n * ldb_col) % stage_swizzle::period == 0),
                "gemm::kernel: a swizzled stage must be whole swizzle periods, 8 rows each");
  // A swizzled stage starts on a bank line (128 bytes), so that its XOR pattern is the banks'.
  static constexpr std::size_t stage_align = swizzled_stages ? 128 : 16;
  struct shared_storage {
    alignas(stage_align) ta a[S.stages][a_stage];  // (STAGES, BLK_M x BLK_K in A's order, rows padded or swizzled)
    alignas(stage_align) tb b[S.stages][b_stage];  // (STAGES, BLK_K x BLK_N in B's order, rows padded or swizzled)
  };

  struct params {
    problem size;
    operand<const ta> a;
    operand<const tb> b;
    operand<td> d;
    Order order;            // linear block id -> output tile
    long long tiles = 0;    // output tiles per batch entry
    int splits = 1;         // K splits (grid.y)
    int k_tiles = 0;        // tile_k steps over the whole K
    split_mode mode = split_mode::none;
    acc_type* partials = nullptr;  // parallel: (batch, split, m, n) accumulators; serial: (batch, m, n)
    unsigned* counters = nullptr;  // serial: one per (batch, tile), zero before the launch (and after it)
    typename Epilogue::params epilogue;
    /// D may be written two elements per store (row_pairs_aligned(d), set by make_params): decided on
    /// the host, so that the kernel holds no predicate for it through the K loop.
    bool d_row_pairs = false;
  };

  /// Params for a problem; `splits` > 1 needs a workspace of partial_elements(problem, splits) acc_type.
  static params make_params(const problem& pr, operand<const ta> a, operand<const tb> b, operand<td> d,
                            const typename Epilogue::params& ep, int splits = 1, acc_type* partials = nullptr) {
    if constexpr (fixed_orders) {
      const bool a_ok = (a.order == layout::row_major) == a_row_fixed, b_ok = (b.order == layout::row_major) == b_row_fixed;
      if (!a_ok || !b_ok)
        throw invalid_argument("strata::ops::gemm::kernel::make_params", !a_ok ? "a" : "b",
                               std::string("this kernel is compiled for A ") + (a_row_fixed ? "row" : "column") +
                                   "-major and B " + (b_row_fixed ? "row" : "column") + "-major (operand_orders::" +
                                   name_of(Orders) + "); use the instantiation for the operands' orders, or operand_orders::any");
    }
    params p{};
    p.size = pr;
    p.a = a;
    p.b = b;
    p.d = d;
    const auto op = order::gemm_problem(pr.m, pr.n, pr.k, S.tile_m, S.tile_n, S.tile_k, int(sizeof(ta)), Target::chiplets);
    p.order = Order(op);
    p.tiles = op.tiles();
    p.k_tiles = (pr.k + S.tile_k - 1) / S.tile_k;
    p.splits = splits < 1 ? 1 : splits;
    if constexpr (!S.split_k) {
      if (p.splits > 1)
        throw invalid_argument("strata::ops::gemm::kernel::make_params", "splits",
                               "this tile has no split-K form (shape::split_k is false); use 1 split or another tile");
    }
    p.mode = p.splits > 1 ? split_mode::parallel : split_mode::none;
    p.partials = partials;
    p.epilogue = ep;
    p.d_row_pairs = row_pairs_aligned(d);
    return p;
  }

  /// Accumulator elements a split-K launch needs in its workspace (parallel: every split's partials;
  /// serial: one running sum of D's shape).
  static constexpr std::size_t partial_elements(const problem& pr, int splits, split_mode mode = split_mode::parallel) {
    if (splits <= 1) return 0;
    const std::size_t mn = std::size_t(pr.batch) * std::size_t(pr.m) * std::size_t(pr.n);
    return mode == split_mode::serial ? mn : mn * std::size_t(splits);
  }
  /// Tile counters a serial split-K launch needs (one per output tile and batch entry).
  static std::size_t counter_elements(const problem& pr) {
    const auto op = order::gemm_problem(pr.m, pr.n, pr.k, S.tile_m, S.tile_n, S.tile_k, int(sizeof(ta)), Target::chiplets);
    return std::size_t(op.tiles()) * std::size_t(pr.batch > 0 ? pr.batch : 1);
  }
  /// Serial split-K workspace in bytes: the running sums, then the counters (zeroed by the caller).
  static std::size_t serial_workspace_bytes(const problem& pr, int splits) {
    if (splits <= 1) return 0;
    return counters_offset(pr) + counter_elements(pr) * sizeof(unsigned);
  }
  static std::size_t counters_offset(const problem& pr) {
    const std::size_t b = std::size_t(pr.batch) * std::size_t(pr.m) * std::size_t(pr.n) * sizeof(acc_type);
    return (b + 255) / 256 * 256;
  }
  /// Serial split-K params over one workspace of serial_workspace_bytes(pr, splits) bytes.
  static params make_serial_params(const problem& pr, operand<const ta> a, operand<const tb> b, operand<td> d,
                                   const typename Epilogue::params& ep, int splits, void* workspace) {
    params p = make_params(pr, a, b, d, ep, splits, static_cast<acc_type*>(workspace));
    if (p.splits > 1) {
      p.mode = split_mode::serial;
      p.counters = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(workspace) + counters_offset(pr));
    }
    return p;
  }

  /// One block per (tile, split, batch entry).
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(int(p.tiles > 0 ? p.tiles : 1), p.splits, p.size.batch), .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    Atom::template require_target<typename Ctx::target>();
    if (p.size.m <= 0 || p.size.n <= 0) return;
    const dims blk = ctx.block().index();
    run_tile(ctx, p, p.order(blk.x), blk.y, blk.z, (long long)blk.z * p.tiles + blk.x);
  }

  /// The work of one block: output tile t of batch entry `batch`, K split `split`. `slot` is the tile's
  /// serial split-K counter. Also the body of gemm::grouped_kernel.
  template <class Ctx>
  STRATA_HOST_DEVICE void run_tile(Ctx& ctx, const params& p, order::tile t, int split, int batch, long long slot) const {
    // This split's K steps: an even share of k_tiles (a split may get none; it then writes zeros).
    const int kt_begin = int((long long)p.k_tiles * split / p.splits);
    const int kt_end = int((long long)p.k_tiles * (split + 1) / p.splits);
    typename warp_tile::accumulator acc;
    accumulate(ctx, p, t, batch, kt_begin, kt_end, acc);
    finish_tile(ctx, p, t, split, batch, slot, acc);
  }

  /// The mainloop: acc = A(tile rows, K steps [kt_begin, kt_end)) * B(K steps, tile columns) for this
  /// warp's part of output tile t. Also the body of gemm::stream_k_kernel's segments. The block's
  /// shared stages must be free on entry (a caller running it twice separates the calls by a barrier).
  template <class Ctx>
  STRATA_HOST_DEVICE void accumulate(Ctx& ctx, const params& p, order::tile t, int batch, int kt_begin, int kt_end,
                                     typename warp_tile::accumulator& acc) const {
    const int m0 = int(t.m) * S.tile_m, n0 = int(t.n) * S.tile_n;
    const ta* a = p.a.data + batch * p.a.batch_stride;
    const tb* b = p.b.data + batch * p.b.batch_stride;
    // Fixed orders: constants, so only their copy and ldmatrix forms are compiled into the loop.
    const bool a_row = fixed_orders ? a_row_fixed : p.a.order == layout::row_major;
    const bool b_row = fixed_orders ? b_row_fixed : p.b.order == layout::row_major;
    if constexpr (fixed_orders && Ctx::emulated) {
      if ((p.a.order == layout::row_major) != a_row_fixed || (p.b.order == layout::row_major) != b_row_fixed)
        kernel_bug(ctx.emulated_thread(), "gemm::kernel compiled for fixed operand orders got other layouts");
    }
    if constexpr (use_register_streams) {
      register_staged_loop(ctx, p, a, b, m0, n0, kt_begin, kt_end, acc);
      return;
    }
    if constexpr (use_streams) {
      // The stage sequence: the K residue first when this range ends in it (its summation order is
      // then residue, kt_begin, kt_begin + 1, ...: fixed, so results stay deterministic), then the
      // range's full tiles in order, each through the streams.
      const bool residue = kt_end > kt_begin && kt_end == p.k_tiles && p.size.k % S.tile_k != 0;
      const long long k0 = (long long)kt_begin * S.tile_k;
      stream_a sa = operand_stream<stream_a, a_k_major>(ctx, a, p.a.ld, m0, k0, p.size.m - m0);
      stream_b sb = operand_stream<stream_b, b_k_major>(ctx, b, p.b.ld, n0, k0, p.size.n - n0);
      mainloop(ctx, kt_begin, kt_end, a_row, b_row, acc, [&](auto& pipe, shared_storage& smem, int st, int kt, auto steady) {
        if constexpr (!decltype(steady)::value) {
          if (residue && kt == kt_begin) {
            const int kr = (kt_end - 1) * S.tile_k, k_left = p.size.k - kr;
            if constexpr (swizzled_stages || !k_major_orders) {
              // Through the streams, so that the stage layout (swizzled) is the streams'.
              copy_residue<a_k_major, lda_stream>(ctx, sa, smem.a[st], k_left, a, p.a.ld, m0, kr, p.size.m - m0, kr - k0);
              copy_residue<b_k_major, ldb_stream>(ctx, sb, smem.b[st], k_left, b, p.b.ld, n0, kr, p.size.n - n0, kr - k0);
            } else {
              copy_stage<copy_a_row>(pipe, ctx, smem.a[st], lda_row, a + m0 * p.a.ld + kr, p.a.ld, p.size.m - m0, k_left);
              copy_stage<copy_b_col>(pipe, ctx, smem.b[st], ldb_col, b + n0 * p.b.ld + kr, p.b.ld, p.size.n - n0, k_left);
            }
            return;
          }
        }
        sa.template copy_async<lda_stream, stage_swizzle>(ctx, smem.a[st]);
        sb.template copy_async<ldb_stream, stage_swizzle>(ctx, smem.b[st]);
        sa.advance(a_k_major ? S.tile_k : S.tile_k * p.a.ld);
        sb.advance(b_k_major ? S.tile_k : S.tile_k * p.b.ld);
      });
      return;
    }
    // Stage `st` <- K step `kt`: rows/columns past M, N or K are zero-filled by the copy.
    mainloop(ctx, kt_begin, kt_end, a_row, b_row, acc, [&](auto& pipe, shared_storage& smem, int st, int kt) {
      const int k0 = kt * S.tile_k;
      const int k_left = p.size.k - k0;
      if (a_row)
        copy_stage<copy_a_row>(pipe, ctx, smem.a[st], lda_row, a + m0 * p.a.ld + k0, p.a.ld, p.size.m - m0, k_left);
      else
        copy_stage<copy_a_col>(pipe, ctx, smem.a[st], lda_col, a + k0 * p.a.ld + m0, p.a.ld, k_left, p.size.m - m0);
      if (b_row)
        copy_stage<copy_b_row>(pipe, ctx, smem.b[st], ldb_row, b + k0 * p.b.ld + n0, p.b.ld, k_left, p.size.n - n0);
      else
        copy_stage<copy_b_col>(pipe, ctx, smem.b[st], ldb_col, b + n0 * p.b.ld + k0, p.b.ld, p.size.n - n0, k_left);
    });
  }

  /// An operand's stream from K step k0 on: rows of the tile along M / N (valid_mn of them) when its
  /// stage rows run along K, else K rows of the tile whose columns (valid_mn) run along M / N.
  template <class Stream, bool KMajor, class Ctx, class T>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static Stream operand_stream(Ctx& ctx, const T* base, long long ld, int mn0, long long k0,
                                                                     int valid_mn) {
    if constexpr (KMajor) return Stream(ctx, base + mn0 * ld + k0, ld, valid_mn);
    else return Stream(ctx, base + k0 * ld + mn0, ld, valid_mn);
  }

  /// The K residue's stage (K steps kr.., k_left of them exist) for an operand whose stream `s` stands
  /// at K step kr - k_ahead: a stream of its own where the stage rows run along K, else `s` itself at
  /// an offset of k_ahead rows.
  template <bool KMajor, int Ld, class Ctx, class Stream, class T>
  STRATA_HOST_DEVICE static void copy_residue(Ctx& ctx, const Stream& s, T* stage, int k_left, const T* base, long long ld,
                                              int mn0, long long kr, int valid_mn, long long k_ahead) {
    if constexpr (KMajor) {
      const auto last = operand_stream<Stream, true>(ctx, base, ld, mn0, kr, valid_mn);
      last.template copy_async_partial<Ld, stage_swizzle>(ctx, stage, k_left);
    } else {
      s.template copy_async_rows<Ld, stage_swizzle>(ctx, stage, k_left, k_ahead * ld);
    }
  }

  /// The pipelined K loop itself, over stages that `load(pipe, smem, stage, kt)` fills with K step kt
  /// (or `load(pipe, smem, stage, kt, steady)`, where steady is std::true_type inside the loop and
  /// std::false_type in the prologue, for a load that treats its first stages differently):
  /// A as (BLK_M, BLK_K) in smem.a[stage] (row-major stage, ld lda_row, when a_row; else the
  /// column-major (BLK_K, BLK_M) form, ld lda_col), B likewise (ldb_row / ldb_col). gemm's own loads
  /// copy strided tiles; an implicit GEMM (ops/conv) gathers its rows instead, and shares everything
  /// else: pipeline protocol, fragment loads, atoms.
  template <class Ctx, class Load>
  STRATA_HOST_DEVICE static void mainloop(Ctx& ctx, int kt_begin, int kt_end, bool a_row, bool b_row,
                                          typename warp_tile::accumulator& acc, Load&& load) {
    auto& smem = ctx.template shared<shared_storage>();
    auto pipe = make_pipeline<S.stages>(ctx);
    const int warp = ctx.warp().index();
    const int wm = warp / S.warps_n, wn = warp % S.warps_n;
    acc.fill(acc_type(0));

    // Prologue: fill stages - 1 stages (empty commits past the end keep the group count steady).
    const auto load_stage = [&](auto& pipe_, int st, int kt, auto steady) {
      if constexpr (std::is_invocable_v<Load&, decltype(pipe_)&, shared_storage&, int, int, decltype(steady)>)
        load(pipe_, smem, st, kt, steady);
      else
        load(pipe_, smem, st, kt);
    };
    for (int s = 0; s < S.stages - 1; ++s) {
      const int st = pipe.producer_acquire();
      if (kt_begin + s < kt_end) load_stage(pipe, st, kt_begin + s, std::false_type{});
      pipe.producer_commit();
    }
    if constexpr (double_buffered) {
      double_buffered_loop(ctx, pipe, smem, kt_begin, kt_end, a_row, b_row, acc, load_stage);
      return;
    }
    for (int kt = kt_begin; kt < kt_end; ++kt) {
      const int st = pipe.consumer_wait();
      const int ps = pipe.producer_acquire();
      if (kt + S.stages - 1 < kt_end) load_stage(pipe, ps, kt + S.stages - 1, std::true_type{});
      pipe.producer_commit();

      stage_mma(ctx, smem, st, wm, wn, a_row, b_row, acc);
      pipe.consumer_release();
    }
    apply_product_scale(acc);
  }

  /// acc += this warp's part of the product of stage `st` (A (BLK_M, BLK_K), B (BLK_K, BLK_N), each
  /// stored in its operand's order): fragments from shared memory, then the atoms.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void stage_mma(Ctx& ctx, shared_storage& smem, int st, int wm, int wn, bool a_row,
                                                              bool b_row, typename warp_tile::accumulator& acc) {
    typename warp_tile::a_fragments fa;
    typename warp_tile::b_fragments fb;
    if constexpr (use_ldmatrix) {
      ldmatrix_loader::load_a(ctx, fa, smem.a[st], a_row ? lda_row : lda_col, a_row, wm * warp_m);
      ldmatrix_loader::load_b(ctx, fb, smem.b[st], b_row ? ldb_row : ldb_col, !b_row, wn * warp_n);
    } else if constexpr (use_vector_fragments) {
      // Fixed orders: both stages run along K (A (BLK_M, BLK_K), B (BLK_N, BLK_K)).
      vector_loader::load_a(ctx, fa, smem.a[st], lda_row, wm * warp_m);
      vector_loader::load_b(ctx, fb, smem.b[st], ldb_col, wn * warp_n);
    } else {
      // The stage as matrices: A (BLK_M, BLK_K), B (BLK_K, BLK_N), each in its global order.
      const mma::matrix_ref<const ta> sa{smem.a[st], S.tile_m, S.tile_k, a_row ? lda_row : lda_col,
                                         a_row ? mma::major::row : mma::major::col};
      const mma::matrix_ref<const tb> sb{smem.b[st], S.tile_k, S.tile_n, b_row ? ldb_row : ldb_col,
                                         b_row ? mma::major::row : mma::major::col};
      // Every element lies in the stage (the warp grid tiles it exactly): no per-element bounds test.
      warp_tile::template load_a<mma::edges::inside>(ctx, fa, sa, wm * warp_m, 0);
      warp_tile::template load_b<mma::edges::inside>(ctx, fb, sb, 0, wn * warp_n);
    }
    if constexpr (detail::is_tf32<Atom>) round_tf32(fa, fb);
    if constexpr (mma::has_operand_prepare<Atom>) prepare(fa, fb);
    warp_tile::mma(ctx, fa, fb, acc);
  }

  /// An atom that multiplies rescaled operands (OCP fp8 on CDNA3: halved) is rescaled here, once,
  /// so partials, fix-ups and the epilogue all see A * B itself. A power of two: exact.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void apply_product_scale(typename warp_tile::accumulator& acc) {
    if constexpr (requires { Atom::product_scale; }) {
      STRATA_UNROLL
      for (int i = 0; i < warp_tile::atoms_m; ++i)
        STRATA_UNROLL
        for (int j = 0; j < warp_tile::atoms_n; ++j)
          STRATA_UNROLL
          for (int v = 0; v < Atom::c_values; ++v) acc.f[i][j].v[v] *= acc_type(Atom::product_scale);
    } else {
      (void)acc;
    }
  }

  /// The K loop of fixed-order tiles on targets without cp.async (use_register_streams): two stages,
  /// the operands' next K step loaded into registers (copy::tile_stream::load) before the current
  /// stage's MMAs and written to the other stage after them, then one barrier. That barrier both
  /// publishes the new stage and ends every warp's reads of the old one, which the next step's writes
  /// overwrite. The summation order is the streams' (K residue first, then the full steps in order):
  /// the same as the cp.async tiles'. The last step has no loads (peeled, so the loop has no branch
  /// on it). Returns with the stages free but for a barrier (as mainloop).
  ///
  /// An operand stored along M or N goes through a transposing stream (transpose_a / transpose_b).
  /// When one of its vectors straddles the M or N edge (M or N not a multiple of the vector, in the
  /// tile at that edge), the block runs the loop's form that reads that vector element by element;
  /// every other block keeps the branch out of its loop.
  template <class Ctx>
  STRATA_HOST_DEVICE void register_staged_loop(Ctx& ctx, const params& p, const ta* a, const tb* b, int m0, int n0,
                                               int kt_begin, int kt_end, typename warp_tile::accumulator& acc) const {
    static_assert(S.stages == 2, "gemm::kernel: the register-staged loop uses two stages; give the tile 2");
    acc.fill(acc_type(0));
    if (kt_begin >= kt_end) return;
    const long long k0 = (long long)kt_begin * S.tile_k;
    staged_stream_a sa = operand_stream<staged_stream_a, a_k_major>(ctx, a, p.a.ld, m0, k0, p.size.m - m0);
    staged_stream_b sb = operand_stream<staged_stream_b, b_k_major>(ctx, b, p.b.ld, n0, k0, p.size.n - n0);
    if constexpr (transpose_a || transpose_b) {
      // Block-uniform: whether the tile has an edge vector in A's or B's stream (the same test every
      // thread makes for its own vectors, made for the tile).
      constexpr int va = stream_tile_a::elements_per_vector, vb = stream_tile_b::elements_per_vector;
      const bool straddle = (transpose_a && p.size.m - m0 < S.tile_m && (p.size.m - m0) % va != 0) ||
                            (transpose_b && p.size.n - n0 < S.tile_n && (p.size.n - n0) % vb != 0);
      if (straddle) {
        register_staged_steps<true>(ctx, p, a, b, m0, n0, kt_begin, kt_end, sa, sb, acc);
        return;
      }
    }
    register_staged_steps<false>(ctx, p, a, b, m0, n0, kt_begin, kt_end, sa, sb, acc);
  }

  /// register_staged_loop's steps over the streams it set up (SA, SB: staged_stream_a / _b).
  template <bool Straddle, class Ctx, class SA, class SB>
  STRATA_HOST_DEVICE void register_staged_steps(Ctx& ctx, const params& p, const ta* a, const tb* b, int m0, int n0, int kt_begin,
                                                int kt_end, SA& sa, SB& sb,
                                                typename warp_tile::accumulator& acc) const {
    auto& smem = ctx.template shared<shared_storage>();
    const int warp = ctx.warp().index();
    const bool residue = kt_end == p.k_tiles && p.size.k % S.tile_k != 0;
    typename SA::staged ra;
    typename SB::staged rb;
    // One K step of both streams: the loads, then each stream advanced (along the rows, or tile_k rows
    // down them).
    const auto load_step = [&] {
      if constexpr (transpose_a) sa.template load<Straddle>(ctx, ra);
      else sa.load(ctx, ra);
      if constexpr (transpose_b) sb.template load<Straddle>(ctx, rb);
      else sb.load(ctx, rb);
      if constexpr (transpose_a) sa.advance((long long)S.tile_k * p.a.ld);
      else sa.advance();
      if constexpr (transpose_b) sb.advance((long long)S.tile_k * p.b.ld);
      else sb.advance();
    };
    // The first stage: the partial last K step when the range ends in it, else the first full one.
    const auto first = [&] {
      if (residue) {
        // The partial last K step first, zero past K: a K-major operand through a stream of its own (the
        // stage layout is the streams', swizzled), a transposed one from its stream at an offset.
        const int kr = (kt_end - 1) * S.tile_k, k_left = p.size.k - kr;
        const long long k_ahead = kr - (long long)kt_begin * S.tile_k;
        if constexpr (transpose_a) {
          sa.load_rows(ctx, ra, k_left, k_ahead * p.a.ld);
        } else {
          const auto last_a = operand_stream<SA, true>(ctx, a, p.a.ld, m0, kr, p.size.m - m0);
          last_a.load_partial(ctx, ra, k_left);
        }
        if constexpr (transpose_b) {
          sb.load_rows(ctx, rb, k_left, k_ahead * p.b.ld);
        } else {
          const auto last_b = operand_stream<SB, true>(ctx, b, p.b.ld, n0, kr, p.size.n - n0);
          last_b.load_partial(ctx, rb, k_left);
        }
      } else {
        load_step();
      }
    };
    register_staged_run(ctx, warp, kt_end - kt_begin, first, load_step,
                        [&](int st) {
                          sa.template store<lda_row, stage_swizzle>(ctx, ra, smem.a[st]);
                          sb.template store<ldb_col, stage_swizzle>(ctx, rb, smem.b[st]);
                        },
                        acc);
  }

  /// The register-staged loop's schedule over `steps` (at least one) K steps of any pair of sources
  /// (the GEMM's streams, the convolution's gathers): `first()` loads the first step into the caller's
  /// registers, `next()` each later one, `store(st)` writes the loaded registers to stage st (A row-
  /// major, B column-major, both along K). Step s + 1's loads are issued before step s's MMAs and
  /// written to the other stage after them, then one barrier; the last step has no loads (peeled, so
  /// the loop has no branch on it). Returns with the stages free but for a barrier (as mainloop).
  /// `warp`: ctx.warp().index(), read by the caller before its first loads (read after them, it cost
  /// the loop an instruction on gfx940).
  template <class Ctx, class First, class Next, class Store>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void register_staged_run(Ctx& ctx, int warp, int steps, First&& first, Next&& next,
                                                                        Store&& store, typename warp_tile::accumulator& acc) {
    auto& smem = ctx.template shared<shared_storage>();
    const int wm = warp / S.warps_n, wn = warp % S.warps_n;
    first();
    store(0);
    ctx.block().sync();
    // Full steps still to load after the one in stage 0. (Unrolled by two, so that the stage index is
    // a constant and each swizzled read address a per-lane base plus an immediate, the GEMM's loop took
    // 2.94 static instructions per MFMA instead of 4.38, but clang then held 185 registers instead of
    // 138 around the loop's tail: two waves per SIMD instead of three.)
    const int loads = steps - 1;
    int st = 0;
    for (int s = 0; s < loads; ++s) {
      next();
      arch::scheduling_fence();  // the loads before the MMAs, their LDS writes after (arch/schedule.hpp)
      stage_mma(ctx, smem, st, wm, wn, true, false, acc);
      arch::scheduling_fence();
      store(st ^ 1);
      ctx.block().sync();
      st ^= 1;
    }
    stage_mma(ctx, smem, st, wm, wn, true, false, acc);
    apply_product_scale(acc);
  }

  /// The K loop with fragments double-buffered by k-group (ldmatrix path): k-group kg + 1's fragments
  /// are loaded while kg's MMAs run, and the last k-group's MMAs run while k-group 0 of the next stage
  /// loads. So the stage wait and its barrier sit before the last k-group, not at the top of the step:
  /// after that barrier every warp is done reading the stage the copies of the next step (issued at
  /// k-group 0, after the first fragment loads) overwrite. The summation order is that of the plain
  /// loop (k-groups in order, atoms (i, j) within), so results are bit for bit the same. The last
  /// step also waits for and reads the stage after the range (empty or unused): one extra barrier per
  /// tile instead of a second branch in every K step.
  template <class Ctx, class Pipe, class LoadStage>
  STRATA_HOST_DEVICE static void double_buffered_loop(Ctx& ctx, Pipe& pipe, shared_storage& smem, int kt_begin, int kt_end,
                                                      bool a_row, bool b_row, typename warp_tile::accumulator& acc,
                                                      LoadStage& load_stage) {
    using group_tile = mma::warp_tile<Atom, warp_m, warp_n, Atom::K>;
    using group_loader = mma::ldmatrix_fragments<Atom, warp_m, warp_n, Atom::K, stage_swizzle>;
    constexpr int groups = S.tile_k / Atom::K;
    if (kt_begin >= kt_end) return;  // nothing was copied (the prologue committed empty groups)
    const int warp_index = ctx.warp().index();
    const int m0 = (warp_index / S.warps_n) * warp_m, n0 = (warp_index % S.warps_n) * warp_n;
    const int lda = a_row ? lda_row : lda_col, ldb = b_row ? ldb_row : ldb_col;
    typename group_tile::a_fragments fa[2];
    typename group_tile::b_fragments fb[2];
    // k-group kg is the stage's K columns kg * Atom::K..: in a swizzled stage a coordinate the
    // swizzle sees; else a pointer step along the rows where K is contiguous, down them where not.
    const int a_group = swizzled_stages ? 0 : a_row ? Atom::K : Atom::K * lda;
    const int b_group = swizzled_stages ? 0 : b_row ? Atom::K * ldb : Atom::K;
    const int k_group = swizzled_stages ? Atom::K : 0;
    const auto load_group = [&](int buf, int st, int kg) {
      group_loader::load_a(ctx, fa[buf], smem.a[st] + kg * a_group, lda, a_row, m0, kg * k_group);
      group_loader::load_b(ctx, fb[buf], smem.b[st] + kg * b_group, ldb, !b_row, n0, kg * k_group);
    };
    const auto warp = ctx.warp();
    // Every wait below finds Stages - 1 groups committed ahead (the prologue's, then one per step).
    int st = pipe.consumer_wait_steady();
    load_group(0, st, 0);
    for (int kt = kt_begin; kt < kt_end; ++kt) {
      STRATA_UNROLL
      for (int kg = 0; kg < groups; ++kg) {
        if (kg == groups - 1) {
          pipe.consumer_release();
          st = pipe.consumer_wait_steady();
        }
        load_group((kg + 1) & 1, st, (kg + 1) % groups);
        if (kg == 0) {
          const int ps = pipe.producer_acquire();
          if (kt + S.stages - 1 < kt_end) load_stage(pipe, ps, kt + S.stages - 1, std::true_type{});
          pipe.producer_commit();
        }
        STRATA_UNROLL
        for (int i = 0; i < warp_tile::atoms_m; ++i)
          STRATA_UNROLL
          for (int j = 0; j < warp_tile::atoms_n; ++j)
            strata::mma::mma<Atom>(warp, fa[kg & 1].f[i][0], fb[kg & 1].f[0][j], acc.f[i][j]);
      }
    }
    pipe.consumer_release();
  }

  /// The warp's coordinates of its part of the block tile.
  template <class Ctx>
  STRATA_HOST_DEVICE static int warp_row0(Ctx& ctx, order::tile t) {
    return int(t.m) * S.tile_m + (ctx.warp().index() / S.warps_n) * warp_m;
  }
  template <class Ctx>
  STRATA_HOST_DEVICE static int warp_col0(Ctx& ctx, order::tile t) {
    return int(t.n) * S.tile_n + (ctx.warp().index() % S.warps_n) * warp_n;
  }

  /// D(tile t of batch entry `batch`) = epilogue(acc): each accumulator element has exactly one owner
  /// lane (the atom's c_coord); elements past M or N are not written.
  ///
  /// A warp whose whole part of the tile lies inside a row-major D with an even ld takes store_pairs
  /// when the atom holds D's elements in pairs along rows (mma.sync): no bounds tests, addresses from
  /// one base pointer, two elements per store. Every other warp (edge tiles, a column-major D, an odd
  /// ld, the MFMA atoms, whose pairs run down columns) takes the general per-element path.
  template <class Ctx>
  STRATA_HOST_DEVICE void store_tile(Ctx& ctx, const params& p, order::tile t, int batch,
                                     const typename warp_tile::accumulator& acc) const {
    auto ep = p.epilogue;
    detail::shift_epilogue<Epilogue>(ep, batch * p.d.batch_stride);
    const operand<td> dd{p.d.data + batch * p.d.batch_stride, p.d.ld, p.d.order, 0};
    const int row0 = warp_row0(ctx, t), col0 = warp_col0(ctx, t);
    if constexpr (c_in_row_pairs) {
      if (p.d_row_pairs && row0 + warp_m <= p.size.m && col0 + warp_n <= p.size.n) {
        store_pairs(ctx.lane().index(), acc, row0, col0, dd, ep);
        return;
      }
    }
    for_each_element(ctx.lane().index(), acc, row0, col0, p.size,
                     [&](int r, int c, acc_type v) { *detail::at(dd, r, c) = Epilogue::apply(v, r, c, ep); });
  }

  /// Whether the atom's accumulator holds D's elements in pairs along rows, read from its c_coord
  /// table at compile time: values v and v + 1 (v even) of every lane are neighbours in a row,
  /// starting at an even column (mma.sync m16n8: columns 2t and 2t + 1), and each value's offset from
  /// the lane's value 0 is the same in every lane, so one base pointer per lane serves every value.
  /// MFMA's pairs run down columns; a column-major D is rare enough not to double its epilogue.
  /// Not for warp tiles of 16 rows either: they serve decode shapes (M <= 16), whose tiles are seldom
  /// full and whose K loop dwarfs the epilogue, and ptxas, allocating registers for the whole kernel,
  /// gave the skinny tile's K loop 4 more instructions per HMMA when the pair path was compiled in.
  static constexpr bool c_in_row_pairs = [] {
    if (Atom::c_values % 2 != 0 || Atom::N % 2 != 0 || sizeof(td) > 4 || warp_m < 32) return false;
    for (int l = 0; l < Atom::warp_size; ++l)
      for (int v = 0; v < Atom::c_values; ++v) {
        const mma::coord x = Atom::c_coord(l, v), first = Atom::c_coord(l, 0);
        const mma::coord o = Atom::c_coord(0, v), o0 = Atom::c_coord(0, 0);
        if (x.row - first.row != o.row - o0.row || x.col - first.col != o.col - o0.col) return false;
        if (v % 2 == 0 && x.col % 2 != 0) return false;
        if (v % 2 == 1) {
          const mma::coord prev = Atom::c_coord(l, v - 1);
          if (x.row != prev.row || x.col != prev.col + 1) return false;
        }
      }
    return true;
  }();

  /// Whether D allows store_pairs (on an atom with c_in_row_pairs): row-major, and every pair's
  /// address a multiple of its size in every batch entry (pairs start at even columns, so an even ld
  /// and batch stride and an aligned base suffice).
  STRATA_HOST_DEVICE static bool row_pairs_aligned(const operand<td>& d) {
    return c_in_row_pairs && d.order == layout::row_major && d.ld % 2 == 0 && d.batch_stride % 2 == 0 &&
           reinterpret_cast<std::uintptr_t>(d.data) % sizeof(epilogue::output_pair<td>) == 0;
  }

  /// The interior path of store_tile (the warp's part of the tile inside D, row_pairs_aligned(D)):
  /// D = epilogue(acc) two elements per store, each at an offset from one base pointer that is a
  /// constant but for the row's multiple of ld.
  template <class Ep>
  STRATA_HOST_DEVICE static void store_pairs(int lane, const typename warp_tile::accumulator& acc, int row0, int col0,
                                             const operand<td>& dd, const Ep& ep) {
    const mma::coord first = Atom::c_coord(lane, 0);
    const int r0 = row0 + first.row, c0 = col0 + first.col;
    td* const base = dd.data + r0 * dd.ld + c0;
    for_each_value([&](auto i, auto j, auto v) {
      if (v % 2 != 0) return;
      // Value v of atom (i, j), from the lane's value 0: the same in every lane (c_in_row_pairs).
      const mma::coord o = Atom::c_coord(0, v), o0 = Atom::c_coord(0, 0);
      const int dr = i * Atom::M + o.row - o0.row, dc = j * Atom::N + o.col - o0.col;
      const int r = r0 + dr, c = c0 + dc;
      *reinterpret_cast<epilogue::output_pair<td>*>(base + dr * dd.ld + dc) =
          Epilogue::apply_pair(acc.f[i][j].v[v], acc.f[i][j].v[v + 1], r, c, r, c + 1, ep);
    });
  }

  /// Calls f(row, col, value) for each accumulator element of the lane that lies inside D.
  template <class F>
  STRATA_HOST_DEVICE static void for_each_element(int lane, const typename warp_tile::accumulator& acc,
                                                  int row0, int col0, const problem& pr, F&& f) {
    for_each_value([&](auto i, auto j, auto v) {
      const mma::coord x = Atom::c_coord(lane, v);
      const int r = row0 + i * Atom::M + x.row, c = col0 + j * Atom::N + x.col;
      if (r < pr.m && c < pr.n) f(r, c, acc.f[i][j].v[v]);
    });
  }

  /// Calls f(i, j, v) for value v of atom (i, j) of the warp's accumulator, for every one, unrolled
  /// (f takes `auto` indices: ints on CUDA and the emulator, std::integral_constant on HIP).
  ///
  /// On HIP the indices are expanded at compile time (a fold over an index sequence), not loops:
  /// with a long body (the convolution epilogue's pixel decode) clang 15 declined to unroll the outer
  /// loop on gfx940, indexed the accumulator at run time and so kept the whole accumulator in scratch
  /// memory, reloading it in every K step. nvcc unrolls the loops by itself and allocates registers
  /// better for them than for the fold (the fold cost the sm_80 conv kernels 48 B of spills).
  template <class F>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void for_each_value(F&& f) {
#if STRATA_HIP_DEVICE_PASS
    constexpr int per_atom = Atom::c_values, per_row = warp_tile::atoms_n * per_atom;
    [&]<int... E>(std::integer_sequence<int, E...>) {
      (f(std::integral_constant<int, E / per_row>{},
         std::integral_constant<int, (E / per_atom) % warp_tile::atoms_n>{},
         std::integral_constant<int, E % per_atom>{}),
       ...);
    }(std::make_integer_sequence<int, warp_tile::atoms_m * per_row>{});
#else
    STRATA_UNROLL
    for (int i = 0; i < warp_tile::atoms_m; ++i)
      STRATA_UNROLL
      for (int j = 0; j < warp_tile::atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < Atom::c_values; ++v) f(i, j, v);
#endif
  }

  /// One stage of a strided tile (the copy the target's pipeline has; plain loads below 4-byte vectors).
  template <class Tile, class Pipe, class Ctx, class T>
  STRATA_HOST_DEVICE static void copy_stage(Pipe& pipe, Ctx& ctx, T* dst, int dst_ld, const T* src, long long src_ld,
                                            int rows, int cols) {
    // cp.async moves 4, 8 or 16 bytes; rows aligned to less (an odd ld of 16-bit elements) take plain
    // loads, which land at issue and are covered by the pipeline's barrier all the same.
    if constexpr (Tile::vector_bytes >= 4) pipe.template copy_tile<Tile>(dst, dst_ld, src, src_ld, rows, cols);
    else Tile::template block_copy<copy::fill::zero>(ctx, dst, dst_ld, src, src_ld, rows, cols);
  }

 private:
  template <class Ctx>
  STRATA_HOST_DEVICE void finish_tile(Ctx& ctx, const params& p, order::tile t, int split, int batch, long long slot,
                                      const typename warp_tile::accumulator& acc) const {
    const int m0 = int(t.m) * S.tile_m, n0 = int(t.n) * S.tile_n;
    const int warp = ctx.warp().index();
    const int wm = warp / S.warps_n, wn = warp % S.warps_n;
    // Epilogue: each accumulator element has exactly one owner lane (the atom's c_coord).
    const int lane = ctx.lane().index();
    if (!S.split_k || p.mode == split_mode::none) {
      store_tile(ctx, p, t, batch, acc);
    } else if (p.mode == split_mode::serial) {
      // Wait for this tile's turn: every thread acquires the counter itself, so the previous split's
      // sums are visible to it.
      unsigned* counter = p.counters + slot;
      const unsigned turn = unsigned(split);
      wait_turn(ctx, counter, turn);
      const std::size_t mn = std::size_t(p.size.m) * p.size.n;
      acc_type* sum = p.partials + std::size_t(batch) * mn;
      const bool first = split == 0, last = split == p.splits - 1;
      if (last) {
        auto ep = p.epilogue;
        detail::shift_epilogue<Epilogue>(ep, batch * p.d.batch_stride);
        const operand<td> dd{p.d.data + batch * p.d.batch_stride, p.d.ld, p.d.order, 0};
        for_each_element(lane, acc, m0 + wm * warp_m, n0 + wn * warp_n, p.size, [&](int r, int c, acc_type v) {
          const acc_type total = first ? v : acc_type(sum[std::size_t(r) * p.size.n + c] + v);
          *detail::at(dd, r, c) = Epilogue::apply(total, r, c, ep);
        });
      } else {
        for_each_element(lane, acc, m0 + wm * warp_m, n0 + wn * warp_n, p.size, [&](int r, int c, acc_type v) {
          acc_type& s = sum[std::size_t(r) * p.size.n + c];
          s = first ? v : acc_type(s + v);
        });
      }
      // Hand the tile to the next split (the last one resets the counter for the next launch).
      pass_turn(ctx, counter, last ? 0u : turn + 1u);
    } else {
      acc_type* part = p.partials + (std::size_t(batch) * p.splits + split) * std::size_t(p.size.m) * p.size.n;
      for_each_element(lane, acc, m0 + wm * warp_m, n0 + wn * warp_n, p.size,
                       [&](int r, int c, acc_type v) { part[std::size_t(r) * p.size.n + c] = v; });
    }
  }

  /// The atom's operand rewrite after each fragment load (mma::has_operand_prepare).
  STRATA_HOST_DEVICE static void prepare(typename warp_tile::a_fragments& fa, typename warp_tile::b_fragments& fb) {
    STRATA_UNROLL
    for (auto& row : fa.f)
      STRATA_UNROLL
      for (auto& f : row) Atom::prepare(f);
    STRATA_UNROLL
    for (auto& row : fb.f)
      STRATA_UNROLL
      for (auto& f : row) Atom::prepare(f);
  }

  // tf32: round to nearest (cvt.rna) rather than let the tensor core truncate the low mantissa bits.
  STRATA_HOST_DEVICE static void round_tf32(typename warp_tile::a_fragments& fa, typename warp_tile::b_fragments& fb) {
    for (auto& row : fa.f)
      for (auto& f : row)
        for (int v = 0; v < Atom::a_values; ++v) f.v[v] = mma::to_tf32(f.v[v]);
    for (auto& row : fb.f)
      for (auto& f : row)
        for (int v = 0; v < Atom::b_values; ++v) f.v[v] = mma::to_tf32(f.v[v]);
  }

};

/// Parallel split-K fix-up: D(r, c) = epilogue(sum over splits, in split order, of the partials).
/// One thread per element of D; the sum order is fixed, so results are deterministic.
template <class Target, class Acc, class Epilogue>
struct reduce_kernel {
  using target = Target;
  using td = typename Epilogue::output_type;
  static constexpr const char* name = "strata::ops::gemm::reduce_kernel";
  static constexpr int threads = 256;
  static constexpr int max_threads_per_block = threads;

  struct params {
    problem size;
    int splits = 1;
    const Acc* partials = nullptr;
    operand<td> d;
    typename Epilogue::params epilogue;
  };

  static launch_shape launch_shape_of(const params& p) {
    const long long n = (long long)p.size.m * p.size.n;
    return launch_shape{.grid = dims(int((n + threads - 1) / threads > 0 ? (n + threads - 1) / threads : 1), 1, p.size.batch),
                        .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long i = (long long)ctx.block().index().x * threads + ctx.block().thread_rank();
    const int batch = ctx.block().index().z;
    const long long mn = (long long)p.size.m * p.size.n;
    if (i >= mn) return;
    const int r = int(i / p.size.n), c = int(i % p.size.n);
    const Acc* part = p.partials + std::size_t(batch) * p.splits * mn;
    Acc sum = part[i];
    for (int s = 1; s < p.splits; ++s) sum += part[s * mn + i];
    auto ep = p.epilogue;
    detail::shift_epilogue<Epilogue>(ep, batch * p.d.batch_stride);
    const operand<td> dd{p.d.data + batch * p.d.batch_stride, p.d.ld, p.d.order, 0};
    *detail::at(dd, r, c) = Epilogue::apply(sum, r, c, ep);
  }
};

}  // namespace strata::ops::gemm
