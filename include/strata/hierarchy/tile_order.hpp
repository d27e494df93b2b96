// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/tile_order.hpp -- composable tile orders: which output tile a block computes.
//
// A tile order maps a linear id in [0, tiles) -- the hardware block id of a grid with one block per
// tile -- to a tile (m, n) of a tiles_m x tiles_n problem, and back. Every order here is a bijection for
// every tile count, ragged tails included (property-tested exhaustively in test/chiplet/). Orders are
// types; an object is built from the runtime `order::problem` (tile counts, chiplet topology, bytes
// per K step) and is then a pair of pure constexpr functions:
//
//   Order o{problem};        // once, on the host (or per block: construction is cheap)
//   tile  t  = o(id);        // id -> (m, n)
//   long long id = o.id_of(t);
//
// Two kinds of parts compose:
//   id remaps (permutations of [0, tiles)):
//     identity
//     dispatch_inverse<contiguous>   hardware id -> logical id so that, under the dispatch model, each
//                                    chiplet owns one contiguous range of logical ids (research 2.3a)
//     dispatch_inverse<chunked<C>>   ... C consecutive logical ids per chiplet, round robin over chunks,
//                                    ragged tail contiguous per chiplet (research 2.3b, tail improved)
//   tile maps (id -> (m, n)):
//     raster<axis::n> (= linear)     row-major: n fastest
//     raster<axis::m>                column-major: m fastest
//     group<axis::m, G> (= group_m)  Triton/CUTLASS group swizzle: bands of G rows, m fastest in a band,
//     group<axis::n, G> (= group_n)  bands walked along n; the last band is shorter when G does not divide
//     band<MaxSwizzle>               CUTLASS's band swizzle: group along the longer dimension's partner
//                                    with a power-of-two size from CUTLASS's heuristic
//     block2d<BM, BN>                2D block swizzle: BM x BN blocks of tiles, blocks row-major,
//                                    tiles row-major inside a block; edge blocks are smaller
//
//   compose<R1, ..., Rk, Map>        Map(Rk(...R1(id)))
//
// A size of 0 (group_m<0>, block2d<0, 0>, chunked<0>) is sized at construction from the topology and
// the bytes per K step: see auto_group_size(). No constants of one chip.
//
// The default on every target is chiplet_default = compose<dispatch_inverse<contiguous>, group_m<0>>:
// first undo the dispatch model so each chiplet gets a contiguous run of the group-M order, then let the
// group swizzle make the blocks resident on one chiplet share A and B panels in that chiplet's L2. On a
// monolithic target the remap is the identity.
//
// The dispatch inverse is a *placement* heuristic built on a model (arch/dispatch.hpp): if the
// hardware dispatches differently, the order is still a bijection -- every tile is computed once -- and
// only locality suffers. It is meaningful for a grid of exactly `tiles` blocks; a persistent kernel's
// loop index should be placed from ctx.chiplet().index(), the hardware id, instead.
#pragma once

#include <type_traits>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/arch/dispatch.hpp"

namespace strata::order {

/// An output tile: row-block m, column-block n.
struct tile {
  long long m = 0, n = 0;
  friend constexpr bool operator==(const tile&, const tile&) = default;
};

enum class axis { m, n };

/// What an order is built from: the problem in tiles, the runtime topology, and the bytes one tile reads
/// per K step from the operand indexed by m (A for GEMM) and by n (B) -- these size the swizzles.
struct problem {
  long long tiles_m = 1, tiles_n = 1;
  arch::chiplet_topology topology{};
  long long a_step_bytes = 0;  // GEMM: tile_m * tile_k * element bytes
  long long b_step_bytes = 0;  // GEMM: tile_n * tile_k * element bytes
  long long k_steps = 1;       // K steps per tile
  int blocks_per_unit = 1;     // resident blocks per CU (occupancy)

  STRATA_HOST_DEVICE constexpr long long tiles() const { return tiles_m * tiles_n; }
};

/// The order problem of a GEMM C[M x N] += A[M x K] B[K x N] cut into tile_m x tile_n x tile_k tiles.
STRATA_HOST_DEVICE constexpr problem gemm_problem(long long m, long long n, long long k, int tile_m, int tile_n,
                                                  int tile_k, int element_bytes,
                                                  const arch::chiplet_topology& topo, int blocks_per_unit = 1) {
  problem p;
  p.tiles_m = (m + tile_m - 1) / tile_m;
  p.tiles_n = (n + tile_n - 1) / tile_n;
  p.topology = topo;
  p.a_step_bytes = static_cast<long long>(tile_m) * tile_k * element_bytes;
  p.b_step_bytes = static_cast<long long>(tile_n) * tile_k * element_bytes;
  p.k_steps = (k + tile_k - 1) / tile_k;
  p.blocks_per_unit = blocks_per_unit;
  return p;
}

namespace detail {
STRATA_HOST_DEVICE constexpr long long cdiv(long long a, long long b) { return (a + b - 1) / b; }
STRATA_HOST_DEVICE constexpr long long lmin(long long a, long long b) { return a < b ? a : b; }
STRATA_HOST_DEVICE constexpr long long lmax(long long a, long long b) { return a < b ? b : a; }

/// Chiplets the dispatch model spreads blocks over (1 when monolithic).
STRATA_HOST_DEVICE constexpr int chiplets(const problem& p) { return chiplet::detail::model_count(p.topology); }

/// Blocks resident at once on one chiplet, i.e. sharing one L2: CUs per chiplet x occupancy, but no
/// more than the chiplet's share of the tiles.
STRATA_HOST_DEVICE constexpr long long resident_per_chiplet(const problem& p) {
  const long long w = static_cast<long long>(p.topology.units_per_chiplet > 0 ? p.topology.units_per_chiplet : 1) *
                      (p.blocks_per_unit > 0 ? p.blocks_per_unit : 1);
  return lmax(1, lmin(w, cdiv(p.tiles(), chiplets(p))));
}
}  // namespace detail

/// The group size along `a` that the auto-sized swizzles use. The W blocks resident on one chiplet
/// (units_per_chiplet x blocks_per_unit) cover about G x ceil(W / G) tiles; per K step they read
/// G panels of the grouped operand and ceil(W / G) of the other. G minimizes those bytes,
///     G * grouped_step_bytes + ceil(W / G) * other_step_bytes,
/// and the result must fit the chiplet's L2 with room for a second K step in flight; if it does not,
/// W is shrunk until it does (fewer co-resident tiles can share). With no byte counts given, both
/// operands count equally (G ~ sqrt(W)). Ties go to the larger G: a chiplet's contiguous range then
/// crosses fewer band boundaries, where the resident patch splits in two. Clamped to [1, tiles along a].
STRATA_HOST_DEVICE constexpr long long auto_group_size(const problem& p, axis a = axis::m) {
  const long long extent = a == axis::m ? p.tiles_m : p.tiles_n;
  long long grouped = a == axis::m ? p.a_step_bytes : p.b_step_bytes;
  long long other = a == axis::m ? p.b_step_bytes : p.a_step_bytes;
  if (grouped <= 0 && other <= 0) grouped = other = 1;
  const long long l2 = static_cast<long long>(p.topology.l2_bytes_per_chiplet);
  long long w = detail::resident_per_chiplet(p);
  for (;;) {
    long long best_g = 1, best = -1;
    for (long long g = 1; g <= detail::lmin(w, extent); ++g) {
      const long long bytes = g * grouped + detail::cdiv(w, g) * other;
      if (best < 0 || bytes <= best) best = bytes, best_g = g;  // ties: the taller band
    }
    // Two K steps of the working set in L2: the step being read and the next one being fetched.
    if (l2 <= 0 || w == 1 || 2 * best <= l2) return detail::lmax(1, best_g);
    w = w * 3 / 4 > 0 ? w * 3 / 4 : 1;
  }
}

// ---- id remaps ------------------------------------------------------------------------------------

/// The identity remap.
struct identity {
  identity() = default;
  STRATA_HOST_DEVICE constexpr explicit identity(const problem&) {}
  STRATA_HOST_DEVICE constexpr long long operator()(long long id) const { return id; }
  STRATA_HOST_DEVICE constexpr long long inverse(long long id) const { return id; }
};

/// Variant tags for dispatch_inverse.
struct contiguous {};
template <int C = 0>
struct chunked {
  static_assert(C >= 0, "chunked<C>: the chunk size is a number of tiles (0: sized from the topology)");
  static constexpr int chunk = C;
};

template <class Variant>
struct dispatch_inverse;

/// Hardware id -> logical id such that the k-th block of chiplet c (under the dispatch model) gets
/// logical id start(c) + k, start(c) = c * floor(T/X) + min(c, T % X): chiplet c owns one contiguous
/// range, the ranges tile [0, T) for any T. For round robin this is research formula 2.3a
/// (AITER remap_xcd / CK RemapXCD); for the contiguous model and monolithic targets it is the identity.
template <>
struct dispatch_inverse<contiguous> {
  arch::chiplet_topology topo{};
  long long tiles = 0;

  dispatch_inverse() = default;
  STRATA_HOST_DEVICE constexpr explicit dispatch_inverse(const problem& p) : topo(p.topology), tiles(p.tiles()) {}

  STRATA_HOST_DEVICE constexpr long long operator()(long long id) const {
    const chiplet::placement where = chiplet::locate(topo, id, tiles);
    return chiplet::first_block_of_range(topo, where.chiplet, tiles) + where.rank;
  }
  STRATA_HOST_DEVICE constexpr long long inverse(long long logical) const {
    arch::chiplet_topology ranges = topo;  // logical ids are laid out as the contiguous model lays blocks
    if (ranges.dispatch != arch::dispatch_model::monolithic) ranges.dispatch = arch::dispatch_model::contiguous;
    const chiplet::placement where = chiplet::locate(ranges, logical, tiles);
    return chiplet::block_of(topo, where.chiplet, where.rank, tiles);
  }
};

/// Hardware id -> logical id in chunks: the k-th block of chiplet c gets, for k < F*C (F = full rounds,
/// floor(T / (X*C))), logical id (k / C) * X*C + c*C + k % C -- C consecutive ids per chiplet, round
/// robin over chunks (research formula 2.3b, HipKittens/TileLang chiplet_transform_chunked). The
/// published form leaves the last T - F*X*C ids where they are (spread over every chiplet); here they
/// are laid out contiguously per chiplet like dispatch_inverse<contiguous>, so the tail keeps locality.
/// C = 0: one chunk per wave, C = blocks resident per chiplet.
template <int C>
struct dispatch_inverse<chunked<C>> {
  arch::chiplet_topology topo{};
  long long tiles = 0, chunk = 1, head = 0;  // head: the ids covered by full rounds, F * X * C

  dispatch_inverse() = default;
  STRATA_HOST_DEVICE constexpr explicit dispatch_inverse(const problem& p)
      : topo(p.topology), tiles(p.tiles()), chunk(C > 0 ? C : detail::resident_per_chiplet(p)) {
    const long long x = detail::chiplets(p);
    head = tiles / (x * chunk) * x * chunk;
  }

  STRATA_HOST_DEVICE constexpr long long operator()(long long id) const {
    const long long x = chiplet::detail::model_count(topo);
    const chiplet::placement where = chiplet::locate(topo, id, tiles);
    const long long full = head / x;  // ranks per chiplet inside the full rounds
    if (where.rank < full)
      return where.rank / chunk * x * chunk + where.chiplet * chunk + where.rank % chunk;
    const long long tail = tiles - head;
    return head + chiplet::first_block_of_range(topo, where.chiplet, tail) + (where.rank - full);
  }
  STRATA_HOST_DEVICE constexpr long long inverse(long long logical) const {
    const long long x = chiplet::detail::model_count(topo);
    const long long full = head / x;
    int c = 0;
    long long k = 0;
    if (logical < head) {
      const long long round = logical / (x * chunk), in = logical % (x * chunk);
      c = static_cast<int>(in / chunk);
      k = round * chunk + in % chunk;
    } else {
      arch::chiplet_topology ranges = topo;
      if (ranges.dispatch != arch::dispatch_model::monolithic) ranges.dispatch = arch::dispatch_model::contiguous;
      const chiplet::placement where = chiplet::locate(ranges, logical - head, tiles - head);
      c = where.chiplet;
      k = full + where.rank;
    }
    return chiplet::block_of(topo, c, k, tiles);
  }
};

// ---- tile maps ------------------------------------------------------------------------------------

/// Raster order: the `Fast` coordinate varies fastest. raster<axis::n> is row-major.
template <axis Fast>
struct raster {
  long long tiles_m = 1, tiles_n = 1;

  raster() = default;
  STRATA_HOST_DEVICE constexpr explicit raster(const problem& p) : tiles_m(p.tiles_m), tiles_n(p.tiles_n) {}

  STRATA_HOST_DEVICE constexpr tile operator()(long long id) const {
    if constexpr (Fast == axis::n) return {id / tiles_n, id % tiles_n};
    else return {id % tiles_m, id / tiles_m};
  }
  STRATA_HOST_DEVICE constexpr long long id_of(tile t) const {
    if constexpr (Fast == axis::n) return t.m * tiles_n + t.n;
    else return t.n * tiles_m + t.m;
  }
};

using linear = raster<axis::n>;

namespace detail {
/// Group swizzle on an (outer x inner) grid of tiles: bands of g along `inner`... expressed on generic
/// coordinates (u grouped, v walked): id -> (u, v). Bands of g values of u; inside a band u is fastest;
/// the last band has extent_u % g values when g does not divide extent_u.
struct banded {
  long long extent_u = 1, extent_v = 1, g = 1;
  STRATA_HOST_DEVICE constexpr void map(long long id, long long& u, long long& v) const {
    const long long per_band = g * extent_v;
    const long long band = id / per_band, in = id % per_band;
    const long long first = band * g;
    const long long size = lmin(g, extent_u - first);
    u = first + in % size;
    v = in / size;
  }
  STRATA_HOST_DEVICE constexpr long long unmap(long long u, long long v) const {
    const long long band = u / g, first = band * g;
    const long long size = lmin(g, extent_u - first);
    return band * g * extent_v + v * size + (u - first);
  }
};
}  // namespace detail

/// Group swizzle (Triton GROUP_SIZE_M, CUTLASS swizzle): bands of G tiles along `A`, A fastest inside a
/// band, bands walked along the other axis. G = 0: auto_group_size(problem, A).
template <axis A, int G = 0>
struct group {
  static_assert(G >= 0, "group<A, G>: the group size is a number of tiles (0: sized from the topology)");
  detail::banded b{};

  group() = default;
  STRATA_HOST_DEVICE constexpr explicit group(const problem& p) {
    const long long g = G > 0 ? G : auto_group_size(p, A);
    b.extent_u = A == axis::m ? p.tiles_m : p.tiles_n;
    b.extent_v = A == axis::m ? p.tiles_n : p.tiles_m;
    b.g = detail::lmax(1, detail::lmin(g, b.extent_u));
  }
  STRATA_HOST_DEVICE constexpr long long group_size() const { return b.g; }

  STRATA_HOST_DEVICE constexpr tile operator()(long long id) const {
    long long u = 0, v = 0;
    b.map(id, u, v);
    if constexpr (A == axis::m) return {u, v};
    else return {v, u};
  }
  STRATA_HOST_DEVICE constexpr long long id_of(tile t) const {
    if constexpr (A == axis::m) return b.unmap(t.m, t.n);
    else return b.unmap(t.n, t.m);
  }
};

template <int G = 0>
using group_m = group<axis::m, G>;
template <int G = 0>
using group_n = group<axis::n, G>;

/// CUTLASS's band swizzle (sm90 tile scheduler): the raster direction and a power-of-two band from the
/// problem shape alone. Bands of 2^s tiles along the shorter-walk axis: when tiles_n > tiles_m the bands
/// run along n and are walked along m, otherwise along m walked along n; s = 3, 2, 1, 0 when
/// min(tiles_m, tiles_n) >= 6, 3, 2 (and MaxSwizzle >= 8, 4, 2). Topology-blind by design: it is the
/// monolithic-L2 baseline.
template <int MaxSwizzle = 8>
struct band {
  detail::banded b{};
  bool along_n = false;  // bands of n tiles (walked along m)

  band() = default;
  STRATA_HOST_DEVICE constexpr explicit band(const problem& p) {
    const long long lo = detail::lmin(p.tiles_m, p.tiles_n);
    const int s = (MaxSwizzle >= 8 && lo >= 6) ? 3 : (MaxSwizzle >= 4 && lo >= 3) ? 2 : (MaxSwizzle >= 2 && lo >= 2) ? 1 : 0;
    along_n = p.tiles_n > p.tiles_m;
    b.extent_u = along_n ? p.tiles_n : p.tiles_m;
    b.extent_v = along_n ? p.tiles_m : p.tiles_n;
    b.g = detail::lmin(1LL << s, b.extent_u);
  }
  STRATA_HOST_DEVICE constexpr long long band_size() const { return b.g; }

  STRATA_HOST_DEVICE constexpr tile operator()(long long id) const {
    long long u = 0, v = 0;
    b.map(id, u, v);
    return along_n ? tile{v, u} : tile{u, v};
  }
  STRATA_HOST_DEVICE constexpr long long id_of(tile t) const { return along_n ? b.unmap(t.n, t.m) : b.unmap(t.m, t.n); }
};

/// 2D block swizzle: the tiles are cut into BM x BN blocks (edge blocks smaller), blocks are walked
/// row-major, tiles row-major inside a block. Consecutive ids stay inside one BM x BN patch, so a run
/// of W ids reads about BM + BN panels per K step whatever the problem's aspect. BM = BN = 0: BM from
/// auto_group_size(), BN = ceil(W / BM) for W blocks resident per chiplet.
template <int BM = 0, int BN = 0>
struct block2d {
  static_assert((BM == 0) == (BN == 0) && BM >= 0 && BN >= 0,
                "block2d<BM, BN>: give both block sides in tiles, or neither (0, 0: sized from the topology)");
  long long tiles_m = 1, tiles_n = 1, bm = 1, bn = 1;

  block2d() = default;
  STRATA_HOST_DEVICE constexpr explicit block2d(const problem& p) : tiles_m(p.tiles_m), tiles_n(p.tiles_n) {
    if constexpr (BM > 0) {
      bm = BM, bn = BN;
    } else {
      bm = auto_group_size(p, axis::m);
      bn = detail::cdiv(detail::resident_per_chiplet(p), bm);
    }
    bm = detail::lmax(1, detail::lmin(bm, tiles_m));
    bn = detail::lmax(1, detail::lmin(bn, tiles_n));
  }

  STRATA_HOST_DEVICE constexpr tile operator()(long long id) const {
    const long long row = id / (bm * tiles_n), in_row = id % (bm * tiles_n);  // full block rows first
    const long long h = detail::lmin(bm, tiles_m - row * bm);                 // this block row's height
    const long long col = in_row / (h * bn), in_block = in_row % (h * bn);
    const long long w = detail::lmin(bn, tiles_n - col * bn);                 // this block's width
    return {row * bm + in_block / w, col * bn + in_block % w};
  }
  STRATA_HOST_DEVICE constexpr long long id_of(tile t) const {
    const long long row = t.m / bm, col = t.n / bn;
    const long long h = detail::lmin(bm, tiles_m - row * bm);
    const long long w = detail::lmin(bn, tiles_n - col * bn);
    return row * bm * tiles_n + col * h * bn + (t.m - row * bm) * w + (t.n - col * bn);
  }
};

// ---- composition ----------------------------------------------------------------------------------

template <class T>
concept id_remap = requires(const T r, long long i, const problem& p) {
  T(p);
  { r(i) } -> std::convertible_to<long long>;
  { r.inverse(i) } -> std::convertible_to<long long>;
};

template <class T>
concept tile_map = requires(const T o, long long i, tile t, const problem& p) {
  T(p);
  { o(i) } -> std::same_as<tile>;
  { o.id_of(t) } -> std::convertible_to<long long>;
};

template <class... Parts>
struct compose;

/// compose<Map>: the map itself.
template <class Map>
struct compose<Map> : Map {
  static_assert(tile_map<Map>,
                "compose<..., Map>: the last part must map ids to tiles (raster, group, band, block2d), not "
                "remap ids");
  compose() = default;
  STRATA_HOST_DEVICE constexpr explicit compose(const problem& p) : Map(p) {}
};

/// compose<R, Rest...>: apply the id remap R, then compose<Rest...>.
template <class R, class Next, class... Rest>
struct compose<R, Next, Rest...> {
  static_assert(id_remap<R>,
                "compose<Parts...>: every part but the last must remap ids (identity, dispatch_inverse<...>)");
  R remap{};
  compose<Next, Rest...> rest{};

  compose() = default;
  STRATA_HOST_DEVICE constexpr explicit compose(const problem& p) : remap(p), rest(p) {}

  STRATA_HOST_DEVICE constexpr tile operator()(long long id) const { return rest(remap(id)); }
  STRATA_HOST_DEVICE constexpr long long id_of(tile t) const { return remap.inverse(rest.id_of(t)); }
};

/// The chiplet-aware default: undo the dispatch model, then a group-M swizzle sized from the topology.
using chiplet_default = compose<dispatch_inverse<contiguous>, group_m<0>>;

/// The default order for a target: chiplet_default where the target has chiplets, else group_m<0>.
template <arch::target Target>
using default_for = std::conditional_t<(Target::chiplets.count > 1), chiplet_default, group_m<0>>;

}  // namespace strata::order
