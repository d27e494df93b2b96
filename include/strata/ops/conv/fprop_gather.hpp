// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/fprop_gather.hpp -- one thread's share of fprop's A operand over the K loop, as a
// stream: the implicit-GEMM gather of x (output pixel m, tap-channel kk) set up once per tile and
// advanced one K step at a time (issue 35 item 1; the GEMM's copy::tile_stream is the same idea for
// strided tiles).
//
//   fprop_a_stream<Kernel, Tile> s(ctx, p, group, m0, kt_begin);   // prologue: pixels decoded once
//   for (...) {                                                    // K loop
//     s.copy_async<lda>(ctx, stage_a);  // this thread's vectors of the current K step (cp.async)
//     s.advance();                      // next K step: channel, then tap, moved on incrementally
//   }
//
// The general gather (tile_copy::block_gather_async with conv::kernel::fprop_a) decodes, per vector and
// per K step, the output pixel of its row (three divisions by the output extents), the tap and
// channel of its column (a division by the group's channels and two by the filter extents) and the
// bounds, in a loop whose trip count is read from the launch. A thread's vectors keep one column of
// the tile and rows `row_step` apart, so here:
//   - each row's pixel is decoded once: its tensor offset at the filter origin (n, od*s - pad, ...)
//     and those three input coordinates stay in registers for the whole tile;
//   - the column's tap (fd, fh, fw) and channel are the same for all of the thread's vectors and move
//     on by tile_k channels per K step, wrapping into the next tap without a division;
//   - a vector is read when its row is a pixel, its column lies in K, and its input position lies
//     inside the input (three unsigned compares); else it is zero-filled and nothing is read.
// Requirements (the 16-byte instantiation's, checked by the host entry): channels contiguous (stride 1)
// and the group's channels a multiple of the vector, so that a vector never straddles two taps;
// Tile's Threads the block's thread count, a multiple of its vectors per row. copy_async() needs
// cp.async; targets without it stage each K step through registers (load(), store(): CDNA, gemm::kernel's
// register-staged loop).
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/copy/cp_async.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/tile.hpp"
#include "strata/copy/tile_stream.hpp"
#include "strata/tensor/swizzle.hpp"
#include "strata/ops/conv/types.hpp"

namespace strata::ops::conv {

template <class T, class Tile>
class fprop_a_stream {
 public:
  static_assert(Tile::threads > 0, "fprop_a_stream: the tile_copy needs the block's thread count (Threads)");
  static_assert(Tile::threads % Tile::vectors_per_row == 0,
                "fprop_a_stream: Threads must be a multiple of the vectors per row (each thread keeps one column)");
  static constexpr int per_thread = (Tile::vectors + Tile::threads - 1) / Tile::threads;
  static constexpr int row_step = Tile::threads / Tile::vectors_per_row;
  static constexpr bool even = Tile::vectors % Tile::threads == 0;

  /// The thread's share of A's tile rows m0.. (output pixels) from K step kt (Tile::cols columns each).
  /// `x` is the input; the group's GEMM has `pixels` rows (M) and `k` columns (taps x C_g).
  template <class Ctx>
  STRATA_HOST_DEVICE fprop_a_stream(Ctx& ctx, const geometry& g, int pixels, int k, const T* x, int group, int m0, int kt)
      : x_(x), g_(&g), extent_{static_cast<unsigned>(g.in.extent.d), static_cast<unsigned>(g.in.extent.h),
                                static_cast<unsigned>(g.in.extent.w)} {
    const unsigned u = static_cast<unsigned>(ctx.block().thread_rank());
    Tile::require_threads(ctx, "conv::fprop_a_stream");
    const int row0 = static_cast<int>(u / Tile::vectors_per_row);
    col0_ = static_cast<int>(u % Tile::vectors_per_row) * Tile::elements_per_vector;
    k_left_ = k - (kt * Tile::cols + col0_);
    // The column: K index kk = tap x C_g + c (one division, here only).
    const int kk = kt * Tile::cols + col0_;
    const int tap = kk / g.c_group;
    c_ = kk - tap * g.c_group;
    f_[0] = tap / (g.filter.h * g.filter.w);
    f_[1] = (tap / g.filter.w) % g.filter.h;
    f_[2] = tap % g.filter.w;
    tap_changed();
    const long long channel0 = (long long)group * g.c_group * g.in_stride_c;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int m = m0 + row0 + i * row_step;
      live_[i] = m < pixels && (even || i + 1 < per_thread || row0 + i * row_step < Tile::rows);
      const auto o = g.out.decode(live_[i] ? m : 0);
      origin_[0][i] = o.d * g.stride.d - g.pad.d;
      origin_[1][i] = o.h * g.stride.h - g.pad.h;
      origin_[2][i] = o.w * g.stride.w - g.pad.w;
      offset_[i] = o.n * g.in.stride_n + origin_[0][i] * g.in.stride_d + origin_[1][i] * g.in.stride_h +
                   origin_[2][i] * g.in.stride_w + channel0;
    }
    row0_ = row0;
  }

  /// Issues this thread's cp.async copies of the current K step into `dst`, a row-major stage of
  /// DstLd elements per row whose element offsets go through Swizzle (tensor/swizzle.hpp: the GEMM's
  /// stage_swizzle); the caller commits and waits (strata::pipeline).
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void copy_async(Ctx& ctx, T* dst) const {
    T* base = dst + destination<DstLd, Swizzle>();
    const bool column = k_left_ > 0;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      const bool read = reads(i, column);
      // A vector not read names the tensor's base (a readable address; ignore-src never reads it).
      copy::cp_async_if<Tile::vector_bytes>(ctx, read, base + i * row_step * DstLd, read ? x_ + offset_[i] + column_offset_ : x_);
    }
  }

  /// This thread's vectors of one K step in registers (targets without cp.async: load() before the
  /// current stage's products, store() after them, as copy::tile_stream's).
  struct staged {
    copy::detail::raw_vector<Tile::vector_bytes> v[per_thread];
  };

  /// Issues this thread's global loads of the current K step into `r`; a vector that is not read
  /// (padding, past M or K) is zero.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void load(Ctx& ctx, staged& r) const {
    (void)ctx;
    const bool column = k_left_ > 0;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      // The address is always readable (the tensor's base when the vector is not read), and the
      // select comes after the load: no branch around it.
      const bool read = reads_branch_free(i, column);
      const auto w = copy::detail::load_raw<Tile::vector_bytes>(read ? x_ + offset_[i] + column_offset_ : x_);
      r.v[i] = read ? w : copy::detail::raw_vector<Tile::vector_bytes>{};
    }
  }

  /// Writes registers loaded by load() into `dst` (as copy_async's destination).
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void store(Ctx& ctx, const staged& r, T* dst) const {
    copy::detail::store_staged(ctx, dst + destination<DstLd, Swizzle>(), row_step * DstLd, r.v, [&](int i) { return has(i); });
  }

  /// The next K step: tile_k channels on, into the next tap where the group's channels run out. The
  /// wrap is a loop that runs at most once when the group has tile_k channels or more; with fewer it
  /// steps over several taps (a division there made the hot loop longer: 7.25 -> 9.72 static
  /// instructions per HMMA on sm_90a, with 4 MUFU for code that seldom runs).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void advance() {
    k_left_ -= Tile::cols;
    c_ += Tile::cols;
    column_offset_ += Tile::cols * g_->in_stride_c;
    if (c_ >= g_->c_group) {
      do {
        c_ -= g_->c_group;
        if (++f_[2] == g_->filter.w) {
          f_[2] = 0;
          if (++f_[1] == g_->filter.h) {
            f_[1] = 0;
            ++f_[0];
          }
        }
      } while (c_ >= g_->c_group);
      tap_changed();
    }
  }

  /// The tap's input displacement (f x dilation per axis) and the column's tensor offset (the tap's
  /// plus the channel's; advance() adds tile_k channels to it between taps).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void tap_changed() {
    shift_[0] = f_[0] * g_->dilation.d;
    shift_[1] = f_[1] * g_->dilation.h;
    shift_[2] = f_[2] * g_->dilation.w;
    column_offset_ = shift_[0] * g_->in.stride_d + shift_[1] * g_->in.stride_h + shift_[2] * g_->in.stride_w +
                     (long long)c_ * g_->in_stride_c;
  }

  /// Whether vector i is one of the tile's (the last ones of an uneven share are not).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE bool has(int i) const {
    return even || i + 1 < per_thread || row0_ + i * row_step < Tile::rows;
  }
  /// Whether vector i is read this K step: its row is a pixel, its column in K (`column`), and its
  /// input position inside the input: 0 <= origin + f x dilation < extent, one unsigned compare per axis.
  /// Two spellings of the one test, each the cheaper for its path (static instructions per K step):
  /// copy_async (nvcc, sm_90a) short-circuits and reads the extents from the kernel's parameters,
  /// which SASS takes as constant-bank operands (bitwise with held extents: 2 registers and 1
  /// instruction more); load (clang, gfx940) is bitwise on held extents, where clang made each && a
  /// branch around the next compare and reloaded each extent from the parameters per vector (177 ->
  /// 152 per 16 MFMA).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE bool reads(int i, bool column) const {
    const bool inside = static_cast<unsigned>(origin_[0][i] + shift_[0]) < static_cast<unsigned>(g_->in.extent.d) &&
                        static_cast<unsigned>(origin_[1][i] + shift_[1]) < static_cast<unsigned>(g_->in.extent.h) &&
                        static_cast<unsigned>(origin_[2][i] + shift_[2]) < static_cast<unsigned>(g_->in.extent.w);
    return live_[i] && column && inside;
  }
  STRATA_HOST_DEVICE STRATA_FORCEINLINE bool reads_branch_free(int i, bool column) const {
    const bool inside = (static_cast<unsigned>(origin_[0][i] + shift_[0]) < extent_[0]) &
                        (static_cast<unsigned>(origin_[1][i] + shift_[1]) < extent_[1]) &
                        (static_cast<unsigned>(origin_[2][i] + shift_[2]) < extent_[2]);
    return live_[i] & column & inside;
  }
  /// This thread's first vector's offset in a stage of DstLd-element rows through Swizzle; its other
  /// vectors are row_step rows further, whole swizzle periods (so the swizzle is applied once).
  template <int DstLd, class Swizzle>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE int destination() const {
    static_assert((static_cast<long long>(row_step) * DstLd) % Swizzle::period == 0 || per_thread == 1,
                  "fprop_a_stream: a thread's rows must be whole swizzle periods apart in the stage");
    return static_cast<int>(Swizzle{}(row0_ * DstLd + col0_));
  }

  const T* x_;
  const geometry* g_;
  unsigned extent_[3];             // the input's extents (d, h, w), for reads_branch_free
  long long offset_[per_thread];  // row i's pixel at the filter origin, channel 0 of the group
  int origin_[3][per_thread];     // row i's input position at the filter origin (d, h, w)
  bool live_[per_thread];         // row i is an output pixel (< M)
  int row0_ = 0, col0_ = 0;
  int k_left_ = 0;                // K columns from this thread's column on
  int c_ = 0;                     // the column's channel within the group
  int f_[3] = {0, 0, 0};          // the column's tap (fd, fh, fw)
  int shift_[3] = {0, 0, 0};      // f x dilation
  long long column_offset_ = 0;   // shift . input strides + channel x channel stride
};

}  // namespace strata::ops::conv
