// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The warp tile: C = A * B by warps each computing one TileM x TileN tile with an atom, on matrix
// sizes that are not multiples of any tile (partial tiles on every edge), A and B row- or
// column-major, as sm80, gfx90a, gfx942 and the host target. Outputs start poisoned, so an element
// that no warp writes fails.
#include <catch2/catch.hpp>

#include "atom_check.hpp"

using namespace strata_test;
namespace arch = strata::arch;
namespace mma = strata::mma;

namespace {

template <class T>
std::vector<T> stored(const std::vector<T>& row_major, int rows, int cols, mma::major order) {
  if (order == mma::major::row) return row_major;
  std::vector<T> t(row_major.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[std::size_t(c) * rows + r] = row_major[std::size_t(r) * cols + c];
  return t;
}

template <class Target, class Tile, int Warps = 2>
void check_tile(int M, int N, int K, mma::major a_order, mma::major b_order, std::uint64_t seed) {
  using atom = typename Tile::atom;
  using A = typename atom::a_type;
  using B = typename atom::b_type;
  using C = typename atom::c_type;
  const auto a = random_elements<A>(std::size_t(M) * K, seed);
  const auto b = random_elements<B>(std::size_t(K) * N, seed + 1);
  const std::vector<C> zero_c(std::size_t(M) * N, C(0));
  strata::stream s;
  auto da = to_device(s, stored(a, M, K, a_order));
  auto db = to_device(s, stored(b, K, N, b_order));
  auto dc = poisoned<C>(s, zero_c.size(), std::is_integral_v<C> ? C(0x5EADBEEF) : C(NAN));
  const tile_params<atom> p{
      {da.data(), M, K, a_order == mma::major::row ? K : M, a_order},
      {db.data(), K, N, b_order == mma::major::row ? N : K, b_order},
      {dc.data(), M, N, N, mma::major::row}};
  const strata::dims grid((N + Warps * Tile::tile_n - 1) / (Warps * Tile::tile_n), (M + Tile::tile_m - 1) / Tile::tile_m);
  strata::launch(s, {.grid = grid, .block = Warps * Target::warp_size}, tile_kernel<Target, Tile, Warps>{}, p);
  const auto c = to_host(s, dc);
  INFO("atom " << atom::name << " as " << Target::name << ", " << M << "x" << N << "x" << K << ", tile "
               << Tile::tile_m << "x" << Tile::tile_n << "x" << Tile::tile_k << ", A "
               << (a_order == mma::major::row ? "row" : "col") << "-major, B "
               << (b_order == mma::major::row ? "row" : "col") << "-major");
  check_product(a, b, zero_c, c, M, N, K, 1);
}

constexpr auto row = mma::major::row;
constexpr auto col = mma::major::col;

}  // namespace

TEST_CASE("warp tile with mma.sync f16 on odd sizes", "[mma][tile][sm80]") {
  using tile = mma::warp_tile<mma::sm80_16x8x16_f32f16, 32, 16, 32>;  // 2 x 2 atoms, 2 k-steps
  check_tile<arch::sm80, tile>(37, 29, 45, row, col, 201);
  check_tile<arch::sm80, tile>(17, 41, 19, col, row, 202);
  check_tile<arch::sm80, mma::warp_tile<mma::sm80_16x8x32_s32s8, 16, 8, 32>>(23, 13, 70, row, col, 203);
  check_tile<arch::sm80, mma::warp_tile<mma::sm80_16x8x8_f32tf32, 16, 16, 16>, 1>(5, 3, 9, col, col, 204);
}

TEST_CASE("warp tile with MFMA on odd sizes (wavefront 64)", "[mma][tile][cdna]") {
  check_tile<arch::gfx90a, mma::warp_tile<mma::cdna_32x32x8_f32f16, 32, 32, 16>>(45, 39, 27, row, col, 211);
  check_tile<arch::gfx90a, mma::warp_tile<mma::cdna_16x16x16_f32bf16, 32, 16, 16>, 1>(33, 17, 20, col, row, 212);
  check_tile<arch::gfx942, mma::warp_tile<mma::cdna3_16x16x32_i32i8, 16, 16, 32>>(21, 35, 40, row, row, 213);
  check_tile<arch::gfx942, mma::warp_tile<mma::cdna3_16x16x32_f32e4m3, 16, 16, 32>, 1>(18, 15, 33, row, col, 214);
  check_tile<arch::gfx90a, mma::warp_tile<mma::cdna_32x32x2_f32f32, 32, 32, 8>>(41, 70, 13, col, row, 215);
  check_tile<arch::gfx942, mma::warp_tile<mma::cdna_16x16x4_f32f32, 16, 32, 8>, 1>(19, 33, 11, row, col, 216);
}

namespace {
// Loads A fragments with the edges::inside promise from an A that is smaller than the warp tile.
template <class Tile>
struct inside_kernel {
  using target = arch::gfx942;
  static constexpr const char* name = "inside_kernel";
  static constexpr int threads = 64;
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const tile_params<typename Tile::atom>& p) const {
    typename Tile::a_fragments fa;
    Tile::template load_a<mma::edges::inside>(ctx, fa, p.a, 0, 0);
    (void)fa;
  }
};
}  // namespace

TEST_CASE("a fragment load promised inside its matrix is checked on the emulator", "[mma][tile][negative]") {
  using atom = mma::cdna_32x32x8_f32f16;
  using tile = mma::warp_tile<atom, 32, 32, 16>;
  const auto run = [](int rows, int cols) {
    strata::stream s;
    auto a = to_device(s, random_elements<strata::f16>(std::size_t(rows) * cols, 231));
    const tile_params<atom> p{{a.data(), rows, cols, cols, mma::major::row}, {}, {}};
    std::string what = "no error";
    try {
      strata::launch(s, {.grid = 1, .block = 64}, inside_kernel<tile>{}, p);
      s.synchronize();
    } catch (const strata::emulator_error& e) {
      what = e.what();
    }
    return what;
  };
  CHECK(run(32, 16) == "no error");  // the tile exactly: the promise holds
  using Catch::Matchers::Contains;
  CHECK_THAT(run(31, 16), Contains("load_a<edges::inside>") && Contains("outside the 31 x 16 matrix"));
}

namespace {
// edges::rows: a tile of whole columns whose last rows may fall past the matrix (an attention Q tile
// and O tile). The kernel loads A's fragments and writes each lane's values to `a_seen`, and stores an
// accumulator whose every element names its own (row, col) into C.
struct rows_params {
  mma::matrix_ref<const strata::f16> a;
  float* a_seen;  // [lane][fragment][value]
  mma::matrix_ref<float> c;
};
template <class Tile>
struct rows_kernel {
  using target = arch::gfx942;
  static constexpr const char* name = "rows_kernel";
  static constexpr int threads = 64;
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const rows_params& p) const {
    using atom = typename Tile::atom;
    const int lane = ctx.lane().index();
    typename Tile::a_fragments fa;
    Tile::template load_a<mma::edges::rows>(ctx, fa, p.a, 0, 0);
    int n = 0;
    for (int i = 0; i < Tile::atoms_m; ++i)
      for (int kk = 0; kk < Tile::atoms_k; ++kk)
        for (int v = 0; v < atom::a_values; ++v, ++n)
          p.a_seen[(lane * Tile::atoms_m * Tile::atoms_k * atom::a_values) + n] = static_cast<float>(fa.f[i][kk].v[v]);
    typename Tile::accumulator acc;
    for (int i = 0; i < Tile::atoms_m; ++i)
      for (int j = 0; j < Tile::atoms_n; ++j)
        for (int v = 0; v < atom::c_values; ++v) {
          const auto x = atom::c_coord(lane, v);
          acc.f[i][j].v[v] = static_cast<float>((i * atom::M + x.row) * 1000 + j * atom::N + x.col);
        }
    Tile::template store_c<mma::edges::rows>(ctx, acc, p.c, 0, 0);
  }
};
}  // namespace

TEST_CASE("edges::rows: rows past the matrix read as zero and are not stored; columns are promised", "[mma][tile]") {
  using atom = mma::cdna_16x16x16_f32f16;
  using tile = mma::warp_tile<atom, 32, 16, 16>;  // 2 x 1 atoms: rows 16..31 are the second atom
  constexpr int values = tile::atoms_m * tile::atoms_k * atom::a_values;
  // rows: the matrix's rows (the tile has 32); cols: its columns (the tile has 16)
  const auto run = [](int rows, int cols, std::vector<float>* seen, std::vector<float>* c_out) {
    strata::stream s;
    const auto a = random_elements<strata::f16>(std::size_t(rows) * cols, 241);
    auto da = to_device(s, a);
    auto dseen = poisoned<float>(s, std::size_t(64) * values, NAN);
    // C has 32 rows of storage; the matrix_ref shows only `rows`: the others are a guard zone.
    auto dc = poisoned<float>(s, std::size_t(32) * cols, -7.f);
    const rows_params p{{da.data(), rows, cols, cols, mma::major::row}, dseen.data(), {dc.data(), rows, cols, cols, mma::major::row}};
    std::string what = "no error";
    try {
      strata::launch(s, {.grid = 1, .block = 64}, rows_kernel<tile>{}, p);
      s.synchronize();
    } catch (const strata::emulator_error& e) {
      what = e.what();
    }
    if (seen) {
      *seen = to_host(s, dseen);
      *c_out = to_host(s, dc);
      // What each lane must have read: A(r, c), or 0 past the last row.
      for (int lane = 0; lane < 64; ++lane) {
        int n = 0;
        for (int i = 0; i < tile::atoms_m; ++i)
          for (int kk = 0; kk < tile::atoms_k; ++kk)
            for (int v = 0; v < atom::a_values; ++v, ++n) {
              const auto x = atom::a_coord(lane, v);
              const int r = i * atom::M + x.row, c = kk * atom::K + x.col;
              const float want = r < rows ? static_cast<float>(a[std::size_t(r) * cols + c]) : 0.f;
              INFO("lane " << lane << " value " << n << " = A(" << r << ", " << c << ")");
              CHECK((*seen)[std::size_t(lane) * values + n] == want);
            }
      }
      for (int r = 0; r < 32; ++r)
        for (int c = 0; c < cols; ++c) {
          INFO("C(" << r << ", " << c << ")");
          CHECK((*c_out)[std::size_t(r) * cols + c] == (r < rows ? static_cast<float>(r * 1000 + c) : -7.f));
        }
    }
    return what;
  };
  std::vector<float> seen, c;
  CHECK(run(32, 16, &seen, &c) == "no error");
  CHECK(run(21, 16, &seen, &c) == "no error");  // a partial tile: 11 rows past the end
  CHECK(run(0, 16, &seen, &c) == "no error");   // no rows at all
  using Catch::Matchers::Contains;
  // A column past the promise: the load or the store reports it, whichever lane gets there first.
  CHECK_THAT(run(32, 15, nullptr, nullptr), Contains("<edges::rows>: element") && Contains("outside the 32 x 15 matrix"));
}

TEST_CASE("warp tile with the scalar FMA atom on odd sizes", "[mma][tile][fma]") {
  check_tile<arch::host, mma::warp_tile<mma::fma_atom<float, float, 32>, 32, 4, 4>>(37, 11, 13, row, col, 221);
  check_tile<arch::gfx90a, mma::warp_tile<mma::fma_atom<float, float, 64>, 64, 2, 2>, 1>(70, 5, 7, col, row, 222);
}
