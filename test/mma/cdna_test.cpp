// AMD CDNA MFMA atoms on the emulator with 64-lane wavefronts: each equals the plain product on
// random inputs, run as gfx90a (CDNA2 forms) or gfx942 (CDNA3 forms, FNUZ fp8).
#include <catch2/catch.hpp>

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

TEST_CASE("a kernel that assumes the wrong lane arrangement gets a wrong MFMA product", "[mma][cdna][negative]") {
  // NVIDIA's lane/4, lane%4 split applied to a wavefront, and the k-groups of lanes swapped.
  CHECK(run_atom<arch::gfx90a, mma::cdna_32x32x8_f32f16>(131, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_32x32x8_f32f16, lane_map::swap_group_thread>(131, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_16x16x16_f32f16, lane_map::swap_halves>(132, 1));
  CHECK_FALSE(run_atom<arch::gfx942, mma::cdna3_16x16x32_i32i8, lane_map::swap_halves>(133, 1));
  CHECK_FALSE(run_atom<arch::gfx90a, mma::cdna_32x32x2_f32f32, lane_map::swap_halves>(134, 1));
}
