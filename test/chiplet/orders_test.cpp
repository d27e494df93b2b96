// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dispatch model and the tile orders: inverses, bijections for every tile count (ragged tails
// included), contiguity of the dispatch inverse, balance per chiplet, agreement with published formulas.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "strata/arch/arch.hpp"
#include "strata/hierarchy/chiplet_topology.hpp"
#include "strata/arch/dispatch.hpp"
#include "strata/hierarchy/tile_order.hpp"

namespace arch = strata::arch;
namespace chiplet = strata::chiplet;
namespace order = strata::order;
using order::axis;

namespace {

arch::chiplet_topology topo(int count, int units, arch::dispatch_model d = arch::dispatch_model::round_robin) {
  arch::chiplet_topology t = arch::gfx942::chiplets;
  t.count = count;
  t.units_per_chiplet = units;
  t.dispatch = count == 1 ? arch::dispatch_model::monolithic : d;
  return t;
}

// Chiplet counts 1, 2, 4, 8 (and 3: not a power of two), 38 CUs each as on MI300X, plus 32 (MI355X)
// and the contiguous model.
std::vector<arch::chiplet_topology> topologies() {
  return {topo(1, 38), topo(2, 38), topo(3, 38), topo(4, 38), topo(8, 38), topo(8, 32),
          topo(2, 74, arch::dispatch_model::contiguous), topo(4, 38, arch::dispatch_model::contiguous)};
}

order::problem make(long long tm, long long tn, const arch::chiplet_topology& t) {
  order::problem p;
  p.tiles_m = tm;
  p.tiles_n = tn;
  p.topology = t;
  p.a_step_bytes = 256 * 64 * 2;
  p.b_step_bytes = 256 * 64 * 2;
  p.k_steps = 64;
  return p;
}

/// Order maps every id to a distinct in-range tile, id_of inverts it, and every chiplet gets
/// floor(T/X) or ceil(T/X) tiles.
template <class Order>
void check_order(const order::problem& p) {
  const Order o(p);
  const long long tiles = p.tiles();
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(tiles), 0);
  for (long long id = 0; id < tiles; ++id) {
    const order::tile t = o(id);
    const bool in_range = t.m >= 0 && t.m < p.tiles_m && t.n >= 0 && t.n < p.tiles_n;
    if (!in_range) FAIL("id " << id << " -> (" << t.m << ", " << t.n << ") out of " << p.tiles_m << "x" << p.tiles_n);
    auto& s = seen[static_cast<std::size_t>(t.m * p.tiles_n + t.n)];
    if (s) FAIL("tile (" << t.m << ", " << t.n << ") computed twice, " << p.tiles_m << "x" << p.tiles_n);
    s = 1;
    if (o.id_of(t) != id) FAIL("id_of(o(" << id << ")) = " << o.id_of(t) << ", " << p.tiles_m << "x" << p.tiles_n);
  }
}

template <class Remap>
void check_remap(const order::problem& p) {
  const Remap r(p);
  const long long tiles = p.tiles();
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(tiles), 0);
  for (long long id = 0; id < tiles; ++id) {
    const long long l = r(id);
    if (l < 0 || l >= tiles || seen[static_cast<std::size_t>(l)]) FAIL("remap not a bijection: T=" << tiles << " id " << id);
    seen[static_cast<std::size_t>(l)] = 1;
    if (r.inverse(l) != id) FAIL("inverse(remap(" << id << ")) = " << r.inverse(l) << ", T=" << tiles);
  }
}

}  // namespace

TEST_CASE("dispatch model: locate and block_of are inverse, balanced, and agree with arch", "[chiplet][dispatch]") {
  for (const auto& t : topologies()) {
    const int x = t.count;
    for (long long blocks = 1; blocks <= 1500; ++blocks) {
      std::vector<long long> per(static_cast<std::size_t>(x), 0);
      for (long long b = 0; b < blocks; ++b) {
        const chiplet::placement w = chiplet::locate(t, b, blocks);
        if (w.chiplet < 0 || w.chiplet >= x || w.rank != per[static_cast<std::size_t>(w.chiplet)])
          FAIL("blocks " << blocks << " block " << b << ": ranks on a chiplet must be 0, 1, 2, ... in id order");
        ++per[static_cast<std::size_t>(w.chiplet)];
        if (chiplet::block_of(t, w.chiplet, w.rank, blocks) != b) FAIL("block_of(locate(" << b << ")) != " << b);
        // The emulator places blocks with arch::modelled_chiplet: the two must agree where they overlap
        // (round robin everywhere; the ceil-sized contiguous ranges of arch only on two chiplets).
        if ((t.dispatch == arch::dispatch_model::round_robin || x <= 2) &&
            arch::modelled_chiplet(t, b, blocks) != w.chiplet)
          FAIL("modelled_chiplet disagrees for block " << b << " of " << blocks);
      }
      for (int c = 0; c < x; ++c) {
        REQUIRE(per[static_cast<std::size_t>(c)] == chiplet::blocks_on(t, c, blocks));
        if (per[static_cast<std::size_t>(c)] != blocks / x + (c < blocks % x ? 1 : 0)) FAIL("unbalanced");
        long long before = 0;
        for (int d = 0; d < c; ++d) before += per[static_cast<std::size_t>(d)];
        if (chiplet::first_block_of_range(t, c, blocks) != before) FAIL("first_block_of_range");
      }
    }
  }
  // The round-robin inverse, as a constant expression: the 3rd block of XCD 5 on MI300X is block 29.
  STATIC_REQUIRE(chiplet::block_of(arch::gfx942::chiplets, 5, 3, 1000) == 29);
  STATIC_REQUIRE(chiplet::locate(arch::gfx942::chiplets, 29, 1000) == chiplet::placement{5, 3});
}

TEST_CASE("dispatch inverse: a bijection whose image is one contiguous range per chiplet", "[chiplet][orders]") {
  for (const auto& t : topologies()) {
    for (long long tiles = 1; tiles <= 4096; ++tiles) {
      const auto p = make(1, tiles, t);
      check_remap<order::dispatch_inverse<order::contiguous>>(p);
      const order::dispatch_inverse<order::contiguous> r(p);
      // Composed with the dispatch model, chiplet c's k-th block gets logical id start(c) + k.
      for (long long id = 0; id < tiles; ++id) {
        const chiplet::placement w = chiplet::locate(t, id, tiles);
        if (r(id) != chiplet::first_block_of_range(t, w.chiplet, tiles) + w.rank)
          FAIL("T=" << tiles << " id " << id << " is not at the start of its chiplet's range + rank");
      }
    }
  }
}

TEST_CASE("dispatch inverse matches the published remap formulas", "[chiplet][orders]") {
  // Research section 2.3a (AITER remap_xcd / CK RemapXCD), re-derived from the formula:
  auto remap_xcd = [](long long pid, long long n, long long x) {
    const long long per = (n + x - 1) / x, tall = n % x == 0 ? x : n % x;
    const long long xcd = pid % x, loc = pid / x;
    return xcd < tall ? xcd * per + loc : tall * per + (xcd - tall) * (per - 1) + loc;
  };
  // Research section 2.3b (chunked), defined on the full rounds only.
  auto chunked_formula = [](long long pid, long long x, long long c) {
    const long long loc = pid / x;
    return (loc / c) * x * c + (pid % x) * c + loc % c;
  };
  for (int x : {2, 4, 8}) {
    for (long long n = 1; n <= 3000; n += (n < 200 ? 1 : 7)) {
      const auto p = make(1, n, topo(x, 38));
      const order::dispatch_inverse<order::contiguous> contiguous(p);
      const order::dispatch_inverse<order::chunked<16>> chunked(p);
      const long long lim = n / (x * 16) * (x * 16);
      for (long long pid = 0; pid < n; ++pid) {
        if (contiguous(pid) != remap_xcd(pid, n, x)) FAIL("remap_xcd differs: n=" << n << " pid " << pid);
        if (pid < lim && chunked(pid) != chunked_formula(pid, x, 16)) FAIL("chunked differs: n=" << n << " pid " << pid);
      }
    }
  }
}

TEST_CASE("chunked dispatch inverse: bijection, chunks of C per chiplet, contiguous tail", "[chiplet][orders]") {
  for (const auto& t : topologies()) {
    for (long long tiles = 1; tiles <= 2048; ++tiles) {
      const auto p = make(1, tiles, t);
      check_remap<order::dispatch_inverse<order::chunked<1>>>(p);
      check_remap<order::dispatch_inverse<order::chunked<3>>>(p);
      check_remap<order::dispatch_inverse<order::chunked<64>>>(p);
      check_remap<order::dispatch_inverse<order::chunked<0>>>(p);
    }
    // Every chunk of 5 logical ids in the full rounds lies on one chiplet.
    const auto p = make(1, 997, t);
    const order::dispatch_inverse<order::chunked<5>> r(p);
    std::vector<int> chiplet_of_logical(997);
    for (long long id = 0; id < 997; ++id) chiplet_of_logical[static_cast<std::size_t>(r(id))] = chiplet::chiplet_of(t, id, 997);
    for (long long l = 0; l < r.head; ++l) REQUIRE(chiplet_of_logical[static_cast<std::size_t>(l)] == chiplet_of_logical[static_cast<std::size_t>(l / 5 * 5)]);
  }
}

TEST_CASE("tile maps are bijections on every shape up to 48x48", "[chiplet][orders]") {
  const auto t8 = topo(8, 38), t4 = topo(4, 38), t1 = topo(1, 38);
  for (long long tm = 1; tm <= 48; ++tm)
    for (long long tn = 1; tn <= 48; ++tn) {
      const auto p = make(tm, tn, t8);
      check_order<order::linear>(p);
      check_order<order::raster<axis::m>>(p);
      check_order<order::group_m<1>>(p);
      check_order<order::group_m<3>>(p);
      check_order<order::group_m<8>>(p);
      check_order<order::group_m<0>>(p);
      check_order<order::group_n<5>>(p);
      check_order<order::band<8>>(p);
      check_order<order::band<2>>(p);
      check_order<order::block2d<3, 5>>(p);
      check_order<order::block2d<>>(p);
      check_order<order::block2d<>>(make(tm, tn, t4));
      check_order<order::group_m<0>>(make(tm, tn, t1));
    }
}

TEST_CASE("composed orders: bijections, balanced per chiplet, on every topology", "[chiplet][orders]") {
  auto check_all = [](const order::problem& p) {
    check_order<order::chiplet_default>(p);
    check_order<order::compose<order::dispatch_inverse<order::chunked<64>>, order::group_m<8>>>(p);
    check_order<order::compose<order::dispatch_inverse<order::chunked<0>>, order::block2d<>>>(p);
    check_order<order::compose<order::identity, order::dispatch_inverse<order::contiguous>, order::band<8>>>(p);
    // Tiles per chiplet (the chiplet that computes each tile under the dispatch model).
    const order::chiplet_default o(p);
    const int x = p.topology.count;
    std::vector<long long> per(static_cast<std::size_t>(x), 0);
    for (long long id = 0; id < p.tiles(); ++id) {
      (void)o(id);
      ++per[static_cast<std::size_t>(chiplet::chiplet_of(p.topology, id, p.tiles()))];
    }
    long long lo = per[0], hi = per[0];
    for (long long v : per) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    if (hi - lo > 1) FAIL("tiles per chiplet differ by " << hi - lo);
  };
  for (const auto& t : topologies()) {
    for (long long tm = 1; tm <= 40; tm += 3)
      for (long long tn = 1; tn <= 40; ++tn) check_all(make(tm, tn, t));
  }
  // Random shapes up to 10^5 tiles.
  std::mt19937_64 rng(20260512);
  for (int i = 0; i < 12; ++i) {
    const long long tm = 1 + static_cast<long long>(rng() % 400);
    const long long tn = 1 + static_cast<long long>(rng() % (100000 / tm));
    for (const auto& t : {topo(8, 38), topo(4, 38), topo(2, 74, arch::dispatch_model::contiguous)}) check_all(make(tm, tn, t));
  }
}

TEST_CASE("orders are constant expressions; defaults per target", "[chiplet][orders]") {
  constexpr auto p = order::gemm_problem(8192, 8192, 8192, 256, 256, 64, 2, arch::gfx942::chiplets);
  STATIC_REQUIRE(p.tiles_m == 32 && p.tiles_n == 32 && p.k_steps == 128);
  constexpr order::chiplet_default o(p);
  // Block 1 runs on XCD 1 (round robin); XCD 1 owns logical ids [128, 256): rows 0-7 of the second half.
  STATIC_REQUIRE(o.id_of(o(1)) == 1);
  STATIC_REQUIRE(order::group_m<8>(p)(9) == order::tile{1, 1});
  STATIC_REQUIRE(std::is_same_v<order::default_for<arch::gfx942>, order::chiplet_default>);
  STATIC_REQUIRE(std::is_same_v<order::default_for<arch::sm90a>, order::group_m<0>>);
  STATIC_REQUIRE(std::is_same_v<order::default_for<arch::with_chiplets<arch::sm90a, 2, 66>>, order::chiplet_default>);
  // The auto group size follows the topology, not one chip's constants.
  // 38 resident tiles: G = 5, 6, 7, 8 all read G + ceil(38/G) = 13 panels per K step; ties go to the
  // taller band (fewer band boundaries inside one chiplet's range).
  CHECK(order::auto_group_size(p) == 8);
  const auto p950 = order::gemm_problem(8192, 8192, 8192, 256, 256, 64, 2, arch::gfx950::chiplets);
  CHECK(order::auto_group_size(p950) == 8);  // 32 resident: 8 + 4 = 12
  // A tile whose K steps fill the L2 shrinks the shared window: 256x256x512 fp32 is 512 KiB a panel.
  const auto fat = order::gemm_problem(8192, 8192, 8192, 256, 256, 512, 4, arch::gfx942::chiplets);
  CHECK(order::auto_group_size(fat) < 6);
  // Attention-like: the m operand is never shared, so the band covers as many m tiles as are resident.
  order::problem att = make(100, 64, topo(8, 38));
  att.a_step_bytes = 0;
  CHECK(order::auto_group_size(att) == 38);
}
