// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/bank_model.hpp -- what one warp-wide shared-memory access costs, in 128-byte
// wavefronts, under a bank model. A MODEL, not a measurement: it is the model of the attention
// review (shared/research/attention-forensic.md section 3 and its banks.py), whose totals predicted
// the measured H200 times of the attention kernels within 20-25 %. Nsight Compute's
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_* counters are the ground truth on a GPU.
//
// The model (NVIDIA, 32 lanes; and CDNA, 64-lane wavefronts):
//   - shared memory is 32 banks of 4-byte words; word w lies in bank w % 32;
//   - a warp request is served in phases of at most 128 bytes: lanes_per_phase = min(warp size,
//     128 / access bytes) consecutive lanes form a phase (NVIDIA: accesses of <= 4 bytes are one phase
//     of the whole warp, 8 bytes two half-warp phases, 16 bytes four quarter-warp phases; CDNA: 4 bytes
//     two phases of 32 lanes, 8 bytes 16 lanes, 16 bytes 8 lanes, 1 and 2 bytes one phase of 64);
//   - a phase costs max over the banks of the number of DISTINCT words it touches in that bank: lanes
//     reading the same word share it (broadcast), two words of one bank take two wavefronts;
//   - ldmatrix (.x1/.x2/.x4): each 8x8 matrix is 8 row addresses of 16 bytes, i.e. one phase of the
//     16-byte rule (lanes 8m .. 8m+7 give matrix m), so an .x4 costs at least 4;
//   - the ideal (minimum) of a request is its number of phases with at least one active lane (a phase
//     holds at most 128 bytes, so each needs one wavefront however its words fall).
// Not modelled: writes and reads competing in one cycle, the extra cycle of a misaligned vector, and
// anything about timing; the counts are what the hardware must at least do, per request.
#pragma once

#include <cstdint>

namespace strata::emulator::bank_model {

inline constexpr int banks = 32;
inline constexpr int bank_bytes = 4;
inline constexpr int wavefront_bytes = banks * bank_bytes;  // 128
/// A lane that takes no part in a request (predicated off, or past the addresses an atom uses).
inline constexpr std::uint32_t inactive = 0xFFFFFFFFu;

struct cost {
  int wavefronts = 0;
  int ideal = 0;
  friend constexpr bool operator==(const cost&, const cost&) = default;
};

/// Consecutive lanes served together by an access of `bytes` bytes per lane (1, 2, 4, 8 or 16).
constexpr int lanes_per_phase(int bytes, int warp_size) {
  const int per = wavefront_bytes / (bytes < 1 ? 1 : bytes);
  return per < warp_size ? per : warp_size;
}

/// The cost of one phase: `n` lanes' byte offsets in shared memory (inactive: no access), `bytes` each.
constexpr cost phase_cost(const std::uint32_t* offset, int n, int bytes) {
  // Distinct words of the phase: at most 32 lanes of 16 bytes (NVIDIA) or 64 of 2 bytes (CDNA).
  std::uint32_t words[128] = {};
  int count = 0;
  for (int l = 0; l < n; ++l) {
    if (offset[l] == inactive) continue;
    const std::uint32_t first = offset[l] / bank_bytes, last = (offset[l] + static_cast<std::uint32_t>(bytes) - 1) / bank_bytes;
    for (std::uint32_t w = first; w <= last && count < 128; ++w) {
      bool seen = false;
      for (int i = 0; i < count && !seen; ++i) seen = words[i] == w;
      if (!seen) words[count++] = w;
    }
  }
  if (count == 0) return {};
  int per_bank[banks] = {};
  int worst = 0;
  for (int i = 0; i < count; ++i) {
    const int b = static_cast<int>(words[i] % banks);
    if (++per_bank[b] > worst) worst = per_bank[b];
  }
  return {worst, 1};
}

/// The cost of one warp-wide request of `bytes` bytes per lane: `lanes` offsets (lane order).
constexpr cost request_cost(const std::uint32_t* offset, int lanes, int bytes, int warp_size) {
  const int per = lanes_per_phase(bytes, warp_size);
  cost total;
  for (int p = 0; p < lanes; p += per) {
    const cost c = phase_cost(offset + p, lanes - p < per ? lanes - p : per, bytes);
    total.wavefronts += c.wavefronts;
    total.ideal += c.ideal;
  }
  return total;
}

/// ldmatrix .x`matrices`: `rows[8 m + r]` is the offset of row r of matrix m (16 bytes each).
constexpr cost ldmatrix_cost(const std::uint32_t* rows, int matrices) {
  return request_cost(rows, 8 * matrices, 16, 32);
}

}  // namespace strata::emulator::bank_model
