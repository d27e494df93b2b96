// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/copy/kernels.hpp -- kernels over the copy atoms and the pipeline, shared by the emulator tests
// (test/copy/*_test.cpp) and the compile tests (test/compile/copy_kernels.cu).
#pragma once

#include <cstdint>

#include "strata/copy/copy.hpp"
#include "strata/pipeline/pipeline.hpp"
#include "strata/strata.hpp"

namespace strata_test {

// ---- vector_copy: one run per thread, `valid[t]` leading elements read ---------------------------------

template <class T>
struct vector_params {
  const T* in;
  T* out;
  const int* valid;  // per thread
  int threads;
};

template <class Target, class T, int N, std::size_t Align, strata::copy::fill Fill>
struct vector_copy_kernel {
  using target = Target;
  static constexpr const char* name = "vector_copy_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const vector_params<T>& p) const {
    const int t = static_cast<int>(ctx.block().rank()) * ctx.block().size() + ctx.block().thread_rank();
    if (t >= p.threads) return;
    using atom = strata::copy::vector_copy<T, N, Align>;
    atom::template copy<Fill>(p.out + t * N, p.in + t * N, p.valid[t]);
  }
};

// ---- tile_copy: global -> shared -> global, edges predicated ----------------------------------------------

struct tile_params {
  const float* in;  // rows x cols, leading dimension ld
  float* out;       // tiles of Rows x Cols, one per block, dense
  int rows, cols, ld;
};

/// Each block stages tile (block.rank()) of a column strip into shared memory, then writes the whole
/// tile out (zeros outside the matrix). Async: cp.async; MissingWait: the planted bug (no wait).
/// Threads: tile_copy's compile-time thread count (0: the launch's). Transposed: the synchronous
/// block_copy_transposed into a (Cols, Rows + 1) stage, read back in the tile's own orientation.
template <class Target, int Rows, int Cols, std::size_t Align, bool Async, bool MissingWait = false, int Threads = 0,
          bool Transposed = false>
struct tile_copy_kernel {
  using target = Target;
  static constexpr const char* name = "tile_copy_kernel";
  using tile = strata::copy::tile_copy<float, Rows, Cols, Align, strata::copy::widest_vector_bytes<float, Cols, Align>, Threads>;
  static constexpr int ldt = Rows + 1;  // the transposed stage's row stride
  struct shared_storage {
    alignas(16) float t[Rows][Cols];
    alignas(16) float tt[Transposed ? Cols * ldt : 1];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const tile_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int tiles_per_row = (p.cols + Cols - 1) / Cols;
    const int tr = static_cast<int>(ctx.block().rank()) / tiles_per_row;
    const int tc = static_cast<int>(ctx.block().rank()) % tiles_per_row;
    const float* src = p.in + static_cast<long long>(tr) * Rows * p.ld + tc * Cols;
    if constexpr (Async) {
      tile::block_copy_async(ctx, &s.t[0][0], Cols, src, p.ld, p.rows - tr * Rows, p.cols - tc * Cols);
      strata::copy::cp_async_commit(ctx);
      if constexpr (!MissingWait) strata::copy::cp_async_wait<0>(ctx);
    } else if constexpr (Transposed) {
      tile::block_copy_transposed(ctx, s.tt, ldt, src, p.ld, p.rows - tr * Rows, p.cols - tc * Cols);
    } else {
      tile::block_copy(ctx, &s.t[0][0], Cols, src, p.ld, p.rows - tr * Rows, p.cols - tc * Cols);
    }
    ctx.block().sync();
    float* out = p.out + ctx.block().rank() * Rows * Cols;
    for (int i = ctx.block().thread_rank(); i < Rows * Cols; i += ctx.block().size())
      out[i] = Transposed ? s.tt[(i % Cols) * ldt + i / Cols] : s.t[i / Cols][i % Cols];
    // MissingWait: the copies still in flight land when the thread exits (after the reads above).
  }
};

// ---- cp.async groups: what each wait lands ------------------------------------------------------------------

struct groups_params {
  const float* in;  // 3 values per thread
  float* out;       // 12 per thread: the 3 slots after wait<2>, wait<1>, wait<7> (more than committed), wait<0>
};

template <class Target>
struct cp_async_groups_kernel {
  using target = Target;
  static constexpr const char* name = "cp_async_groups_kernel";
  struct shared_storage {
    alignas(16) float slot[3][256];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const groups_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    for (int g = 0; g < 3; ++g) {
      strata::copy::cp_async<4>(ctx, &s.slot[g][t], p.in + 3 * t + g);
      strata::copy::cp_async_commit(ctx);
    }
    float* o = p.out + 12 * t;
    auto read = [&](int at) {
      for (int g = 0; g < 3; ++g) o[at + g] = s.slot[g][t];  // a thread reads its own copies: no barrier needed
    };
    strata::copy::cp_async_wait<2>(ctx);
    read(0);
    strata::copy::cp_async_wait<1>(ctx);
    read(3);
    strata::copy::cp_async_wait<7>(ctx);  // only 1 group is pending: returns at once, lands nothing
    read(6);
    strata::copy::cp_async_wait<0>(ctx);
    read(9);
  }
};

// ---- ldmatrix: each lane supplies row perm[lane] of a 32 x 8 b16 table in shared memory ----------------------

struct ldmatrix_params {
  const std::uint16_t* in;  // 32 rows x 8
  const int* perm;          // per lane: the table row whose address it supplies
  std::uint32_t* out;       // 4 registers per lane (the ones the atom does not fill stay untouched)
};

template <class Target, int Num, bool Trans>
struct ldmatrix_kernel {
  using target = Target;
  static constexpr const char* name = "ldmatrix_kernel";
  struct shared_storage {
    alignas(16) std::uint16_t table[32][8];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const ldmatrix_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int lane = ctx.lane().index();
    strata::copy::vector_copy<std::uint16_t, 8, 16>::copy(&s.table[lane][0], p.in + 8 * lane);
    ctx.block().sync();
    const auto r = strata::copy::ldmatrix<Num, Trans>::load(ctx, &s.table[p.perm[lane]][0]);
    for (int i = 0; i < Num; ++i) p.out[4 * lane + i] = r[i];
  }
};

// ---- AMD buffer loads: out of range reads as 0 ------------------------------------------------------------------

struct buffer_params {
  const float* in;
  int n;      // elements in the buffer
  int start;  // element index of thread 0's load (may be negative)
  float* out; // 4 per thread
};

template <class Target>
struct buffer_load_kernel {
  using target = Target;
  static constexpr const char* name = "buffer_load_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const buffer_params& p) const {
    const int t = ctx.block().thread_rank();
    const auto res = strata::copy::make_buffer(ctx, p.in, p.n);
    const auto v = strata::copy::buffer_load<float, 4>(ctx, res, p.start + 4 * t);
    const auto w = strata::copy::buffer_load<float, 1>(ctx, res, p.start + 4 * t + 1);
    for (int i = 0; i < 4; ++i) p.out[4 * t + i] = v.v[i];
    p.out[4 * ctx.block().size() + t] = w.v[0];
  }
};

// ---- pipeline: row sums of a rows x k matrix streamed in K-tiles ------------------------------------------------

struct ksum_params {
  const float* in;  // m x k, leading dimension ld
  float* out;       // m x 8 partial sums: out[r * 8 + c] sums the elements with (k % 32) / 4 == c
  int m, k, ld;
};

/// 128 threads; block b sums rows [16b, 16b + 16). Tiles are 16 x 32 floats; thread t reads row t / 8,
/// columns 4 (t % 8) .. +3 of each tile with one 128-bit shared load. PlantedBug: the consumer reads the
/// stage before consumer_wait() (and waits afterwards), which the emulator must catch on cp.async targets.
template <class Target, int Stages, std::size_t Align, bool PlantedBug = false>
struct ksum_kernel {
  using target = Target;
  static constexpr const char* name = "ksum_kernel";
  static constexpr int rows = 16, tile_k = 32;
  static constexpr int max_threads_per_block = 128;
  using tile = strata::copy::tile_copy<float, rows, tile_k, Align>;
  struct shared_storage {
    alignas(16) float stage[Stages][rows][tile_k];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const ksum_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int row0 = static_cast<int>(ctx.block().rank()) * rows;
    const int k_tiles = (p.k + tile_k - 1) / tile_k;
    const float* a = p.in + static_cast<long long>(row0) * p.ld;

    auto pipe = strata::make_pipeline<Stages>(ctx);
    for (int st = 0; st < Stages - 1; ++st) {
      const int w = pipe.producer_acquire();
      if (st < k_tiles)
        pipe.template copy_tile<tile>(&s.stage[w][0][0], tile_k, a + st * tile_k, p.ld, p.m - row0, p.k - st * tile_k);
      pipe.producer_commit();
    }
    const int t = ctx.block().thread_rank();
    const int r = t / 8, c = 4 * (t % 8);
    float acc = 0;
    for (int kt = 0; kt < k_tiles; ++kt) {
      int st;
      if constexpr (PlantedBug) {
        st = pipe.read_stage();
        const auto v = strata::copy::shared_load<float, 4>(&s.stage[st][r][c]);  // the bug: before the wait
        acc += (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]);
        pipe.consumer_wait();
      } else {
        st = pipe.consumer_wait();
      }
      const int w = pipe.producer_acquire();
      const int next = kt + Stages - 1;
      if (next < k_tiles)
        pipe.template copy_tile<tile>(&s.stage[w][0][0], tile_k, a + next * tile_k, p.ld, p.m - row0,
                                      p.k - next * tile_k);
      pipe.producer_commit();
      if constexpr (!PlantedBug) {
        const auto v = strata::copy::shared_load<float, 4>(&s.stage[st][r][c]);
        acc += (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]);
      }
      pipe.consumer_release();
    }
    if (row0 + r < p.m) p.out[(row0 + r) * 8 + t % 8] = acc;
  }
};

}  // namespace strata_test
