// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NVIDIA mma.sync atoms and the scalar FMA atom on the emulator: each equals the plain product on
// random inputs, run as the GPU target that has the instruction (sm80, or sm90a for fp8).
#include <catch2/catch.hpp>

#include "atom_check.hpp"

using namespace strata_test;
namespace arch = strata::arch;
namespace mma = strata::mma;
using Catch::Matchers::Contains;

TEST_CASE("mma.sync m16n8k16 f16 and bf16 equal the plain product", "[mma][sm80]") {
  run_atom<arch::sm80, mma::sm80_16x8x16_f32f16>(11, 2, /*all_schedules=*/true);
  run_atom<arch::sm80, mma::sm80_16x8x16_f32bf16>(12);
  run_atom<arch::sm100a, mma::sm80_16x8x16_f32bf16>(13);  // the same atom on a later target
}

TEST_CASE("mma.sync m16n8k8 tf32 equals the plain product", "[mma][sm80]") {
  run_atom<arch::sm80, mma::sm80_16x8x8_f32tf32>(21);
}

TEST_CASE("mma.sync m16n8k32 s8 equals the product exactly, wrapping modulo 2^32", "[mma][sm80]") {
  // C is drawn from the whole int32 range, so many sums overflow.
  run_atom<arch::sm80, mma::sm80_16x8x32_s32s8>(31, 3);
}

TEST_CASE("mma.sync m16n8k32 e4m3 and e5m2 equal the plain product (sm90a, sm100a)", "[mma][sm89]") {
  run_atom<arch::sm90a, mma::sm89_16x8x32_f32e4m3>(41);
  run_atom<arch::sm100a, mma::sm89_16x8x32_f32e5m2>(42);
}

TEST_CASE("the scalar FMA atom equals the plain product at warp size 32 and 64", "[mma][fma]") {
  run_atom<arch::host, mma::fma_atom<float, float, 32>>(51);
  run_atom<arch::gfx942, mma::fma_atom<float, float, 64>>(52);
  run_atom<arch::sm80, mma::fma_atom<std::int8_t, std::int32_t, 32>>(53);
}

TEST_CASE("a kernel that loads fragments with swapped lane/4 and lane%4 gets a wrong product", "[mma][sm80][negative]") {
  // Test of the tests: the same kernel with a wrong lane map must not pass the comparison.
  CHECK(run_atom<arch::sm80, mma::sm80_16x8x16_f32f16>(61));
  CHECK_FALSE(run_atom<arch::sm80, mma::sm80_16x8x16_f32f16, lane_map::swap_group_thread>(61));
  CHECK_FALSE(run_atom<arch::sm80, mma::sm80_16x8x32_s32s8, lane_map::swap_group_thread>(62));
  CHECK_FALSE(run_atom<arch::sm80, mma::sm80_16x8x8_f32tf32, lane_map::swap_group_thread>(63));
}

TEST_CASE("an MMA atom in a partial warp is reported, not computed from missing lanes", "[mma][sm80][negative]") {
  using atom = mma::sm80_16x8x16_f32f16;
  strata::stream s;
  const std::size_t n = 4 * 16 * 16;
  auto a = to_device(s, random_elements<strata::f16>(n, 1));
  auto b = to_device(s, random_elements<strata::f16>(n, 2));
  auto c = to_device(s, random_elements<float>(n, 3));
  strata::device_buffer<float> d(n);
  std::string what = "no error";
  try {
    // 40 threads: the second warp has 8 lanes.
    strata::launch(s, {.grid = 1, .block = 40}, atom_kernel<arch::sm80, atom>{},
                   atom_params<atom>{a.data(), b.data(), c.data(), d.data()});
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    what = e.what();
  }
  CHECK_THAT(what, Contains("needs all 32 lanes") && Contains("has 8"));
}
