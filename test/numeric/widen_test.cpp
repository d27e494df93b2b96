// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// arch/widen.hpp: the embedding kernels' one-or-two-instruction decodes must equal the portable,
// exact decode (numeric/detail/format.hpp) bit for bit on every encoding, and give a NaN for a NaN.
// On the host this checks the bit tricks (bf16's shift, e4m3 through f16, u8 through 2^23); the
// device instructions behind widen_f16 are checked on GPUs by the embedding examples' --check
// (benchmark/gpu/checks.txt: fp16, bf16, fp8, int8 and int4 rows).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "strata/arch/widen.hpp"
#include "strata/numeric/numeric.hpp"

namespace {
std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
template <class F>
void same(float got, float want, F&& where) {
  if (std::isnan(want)) {
    INFO(where());
    CHECK(std::isnan(got));
  } else if (bits_of(got) != bits_of(want)) {
    INFO(where() << ": got " << got << " want " << want);
    CHECK(bits_of(got) == bits_of(want));
  }
}
}  // namespace

TEST_CASE("widen_f16 equals the portable decode on every encoding", "[numeric][widen]") {
  for (std::uint32_t b = 0; b < 65536; ++b)
    same(strata::arch::widen_f16(static_cast<std::uint16_t>(b)), float(strata::f16::from_bits(static_cast<std::uint16_t>(b))),
         [&] { return "f16 bits " + std::to_string(b); });
}

TEST_CASE("widen_bf16 equals the portable decode on every encoding", "[numeric][widen]") {
  for (std::uint32_t b = 0; b < 65536; ++b)
    same(strata::arch::widen_bf16(static_cast<std::uint16_t>(b)), float(strata::bf16::from_bits(static_cast<std::uint16_t>(b))),
         [&] { return "bf16 bits " + std::to_string(b); });
}

TEST_CASE("widen_e4m3 equals the portable decode on every encoding", "[numeric][widen]") {
  for (std::uint32_t b = 0; b < 256; ++b) {
    const float want = float(strata::f8_e4m3::from_bits(static_cast<std::uint8_t>(b)));
    const float got = strata::arch::widen_e4m3(static_cast<std::uint8_t>(b));
    same(got, want, [&] { return "e4m3 bits " + std::to_string(b); });
    if (std::isnan(want)) CHECK(bits_of(got) == bits_of(want));  // NaN: the portable decode's payload too
  }
  // Spot values: the smallest subnormal, the largest normal, signed zero.
  CHECK(strata::arch::widen_e4m3(0x01) == std::ldexp(1.f, -9));
  CHECK(strata::arch::widen_e4m3(0x7E) == 448.f);
  CHECK(std::signbit(strata::arch::widen_e4m3(0x80)));
}

TEST_CASE("widen_u8 is the integer value", "[numeric][widen]") {
  for (std::uint32_t b = 0; b < 256; ++b) CHECK(strata::arch::widen_u8(b) == static_cast<float>(b));
}
