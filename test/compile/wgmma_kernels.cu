// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/wgmma_kernels.cu -- the Hopper warpgroup MMA atom (mma/wgmma.hpp) compiled for sm_90a:
// a warpgroup stages A (64 x 64) and B (64 x N) K-major in 128-byte swizzled shared memory, or
// N-major for the second B form, chains four k16 wgmmas through advanced descriptors, waits and
// stores D. The PTX must hold the instructions the atom claims; nothing may spill (N = 256 keeps 128
// accumulators per thread). The register-A form (sm90_wgmma_rs) is compiled as attention's inner
// step: S = Q K^T from shared memory, then O = P V with P, S rounded in registers, as the A operand.
// The emulator runs the same atoms in test/mma/wgmma_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: wgmma_bf16_n128_kernel wgmma_f16_n256_kernel wgmma_bf16_n64_nmajor_kernel wgmma_rs_attention_step_kernel
// compile-expect-code sm_90a: wgmma m64n128k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma m64n256k16 f16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16
// compile-expect-code sm_90a: wgmma m64n64k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma.fence = wgmma\.fence\.sync\.aligned
// compile-expect-code sm_90a: wgmma.commit_group = wgmma\.commit_group\.sync\.aligned
// compile-expect-code sm_90a: wgmma.wait_group = wgmma\.wait_group\.sync\.aligned
// compile-expect-code sm_90a: wgmma with A from registers = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}
// compile-expect-code sm_90a: generic-to-async proxy fence = fence\.proxy\.async\.shared::cta
#include <cstdint>

#include "strata/mma/wgmma.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/strata.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm90a"
#endif

namespace strata_test {

namespace mma = strata::mma;

template <class T>
struct wgmma_params {
  const T* a;  // 64 x 64 row-major (K-major)
  const T* b;  // N x 64 row-major (K-major), or 64 x N row-major (N-major)
  float* d;    // 64 x N row-major
};

/// One warpgroup (128 threads): D = A * B over K = 64, B K-major (MajorB k) or N-major.
template <class Atom>
struct wgmma_kernel {
  using target = strata::arch::sm90a;
  using T = typename Atom::a_type;
  static constexpr int M = Atom::M, N = Atom::N, K = 64;
  static constexpr bool b_n_major = Atom::major_b == mma::wgmma_major::mn;

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const wgmma_params<T>& p) const {
    const int tid = ctx.warpgroup().thread_rank();
    // Tiles on 1024-byte boundaries (the 128-byte swizzle's period); the launch asks 1 KiB extra.
    unsigned char* base = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t misaligned = mma::smem_descriptor::of(ctx, base, mma::wgmma_swizzle::none, 0, 0).address() % 1024;
    T* sa = reinterpret_cast<T*>(base + (1024 - misaligned) % 1024);
    T* sb = sa + M * K;
    // 16-byte units: unit u of row r lands at unit u ^ (r % 8) (the 128-byte mode). K-major rows hold
    // 64 k; N-major rows hold 64 n, one 64 x 64 block of rows per 64 columns of N.
    using vec = strata::copy::detail::raw_vector<16>;
    for (int v = tid; v < M * K / 8; v += 128) {
      const int r = v / 8, u = v % 8;
      reinterpret_cast<vec*>(sa)[r * 8 + (u ^ (r % 8))] = reinterpret_cast<const vec*>(p.a)[v];
    }
    for (int v = tid; v < N * K / 8; v += 128) {
      const int r = v / 8, u = v % 8;  // r: a row of 64 elements (an n of K-major B, or (n block, k) of N-major B)
      const int src = b_n_major ? ((r % K) * N + (r / K) * 64) / 8 + u : v;
      reinterpret_cast<vec*>(sb)[r * 8 + (u ^ (r % 8))] = reinterpret_cast<const vec*>(p.b)[src];
    }
    mma::fence_async_shared(ctx);
    ctx.block().sync();

    typename Atom::c_fragment acc;
    mma::wgmma_fence(ctx, acc);
    const auto da = mma::smem_descriptor::of(ctx, sa, mma::wgmma_swizzle::b128, 16, 1024);
    // N-major B: 64-column blocks (8 k-rows x 128 bytes per atom) are 64 * 128 bytes apart (LBO),
    // groups of 8 k-rows 1024 bytes apart (SBO); a k16 step is two groups.
    const auto db = b_n_major ? mma::smem_descriptor::of(ctx, sb, mma::wgmma_swizzle::b128, K * 128, 1024)
                              : mma::smem_descriptor::of(ctx, sb, mma::wgmma_swizzle::b128, 16, 1024);
    STRATA_UNROLL
    for (int s = 0; s < K / 16; ++s)
      Atom::mma_async(ctx, da.advanced(32 * s), db.advanced(b_n_major ? 2048 * s : 32 * s), acc, s > 0);
    mma::wgmma_commit(ctx);
    mma::wgmma_wait<0>(ctx, acc);
    STRATA_UNROLL
    for (int v = 0; v < Atom::c_values; v += 2) {
      const auto x = Atom::c_coord(tid, v);
      *reinterpret_cast<float2*>(&p.d[x.row * N + x.col]) = float2{acc[v], acc[v + 1]};
    }
  }
};

template <class T>
struct step_params {
  const T* q;  // 64 x 64 row-major
  const T* k;  // 64 keys x 64 row-major
  const T* v;  // 64 keys x D row-major
  float* o;    // 64 x D row-major
};

/// Attention's inner step on one warpgroup: S (64 x 64 keys) = Q K^T, both K-major in shared memory;
/// P = S rounded to T in registers is the A operand of O (64 x D) = P V, V N-major in shared memory.
template <class T, int D>
struct wgmma_attention_step {
  using target = strata::arch::sm90a;
  using qk = mma::sm90_64xNx16<T, 64>;
  using pv = mma::sm90_64xNx16_rs<T, D, mma::wgmma_major::mn>;
  static_assert(pv::accumulator_is_a_fragment(), "S's accumulators are P's A fragments");

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const step_params<T>& p) const {
    const int tid = ctx.warpgroup().thread_rank();
    unsigned char* base = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t misaligned = mma::smem_descriptor::of(ctx, base, mma::wgmma_swizzle::none, 0, 0).address() % 1024;
    T* sq = reinterpret_cast<T*>(base + (1024 - misaligned) % 1024);
    T* sk = sq + 64 * 64;
    T* sv = sk + 64 * 64;
    using vec = strata::copy::detail::raw_vector<16>;
    for (int v = tid; v < 64 * 64 / 8; v += 128) {
      const int r = v / 8, u = v % 8;
      reinterpret_cast<vec*>(sq)[r * 8 + (u ^ (r % 8))] = reinterpret_cast<const vec*>(p.q)[v];
      reinterpret_cast<vec*>(sk)[r * 8 + (u ^ (r % 8))] = reinterpret_cast<const vec*>(p.k)[v];
    }
    for (int v = tid; v < 64 * D / 8; v += 128) {  // rows of 64 d: (d block, key)
      const int r = v / 8, u = v % 8;
      reinterpret_cast<vec*>(sv)[r * 8 + (u ^ (r % 8))] = reinterpret_cast<const vec*>(p.v)[((r % 64) * D + (r / 64) * 64) / 8 + u];
    }
    mma::fence_async_shared(ctx);
    ctx.block().sync();

    typename qk::c_fragment s;
    mma::wgmma_fence(ctx, s);
    const auto dq = mma::smem_descriptor::of(ctx, sq, mma::wgmma_swizzle::b128, 16, 1024);
    const auto dk = mma::smem_descriptor::of(ctx, sk, mma::wgmma_swizzle::b128, 16, 1024);
    STRATA_UNROLL
    for (int step = 0; step < 4; ++step) qk::mma_async(ctx, dq.advanced(32 * step), dk.advanced(32 * step), s, step > 0);
    mma::wgmma_commit(ctx);
    mma::wgmma_wait<0>(ctx, s);

    // P converted whole before the fence, so no register write falls between the fence and the wgmmas.
    typename pv::a_registers a[4];
    STRATA_UNROLL
    for (int step = 0; step < 4; ++step) {
      typename pv::a_fragment f;
      STRATA_UNROLL
      for (int i = 0; i < pv::a_values; ++i) f[i] = T(s[8 * step + i]);
      a[step] = pv::pack(f);
    }
    typename pv::c_fragment o;
    mma::wgmma_fence(ctx, o, a[0], a[1], a[2], a[3]);
    const auto dv = mma::smem_descriptor::of(ctx, sv, mma::wgmma_swizzle::b128, 64 * 128, 1024);
    STRATA_UNROLL
    for (int step = 0; step < 4; ++step) pv::mma_async(ctx, a[step], dv.advanced(2048 * step), o, step > 0);
    mma::wgmma_commit(ctx);
    mma::wgmma_wait<0>(ctx, o);
    STRATA_UNROLL
    for (int v = 0; v < pv::c_values; v += 2) {
      const auto x = pv::c_coord(tid, v);
      *reinterpret_cast<float2*>(&p.o[x.row * D + x.col]) = float2{o[v], o[v + 1]};
    }
  }
};

using bf16_n128 = mma::sm90_64xNx16<strata::bf16, 128>;
using f16_n256 = mma::sm90_64xNx16<strata::f16, 256>;
using bf16_n64_nmajor = mma::sm90_64xNx16<strata::bf16, 64, mma::wgmma_major::k, mma::wgmma_major::mn>;

struct wgmma_bf16_n128_kernel : wgmma_kernel<bf16_n128> {};
struct wgmma_f16_n256_kernel : wgmma_kernel<f16_n256> {};
struct wgmma_bf16_n64_nmajor_kernel : wgmma_kernel<bf16_n64_nmajor> {};
struct wgmma_rs_attention_step_kernel : wgmma_attention_step<strata::bf16, 128> {};

}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_wgmma_kernels(strata::stream& s) {
  using namespace strata_test;
  const auto shape = [](int n, std::size_t bytes) {
    return strata::launch_shape{.grid = {1}, .block = {128}, .dynamic_shared_bytes = (64 + n) * 64 * bytes + 1024};
  };
  strata::launch(s, shape(128, 2), wgmma_bf16_n128_kernel{}, wgmma_params<strata::bf16>{});
  strata::launch(s, shape(256, 2), wgmma_f16_n256_kernel{}, wgmma_params<strata::f16>{});
  strata::launch(s, shape(64, 2), wgmma_bf16_n64_nmajor_kernel{}, wgmma_params<strata::bf16>{});
  strata::launch(s, strata::launch_shape{.grid = {1}, .block = {128}, .dynamic_shared_bytes = (64 + 64 + 128) * 64 * 2 + 1024},
                 wgmma_rs_attention_step_kernel{}, step_params<strata::bf16>{});
}
