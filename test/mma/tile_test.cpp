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

TEST_CASE("warp tile with the scalar FMA atom on odd sizes", "[mma][tile][fma]") {
  check_tile<arch::host, mma::warp_tile<mma::fma_atom<float, float, 32>, 32, 4, 4>>(37, 11, 13, row, col, 221);
  check_tile<arch::gfx90a, mma::warp_tile<mma::fma_atom<float, float, 64>, 64, 2, 2>, 1>(70, 5, 7, col, row, 222);
}
