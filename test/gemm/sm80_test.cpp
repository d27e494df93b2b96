// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sm80 configurations (mma.sync m16n8k16 / m16n8k8 tf32 / m16n8k32 s8, cp.async multistage) run
// as arch::sm80 on the emulator with the atoms' exact fragment layouts; fp8 e4m3 / e5m2 as sm90a.
#include "support.hpp"

using namespace strata_test;
using namespace strata_test::gemm;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using strata::f16;

TEST_CASE("gemm sm80 bf16 -> bf16, 16-byte cp.async and 2-byte plain copies", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K2 = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>;
  for (const auto& c : shapes()) check<K2>(c);
  // 16-byte rows: leading dimensions a multiple of 8 elements.
  using K16 = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16>;
  check<K16>({.m = 24, .n = 40, .k = 72, .beta = 0.5f, .seed = 21});
  check<K16>({.m = 8, .n = 16, .k = 48, .a = sg::layout::col_major, .b = sg::layout::col_major, .pad = 8, .seed = 22});
}

TEST_CASE("gemm sm80 tiles compiled for A row-major, B column-major (operand_orders::a_row_b_col)", "[gemm]") {
  // What strata::gemm runs on CUDA for that layout with 16-byte rows: every tile with the layouts fixed
  // at compile time and, for the 256-thread tile, each thread's copies unrolled.
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using KL = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16, sg::operand_orders::a_row_b_col>;
  using KM = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16, sg::operand_orders::a_row_b_col>;
  using KS = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_skinny, 16, sg::operand_orders::a_row_b_col>;
  using KA = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16>;  // the same tile, layouts read at run time
  const auto tn = [](case_t c) {
    c.a = sg::layout::row_major;
    c.b = sg::layout::col_major;
    return c;
  };
  // Edges in every direction (M, N and K not tile multiples), K = 0, padded leading dimensions, batch,
  // split-K (parallel and serial) and stream-K. Leading dimensions stay multiples of 8 elements (the
  // 16-byte rows these instantiations require; the emulator reports a misaligned cp.async).
  check<KL>(tn({.m = 130, .n = 70, .k = 72, .beta = 0.5f, .seed = 71}));
  check<KL>(tn({.m = 257, .n = 129, .k = 40, .pad = 8, .seed = 72}));
  check<KL>(tn({.m = 5, .n = 3, .k = 0, .beta = 1.f, .seed = 73}));
  check<KL>(tn({.m = 140, .n = 20, .k = 200, .batch = 2, .splits = 3, .seed = 74}));
  check<KL>(tn({.m = 131, .n = 33, .k = 96, .splits = 2, .serial = true, .seed = 75}));
  check<KL>(tn({.m = 129, .n = 130, .k = 64, .stream_k = 2, .seed = 76}));
  check<KM>(tn({.m = 67, .n = 65, .k = 33, .d = sg::layout::col_major, .beta = 0.5f, .pad = 7, .seed = 77}));
  check<KM>(tn({.m = 1, .n = 8, .k = 8, .seed = 78}));
  check<KS>(tn({.m = 13, .n = 70, .k = 136, .beta = 0.5f, .seed = 80}));
  check<KS>(tn({.m = 1, .n = 1, .k = 8, .splits = 2, .seed = 81}));
  // Bit for bit the any-order kernel's result where K is a multiple of tile_k: same tiles, same
  // fragments, same summation order. With a K residue the fixed-order tiles add the partial K step
  // first (kernel.hpp, use_streams), so only the tolerance check above holds there.
  const case_t same = tn({.m = 150, .n = 90, .k = 96, .beta = 0.5f, .pad = 8, .seed = 79});
  REQUIRE(check<KL>(same) == check<KA>(same));
  // Residue-first order, exercised at every split boundary: K = 8 (one partial step only), K one past
  // a tile, split-K whose last split holds the residue, and stream-K segments ending in it.
  check<KL>(tn({.m = 129, .n = 65, .k = 8, .seed = 82}));
  check<KL>(tn({.m = 129, .n = 65, .k = 40, .seed = 83}));
  check<KL>(tn({.m = 64, .n = 64, .k = 104, .splits = 3, .seed = 84}));
  check<KL>(tn({.m = 64, .n = 64, .k = 104, .splits = 4, .serial = true, .seed = 85}));
  check<KL>(tn({.m = 200, .n = 140, .k = 168, .stream_k = 3, .seed = 86}));
  check<KM>(tn({.m = 65, .n = 66, .k = 200, .splits = 2, .seed = 87}));
  // The 128 x 256 tile (configs::sm80_wide: 64 x 64 warp tiles, double-buffered fragments), what the
  // entry runs for large outputs: edges in M, N and K, K = 0, a residue-only K, batch. It has no
  // split-K form, and says so.
  using KW = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_wide, 16, sg::operand_orders::a_row_b_col>;
  check<KW>(tn({.m = 260, .n = 520, .k = 72, .beta = 0.5f, .seed = 88}));
  check<KW>(tn({.m = 129, .n = 257, .k = 0, .beta = 1.f, .seed = 89}));
  check<KW>(tn({.m = 3, .n = 300, .k = 8, .pad = 8, .seed = 90}));
  check<KW>(tn({.m = 140, .n = 260, .k = 136, .batch = 2, .seed = 91}));
  {
    const sg::operand<const bf16> a{nullptr, 8, sg::layout::row_major, 0}, b{nullptr, 8, sg::layout::col_major, 0};
    const sg::operand<bf16> d{nullptr, 8, sg::layout::row_major, 0};
    REQUIRE_THROWS_WITH(KW::make_params({8, 8, 64, 1}, a, b, d, E::make_params({.alpha = 1.f}, {}), 2),
                        Catch::Contains("'splits'") && Catch::Contains("split-K"));
  }
  using KWh = cfg::sm80<arch::sm80, f16, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>, cfg::sm80_wide, 16,
                        sg::operand_orders::a_row_b_col>;
  check<KWh>(tn({.m = 130, .n = 513, .k = 40, .beta = 0.5f, .seed = 92}));
}

namespace {
// The large, medium and skinny tiles compiled for operand orders O (A la, B lb), what strata::gemm runs
// on CUDA for those orders with 16-byte rows (copy streams, copy::stream_edge::columns for the operand
// whose rows run along M or N): against the reference over edges in M, N and K, K = 0, batch, padded
// leading dimensions, split-K (parallel and serial) and stream-K, and bit for bit against the
// any-order tile where K is a multiple of tile_k (with a residue, the streamed tiles add it first). Each
// shape keeps M, N and K equal modulo 8 and pads them to a multiple of 8, so that every leading
// dimension holds 16-byte rows whichever dimension it runs along.
template <sg::operand_orders O>
void check_fixed_orders(sg::layout la, sg::layout lb, std::uint64_t seed) {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using KL = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large_no_split, 16, O>;  // the entry's large tile for O
  using KM = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium, 16, O>;
  using KS = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_skinny, 16, O>;
  using KA = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16>;
  using KSA = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_skinny, 16>;
  static_assert(KL::fixed_orders && !KL::k_major_orders && KL::use_streams && !KL::swizzled_stages);
  const auto with = [&](case_t c) {
    c.a = la;
    c.b = lb;
    c.seed += seed;
    return c;
  };
  check<KL>(with({.m = 130, .n = 74, .k = 66, .beta = 0.5f, .pad = 6, .seed = 1}));
  check<KL>(with({.m = 257, .n = 129, .k = 41, .pad = 7, .seed = 2}));
  check<KL>(with({.m = 8, .n = 16, .k = 0, .beta = 1.f, .pad = 8, .seed = 3}));
  check<KL>(with({.m = 140, .n = 20, .k = 196, .batch = 2, .pad = 4, .seed = 4}));
  check<KM>(with({.m = 140, .n = 20, .k = 196, .batch = 2, .pad = 4, .splits = 3, .seed = 4}));
  check<KM>(with({.m = 131, .n = 35, .k = 99, .pad = 5, .splits = 2, .serial = true, .seed = 5}));
  check<KL>(with({.m = 129, .n = 129, .k = 65, .pad = 7, .stream_k = 2, .seed = 6}));
  check<KM>(with({.m = 67, .n = 67, .k = 35, .d = sg::layout::col_major, .beta = 0.5f, .pad = 5, .seed = 7}));
  check<KM>(with({.m = 1, .n = 9, .k = 17, .pad = 7, .seed = 8}));
  check<KS>(with({.m = 13, .n = 69, .k = 133, .beta = 0.5f, .pad = 3, .seed = 9}));
  check<KS>(with({.m = 1, .n = 1, .k = 9, .pad = 7, .splits = 2, .seed = 10}));
  const case_t same = with({.m = 152, .n = 88, .k = 96, .beta = 0.5f, .pad = 8, .seed = 11});
  REQUIRE(check<KL>(same) == check<KA>(same));
  const case_t same_skinny = with({.m = 16, .n = 72, .k = 128, .pad = 8, .seed = 12});
  // Residue-first order at split and stream-K boundaries, M and N edges inside a 16-byte vector.
  check<KL>(with({.m = 129, .n = 65, .k = 9, .pad = 7, .seed = 13}));
  check<KM>(with({.m = 66, .n = 66, .k = 106, .pad = 6, .splits = 3, .seed = 14}));
  check<KL>(with({.m = 201, .n = 137, .k = 169, .pad = 7, .stream_k = 3, .seed = 15}));
  check<KM>(with({.m = 65, .n = 73, .k = 201, .pad = 7, .splits = 2, .serial = true, .seed = 16}));
  REQUIRE(check<KS>(same_skinny) == check<KSA>(same_skinny));
}
}  // namespace

TEST_CASE("gemm sm80 tiles compiled for the other operand orders (a_row_b_row, a_col_b_col, a_col_b_row)", "[gemm]") {
  using sg::layout;
  SECTION("A row-major, B row-major (y = x W with W stored (in, out))") {
    check_fixed_orders<sg::operand_orders::a_row_b_row>(layout::row_major, layout::row_major, 300);
  }
  SECTION("A column-major, B column-major") {
    check_fixed_orders<sg::operand_orders::a_col_b_col>(layout::col_major, layout::col_major, 400);
  }
  SECTION("A column-major, B row-major") {
    check_fixed_orders<sg::operand_orders::a_col_b_row>(layout::col_major, layout::row_major, 500);
  }
}

TEST_CASE("strata::gemm CUDA dispatch: each pair of operand orders with 16-byte rows takes its fixed-order tile", "[gemm]") {
  using cuda = sg::detail::platform<sg::detail::platform_kind::cuda>;
  using sg::operand_orders;
  for (const operand_orders o : {operand_orders::a_row_b_col, operand_orders::a_row_b_row, operand_orders::a_col_b_col,
                                 operand_orders::a_col_b_row}) {
    for (const int m : {9, 100, 300}) {
      INFO(sg::name_of(o) << " M " << m);
      operand_orders got = operand_orders::any;
      const auto picked = [&](auto* tag) { got = std::remove_pointer_t<decltype(tag)>::orders; };
      sg::detail::dispatch<cuda, bf16, bf16, true, true>(m, picked, {.rows16 = true, .orders = o});
      REQUIRE(got == o);
      // An explicit split-K: the fixed-order tile still, the medium one where the large one has no
      // split-K form (orders along M or N, configs::sm80_large_no_split).
      int tile_m = 0;
      bool splits = false;
      sg::detail::dispatch<cuda, bf16, bf16, true, true>(m, [&](auto* tag) {
        using K = std::remove_pointer_t<decltype(tag)>;
        got = K::orders;
        tile_m = K::tiles.tile_m;
        splits = K::tiles.split_k;
      }, {.rows16 = true, .orders = o, .split = true});
      REQUIRE(got == o);
      REQUIRE(splits);
      REQUIRE(tile_m == (m <= 16 ? 16 : m <= 128 || o != operand_orders::a_row_b_col ? 64 : 128));
      // Rows that are not 16-byte multiples, and stream-K, take the any-order tiles.
      got = o;
      sg::detail::dispatch<cuda, bf16, bf16, true, true>(m, picked, {.rows16 = false, .orders = o});
      REQUIRE(got == operand_orders::any);
      got = o;
      sg::detail::dispatch<cuda, bf16, bf16, true, true>(m, picked, {.rows16 = true, .stream_k = true, .orders = o});
      REQUIRE(got == operand_orders::any);
    }
  }
  // int8 in every pair of orders: the 128 x 128 tile without its split-K form (its serial running sum
  // spilled on sm_80), so an explicit split-K takes the medium tile.
  for (const operand_orders o : {operand_orders::a_row_b_col, operand_orders::a_row_b_row}) {
    INFO("int8 " << sg::name_of(o));
    int tile_m = 0;
    bool splits = true;
    const auto record = [&](auto* tag) {
      using K = std::remove_pointer_t<decltype(tag)>;
      tile_m = K::tiles.tile_m;
      splits = K::tiles.split_k;
    };
    sg::detail::dispatch<cuda, std::int8_t, std::int32_t, true, true>(300, record, {.rows16 = true, .orders = o});
    REQUIRE((tile_m == 128 && !splits));
    sg::detail::dispatch<cuda, std::int8_t, std::int32_t, true, true>(300, record,
                                                                   {.rows16 = true, .orders = o, .split = true});
    REQUIRE((tile_m == 64 && splits));
  }
  REQUIRE(sg::orders_of(sg::layout::row_major, sg::layout::col_major) == operand_orders::a_row_b_col);
  REQUIRE(sg::orders_of(sg::layout::row_major, sg::layout::row_major) == operand_orders::a_row_b_row);
  REQUIRE(sg::orders_of(sg::layout::col_major, sg::layout::col_major) == operand_orders::a_col_b_col);
  REQUIRE(sg::orders_of(sg::layout::col_major, sg::layout::row_major) == operand_orders::a_col_b_row);
}

TEST_CASE("strata::gemm CUDA dispatch, bf16: A row-major x B column-major takes the fixed-order tiles", "[gemm]") {
  // sg::detail::run with the CUDA platform picks what a CUDA build runs (the sm80 tiles, as sm80 here):
  // for this layout with 16-byte rows, the operand_orders::a_row_b_col wide (128 x 256: M >= 256,
  // N >= 512 and a tile per unit, gemm.hpp's wide_output), large (M > 128), medium and skinny
  // (M <= 16) tiles; the other layouts with 16-byte rows their own fixed-order tiles; odd leading
  // dimensions and stream-K the any-order ones.
  using cuda = sg::detail::platform<sg::detail::platform_kind::cuda>;
  using sg::layout;
  struct gemm_case {
    int m, n, k;
    layout la, lb;
    int pad;
    bool stream_k;
  };
  for (const gemm_case c : {gemm_case{150, 70, 72, layout::row_major, layout::col_major, 0, false},
                            gemm_case{300, 600, 72, layout::row_major, layout::col_major, 0, false},  // 128 x 256
                            gemm_case{9, 40, 88, layout::row_major, layout::col_major, 0, false},
                            gemm_case{40, 33, 50, layout::row_major, layout::col_major, 8, false},
                            gemm_case{150, 70, 72, layout::col_major, layout::row_major, 0, false},
                            gemm_case{152, 72, 64, layout::col_major, layout::row_major, 0, false},
                            gemm_case{150, 70, 62, layout::row_major, layout::row_major, 2, false},
                            gemm_case{13, 40, 85, layout::col_major, layout::col_major, 3, false},
                            gemm_case{140, 40, 64, layout::row_major, layout::col_major, 3, false},
                            gemm_case{140, 40, 64, layout::row_major, layout::col_major, 0, true}}) {
    INFO(c.m << "x" << c.n << "x" << c.k << " pad " << c.pad << " stream-K " << c.stream_k);
    strata::stream s;
    const long long lda = ld_of(c.la, c.m, c.k, c.pad), ldb = ld_of(c.lb, c.k, c.n, c.pad);
    const auto ha = random_values<bf16>(size_of(c.la, c.m, c.k, c.pad), 91);
    const auto hb = random_values<bf16>(size_of(c.lb, c.k, c.n, c.pad), 92);
    auto da = to_device(s, ha);
    auto db = to_device(s, hb);
    auto dd = poisoned<bf16>(s, std::size_t(c.m) * c.n, bf16(-99.f));
    const sg::matrix a{da.data(), c.m, c.k, lda, c.la, strata::dtype::bf16}, b{db.data(), c.k, c.n, ldb, c.lb, strata::dtype::bf16},
        d{dd.data(), c.m, c.n, c.n, layout::row_major, strata::dtype::bf16};
    sg::options o{.stream_k = c.stream_k, .stream_k_blocks = 3};
    strata::device_buffer<std::uint8_t> work(sg::workspace_size(d, o) + 1);
    o.work = {work.data(), work.size()};
    sg::detail::run<cuda, bf16, bf16>(s, a, b, d, d, o, 4);
    const auto out = to_host(s, dd);
    const auto ref = sg::reference::product(c.m, c.n, c.k, ha.data(), lda, c.la, hb.data(), ldb, c.lb);
    const double tol = sg::reference::tolerance(c.k, mantissa_bits<bf16>());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double scale = std::max({std::abs(ref[i]), c.k * 0.25, 1.0});
      INFO("D element " << i << " = " << as_double(out[i]) << ", want " << ref[i]);
      REQUIRE(std::abs(as_double(out[i]) - ref[i]) / scale <= tol);
    }
  }
}

TEST_CASE("strata::gemm CUDA tile choice: the 128 x 256 tile on large outputs, 64 x 64 where 128 x 128 leaves SMs idle", "[gemm]") {
  namespace d = sg::detail;
  // An H200 has 132 SMs. 1024^3: 64 tiles of 128 x 128, so the medium tile (256 tiles), not 8-way split-K.
  REQUIRE(d::few_large_tiles(1024, 1024, 132));
  REQUIRE_FALSE(d::few_large_tiles(2048, 2048, 132));  // 256 tiles
  REQUIRE_FALSE(d::few_large_tiles(1536, 1408, 132));  // 12 x 11 = 132: exactly one per SM
  // The wide tile: at least 256 x 512, a tile per SM, no explicit split-K.
  REQUIRE(d::wide_output(4096, 4096, 132, 0));
  REQUIRE(d::wide_output(4096, 4096, 132, 1));
  REQUIRE_FALSE(d::wide_output(4096, 4096, 132, 4));  // asked for 4 splits: the wide tile has none
  REQUIRE_FALSE(d::wide_output(1024, 1024, 132, 0));  // 8 x 4 = 32 tiles
  REQUIRE_FALSE(d::wide_output(255, 1 << 20, 1, 0));
  REQUIRE_FALSE(d::wide_output(1 << 20, 511, 1, 0));
  REQUIRE(d::wide_output(300, 600, 4, 0));  // the dispatch test's case above
}

TEST_CASE("gemm: a kernel compiled for fixed operand orders refuses other layouts", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using KL = cfg::sm80<arch::sm80, bf16, E, cfg::sm80_large, 16, sg::operand_orders::a_row_b_col>;
  const sg::operand<const bf16> row{nullptr, 8, sg::layout::row_major, 0}, col{nullptr, 8, sg::layout::col_major, 0};
  const sg::operand<bf16> d{nullptr, 8, sg::layout::row_major, 0};
  const auto ep_params = E::make_params({.alpha = 1.f}, {});
  REQUIRE_THROWS_WITH(KL::make_params({8, 8, 8, 1}, col, col, d, ep_params),
                      Catch::Contains("make_params") && Catch::Contains("'a'") && Catch::Contains("a_row_b_col"));
  REQUIRE_THROWS_WITH(KL::make_params({8, 8, 8, 1}, row, row, d, ep_params),
                      Catch::Contains("'b'") && Catch::Contains("column-major"));
  REQUIRE_NOTHROW(KL::make_params({8, 8, 8, 1}, row, col, d, ep_params));
}

TEST_CASE("gemm sm80 f16 -> f32 large tile, skinny tile, bias + relu, split-K", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<float>, ep::bias_col<float>, ep::relu, ep::convert_to<float>>;
  using KL = cfg::sm80<arch::sm80, f16, E, cfg::sm80_large>;
  using KS = cfg::sm80<arch::sm80, f16, E, cfg::sm80_skinny>;
  check<KL, true>({.m = 130, .n = 9, .k = 33, .b = sg::layout::col_major, .beta = 1.f, .seed = 31});
  for (const auto& c : shapes()) check<KS, true>(c);
  check<KS, true>({.m = 5, .n = 70, .k = 200, .splits = 3, .seed = 32});
}

TEST_CASE("gemm sm80 tf32 and int8", "[gemm]") {
  using KT = cfg::sm80<arch::sm80, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>, cfg::sm80_medium>;
  for (const auto& c : shapes()) check<KT>(c);
  using KI = cfg::sm80<arch::sm80, std::int8_t, ep::chain<ep::alpha_beta<std::int32_t>, ep::convert_to<std::int32_t>>,
                       cfg::sm80_skinny>;
  for (auto c : shapes()) {
    c.alpha = 1.f;
    c.beta = c.beta != 0.f ? 1.f : 0.f;
    check<KI>(c);
  }
}

TEST_CASE("gemm fp32 FMA tile of the CUDA entry (configs::fma_sm80) as sm80", "[gemm]") {
  // What strata::gemm runs for fp32 without options.tf32 in a CUDA build: 64 x 64 x 4, 2 x 2 warps.
  using E = ep::chain<ep::alpha_beta<float>, ep::bias_col<float>, ep::relu, ep::convert_to<float>>;
  using KF = cfg::fma<arch::sm80, float, E, cfg::fma_sm80>;
  for (const auto& c : shapes()) check<KF, true>(c);
  check<KF, true>({.m = 70, .n = 130, .k = 9, .b = sg::layout::col_major, .beta = 1.f, .splits = 2, .seed = 45});
  check<KF, true>({.m = 67, .n = 129, .k = 41, .beta = 0.5f, .stream_k = 3, .seed = 46});
}

TEST_CASE("gemm sm90a fp8 e4m3 / e5m2 (mma.sync m16n8k32) -> bf16", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  using K4 = cfg::sm80<arch::sm90a, strata::f8_e4m3, E, cfg::sm80_skinny>;
  using K5 = cfg::sm80<arch::sm90a, strata::f8_e5m2, E, cfg::sm80_skinny>;
  for (const auto& c : shapes()) check<K4>(c);
  check<K5>({.m = 13, .n = 21, .k = 70, .a = sg::layout::col_major, .beta = 0.5f, .seed = 41});
  // The skinny tile compiled for A row-major x B column-major (what the entry runs for that layout with
  // 16-byte rows: 4-byte fragment loads instead of 1-byte ones), against the reference and bit for bit
  // against the any-order tile.
  using K4tn = cfg::sm80<arch::sm90a, strata::f8_e4m3, E, cfg::sm80_skinny, 16, sg::operand_orders::a_row_b_col>;
  using K4any = cfg::sm80<arch::sm90a, strata::f8_e4m3, E, cfg::sm80_skinny, 16>;
  const case_t tn{.m = 21, .n = 70, .k = 112, .b = sg::layout::col_major, .beta = 0.5f, .pad = 16, .seed = 42};
  REQUIRE(check<K4tn>(tn) == check<K4any>(tn));
  check<K4tn>({.m = 3, .n = 5, .k = 0, .b = sg::layout::col_major, .beta = 1.f, .seed = 43});
}

TEST_CASE("gemm sm80 serial split-K (bf16 -> bf16, tf32)", "[gemm]") {
  using E = ep::chain<ep::alpha_beta<bf16>, ep::convert_to<bf16>>;
  check<cfg::sm80<arch::sm80, bf16, E, cfg::sm80_medium>>({.m = 70, .n = 9, .k = 200, .beta = 0.5f, .splits = 3, .serial = true, .seed = 33});
  using KT = cfg::sm80<arch::sm80, float, ep::chain<ep::alpha_beta<float>, ep::convert_to<float>>, cfg::sm80_skinny>;
  check<KT>({.m = 5, .n = 70, .k = 260, .b = sg::layout::col_major, .splits = 4, .serial = true, .seed = 34});
}
