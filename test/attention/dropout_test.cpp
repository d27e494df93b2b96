// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Attention dropout: the Philox 4x32-10 generator against its published known-answer vectors, the
// mask as a pure function of (seed, offset, batch, head, row, col), and the forward and backward with
// dropout against the reference using the same mask.
#include "grad_support.hpp"

using namespace attn_test;
using host = strata::arch::host;
using sm80 = strata::arch::sm80;

TEST_CASE("philox4x32-10 known-answer vectors", "[attention][dropout]") {
  // Random123 1.x, file examples/kat_vectors (also tests/kat_vectors), lines
  //   philox4x32 10 <ctr0..3> <key0..1>   <out0..3>
  // the all-zeros, all-ones and pi-digits cases.
  struct kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const kat& k : kats) {
    const A::philox_u32x4 r = A::philox4x32_10({{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}}, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) CHECK(r.v[i] == k.out[i]);
  }
}

TEST_CASE("dropout mask: a pure function of its inputs, rate close to the 8-bit threshold's", "[attention][dropout]") {
  // t = round(256 p); everything dropped from p = 511 / 512 on; the scale keeps E[P] exactly.
  CHECK(A::dropout_threshold(0.f) == 0u);
  CHECK(A::dropout_threshold(0.25f) == 64u);
  CHECK(A::dropout_threshold(0.1f) == 26u);
  CHECK(A::dropout_threshold(0.001f) == 0u);
  CHECK(A::dropout_threshold(0.998f) == 255u);
  CHECK(A::dropout_threshold(0.999f) == 256u);
  CHECK(A::dropout_scale(64u) == 256.f / 192.f);
  CHECK(A::dropout_scale(0u) == 1.f);
  CHECK(A::dropout_scale(256u) == 0.f);
  for (const float p : {0.1f, 0.25f, 0.5f, 0.9f}) {
    const std::uint32_t th = A::dropout_threshold(p);
    int kept = 0, n = 0, differ = 0;
    for (int i = 0; i < 96; ++i)
      for (int j = 0; j < 200; ++j) {
        const bool a = A::dropout_keep(42, 7, th, 1, 4, 2, i, j);
        CHECK(a == A::dropout_keep(42, 7, th, 1, 4, 2, i, j));
        differ += a != A::dropout_keep(43, 7, th, 1, 4, 2, i, j);
        kept += a, ++n;
      }
    INFO("p " << p << " threshold " << th);
    CHECK(std::abs(static_cast<double>(kept) / n - (256.0 - th) / 256.0) < 0.02);
    CHECK(differ > n / 20);  // another seed gives another mask
  }
}

TEST_CASE("dropout groups: 16 columns per Philox call, one mma.sync lane's scores of a row in 64 keys", "[attention][dropout]") {
  // Every 64 columns split into 4 groups of 16, each column one byte of its group's draw.
  for (int base : {0, 64, 640}) {
    bool seen[4][16] = {};
    for (int c = base; c < base + 64; ++c) {
      const int g = A::dropout_group_of(c) - base / 64 * 4, byte = A::dropout_byte_of(c);
      REQUIRE((g >= 0 && g < 4 && byte >= 0 && byte < 16));
      CHECK_FALSE(seen[g][byte]);
      seen[g][byte] = true;
    }
  }
  // Lane l of the m16n8 C layout holds columns 8 j + 2 (l % 4) + {0, 1}: group l % 4, byte 2 j + {0, 1},
  // which is how the forward indexes its draws (forward.hpp, grouped_draws).
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 8; ++j)
      for (int e = 0; e < 2; ++e) {
        const int col = 128 + 8 * j + 2 * (l % 4) + e;
        CHECK(A::dropout_group_of(col) == 2 * 4 + l % 4);
        CHECK(A::dropout_byte_of(col) == 2 * j + e);
      }
  // The mask bit is the byte of its group's draw against the threshold.
  const std::uint32_t th = A::dropout_threshold(0.3f);
  for (int row = 0; row < 5; ++row)
    for (int col = 0; col < 300; col += 7) {
      const A::philox_u32x4 d = A::dropout_draw(5, (1ull << 33) + 9, 1, 3, 2, row, A::dropout_group_of(col));
      CHECK(A::dropout_keep(5, (1ull << 33) + 9, th, 1, 3, 2, row, col) == (A::dropout_byte(d, A::dropout_byte_of(col)) >= th));
    }
}

TEST_CASE("attention forward with dropout against the reference", "[attention][dropout]") {
  A::options d;
  d.dropout_p = 0.2f, d.seed = 0x123456789abcdefull, d.offset = 77;
  check<float, 64, 64, host>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 29, .sk = 41, .opt = d});
  A::options dc = d;
  dc.causal = true, dc.dropout_p = 0.5f, dc.offset = (1ull << 32) + 3;
  check<f16, 64, 64, host>({.batch = 1, .heads = 4, .heads_k = 2, .sq = 33, .sk = 20, .opt = dc});
  check<bf16, 128, 128, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 20, .sk = 70, .opt = d});
  // D 64 takes 128-key tiles on sm80: two draws per row per tile, the second for keys 64..127.
  check<f16, 64, 64, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 33, .sk = 300, .opt = d});
  check<f16, 64, 64, strata::arch::gfx942>({.batch = 2, .heads = 2, .heads_k = 2, .sq = 25, .sk = 30, .varlen = true, .opt = d});
}

TEST_CASE("attention backward with dropout against the reference", "[attention][dropout][backward]") {
  A::options d;
  d.dropout_p = 0.3f, d.seed = 99, d.offset = 5;
  check_grad<float, 32, 32, host>({.batch = 2, .heads = 2, .heads_k = 1, .sq = 19, .sk = 27, .opt = d});
  d.causal = true, d.softcap = 3.f;
  check_grad<float, 64, 64, host>({.batch = 1, .heads = 2, .heads_k = 2, .sq = 24, .sk = 24, .opt = d, .sinks = {0.3f, -0.2f}});
  check_grad<f16, 64, 64, sm80>({.batch = 1, .heads = 2, .heads_k = 1, .sq = 18, .sk = 33, .opt = d});
}
