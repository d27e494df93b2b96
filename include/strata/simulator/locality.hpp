// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/simulator/locality.hpp -- a locality model of a tile schedule on a chiplet GPU.
//
// What it models (docs/chiplets.md has the argument and the limits):
//   - placement: the grid has one block per tile; block `id` runs on the chiplet the dispatch model
//     predicts (arch/dispatch.hpp) and computes the tile the order gives it;
//   - concurrency: each chiplet runs W = units_per_chiplet x blocks_per_unit blocks at once, taking its
//     blocks in id order; all tiles take equally long, so a chiplet runs waves of W blocks, and inside a
//     wave the blocks advance through their K steps in lockstep;
//   - caches: one LRU L2 per chiplet (byte capacity, configurable line size), optionally one shared
//     last-level cache below them (MI300's Infinity Cache); a miss in L2 goes to the LLC, a miss there
//     to memory. Only operand reads are modelled (outputs are written once whatever the order).
//   - granularity: `panel` treats each operand panel a tile reads in one K step (e.g. 256 x 64 bf16 =
//     32 KiB) as one cache entry; `line` splits it into cache lines at its real addresses. Panels are
//     read whole, so the two agree except for partial evictions at the LRU end (tested); panel mode is
//     ~(panel bytes / line bytes) times faster and is the default.
//
// Workloads:
//   GEMM       C[M x N] = A[M x K] B, both operands K-contiguous (A row-major M x K, B stored N x K);
//              tile (m, n) at K step s reads A panel (m, s) and B panel (n, s).
//   attention  forward, non-causal; Q [batch, heads, seqlen_q, d], K and V [batch, heads_k, seqlen_k, d];
//              work tile (q tile, batch*heads index) reads its Q tile at step 0 and the K and V tiles j
//              of its KV head (head / (heads / heads_k)) at step j.
//
// Outputs per chiplet: tiles, accesses, hits, bytes requested and bytes fetched from below the L2;
// in all: bytes fetched from below the LLC, unique bytes (compulsory traffic), waves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "strata/arch/target.hpp"
#include "strata/arch/dispatch.hpp"
#include "strata/hierarchy/tile_order.hpp"
#include "strata/simulator/lru.hpp"

namespace strata::simulator {

enum class granularity { panel, line };

/// The machine: topology (chiplets, CUs, L2, LLC, dispatch model) and what the model adds.
struct machine {
  arch::chiplet_topology topology{};
  int blocks_per_unit = 1;          // resident blocks per CU
  std::uint64_t line_bytes = 128;   // cache line (CDNA3 L2: 128 B)
  bool use_llc = true;              // model topology.last_level_cache_bytes when non-zero
  granularity grain = granularity::panel;
};

struct gemm_shape {
  long long m = 0, n = 0, k = 0;
  int tile_m = 256, tile_n = 256, tile_k = 64;
  int element_bytes = 2;
};

struct attention_shape {
  int batch = 1, heads = 1, heads_k = 1;
  long long seqlen_q = 0, seqlen_k = 0;
  int head_dim = 128;
  int tile_q = 128, tile_kv = 64;
  int element_bytes = 2;
};

struct chiplet_stats {
  long long tiles = 0, accesses = 0, hits = 0;
  std::uint64_t bytes_requested = 0, bytes_below_l2 = 0;
  double hit_rate() const { return accesses ? static_cast<double>(hits) / static_cast<double>(accesses) : 0.0; }
  double byte_hit_rate() const {
    return bytes_requested ? 1.0 - static_cast<double>(bytes_below_l2) / static_cast<double>(bytes_requested) : 0.0;
  }
};

struct result {
  std::vector<chiplet_stats> chiplets;
  std::uint64_t bytes_requested = 0;  // what the blocks read, before any cache
  std::uint64_t bytes_below_l2 = 0;   // L2 misses: fabric traffic to the LLC / memory
  std::uint64_t bytes_below_llc = 0;  // LLC misses: memory traffic (== bytes_below_l2 without an LLC)
  std::uint64_t unique_bytes = 0;     // every operand byte once: the compulsory traffic
  long long waves = 0;
  long long accesses() const {
    long long a = 0;
    for (const auto& c : chiplets) a += c.accesses;
    return a;
  }
  double hit_rate() const {
    long long a = 0, h = 0;
    for (const auto& c : chiplets) a += c.accesses, h += c.hits;
    return a ? static_cast<double>(h) / static_cast<double>(a) : 0.0;
  }
  long long min_tiles() const {
    long long v = chiplets.empty() ? 0 : chiplets[0].tiles;
    for (const auto& c : chiplets) v = std::min(v, c.tiles);
    return v;
  }
  long long max_tiles() const {
    long long v = 0;
    for (const auto& c : chiplets) v = std::max(v, c.tiles);
    return v;
  }
};

/// One operand read: `rows` rows of `row_bytes` bytes, `pitch` bytes apart, from byte address `base`;
/// `key` names the whole region (panel granularity).
struct region {
  std::uint64_t key = 0, base = 0, pitch = 0;
  std::uint64_t rows = 0, row_bytes = 0;
  std::uint64_t bytes() const { return rows * row_bytes; }
};

/// A workload the simulator can run: its tile grid and the regions a tile reads at each step.
/// (Implemented below for GEMM and attention.)
struct workload {
  long long tiles_m = 1, tiles_n = 1, steps = 1;
  std::uint64_t unique_bytes = 0, address_space = 0, panel_keys = 0, smallest_region = 1;
  // regions(m, n, step, out): appends the regions tile (m, n) reads at `step`.
  virtual void regions(long long m, long long n, long long step, std::vector<region>& out) const = 0;
  virtual ~workload() = default;
};

namespace detail {
inline long long cdiv(long long a, long long b) { return (a + b - 1) / b; }
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("strata::simulator: " + what);
}
}  // namespace detail

class gemm_workload final : public workload {
 public:
  explicit gemm_workload(const gemm_shape& s) : s_(s) {
    detail::require(s.m > 0 && s.n > 0 && s.k > 0, "GEMM extents must be positive");
    detail::require(s.tile_m > 0 && s.tile_n > 0 && s.tile_k > 0 && s.element_bytes > 0,
                    "tile sizes and element bytes must be positive");
    tiles_m = detail::cdiv(s.m, s.tile_m);
    tiles_n = detail::cdiv(s.n, s.tile_n);
    steps = detail::cdiv(s.k, s.tile_k);
    a_bytes_ = static_cast<std::uint64_t>(s.m) * s.k * s.element_bytes;
    b_base_ = (a_bytes_ + 4095) / 4096 * 4096;  // B in its own pages after A
    unique_bytes = a_bytes_ + static_cast<std::uint64_t>(s.n) * s.k * s.element_bytes;
    address_space = b_base_ + static_cast<std::uint64_t>(s.n) * s.k * s.element_bytes;
    panel_keys = static_cast<std::uint64_t>(tiles_m + tiles_n) * steps;
    const long long last_k = s.k - (steps - 1) * s.tile_k;
    const long long last_m = s.m - (tiles_m - 1) * s.tile_m, last_n = s.n - (tiles_n - 1) * s.tile_n;
    smallest_region = static_cast<std::uint64_t>(std::min(last_m, last_n)) * last_k * s.element_bytes;
  }
  void regions(long long m, long long n, long long step, std::vector<region>& out) const override {
    const std::uint64_t e = s_.element_bytes, pitch = static_cast<std::uint64_t>(s_.k) * e;
    const std::uint64_t k0 = static_cast<std::uint64_t>(step) * s_.tile_k;
    const std::uint64_t kb = std::min<std::uint64_t>(s_.tile_k, s_.k - k0) * e;
    const std::uint64_t m0 = static_cast<std::uint64_t>(m) * s_.tile_m, n0 = static_cast<std::uint64_t>(n) * s_.tile_n;
    out.push_back({static_cast<std::uint64_t>(m * steps + step), m0 * pitch + k0 * e, pitch,
                   std::min<std::uint64_t>(s_.tile_m, s_.m - m0), kb});
    out.push_back({static_cast<std::uint64_t>((tiles_m + n) * steps + step), b_base_ + n0 * pitch + k0 * e, pitch,
                   std::min<std::uint64_t>(s_.tile_n, s_.n - n0), kb});
  }

 private:
  gemm_shape s_;
  std::uint64_t a_bytes_ = 0, b_base_ = 0;
};

/// Attention forward: tile (m = q tile, n = batch * heads + head).
class attention_workload final : public workload {
 public:
  explicit attention_workload(const attention_shape& s) : s_(s) {
    detail::require(s.batch > 0 && s.heads > 0 && s.heads_k > 0 && s.seqlen_q > 0 && s.seqlen_k > 0 && s.head_dim > 0,
                    "attention extents must be positive");
    detail::require(s.heads % s.heads_k == 0, "heads must be a multiple of heads_k (GQA groups)");
    detail::require(s.tile_q > 0 && s.tile_kv > 0 && s.element_bytes > 0, "tile sizes must be positive");
    tiles_m = detail::cdiv(s.seqlen_q, s.tile_q);
    tiles_n = static_cast<long long>(s.batch) * s.heads;
    steps = detail::cdiv(s.seqlen_k, s.tile_kv);
    row_ = static_cast<std::uint64_t>(s.head_dim) * s.element_bytes;
    q_bytes_ = static_cast<std::uint64_t>(s.batch) * s.heads * s.seqlen_q * row_;
    kv_bytes_ = static_cast<std::uint64_t>(s.batch) * s.heads_k * s.seqlen_k * row_;
    k_base_ = (q_bytes_ + 4095) / 4096 * 4096;
    v_base_ = k_base_ + (kv_bytes_ + 4095) / 4096 * 4096;
    unique_bytes = q_bytes_ + 2 * kv_bytes_;
    address_space = v_base_ + kv_bytes_;
    kv_tiles_ = static_cast<std::uint64_t>(s.batch) * s.heads_k * steps;
    panel_keys = static_cast<std::uint64_t>(tiles_m * tiles_n) + 2 * kv_tiles_;
    const long long last_q = s.seqlen_q - (tiles_m - 1) * s.tile_q, last_k = s.seqlen_k - (steps - 1) * s.tile_kv;
    smallest_region = static_cast<std::uint64_t>(std::min(last_q, last_k)) * row_;
  }
  void regions(long long m, long long n, long long step, std::vector<region>& out) const override {
    const long long b = n / s_.heads, h = n % s_.heads, hk = h / (s_.heads / s_.heads_k);
    if (step == 0) {
      const std::uint64_t q0 = static_cast<std::uint64_t>(m) * s_.tile_q;
      const std::uint64_t rows = std::min<std::uint64_t>(s_.tile_q, s_.seqlen_q - q0);
      const std::uint64_t base = ((static_cast<std::uint64_t>(n)) * s_.seqlen_q + q0) * row_;
      out.push_back({static_cast<std::uint64_t>(n * tiles_m + m), base, row_, rows, row_});
    }
    const std::uint64_t kv = static_cast<std::uint64_t>(b) * s_.heads_k + hk;
    const std::uint64_t k0 = static_cast<std::uint64_t>(step) * s_.tile_kv;
    const std::uint64_t rows = std::min<std::uint64_t>(s_.tile_kv, s_.seqlen_k - k0);
    const std::uint64_t off = (kv * s_.seqlen_k + k0) * row_;
    const std::uint64_t key = static_cast<std::uint64_t>(tiles_m * tiles_n) + kv * steps + step;
    out.push_back({key, k_base_ + off, row_, rows, row_});
    out.push_back({key + kv_tiles_, v_base_ + off, row_, rows, row_});
  }

 private:
  attention_shape s_;
  std::uint64_t row_ = 0, q_bytes_ = 0, kv_bytes_ = 0, k_base_ = 0, v_base_ = 0, kv_tiles_ = 0;
};

/// The order problem that sizes swizzles for a workload on a machine.
inline order::problem order_problem(const gemm_shape& s, const machine& mc) {
  return order::gemm_problem(s.m, s.n, s.k, s.tile_m, s.tile_n, s.tile_k, s.element_bytes, mc.topology,
                             mc.blocks_per_unit);
}
inline order::problem order_problem(const attention_shape& s, const machine& mc) {
  order::problem p;
  p.tiles_m = detail::cdiv(s.seqlen_q, s.tile_q);
  p.tiles_n = static_cast<long long>(s.batch) * s.heads;
  p.topology = mc.topology;
  p.k_steps = detail::cdiv(s.seqlen_k, s.tile_kv);
  // A Q tile is read by one work tile only, so grouping q tiles saves nothing on Q: it weighs 0, and
  // the swizzle groups along q as far as the resident window goes (K and V are what tiles share).
  p.a_step_bytes = 0;
  p.b_step_bytes = 2LL * s.tile_kv * s.head_dim * s.element_bytes;
  p.blocks_per_unit = mc.blocks_per_unit;
  return p;
}

/// id -> tile for every id of the problem, through order type `Order`.
template <class Order>
std::vector<order::tile> tabulate(const order::problem& p) {
  const Order o(p);
  std::vector<order::tile> t(static_cast<std::size_t>(p.tiles()));
  for (long long i = 0; i < p.tiles(); ++i) t[static_cast<std::size_t>(i)] = o(i);
  return t;
}

/// Runs the model: `order_of[id]` is the tile block `id` computes (a permutation of the tiles).
inline result simulate(const machine& mc, const workload& w, const std::vector<order::tile>& order_of) {
  const long long tiles = w.tiles_m * w.tiles_n;
  detail::require(static_cast<long long>(order_of.size()) == tiles, "the order must give one tile per block");
  detail::require(mc.blocks_per_unit > 0 && mc.topology.units_per_chiplet > 0, "need at least one resident block");
  detail::require(mc.line_bytes > 0, "the line size must be positive");
  const int x = chiplet::detail::model_count(mc.topology);
  const long long resident = static_cast<long long>(mc.topology.units_per_chiplet) * mc.blocks_per_unit;
  const bool lines = mc.grain == granularity::line;
  const std::uint64_t smallest = lines ? mc.line_bytes : std::max<std::uint64_t>(1, w.smallest_region);
  const std::uint64_t l2_bytes = mc.topology.l2_bytes_per_chiplet;
  const std::uint64_t llc_bytes = mc.use_llc ? mc.topology.last_level_cache_bytes : 0;
  auto entries = [&](std::uint64_t cap) {
    std::uint64_t keys = lines ? (w.address_space + mc.line_bytes - 1) / mc.line_bytes : w.panel_keys;
    return static_cast<std::size_t>(std::min<std::uint64_t>(cap / smallest + 1, keys + 1));
  };
  std::vector<lru_cache> l2;
  l2.reserve(static_cast<std::size_t>(x));
  for (int c = 0; c < x; ++c) l2.emplace_back(l2_bytes, entries(l2_bytes));
  lru_cache llc(llc_bytes, entries(llc_bytes));

  result r;
  r.chiplets.resize(static_cast<std::size_t>(x));
  r.unique_bytes = w.unique_bytes;
  long long waves = 0;
  for (int c = 0; c < x; ++c) {
    r.chiplets[static_cast<std::size_t>(c)].tiles = chiplet::blocks_on(mc.topology, c, tiles);
    waves = std::max(waves, detail::cdiv(r.chiplets[static_cast<std::size_t>(c)].tiles, resident));
  }
  r.waves = waves;

  std::vector<region> regs;
  auto touch = [&](int c, std::uint64_t key, std::uint64_t bytes) {
    chiplet_stats& st = r.chiplets[static_cast<std::size_t>(c)];
    ++st.accesses;
    st.bytes_requested += bytes;
    if (l2[static_cast<std::size_t>(c)].access(key, bytes)) {
      ++st.hits;
      return;
    }
    st.bytes_below_l2 += bytes;
    if (!llc.access(key, bytes)) r.bytes_below_llc += bytes;
  };
  for (long long wave = 0; wave < waves; ++wave)
    for (long long step = 0; step < w.steps; ++step)
      for (int c = 0; c < x; ++c) {
        const long long n_c = r.chiplets[static_cast<std::size_t>(c)].tiles;
        for (long long k = wave * resident; k < std::min(n_c, (wave + 1) * resident); ++k) {
          const order::tile t = order_of[static_cast<std::size_t>(chiplet::block_of(mc.topology, c, k, tiles))];
          regs.clear();
          w.regions(t.m, t.n, step, regs);
          for (const region& g : regs) {
            if (!lines) {
              touch(c, g.key, g.bytes());
              continue;
            }
            for (std::uint64_t row = 0; row < g.rows; ++row) {
              const std::uint64_t lo = g.base + row * g.pitch, hi = lo + g.row_bytes;  // [lo, hi)
              for (std::uint64_t line = lo / mc.line_bytes; line * mc.line_bytes < hi; ++line)
                touch(c, line, mc.line_bytes);
            }
          }
        }
      }
  for (const auto& st : r.chiplets) r.bytes_requested += st.bytes_requested, r.bytes_below_l2 += st.bytes_below_l2;
  if (llc_bytes == 0) r.bytes_below_llc = r.bytes_below_l2;
  return r;
}

}  // namespace strata::simulator
