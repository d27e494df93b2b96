// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/gemm/gemv.hpp -- D = epilogue(A * B) for decode shapes: at most 8 rows of A, both
// operands contiguous along K (A row-major, B column-major: a linear layer's activations times its
// N x K weights), every row start 16-byte aligned.
//
// Why a kernel of its own: with M <= 8 the GEMM is a stream over B (N x K elements read once, each
// used by M rows), and a tensor-core tile of 16 rows spends most of its issue slots and shared-memory
// traffic on rows that do not exist. Here each warp owns `cols` (4) columns of D and reads their K
// elements straight from global memory, 16 bytes per lane per load, with A's rows (small, read by
// every warp, served from L1) loaded beside them; products accumulate in fp32 registers, and one
// warp reduction at the end sums the lanes. No shared-memory staging, no tensor cores, no workspace.
//
// Work split: a block of 4 warps covers 4 / k_slices column groups; the k_slices warps of a group
// split K in whole warp steps and their sums meet in shared memory, added in slice order (the
// result does not depend on timing). The host picks k_slices (1, 2 or 4) so that small N still
// fills the device (gemv_slices).
//
// Rows: the kernel is compiled for `Rows` (4 or 8) rows; a call with fewer reads row m - 1 again
// for the missing ones (L1 hits) and does not store them, so the loop has no row tests.
// Reduction: the warp's rows x cols sums are halved at each shuffle level (each lane keeps the half
// its lane bit selects and adds its partner's copy), 31 shuffles for 32 sums instead of 32 x 5.
#pragma once

#include <cstdint>
#include <type_traits>

#include "strata/arch/widen.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/hierarchy/dims.hpp"
#include "strata/numeric/numeric.hpp"
#include "strata/ops/gemm/kernel.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/launch_shape.hpp"

namespace strata::ops::gemm {

namespace detail {

/// The `vector` floats of one 16-byte load of TA elements (f16, bf16 or float).
template <class TA>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void widen16(const copy::detail::raw_vector<16>& raw, float* out) {
  STRATA_UNROLL
  for (int w = 0; w < 4; ++w) {
    const std::uint32_t x = raw.w[w];
    if constexpr (std::is_same_v<TA, float>) {
      out[w] = __builtin_bit_cast(float, x);
    } else if constexpr (std::is_same_v<TA, bf16>) {
      out[2 * w] = __builtin_bit_cast(float, x << 16);  // bf16 is the top half of a float
      out[2 * w + 1] = __builtin_bit_cast(float, x & 0xFFFF0000u);
    } else {
      out[2 * w] = arch::widen_f16(static_cast<std::uint16_t>(x & 0xFFFFu));
      out[2 * w + 1] = arch::widen_f16(static_cast<std::uint16_t>(x >> 16));
    }
  }
}

/// One element of TA as float (the K tail).
template <class TA>
STRATA_HOST_DEVICE STRATA_FORCEINLINE float widen1(const TA* p) {
  if constexpr (std::is_same_v<TA, float>) {
    return *p;
  } else {
    const std::uint16_t bits = copy::detail::load_raw<2>(p).w[0];
    if constexpr (std::is_same_v<TA, bf16>) return arch::widen_bf16(bits);
    else return arch::widen_f16(bits);
  }
}

/// Reduce-scatter of N values over the lanes of a warp, from lane distance Off down to 1: at a level
/// where a lane still holds n > 1 values, it keeps the half its lane bit selects and adds its
/// partner's copy of that half; once one value is left, a plain butterfly. Lane l ends with the
/// warp's sum of value l / (warp size / N) in v[0].
template <int Off, int N, class Warp>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void reduce_scatter(const Warp& warp, float* v, int lane) {
  if constexpr (N > 1) {
    constexpr int H = N / 2;
    // The halves are chosen by bit masks, not `upper ? v[i] : v[i + H]`: clang turned that select
    // into a load through a selected pointer, and the whole array then lived in scratch memory.
    // A mask select is one LOP3 (NVIDIA) or v_bfi_b32 (AMD).
    const std::uint32_t upper = (lane & Off) != 0 ? ~0u : 0u;
    STRATA_UNROLL
    for (int i = 0; i < H; ++i) {
      const std::uint32_t lo = __builtin_bit_cast(std::uint32_t, v[i]), hi = __builtin_bit_cast(std::uint32_t, v[i + H]);
      const float send = __builtin_bit_cast(float, (lo & upper) | (hi & ~upper));
      const float keep = __builtin_bit_cast(float, (hi & upper) | (lo & ~upper));
      v[i] = keep + warp.shfl_xor(send, Off);
    }
  } else {
    v[0] += warp.shfl_xor(v[0], Off);
  }
  if constexpr (Off > 1) reduce_scatter<Off / 2, (N > 1 ? N / 2 : 1)>(warp, v, lane);
}

}  // namespace detail

/// The GEMV kernel: D (m x n, m <= Rows) = Epilogue(A (m x k, row-major) * B (k x n, column-major)),
/// for TA in {f16, bf16, float}, fp32 accumulation. See the file comment.
template <class Target, class TA, class Epilogue, int Rows>
struct gemv_kernel {
  static_assert(std::is_same_v<TA, f16> || std::is_same_v<TA, bf16> || std::is_same_v<TA, float>,
                "gemv_kernel: A and B are f16, bf16 or float (int8 and fp8 take the tiled kernels)");
  static_assert(Rows == 4 || Rows == 8, "gemv_kernel: compiled for 4 or 8 rows of A");

  using target = Target;
  using ta = TA;
  using tb = TA;
  using acc_type = float;
  using epilogue_type = Epilogue;
  using td = typename Epilogue::output_type;
  static constexpr const char* name = "strata::ops::gemm::gemv_kernel";

  static constexpr int rows = Rows;
  static constexpr int cols = 4;                         // columns of D per warp
  static constexpr int warps = 4;
  static constexpr int warp_size = Target::warp_size;
  static constexpr int threads = warps * warp_size;
  static constexpr int max_threads_per_block = threads;
  static constexpr int vector = 16 / static_cast<int>(sizeof(TA));  // elements per 16-byte load
  static constexpr int step = warp_size * vector;        // K elements a warp reads per step
  static constexpr int unroll = 2;                       // steps in flight per loop iteration
  static constexpr int sums = Rows * cols;               // a warp's outputs
  static_assert(sums <= warp_size && (sums & (sums - 1)) == 0, "gemv_kernel: a warp's sums must be a power of two <= its lanes");

  struct params {
    problem size;
    operand<const TA> a, b;
    operand<td> d;
    typename Epilogue::params epilogue;
    int k_slices = 1;  // warps that share one column group's K: 1, 2 or 4
  };

  struct shared_storage {
    float partial[warps][gemv_kernel::sums];  // each warp's sums, read back in slice order
  };

  /// Columns of D one block covers.
  STRATA_HOST_DEVICE static constexpr int columns_per_block(int k_slices) { return cols * (warps / k_slices); }

  /// Checks what the kernel assumes (a direct user of the template gets the entry's words).
  static params make_params(const problem& pr, operand<const TA> a, operand<const TA> b, operand<td> d,
                            const typename Epilogue::params& ep, int k_slices) {
    const char* op = "strata::ops::gemm::gemv_kernel";
    if (pr.m > Rows) throw invalid_argument(op, "m", "is " + std::to_string(pr.m) + "; this instantiation takes at most " + std::to_string(Rows) + " rows");
    if (a.order != layout::row_major) throw invalid_argument(op, "a", "must be row-major (K contiguous)");
    if (b.order != layout::col_major) throw invalid_argument(op, "b", "must be column-major (K contiguous)");
    if (k_slices != 1 && k_slices != 2 && k_slices != 4) throw invalid_argument(op, "k_slices", "must be 1, 2 or 4, got " + std::to_string(k_slices));
    const auto rows16 = [](const void* p, long long ld, long long bs) {
      const long long sz = static_cast<long long>(sizeof(TA));
      return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * sz) % 16 == 0 && (bs * sz) % 16 == 0;
    };
    if (!rows16(a.data, a.ld, pr.batch > 1 ? a.batch_stride : 0)) throw invalid_argument(op, "a", "needs 16-byte aligned rows (pointer, ld and batch stride)");
    if (!rows16(b.data, b.ld, pr.batch > 1 ? b.batch_stride : 0)) throw invalid_argument(op, "b", "needs 16-byte aligned columns (pointer, ld and batch stride)");
    return params{pr, a, b, d, ep, k_slices};
  }

  static launch_shape launch_shape_of(const params& p) {
    const int per = columns_per_block(p.k_slices);
    const int blocks = (p.size.n + per - 1) / per;
    return launch_shape{.grid = dims(blocks > 0 ? blocks : 1, 1, p.size.batch), .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const int m = p.size.m, n = p.size.n, k = p.size.k;
    if (m <= 0 || n <= 0) return;
    const auto warp = ctx.warp();
    const int lane = ctx.lane().index(), w = warp.index();
    const int slices = p.k_slices, group = w / slices, slice = w % slices;
    const dims blk = ctx.block().index();
    const int batch = blk.z;
    const int col0 = blk.x * columns_per_block(slices) + group * cols;

    // This warp's K range: whole steps, split evenly over the group's slices.
    const int steps = (k + step - 1) / step, per_slice = (steps + slices - 1) / slices;
    const int k_begin = min_of(k, slice * per_slice * step), k_end = min_of(k, k_begin + per_slice * step);

    // Each lane's pointers into A's rows and B's columns at its first vector; they advance by whole
    // loop iterations, so every load in the loop is a pointer plus an immediate offset.
    int kk = k_begin + lane * vector;
    const TA* pa[Rows];
    STRATA_UNROLL
    for (int r = 0; r < Rows; ++r)
      pa[r] = p.a.data + batch * p.a.batch_stride + static_cast<long long>(min_of(r, m - 1)) * p.a.ld + kk;
    const TA* pb[cols];
    STRATA_UNROLL
    for (int c = 0; c < cols; ++c)
      pb[c] = p.b.data + batch * p.b.batch_stride + static_cast<long long>(min_of(col0 + c, n - 1)) * p.b.ld + kk;
    float acc[sums] = {};  // acc[r * cols + c]
    for (; kk + (unroll - 1) * step + vector <= k_end; kk += unroll * step) {
      STRATA_UNROLL
      for (int u = 0; u < unroll; ++u) full_step(acc, pa, pb, u * step);
      advance(pa, pb, unroll * step);
    }
    for (; kk < k_end; kk += step, advance(pa, pb, step)) {
      if (kk + vector <= k_end) {
        full_step(acc, pa, pb, 0);
      } else {
        // K's last elements (K not a multiple of the vector): one at a time, none past K read.
        for (int e = 0; e < k_end - kk; ++e) {
          float bv[cols];
          STRATA_UNROLL
          for (int c = 0; c < cols; ++c) bv[c] = detail::widen1(pb[c] + e);
          STRATA_UNROLL
          for (int r = 0; r < Rows; ++r) {
            const float av = detail::widen1(pa[r] + e);
            STRATA_UNROLL
            for (int c = 0; c < cols; ++c) acc[r * cols + c] += av * bv[c];
          }
        }
      }
    }

    // The warp's sums: lane l holds sum l / (warp_size / sums); one lane per sum writes it.
    detail::reduce_scatter<warp_size / 2, sums>(warp, acc, lane);
    auto& smem = ctx.template shared<shared_storage>();
    constexpr int lanes_per_sum = warp_size / sums;
    if (lane % lanes_per_sum == 0) smem.partial[w][lane / lanes_per_sum] = acc[0];
    ctx.block().sync();

    // One thread per output of the block: the slices' sums in slice order, then the epilogue.
    const int t = ctx.block().thread_rank(), groups = warps / slices;
    if (t >= groups * sums) return;
    const int g = t / sums, s = t % sums, r = s / cols, col = blk.x * columns_per_block(slices) + g * cols + s % cols;
    if (r >= m || col >= n) return;
    float total = smem.partial[g * slices][s];
    for (int q = 1; q < slices; ++q) total += smem.partial[g * slices + q][s];
    auto ep = p.epilogue;
    detail::shift_epilogue<Epilogue>(ep, batch * p.d.batch_stride);
    const operand<td> dd{p.d.data + batch * p.d.batch_stride, p.d.ld, p.d.order, 0};
    *detail::at(dd, r, col) = Epilogue::apply(total, r, col, ep);
  }

 private:
  // Members rather than lambdas: clang (HIP) did not inline a lambda this size, and the accumulators
  // it captured by reference then lived in scratch memory (80-144 bytes per lane).

  /// One warp step: 16 bytes of each row of A and each column of B at `offset` elements, multiplied
  /// into the rows x cols sums.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void full_step(float (&acc)[sums], const TA* const (&pa)[Rows],
                                                              const TA* const (&pb)[cols], int offset) {
    float av[Rows][vector], bv[cols][vector];
    STRATA_UNROLL
    for (int r = 0; r < Rows; ++r) detail::widen16<TA>(copy::detail::load_raw<16>(pa[r] + offset), av[r]);
    STRATA_UNROLL
    for (int c = 0; c < cols; ++c) detail::widen16<TA>(copy::detail::load_raw<16>(pb[c] + offset), bv[c]);
    STRATA_UNROLL
    for (int r = 0; r < Rows; ++r)
      STRATA_UNROLL
      for (int c = 0; c < cols; ++c)
        STRATA_UNROLL
        for (int e = 0; e < vector; ++e) acc[r * cols + c] += av[r][e] * bv[c][e];
  }

  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void advance(const TA* (&pa)[Rows], const TA* (&pb)[cols], int elements) {
    STRATA_UNROLL
    for (int r = 0; r < Rows; ++r) pa[r] += elements;
    STRATA_UNROLL
    for (int c = 0; c < cols; ++c) pb[c] += elements;
  }

  STRATA_HOST_DEVICE static constexpr int min_of(int x, int y) { return x < y ? x : y; }
};

/// K slices for a GEMV of n columns, depth k and `batch` entries on `units` multiprocessors: the
/// fewest (1, 2, 4) that give about 32 warps per unit, without slices of less than two warp steps.
/// `step` is the kernel's K elements per warp step.
inline int gemv_slices(int n, int k, int batch, int units, int step, int cols = 4) {
  const long long groups = (static_cast<long long>(n) + cols - 1) / cols * (batch > 0 ? batch : 1);
  const long long want = 32LL * (units > 0 ? units : 1);
  const int steps = (k + step - 1) / step;
  int slices = 1;
  while (slices < 4 && groups * slices < want && steps >= 4 * slices) slices *= 2;
  return slices;
}

}  // namespace strata::ops::gemm
