// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/cp_async.hpp -- asynchronous global -> shared copies (PTX cp.async, sm80+).
//
//   copy::cp_async<16>(ctx, smem_dst, gmem_src);           // issue: 16 bytes, lands later
//   copy::cp_async<16>(ctx, smem_dst, gmem_src, n_bytes);  // reads n_bytes (0..16), zero-fills the rest
//   copy::cp_async_commit(ctx);                             // close the group of copies issued so far
//   copy::cp_async_wait<1>(ctx);                            // all groups but the newest 1 have landed
//   copy::cp_async_wait_all(ctx);                           // everything issued has landed
//
// PTX (ISA "Data Movement and Conversion Instructions: cp.async"): `cp.async.ca.shared.global [dst],
// [src], cp-size{, src-size}` with cp-size 4, 8 or 16 bytes, `.cg` (cache at L2 only) for 16 bytes;
// src-size < cp-size reads src-size bytes and writes zeros to the rest, so src-size 0 is a predicated-
// off copy that reads nothing. Copies are per thread: each thread commits, and waits for, its own
// groups. `cp.async.wait_group N` waits until at most the N most recent groups are pending;
// `cp.async.wait_all` is commit_group followed by wait_group 0, so it also covers copies issued after
// the last commit. The data a thread waited for is visible to that thread; other threads of the
// block see it after a block barrier that follows the wait (the pattern: wait, then block.sync()).
//
// On the emulator (the kernel's target must have atom_family::cp_async, e.g. arch::sm80):
//   - at issue the destination bytes are poisoned (0xFF: NaN as a float) and the copy is queued in
//     the thread's async_pending; nothing is read yet;
//   - commit closes a group; wait<N> lands, in issue order, all groups but the N most recent; so a
//     kernel that reads a stage before waiting reads NaN and fails its test, as it would on a GPU;
//   - a wait<N> with N at or above the number of outstanding groups lands nothing and is not an
//     error (the GPU does not wait either); wait_all lands uncommitted copies too;
//   - copies outstanding when a thread exits land at its exit (as they eventually do on a GPU);
//     those of a thread unwound by a failed block are dropped;
//   - misuse is reported with the kernel, block and thread: a destination outside the block's shared
//     memory, an address that is not a multiple of the copy size, src-size above cp-size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"

namespace strata::copy {

/// Where cp.async allocates the line: `.ca` caches in L1 and L2 (4, 8, 16 bytes), `.cg` in L2 only
/// (16 bytes; streaming tiles that each block reads once).
enum class cache_level { all, global };

template <int Bytes>
inline constexpr cache_level default_cache_level = Bytes == 16 ? cache_level::global : cache_level::all;

namespace detail {

template <class Ctx>
STRATA_HOST_DEVICE constexpr bool require_cp_async() {
  return target_lacks_cp_async<typename Ctx::target>::ok;
}

}  // namespace detail

/// Issues one asynchronous copy of `Bytes` bytes from global `src` to shared `dst`, reading only the
/// first `src_bytes` (0..Bytes) and zero-filling the rest. Both addresses must be multiples of Bytes.
/// With src_bytes == 0 nothing is read (keep `src` a valid address anyway: tools check it).
template <int Bytes, cache_level Cache = default_cache_level<Bytes>, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void cp_async(Ctx& ctx, void* dst, const void* src, int src_bytes = Bytes) {
  static_assert(detail::require_cp_async<Ctx>());
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  static_assert(Cache == cache_level::all || Bytes == 16,
                "cp.async.cg (L2 only) exists for 16-byte copies; use cache_level::all (.ca) for 4 or 8 bytes");
  if constexpr (Ctx::emulated) {
    auto& t = ctx.emulated_thread();
    auto* d = static_cast<unsigned char*>(dst);
    const unsigned char* smem = t.block->smem;
    if (d < smem || d + Bytes > smem + t.unit->info->shared_total)
      kernel_bug(t, "cp.async writes shared memory only; its destination is not in this block's shared memory");
    if (reinterpret_cast<std::uintptr_t>(dst) % Bytes != 0 || reinterpret_cast<std::uintptr_t>(src) % Bytes != 0)
      kernel_bug(t, "cp.async of " + std::to_string(Bytes) + " bytes needs source and destination addresses that are "
                 "multiples of " + std::to_string(Bytes));
    if (src_bytes < 0 || src_bytes > Bytes)
      kernel_bug(t, "cp.async: src-size " + std::to_string(src_bytes) + " is outside 0.." + std::to_string(Bytes));
    // Shared-memory statistics: the write into shared memory, a Bytes-wide store at issue
    // (emulator/statistics.hpp); the poison and the landing are the atom's own accesses.
    count_cp_async_write(t, d, Bytes);
    auto counted = enter_counted_atom(t);
    std::memset(d, 0xFF, Bytes);  // poison until the wait that covers it
    if (src_bytes > 0) t.async_pending.push_back({d, src, static_cast<std::size_t>(src_bytes)});
    if (src_bytes < Bytes) t.async_pending.push_back({d + src_bytes, nullptr, static_cast<std::size_t>(Bytes - src_bytes)});
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (Cache == cache_level::global) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(Bytes), "r"(src_bytes)
                   : "memory");
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(Bytes), "r"(src_bytes)
                   : "memory");
    }
#else
    (void)dst, (void)src, (void)src_bytes;
#endif
  }
}

/// All or nothing: the whole `Bytes` when `pred`, else zeros (src is not read). On CUDA this is
/// cp.async's ignore-src predicate form: one LDGSTS under a predicate. A run-time src-size (the form
/// above) compiles to address arithmetic per copy on sm_80/sm_90 (the zero-fill count is folded into
/// the source address: about four integer instructions per copy in the GEMM's K loop).
template <int Bytes, cache_level Cache = default_cache_level<Bytes>, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void cp_async_if(Ctx& ctx, bool pred, void* dst, const void* src) {
  if constexpr (Ctx::emulated) {
    cp_async<Bytes, Cache>(ctx, dst, src, pred ? Bytes : 0);
  } else {
    static_assert(detail::require_cp_async<Ctx>());
    static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
    static_assert(Cache == cache_level::all || Bytes == 16,
                  "cp.async.cg (L2 only) exists for 16-byte copies; use cache_level::all (.ca) for 4 or 8 bytes");
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const int ignore = pred ? 0 : 1;
    if constexpr (Cache == cache_level::global) {
      asm volatile(
          "{\n .reg .pred ignore;\n setp.ne.b32 ignore, %2, 0;\n"
          " cp.async.cg.shared.global [%0], [%1], %3, ignore;\n}\n" ::"r"(s),
          "l"(src), "r"(ignore), "n"(Bytes)
          : "memory");
    } else {
      asm volatile(
          "{\n .reg .pred ignore;\n setp.ne.b32 ignore, %2, 0;\n"
          " cp.async.ca.shared.global [%0], [%1], %3, ignore;\n}\n" ::"r"(s),
          "l"(src), "r"(ignore), "n"(Bytes)
          : "memory");
    }
#else
    (void)pred, (void)dst, (void)src;
#endif
  }
}

/// Closes the group of this thread's copies issued since the last commit (an empty group is fine
/// and keeps group counting uniform at the end of a pipeline).
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void cp_async_commit(Ctx& ctx) {
  static_assert(detail::require_cp_async<Ctx>());
  if constexpr (Ctx::emulated) {
    auto& t = ctx.emulated_thread();
    t.async_groups.push_back(t.async_pending.size());
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
}

/// Waits until at most the `Pending` most recent committed groups of this thread are in flight: every
/// older group has landed (in issue order on the emulator).
template <int Pending, class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void cp_async_wait(Ctx& ctx) {
  static_assert(detail::require_cp_async<Ctx>());
  static_assert(Pending >= 0 && Pending <= 255, "cp.async.wait_group takes a count of 0..255 pending groups");
  if constexpr (Ctx::emulated) {
    auto& t = ctx.emulated_thread();
    const std::size_t groups = t.async_groups.size();
    if (groups > static_cast<std::size_t>(Pending)) land_async_groups(t, groups - Pending);
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
  }
}

/// Waits for every copy this thread issued, committed or not.
template <class Ctx>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void cp_async_wait_all(Ctx& ctx) {
  static_assert(detail::require_cp_async<Ctx>());
  if constexpr (Ctx::emulated) {
    land_all_async(ctx.emulated_thread());
  } else {
    (void)ctx;
#if STRATA_CUDA_DEVICE_PASS
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  }
}

}  // namespace strata::copy
