// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The fragment layout tables themselves, as plain host C++: every operand of every atom is a
// bijection onto its tile, and sample entries agree with the vendors' own text. Also the FNUZ fp8
// types that the CDNA3 fp8 atoms take.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/mma.hpp"
#include "strata/numeric/f8_fnuz.hpp"

using namespace strata::mma;

namespace {

template <class Atom>
bool all_bijective() {
  return fragment_layout<Atom, operand::a>::bijective() && fragment_layout<Atom, operand::b>::bijective() &&
         fragment_layout<Atom, operand::c>::bijective();
}

/// A deliberately wrong table: m16n8k16's A with lane/4 and lane%4 swapped in the formula.
struct swapped_a_layout : sm80_16x8x16_f32f16 {
  static constexpr coord a_coord(int lane, int i) {
    const int g = lane & 3, t = lane >> 2;  // swapped: t now runs 0..7
    return {g + 8 * ((i >> 1) & 1), t * 2 + (i & 1) + 8 * (i >> 2)};
  }
};

/// A table that owns one element twice and another never: C's row ignores the value's high bit.
struct duplicated_c_layout : sm80_16x8x16_f32f16 {
  static constexpr coord c_coord(int lane, int i) { return {lane >> 2, (lane & 3) * 2 + (i & 1)}; }
};

}  // namespace

TEST_CASE("every atom's A, B and C layouts own each matrix element exactly once", "[mma][layout]") {
  // Compile-time, as the emulator path itself asserts...
  static_assert(check_layouts<sm80_16x8x16_f32f16>() && check_layouts<sm80_16x8x16_f32bf16>());
  static_assert(check_layouts<sm80_16x8x8_f32tf32>() && check_layouts<sm80_16x8x32_s32s8>());
  static_assert(check_layouts<sm89_16x8x32_f32e4m3>() && check_layouts<sm89_16x8x32_f32e5m2>());
  static_assert(check_layouts<cdna_32x32x8_f32f16>() && check_layouts<cdna_16x16x16_f32f16>());
  static_assert(check_layouts<cdna_32x32x8_f32bf16>() && check_layouts<cdna_16x16x16_f32bf16>());
  static_assert(check_layouts<cdna2_32x32x8_i32i8>() && check_layouts<cdna2_16x16x16_i32i8>());
  static_assert(check_layouts<cdna3_32x32x16_i32i8>() && check_layouts<cdna3_16x16x32_i32i8>());
  static_assert(check_layouts<cdna3_32x32x16_f32e4m3>() && check_layouts<cdna3_16x16x32_f32e5m2>());
  static_assert(check_layouts<fma_atom<float, float, 32>>() && check_layouts<fma_atom<float, float, 64>>());
  // ...and at run time, so that a failure shows up as a test failure too.
  CHECK(all_bijective<sm80_16x8x16_f32f16>());
  CHECK(all_bijective<sm80_16x8x8_f32tf32>());
  CHECK(all_bijective<sm80_16x8x32_s32s8>());
  CHECK(all_bijective<cdna_32x32x8_f32f16>());
  CHECK(all_bijective<cdna_16x16x16_f32f16>());
  CHECK(all_bijective<cdna2_32x32x8_i32i8>());
  CHECK(all_bijective<cdna3_16x16x32_i32i8>());
  CHECK(all_bijective<fma_atom<std::int8_t, std::int32_t, 64>>());
}

TEST_CASE("the bijection check rejects broken tables", "[mma][layout]") {
  // Test of the test: the swapped-lane table leaves the tile (t * 2 + 8 reaches column 23).
  CHECK_FALSE(fragment_layout<swapped_a_layout, operand::a>::bijective());
  CHECK_FALSE(fragment_layout<duplicated_c_layout, operand::c>::bijective());
  CHECK(fragment_layout<swapped_a_layout, operand::b>::bijective());  // B untouched
}

TEST_CASE("mma.sync layouts match the PTX ISA fragment formulas", "[mma][layout][ptx]") {
  // PTX ISA 9.7.14.5.8, m16n8k16 .f16/.bf16, groupID = lane >> 2, threadID_in_group = lane % 4:
  // lane 0 holds a0, a1 = A[0][0], A[0][1]; a2, a3 = A[8][0..1]; a4, a5 = A[0][8..9]; a6, a7 = A[8][8..9].
  using f16atom = sm80_16x8x16_f32f16;
  CHECK(f16atom::a_coord(0, 0) == coord{0, 0});
  CHECK(f16atom::a_coord(0, 1) == coord{0, 1});
  CHECK(f16atom::a_coord(0, 2) == coord{8, 0});
  CHECK(f16atom::a_coord(0, 5) == coord{0, 9});
  CHECK(f16atom::a_coord(0, 7) == coord{8, 9});
  // lane 5 (groupID 1, threadID_in_group 1): a0 = A[1][2], a6 = A[9][10]; b0 = B[2][1], b3 = B[11][1]
  CHECK(f16atom::a_coord(5, 0) == coord{1, 2});
  CHECK(f16atom::a_coord(5, 6) == coord{9, 10});
  CHECK(f16atom::b_coord(5, 0) == coord{2, 1});
  CHECK(f16atom::b_coord(5, 3) == coord{11, 1});
  // lane 31 (groupID 7, threadID_in_group 3): c0 = C[7][6], c3 = C[15][7]
  CHECK(f16atom::c_coord(31, 0) == coord{7, 6});
  CHECK(f16atom::c_coord(31, 3) == coord{15, 7});

  // m16n8k8 .tf32: row = groupID for a0, a2, + 8 for a1, a3; col = threadID_in_group (+ 4 for a2, a3)
  using tf32atom = sm80_16x8x8_f32tf32;
  CHECK(tf32atom::a_coord(6, 0) == coord{1, 2});
  CHECK(tf32atom::a_coord(6, 1) == coord{9, 2});
  CHECK(tf32atom::a_coord(6, 2) == coord{1, 6});
  CHECK(tf32atom::a_coord(6, 3) == coord{9, 6});
  CHECK(tf32atom::b_coord(6, 1) == coord{6, 1});

  // m16n8k32 .s8/.e4m3: a_i row = groupID for 0 <= i < 4 || 8 <= i < 12; col = 4 t + (i & 3) (+ 16 for i >= 8)
  using s8atom = sm80_16x8x32_s32s8;
  CHECK(s8atom::a_coord(9, 3) == coord{2, 7});     // g 2, t 1
  CHECK(s8atom::a_coord(9, 4) == coord{10, 4});
  CHECK(s8atom::a_coord(9, 11) == coord{2, 23});
  CHECK(s8atom::a_coord(9, 15) == coord{10, 23});
  CHECK(s8atom::b_coord(9, 2) == coord{6, 2});     // b_i row = 4 t + (i & 3) (+ 16 for i >= 4), col = g
  CHECK(s8atom::b_coord(9, 7) == coord{23, 2});
  CHECK(sm89_16x8x32_f32e4m3::a_coord(9, 11) == coord{2, 23});
}

namespace {
/// Value index of bits [hi:lo] of VGPR r, for elements of `bits` bits: the calculator's notation.
constexpr int value_of(int reg, int lo_bit, int bits) { return reg * (32 / bits) + lo_bit / bits; }
}  // namespace

TEST_CASE("MFMA layouts match AMD's matrix instruction calculator", "[mma][layout][amd]") {
  // Lines printed by ROCm/amd_matrix_instruction_calculator (matrix_calculator.py -a <arch> -i <inst>
  // -<matrix> --get-register -I/-J/-K ...), "M[row][col] = v<reg>{<lane>}.[<bits>]":
  //   cdna2 v_mfma_f32_32x32x8f16       C[13][5] = v5{37}
  CHECK(cdna_32x32x8_f32f16::c_coord(37, 5) == coord{13, 5});
  //   cdna2 v_mfma_f32_32x32x8bf16_1k   A[17][6] = v1{49}.[15:0]
  CHECK(cdna_32x32x8_f32bf16::a_coord(49, value_of(1, 0, 16)) == coord{17, 6});
  //   cdna2 v_mfma_f32_16x16x16f16      C[11][14] = v3{46}      B[9][4] = v0{36}.[31:16]
  CHECK(cdna_16x16x16_f32f16::c_coord(46, 3) == coord{11, 14});
  CHECK(cdna_16x16x16_f32f16::b_coord(36, value_of(0, 16, 16)) == coord{9, 4});
  //   cdna2 v_mfma_i32_32x32x8i8        A[3][6] = v0{35}.[23:16]
  CHECK(cdna2_32x32x8_i32i8::a_coord(35, value_of(0, 16, 8)) == coord{3, 6});
  //   cdna2 v_mfma_i32_16x16x16i8       B[14][9] = v0{57}.[23:16]
  CHECK(cdna2_16x16x16_i32i8::b_coord(57, value_of(0, 16, 8)) == coord{14, 9});
  //   cdna3 v_mfma_i32_32x32x16_i8      C[30][7] = v14{39}
  CHECK(cdna3_32x32x16_i32i8::c_coord(39, 14) == coord{30, 7});
  //   cdna3 v_mfma_i32_16x16x32_i8      A[7][21] = v1{39}.[15:8]
  CHECK(cdna3_16x16x32_i32i8::a_coord(39, value_of(1, 8, 8)) == coord{7, 21});
  //   cdna3 v_mfma_f32_32x32x16_fp8_fp8 B[13][30] = v1{62}.[15:8]
  CHECK(cdna3_32x32x16_f32e4m3::b_coord(62, value_of(1, 8, 8)) == coord{13, 30});
  //   cdna3 v_mfma_f32_16x16x32_bf8_bf8 A[2][27] = v0{50}.[31:24]
  CHECK(cdna3_16x16x32_f32e5m2::a_coord(50, value_of(0, 24, 8)) == coord{2, 27});
  // f32 forms, one k value per lane: derived from the calculator's formula for them (A[i][k] and
  // B[k][j] in lanes MN * k + i and MN * k + j, register 0; C or D as the f16 forms), not printed lines:
  //   v_mfma_f32_32x32x2f32  A[5][1] = v0{37}      B[1][30] = v0{62}     C[13][5] = v5{37}
  CHECK(cdna_32x32x2_f32f32::a_coord(37, 0) == coord{5, 1});
  CHECK(cdna_32x32x2_f32f32::b_coord(62, 0) == coord{1, 30});
  CHECK(cdna_32x32x2_f32f32::c_coord(37, 5) == coord{13, 5});
  //   v_mfma_f32_16x16x4f32  A[9][3] = v0{57}      C[11][14] = v3{46}
  CHECK(cdna_16x16x4_f32f32::a_coord(57, 0) == coord{9, 3});
  CHECK(cdna_16x16x4_f32f32::c_coord(46, 3) == coord{11, 14});
}

TEST_CASE("atoms declare their shapes, types and target families", "[mma][layout]") {
  namespace arch = strata::arch;
  STATIC_REQUIRE(sm80_16x8x16_f32f16::available_on<arch::sm80>);
  STATIC_REQUIRE(!sm89_16x8x32_f32e4m3::available_on<arch::sm80>);
  STATIC_REQUIRE(sm89_16x8x32_f32e4m3::available_on<arch::sm90a>);
  STATIC_REQUIRE(sm89_16x8x32_f32e5m2::available_on<arch::sm100a>);
  STATIC_REQUIRE(!sm80_16x8x16_f32f16::available_on<arch::gfx90a>);
  STATIC_REQUIRE(cdna_32x32x8_f32f16::available_on<arch::gfx90a> && cdna_32x32x8_f32f16::available_on<arch::gfx942>);
  STATIC_REQUIRE(cdna2_32x32x8_i32i8::available_on<arch::gfx90a> && !cdna2_32x32x8_i32i8::available_on<arch::gfx942>);
  STATIC_REQUIRE(cdna_32x32x2_f32f32::available_on<arch::gfx90a> && cdna_16x16x4_f32f32::available_on<arch::gfx942> &&
                 !cdna_32x32x2_f32f32::available_on<arch::sm80>);
  STATIC_REQUIRE(cdna_32x32x2_f32f32::K == 2 && cdna_16x16x4_f32f32::K == 4);
  STATIC_REQUIRE(!cdna3_32x32x16_i32i8::available_on<arch::gfx90a> && cdna3_32x32x16_i32i8::available_on<arch::gfx942>);
  STATIC_REQUIRE(cdna3_32x32x16_f32e4m3::available_on<arch::gfx942>);
  STATIC_REQUIRE(!cdna3_32x32x16_f32e4m3::available_on<arch::gfx90a> && !cdna3_32x32x16_f32e4m3::available_on<arch::gfx950>);
  STATIC_REQUIRE(fma_atom<float, float, 32>::available_on<arch::host>);
  STATIC_REQUIRE(!fma_atom<float, float, 32>::available_on<arch::gfx942>);  // warp size differs
  STATIC_REQUIRE(std::is_same_v<cdna3_32x32x16_f32e4m3::a_type, strata::f8_e4m3_fnuz>);
  STATIC_REQUIRE(cdna_32x32x8_f32f16::K == 8 && cdna_16x16x16_f32f16::K == 16 && cdna3_32x32x16_i32i8::K == 16 &&
                 cdna3_16x16x32_i32i8::K == 32 && sm80_16x8x32_s32s8::K == 32);
}

TEST_CASE("FNUZ fp8 types: bias, special values and rounding", "[mma][numeric][fnuz]") {
  using strata::f8_e4m3_fnuz;
  using strata::f8_e5m2_fnuz;
  // 0x38 is 1.0 in OCP E4M3 (bias 7) but 0.5 in E4M3FNUZ (bias 8): the reason for separate types.
  CHECK(static_cast<float>(f8_e4m3_fnuz::from_bits(0x38)) == 0.5f);
  CHECK(f8_e4m3_fnuz(1.0f).bits() == 0x40);
  CHECK(static_cast<float>(f8_e4m3_fnuz::from_bits(0x7F)) == 240.f);
  CHECK(static_cast<float>(f8_e4m3_fnuz::from_bits(0x01)) == std::ldexp(1.f, -10));
  CHECK(static_cast<float>(f8_e5m2_fnuz::from_bits(0x7F)) == 57344.f);
  CHECK(static_cast<float>(f8_e5m2_fnuz::from_bits(0x01)) == std::ldexp(1.f, -17));
  CHECK(f8_e5m2_fnuz(1.0f).bits() == 0x40);
  CHECK(std::isnan(static_cast<float>(f8_e4m3_fnuz::from_bits(0x80))));
  CHECK(f8_e4m3_fnuz(NAN).bits() == 0x80);
  CHECK(f8_e4m3_fnuz(-0.0f).bits() == 0x00);             // no negative zero
  CHECK(f8_e4m3_fnuz(-1e-9f).bits() == 0x00);            // rounds to zero: +0, never the NaN bits
  CHECK(f8_e4m3_fnuz(1000.f).bits() == 0x7F);            // saturates by default
  CHECK(f8_e4m3_fnuz(-1000.f).bits() == 0xFF);
  CHECK(f8_e4m3_fnuz::from_float(1000.f, strata::overflow::propagate).bits() == 0x80);
  CHECK(f8_e4m3_fnuz(-1.5f).bits() == 0xC4);
  // Every non-NaN encoding survives a round trip through float.
  for (int b = 0; b < 256; ++b) {
    if (b == 0x80) continue;
    const auto x = f8_e4m3_fnuz::from_bits(std::uint8_t(b));
    const auto y = f8_e5m2_fnuz::from_bits(std::uint8_t(b));
    INFO("bits " << b);
    CHECK(f8_e4m3_fnuz(static_cast<float>(x)).bits() == b);
    CHECK(f8_e5m2_fnuz(static_cast<float>(y)).bits() == b);
  }
}

// accumulator_rows.hpp: the row slots and lane groups the attention softmax reduces over, and which
// atoms hand their accumulators to the next product as the A operand without a shuffle.
TEST_CASE("accumulator rows: slots, lane groups and the C-is-A property per atom", "[mma][layout][rows]") {
  using sm80 = accumulator_rows<sm80_16x8x16_f32bf16>;
  STATIC_REQUIRE(sm80::count == 2);      // rows g and g + 8
  STATIC_REQUIRE(sm80::lane_bits == 3);  // the 4 lanes of a quad
  STATIC_REQUIRE(sm80::slot_of(0) == 0 && sm80::slot_of(1) == 0 && sm80::slot_of(2) == 1 && sm80::slot_of(3) == 1);
  CHECK(sm80::row_of(5, 0) == 1);
  CHECK(sm80::row_of(5, 1) == 9);
  CHECK(sm80::row_leader(4));
  CHECK_FALSE(sm80::row_leader(6));

  using mfma16 = accumulator_rows<cdna_16x16x16_f32bf16>;
  STATIC_REQUIRE(mfma16::count == 4);        // rows 4 (lane / 16) .. + 3
  STATIC_REQUIRE(mfma16::lane_bits == 15);   // 16 lanes share them
  CHECK(mfma16::row_of(37, 2) == 4 * 2 + 2);
  using mfma32 = accumulator_rows<cdna_32x32x8_f32f16>;
  STATIC_REQUIRE(mfma32::count == 16);
  STATIC_REQUIRE(mfma32::lane_bits == 31);
  using fma = accumulator_rows<fma_atom<float, float, 32>>;
  STATIC_REQUIRE(fma::count == 1);
  STATIC_REQUIRE(fma::lane_bits == 0);

  STATIC_REQUIRE(c_is_a<sm80_16x8x16_f32bf16>);
  STATIC_REQUIRE(c_is_a<sm80_16x8x16_f32f16>);
  STATIC_REQUIRE(c_is_a<fma_atom<float, float, 32>>);
  STATIC_REQUIRE_FALSE(c_is_a<sm80_16x8x8_f32tf32>);
  STATIC_REQUIRE_FALSE(c_is_a<sm89_16x8x32_f32e4m3>);
  STATIC_REQUIRE_FALSE(c_is_a<cdna_16x16x16_f32bf16>);
}
