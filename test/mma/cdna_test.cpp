// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// AMD CDNA MFMA atoms on the emulator with 64-lane wavefronts: each equals the plain product on
// random inputs, run as gfx90a (CDNA2 forms) or gfx942 (CDNA3 forms, FNUZ fp8).
#include <catch2/catch.hpp>

#include <cmath>

#include "atom_check.hpp"

using namespace strata_test;
namespace arch = strata::arch;
namespace mma = strata::mma;

TEST_CASE("MFMA f16 and bf16 32x32x8 / 16x16x16 equal the plain product", "[mma][cdna]") {
  run_atom<arch::gfx90a, mma::cdna_32x32x8_f32f16>(101, 1, /*all_schedules=*/true);
  run_atom<arch::gfx90a, mma::cdna_16x16x16_f32f16>(102);
  run_atom<arch::gfx90a, mma::cdna_32x32x8_f32bf16>(103, 1);
  run_atom<arch::gfx942, mma::cdna_16x16x16_f32bf16>(104);
}

TEST_CASE("MFMA f32 32x32x2 / 16x16x4 equal the plain product", "[mma][cdna]") {
  run_atom<arch::gfx90a, mma::cdna_32x32x2_f32f32>(105, 1, /*all_schedules=*/true);
  run_atom<arch::gfx942, mma::cdna_16x16x4_f32f32>(106);
  run_atom<arch::gfx942, mma::cdna_32x32x2_f32f32>(107, 1);
}

TEST_CASE("MFMA int8 equals the product exactly, wrapping modulo 2^32", "[mma][cdna]") {
  run_atom<arch::gfx90a, mma::cdna2_32x32x8_i32i8>(111, 1);
  run_atom<arch::gfx90a, mma::cdna2_16x16x16_i32i8>(112);
  run_atom<arch::gfx942, mma::cdna3_32x32x16_i32i8>(113, 1);
  run_atom<arch::gfx942, mma::cdna3_16x16x32_i32i8>(114);
}

TEST_CASE("MFMA FNUZ fp8 (gfx942) equals the plain product", "[mma][cdna][fp8]") {
  run_atom<arch::gfx942, mma::cdna3_32x32x16_f32e4m3>(121, 1);
  run_atom<arch::gfx942, mma::cdna3_16x16x32_f32e4m3>(122);
  run_atom<arch::gfx942, mma::cdna3_32x32x16_f32e5m2>(123, 1);
  run_atom<arch::gfx942, mma::cdna3_16x16x32_f32e5m2>(124);
}

namespace {
/// Every byte of an OCP format through the remap: NaN (and e5m2 Inf) -> FNUZ NaN (0x80), -0 -> +0,
/// every other encoding -> the FNUZ encoding of exactly half its value; the other three bytes of the
/// word must come through untouched whatever this one holds.
template <class OCP, class FNUZ, bool E4M3>
void check_remap_every_byte() {
  for (std::uint32_t b = 0; b < 256; ++b)
    for (std::uint32_t pos = 0; pos < 4; ++pos) {
      const std::uint32_t filler = 0x3C3C3C3Cu & ~(0xFFu << (8 * pos));  // a plain finite value elsewhere
      const std::uint32_t w = mma::detail::ocp_to_fnuz_halved<E4M3>(filler | (b << (8 * pos)));
      INFO("byte 0x" << std::hex << b << " at position " << pos << ": word 0x" << w);
      REQUIRE((w & ~(0xFFu << (8 * pos))) == filler);
      const auto out = FNUZ::from_bits(std::uint8_t(w >> (8 * pos)));
      const float x = static_cast<float>(OCP::from_bits(std::uint8_t(b)));
      if (std::isnan(x) || std::isinf(x)) {
        REQUIRE(out.bits() == 0x80);
      } else {
        REQUIRE(static_cast<float>(out) == x / 2);
        if (x == 0) REQUIRE(out.bits() == 0x00);
      }
    }
}
}  // namespace

TEST_CASE("OCP fp8 -> FNUZ remap: every encoding, exactly half its value", "[mma][cdna][fp8]") {
  check_remap_every_byte<strata::f8_e4m3, strata::f8_e4m3_fnuz, true>();
  check_remap_every_byte<strata::f8_e5m2, strata::f8_e5m2_fnuz, false>();
}

TEST_CASE("a kernel that assumes the wrong lane arrangement gets a wrong MFMA product", "[mma][cdna][negative]") {
  // NVIDIA's lane/4, lane%4 split applied to a wavefront, and the k-groups of lanes swapped.
  CHECK(run_atom<arch::gfx90a, mma::cdna_32x32x8_f32f16>(131, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_32x32x8_f32f16, lane_map::swap_group_thread>(131, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_16x16x16_f32f16, lane_map::swap_halves>(132, 1));
  CHECK_FALSE(run_atom<arch::gfx942, mma::cdna3_16x16x32_i32i8, lane_map::swap_halves>(133, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_32x32x2_f32f32, lane_map::swap_halves>(134, 1));
}

namespace {
/// mma::swapped<Atom> against the instruction it runs: its fragments, filled from A and B with its
/// own tables, are handed to the base atom exchanged (the swapped atom's B as the instruction's A),
/// the base's product is formed from the base's tables (checked against AMD's calculator in
/// layout_test.cpp), and D read back with the swapped C table must be A B. Small integers: exact.
template <class Atom>
bool swapped_runs_the_base_on_exchanged_fragments(std::uint64_t seed, bool transpose_c = true) {
  using S = mma::swapped<Atom>;
  constexpr int M = S::M, N = S::N, K = S::K, L = S::warp_size;
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  float A[M][K], B[K][N];
  for (auto& r : A)
    for (auto& x : r) x = static_cast<float>(d(g));
  for (auto& r : B)
    for (auto& x : r) x = static_cast<float>(d(g));
  std::vector<typename S::a_fragment> a(L);
  std::vector<typename S::b_fragment> b(L);
  for (int l = 0; l < L; ++l) {
    for (int v = 0; v < S::a_values; ++v) a[l][v] = typename S::a_type(A[S::a_coord(l, v).row][S::a_coord(l, v).col]);
    for (int v = 0; v < S::b_values; ++v) b[l][v] = typename S::b_type(B[S::b_coord(l, v).row][S::b_coord(l, v).col]);
  }
  // The instruction: its A operand is b's registers, its B operand a's.
  float IA[Atom::M][Atom::K], IB[Atom::K][Atom::N], ID[Atom::M][Atom::N] = {};
  for (int l = 0; l < L; ++l) {
    for (int v = 0; v < Atom::a_values; ++v) IA[Atom::a_coord(l, v).row][Atom::a_coord(l, v).col] = static_cast<float>(b[l][v]);
    for (int v = 0; v < Atom::b_values; ++v) IB[Atom::b_coord(l, v).row][Atom::b_coord(l, v).col] = static_cast<float>(a[l][v]);
  }
  for (int i = 0; i < Atom::M; ++i)
    for (int j = 0; j < Atom::N; ++j)
      for (int k = 0; k < K; ++k) ID[i][j] += IA[i][k] * IB[k][j];
  bool ok = true;
  for (int l = 0; l < L; ++l)
    for (int v = 0; v < S::c_values; ++v) {
      const float got = ID[Atom::c_coord(l, v).row][Atom::c_coord(l, v).col];
      const mma::coord x = transpose_c ? S::c_coord(l, v) : Atom::c_coord(l, v);
      float want = 0.f;
      for (int k = 0; k < K; ++k) want += A[x.row][k] * B[k][x.col];
      ok = ok && got == want;
    }
  return ok;
}
}  // namespace

TEST_CASE("mma::swapped: the base MFMA on exchanged fragments gives A B in the transposed C layout", "[mma][cdna]") {
  CHECK(swapped_runs_the_base_on_exchanged_fragments<mma::cdna_16x16x16_f32bf16>(141));
  CHECK(swapped_runs_the_base_on_exchanged_fragments<mma::cdna_16x16x16_f32f16>(142));
  CHECK(swapped_runs_the_base_on_exchanged_fragments<mma::cdna_32x32x8_f32f16>(143));
  CHECK(swapped_runs_the_base_on_exchanged_fragments<mma::cdna_16x16x4_f32f32>(144));
  // The base's own C table read as if it were the product's: wrong.
  CHECK_FALSE(swapped_runs_the_base_on_exchanged_fragments<mma::cdna_16x16x16_f32bf16>(145, false));
  // Through the emulator's warp collective as well (its tables, all lanes).
  run_atom<arch::gfx942, mma::swapped<mma::cdna_16x16x16_f32bf16>>(146);
  run_atom<arch::gfx90a, mma::swapped<mma::cdna_32x32x8_f32f16>>(147, 1);
}

TEST_CASE("mma::swapped 16x16x16: the accumulator is the A operand, one row per lane", "[mma][cdna]") {
  using S = mma::swapped<mma::cdna_16x16x16_f32bf16>;
  STATIC_REQUIRE(mma::c_is_a<S>);
  STATIC_REQUIRE_FALSE(mma::c_is_a<mma::cdna_16x16x16_f32bf16>);
  STATIC_REQUIRE(mma::accumulator_rows<S>::count == 1);
  STATIC_REQUIRE(mma::accumulator_rows<S>::lane_bits == 48);  // the row's lanes: lane % 16 alike
  STATIC_REQUIRE(S::k_per_lane == 4);
  // The 32x32x8 C holds 16 rows per lane in 4-row groups: its transpose is not its A (K 8 < N 32).
  STATIC_REQUIRE_FALSE(mma::c_is_a<mma::swapped<mma::cdna_32x32x8_f32f16>>);
}
