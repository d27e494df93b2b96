// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Swizzles: each is a bijection, and for the access pattern it is made for it removes every shared-
// memory bank conflict that the plain row-major layout has.
//
// Bank model (from the vendors' documentation):
//  - NVIDIA sm80+: 32 banks of 4 bytes (a 128-byte bank line). A warp's 128-bit accesses (ld.shared.v4,
//    and ldmatrix, whose lanes 8k..8k+7 give the 8 row addresses of matrix k) are served in phases of
//    8 lanes, 128 bytes a phase. Inside a phase, distinct 4-byte words in the same bank serialise.
//  - AMD CDNA2/3 LDS: 32 banks of 4 bytes; ds_read_b128 is served 8 lanes at a time as well.
//    gfx950: 64 banks (a 256-byte line), ds_read_b128 served a quarter wave (16 lanes) at a time.
// So one model: lanes in phases of line_bytes / 16; extra cycles of a phase = (most distinct words in
// one bank) - 1; conflicts = the sum over phases.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <vector>

#include "strata/tensor/tensor.hpp"

using namespace strata;

template <int B, int M, int S>
void check_bijective() {
  using Sw = swizzle<B, M, S>;
  std::set<long long> seen;
  for (long long x = 0; x < 2 * Sw::period; ++x) {
    const long long y = Sw{}(x);
    REQUIRE(y / Sw::period == x / Sw::period);  // stays inside its aligned block
    REQUIRE(Sw{}(y) == x);                      // an involution
    REQUIRE(seen.insert(y).second);
    REQUIRE((y >> M) == ((Sw{}(x & ~((1LL << M) - 1))) >> M));  // units of 2^M elements stay whole
  }
}

TEST_CASE("every swizzle is a bijection", "[tensor][swizzle]") {
  check_bijective<0, 0, 0>();
  check_bijective<1, 3, 3>();
  check_bijective<2, 3, 3>();
  check_bijective<3, 3, 3>();
  check_bijective<3, 2, 3>();
  check_bijective<3, 3, 4>();
  check_bijective<3, 4, 3>();
  check_bijective<2, 2, 5>();
  // and swizzle_for's choices
  static_assert(std::is_same_v<swizzle_for<short, 128>, swizzle<3, 3, 3>>, "ldmatrix, fp16 rows of 64");
  static_assert(std::is_same_v<swizzle_for<short, 64>, swizzle<2, 3, 3>>);
  static_assert(std::is_same_v<swizzle_for<short, 128, 256>, swizzle<3, 3, 4>>, "gfx950, 64 banks");
  static_assert(std::is_same_v<swizzle_for<float, 256>, swizzle<3, 2, 4>>);
}

/// Conflicts of one warp's access: lane l reads 16 bytes at byte address addr[l].
int conflicts(const std::vector<long long>& addr, int line_bytes) {
  const int banks = line_bytes / 4, per_phase = line_bytes / 16;
  int extra = 0;
  for (std::size_t p = 0; p < addr.size(); p += per_phase) {
    std::map<int, std::set<long long>> words;  // bank -> distinct words
    for (std::size_t l = p; l < p + per_phase && l < addr.size(); ++l)
      for (int w = 0; w < 4; ++w) {
        const long long word = addr[l] / 4 + w;
        words[static_cast<int>(word % banks)].insert(word);
      }
    std::size_t most = 0;
    for (auto& [b, s] : words) most = std::max(most, s.size());
    extra += static_cast<int>(most) - 1;
  }
  return extra;
}

// A (rows, RowBytes / sizeof(T)) row-major tile in shared memory; a warp reads 16-byte units down a
// column: lane l reads row (l % rows) at unit column c0 + l / rows (the ldmatrix / MFMA-operand read).
template <class T, int RowBytes, int LineBytes, int Warp>
std::pair<int, int> column_read_conflicts() {
  constexpr int W = RowBytes / sizeof(T), rows = 64, E = 16 / sizeof(T);
  const auto plain = row_major(c_<rows>, c_<W>);                               // (rows, W)
  const auto swz = make_swizzled(swizzle_for<T, RowBytes, LineBytes>{}, plain);  // (rows, W)
  // the swizzled tile is still a bijection on the tile
  std::set<long long> all;
  for (int i = 0; i < rows * W; ++i) REQUIRE(all.insert(swz(i)).second);
  REQUIRE(*all.rbegin() == rows * W - 1);
  int worst_plain = 0, worst_swz = 0;
  const int lanes_per_col = std::min(rows, Warp);
  for (int c0 = 0; c0 < W / E; ++c0) {
    std::vector<long long> a_plain, a_swz;
    for (int l = 0; l < Warp; ++l) {
      const int r = l % lanes_per_col, c = ((c0 + l / lanes_per_col) % (W / E)) * E;
      a_plain.push_back(plain(r, c) * sizeof(T));
      a_swz.push_back(swz(r, c) * sizeof(T));
    }
    worst_plain = std::max(worst_plain, conflicts(a_plain, LineBytes));
    worst_swz = std::max(worst_swz, conflicts(a_swz, LineBytes));
  }
  return {worst_plain, worst_swz};
}

TEST_CASE("swizzled tiles have no bank conflicts where plain ones have many", "[tensor][swizzle]") {
  // NVIDIA ldmatrix / ld.shared.v4: 32 banks, warp 32, phases of 8 lanes
  auto [p1, s1] = column_read_conflicts<short, 128, 128, 32>();  // fp16, 64-element rows
  CHECK(p1 == 4 * 7);  // 8 rows of a phase in one bank group: 8-way, 4 phases
  CHECK(s1 == 0);
  auto [p2, s2] = column_read_conflicts<short, 64, 128, 32>();   // fp16, 32-element rows
  CHECK(p2 > 0);
  CHECK(s2 == 0);
  auto [p3, s3] = column_read_conflicts<float, 256, 128, 32>();  // fp32, 64-element rows
  CHECK(p3 > 0);
  CHECK(s3 == 0);
  auto [p4, s4] = column_read_conflicts<short, 32, 128, 32>();   // fp16, 16-element rows
  CHECK(p4 > 0);
  CHECK(s4 == 0);
  // AMD ds_read_b128, 64-element fp16 rows: CDNA2/3 (32 banks, wave 64) and gfx950 (64 banks)
  auto [p5, s5] = column_read_conflicts<short, 128, 128, 64>();
  CHECK(p5 == 8 * 7);
  CHECK(s5 == 0);
  auto [p6, s6] = column_read_conflicts<short, 128, 256, 64>();
  CHECK(p6 > 0);
  CHECK(s6 == 0);
  // the 128-bit row-wise writes that fill the tile stay conflict-free under the swizzle too
  const auto swz = make_swizzled(swizzle_for<short, 128>{}, row_major(c_<64>, c_<64>));
  for (int r0 = 0; r0 < 64; r0 += 4) {
    std::vector<long long> a;
    for (int l = 0; l < 32; ++l) a.push_back(swz(r0 + l / 8, (l % 8) * 8) * 2);
    REQUIRE(conflicts(a, 128) == 0);
  }
}
