// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ldmatrix on the emulator against a plain per-lane reference, on random data, .x1/.x2/.x4, with and
// without .trans, with each lane pointing at an arbitrary row of a table (the addresses are honoured).
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "../unit/support.hpp"
#include "kernels.hpp"

using namespace strata_test;
namespace arch = strata::arch;

// The reference is written from the PTX ISA's description, independently of the atom's maps: lane l
// receives, in register m, the pair of b16 at row l/4 of matrix m, columns 2(l%4) and 2(l%4)+1 (row
// 2(l%4) and 2(l%4)+1, column l/4 with .trans), where row i of matrix m is the row whose address lane
// 8m+i supplied.
template <int Num, bool Trans>
void check_ldmatrix(std::uint64_t seed) {
  strata::stream s;
  const auto table = random_vector<std::uint16_t>(32 * 8, seed, 0, 65535);
  std::vector<int> perm(32);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  auto din = to_device(s, table);
  auto dperm = to_device(s, perm);
  auto out = poisoned<std::uint32_t>(s, 32 * 4, 0xDEADBEEFu);
  strata::launch(s, {.grid = 1, .block = 32}, ldmatrix_kernel<arch::sm80, Num, Trans>{},
                 ldmatrix_params{din.data(), dperm.data(), out.data()});
  const auto o = to_host(s, out);
  auto element = [&](int m, int row, int col) { return table[perm[8 * m + row] * 8 + col]; };
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m) {
      INFO("x" << Num << (Trans ? ".trans" : "") << " lane " << lane << " register " << m);
      if (m >= Num) {
        REQUIRE(o[4 * lane + m] == 0xDEADBEEFu);
        continue;
      }
      const int g = lane / 4, q = 2 * (lane % 4);
      const std::uint32_t lo = Trans ? element(m, q, g) : element(m, g, q);
      const std::uint32_t hi = Trans ? element(m, q + 1, g) : element(m, g, q + 1);
      REQUIRE(o[4 * lane + m] == (lo | (hi << 16)));
    }
}

TEST_CASE("ldmatrix m8n8 x1/x2/x4, with and without .trans, matches the per-lane reference", "[copy][ldmatrix]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    check_ldmatrix<1, false>(seed);
    check_ldmatrix<2, false>(seed);
    check_ldmatrix<4, false>(seed);
    check_ldmatrix<1, true>(seed);
    check_ldmatrix<2, true>(seed);
    check_ldmatrix<4, true>(seed);
  }
}

TEST_CASE("ldmatrix maps are bijections onto the 8x8 matrices", "[copy][ldmatrix]") {
  auto check = [](auto atom) {
    using A = decltype(atom);
    std::vector<int> seen(A::matrices * 64, 0);
    for (int l = 0; l < 32; ++l)
      for (int r = 0; r < A::matrices; ++r)
        for (int h = 0; h < 2; ++h) {
          const auto c = A::value_of(l, r, h);
          REQUIRE(c.matrix == r);
          ++seen[c.matrix * 64 + c.row * 8 + c.col];
        }
    REQUIRE(std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; }));
  };
  check(strata::copy::ldmatrix<1>{});
  check(strata::copy::ldmatrix<2, true>{});
  check(strata::copy::ldmatrix<4>{});
  check(strata::copy::ldmatrix<4, true>{});
}
