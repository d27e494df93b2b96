// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The locality simulator: LRU behaviour, small cases computed by hand, panel vs line granularity, and
// the qualitative facts on the MI300X and MI355X models.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <list>
#include <random>
#include <algorithm>

#include "strata/arch/arch.hpp"
#include "strata/simulator/locality.hpp"
#include "strata/simulator/orders.hpp"

namespace arch = strata::arch;
namespace sim = strata::simulator;
namespace order = strata::order;

namespace {

sim::machine small_machine(int count, int units, std::uint64_t l2, std::uint64_t llc = 0) {
  sim::machine mc;
  mc.topology.count = count;
  mc.topology.units_per_chiplet = units;
  mc.topology.l2_bytes_per_chiplet = l2;
  mc.topology.last_level_cache_bytes = llc;
  mc.topology.dispatch = count == 1 ? arch::dispatch_model::monolithic : arch::dispatch_model::round_robin;
  return mc;
}

template <class Order>
sim::result run(const sim::machine& mc, const sim::gemm_shape& g) {
  return sim::simulate(mc, sim::gemm_workload(g), sim::tabulate<Order>(sim::order_problem(g, mc)));
}

}  // namespace

TEST_CASE("lru_cache: byte capacity, recency, bypass", "[chiplet][simulator]") {
  sim::lru_cache c(300, 8);
  CHECK_FALSE(c.access(1, 100));
  CHECK_FALSE(c.access(2, 100));
  CHECK_FALSE(c.access(3, 100));
  CHECK(c.access(1, 100));         // order now 2, 3, 1 (LRU first)
  CHECK_FALSE(c.access(4, 100));   // evicts 2
  CHECK_FALSE(c.access(2, 100));   // evicts 3
  CHECK(c.access(1, 100));
  CHECK(c.access(4, 100));
  CHECK_FALSE(c.access(9, 1000));  // larger than the cache: bypasses it, evicts nothing
  CHECK(c.access(2, 100));
  CHECK(c.used_bytes() == 300);
  CHECK_FALSE(c.access(5, 250));   // evicts 1, 4 and 2 (LRU first) to make room for 250 bytes
  CHECK(c.used_bytes() == 250);
  // Against a plain reference LRU (a list), on a random stream of keys and sizes: the hash table's
  // backward-shift deletion must keep every resident key findable.
  std::mt19937_64 rng(7);
  sim::lru_cache fast(4000, 4000);
  std::list<std::pair<std::uint64_t, std::uint64_t>> ref;  // MRU first: (key, bytes)
  std::uint64_t ref_used = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t key = rng() % 600, bytes = 1 + key % 37;  // a key always has the same size
    auto it = std::find_if(ref.begin(), ref.end(), [&](const auto& e) { return e.first == key; });
    const bool ref_hit = it != ref.end();
    if (ref_hit) {
      ref.splice(ref.begin(), ref, it);
    } else {
      while (ref_used + bytes > 4000) ref_used -= ref.back().second, ref.pop_back();
      ref.emplace_front(key, bytes);
      ref_used += bytes;
    }
    if (fast.access(key, bytes) != ref_hit) FAIL("access " << i << " of key " << key << " differs from the reference");
  }
  CHECK(fast.used_bytes() == ref_used);
}

TEST_CASE("simulator: GEMM cases computed by hand", "[chiplet][simulator]") {
  // 32x32x32 GEMM, 16x16x16 tiles, 1-byte elements: 2x2 tiles, 2 K steps, every panel 16*16 = 256 B.
  const sim::gemm_shape g{32, 32, 32, 16, 16, 16, 1};

  SECTION("two chiplets of one CU, round robin, ample L2, row-major order") {
    // Linear order: block 0 -> (0,0), 1 -> (0,1), 2 -> (1,0), 3 -> (1,1). Round robin: chiplet 0 runs
    // blocks 0 then 2, chiplet 1 runs 1 then 3 (one resident block each: 2 waves).
    // Chiplet 0: (0,0) reads A(0,0) B(0,0) A(0,1) B(0,1): 4 misses. (1,0) reads A(1,0) A(1,1) (misses)
    // and B(0,0) B(0,1) (hits). 8 accesses, 2 hits, 6 * 256 = 1536 bytes below L2. Chiplet 1 the same
    // with B(1,*): A(0,*) was read on chiplet 0, which does not help chiplet 1's private L2.
    const auto r = run<order::linear>(small_machine(2, 1, 1 << 20), g);
    REQUIRE(r.chiplets.size() == 2);
    for (const auto& c : r.chiplets) {
      CHECK(c.tiles == 2);
      CHECK(c.accesses == 8);
      CHECK(c.hits == 2);
      CHECK(c.bytes_requested == 8 * 256);
      CHECK(c.bytes_below_l2 == 6 * 256);
    }
    CHECK(r.waves == 2);
    CHECK(r.bytes_below_l2 == 3072);
    CHECK(r.bytes_below_llc == 3072);  // no LLC: everything below L2 comes from memory
    CHECK(r.unique_bytes == 2048);     // A and B: 32 * 32 bytes each
    CHECK(r.hit_rate() == Approx(0.25));
  }
  SECTION("the same with a shared LLC: memory sees each panel once") {
    // 8 distinct panels (A(0..1, 0..1), B(0..1, 0..1)) of 256 B: 2048 B from memory, the rest LLC hits.
    const auto r = run<order::linear>(small_machine(2, 1, 1 << 20, 1 << 20), g);
    CHECK(r.bytes_below_l2 == 3072);
    CHECK(r.bytes_below_llc == 2048);
  }
  SECTION("one chiplet, LRU capacity limits") {
    // 32x16x32: tiles (0,0) then (1,0), one resident block, 2 K steps, panels of 256 B.
    const sim::gemm_shape g2{32, 16, 32, 16, 16, 16, 1};
    // L2 of 2 panels. (0,0): A00 B00 | A01 B01 (A01 evicts A00, B01 evicts B00). (1,0): A10 evicts A01,
    // B00 misses (evicted), evicts B01; A11, B01 miss. 8 accesses, 0 hits, 2048 bytes.
    auto r = run<order::linear>(small_machine(1, 1, 512), g2);
    CHECK(r.chiplets[0].hits == 0);
    CHECK(r.bytes_below_l2 == 2048);
    // L2 of 4 panels: after (0,0) it holds [A00 B00 A01 B01] (LRU first). A10 evicts A00; B00 hits;
    // A11 evicts A01; B01 hits: 2 hits, 6 * 256 = 1536 bytes.
    r = run<order::linear>(small_machine(1, 1, 1024), g2);
    CHECK(r.chiplets[0].hits == 2);
    CHECK(r.bytes_below_l2 == 1536);
  }
  SECTION("two resident blocks share panels inside a wave") {
    // One chiplet of 2 CUs: blocks 0 and 1 ((0,0), (0,1)) run together, then 2 and 3. Per K step of
    // wave 0: A(0,s) miss, B(0,s) miss, A(0,s) hit, B(1,s) miss -> 2 steps: 2 hits of 8. Wave 1 the
    // same with A(1,s), and B(0,s) B(1,s) still resident (ample L2): per step A(1,s) miss, 3 hits ->
    // 6 hits of 8. Total 8 hits of 16; misses 8 * 256 = 2048 = every panel once.
    const auto r = run<order::linear>(small_machine(1, 2, 1 << 20), g);
    CHECK(r.waves == 2);
    CHECK(r.chiplets[0].hits == 8);
    CHECK(r.bytes_below_l2 == 2048);
  }
  SECTION("ragged edges read only what exists") {
    // 20x20x20 with 16x16x16 tiles, 1 byte: A panels are 16x16, 16x4, 4x16, 4x4 bytes; one chiplet,
    // one CU, ample L2, row-major: (0,0) A(0,0) 256 B(0,0) 256 A(0,1) 64 B(0,1) 64; (0,1) A hits,
    // B(1,0) 64 B(1,1) 16; (1,0) A(1,0) 64 A(1,1) 16, B hits; (1,1) all hit. Misses: 800 = 400 + 400.
    const auto r = run<order::linear>(small_machine(1, 1, 1 << 20), sim::gemm_shape{20, 20, 20, 16, 16, 16, 1});
    CHECK(r.bytes_below_l2 == 800);
    CHECK(r.unique_bytes == 800);
    // Requested: (0,0) 640, (0,1) 256+64+64+16 = 400, (1,0) 400, (1,1) 64+64+16+16 = 160.
    CHECK(r.bytes_requested == 1600);
  }
}

TEST_CASE("simulator: attention with GQA computed by hand", "[chiplet][simulator]") {
  // batch 1, heads 2 sharing one KV head, seqlen_q 16, seqlen_k 32, d 8, tiles 16x16, 1-byte elements:
  // tiles 1 (q) x 2 (heads), 2 KV steps; a Q, K or V tile is 16 rows x 8 B = 128 B.
  sim::attention_shape a;
  a.batch = 1, a.heads = 2, a.heads_k = 1, a.seqlen_q = 16, a.seqlen_k = 32, a.head_dim = 8;
  a.tile_q = 16, a.tile_kv = 16, a.element_bytes = 1;
  const sim::machine mc = small_machine(1, 1, 1 << 20);
  const sim::attention_workload w(a);
  // Head 0: Q0 K0 V0 | K1 V1, all misses. Head 1: Q1 misses, K0 V0 K1 V1 hit (same KV head).
  // 10 accesses, 4 hits, 6 * 128 = 768 bytes = Q (2 * 128) + K (256) + V (256): compulsory only.
  const auto r = sim::simulate(mc, w, sim::tabulate<order::linear>(sim::order_problem(a, mc)));
  CHECK(r.chiplets[0].accesses == 10);
  CHECK(r.chiplets[0].hits == 4);
  CHECK(r.bytes_below_l2 == 768);
  CHECK(r.unique_bytes == 768);
  // Without GQA (2 KV heads) nothing is shared: 10 misses, 1280 bytes.
  a.heads_k = 2;
  const auto r2 = sim::simulate(mc, sim::attention_workload(a), sim::tabulate<order::linear>(sim::order_problem(a, mc)));
  CHECK(r2.chiplets[0].hits == 0);
  CHECK(r2.bytes_below_l2 == 1280);
}

TEST_CASE("simulator: panel and line granularity agree", "[chiplet][simulator]") {
  // 1024^3 bf16, 128x128x64 tiles (panels of 128 rows x one 128-byte line), 2 chiplets x 4 CUs.
  const sim::gemm_shape g{1024, 1024, 1024, 128, 128, 64, 2};
  for (std::uint64_t l2 : {std::uint64_t{8} << 20, std::uint64_t{256} << 10}) {
    sim::machine mc = small_machine(2, 4, l2, 8 << 20);
    const auto panel = run<order::chiplet_default>(mc, g);
    mc.grain = sim::granularity::line;
    const auto line = run<order::chiplet_default>(mc, g);
    INFO("L2 " << l2 << ": panel " << panel.bytes_below_l2 << ", line " << line.bytes_below_l2);
    CHECK(line.bytes_requested == panel.bytes_requested);
    if (l2 == (std::uint64_t{8} << 20)) CHECK(line.bytes_below_l2 == panel.bytes_below_l2);  // no eviction: exact
    CHECK(static_cast<double>(line.bytes_below_l2) == Approx(static_cast<double>(panel.bytes_below_l2)).epsilon(0.05));
  }
}

TEST_CASE("simulator: on MI300X the chiplet-aware default beats group-M alone", "[chiplet][simulator]") {
  // 8192^3 bf16 GEMM, 256x256x64 tiles, gfx942 descriptor (8 XCDs x 38 CUs, 4 MB L2, 256 MB LLC).
  const sim::gemm_shape g{8192, 8192, 8192, 256, 256, 64, 2};
  sim::machine mc;
  mc.topology = arch::gfx942::chiplets;
  const auto t0 = std::chrono::steady_clock::now();
  const auto dflt = run<order::chiplet_default>(mc, g);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto grouped = run<order::group_m<8>>(mc, g);
  const auto remap_grouped = run<order::compose<order::dispatch_inverse<order::contiguous>, order::group_m<8>>>(mc, g);
  const double ratio = static_cast<double>(grouped.bytes_below_l2) / static_cast<double>(dflt.bytes_below_l2);
  std::printf("MI300X model, 8192^3 bf16, 256x256x64: default %.3f GiB below L2 (hit %.3f), group_m<8> %.3f GiB "
              "(hit %.3f): group_m<8> fetches %.2fx the default's bytes; simulated in %.3f s\n",
              dflt.bytes_below_l2 / 1073741824.0, dflt.hit_rate(), grouped.bytes_below_l2 / 1073741824.0,
              grouped.hit_rate(), ratio, secs);
  CHECK(dflt.bytes_below_l2 < grouped.bytes_below_l2);
  CHECK(ratio > 1.5);
  // The swizzle tuned for one shared L2 hurts on XCDs unless composed with the dispatch inverse.
  CHECK(remap_grouped.bytes_below_l2 < grouped.bytes_below_l2);
  // One-wave bound (research section 4): W = 38 tiles read >= 2*sqrt(38) distinct panels of 76 per step.
  CHECK(dflt.hit_rate() <= 1.0 - 2.0 * std::sqrt(38.0) / 76.0 + 1e-9);
  CHECK(dflt.min_tiles() == 128);
  CHECK(dflt.max_tiles() == 128);
  // The LLC (256 MB) holds A and B (128 MB each): memory sees each byte once whatever the order.
  CHECK(dflt.bytes_below_llc == dflt.unique_bytes);
  CHECK(secs < 5.0);

  // MI355X (gfx950: 8 x 32 CUs): the same direction.
  mc.topology = arch::gfx950::chiplets;
  CHECK(run<order::chiplet_default>(mc, g).bytes_below_l2 < run<order::group_m<8>>(mc, g).bytes_below_l2);
}

TEST_CASE("simulator: GQA attention on MI300X, dispatch inverse keeps K/V on one XCD", "[chiplet][simulator]") {
  sim::attention_shape a;
  a.batch = 2, a.heads = 64, a.heads_k = 8, a.seqlen_q = 4096, a.seqlen_k = 4096, a.head_dim = 128;
  a.tile_q = 128, a.tile_kv = 64;
  sim::machine mc;
  mc.topology = arch::gfx942::chiplets;
  const sim::attention_workload w(a);
  const auto p = sim::order_problem(a, mc);
  const auto dflt = sim::simulate(mc, w, sim::tabulate<order::chiplet_default>(p));
  const auto fa = sim::simulate(mc, w, sim::tabulate<order::raster<order::axis::m>>(p));  // FlashAttention's grid
  std::printf("MI300X model, GQA 64/8 heads, 4096 tokens: default %.3f GiB below L2, q-tile-fastest raster %.3f GiB "
              "(%.2fx)\n",
              dflt.bytes_below_l2 / 1073741824.0, fa.bytes_below_l2 / 1073741824.0,
              static_cast<double>(fa.bytes_below_l2) / static_cast<double>(dflt.bytes_below_l2));
  CHECK(dflt.bytes_below_l2 < fa.bytes_below_l2);
}
