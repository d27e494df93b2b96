// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/backward.hpp -- the embedding-bag backward kernels: gradients with respect to
// the table rows, with no floating-point atomics and the same bits on every run.
//
// Pipeline (each step one kernel, in stream order, all scratch in the caller's workspace):
//   1 prepare   key[i] = sentinel, val[i] = i, bag_of[i] = none for every index position i
//   2 bags      one thread per bag: checks its offsets and indices (status record), writes
//               key[i] = global row id (table's row_base + index) for positions that carry a
//               gradient, bag_of[i] = the bag, and the bag's scale (1 / contributing rows for mean)
//   3 sort      stable LSD radix sort of (key, position) by key, 4 bits a pass over the bits the
//               row ids need: per tile digit histograms, one exclusive scan, then a scatter whose
//               rank inside the tile comes from warp ballots (stable: it keeps position order)
//   4 segments  run heads of equal keys -> scan -> start of each unique row's run
//   5 apply     one warp per unique row: g[d] = sum over the run, in position order, of
//               weight * scale * grad_output[bag][d]; then the dense row, the sparse row, or the
//               optimizer update (optimizer.hpp)
// Integer atomics only (the status record and, for overlapping malformed bags, bag_of's maximum).
// Every floating-point sum has a fixed order (the sorted run, then a fixed warp tree for row-wise
// Adagrad), so the result does not depend on worker counts, schedules or the GPU's block order:
// determinism is not a mode here but the only behaviour.
#pragma once

#include <cstdint>

#include "strata/runtime/runtime.hpp"  // first: declares the HIP atomics that arch/atomic.hpp calls
#include "strata/arch/atomic.hpp"
#include "strata/config/config.hpp"
#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/config.hpp"
#include "strata/ops/embedding/detail/common.hpp"
#include "strata/ops/embedding/detail/rows.hpp"
#include "strata/ops/embedding/optimizer.hpp"
#include "strata/ops/embedding/types.hpp"

namespace strata::embedding::detail {

inline constexpr int sort_threads = 256;
inline constexpr int sort_items = 4;  // elements per thread per tile
inline constexpr int sort_tile = sort_threads * sort_items;
inline constexpr int radix_bits = 4;
inline constexpr int radix = 1 << radix_bits;

template <class M>
STRATA_HOST_DEVICE constexpr int popcount(M m) {
  int c = 0;
  while (m) m &= m - 1, ++c;
  return c;
}

/// Global thread id and count of a 1-D launch.
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE long long global_thread(Ctx& ctx) {
  return ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
}
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE long long global_threads(Ctx& ctx) {
  return ctx.grid().size() * ctx.block().size();
}

/// Index of the feature (user order, bag_base ascending) that owns global bag g.
STRATA_HOST_DEVICE STRATA_FORCEINLINE int feature_of_bag(const feature_desc* f, int n, long long g) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (f[mid].bag_base <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
STRATA_HOST_DEVICE STRATA_FORCEINLINE int table_of_row(const table_desc* t, int n, unsigned long long key) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<unsigned long long>(t[mid].row_base) <= key) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

struct backward_params {
  const table_desc* tables;
  const feature_desc* features;    // user order
  workspace_header* header;
  const void* indices;
  const void* offsets;
  const float* weights;
  const void* grad;                // grad_output
  unsigned long long* keys[2];
  unsigned int* vals[2];
  unsigned long long* bag_of;     // 1 + the owning bag (0: none); unsigned for HIP's 64-bit atomicMax
  float* bag_scale;
  unsigned int* hist;
  unsigned int* flags;             // run heads, then their exclusive scan
  unsigned int* starts;
  int* sparse_tables;
  long long* sparse_rows;
  float* sparse_grads;
  long long* sparse_count;
  long long sparse_stride;
  long long num_indices;
  long long total_bags;
  long long bag_size;
  long long none_stride;
  long long tiles;                 // sort tiles
  unsigned long long sentinel;     // total rows of all tables: sorts after every real row
  int num_tables;
  int num_features;
  int is64;
  int mode;
  int policy;
  int grad_format;                 // strata::dtype: fp32, fp16 or bf16
  int row_format;                  // scalar
  int kind;                        // gradient
  int opt;                         // optimizer
  int shift;                       // radix pass: key bit shift
  int in;                          // radix pass: which buffer holds the input (0 or 1)
  int pad_;
  float lr;
  float eps;
};

}  // namespace strata::embedding::detail

namespace strata::embedding {

/// Step 1: every position starts as "no gradient".
template <class Target = void>
struct backward_prepare_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_backward_prepare_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    for (long long i = detail::global_thread(ctx); i < p.num_indices; i += detail::global_threads(ctx)) {
      p.keys[0][i] = p.sentinel;
      p.vals[0][i] = static_cast<unsigned int>(i);
      p.bag_of[i] = 0;
    }
  }
};

/// Zeroes `n` floats (the dense gradients).
template <class Target = void>
struct zero_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_zero_kernel";
  struct params {
    float* data;
    long long n;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    for (long long i = detail::global_thread(ctx); i < p.n; i += detail::global_threads(ctx)) p.data[i] = 0.f;
  }
};

/// Step 2: one thread per bag.
template <class Target = void>
struct backward_bags_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_backward_bags_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    for (long long g = detail::global_thread(ctx); g < p.total_bags; g += detail::global_threads(ctx)) {
      const detail::feature_desc& fd = p.features[detail::feature_of_bag(p.features, p.num_features, g)];
      const detail::table_desc& td = p.tables[fd.table];
      const detail::bag_range r = detail::bag_of(p.offsets, p.is64, p.bag_size, p.num_indices, g, p.policy);
      if (!r.ok) detail::record_bad_bag(&p.header->status, g);
      long long count = 0;
      for (long long i = r.begin; i < r.end; ++i) {
        const long long idx = detail::load_index(p.indices, p.is64, i);
        const bool bad = idx < 0 || idx >= td.num_rows;
        if (bad) detail::record_bad_index(&p.header->status, i);
        if (bad) {
          count += p.policy == int(bounds::clamp);  // a zero row: counts for mean, has no gradient
          continue;
        }
        if (idx == td.padding) continue;
        ++count;
        // Malformed, overlapping bags (only under clamp / skip) may both claim i: the larger bag id
        // wins, deterministically. Both write the same key.
        p.keys[0][i] = static_cast<unsigned long long>(td.row_base + idx);
        atomic::max(&p.bag_of[i], static_cast<unsigned long long>(g) + 1);
      }
      p.bag_scale[g] = p.mode == int(pooling::mean) && count > 0 ? 1.f / static_cast<float>(count) : 1.f;
    }
  }
};

/// Exclusive prefix sum of `n` unsigned ints in place, by one block; the total goes to *total.
/// One block is enough for the sizes it serves here (16 digit counts per 1024 keys; one flag per
/// key); a decoupled look-back scan is the upgrade for very large batches (docs/embedding.md).
template <class Target = void>
struct scan_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_scan_kernel";
  static constexpr int max_threads_per_block = detail::sort_threads;
  struct params {
    unsigned int* data;
    long long n;
    unsigned long long* total;
  };
  struct shared_storage {
    unsigned int part[detail::sort_threads];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    auto& sh = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank(), T = ctx.block().size();
    const long long chunk = (p.n + T - 1) / T;
    const long long b = t * chunk, e = b + chunk < p.n ? b + chunk : p.n;
    unsigned int s = 0;
    for (long long i = b; i < e; ++i) s += p.data[i];
    sh.part[t] = s;
    ctx.block().sync();
    if (t == 0) {
      unsigned int run = 0;
      for (int k = 0; k < T; ++k) {
        const unsigned int v = sh.part[k];
        sh.part[k] = run;
        run += v;
      }
      if (p.total) *p.total = run;
    }
    ctx.block().sync();
    unsigned int run = sh.part[t];
    for (long long i = b; i < e; ++i) {
      const unsigned int v = p.data[i];
      p.data[i] = run;
      run += v;
    }
  }
};

/// Step 3a: digit histogram of one tile of keys -> hist[digit * tiles + tile].
template <class Target = void>
struct sort_histogram_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_sort_histogram_kernel";
  static constexpr int max_threads_per_block = detail::sort_threads;
  struct shared_storage {
    unsigned int count[detail::radix];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    auto& sh = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    const long long tile = ctx.block().rank();
    if (t < detail::radix) sh.count[t] = 0;
    ctx.block().sync();
    const unsigned long long* keys = p.keys[p.in];
    STRATA_UNROLL
    for (int r = 0; r < detail::sort_items; ++r) {
      const long long i = tile * detail::sort_tile + r * detail::sort_threads + t;
      if (i < p.num_indices) atomic::add(&sh.count[(keys[i] >> p.shift) & (detail::radix - 1)], 1u);
    }
    ctx.block().sync();
    if (t < detail::radix) p.hist[t * p.tiles + tile] = sh.count[t];
  }
};

/// Step 3b: stable scatter of one tile to its digits' places.
template <class Target = void>
struct sort_scatter_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_sort_scatter_kernel";
  static constexpr int max_threads_per_block = detail::sort_threads;
  static constexpr int max_warps = detail::sort_threads / 32;
  struct shared_storage {
    unsigned int base[detail::radix];               // next free place of each digit, this tile
    unsigned int warp_base[max_warps][detail::radix];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    auto& sh = ctx.template shared<shared_storage>();
    auto warp = ctx.warp();
    const int t = ctx.block().thread_rank(), lane = ctx.lane().index(), w = warp.index(), warps = warp.count();
    const long long tile = ctx.block().rank();
    if (t < detail::radix) sh.base[t] = p.hist[t * p.tiles + tile];
    const unsigned long long* keys_in = p.keys[p.in];
    const unsigned int* vals_in = p.vals[p.in];
    unsigned long long* keys_out = p.keys[1 - p.in];
    unsigned int* vals_out = p.vals[1 - p.in];
    using mask_t = decltype(warp.ballot(true));
    const mask_t below = lane == 0 ? mask_t(0) : (~mask_t(0) >> (8 * sizeof(mask_t) - lane));
    for (int r = 0; r < detail::sort_items; ++r) {
      const long long i = tile * detail::sort_tile + r * detail::sort_threads + t;
      unsigned long long key = 0;
      unsigned int val = 0;
      int digit = detail::radix;  // none
      if (i < p.num_indices) {
        key = keys_in[i];
        val = vals_in[i];
        digit = static_cast<int>((key >> p.shift) & (detail::radix - 1));
      }
      int rank = 0;
      STRATA_UNROLL
      for (int d = 0; d < detail::radix; ++d) {
        const mask_t m = warp.ballot(digit == d);
        if (lane == 0) sh.warp_base[w][d] = static_cast<unsigned int>(detail::popcount(m));
        if (digit == d) rank = detail::popcount(m & below);
      }
      ctx.block().sync();
      if (t < detail::radix) {  // warps in order: lower warps' elements come first (stable)
        unsigned int run = sh.base[t];
        for (int k = 0; k < warps; ++k) {
          const unsigned int c = sh.warp_base[k][t];
          sh.warp_base[k][t] = run;
          run += c;
        }
        sh.base[t] = run;
      }
      ctx.block().sync();
      if (digit < detail::radix) {
        const unsigned int dst = sh.warp_base[w][digit] + static_cast<unsigned int>(rank);
        keys_out[dst] = key;
        vals_out[dst] = val;
      }
      ctx.block().sync();  // warp_base is rewritten by the next round
    }
  }
};

/// Step 4a: flags[j] = 1 where a run of equal real keys starts; header scalars[1] = real keys.
template <class Target = void>
struct segment_heads_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_segment_heads_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    const unsigned long long* k = p.keys[p.in];
    for (long long j = detail::global_thread(ctx); j <= p.num_indices; j += detail::global_threads(ctx)) {
      if (j == p.num_indices) {
        p.flags[j] = 0;
        continue;
      }
      const bool real = k[j] != p.sentinel;
      p.flags[j] = real && (j == 0 || k[j - 1] != k[j]);
      if (real && (j + 1 == p.num_indices || k[j + 1] == p.sentinel)) p.header->scalars[1] = static_cast<unsigned long long>(j + 1);
    }
  }
};

/// Step 4b: starts[u] = first sorted slot of unique row u; starts[U] = end of the real keys.
template <class Target = void>
struct segment_starts_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_segment_starts_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    const unsigned long long* k = p.keys[p.in];
    for (long long j = detail::global_thread(ctx); j < p.num_indices; j += detail::global_threads(ctx))
      if (k[j] != p.sentinel && (j == 0 || k[j - 1] != k[j])) p.starts[p.flags[j]] = static_cast<unsigned int>(j);
    if (detail::global_thread(ctx) == 0) p.starts[p.header->scalars[0]] = static_cast<unsigned int>(p.header->scalars[1]);
  }
};

/// Step 5: one warp per unique row.
template <scalar Rows, class Target = void>
struct backward_apply_kernel : detail::declared_target<Target> {
  static constexpr const char* name = "embedding_backward_apply_kernel";
  static constexpr int max_threads_per_block = 256;
  // CUDA occupancy request (HIP and the emulator ignore it): up to 64 registers per thread, 4 blocks
  // of 256 per SM. Given only the block size, ptxas (nvcc 13) picked 32 registers for this kernel on
  // sm_90a and 40 on sm_100a and spilled 12 and 48 bytes under them; it needs about 40-56.
  static constexpr int register_budget = 64;
  static constexpr int min_blocks_per_multiprocessor = 65536 / (max_threads_per_block * register_budget);
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const detail::backward_params& p) const {
    const auto& st = p.header->status;
    const bool failed = p.policy == int(bounds::error) &&
                        (st.first_bad_position != status_none || st.first_bad_bag != status_none);
    // Register budget (this kernel spilled: 4 SGPRs on gfx90a with clang 15; 48 bytes on sm_100a,
    // where ptxas 13.0 chose 40 registers under the 256-thread launch bound, .maxntid 256, the only
    // limit the trampoline sets). Two things fixed it, and they are why the code reads as it does:
    //  - the row loop counts in 32 bits: unique <= num_indices < 2^31 (the host entry checks). Its
    //    counter, bound and stride live across the whole kernel; in 64 bits they, and the 64-bit
    //    index math on them, cost sm_100a its spill-free allocation (ptxas then takes 48 registers);
    //  - the column loops step per lane (d = lane, lane + W, ...) instead of a warp-wide d0 loop with
    //    a per-lane test inside: that nested one more divergent region, one more live exec mask
    //    (2 SGPRs on wave64), around the gradient sum with its two inner loops.
    const unsigned int unique = failed ? 0u : static_cast<unsigned int>(p.header->scalars[0]);
    if (p.sparse_count && detail::global_thread(ctx) == 0) *p.sparse_count = unique;
    auto warp = ctx.warp();
    const int lane = ctx.lane().index();
    constexpr int W = Ctx::warp_size;
    const long long first = ctx.block().rank() * warp.count() + warp.index();
    if (first >= unique) return;
    const long long all_warps = ctx.grid().size() * warp.count();
    // A stride of `unique` or more ends the loop after one row either way; clamped, u + stride < 2^32.
    const unsigned int warps = all_warps < unique ? static_cast<unsigned int>(all_warps) : unique;
    for (unsigned int u = static_cast<unsigned int>(first); u < unique; u += warps) {
      const unsigned int s = p.starts[u], e = p.starts[u + 1];
      const unsigned long long key = p.keys[p.in][s];
      const int t = detail::table_of_row(p.tables, p.num_tables, key);
      const detail::table_desc& td = p.tables[t];
      const long long row = static_cast<long long>(key) - td.row_base;
      const int dim = td.dim;
      if (p.kind == int(gradient::sparse) && lane == 0) {
        p.sparse_tables[u] = t;
        p.sparse_rows[u] = row;
      }
      float h_new = 0.f;
      if (p.kind == int(gradient::fused) && p.opt == int(optimizer::rowwise_adagrad)) {
        const float h_old = td.state[row];  // every lane reads before lane 0 writes (after the sum)
        float sq = 0.f;
        for (int d = lane; d < dim; d += W) {
          const float g = grad_of(p, s, e, d);
          sq += g * g;
        }
        sq = warp.sum(sq);
        h_new = update::rowwise_state(h_old, sq, dim);
        if (lane == 0) td.state[row] = h_new;
      }
      for (int d = lane; d < dim; d += W) {
        const float g = grad_of(p, s, e, d);
        if (p.kind == int(gradient::dense)) {
          td.dense_grad[row * dim + d] = g;
        } else if (p.kind == int(gradient::sparse)) {
          p.sparse_grads[static_cast<long long>(u) * p.sparse_stride + d] = g;
        } else {
          unsigned char* at = td.rows_mut + row * td.stride;
          const float w = load_weight(at, d);
          float nw;
          if (p.opt == int(optimizer::sgd)) nw = update::sgd(w, g, p.lr);
          else if (p.opt == int(optimizer::adagrad)) nw = update::adagrad(w, g, td.state[row * dim + d], p.lr, p.eps);
          else nw = update::rowwise_adagrad(w, g, h_new, p.lr, p.eps);
          store_weight(at, d, nw);
        }
      }
    }
  }

  /// The gradient of column d of the row whose sorted run is [s, e): in position order.
  STRATA_HOST_DEVICE static float grad_of(const detail::backward_params& p, unsigned int s, unsigned int e, int d) {
    float g = 0.f;
    for (unsigned int j = s; j < e; ++j) {
      const long long pos = p.vals[p.in][j];
      const long long bag = static_cast<long long>(p.bag_of[pos]) - 1;
      float scale = p.bag_scale[bag];
      if (p.weights) scale *= p.weights[pos];
      long long at;
      if (p.mode == int(pooling::none)) {
        at = pos * p.none_stride + d;
      } else {
        const detail::feature_desc& fd = p.features[detail::feature_of_bag(p.features, p.num_features, bag)];
        at = fd.out_offset + (bag - fd.bag_base) * fd.out_stride + d;
      }
      g += scale * detail::load_value(p.grad, at, p.grad_format);
    }
    return g;
  }
  STRATA_HOST_DEVICE static float load_weight(const unsigned char* row, int d) {
    if constexpr (Rows == scalar::fp16) return float(reinterpret_cast<const f16*>(row)[d]);
    else if constexpr (Rows == scalar::bf16) return float(reinterpret_cast<const bf16*>(row)[d]);
    else return reinterpret_cast<const float*>(row)[d];
  }
  STRATA_HOST_DEVICE static void store_weight(unsigned char* row, int d, float v) {
    if constexpr (Rows == scalar::fp16) reinterpret_cast<f16*>(row)[d] = f16(v);
    else if constexpr (Rows == scalar::bf16) reinterpret_cast<bf16*>(row)[d] = bf16(v);
    else reinterpret_cast<float*>(row)[d] = v;
  }
};

}  // namespace strata::embedding
