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
