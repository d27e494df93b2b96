// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/philox.hpp -- the counter-based generator of attention dropout: Philox 4x32-10
// (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123
// library's philox4x32 with 10 rounds), and the dropout mask bit defined from it.
//
// The mask bit of (seed, offset, batch, head, row, col) is a pure function of those six values (row
// and col are positions inside the sequence), so the emulator, every GPU, the forward and the backward
// all see the same mask. One Philox call gives the 16 random bytes of a group of 16 columns of a row:
//   key     = { lo32(seed), hi32(seed) ^ hi32(offset) }
//   group   = (col / 64) * 4 + (col / 2) % 4          the 16 columns of a group: same col / 64, same (col / 2) % 4
//   byte    = ((col / 8) % 8) * 2 + col % 2           0..15
//   counter = { group, row, batch * heads + head, lo32(offset) }
//   draw    = byte `byte` of philox4x32_10(counter, key) (little-endian over its four words)
//   kept    = draw >= t,  t = round(256 p)  (0..256)
// A kept probability is scaled by 256 / (256 - t), so the expected value of P is kept exactly; the
// rate applied is t / 256 (p = 0.1 drops 26 / 256 = 10.2 %), as FlashAttention's 8-bit draws do.
// The groups are the columns one lane of mma.sync's m16n8 C layout holds of a row in 64 keys (columns
// 2 (lane % 4) + {0, 1} of each 8): the forward draws once per 16 of its scores (forward.hpp), where a
// call per score cost 10 rounds of two wide multiplies each. Until 2026-12-07 each column had its own
// 32-bit draw (counter { col / 4, ... }, word col % 4, t = floor(p 2^32)).
#pragma once

#include <cmath>
#include <cstdint>

#include "strata/config/config.hpp"

namespace strata::attn {

struct philox_u32x4 {
  std::uint32_t v[4];
};

STRATA_HOST_DEVICE inline void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

/// Philox 4x32 with 10 rounds (Random123's philox4x32_R(10, ctr, key)).
STRATA_HOST_DEVICE inline philox_u32x4 philox4x32_10(philox_u32x4 ctr, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  STRATA_UNROLL
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += W0;
      k1 += W1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(M0, ctr.v[0], hi0, lo0);
    philox_mulhilo(M1, ctr.v[2], hi1, lo1);
    ctr = {{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
  }
  return ctr;
}

/// The dropout threshold of probability p: round(256 p), 256 (drop everything) from p = 511 / 512 on.
inline std::uint32_t dropout_threshold(float p) {
  const double t = std::floor(static_cast<double>(p) * 256.0 + 0.5);
  return t <= 0.0 ? 0u : t >= 256.0 ? 256u : static_cast<std::uint32_t>(t);
}

/// The factor of a kept probability under threshold t: 256 / (256 - t), so that E[kept x factor] = 1
/// (0 when everything is dropped).
STRATA_HOST_DEVICE inline float dropout_scale(std::uint32_t t) {
  return t >= 256u ? 0.f : 256.f / static_cast<float>(256u - t);
}

/// The dropout group of a column (its 16 random bytes come from one Philox call) and its byte in it.
STRATA_HOST_DEVICE constexpr int dropout_group_of(int col) { return (col >> 6) * 4 + ((col >> 1) & 3); }
STRATA_HOST_DEVICE constexpr int dropout_byte_of(int col) { return ((col >> 3) & 7) * 2 + (col & 1); }

/// The 16 random bytes of dropout group `group` of row `row` of (batch, head).
STRATA_HOST_DEVICE inline philox_u32x4 dropout_draw(std::uint64_t seed, std::uint64_t offset, int batch, int heads, int head,
                                                    int row, int group) {
  const philox_u32x4 c{{static_cast<std::uint32_t>(group), static_cast<std::uint32_t>(row),
                        static_cast<std::uint32_t>(batch * heads + head), static_cast<std::uint32_t>(offset)}};
  return philox4x32_10(c, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32) ^ static_cast<std::uint32_t>(offset >> 32));
}

/// Byte `byte` (0..15) of a draw. Selected without indexing the array at a run-time position, which
/// on AMD put the draw in scratch memory; with `byte` a constant it is one shift and mask.
STRATA_HOST_DEVICE inline std::uint32_t dropout_byte(const philox_u32x4& r, int byte) {
  const int w = byte >> 2;
  const std::uint32_t word = w == 0 ? r.v[0] : w == 1 ? r.v[1] : w == 2 ? r.v[2] : r.v[3];
  return (word >> (8 * (byte & 3))) & 0xFFu;
}

/// True when element (row, col) of (batch, head) is kept under threshold t (dropout_threshold). heads:
/// the query heads of the problem.
STRATA_HOST_DEVICE inline bool dropout_keep(std::uint64_t seed, std::uint64_t offset, std::uint32_t threshold, int batch,
                                            int heads, int head, int row, int col) {
  const philox_u32x4 r = dropout_draw(seed, offset, batch, heads, head, row, dropout_group_of(col));
  return dropout_byte(r, dropout_byte_of(col)) >= threshold;
}

}  // namespace strata::attn
