// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/wgmma_kernels.cu -- the Hopper warpgroup MMA atom (mma/wgmma.hpp) compiled for sm_90a:
// a warpgroup stages A (64 x 64) and B (64 x N) K-major in 128-byte swizzled shared memory, or
// N-major for the second B form, chains four k16 wgmmas through advanced descriptors, waits and
// stores D. The PTX must hold the instructions the atom claims; nothing may spill (N = 256 keeps 128
// accumulators per thread). The emulator runs the same atom in test/mma/wgmma_test.cpp.
//
// compile-targets sm_90a
// compile-expect-kernels sm_90a: wgmma_bf16_n128_kernel wgmma_f16_n256_kernel wgmma_bf16_n64_nmajor_kernel
// compile-expect-code sm_90a: wgmma m64n128k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma m64n256k16 f16 = wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16
// compile-expect-code sm_90a: wgmma m64n64k16 bf16 = wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16
// compile-expect-code sm_90a: wgmma.fence = wgmma\.fence\.sync\.aligned
// compile-expect-code sm_90a: wgmma.commit_group = wgmma\.commit_group\.sync\.aligned
// compile-expect-code sm_90a: wgmma.wait_group = wgmma\.wait_group\.sync\.aligned
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

using bf16_n128 = mma::sm90_64xNx16<strata::bf16, 128>;
using f16_n256 = mma::sm90_64xNx16<strata::f16, 256>;
using bf16_n64_nmajor = mma::sm90_64xNx16<strata::bf16, 64, mma::wgmma_major::k, mma::wgmma_major::mn>;

struct wgmma_bf16_n128_kernel : wgmma_kernel<bf16_n128> {};
struct wgmma_f16_n256_kernel : wgmma_kernel<f16_n256> {};
struct wgmma_bf16_n64_nmajor_kernel : wgmma_kernel<bf16_n64_nmajor> {};

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
}
