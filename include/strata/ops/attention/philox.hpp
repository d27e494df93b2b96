// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/philox.hpp -- the counter-based generator of attention dropout: Philox 4x32-10
// (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123
// library's philox4x32 with 10 rounds), and the dropout mask bit defined from it.
//
// The mask bit of (seed, offset, batch, head, row, col) is a pure function of those six values (row
// and col are positions inside the sequence), so the emulator, every GPU, the forward and the backward
// all see the same mask:
//   key     = { lo32(seed), hi32(seed) ^ hi32(offset) }
//   counter = { col / 4, row, batch * heads + head, lo32(offset) }
//   r       = philox4x32_10(counter, key)[col % 4]
//   kept    = r >= threshold,  threshold = min(2^32 - 1, floor(p * 2^32))  (p: the dropout probability)
// A kept probability is scaled by 1 / (1 - p); a dropped one is 0.
#pragma once

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

/// The dropout threshold of probability p (drop iff the 32-bit draw is below it).
inline std::uint32_t dropout_threshold(float p) {
  const double t = static_cast<double>(p) * 4294967296.0;
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(t);
}

/// True when element (row, col) of (batch, head) is kept. heads: the query heads of the problem.
STRATA_HOST_DEVICE inline bool dropout_keep(std::uint64_t seed, std::uint64_t offset, std::uint32_t threshold, int batch,
                                            int heads, int head, int row, int col) {
  const philox_u32x4 c{{static_cast<std::uint32_t>(col) >> 2, static_cast<std::uint32_t>(row),
                        static_cast<std::uint32_t>(batch * heads + head), static_cast<std::uint32_t>(offset)}};
  const philox_u32x4 r = philox4x32_10(c, static_cast<std::uint32_t>(seed),
                                       static_cast<std::uint32_t>(seed >> 32) ^ static_cast<std::uint32_t>(offset >> 32));
  // Selected without indexing the array at a run-time position, which on AMD put r in scratch memory.
  const int w = col & 3;
  const std::uint32_t word = w == 0 ? r.v[0] : w == 1 ? r.v[1] : w == 2 ? r.v[2] : r.v[3];
  return word >= threshold;
}

}  // namespace strata::attn
