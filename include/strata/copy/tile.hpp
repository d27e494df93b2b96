// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/tile.hpp -- block-wide (cooperative) copy of a Rows x Cols tile: the tile is cut into
// vectors (vector_copy's width for a row of Cols elements at the guaranteed alignment) and the vectors
// are dealt to the block's threads round-robin, thread_rank first, so that consecutive threads touch
// consecutive vectors of a row (coalesced global accesses).
//
//   using tile = strata::copy::tile_copy<float, 64, 32, 16>;  // 64 x 32 floats, rows 16-byte aligned
//   tile::block_copy(ctx, smem, 32, gmem + row0 * ld + col0, ld, rows_left, cols_left);   // plain loads
//   tile::block_copy_async(ctx, smem, 32, ...);                                            // cp.async
//
//   dst, dst_ld   the destination tile (usually shared memory), row-major, dst_ld elements per row
//   src, src_ld   the source tile's first element (usually global memory), src_ld elements per row
//   valid_rows, valid_cols   how much of the tile exists in the source (edges of a matrix that is not a
//                 multiple of the tile); elements outside are not read. Negative counts mean none.
// Every row start (src + r * src_ld, dst + r * dst_ld) must be aligned to AlignBytes: that is the
// guarantee the vector width is chosen from. The copy is one step of the block: threads return as soon
// as their own vectors are done; a block.sync() (or the pipeline's consumer_wait) must separate it from
// reads by other threads.
//
// Edges: block_copy zero-fills or keeps (Fill) what lies outside; block_copy_async always zero-fills
// (cp.async with src-size = the valid bytes, 0 for a vector wholly outside).
//
// Threads: the block's thread count when the kernel knows it at compile time (its launch shape is
// fixed: gemm::kernel). Each thread's vector loop of block_copy / block_copy_async then has a constant
// trip count and unrolls; with the count read from the launch (Threads = 0, the default) the loop
// stays a loop, with a branch and a recomputed address per vector (../shared/research/gemm-forensic.md:
// ~38 instructions per cp.async in the GEMM's K loop). The emulator checks that the block really has
// Threads threads. The gathers stay loops either way: unrolled, each vector's gather (the convolution's
// pixel decode) kept its own addresses live, and clang spilled 6-8 SGPRs in the gfx940 convolution.
// (The attention forward, tried the same way, spilled 16-60 bytes at head dim 512 and fp8 192/256 on
// sm_90a: unrolling moves registers into the K loop, so a kernel near its limit opts in with care.)
#pragma once

#include <cstddef>
#include <string>

#include "strata/config/config.hpp"
#include "strata/copy/cp_async.hpp"
#include "strata/copy/vector.hpp"

namespace strata::copy {

/// block_copy_transposed's default row placement: row r becomes column r.
struct identity_column {
  STRATA_HOST_DEVICE constexpr int operator()(int r) const { return r; }
};

template <class T, int Rows, int Cols, std::size_t AlignBytes,
          int VectorBytes = widest_vector_bytes<T, Cols, AlignBytes>, int Threads = 0>
struct tile_copy {
  static_assert(Rows > 0 && Cols > 0, "tile_copy: a tile has at least one row and one column");
  static_assert(Threads >= 0, "tile_copy: Threads is the block's thread count, or 0 for the launch's");
  using row_atom = vector_copy<T, Cols, AlignBytes, VectorBytes>;  // checks width, alignment, element type
  using value_type = T;

  static constexpr int rows = Rows;
  static constexpr int cols = Cols;
  static constexpr int vector_bytes = VectorBytes;
  static constexpr int elements_per_vector = row_atom::elements_per_vector;
  static constexpr int vectors_per_row = Cols / elements_per_vector;
  static constexpr int vectors = Rows * vectors_per_row;
  static constexpr int threads = Threads;

  /// (row, first column) of vector `v` of the tile.
  STRATA_HOST_DEVICE static constexpr int row_of(int v) { return v / vectors_per_row; }
  STRATA_HOST_DEVICE static constexpr int col_of(int v) { return (v % vectors_per_row) * elements_per_vector; }

  /// Elements of vector (r, c) that exist in the source.
  STRATA_HOST_DEVICE static constexpr int valid_in(int r, int c, int valid_rows, int valid_cols) {
    if (r >= valid_rows) return 0;
    const int n = valid_cols - c;
    return n < 0 ? 0 : (n > elements_per_vector ? elements_per_vector : n);
  }

  /// Synchronous copy with plain vector loads and stores.
  template <fill Fill = fill::zero, class Ctx>
  STRATA_HOST_DEVICE static void block_copy(Ctx& ctx, T* dst, int dst_ld, const T* src, long long src_ld,
                                            int valid_rows = Rows, int valid_cols = Cols) {
    for_each_vector(ctx, [&](int r, int c) {
      row_atom::template copy_vector<Fill>(dst + static_cast<long long>(r) * dst_ld + c, src + r * src_ld + c,
                                           valid_in(r, c, valid_rows, valid_cols));
    });
  }

  /// Synchronous copy that transposes: element (r, c) of the tile lands at dst[c * dst_ld + r] (the
  /// tile's rows become dst's columns); zeros for what lies outside the source. Each vector is read
  /// from global memory whole and written element by element. For an MFMA operand that must run along
  /// K in shared memory where it runs along N in global memory (attention's V on CDNA, forward.hpp):
  /// each element is written once per block, where every wave would otherwise read it element by
  /// element. Consecutive threads take consecutive rows of one vector column, so that a wave's
  /// element stores land on consecutive addresses (no bank conflicts) while its loads still cover
  /// whole rows' 32-byte sectors between the lanes of neighbouring columns.
  /// `column_of(r)` (default: r) places row r at dst column column_of(r) instead: a permutation of
  /// the rows that a fragment loader reads in another order (attention's V^T on CDNA, forward.hpp).
  template <class Ctx, class ColumnOf = identity_column>
  STRATA_HOST_DEVICE static void block_copy_transposed(Ctx& ctx, T* dst, int dst_ld, const T* src, long long src_ld,
                                                       int valid_rows = Rows, int valid_cols = Cols,
                                                       ColumnOf column_of = {}) {
    const auto one = [&](int v) {
      const int r = v % Rows, c = (v / Rows) * elements_per_vector;
      alignas(VectorBytes) T x[elements_per_vector];
      row_atom::template copy_vector<fill::zero>(x, src + r * src_ld + c, valid_in(r, c, valid_rows, valid_cols));
      const int to = column_of(r);
      STRATA_UNROLL
      for (int e = 0; e < elements_per_vector; ++e) dst[static_cast<long long>(c + e) * dst_ld + to] = x[e];
    };
    auto block = ctx.block();
    if constexpr (Threads > 0) {
      require_threads(ctx, "tile_copy::block_copy_transposed");
      const int rank = block.thread_rank();
      STRATA_UNROLL
      for (int i = 0; i < (vectors + Threads - 1) / Threads; ++i)
        if (vectors % Threads == 0 || rank + i * Threads < vectors) one(rank + i * Threads);
    } else {
      const int threads = block.size();
      for (int v = block.thread_rank(); v < vectors; v += threads) one(v);
    }
  }

  /// Asynchronous copy with cp.async (targets with atom_family::cp_async); the caller commits and
  /// waits (or lets strata::pipeline do it). Zero-fills what lies outside the source.
  template <class Ctx>
  STRATA_HOST_DEVICE static void block_copy_async(Ctx& ctx, T* dst, int dst_ld, const T* src, long long src_ld,
                                                  int valid_rows = Rows, int valid_cols = Cols) {
    static_assert(VectorBytes == 4 || VectorBytes == 8 || VectorBytes == 16,
                  "tile_copy::block_copy_async: cp.async moves 4, 8 or 16 bytes, but this tile's alignment "
                  "and width allow only narrower vectors; use block_copy or guarantee 4-byte aligned rows");
    for_each_vector(ctx, [&](int r, int c) {
      const int valid = valid_in(r, c, valid_rows, valid_cols);
      // A vector wholly outside reads nothing (src-size 0); its address is the tile origin, never read.
      const T* from = valid > 0 ? src + r * src_ld + c : src;
      cp_async<VectorBytes>(ctx, dst + static_cast<long long>(r) * dst_ld + c, from,
                            valid * static_cast<int>(sizeof(T)));
    });
  }

  /// Gather: vector (r, c) of the tile comes from `src(r, c)`, a pointer to its elements_per_vector
  /// contiguous source elements, or is zero-filled when `src` returns nullptr (nothing is read). The
  /// rows of an implicit-GEMM operand (convolution) are scattered over a tensor; each vector still
  /// moves as one access. Synchronous: plain vector loads.
  template <class Ctx, class Src>
  STRATA_HOST_DEVICE static void block_gather(Ctx& ctx, T* dst, int dst_ld, Src&& src) {
    auto block = ctx.block();
    const int threads = block.size();
    for (int v = block.thread_rank(); v < vectors; v += threads) {
      const int r = row_of(v), c = col_of(v);
      const T* from = src(r, c);
      row_atom::template copy_vector<fill::zero>(dst + static_cast<long long>(r) * dst_ld + c, from,
                                                 from ? elements_per_vector : 0);
    }
  }

  /// block_gather with cp.async (zero-fill for a nullptr vector). `fallback` is any readable address
  /// aligned to VectorBytes (the tensor's base): a predicated-off cp.async still names one.
  template <class Ctx, class Src>
  STRATA_HOST_DEVICE static void block_gather_async(Ctx& ctx, T* dst, int dst_ld, const T* fallback, Src&& src) {
    static_assert(VectorBytes == 4 || VectorBytes == 8 || VectorBytes == 16,
                  "tile_copy::block_gather_async: cp.async moves 4, 8 or 16 bytes; use block_gather");
    auto block = ctx.block();
    const int threads = block.size();
    for (int v = block.thread_rank(); v < vectors; v += threads) {
      const int r = row_of(v), c = col_of(v);
      const T* from = src(r, c);
      cp_async<VectorBytes>(ctx, dst + static_cast<long long>(r) * dst_ld + c, from ? from : fallback,
                            from ? VectorBytes : 0);
    }
  }

  /// On the emulator, a kernel bug when the block does not have the Threads threads that `who` (this
  /// copy or a tile_stream over it) was compiled for; nothing on a GPU.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void require_threads(Ctx& ctx, const char* who) {
    if constexpr (Ctx::emulated && Threads > 0) {
      if (ctx.block().size() != Threads)
        kernel_bug(ctx.emulated_thread(), std::string(who) + " for " + std::to_string(Threads) +
                                              " threads used by a block of " + std::to_string(ctx.block().size()));
    }
  }

 private:
  /// f(row, column) of this thread's vectors v: thread_rank, thread_rank + threads, ... below `vectors`.
  /// With Threads a multiple of the vectors per row, a thread's vectors share one column and step by
  /// Threads / vectors_per_row rows: computed so (from an unsigned rank), the compiler sees constant
  /// row steps instead of one division per vector (the unrolled attention copy rebuilt each address).
  template <class Ctx, class F>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void for_each_vector(Ctx& ctx, F&& f) {
    auto block = ctx.block();
    if constexpr (Threads > 0) {
      require_threads(ctx, "tile_copy");
      const int rank = block.thread_rank();
      if constexpr (Threads % vectors_per_row == 0) {
        const unsigned u = static_cast<unsigned>(rank);
        const int r0 = static_cast<int>(u / vectors_per_row), c0 = static_cast<int>(u % vectors_per_row) * elements_per_vector;
        constexpr int step = Threads / vectors_per_row;
        STRATA_UNROLL
        for (int i = 0; i < (vectors + Threads - 1) / Threads; ++i)
          if (vectors % Threads == 0 || rank + i * Threads < vectors) f(r0 + i * step, c0);
      } else {
        STRATA_UNROLL
        for (int i = 0; i < (vectors + Threads - 1) / Threads; ++i) {
          const int v = rank + i * Threads;
          if (vectors % Threads == 0 || v < vectors) f(row_of(v), col_of(v));
        }
      }
    } else {
      const int threads = block.size();
      for (int v = block.thread_rank(); v < vectors; v += threads) f(row_of(v), col_of(v));
    }
  }
};

}  // namespace strata::copy
