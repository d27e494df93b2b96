// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Layout algebra as plain host C++: constexpr checks of static layouts, and properties checked
// pointwise on many static and run-time layouts (composition is function composition, inverse undoes
// a bijection, coalesce keeps the function, products and tiles have the right sizes).
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "strata/tensor/tensor.hpp"

using namespace strata;

// ---- compile time ---------------------------------------------------------------------------------------
static_assert(is_static_v<decltype(row_major(c_<4>, c_<8>))> && !is_static_v<decltype(row_major(4, c_<8>))>);
static_assert(std::is_empty_v<decltype(row_major(c_<4>, c_<8>))>, "a static layout occupies no storage");
static_assert(row_major(c_<4>, c_<8>)(1, 2) == 10 && column_major(c_<4>, c_<8>)(1, 2) == 9);
static_assert(row_major(c_<4>, c_<8>)(5) == 9, "linear index 5 of (4, 8) is (1, 1): first mode fastest");
static_assert(is_constant_v<decltype(size(row_major(c_<4>, c_<8>)))> && size(row_major(c_<4>, c_<8>)) == 32);
static_assert(cosize(row_major_padded(c_<4>, c_<8>, c_<10>)) == 38);
static_assert(decltype(coalesce(column_major(c_<4>, c_<8>)))::rank == 1, "a compact column-major layout is one mode");
static_assert(decltype(coalesce(row_major(c_<4>, c_<8>)))::rank == 2);
static_assert(inverse(row_major(c_<4>, c_<8>))(row_major(c_<4>, c_<8>)(3, 5)) == 3 + 4 * 5);
static_assert(size(tile(row_major(c_<32>, c_<64>), shape(c_<8>, c_<16>))) == 32 * 64);
static_assert(size(mode<0>(tile(row_major(c_<32>, c_<64>), shape(c_<8>, c_<16>)))) == 16, "4 x 4 tiles");
static_assert(composition(row_major(c_<4>, c_<8>), column_major(c_<2>, c_<4>))(1, 3) == row_major(c_<4>, c_<8>)(1 + 2 * 3));
static_assert(size(blocked_product(column_major(c_<2>, c_<2>), column_major(c_<3>, c_<4>))) == 48);
static_assert(vectorizable(row_major(c_<8>, c_<64>), 8) && !vectorizable(row_major_padded(c_<8>, c_<64>, c_<66>), 4));

// ---- properties on values ----------------------------------------------------------------------------
template <class L>
std::vector<long long> offsets(const L& l) {
  std::vector<long long> v;
  for (int i = 0; i < static_cast<int>(size(l)); ++i) v.push_back(static_cast<long long>(l(i)));
  return v;
}

template <class L>
void check_coalesce_and_inverse(const L& l, bool bijective) {
  const auto c = coalesce(l);
  INFO("coalesce keeps the function");
  REQUIRE(static_cast<long long>(size(c)) == static_cast<long long>(size(l)));
  REQUIRE(offsets(c) == offsets(l));
  REQUIRE(is_bijective(l) == bijective);
  if constexpr (!is_static_v<L>) {  // static non-bijections are a static_assert, tested by hand below
    if (!bijective) return;
  }
  if (bijective) {
    const auto inv = inverse(l);
    for (int i = 0; i < static_cast<int>(size(l)); ++i) {
      REQUIRE(static_cast<long long>(inv(l(i))) == i);
      REQUIRE(static_cast<long long>(l(inv(i))) == i);
    }
  }
}

TEST_CASE("coalesce preserves the function; inverse undoes bijections", "[tensor][layout]") {
  int m = 6, n = 10;
  check_coalesce_and_inverse(row_major(c_<4>, c_<8>), true);
  check_coalesce_and_inverse(column_major(c_<4>, c_<8>, c_<2>), true);
  check_coalesce_and_inverse(make_layout(shape(c_<2>, c_<3>, c_<4>), stride(c_<12>, c_<1>, c_<3>)), true);
  check_coalesce_and_inverse(make_layout(shape(shape(c_<2>, c_<2>), c_<8>), stride(stride(c_<1>, c_<16>), c_<2>)), true);
  check_coalesce_and_inverse(row_major(m, n), true);
  check_coalesce_and_inverse(column_major(m, n, 3, 2), true);
  check_coalesce_and_inverse(make_layout(shape(m, 4, 5), stride(20, 5, 1)), true);
  check_coalesce_and_inverse(make_layout(shape(shape(2, 3), shape(4, 5)), stride(stride(60, 20), stride(1, 4))), true);
  check_coalesce_and_inverse(row_major_padded(m, n, 12), false);       // padding: offsets 10, 11 never reached
  check_coalesce_and_inverse(make_layout(shape(4, 8), stride(0, 1)), false);  // broadcast: not injective
  check_coalesce_and_inverse(make_layout(shape(c_<4>, c_<1>, c_<8>), stride(c_<1>, c_<99>, c_<4>)), true);
}

template <class A, class B>
void check_composition(const A& a, const B& b) {
  const auto r = composition(a, b);
  REQUIRE(static_cast<long long>(size(r)) == static_cast<long long>(size(b)));
  for (int i = 0; i < static_cast<int>(size(b)); ++i) {
    INFO("composition at " << i);
    REQUIRE(static_cast<long long>(r(i)) == static_cast<long long>(a(b(i))));
  }
}

TEST_CASE("composition is function composition, pointwise", "[tensor][layout]") {
  int n = 8;
  check_composition(row_major(c_<4>, c_<8>), column_major(c_<2>, c_<4>));
  check_composition(row_major(c_<4>, c_<8>), make_layout(shape(c_<4>, c_<8>), stride(c_<8>, c_<1>)));  // a transpose
  check_composition(column_major(c_<16>, c_<16>), make_layout(shape(c_<4>, c_<8>), stride(c_<2>, c_<32>)));
  check_composition(row_major(c_<8>, c_<8>), make_layout(shape(shape(c_<2>, c_<4>), c_<4>), stride(stride(c_<1>, c_<8>), c_<2>)));
  check_composition(row_major(4, n), column_major(2, 4));
  check_composition(column_major(12, 5), make_layout(shape(3, 5), stride(4, 12)));
  check_composition(make_layout(shape(6, 4), stride(1, 12)), make_layout(shape(2, 3, 4), stride(3, 1, 6)));
  check_composition(column_major(4, 6, 2), make_layout(shape(shape(2, 2), 6), stride(stride(1, 12), 2)));
  REQUIRE_FALSE(composition_ok(column_major(6, 4), make_layout(shape(3), stride(4))));  // steps part-way through 6
}

template <class A, class B>
void check_products(const A& a, const B& b) {
  const long long sa = size(a), sb = size(b);
  const auto lp = logical_product(a, b);
  REQUIRE(static_cast<long long>(size(lp)) == sa * sb);
  // For a compact A the rest is size(A) * B: copy k of A starts at size(A) * B(k).
  for (int j = 0; j < sb; ++j)
    for (int i = 0; i < sa; ++i) REQUIRE(static_cast<long long>(lp(i + sa * j)) == a(i) + sa * static_cast<long long>(b(j)));
  const auto bp = blocked_product(a, b);
  const auto rp = raked_product(a, b);
  REQUIRE(is_bijective(bp));
  REQUIRE(is_bijective(rp));
  std::set<long long> seen;
  // blocked: element (i, j) of block (bi, bj) sits at A(i, j) + size(A) * B(bi, bj)
  const int a0 = static_cast<int>(size(mode<0>(a))), a1 = static_cast<int>(size(mode<1>(a)));
  const int b0 = static_cast<int>(size(mode<0>(b))), b1 = static_cast<int>(size(mode<1>(b)));
  for (int bj = 0; bj < b1; ++bj)
    for (int bi = 0; bi < b0; ++bi)
      for (int j = 0; j < a1; ++j)
        for (int i = 0; i < a0; ++i) {
          const long long expect = a(i, j) + sa * static_cast<long long>(b(bi, bj));
          REQUIRE(static_cast<long long>(bp(coord(coord(i, bi), coord(j, bj)))) == expect);
          REQUIRE(static_cast<long long>(rp(coord(coord(bi, i), coord(bj, j)))) == expect);
        }
}

TEST_CASE("logical, blocked and raked products", "[tensor][layout]") {
  check_products(column_major(c_<2>, c_<2>), column_major(c_<3>, c_<4>));
  check_products(row_major(c_<2>, c_<4>), row_major(c_<2>, c_<3>));
  check_products(row_major(2, 4), column_major(3, 2));
  check_products(column_major(4, 2), row_major(5, 3));
}

TEST_CASE("complement fills the gaps of an injective layout", "[tensor][layout]") {
  auto check = [](auto a, long long m) {
    const auto c = complement(a, m);
    std::set<long long> all;
    for (int j = 0; j < static_cast<int>(size(c)); ++j)
      for (int i = 0; i < static_cast<int>(size(a)); ++i) REQUIRE(all.insert(a(i) + c(j)).second);
    REQUIRE(static_cast<long long>(all.size()) >= m);
    REQUIRE(*all.begin() == 0);
    REQUIRE(*all.rbegin() == static_cast<long long>(all.size()) - 1);
  };
  check(make_layout(shape(c_<4>), stride(c_<2>)), 32);
  check(make_layout(shape(c_<2>, c_<4>), stride(c_<1>, c_<8>)), 64);
  check(make_layout(shape(4), stride(3)), 24);
  check(make_layout(shape(2, 3), stride(6, 1)), 48);
}

TEST_CASE("tile: (tile coordinate, element in tile), with partial tiles for run-time extents", "[tensor][layout]") {
  const auto l = row_major(c_<32>, c_<64>);
  const auto t = tile(l, shape(c_<8>, c_<16>));  // ((4, 4), (8, 16))
  for (int tm = 0; tm < 4; ++tm)
    for (int tn = 0; tn < 4; ++tn)
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 16; ++j) REQUIRE(t(coord(coord(tm, tn), coord(i, j))) == l(tm * 8 + i, tn * 16 + j));
  const auto d = tile(row_major(33, 65), shape(c_<8>, c_<16>));  // 5 x 5 tiles, the last ones partial
  REQUIRE(get<0>(mode<0>(d).shape()) == 5);
  REQUIRE(get<1>(mode<0>(d).shape()) == 5);
  REQUIRE(d(coord(coord(4, 4), coord(0, 0))) == 32 * 65 + 64);
}
