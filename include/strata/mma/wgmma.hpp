// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/wgmma.hpp -- Hopper warpgroup MMA: wgmma.mma_async with both operands in shared memory
// (sm90_wgmma_ss) or A from registers (sm90_wgmma_rs), sm_90a (atom_family::wgmma), f16 or bf16
// (m64nNk16) or OCP fp8 (m64nNk32) inputs, f32 accumulators.
//
//   using atom = mma::sm90_64xNx16<bf16, 128>;   // D (64 x 128) = A (64 x 16) * B (16 x 128) + D
//   const auto da = mma::smem_descriptor::of(ctx, a_stage, mma::wgmma_swizzle::b128, 16, 1024);
//   const auto db = mma::smem_descriptor::of(ctx, b_stage, mma::wgmma_swizzle::b128, 16, 1024);
//   typename atom::c_fragment acc;
//   mma::wgmma_fence(ctx, acc);                   // before the first wgmma, after acc was written
//   for (int k = 0; k < 4; ++k)                   // K = 64: four k16 steps, 32 bytes apart in a row
//     atom::mma_async(ctx, da.advanced(32 * k), db.advanced(32 * k), acc, /*accumulate=*/k > 0);
//   mma::wgmma_commit(ctx);                       // closes a group of wgmmas
//   mma::wgmma_wait<0>(ctx, acc);                 // all groups but the newest 0 have landed in acc
//
// One instruction is issued by the 128 threads of a warpgroup (ctx.warpgroup(): 4 consecutive warps,
// the first a multiple of 4) together, every thread passing the same descriptors. The result is
// asynchronous: the accumulator registers may not be read (or written) between the issue and the
// wgmma_wait that covers its group; wgmmas that accumulate into the same registers may follow each
// other without a wait (the hardware orders them).
//
// Operands (PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix Layout"): A is 64 x 16 and B is 16 x N, each
// K-major (imm-trans 0: 16 bytes of consecutive k per row of M or N) or MN-major (imm-trans 1, the
// atom's MajorA / MajorB), in one of the canonical layouts, which the 64-bit descriptor names by its
// start address, the leading and stride byte offsets (LBO, SBO) and the swizzle mode. In elements
// of b bytes, with T = 16 / b and W the swizzle's bytes (32, 64, 128; swizzle::none: 16):
//   K-major, no swizzle   row r, col k at (r % 8) * 16 + (r / 8) * SBO + (k % T) * b + (k / T) * LBO
//   K-major, swizzled     row r, col k at (r % 8) * W  + (r / 8) * SBO + k * b                (LBO unused)
//   MN-major, no swizzle  mn, k at (mn % T) * b + (mn / T) * SBO + (k % 8) * 16 + (k / 8) * LBO
//   MN-major, swizzled    mn, k at (mn % (W / b)) * b + (mn / (W / b)) * LBO + (k % 8) * W + (k / 8) * SBO
// and the swizzle then XORs address bits [7, 7 + log2(W / 16)) into bits [4, ...) of the whole shared
// address (CuTe's Swizzle<1..3, 4, 3>): a stage tile whose swizzle pattern starts at its own first
// byte must be aligned to 8 * W bytes (1024 for the 128-byte mode). The descriptor's matrix base
// offset field stays 0 here.
//
// Accumulators (PTX ISA 9.7.15.5.1.1.1, m64nNk16 "Accumulator D"): thread t of the warpgroup (warp
// w = t / 32, lane l) holds N / 2 floats; value i is row 16 w + l / 4 + 8 ((i / 2) % 2), column
// 8 (i / 4) + 2 (l % 4) + i % 2: the m16n8 accumulator map of mma.sync repeated over N / 8 column
// blocks, one 16-row slice per warp.
//
// On the emulator (the kernel's target must list atom_family::wgmma: arch::sm90a):
//   - the warpgroup meets at each wgmma (a warpgroup collective); the last thread to arrive checks
//     that all 128 passed the same descriptors and accumulate flag, reads A and B from the block's
//     shared memory through the descriptors (an operand outside it is a kernel bug; the register-A
//     form gathers A from the 128 threads' fragments by a_coord) and computes
//     D = A * B (+ D) in float, k ascending, each product exact (as the mma.sync atoms: see
//     mma/detail/execute.hpp for the accuracy bound);
//   - D does not land at issue: it is queued per thread and lands at the wgmma_wait covering its
//     group. Meanwhile the accumulator registers hold NaN, so a kernel that reads them too early
//     fails its test. A wgmma's input D is the newest pending result for the same registers, if any;
//   - a wgmma issued without a wgmma_fence since the thread started or since a wait last landed
//     results in its registers is a kernel bug (PTX requires the fence between register accesses and
//     the wgmma that reads the same registers), and so is a result never waited for at thread exit;
//   - wgmma_wait is a warpgroup rendezvous (.sync.aligned); until one lands a wgmma's result, the
//     shared bytes it read are recorded on the block, and a TMA copy into them is a kernel bug: the
//     stage was handed back before the wait covering its reads (copy/tma.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "strata/arch/arch.hpp"
#include "strata/config/config.hpp"
#include "strata/mma/detail/registers.hpp"
#include "strata/mma/detail/wgmma_issue.hpp"
#include "strata/mma/layout.hpp"
#include "strata/numeric/numeric.hpp"
#include "strata/tensor/swizzle.hpp"

#if !STRATA_DEVICE_PASS
#include <string>
#include <vector>
#endif

namespace strata::mma {

/// The swizzle of a wgmma operand in shared memory, as the descriptor encodes it (its bits 62-63).
enum class wgmma_swizzle : std::uint8_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

/// Which dimension of a wgmma operand runs along its 16-byte units in shared memory: K (imm-trans 0)
/// or M for A / N for B (imm-trans 1).
enum class wgmma_major : std::uint8_t { k = 0, mn = 1 };

/// The bytes of one swizzled row: 32, 64 or 128 (16 without swizzle: one core-matrix row).
STRATA_HOST_DEVICE constexpr int swizzle_bytes(wgmma_swizzle s) {
  return s == wgmma_swizzle::b128 ? 128 : s == wgmma_swizzle::b64 ? 64 : s == wgmma_swizzle::b32 ? 32 : 16;
}

/// A shared address under the swizzle: bits [7, 7 + log2(W / 16)) XORed into bits [4, ...).
STRATA_HOST_DEVICE constexpr std::uint32_t swizzled_address(std::uint32_t address, wgmma_swizzle s) {
  return span_swizzled(address, swizzle_bytes(s));
}

/// The shared-memory matrix descriptor of a wgmma operand (PTX ISA 9.7.15.5.1.2.2): start address,
/// leading byte offset and stride byte offset, each in 16-byte units in 14 bits (bits 0-13, 16-29,
/// 32-45), matrix base offset (bits 49-51, 0 here) and swizzle (bits 62-63).
struct smem_descriptor {
  std::uint64_t bits = 0;

  STRATA_HOST_DEVICE static constexpr smem_descriptor encode(std::uint32_t address, std::uint32_t leading_bytes,
                                                             std::uint32_t stride_bytes, wgmma_swizzle s) {
    return {(std::uint64_t(address >> 4) & 0x3FFFu) | ((std::uint64_t(leading_bytes >> 4) & 0x3FFFu) << 16) |
            ((std::uint64_t(stride_bytes >> 4) & 0x3FFFu) << 32) | (std::uint64_t(s) << 62)};
  }

  /// The descriptor of the operand tile at `tile` in this block's shared memory. The address and both
  /// offsets must be multiples of 16 bytes below 256 KiB (the emulator checks).
  template <class Ctx>
  STRATA_HOST_DEVICE static smem_descriptor of(Ctx& ctx, const void* tile, wgmma_swizzle s, std::uint32_t leading_bytes,
                                               std::uint32_t stride_bytes) {
    std::uint32_t address = 0;
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      auto& t = ctx.emulated_thread();
      const auto* p = static_cast<const unsigned char*>(tile);
      const unsigned char* smem = t.block->smem;
      if (p < smem || p >= smem + t.unit->info->shared_total)
        kernel_bug(t, "smem_descriptor::of(): the wgmma operand is not in this block's shared memory");
      address = std::uint32_t(p - smem);
      const auto field_ok = [](std::uint32_t v) { return v % 16 == 0 && v < (1u << 18); };
      if (!field_ok(address) || !field_ok(leading_bytes) || !field_ok(stride_bytes))
        kernel_bug(t, "smem_descriptor::of(): the shared address (" + std::to_string(address) + "), the leading byte offset (" +
                          std::to_string(leading_bytes) + ") and the stride byte offset (" + std::to_string(stride_bytes) +
                          ") must be multiples of 16 below 256 KiB");
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      address = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
#else
      (void)tile;
#endif
    }
    return encode(address, leading_bytes, stride_bytes, s);
  }

  STRATA_HOST_DEVICE constexpr std::uint32_t address() const { return std::uint32_t(bits & 0x3FFFu) << 4; }
  STRATA_HOST_DEVICE constexpr std::uint32_t leading_bytes() const { return std::uint32_t((bits >> 16) & 0x3FFFu) << 4; }
  STRATA_HOST_DEVICE constexpr std::uint32_t stride_bytes() const { return std::uint32_t((bits >> 32) & 0x3FFFu) << 4; }
  STRATA_HOST_DEVICE constexpr int base_offset() const { return int((bits >> 49) & 0x7u); }
  STRATA_HOST_DEVICE constexpr wgmma_swizzle swizzle() const { return wgmma_swizzle((bits >> 62) & 0x3u); }

  /// The same operand with its start `bytes` further on (a multiple of 16): the next k16 step of a
  /// K-major swizzled tile is 32 bytes on (16-bit elements), within the swizzled row.
  STRATA_HOST_DEVICE constexpr smem_descriptor advanced(std::uint32_t bytes) const { return {bits + (bytes >> 4)}; }
};

namespace detail {

/// Byte offset of element (mn, k) of a wgmma operand from the descriptor's start, before the swizzle
/// (the canonical layouts in the header comment).
STRATA_HOST_DEVICE constexpr std::uint32_t wgmma_operand_offset(int mn, int k, int bytes, wgmma_major major,
                                                               wgmma_swizzle s, std::uint32_t lbo, std::uint32_t sbo) {
  const int t = 16 / bytes, w = swizzle_bytes(s);
  const auto u = [](int v) { return std::uint32_t(v); };
  if (major == wgmma_major::k) {
    if (s == wgmma_swizzle::none) return u(mn % 8) * 16 + u(mn / 8) * sbo + u(k % t * bytes) + u(k / t) * lbo;
    return u(mn % 8) * u(w) + u(mn / 8) * sbo + u(k * bytes);
  }
  if (s == wgmma_swizzle::none) return u(mn % t * bytes) + u(mn / t) * sbo + u(k % 8) * 16 + u(k / 8) * lbo;
  const int run = w / bytes;  // elements of one swizzled row
  return u(mn % run * bytes) + u(mn / run) * lbo + u(k % 8) * u(w) + u(k / 8) * sbo;
}

template <class Target>
inline constexpr bool has_wgmma = Target::atoms.has(arch::atom_family::wgmma);

#if !STRATA_DEVICE_PASS
/// What one thread hands the warpgroup collective.
template <class Thread>
struct wgmma_io {
  Thread* thread;
  std::uint64_t a, b;      // descriptors (a: 0 in the register-A form)
  const void* a_values;    // the register-A form: this thread's A fragment
  bool accumulate;
  void* acc;
  std::size_t acc_bytes;
};

/// The newest value the thread's registers at `acc` will hold: a pending result, else the registers.
template <class Thread>
const void* wgmma_current(const Thread& t, const void* acc) {
  for (auto it = t.mma_pending.rbegin(); it != t.mma_pending.rend(); ++it)
    if (it->acc == acc) return it->value.data();
  return acc;
}
#endif

/// What both operand forms share: the shapes, the accumulator map, the target check and the
/// emulator's collective. K = 16 for f16 / bf16, 32 for OCP fp8.
template <class AB, int Cols>
struct wgmma_shape {
  static constexpr bool fp8 = std::is_same_v<AB, f8_e4m3> || std::is_same_v<AB, f8_e5m2>;
  static_assert(std::is_same_v<AB, f16> || std::is_same_v<AB, bf16> || fp8,
                "wgmma takes f16, bf16, f8_e4m3 or f8_e5m2 operands here");
  static_assert(wgmma_issue_has_n<Cols>, "wgmma: N must be 16, 32, 64, 128, 192 or 256");
  static constexpr int M = 64, N = Cols, K = fp8 ? 32 : 16;
  static constexpr int group_threads = 128;
  static constexpr int c_values = N / 2;
  using a_type = AB;
  using b_type = AB;
  using c_type = float;
  using c_fragment = fragment<float, c_values>;
  static constexpr arch::atom_family family = arch::atom_family::wgmma;
  template <class Target>
  static constexpr bool available_on = has_wgmma<Target>;
  template <class Target>
  STRATA_HOST_DEVICE static constexpr void require_target() {
    static_assert(available_on<Target>, "wgmma needs sm_90a (atom_family::wgmma), which the kernel's target does not list");
  }

  /// Row and column of accumulator value i of warpgroup thread t.
  STRATA_HOST_DEVICE static constexpr coord c_coord(int t, int i) {
    const int warp = t / 32, lane = t % 32;
    return {16 * warp + lane / 4 + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)};
  }

  /// Whether c_coord owns each element of the 64 x N tile exactly once.
  static constexpr bool c_map_is_bijection() {
    return owns_each_once<M, N, group_threads, c_values>([](int t, int i) { return c_coord(t, i); });
  }

  /// One warp's share of one 8-column block of the accumulators (rows 16 w .. 16 w + 15 of warp w,
  /// values 4 j .. 4 j + 3 of block j), described as a warp atom for mma::accumulator_rows (a row-wise
  /// softmax on them): lane l holds what warpgroup thread l of warp 0 holds, 16 w rows down. Every
  /// block repeats it, so accumulator value v has the slot of value v % 4.
  struct warp_rows {
    static constexpr int warp_size = 32, M = 16, c_values = 4;
    STRATA_HOST_DEVICE static constexpr coord c_coord(int lane, int v) { return wgmma_shape::c_coord(lane, v); }
  };

#if !STRATA_DEVICE_PASS
  /// The shared bytes an operand's elements span, [lo, hi): recorded on the block until the wgmma
  /// is waited for (block_state::wgmma_reads).
  struct span {
    std::uint32_t lo = ~0u, hi = 0;
  };

  /// Reads an operand through its descriptor: element (mn, k) as a float, its bytes added to `read`.
  /// An element outside the block's shared memory is a kernel bug.
  template <class Thread>
  static float load_operand(Thread& t0, const char* name, smem_descriptor dsc, wgmma_major major, int mn, int k,
                            const char* which, span& read) {
    const std::uint32_t offset = wgmma_operand_offset(mn, k, int(sizeof(AB)), major, dsc.swizzle(),
                                                      dsc.leading_bytes(), dsc.stride_bytes());
    const std::uint32_t address = swizzled_address(dsc.address() + offset, dsc.swizzle());
    const std::size_t smem_bytes = t0.unit->info->shared_total;
    if (std::size_t(address) + sizeof(AB) > smem_bytes)
      kernel_bug(t0, std::string(name) + ": operand " + which + " element (" + std::to_string(mn) + ", k " +
                         std::to_string(k) + ") is at shared address " + std::to_string(address) + ", past the block's " +
                         std::to_string(smem_bytes) + " bytes of shared memory");
    read.lo = address < read.lo ? address : read.lo;
    read.hi = address + std::uint32_t(sizeof(AB)) > read.hi ? address + std::uint32_t(sizeof(AB)) : read.hi;
    AB x;
    std::memcpy(&x, t0.block->smem + address, sizeof x);
    return static_cast<float>(x);
  }

  /// The emulator's body, once per warpgroup on the last thread to arrive: checks that every thread
  /// issued the same wgmma, takes A (64 x K) from `fill_a(A)` and B through its descriptor, computes
  /// D = A * B (+ D) in float, k ascending, each product exact (as the mma.sync atoms: see
  /// mma/detail/execute.hpp for the accuracy bound), and queues each thread's share of D until the
  /// wait; its accumulator registers hold NaN meanwhile.
  template <class Thread, class FillA>
  static void run_collective(const char* name, void* const* all, int threads, wgmma_major major_b, bool same_a,
                             FillA fill_a, span a_read = {}) {
    static_assert(c_map_is_bijection(), "wgmma: c_coord must own each element of D exactly once");
    const auto io_of = [&](int i) -> const wgmma_io<Thread>& { return *static_cast<const wgmma_io<Thread>*>(all[i]); };
    const auto& io0 = io_of(0);
    Thread& t0 = *io0.thread;
    for (int i = 1; i < threads; ++i) {
      const auto& io = io_of(i);
      if ((same_a && io.a != io0.a) || io.b != io0.b || io.accumulate != io0.accumulate)
        kernel_bug(*io.thread, std::string(name) + ": threads of one warpgroup pass different descriptors or "
                   "accumulate flags (thread 0 and thread " + std::to_string(i) + " of the warpgroup); every "
                   "thread must issue the same wgmma");
    }
    const smem_descriptor db{io0.b};
    if (db.base_offset() != 0 || (same_a && smem_descriptor{io0.a}.base_offset() != 0))
      kernel_bug(t0, std::string(name) + ": a descriptor's matrix base offset is not 0; the emulator takes 0 (stage "
                 "tiles aligned to their swizzle pattern)");
    // Up to 84 KB of operands and results: off the fiber's stack (256 KiB by default). Per worker
    // thread, and this function never yields, so no other fiber sees them half-written.
    static thread_local std::vector<float> A, B, D;
    A.resize(M * K);
    B.resize(K * N);
    D.resize(M * N);
    fill_a(A.data(), a_read);
    span b_read;
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n) B[k * N + n] = load_operand(t0, name, db, major_b, n, k, "B", b_read);
    // The operands stay in use until a thread of the warpgroup waits for this wgmma.
    const std::uint64_t id = ++t0.block->wgmma_issued;
    for (const span& r : {a_read, b_read})
      if (r.lo < r.hi) t0.block->wgmma_reads.push_back({t0.block->smem + r.lo, t0.block->smem + r.hi, id});
    for (int i = 0; i < threads; ++i) {
      const auto& io = io_of(i);
      float in[c_values];
      std::memcpy(in, wgmma_current(*io.thread, io.acc), sizeof in);
      for (int v = 0; v < c_values; ++v) {
        const coord x = c_coord(i, v);
        D[x.row * N + x.col] = io0.accumulate ? in[v] : 0.f;
      }
    }
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float s = D[m * N + n];
        for (int k = 0; k < K; ++k) s += A[m * K + k] * B[k * N + n];
        D[m * N + n] = s;
      }
    for (int i = 0; i < threads; ++i) {
      const auto& io = io_of(i);
      Thread& t = *io.thread;
      typename Thread::pending_mma r{io.acc, io.acc_bytes, t.mma_groups, {}, id};
      float out[c_values];
      for (int v = 0; v < c_values; ++v) {
        const coord x = c_coord(i, v);
        out[v] = D[x.row * N + x.col];
      }
      std::memcpy(r.value.data(), out, sizeof out);
      t.mma_pending.push_back(r);
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (int v = 0; v < c_values; ++v) std::memcpy(static_cast<unsigned char*>(io.acc) + v * sizeof(float), &nan, sizeof nan);
    }
  }

  /// The emulated issue of both forms: the fence check, then the warpgroup collective, whose last
  /// thread to arrive runs `Body{}(thread_tag, all, threads)` (a captureless lambda; the tag, a null
  /// pointer to the emulator's thread type, names that type for run_collective).
  template <class Body, class Ctx>
  static void issue_emulated(Ctx& ctx, const char* name, std::uint64_t a, std::uint64_t b, const void* a_values,
                             bool accumulate, c_fragment& d) {
    auto& t = ctx.emulated_thread();
    if (!t.mma_fenced)
      kernel_bug(t, std::string(name) + " issued without a wgmma_fence since the thread started or since a "
                 "wgmma_wait last landed results: PTX requires wgmma.fence between writes to the accumulator "
                 "registers and the wgmma that reads them");
    using thread_type = std::remove_reference_t<decltype(t)>;
    wgmma_io<thread_type> io{&t, a, b, a_values, accumulate, &d, sizeof d};
    ctx.warpgroup().gather(name, &io, [](void* const* all, int threads) { Body{}(static_cast<thread_type*>(nullptr), all, threads); });
  }
#endif
};

}  // namespace detail

/// D (64 x N, f32) = A (64 x K) * B (K x N) + D with both operands in shared memory: K = 16 for f16 /
/// bf16, 32 for OCP fp8 (f8_e4m3 / f8_e5m2; K-major only, as PTX has it), N one that the device code
/// covers (16, 32, 64, 128, 192, 256). MajorA / MajorB: the operands' order in shared memory
/// (wgmma_major). Named by its shapes below: sm90_64xNx16 and sm90_64xNx32.
template <class AB, int Cols, wgmma_major MajorA = wgmma_major::k, wgmma_major MajorB = wgmma_major::k>
struct sm90_wgmma_ss : detail::wgmma_shape<AB, Cols> {
  using base = detail::wgmma_shape<AB, Cols>;
  using base::fp8, base::N, base::c_values;
  using typename base::c_fragment;
  static_assert(!fp8 || (MajorA == wgmma_major::k && MajorB == wgmma_major::k),
                "wgmma with fp8 operands reads both K-major (PTX has no imm-trans for 8-bit types)");
  static constexpr wgmma_major major_a = MajorA, major_b = MajorB;
  static constexpr const char* name = std::is_same_v<AB, f16>    ? "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"
                                     : std::is_same_v<AB, bf16> ? "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16"
                                     : std::is_same_v<AB, f8_e4m3> ? "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3"
                                                                   : "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2";

  /// Issues D = A * B (+ D when `accumulate`) for the warpgroup; every thread of it calls this with the
  /// same descriptors and flag. D lands at the wgmma_wait covering the group this wgmma joins.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void mma_async(Ctx& ctx, smem_descriptor a, smem_descriptor b,
                                                              c_fragment& d, bool accumulate = true) {
    base::template require_target<typename Ctx::target>();
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      const auto body = [](auto* tag, void* const* all, int threads) {
        using thread_type = std::remove_pointer_t<decltype(tag)>;
        const auto& io0 = *static_cast<const detail::wgmma_io<thread_type>*>(all[0]);
        const smem_descriptor da{io0.a};
        thread_type& t0 = *io0.thread;
        base::template run_collective<thread_type>(name, all, threads, MajorB, true, [&](float* A, typename base::span& read) {
          for (int m = 0; m < base::M; ++m)
            for (int k = 0; k < base::K; ++k) A[m * base::K + k] = base::load_operand(t0, name, da, MajorA, m, k, "A", read);
        });
      };
      base::template issue_emulated<decltype(body)>(ctx, name, a.bits, b.bits, nullptr, accumulate, d);
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      static_assert(base::template available_on<arch::current>, "wgmma: this pass compiles for a GPU without it (sm_90a only)");
#endif
      if constexpr (fp8) detail::wgmma_issue<N>::template run_f8<AB>(d.v, a.bits, b.bits, accumulate ? 1 : 0);
      else detail::wgmma_issue<N>::template run<AB, int(MajorA), int(MajorB)>(d.v, a.bits, b.bits, accumulate ? 1 : 0);
    }
  }
};

/// D (64 x N, f32) = A (64 x K) * B (K x N) + D with A from registers (each thread of the warpgroup
/// holds its a_values elements, a_coord says which) and B in shared memory, MajorB as in
/// sm90_wgmma_ss (fp8: K-major only). The A fragment map is the m16n8k16 (m16n8k32 for fp8) A map of
/// mma.sync, one 16-row slice per warp; it equals the accumulator map of 8-column blocks 2j and
/// 2j + 1 (fp8: blocks 4j..4j + 3, bytes permuted within a quad), so an attention kernel converts the
/// accumulators of S = Q K^T into P's A fragments in place (accumulator_is_a_fragment says where).
///
/// PTX forbids touching the A registers until the wgmma_wait covering the group; in C++ the fragment
/// is passed by value into the instruction and ptxas keeps the registers until the wgmma has read
/// them, so a kernel may reuse its variable at once.
template <class AB, int Cols, wgmma_major MajorB = wgmma_major::k>
struct sm90_wgmma_rs : detail::wgmma_shape<AB, Cols> {
  using base = detail::wgmma_shape<AB, Cols>;
  using base::fp8, base::N, base::K, base::c_values;
  using typename base::c_fragment;
  static_assert(!fp8 || MajorB == wgmma_major::k, "wgmma with fp8 operands reads B K-major (no imm-trans for 8-bit types)");
  static constexpr wgmma_major major_b = MajorB;
  static constexpr int a_values = fp8 ? 16 : 8;
  using a_fragment = fragment<AB, a_values>;
  static constexpr const char* name =
      std::is_same_v<AB, f16>       ? "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 (A from registers)"
      : std::is_same_v<AB, bf16>    ? "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 (A from registers)"
      : std::is_same_v<AB, f8_e4m3> ? "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 (A from registers)"
                                    : "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2 (A from registers)";

  /// Row and column of A value i of warpgroup thread t (PTX ISA 9.7.15.5.1.1, "Register fragment
  /// layout for matrix A"): 16-bit, row 16 w + l / 4 + 8 ((i / 2) % 2), column 2 (l % 4) + i % 2 +
  /// 8 (i / 4); 8-bit, row 16 w + l / 4 + 8 ((i / 4) % 2), column 4 (l % 4) + i % 4 + 16 (i / 8).
  STRATA_HOST_DEVICE static constexpr coord a_coord(int t, int i) {
    const int warp = t / 32, lane = t % 32;
    if constexpr (fp8) return {16 * warp + lane / 4 + 8 * ((i >> 2) & 1), 4 * (lane % 4) + (i & 3) + 16 * (i >> 3)};
    else return {16 * warp + lane / 4 + 8 * ((i >> 1) & 1), 2 * (lane % 4) + (i & 1) + 8 * (i >> 2)};
  }

  static constexpr bool a_map_is_bijection() {
    return owns_each_once<base::M, K, base::group_threads, a_values>([](int t, int i) { return a_coord(t, i); });
  }
  static_assert(a_map_is_bijection(), "wgmma: a_coord must own each element of A exactly once");

  /// Whether A value i of every thread is, for 16-bit operands, the accumulator value `c_first + i`
  /// of an accumulator whose columns are K: the k16 step s of P's A operand is accumulator values
  /// [8 s, 8 s + 8) of S, in order. True for f16 / bf16 (checked here over every thread); the fp8
  /// A map needs a byte permute within each quad of lanes and is false.
  static constexpr bool accumulator_is_a_fragment() {
    if constexpr (fp8) return false;
    else {
      for (int t = 0; t < base::group_threads; ++t)
        for (int i = 0; i < a_values; ++i) {
          const coord a = a_coord(t, i), c = base::c_coord(t, i);
          if (a.row != c.row || a.col != c.col) return false;
        }
      return true;
    }
  }

  /// The A fragment as the four 32-bit registers the instruction reads, lower-numbered values in the
  /// lower bits. A kernel that converts P and then issues several wgmmas packs first and names the
  /// packed fragments in wgmma_fence, so no repacking (a register write) falls after the fence.
  using a_registers = fragment<std::uint32_t, 4>;
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static constexpr a_registers pack(const a_fragment& a) {
    return {{detail::reg32(a, 0), detail::reg32(a, 1), detail::reg32(a, 2), detail::reg32(a, 3)}};
  }
  /// Value i of a packed fragment.
  STRATA_HOST_DEVICE static constexpr AB value_of(const a_registers& r, int i) {
    constexpr int per = 4 / int(sizeof(AB));
    using bits_type = decltype(AB{}.bits());
    return AB::from_bits(bits_type(r[i / per] >> (8 * int(sizeof(AB)) * (i % per))));
  }

  /// Issues D = A * B (+ D when `accumulate`) for the warpgroup; every thread passes its own A fragment
  /// and the same B descriptor and flag. D lands at the wgmma_wait covering the group.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void mma_async(Ctx& ctx, const a_registers& a, smem_descriptor b,
                                                              c_fragment& d, bool accumulate = true) {
    base::template require_target<typename Ctx::target>();
    if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
      const auto body = [](auto* tag, void* const* all, int threads) {
        using thread_type = std::remove_pointer_t<decltype(tag)>;
        base::template run_collective<thread_type>(name, all, threads, MajorB, false, [&](float* A, typename base::span&) {
          for (int i = 0; i < threads; ++i) {
            const auto& r = *static_cast<const a_registers*>(static_cast<const detail::wgmma_io<thread_type>*>(all[i])->a_values);
            for (int v = 0; v < a_values; ++v) {
              const coord x = a_coord(i, v);
              A[x.row * K + x.col] = static_cast<float>(value_of(r, v));
            }
          }
        });
      };
      base::template issue_emulated<decltype(body)>(ctx, name, 0, b.bits, &a, accumulate, d);
#endif
    } else {
      (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
      static_assert(base::template available_on<arch::current>, "wgmma: this pass compiles for a GPU without it (sm_90a only)");
#endif
      if constexpr (fp8) detail::wgmma_issue<N>::template run_rs_f8<AB>(d.v, a.v, b.bits, accumulate ? 1 : 0);
      else detail::wgmma_issue<N>::template run_rs<AB, int(MajorB)>(d.v, a.v, b.bits, accumulate ? 1 : 0);
    }
  }

  /// The same with the A fragment as values (packed here).
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static void mma_async(Ctx& ctx, const a_fragment& a, smem_descriptor b,
                                                              c_fragment& d, bool accumulate = true) {
    mma_async(ctx, pack(a), b, d, accumulate);
  }
};

/// wgmma m64nNk16 with f16 or bf16 operands.
template <class AB, int Cols, wgmma_major MajorA = wgmma_major::k, wgmma_major MajorB = wgmma_major::k>
using sm90_64xNx16 = sm90_wgmma_ss<AB, Cols, MajorA, MajorB>;

/// wgmma m64nNk32 with OCP fp8 operands (f8_e4m3 or f8_e5m2, the same for A and B), both K-major.
template <class F8, int Cols>
using sm90_64xNx32 = sm90_wgmma_ss<F8, Cols>;

/// wgmma m64nNk16, f16 or bf16, A from registers (an attention kernel's P), B in shared memory.
template <class AB, int Cols, wgmma_major MajorB = wgmma_major::k>
using sm90_64xNx16_rs = sm90_wgmma_rs<AB, Cols, MajorB>;

/// wgmma m64nNk32, OCP fp8, A from registers, B K-major in shared memory.
template <class F8, int Cols>
using sm90_64xNx32_rs = sm90_wgmma_rs<F8, Cols>;


/// fence.proxy.async.shared::cta: this thread's earlier generic stores to shared memory become visible
/// to the asynchronous proxy (the wgmma operand reads, TMA stores). Each writing thread fences, then
/// a barrier orders the writes before the wgmma. A no-op on the emulator, whose wgmma reads shared
/// memory as it is when the warpgroup meets.
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void fence_async_shared(Ctx& ctx) {
  (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// wgmma.commit_group: the wgmmas this thread issued since the last commit form one group.
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void wgmma_commit(Ctx& ctx) {
  static_assert(detail::has_wgmma<typename Ctx::target>, "wgmma needs sm_90a (atom_family::wgmma)");
  if constexpr (Ctx::emulated) {
    ++ctx.emulated_thread().mma_groups;
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
  }
}

/// Keeps the compiler from moving accesses to a fragment's registers across a wgmma wait or issue
/// (the registers change behind its back, or are read by a wgmma behind it): accumulators, and the A
/// fragments of the register-A form (as their 32-bit registers).
template <class T, int Values>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void wgmma_fence_operand(fragment<T, Values>& f) {
#if STRATA_CUDA_DEVICE_PASS
  if constexpr (std::is_same_v<T, float>) {
    STRATA_UNROLL
    for (int i = 0; i < Values; ++i) asm volatile("" : "+f"(f.v[i])::"memory");
  } else {
    static_assert(sizeof(f.v) % 4 == 0, "a wgmma operand fragment fills whole 32-bit registers");
    std::uint32_t r[sizeof(f.v) / 4];
    std::memcpy(r, f.v, sizeof r);
    STRATA_UNROLL
    for (int i = 0; i < int(sizeof(f.v) / 4); ++i) asm volatile("" : "+r"(r[i])::"memory");
    std::memcpy(f.v, r, sizeof r);
  }
#else
  (void)f;
#endif
}

/// wgmma.fence: orders this thread's earlier register accesses (writes to accumulators, A fragments)
/// before the wgmmas that follow. Needed before a warpgroup's first wgmma and after its accumulators
/// were written by anything but a wgmma. Name the accumulators the wgmmas will use (`acc...`), and the
/// A fragments of register-A wgmmas: the compiler then also keeps its own writes to them (a zeroing,
/// a conversion, an epilogue's reads) on their side of the fence, which it could otherwise move
/// across it; ptxas then has no register write between the fence and the wgmma to fence again
/// (its "warpgroup.arrive is injected" notes, C7519).
template <class Ctx, class... Acc>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void wgmma_fence(Ctx& ctx, Acc&... acc) {
  static_assert(detail::has_wgmma<typename Ctx::target>, "wgmma needs sm_90a (atom_family::wgmma)");
  if constexpr (Ctx::emulated) {
    ctx.emulated_thread().mma_fenced = true;
    (void)sizeof...(acc);
  } else {
    (void)ctx;
    (wgmma_fence_operand(acc), ...);
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
  }
}

/// wgmma.wait_group Pending: every group this thread committed but the `Pending` newest has landed;
/// the accumulators `acc...` (those of the wgmmas waited for) may then be read.
template <int Pending, class Ctx, class... Acc>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void wgmma_wait(Ctx& ctx, Acc&... acc) {
  static_assert(detail::has_wgmma<typename Ctx::target>, "wgmma needs sm_90a (atom_family::wgmma)");
  static_assert(Pending >= 0 && Pending <= 7, "wgmma.wait_group takes 0..7 pending groups");
  if constexpr (Ctx::emulated) {
#if !STRATA_DEVICE_PASS
    auto& t = ctx.emulated_thread();
    // wgmma.wait_group is .sync.aligned: the warpgroup waits together. So no thread lands a result
    // (and lets a stage go) while another thread of the group has not reached its wait.
    ctx.warpgroup().gather("wgmma.wait_group", nullptr, [](void* const*, int) {});
    if (t.mma_groups < std::uint32_t(Pending)) return;
    const std::uint32_t landed_below = t.mma_groups - std::uint32_t(Pending);
    auto& q = t.mma_pending;
    std::size_t kept = 0;
    bool landed = false;
    auto& reads = t.block->wgmma_reads;
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (q[i].group < landed_below) {
        landed = true;
        // The wgmma is done: its operands may be overwritten from now on.
        for (std::size_t j = 0; j < reads.size();)
          if (reads[j].id == q[i].operands) reads.erase(reads.begin() + std::ptrdiff_t(j));
          else ++j;
        // A newer wgmma into the same registers is still pending: they keep its poison.
        bool superseded = false;
        for (std::size_t j = i + 1; j < q.size(); ++j) superseded = superseded || q[j].acc == q[i].acc;
        if (!superseded) std::memcpy(q[i].acc, q[i].value.data(), q[i].bytes);
      } else {
        q[kept++] = q[i];
      }
    }
    q.resize(kept);
    if (landed) t.mma_fenced = false;
    (void)sizeof...(acc);
#endif
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
    (wgmma_fence_operand(acc), ...);
  }
}

}  // namespace strata::mma
