// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/gemm.hpp -- the host entry: strata::gemm(stream, a, b, c, d, options).
//
//   strata::ops::gemm::matrix a{a_ptr, M, K, lda, layout::row_major, strata::dtype::bf16};
//   strata::ops::gemm::matrix b{b_ptr, K, N, ldb, layout::col_major, strata::dtype::bf16};
//   strata::ops::gemm::matrix d{d_ptr, M, N, ldd, layout::row_major, strata::dtype::bf16};
//   strata::gemm(stream, a, b, d /* C: may alias D */, d, {.alpha = 1.f, .beta = 0.f});
//   strata::gemm<strata::bf16>(stream, a, b, d, d);   // typed: compiles the bf16 -> bf16 kernels only
//
// Why a descriptor and not tensor views: tensor/view.hpp views carry their element type and layout
// in the type, which suits kernels; a BLAS replacement is called with types known only at run time
// (a framework's dtype field), so the entry takes {pointer, rows, cols, ld, layout, dtype} and
// dispatches to typed kernel instantiations itself. The template path (gemm::kernel, configs.hpp)
// stays open for users who pick their own configuration.
//
// Validation (strata::invalid_argument naming "strata::gemm" and the argument): shapes agree
// (A m x k, B k x n, C and D m x n), leading dimensions cover a row / column, dtypes form a supported
// combination, 1 <= batch <= 65535 with batch strides that do not overlap (D's batch entries may not
// share elements: batch_stride 0 is only for inputs), fp8 scales only with fp8 inputs, and an output
// tile count that fits one grid. The pointers follow the entry's pointer table (pointer_table_of,
// strata/runtime/pointer_table.hpp): non-null where elements exist, elements aligned to their size
// (bias and fp8 scales to a float, options.work to 16 bytes), options.work as long as the call
// needs, and D's bytes disjoint from A's, B's, the bias's and the scales' (C may alias D only exactly:
// same pointer, ld, layout and batch stride). A combination the
// build's target has no units for (fp8 without fp8 MMA) is strata::unsupported naming the operator.
//
// fp8 (e4m3 / e5m2 -> bf16; CUDA builds with STRATA_GEMM_FP8 for sm_90a+, HIP builds for gfx942, the
// host emulator): options.a_scale and options.b_scale dequantize the product, per tensor or per row
// of A / column of B, before alpha.
//
// Heuristic (documented in docs/gemm.md):
//   host emulator  scalar FMA; tile 32 x 32 when M <= 32 (decode), else 64 x 32; fp8 always 64 x 32.
//   CUDA and HIP   M <= 8 with A row-major, B column-major, 16-byte rows, f16 / bf16 / fp32 inputs, no
//                  stream-K or explicit split-K: the GEMV kernel (gemv.hpp; one launch, no workspace).
//   sm80 class     M <= 16: 16 x 64 x 64 tile (skinny); M <= 128 or few tiles: 64 x 64 x 32; else
//                  128 x 128 x 32 (2 x 4 warps), 3 stages; 16-byte cp.async when A's and B's pointers,
//                  leading dimensions and batch strides are 16-byte multiples, else element-wise loads.
//                  With 16-byte rows (not under stream-K) each pair of A / B orders runs tiles compiled
//                  for it (operand_orders); for orders along M or N the 128 x 128 tile has no split-K
//                  form, so an explicit options.split_k above 1 takes the 64 x 64 tile there.
//                  fp32: scalar FMA (64 x 64 x 4 tile) unless options.tf32 picks the tf32 mma.sync tiles;
//                  fp8 (STRATA_GEMM_FP8): the skinny tile as sm90a (medium under stream-K).
//   CDNA           M <= 32: MFMA 16x16 with a 16 x 64 tile; else 32x32 with 128 x 128. fp8 (gfx942):
//                  the same tiles on the fp8 MFMA, OCP bytes remapped to FNUZ after each fragment load.
//                  With 16-byte rows (not under stream-K) each pair of A / B orders runs tiles compiled
//                  for it, their stages along K (an operand along M or N written transposed).
//   split-K (serial: one launch, the splits of a tile add in turn; needs options.work): when the output
//   has fewer tiles than the device has units and K >= 8 tiles of K: splits = min(ceil(4 units / tiles),
//   k_tiles / 4, 16); workspace_size() says how many bytes. Without a workspace, one split.
//   stream-K (options.stream_k, needs options.work): a cooperative grid of one block per
//   multiprocessor (or options.stream_k_blocks) divides every tile's K steps evenly; tiles split
//   between blocks are finished by chiplet-local fix-ups (strata/ops/gemm/stream_k.hpp). Opt-in.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/ops/gemm/configs.hpp"
#include "strata/ops/gemm/entry_epilogue.hpp"
#include "strata/ops/gemm/gemv.hpp"
#include "strata/ops/gemm/grouped.hpp"
#include "strata/ops/gemm/kernel.hpp"
#include "strata/ops/gemm/stream_k.hpp"
#include "strata/numeric/dtype.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/pointer_table.hpp"
#include "strata/runtime/runtime.hpp"
#include "strata/runtime/workspace.hpp"

#ifndef STRATA_GEMM_HIP_TARGET
#define STRATA_GEMM_HIP_TARGET gfx942
#endif

namespace strata::ops::gemm {

/// Element types are strata::dtype (strata/numeric/dtype.hpp), the one enum every entry takes.
/// This namespace's own enum (spellings f32, f16, i8, i32) is gone: `dtype` stays one release as a
/// deprecated alias, and the old spellings as deprecated enumerators of strata::dtype, so old code
/// compiles with a warning naming the new spelling (docs/api.md, "Migrating from the per-operator enums").
using dtype [[deprecated("use strata::dtype (fp32, fp16, bf16, int8, int32, e4m3, e5m2); see docs/api.md")]] = strata::dtype;
using strata::to_string;  // was this namespace's to_string(dtype); the names are now strata's ("fp16", not "f16")

/// Bytes per element (strata/numeric/dtype.hpp; int4 is not taken, and the entry rejects it before any
/// size is asked for). Here too, as gemm::size_of, which the convolution's entry reads.
using strata::size_of;

/// A matrix in device memory: element (r, c) at data[r * ld + c] (row-major) or data[c * ld + r].
struct matrix {
  const void* data = nullptr;
  int rows = 0, cols = 0;
  long long ld = 0;
  layout order = layout::row_major;
  strata::dtype type = strata::dtype::fp32;
  long long batch_stride = 0;  // elements between batch entries
};


struct options {
  float alpha = 1.f;
  float beta = 0.f;          // C is not read when 0
  int batch = 1;
  const float* bias = nullptr;  // n floats, added per column after alpha/beta
  activation act = activation::none;
  int split_k = 0;           // 0: the heuristic; 1: never split; n: n splits (needs a workspace)
  bool stream_k = false;     // stream-K: a persistent grid splits all K steps evenly, chiplet-local
                             // fix-ups (needs a workspace; ignores split_k). See docs/gemm.md.
  int stream_k_blocks = 0;   // stream-K grid: 0 = one block per multiprocessor (SM / CU)
  bool tf32 = false;         // fp32 inputs: multiply on TF32 tensor cores (10-bit mantissa, NVIDIA sm80+)
                             // instead of full fp32 FMA; ignored by other dtypes and other targets
  workspace work{};          // scratch for split-K and stream-K (workspace_size)
  // fp8 inputs (e4m3 / e5m2) only: dequantization scales in device memory, applied to the product
  // before alpha, D = act(alpha * (a_scale * b_scale * A B) + beta * C + bias). Null stands for 1.
  // Device pointers, as cuBLASLt's, so scales computed on the GPU need no copy to the host. Every
  // batch entry shares them.
  const float* a_scale = nullptr;  // 1 float (per tensor), or M floats with a_scale_per_row
  const float* b_scale = nullptr;  // 1 float (per tensor), or N floats with b_scale_per_col
  bool a_scale_per_row = false;    // a_scale holds one scale per row of A (and of D)
  bool b_scale_per_col = false;    // b_scale holds one scale per column of B (and of D)
};

namespace detail {

[[noreturn]] inline void bad(const std::string& arg, const std::string& why) {
  throw invalid_argument("strata::gemm", arg, why);
}

/// The bytes [first, last) a matrix's elements span over all batch entries (empty when it has none).
struct byte_range {
  std::uintptr_t first = 0, last = 0;
  bool overlaps(const byte_range& o) const { return first < last && o.first < o.last && first < o.last && o.first < last; }
};
inline void check_matrix(const matrix& x, const char* name, int rows, int cols, int batch) {
  const std::string n = name;
  if (x.rows != rows || x.cols != cols)
    bad(n, "is " + std::to_string(x.rows) + " x " + std::to_string(x.cols) + ", expected " + std::to_string(rows) +
               " x " + std::to_string(cols));
  const long long inner = x.order == layout::row_major ? cols : rows;
  if (x.ld < std::max<long long>(1, inner))
    bad(n, "has leading dimension " + std::to_string(x.ld) + ", less than its " +
               (x.order == layout::row_major ? "row length " : "column length ") + std::to_string(inner));
  const long long outer = x.order == layout::row_major ? rows : cols;
  const long long span = outer * x.ld;
  if (rows > 0 && cols > 0 && batch > 1 && x.batch_stride < span && x.batch_stride != 0)
    bad(n, "batch_stride " + std::to_string(x.batch_stride) + " overlaps the previous batch entry (needs >= " +
               std::to_string(span) + ")");
  // The pointer itself (null, alignment, overlaps) is the pointer table's (pointer_table_of).
}

/// The bytes a matrix's elements span over all batch entries, whatever its pointer (0: no elements).
inline std::uint64_t bytes_of(const matrix& x, int batch) {
  if (x.rows <= 0 || x.cols <= 0 || batch <= 0) return 0;
  const long long inner = x.order == layout::row_major ? x.cols : x.rows;
  const long long outer = x.order == layout::row_major ? x.rows : x.cols;
  const unsigned long long elems = (unsigned long long)(batch - 1) * (unsigned long long)std::max<long long>(0, x.batch_stride) +
                                   (unsigned long long)(outer - 1) * (unsigned long long)std::max<long long>(0, x.ld) +
                                   (unsigned long long)inner;
  return elems * size_of(x.type);
}

/// What "C is exactly D" compares besides the pointer: ld, order, extents and (batched) batch stride.
inline std::uint64_t alias_key(const matrix& x, int batch) {
  return layout_key({x.ld, (long long)x.order, x.rows, x.cols, batch > 1 ? x.batch_stride : 0, (long long)x.type});
}

/// strata::gemm's pointer table: every pointer argument with its role, alignment, extent and the one
/// alias it may be. `work_needed`: the bytes of options.work the call uses (0: none).
///   a, b             inputs, element-aligned, their batched extents; a == b is allowed (inputs)
///   d                the output
///   c                input when beta != 0; may be d exactly (same pointer, ld, layout, batch stride)
///   options.bias     input, n floats, float-aligned
///   options.a_scale  input, 1 or M floats (a_scale_per_row), float-aligned; fp8 only
///   options.b_scale  input, 1 or N floats (b_scale_per_col), float-aligned; fp8 only
///   options.work     workspace, 16-byte aligned, work_needed bytes of the options.work.bytes it holds
inline pointer_table pointer_table_of(const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o,
                                      std::size_t work_needed) {
  pointer_table t("strata::gemm");
  const auto mat = [&](pointer_arg& r, const matrix& x) { r.aligned(size_of(x.type), "its element size").spans(bytes_of(x, o.batch)); };
  mat(t.input("a", a.data), a);
  mat(t.input("b", b.data), b);
  mat(t.output("d", d.data).keyed(alias_key(d, o.batch)), d);
  pointer_arg& rc = t.input("c", c.data).may_be("d", alias_key(c, o.batch));
  if (o.beta != 0.f) mat(rc, c);  // C is not read when beta is 0
  else rc.aligned(1);
  const std::uint64_t m = std::uint64_t(std::max(0, d.rows)), n = std::uint64_t(std::max(0, d.cols));
  t.input("options.bias", o.bias).aligned(alignof(float), "a float").spans(o.bias && m > 0 ? n * sizeof(float) : 0);
  t.input("options.a_scale", o.a_scale).aligned(alignof(float), "a float").spans(o.a_scale ? (o.a_scale_per_row ? m : 1) * sizeof(float) : 0);
  t.input("options.b_scale", o.b_scale).aligned(alignof(float), "a float").spans(o.b_scale ? (o.b_scale_per_col ? n : 1) * sizeof(float) : 0);
  t.workspace("options.work", o.work.data, o.work.bytes).aligned(16).spans(work_needed).needs("strata::ops::gemm::workspace_size");
  return t;
}

/// Whose configurations the entry picks (dispatch): the build backend's by default. Every
/// configuration also runs on the host emulator as its own target, so tests run the CUDA and HIP
/// choices there as well (test/gemm/entry_platform_test.cpp), fp8 with its scales included.
enum class platform_kind { host, cuda, hip };
template <platform_kind Kind, bool FP8 = false>
struct platform {
  static constexpr platform_kind kind = Kind;
  static constexpr bool fp8 = FP8;  // fp8 tensor-core kernels are compiled (CUDA: STRATA_GEMM_FP8, sm90a+)
};
#if STRATA_BACKEND_CUDA
#ifdef STRATA_GEMM_FP8
using build_platform = platform<platform_kind::cuda, true>;
#else
using build_platform = platform<platform_kind::cuda>;
#endif
#elif STRATA_BACKEND_HIP
// fp8 where the build's MFMA descriptor has the fp8 instructions (gfx942; OCP inputs go through the
// byte remap of mma/mfma_ocp_fp8.hpp). gfx90a has none; gfx950 reads OCP directly and is not wired yet.
using build_platform =
    platform<platform_kind::hip, mma::cdna3_32x32x16_f32e4m3_ocp::available_on<arch::STRATA_GEMM_HIP_TARGET>>;
#else
// The emulator has every unit: fp8 runs on its scalar-FMA tiles (exact products in fp32), so fp8 code
// can be written and checked without a GPU.
using build_platform = platform<platform_kind::host, true>;
#endif

/// How the entry may read A and B, beyond their element types.
struct read_mode {
  bool rows16 = false;  // every row start of A and B (pointers, leading dimensions, batch strides) is 16-byte aligned
  bool tf32 = false;    // fp32 inputs may go through TF32 tensor cores (options.tf32)
  bool stream_k = false;  // the kernel runs inside stream_k_kernel, whose fix-up state needs registers
  operand_orders orders = operand_orders::any;  // A's and B's storage orders (any: not told)
  bool split = false;  // options.split_k asks for more than one split
  bool wide = false;  // D is large enough for the 128 x 256 tile (wide_output)
  bool few_large_tiles = false;  // the 128 x 128 tile would leave units idle (few_large_tiles)
};

/// Output tiles of tm x tn covering an m x n D (64-bit: the product can pass 2^31).
constexpr long long tile_count(int m, int n, int tm, int tn) {
  return (long long)((m + tm - 1) / tm) * ((n + tn - 1) / tn);
}

/// The smallest tile any platform's entry runs (the skinny tiles' 16 rows, the emulator's 32 x 32):
/// workspace_size bounds the serial split-K counters (one per tile) with it.
inline constexpr int serial_min_tile_m = 16, serial_min_tile_n = 32;

/// Outputs that give the 128 x 128 tile fewer tiles than there are units (SMs): the CUDA entry runs
/// the 64 x 64 tile there instead, four times the tiles, rather than split K over 8 or more parallel
/// partials and a second launch to sum them (1024^3 on an H200: 64 large tiles for 132 SMs took 8
/// splits and ran at 0.15 of cuBLASLt, docs/performance.md run 3). Split-K still applies to the
/// medium tile where it too is short of tiles (heuristic_splits). Not under stream-K, which balances
/// the large tile's K steps over the units itself.
inline bool few_large_tiles(int m, int n, int units) {
  return tile_count(m, n, 128, 128) < units;
}

/// Outputs the CUDA entry gives the 128 x 256 tile (configs::sm80_wide): at least 256 rows and 512
/// columns (its 256-column tiles then waste at most a third of a tile on the N edge), and at least one
/// tile per unit, where heuristic_splits would not split K either: the tile has no split-K form, so
/// an explicit options.split_k above 1 keeps the 128 x 128 tile. Chosen from the tile's compiled
/// code, not from a GPU timing (none measured).
inline bool wide_output(int m, int n, int units, int split_k) {
  const long long tiles = tile_count(m, n, 128, 256);
  return m >= 256 && n >= 512 && tiles >= units && split_k <= 1;
}

/// One sm80-family shape at the alignment the operands allow: 16-byte rows give cp.async of 16 bytes;
/// anything else copies element-wise with plain loads (correct, much slower: docs/gemm.md).
template <class Target, class TA, class E, shape S, class Fn>
void sm80_at_alignment(bool rows16, Fn&& fn) {
  if (rows16) fn(static_cast<configs::sm80<Target, TA, E, S, 16>*>(nullptr));
  else fn(static_cast<configs::sm80<Target, TA, E, S>*>(nullptr));
}

/// The 128 x 128 tile's form for fixed operand orders and 16-byte rows: with split-K (configs::sm80_large)
/// only for A row-major x B column-major with 16-bit or 32-bit inputs. The orders along M or N, and
/// int8 in any order, take configs::sm80_large_no_split: ptxas (nvcc 13) spilled the split form's
/// serial running sum on sm_80 (16-32 bytes for the orders along M or N; 36 bytes stored, 76 loaded
/// for int8 A row-major x B column-major, at 128 registers; 98 registers and no spill without it).
template <class TA>
constexpr shape sm80_large_for(operand_orders orders) {
  return orders == operand_orders::a_row_b_col && sizeof(TA) > 1 ? configs::sm80_large : configs::sm80_large_no_split;
}

/// S, or the form of it the pair of orders takes (sm80_large_for, for the 128 x 128 tile).
template <class TA, shape S>
constexpr shape sm80_shape_for(operand_orders orders) {
  const bool large = S.tile_m == configs::sm80_large.tile_m && S.tile_n == configs::sm80_large.tile_n;
  return large ? sm80_large_for<TA>(orders) : S;
}

/// With FixedOrders, the tiles with 16-byte rows also come compiled for each pair of operand orders
/// (operand_orders): the layouts then cost nothing in the K loop. A row-major and B column-major
/// (static instructions per HMMA on sm_90a, large 13.28 -> 3.16, medium 23.81 -> 4.38, skinny 44.12
/// -> 8.75) also take the copy streams and swizzled stages; the other three pairs lose the run-time
/// selection of copy and ldmatrix forms (test/sass/budgets.txt, `_nn`). Four more kernels per tile
/// and dtype pair, for strata::gemm: not under stream-K, whose own kernels stay one per tile, nor for
/// the grouped entry, which does not instantiate them (FixedOrders false: the grouped 128 x 128 tile
/// spilled 4 bytes in the a_row_b_col form).
///
/// Known (not any): the caller's operands always come in that pair of orders and it does not split K
/// (the convolution's 1x1 GEMMs, conv::detail::run_one_by_one), so only that pair's tiles are
/// compiled, one more per tile, without split-K forms; other orders or a split take the any-layout
/// tiles.
template <class Target, class TA, class E, shape S, bool FixedOrders, operand_orders Known = operand_orders::any, class Fn>
void sm80_at_alignment(read_mode rm, Fn&& fn) {
  if constexpr (FixedOrders && Known != operand_orders::any) {
    // Without split-K (the convolution's 1x1 passes never split): the 128 x 128 tile's form without
    // the serial running sum, whose registers the convolution's epilogue needs (sm_80: the split form
    // spilled 12 bytes there under the 128-register cap). A local: g++ 12 crashed on the expression
    // in the template argument list.
    constexpr bool large = S.tile_m == configs::sm80_large.tile_m && S.tile_n == configs::sm80_large.tile_n;
    constexpr shape known = large ? configs::sm80_large_no_split : S;
    if (rm.rows16 && !rm.stream_k && !rm.split && rm.orders == Known)
      return fn(static_cast<configs::sm80<Target, TA, E, known, 16, Known>*>(nullptr));
  } else if constexpr (FixedOrders) {
    constexpr shape along_mn = sm80_shape_for<TA, S>(operand_orders::a_row_b_row);  // the three pairs alike
    constexpr shape k_major = sm80_shape_for<TA, S>(operand_orders::a_row_b_col);
    if (rm.rows16 && !rm.stream_k) {
      switch (rm.orders) {
        case operand_orders::a_row_b_col:
          return fn(static_cast<configs::sm80<Target, TA, E, k_major, 16, operand_orders::a_row_b_col>*>(nullptr));
        case operand_orders::a_row_b_row:
          return fn(static_cast<configs::sm80<Target, TA, E, along_mn, 16, operand_orders::a_row_b_row>*>(nullptr));
        case operand_orders::a_col_b_col:
          return fn(static_cast<configs::sm80<Target, TA, E, along_mn, 16, operand_orders::a_col_b_col>*>(nullptr));
        case operand_orders::a_col_b_row:
          return fn(static_cast<configs::sm80<Target, TA, E, along_mn, 16, operand_orders::a_col_b_row>*>(nullptr));
        case operand_orders::any: break;
      }
    }
  }
  sm80_at_alignment<Target, TA, E, S>(rm.rows16, fn);
}

/// A CDNA tile (Large: the 32x32 MFMA 128 x 128 one, else the 16x16 skinny one). With FixedOrders and
/// 16-byte rows, each pair of A / B orders takes the form compiled for it: 16-byte copies staged
/// through registers, stages along K (an operand stored along M or N written transposed) and 16-byte
/// fragment reads (gfx940, bf16, 128 x 128: 4.38 static instructions per MFMA in the K loop for A
/// row-major x B column-major, against 29.56 for the element-aligned any-layout tile; docs/gemm.md).
/// Five forms of each tile per dtype pair in a HIP build: the element-aligned any-layout one and one
/// per pair of orders. Known: as sm80_at_alignment.
template <class Target, class TA, class E, bool Large, bool FixedOrders, operand_orders Known = operand_orders::any, class Fn>
void cdna_at_orders(read_mode rm, Fn&& fn) {
  if constexpr (FixedOrders && Known != operand_orders::any) {
    if (rm.rows16 && !rm.stream_k && rm.orders == Known)
      return fn(static_cast<configs::cdna<Target, TA, E, Large, 16, Known>*>(nullptr));
  } else if constexpr (FixedOrders) {
    if (rm.rows16 && !rm.stream_k) {
      switch (rm.orders) {
        case operand_orders::a_row_b_col:
          return fn(static_cast<configs::cdna<Target, TA, E, Large, 16, operand_orders::a_row_b_col>*>(nullptr));
        case operand_orders::a_row_b_row:
          return fn(static_cast<configs::cdna<Target, TA, E, Large, 16, operand_orders::a_row_b_row>*>(nullptr));
        case operand_orders::a_col_b_col:
          return fn(static_cast<configs::cdna<Target, TA, E, Large, 16, operand_orders::a_col_b_col>*>(nullptr));
        case operand_orders::a_col_b_row:
          return fn(static_cast<configs::cdna<Target, TA, E, Large, 16, operand_orders::a_col_b_row>*>(nullptr));
        case operand_orders::any: break;
      }
    }
  }
  fn(static_cast<configs::cdna<Target, TA, E, Large>*>(nullptr));
}

// Picks platform P's configuration for the shape; fn(kernel*) launches it. Tf32 false: options.tf32
// cannot reach this call (run_grouped), so the TF32 tiles are not even instantiated for it.
// FixedOrders: the tiles compiled for fixed operand orders may be picked (strata::gemm's own entry);
// Known: only those of one pair (sm80_at_alignment).
template <class P, class TA, class TD, bool Tf32 = true, bool FixedOrders = false, operand_orders Known = operand_orders::any,
          class Fn>
void dispatch(int m, Fn&& fn, read_mode rm = {}) {
  using E = entry_epilogue_for<TA, TD>;
  if constexpr (P::kind == platform_kind::cuda) {
    using fp32_fma = configs::fma<arch::sm80, TA, E, configs::fma_sm80>;
    if constexpr (is_fp8<TA>) {
      if (rm.stream_k) sm80_at_alignment<arch::sm90a, TA, E, configs::sm80_medium>(rm.rows16, fn);
      else sm80_at_alignment<arch::sm90a, TA, E, configs::sm80_skinny, FixedOrders, Known>(rm, fn);
    } else if constexpr (std::is_same_v<TA, float> && !Tf32) {
      fn(static_cast<fp32_fma*>(nullptr));
    } else {
      if constexpr (std::is_same_v<TA, float>) {
        // fp32 stays fp32 unless the caller opts into TF32 (10-bit mantissa), as cuBLAS and PyTorch do.
        if (!rm.tf32) return fn(static_cast<fp32_fma*>(nullptr));
      }
      // Under stream-K the skinny tile spills (nvcc 13, sm_90a): stream-K takes the medium tile there.
      if constexpr (FixedOrders && sizeof(TA) == 2 && (Known == operand_orders::any || Known == operand_orders::a_row_b_col)) {
        // The 128 x 256 tile: fixed orders and 16-byte rows only (its 64 x 64 warp tiles need the
        // ldmatrix path and the copy streams to fit the register file), 16-bit inputs.
        if (rm.wide && rm.rows16 && rm.orders == operand_orders::a_row_b_col && !rm.stream_k)
          return fn(static_cast<configs::sm80<arch::sm80, TA, E, configs::sm80_wide, 16, operand_orders::a_row_b_col>*>(nullptr));
      }
      // An explicit split-K where the 128 x 128 tile the orders take has no split-K form
      // (sm80_large_for): the medium tile.
      const bool large_cannot_split = FixedOrders && rm.split && rm.rows16 && !rm.stream_k &&
                                      rm.orders != operand_orders::any && !sm80_large_for<TA>(rm.orders).split_k;
      if (m <= 16 && !rm.stream_k) sm80_at_alignment<arch::sm80, TA, E, configs::sm80_skinny, FixedOrders, Known>(rm, fn);
      else if (m <= 128 || (rm.few_large_tiles && !rm.stream_k) || large_cannot_split)
        sm80_at_alignment<arch::sm80, TA, E, configs::sm80_medium, FixedOrders, Known>(rm, fn);
      else sm80_at_alignment<arch::sm80, TA, E, configs::sm80_large, FixedOrders, Known>(rm, fn);
    }
  } else if constexpr (P::kind == platform_kind::hip) {
    // One MFMA descriptor per build (STRATA_GEMM_HIP_TARGET, default gfx942): the int8 instructions
    // differ between CDNA2 and CDNA3, and a kernel is compiled for every offload arch of the build.
    // fp32 runs on the f32 MFMA (full fp32 products). With FixedOrders (strata::gemm's own entry),
    // operands with 16-byte rows run the tiles compiled for their pair of orders (cdna_at_orders);
    // every other call the element-aligned any-order tiles.
    // Under stream-K the 128 x 128 tile runs short of SGPRs (its fix-up state on top of the mainloop's),
    // so stream-K takes the 64 x 64 tile, as CUDA's stream-K avoids its skinny tile; fp8's scale
    // pointers cost two more SGPRs than that tile has left (clang 15, gfx940), so fp8 under stream-K
    // takes the 16 x 64 tile.
    using T = arch::STRATA_GEMM_HIP_TARGET;
    if (rm.stream_k) {
      if constexpr (is_fp8<TA>) fn(static_cast<configs::cdna<T, TA, E, false>*>(nullptr));
      else fn(static_cast<kernel<T, typename configs::cdna_atom<T, TA, true>::type, configs::cdna_medium, E>*>(nullptr));
    } else if (m <= 32) cdna_at_orders<T, TA, E, false, FixedOrders, Known>(rm, fn);
    else cdna_at_orders<T, TA, E, true, FixedOrders, Known>(rm, fn);
  } else {
    // fp8 takes one tile: the emulator has no decode speed to win, and every translation unit that
    // calls strata::gemm compiles the host entry's kernels (CI compile time).
    if constexpr (is_fp8<TA>) fn(static_cast<configs::fma<arch::host, TA, E>*>(nullptr));
    else if (m <= 32) fn(static_cast<configs::fma<arch::host, TA, E, configs::fma_skinny>*>(nullptr));
    else fn(static_cast<configs::fma<arch::host, TA, E>*>(nullptr));
  }
}

/// Configurations platform P's entry runs under stream-K (dispatch with read_mode::stream_k never
/// picks the others): on CUDA the skinny tile spills inside stream_k_kernel, on HIP every tile but the
/// 64 x 64 one (fp8: but the 16 x 64 one), so they are not even instantiated there.
template <class P, class K>
inline constexpr bool stream_k_shipped =
    K::orders != operand_orders::any ? false  // dispatch gives stream-K the any-order kernels only
    : P::kind == platform_kind::cuda ? !(K::tiles.tile_m == configs::sm80_skinny.tile_m && K::tiles.tile_n == configs::sm80_skinny.tile_n)
    : P::kind == platform_kind::hip
        ? (is_fp8<typename K::ta> ? K::tiles.tile_m == configs::cdna_skinny.tile_m && K::tiles.tile_n == configs::cdna_skinny.tile_n
                                  : K::tiles.tile_m == configs::cdna_medium.tile_m && K::tiles.tile_n == configs::cdna_medium.tile_n)
        : true;

/// True when every row (or column) start of a matrix at `data` with leading dimension `ld` (and, over
/// batch entries, `batch_stride`) elements of `elem_bytes` each is 16-byte aligned.
inline bool rows_aligned16(const void* data, long long ld, std::size_t elem_bytes, long long batch_stride = 0) {
  const auto sz = static_cast<long long>(elem_bytes);
  return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && (ld * sz) % 16 == 0 && (batch_stride * sz) % 16 == 0;
}
inline bool rows_aligned16(const matrix& x, int batch) {
  return rows_aligned16(x.data, x.ld, size_of(x.type), batch == 1 ? 0 : x.batch_stride);
}

inline int heuristic_splits(int m, int n, int k, int tm, int tn, int tk, int units) {
  const long long tiles = tile_count(m, n, tm, tn);
  const int k_tiles = (k + tk - 1) / tk;
  if (k_tiles < 8 || tiles >= units) return 1;
  // Aim at about four blocks per unit: the skinny and medium tiles are small enough for several
  // resident blocks, and a decode GEMM (M <= 16) is a stream over B that needs every unit busy.
  const long long want = (4LL * units + tiles - 1) / std::max<long long>(tiles, 1);
  return int(std::max<long long>(1, std::min<long long>({want, k_tiles / 4, 16})));
}

template <class T>
operand<T> operand_of(const matrix& x) {
  return {static_cast<T*>(const_cast<void*>(x.data)), x.ld, x.order, x.batch_stride};
}

/// Checks that come after the shape and dtype checks, once the workspace the call uses is known: the
/// batch stride of D, then the pointer table (null, alignment, workspace length, overlaps).
inline void check_pointers(const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o,
                           std::size_t work_needed) {
  if (o.batch > 1 && d.batch_stride == 0 && bytes_of(d, o.batch) > 0)
    bad("d", "batch_stride is 0 with batch " + std::to_string(o.batch) + ": every batch entry would write the same elements");
  pointer_table_of(a, b, c, d, o, work_needed).check();
}

/// The entry's epilogue parameters for options o (C read through cref).
template <class E, class TA, class TD>
typename E::params entry_params(const options& o, const epilogue::matrix_ref<TD>& cref) {
  if constexpr (is_fp8<TA>)
    return E::make_params({.a = o.a_scale, .b = o.b_scale, .a_stride = o.a_scale_per_row ? 1 : 0, .b_stride = o.b_scale_per_col ? 1 : 0},
                          {.alpha = o.alpha, .beta = o.beta, .c = cref}, {.bias = o.bias, .act = o.act}, {});
  else
    return E::make_params({.alpha = o.alpha, .beta = o.beta, .c = cref}, {.bias = o.bias, .act = o.act}, {});
}

template <class TD>
epilogue::matrix_ref<TD> c_ref_of(const matrix& c) {
  return {static_cast<const TD*>(c.data), c.order == layout::row_major ? c.ld : 1, c.order == layout::row_major ? 1 : c.ld};
}

/// The input types the GEMV kernel (gemv.hpp) takes.
template <class TA>
inline constexpr bool gemv_types = std::is_same_v<TA, f16> || std::is_same_v<TA, bf16> || std::is_same_v<TA, float>;

/// Calls the CUDA and HIP entries give the GEMV kernel: at most 8 rows, A row-major and B
/// column-major with 16-byte aligned rows, no stream-K and no explicit split-K (which keep the tiled
/// kernels, as the caller asked for them). fp32 runs in full fp32 there, options.tf32 or not.
inline bool gemv_fits(int m, const read_mode& rm, const options& o) {
  return m >= 1 && m <= 8 && rm.rows16 && rm.orders == operand_orders::a_row_b_col && !o.stream_k && o.split_k <= 1;
}

/// The GEMV path of run(): gemv_kernel for 4 or 8 rows, k_slices from the device's units.
template <class P, class TA, class TD>
void run_gemv(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o, int units) {
  using E = entry_epilogue_for<TA, TD>;
  using Target = std::conditional_t<P::kind == platform_kind::hip, arch::STRATA_GEMM_HIP_TARGET, arch::sm80>;
  const auto go = [&](auto* tag) {
    using K = std::remove_pointer_t<decltype(tag)>;
    check_pointers(a, b, c, d, o, 0);
    if (d.cols == 0) return;
    const problem pr{d.rows, d.cols, a.cols, o.batch};
    const int slices = gemv_slices(pr.n, pr.k, pr.batch, units, K::step);
    const auto p = K::make_params(pr, operand_of<const TA>(a), operand_of<const TA>(b), operand_of<TD>(d),
                                  entry_params<E, TA, TD>(o, c_ref_of<TD>(c)), slices);
    launch(s, K::launch_shape_of(p), K{}, p);
  };
  if (d.rows <= 4) go(static_cast<gemv_kernel<Target, TA, E, 4>*>(nullptr));
  else go(static_cast<gemv_kernel<Target, TA, E, 8>*>(nullptr));
}

template <class P, class TA, class TD>
void run(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o, int units) {
  const int m = d.rows, n = d.cols, k = a.cols;
  const read_mode rm{.rows16 = rows_aligned16(a, o.batch) && rows_aligned16(b, o.batch), .tf32 = o.tf32, .stream_k = o.stream_k,
                     .orders = orders_of(a.order, b.order),
                     .split = o.split_k > 1,
                     .wide = wide_output(m, n, units, o.split_k),
                     .few_large_tiles = few_large_tiles(m, n, units)};
  // C's batch entries move with D's (the epilogue shifts by D's stride): they must agree.
  if (o.beta != 0.f && o.batch > 1 && c.batch_stride != d.batch_stride)
    bad("c", "batch_stride must equal d's when beta != 0 (C is read at D's batch offsets)");
  if constexpr (P::kind != platform_kind::host && gemv_types<TA>) {
    if (gemv_fits(m, rm, o)) return run_gemv<P, TA, TD>(s, a, b, c, d, o, units);
  }
  dispatch<P, TA, TD, true, true>(m, [&](auto* tag) {
    using K = std::remove_pointer_t<decltype(tag)>;
    using E = typename K::epilogue_type;
    const typename E::params ep = entry_params<E, TA, TD>(o, c_ref_of<TD>(c));
    const problem pr{m, n, k, o.batch};
    // One block per output tile: the tile count must fit the grid's x extent (an int).
    const long long tiles = tile_count(m, n, K::tiles.tile_m, K::tiles.tile_n);
    if (tiles > 0x7fffffffLL)
      bad("d", "is " + std::to_string(m) + " x " + std::to_string(n) + ": " + std::to_string(tiles) +
                   " output tiles, more than one grid holds (2^31 - 1)");
    if (o.stream_k) {
      if constexpr (!stream_k_shipped<P, K>) {
        bad("options.stream_k", "internal: dispatch picked a configuration that has no stream-K form");
      } else {
      using SK = stream_k_kernel<K>;
      const int blocks = o.stream_k_blocks > 0 ? o.stream_k_blocks : units;
      const int per_chiplet = SK::units_per_chiplet_for(blocks);
      const std::size_t need = SK::workspace_bytes(per_chiplet);
      check_pointers(a, b, c, d, o, need);  // stream-K's counters and partials: options.work
      if (m == 0 || n == 0) return;
      const auto base = K::make_params(pr, operand_of<const TA>(a), operand_of<const TA>(b), operand_of<TD>(d), ep);
      zero_on_device(s, static_cast<unsigned char*>(o.work.data), SK::zeroed_bytes(per_chiplet));
      const auto p = SK::make_params(base, per_chiplet, o.work.data);
      launch(s, SK::launch_shape_of(p), SK{}, p);
      return;
      }
    }
    int splits = o.split_k;
    if (splits == 0)
      splits = o.work.data ? heuristic_splits(m, n, k, K::tiles.tile_m, K::tiles.tile_n, K::tiles.tile_k, units) : 1;
    splits = std::max(1, std::min(splits, std::max(1, (k + K::tiles.tile_k - 1) / K::tiles.tile_k)));
    // Split-K is serial (one launch): the splits of a tile take turns adding into one running sum,
    // the last applies the epilogue (kernel.hpp, split_mode::serial). The tile counters start at zero
    // (the entry zeroes them; the last split of each tile leaves its counter at zero again).
    static_assert(K::tiles.tile_m >= serial_min_tile_m && K::tiles.tile_n >= serial_min_tile_n,
                  "workspace_size bounds the serial split-K counters by tiles of at least 16 x 32");
    const std::size_t need = K::serial_workspace_bytes(pr, splits);
    check_pointers(a, b, c, d, o, splits > 1 ? need : 0);  // split-K running sums and counters: options.work
    const auto p = splits > 1 ? K::make_serial_params(pr, operand_of<const TA>(a), operand_of<const TA>(b), operand_of<TD>(d), ep,
                                                      splits, o.work.data)
                              : K::make_params(pr, operand_of<const TA>(a), operand_of<const TA>(b), operand_of<TD>(d), ep);
    if (m == 0 || n == 0 || o.batch == 0) return;
    if (splits > 1)
      zero_on_device(s, static_cast<unsigned char*>(o.work.data) + K::counters_offset(pr), K::counter_elements(pr) * sizeof(unsigned));
    launch(s, K::launch_shape_of(p), K{}, p);
  }, rm);
}

/// Multiprocessors (SMs / CUs) of the current device, read once per device from
/// strata::get_device_properties (the split-K heuristic's "units"); 1 on the host emulator.
inline int device_units() {
#if STRATA_BACKEND_HOST
  return 1;
#else
  int dev = 0;
#if STRATA_BACKEND_CUDA
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
#else
  if (hipGetDevice(&dev) != hipSuccess) dev = 0;
#endif
  constexpr int cached = 64;
  static std::atomic<int> units[cached] = {};
  if (dev < 0 || dev >= cached) return std::max(1, get_device_properties(dev).multiprocessor_count);
  int u = units[dev].load(std::memory_order_relaxed);
  if (u == 0) {
    u = std::max(1, get_device_properties(dev).multiprocessor_count);
    units[dev].store(u, std::memory_order_relaxed);
  }
  return u;
#endif
}

inline bool fp8(strata::dtype t) { return t == strata::dtype::e4m3 || t == strata::dtype::e5m2; }

/// fp8 inputs on a build whose target has no fp8 matrix units: an error, never a slow path.
[[noreturn]] inline void fp8_unsupported(const std::string& combo) {
  throw unsupported("strata::gemm: " + combo + " needs fp8 matrix units, and this build compiles none: fp8 "
                    "runs in a CUDA build for sm_90a / sm_100a with -DSTRATA_GEMM_FP8 (mma.sync e4m3 / e5m2), in "
                    "a HIP build for gfx942 (MFMA fp8), and on the host emulator. Dequantize to bf16 first, or "
                    "see docs/gemm.md.");
}

}  // namespace detail

/// Bytes of workspace a call with these arguments uses for split-K or stream-K (0 when it needs none).
/// Split-K (serial, any number of splits): one fp32 / int32 running sum per element of D, padded to
/// 256 bytes, then one counter per output tile, bounded by the smallest shipped tile (16 x 32).
/// Stream-K: one 128 x 128 tile of 4-byte partials per block (the largest shipped tile), plus the
/// counters and flags of up to 8 chiplets.
inline std::size_t workspace_size(const matrix& d, const options& o) {
  if (o.stream_k) {
    const std::size_t blocks = std::size_t(o.stream_k_blocks > 0 ? o.stream_k_blocks : detail::device_units()) + 8;
    return (8 * (blocks + 1) * sizeof(unsigned) + 255) / 256 * 256 + blocks * 128 * 128 * 4;
  }
  if (o.split_k == 1 || o.split_k < 0) return 0;  // one split (a negative one the entry refuses)
  const std::size_t batch = std::size_t(std::max(1, o.batch)), m = std::size_t(std::max(0, d.rows)), n = std::size_t(std::max(0, d.cols));
  const std::size_t sums = (batch * m * n * 4 + 255) / 256 * 256;
  const std::size_t tiles = batch * ((m + detail::serial_min_tile_m - 1) / detail::serial_min_tile_m) *
                            ((n + detail::serial_min_tile_n - 1) / detail::serial_min_tile_n);
  return sums + tiles * sizeof(unsigned);
}

namespace detail {

/// The checks every entry makes before it looks at the dtypes' kernels: options, shapes, leading
/// dimensions, dtype agreement, fp8 scales. Names no kernel, so it is a plain inline function.
inline void check_arguments(const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o) {
  if (o.batch < 1) bad("options.batch", "must be at least 1, got " + std::to_string(o.batch));
  if (o.batch > 65535) bad("options.batch", "must be at most 65535 (the grid's z extent), got " + std::to_string(o.batch));
  if (d.rows < 0 || d.cols < 0) bad("d", "has a negative extent (" + std::to_string(d.rows) + " x " + std::to_string(d.cols) + ")");
  if (a.cols < 0) bad("a", "has a negative extent (" + std::to_string(a.rows) + " x " + std::to_string(a.cols) + ")");
  const int m = d.rows, n = d.cols, k = a.cols;
  check_matrix(a, "a", m, k, o.batch);
  check_matrix(b, "b", k, n, o.batch);
  check_matrix(d, "d", m, n, o.batch);
  if (o.beta != 0.f) check_matrix(c, "c", m, n, o.batch);
  // tf32 names fp32 storage multiplied on TF32 tensor cores; the GEMM spells that as fp32 data plus
  // options.tf32, so the descriptors keep saying what the bytes are.
  for (const auto& [x, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{&c, "c"}, std::pair{&d, "d"}})
    if (x->type == strata::dtype::tf32 && (x != &c || o.beta != 0.f))
      bad(name, "has dtype tf32: describe the fp32 data as strata::dtype::fp32 and set options.tf32 = true for TF32 products");
  if (b.type != a.type) bad("b", std::string("has dtype ") + to_string(b.type) + ", A has " + to_string(a.type) + " (A and B must match)");
  if (o.beta != 0.f && c.type != d.type) bad("c", std::string("has dtype ") + to_string(c.type) + ", D has " + to_string(d.type) + " (C and D must match)");
  if (o.split_k < 0) bad("options.split_k", "must be 0 (automatic) or positive");
  if (o.stream_k_blocks < 0) bad("options.stream_k_blocks", "must be 0 (one per multiprocessor) or positive");
  for (const auto& [ptr, name] : {std::pair{o.a_scale, "options.a_scale"}, std::pair{o.b_scale, "options.b_scale"}})
    if (ptr && !fp8(a.type))
      bad(name, std::string("applies to fp8 (e4m3 / e5m2) inputs only; A and B are ") + to_string(a.type));
  if (o.a_scale_per_row && !o.a_scale) bad("options.a_scale_per_row", "is set, but options.a_scale is a null pointer");
  if (o.b_scale_per_col && !o.b_scale) bad("options.b_scale_per_col", "is set, but options.b_scale is a null pointer");
}

inline std::string combo_of(const matrix& a, const matrix& d) { return std::string(to_string(a.type)) + " -> " + to_string(d.type); }

/// The input / output element types the entry runs, and their dtype tags.
template <class T> inline constexpr strata::dtype dtype_of = strata::dtype::fp32;
template <> inline constexpr strata::dtype dtype_of<f16> = strata::dtype::fp16;
template <> inline constexpr strata::dtype dtype_of<bf16> = strata::dtype::bf16;
template <> inline constexpr strata::dtype dtype_of<std::int8_t> = strata::dtype::int8;
template <> inline constexpr strata::dtype dtype_of<std::int32_t> = strata::dtype::int32;
template <> inline constexpr strata::dtype dtype_of<f8_e4m3> = strata::dtype::e4m3;
template <> inline constexpr strata::dtype dtype_of<f8_e5m2> = strata::dtype::e5m2;
/// The C++ element type as a typed call spells it (strata::gemm<f16, float>), for its messages.
template <class T> inline constexpr const char* type_name = "float";
template <> inline constexpr const char* type_name<f16> = "f16";
template <> inline constexpr const char* type_name<bf16> = "bf16";
template <> inline constexpr const char* type_name<std::int8_t> = "std::int8_t";
template <> inline constexpr const char* type_name<std::int32_t> = "std::int32_t";
template <> inline constexpr const char* type_name<f8_e4m3> = "f8_e4m3";
template <> inline constexpr const char* type_name<f8_e5m2> = "f8_e5m2";
template <class TA, class TD>
inline constexpr bool supported_pair =
    (std::is_same_v<TA, float> && std::is_same_v<TD, float>) ||
    ((std::is_same_v<TA, f16> || std::is_same_v<TA, bf16>) && (std::is_same_v<TD, float> || std::is_same_v<TD, f16> || std::is_same_v<TD, bf16>)) ||
    (std::is_same_v<TA, std::int8_t> && std::is_same_v<TD, std::int32_t>) || (is_fp8<TA> && std::is_same_v<TD, bf16>);

/// One dtype pair as platform P runs it, after check_arguments: the kernels of that pair only.
template <class P, class TA, class TD>
void run_pair(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o) {
  if constexpr (is_fp8<TA> && !P::fp8) fp8_unsupported(combo_of(a, d));
  else run<P, TA, TD>(s, a, b, c, d, o, device_units());
}

/// The entry as platform P runs it (validation, dtype dispatch, heuristic); run() is run_on<build_platform>.
template <class P>
void run_on(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o) {
  check_arguments(a, b, c, d, o);
  switch (a.type) {
    case strata::dtype::fp32:
      if (d.type == strata::dtype::fp32) return run_pair<P, float, float>(s, a, b, c, d, o);
      break;
    case strata::dtype::fp16:
    case strata::dtype::bf16: {
      const bool h = a.type == strata::dtype::fp16;
      if (d.type == strata::dtype::fp32) return h ? run_pair<P, f16, float>(s, a, b, c, d, o) : run_pair<P, bf16, float>(s, a, b, c, d, o);
      if (d.type == strata::dtype::fp16) return h ? run_pair<P, f16, f16>(s, a, b, c, d, o) : run_pair<P, bf16, f16>(s, a, b, c, d, o);
      if (d.type == strata::dtype::bf16) return h ? run_pair<P, f16, bf16>(s, a, b, c, d, o) : run_pair<P, bf16, bf16>(s, a, b, c, d, o);
      break;
    }
    case strata::dtype::int8:
      if (d.type == strata::dtype::int32) return run_pair<P, std::int8_t, std::int32_t>(s, a, b, c, d, o);
      break;
    case strata::dtype::e4m3:
    case strata::dtype::e5m2:
      if constexpr (!P::fp8) fp8_unsupported(combo_of(a, d));
      if (d.type == strata::dtype::bf16)
        return a.type == strata::dtype::e4m3 ? run_pair<P, f8_e4m3, bf16>(s, a, b, c, d, o) : run_pair<P, f8_e5m2, bf16>(s, a, b, c, d, o);
      break;
    case strata::dtype::tf32:  // refused by check_arguments
    case strata::dtype::int32:
    case strata::dtype::int4: break;
  }
  bad("d", "dtype combination " + combo_of(a, d) + " is not supported (see docs/gemm.md)");
}

/// The typed entry as platform P runs it: the runtime entry's checks, then A's and D's dtypes must be
/// the ones the call was compiled for.
template <class P, class TA, class TD>
void run_typed_on(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o) {
  static_assert(supported_pair<TA, TD>, "strata::gemm<TA, TD>: the pairs are float -> float; f16 / bf16 -> float, f16 or bf16; "
                                        "int8_t -> int32_t; f8_e4m3 / f8_e5m2 -> bf16");
  check_arguments(a, b, c, d, o);
  const std::string typed = std::string("this call is strata::gemm<") + type_name<TA> + ", " + type_name<TD> + ">";
  if (a.type != dtype_of<TA>) bad("a", std::string("has dtype ") + to_string(a.type) + ", but " + typed);
  if (d.type != dtype_of<TD>) bad("d", std::string("has dtype ") + to_string(d.type) + ", but " + typed);
  run_pair<P, TA, TD>(s, a, b, c, d, o);
}

}  // namespace detail

/// The element types of strata::gemm's runtime-typed form: read from the descriptors' dtype fields.
struct runtime_dtype {};

namespace detail {
/// What strata::gemm<TA> writes when TD is not given: int8 -> int32, fp8 -> bf16, else TA itself.
template <class TA>
using natural_output = std::conditional_t<std::is_same_v<TA, std::int8_t>, std::int32_t, std::conditional_t<is_fp8<TA>, bf16, TA>>;
}  // namespace detail

/// D = act(alpha * A * B + beta * C + bias) for each batch entry; C may alias D.
///
///   run(s, a, b, c, d, o)                  runtime-typed: dispatches on a.type and d.type, so a call
///                                          compiles every kernel of every dtype pair (86 for sm_90a)
///   run<bf16>(s, a, b, c, d, o)            typed: compiles the kernels of one pair only (bf16 -> bf16
///   run<bf16, float>(...)                  here); a descriptor of another dtype is an error naming it
///
/// Templates even in the runtime-typed form, so that nothing is compiled until a call: nvcc generates
/// device code for every kernel named from any inline function of a translation unit, called or not,
/// so a plain inline entry made every file that included gemm.hpp compile all 86 kernels.
template <class TA = runtime_dtype, class TD = detail::natural_output<TA>>
void run(stream& s, const matrix& a, const matrix& b, const matrix& c, const matrix& d, const options& o = {}) {
  if constexpr (std::is_same_v<TA, runtime_dtype>) detail::run_on<detail::build_platform>(s, a, b, c, d, o);
  else detail::run_typed_on<detail::build_platform, TA, TD>(s, a, b, c, d, o);
}

}  // namespace strata::ops::gemm

namespace strata::ops::gemm {

/// Bytes of workspace run_grouped needs for `count` problems (the problem array in device memory).
template <class TA, class TD>
constexpr std::size_t grouped_workspace_size(std::size_t count) {
  return count * sizeof(group_entry<TA, TA, TD>);
}

/// Grouped GEMM host entry: D_g = alpha * A_g * B_g + beta * C_g for every problem of `problems`
/// (host array: shapes, device pointers, leading dimensions; A, B, D orders shared), in one launch.
/// The problem array goes to `work` (grouped_workspace_size bytes, device memory); the configuration
/// is the heuristic's for the largest M of the group. TA in {float, f16, bf16, int8_t}, TD as strata::gemm.
template <class TA, class TD>
void run_grouped(stream& s, std::vector<group_entry<TA, TA, TD>> problems, layout a, layout b, layout d,
                 float alpha, float beta, workspace work) {
  using detail::bad;
  int max_m = 0;
  // The pointer table: every problem's a, b, d (and c when beta != 0, which may be its own d exactly),
  // then the workspace the problem array is copied to. No output may share memory with any input or
  // with another problem's output.
  pointer_table t("strata::gemm");
  const auto span = [](long long ld, layout l, int rows, int cols, std::size_t elem) -> std::uint64_t {
    if (rows <= 0 || cols <= 0) return 0;
    const long long inner = l == layout::row_major ? cols : rows, outer = l == layout::row_major ? rows : cols;
    return std::uint64_t((outer - 1) * std::max<long long>(0, ld) + inner) * elem;
  };
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto& e = problems[i];
    const std::string n = "problems[" + std::to_string(i) + "]";
    if (e.m < 0 || e.n < 0 || e.k < 0) bad(n, "has a negative extent");
    const auto check = [&](long long ld, layout l, int rows, int cols, const char* what) {
      if (rows == 0 || cols == 0) return;
      const long long inner = l == layout::row_major ? cols : rows;
      if (ld < inner) bad(n + "." + what, "has leading dimension " + std::to_string(ld) + ", less than " + std::to_string(inner));
    };
    check(e.lda, a, e.m, e.k, "a");
    check(e.ldb, b, e.k, e.n, "b");
    check(e.ldd, d, e.m, e.n, "d");
    if (beta != 0.f) check(e.ldc, d, e.m, e.n, "c");
    t.input(n + ".a", e.a).aligned(sizeof(TA), "its element size").spans(span(e.lda, a, e.m, e.k, sizeof(TA)));
    t.input(n + ".b", e.b).aligned(sizeof(TA), "its element size").spans(span(e.ldb, b, e.k, e.n, sizeof(TA)));
    t.output(n + ".d", e.d).aligned(sizeof(TD), "its element size").spans(span(e.ldd, d, e.m, e.n, sizeof(TD))).keyed(layout_key({e.ldd}));
    t.input(n + ".c", e.c).aligned(sizeof(TD), "its element size").spans(beta != 0.f ? span(e.ldc, d, e.m, e.n, sizeof(TD)) : 0)
        .may_be(n + ".d", layout_key({e.ldc}));
    max_m = std::max(max_m, e.m);
  }
  if (problems.empty()) return;
  t.workspace("work", work.data, work.bytes).aligned(16).spans(grouped_workspace_size<TA, TD>(problems.size()))
      .needs("strata::ops::gemm::grouped_workspace_size");
  t.check();
  // 16-byte copies when every problem's A and B rows allow them (fp32 stays full fp32 here).
  bool rows16 = true;
  for (const auto& e : problems)
    rows16 = rows16 && detail::rows_aligned16(e.a, e.lda, sizeof(TA)) && detail::rows_aligned16(e.b, e.ldb, sizeof(TA));
  detail::dispatch<detail::build_platform, TA, TD, false>(max_m, [&](auto* tag) {
    using K = std::remove_pointer_t<decltype(tag)>;
    using G = grouped_kernel<K>;
    using E = typename K::epilogue_type;
    auto hp = problems;
    const long long tiles = G::prepare(hp);
    if (tiles == 0) return;
    auto* dev = static_cast<typename G::entry*>(work.data);
    copy_to_device(s, dev, hp.data(), hp.size());
    const typename E::params ep = E::make_params({.alpha = alpha, .beta = beta, .c = {}}, {}, {});
    const auto p = G::make_params(dev, int(hp.size()), tiles, a, b, d, ep);
    launch(s, G::launch_shape_of(p), G{}, p);
  }, detail::read_mode{.rows16 = rows16});
}

}  // namespace strata::ops::gemm

namespace strata {
/// strata::gemm(stream, a, b, c, d, options), runtime-typed, and strata::gemm<TA[, TD]>(...), typed: see
/// ops::gemm::run in strata/ops/gemm/gemm.hpp. The types live in strata::ops::gemm (a function and a
/// namespace cannot share the name strata::gemm).
template <class TA = ops::gemm::runtime_dtype, class TD = ops::gemm::detail::natural_output<TA>>
void gemm(stream& s, const ops::gemm::matrix& a, const ops::gemm::matrix& b, const ops::gemm::matrix& c,
          const ops::gemm::matrix& d, const ops::gemm::options& o = {}) {
  ops::gemm::run<TA, TD>(s, a, b, c, d, o);
}
}  // namespace strata

// The instances a precompiled kernel library provides (extern under STRATA_PRECOMPILED_ENTRIES).
#include "strata/ops/gemm/precompiled.hpp"
