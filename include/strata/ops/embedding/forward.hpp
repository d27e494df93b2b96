// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/forward.hpp -- the table-batched embedding-bag forward kernel.
//
// Work decomposition (memory-bound, so everything serves the row loads):
//   tile      a run of bags of one feature; tiles are numbered feature by feature, features sorted
//             by table, and split into one contiguous range per chiplet (detail/common.hpp)
//   block     256 threads; takes tiles from its chiplet's queue until none are left
//   subgroup  `group` lanes (a power of two <= warp size, chosen per table from its dim) own one bag;
//             lane l owns the 16-byte chunks l, l + group, ... of every row of the bag
//   pipeline  each lane issues the loads of `rows_in_flight` rows before it accumulates the first;
//             with `prefetch_indices` it also loads the next group's indices while those rows are in
//             flight, so that the row loads of one group depend only on index loads of the group before
// Rows are read with 16-byte loads when the table is 16-byte aligned with a stride that is a multiple
// of 16 (the last chunk of a row then stays inside the row's stride, so nothing outside the table is
// read); otherwise element by element. Accumulation is in fp32, in index order, so results do not
// depend on the schedule. No warp collectives: the lanes of a subgroup share nothing but the index,
// which each reads itself (one broadcast load), so bags of different lengths never wait for each other.
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"
#include "strata/ops/embedding/config.hpp"
#include "strata/ops/embedding/detail/common.hpp"
#include "strata/ops/embedding/detail/rows.hpp"
#include "strata/ops/embedding/types.hpp"

namespace strata::embedding {

namespace detail {

struct forward_params {
  const table_desc* tables;
  const feature_desc* features;  // tile order
  workspace_header* header;
  const void* indices;
  const void* offsets;           // null: fixed-size bags of bag_size
  const float* weights;          // per-sample weights or null
  void* out;
  long long num_tiles;
  long long num_indices;
  long long bag_size;
  long long none_stride;         // pooling none: output row stride (elements)
  int num_features;
  int is64;
  int mode;                      // pooling
  int policy;                    // bounds
  int out_format;                // strata::dtype: fp32, fp16 or bf16
  int pad_;
};

}  // namespace detail

/// The forward kernel for rows stored as `Rows`, run as `Target` (void: the backend's default).
template <scalar Rows, class Target = void, kernel_config Cfg = kernel_config{}>
struct forward_kernel : detail::declared_target<Target> {
  using params = detail::forward_params;
  using fmt = detail::row_format<Rows>;
  static constexpr const char* name = "embedding_forward_kernel";
  // Launch bounds: lets HIP give each lane more than the 128 VGPRs a 1024-thread default allows.
  static constexpr int max_threads_per_block = Cfg.threads;
  // CUDA occupancy request (the second __launch_bounds__ argument; HIP and the emulator ignore it):
  // registers per thread up to 128, 64 Ki registers over blocks x threads. Given only the block size,
  // ptxas (nvcc 13) picks a register target of its own and may spill a few bytes under it with
  // registers to spare: 4 bytes at 64 registers in the fp16 kernel on sm_100a (2026-12-02).
  static constexpr int register_budget = 128;
  static constexpr int min_blocks_per_multiprocessor =
      Cfg.threads * register_budget >= 65536 ? 1 : 65536 / (Cfg.threads * register_budget);
  static constexpr int E = fmt::per_vec;                                      // elements per 16 bytes
  static constexpr int K = Cfg.accumulators / E > 0 ? Cfg.accumulators / E : 1;  // chunks per lane per pass
  static constexpr int U = Cfg.rows_in_flight;

  static_assert(Cfg.threads % 64 == 0, "embedding forward: threads per block must be a multiple of 64 so that "
                                       "every power-of-two subgroup up to a wavefront divides the block");
  static_assert(U >= 1 && U <= 8, "embedding forward: rows_in_flight must be between 1 and 8");

  struct shared_storage {
    long long tile;
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    auto& sh = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    for (;;) {
      if (t == 0) sh.tile = detail::grab_tile(ctx, p.header, p.num_tiles);
      ctx.block().sync();
      const long long tile = sh.tile;
      ctx.block().sync();  // nobody overwrites sh.tile before everyone has read it
      if (tile < 0) return;
      const int fi = detail::feature_of_tile(p.features, p.num_features, tile);
      // By value: the row loop's atomics (record_bad_index) may alias the descriptors as far as the
      // compilers can tell, so through references nvcc reloaded num_rows, padding, stride, vector and
      // rows from memory for every row, a chain of five dependent loads in front of each row load
      // (sm_90a SASS, 2026-12-04) that held the H200 to a third of its bandwidth.
      const detail::feature_desc fd = p.features[fi];
      const detail::table_desc td = p.tables[fd.table];
      const int g = td.group;
      const long long bag = (tile - fd.tile_begin) * fd.bags_per_tile + t / g;
      if (bag < fd.batch) pool_bag(p, td, fd, bag, t % g, g);
    }
  }

 private:
  STRATA_HOST_DEVICE static void pool_bag(const params& p, const detail::table_desc& td, const detail::feature_desc& fd,
                                          long long bag, int lane, int g) {
    const long long gbag = fd.bag_base + bag;
    const detail::bag_range r = detail::bag_of(p.offsets, p.is64, p.bag_size, p.num_indices, gbag, p.policy);
    if (!r.ok && lane == 0) detail::record_bad_bag(&p.header->status, gbag);
    const bool is_max = p.mode == int(pooling::max), is_none = p.mode == int(pooling::none);
    const int dim = td.dim;

    for (int pass = 0; pass < td.passes; ++pass) {
      const int chunk0 = pass * g * K;
      float acc[K][E];
      STRATA_UNROLL
      for (int k = 0; k < K; ++k)
        STRATA_UNROLL
        for (int e = 0; e < E; ++e) acc[k][e] = is_max ? -__builtin_huge_valf() : 0.f;
      long long count = 0;
      // The indices of the group at i0 (positions past the bag's end read nothing).
      const auto fetch = [&](long long i0, long long(&dst)[U]) {
        STRATA_UNROLL
        for (int u = 0; u < U; ++u) dst[u] = i0 + u < r.end ? detail::load_index(p.indices, p.is64, i0 + u) : 0;
      };
      long long next[U];
      if constexpr (Cfg.prefetch_indices) fetch(r.begin, next);

      for (long long i0 = r.begin; i0 < r.end; i0 += U) {
        long long cur[U];
        if constexpr (Cfg.prefetch_indices) {
          STRATA_UNROLL
          for (int u = 0; u < U; ++u) cur[u] = next[u];
          fetch(i0 + U, next);  // in flight with this group's rows
        } else {
          fetch(i0, cur);
        }
        // Stage 1: the loads of U rows (kind 0: nothing, 1: a row, 2: a zero row).
        detail::vec16 v[U][K] = {};  // zeroed: unread lanes of the pipeline hold defined bits
        int kind[U];
        float w[U];
        detail::qparams q[U];
        STRATA_UNROLL
        for (int u = 0; u < U; ++u) {
          const long long i = i0 + u;
          kind[u] = 0;
          w[u] = 1.f;
          if (i >= r.end) continue;
          const long long idx = cur[u];
          if (idx < 0 || idx >= td.num_rows) {
            if (pass == 0 && lane == 0) detail::record_bad_index(&p.header->status, i);
            kind[u] = p.policy == int(bounds::clamp) ? 2 : 0;
          } else if (idx != td.padding) {
            kind[u] = 1;
          }
          if (kind[u] != 1) continue;
          if (p.weights) w[u] = p.weights[i];
          const unsigned char* row = td.rows + idx * td.stride;
          if constexpr (fmt::quantized) q[u] = detail::load_qparams<Rows>(row, dim, td.qwords != 0);
          STRATA_UNROLL
          for (int k = 0; k < K; ++k) {
            const int c = chunk0 + k * g + lane;
            if (c * E >= dim) continue;
            if (td.vector == detail::rows_by_16) v[u][k] = detail::load_vec(row + static_cast<long long>(c) * 16);
            else if (td.vector == detail::rows_by_8x2) v[u][k] = detail::load_vec_8x2(row + static_cast<long long>(c) * 16);
            else v[u][k] = detail::load_chunk_unaligned<Rows>(row, c, dim);  // no per-element tests (see there)
          }
        }
        // Stage 2: consume them in index order.
        STRATA_UNROLL
        for (int u = 0; u < U; ++u) {
          if (is_none) {  // every position of the bag gets its row; padding and bad ones zeros
            if (i0 + u < r.end) write_row(p, td, i0 + u, kind[u] == 1, v[u], q[u], w[u], chunk0, lane, g);
            continue;
          }
          if (kind[u] == 0) continue;
          ++count;
          STRATA_UNROLL
          for (int k = 0; k < K; ++k) {
            const int c = chunk0 + k * g + lane;
            if (c * E >= dim) continue;
            STRATA_UNROLL
            for (int e = 0; e < E; ++e) {
              float x = 0.f;
              if (kind[u] == 1) {
                x = fmt::from_bits(detail::element_bits<Rows>(v[u][k], e));
                if constexpr (fmt::quantized) x = q[u].scale * x + q[u].bias;
                x *= w[u];
              }
              acc[k][e] = is_max ? (acc[k][e] < x ? x : acc[k][e]) : acc[k][e] + x;
            }
          }
        }
      }
      if (is_none) continue;
      // Empty bags (count 0) give zeros in every mode; mean divides by the contributing rows.
      const float scale = p.mode == int(pooling::mean) && count > 0 ? 1.f / static_cast<float>(count) : 1.f;
      const long long base = fd.out_offset + bag * fd.out_stride;
      STRATA_UNROLL
      for (int k = 0; k < K; ++k) {
        const int c = chunk0 + k * g + lane;
        STRATA_UNROLL
        for (int e = 0; e < E; ++e) {
          const int col = c * E + e;
          if (col >= dim) continue;
          const float y = count == 0 ? 0.f : acc[k][e] * scale;
          detail::store_value(p.out, base + col, p.out_format, y);
        }
      }
    }
  }

  /// pooling none: position i becomes output row i (zeros for a zero row).
  STRATA_HOST_DEVICE static void write_row(const params& p, const detail::table_desc& td, long long i, bool real,
                                           const detail::vec16 (&v)[K], const detail::qparams& q, float w, int chunk0,
                                           int lane, int g) {
    const long long base = i * p.none_stride;
    const auto value = [&](const detail::vec16& bits, int e) {
      float x = 0.f;
      if (real) {
        x = fmt::from_bits(detail::element_bits<Rows>(bits, e));
        if constexpr (fmt::quantized) x = q.scale * x + q.bias;
        x *= w;
      }
      return x;
    };
    // This runs inside the row loop: a bounds test per element would be hoisted out of it and kept
    // live across it (E lane masks; see detail::load_chunk_unaligned). So a full chunk stores without
    // tests and the row's last, partial chunk drains its elements in a run-time loop.
    STRATA_UNROLL
    for (int k = 0; k < K; ++k) {
      const int c = chunk0 + k * g + lane;
      const int left = td.dim - c * E;  // elements of the row in this chunk
      if (left <= 0) continue;
      const long long at = base + c * E;
      if (left >= E) {
        STRATA_UNROLL
        for (int e = 0; e < E; ++e) detail::store_value(p.out, at + e, p.out_format, value(v[k], e));
      } else {
        detail::vec16 rest = v[k];
        STRATA_NO_UNROLL
        for (int e = 0; e < left; ++e) {
          detail::store_value(p.out, at + e, p.out_format, value(rest, 0));
          rest = detail::shift_out<fmt::elem_bits>(rest);
        }
      }
    }
  }
};

}  // namespace strata::embedding
