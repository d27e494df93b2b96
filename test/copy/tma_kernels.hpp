// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/copy/tma_kernels.hpp -- the Hopper mainloop's pieces in one kernel, shared by test/copy/tma_test.cpp
// (emulator) and test/compile/tma_kernels.cu (sm_90a): one warpgroup loads a 64 x 64 tile of A and an
// N x 64 tile of B (both K-major, 128-byte swizzle) with TMA onto one mbarrier, waits, and runs four
// chained k16 wgmmas on them; D (64 x N, f32) is stored element by element. A block storing one box
// from shared memory with a TMA store. And a cluster of two blocks multicasting halves of a box into
// both and arriving on each other's barriers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/arch/mbarrier.hpp"
#include "strata/copy/tma.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/strata.hpp"

namespace strata_test {

struct mainloop_params {
  strata::copy::tensor_map a, b;  // A: M x K row-major (boxes 64 rows x 64 k); B: N x K (K-major B)
  int m0, n0;                     // the tile's first row of A and of B
  float* d;                       // 64 x N row-major
  int reload_early = 0;           // a kernel bug on purpose: reload B while the wgmmas still read it
};

template <int N>
struct tma_wgmma_kernel {
  using target = strata::arch::sm90a;
  using atom = strata::mma::sm90_64xNx16<strata::bf16, N>;
  static constexpr const char* name = "tma_wgmma_kernel";
  static constexpr std::size_t dynamic_shared_bytes = (64 + N) * 64 * 2 + 1024;  // + alignment to 1024
  struct shared_storage {
    strata::mbarrier full;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const mainloop_params& p) const {
    auto& full = ctx.template shared<shared_storage>().full;
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    // The tiles start on a 1024-byte boundary of the shared address space: the swizzle's period.
    const std::uint32_t address = strata::mma::smem_descriptor::of(ctx, dyn, strata::mma::wgmma_swizzle::none, 0, 0).address();
    auto* sa = dyn + (1024 - address % 1024) % 1024;  // 64 x 64 bf16, 8 KiB
    auto* sb = sa + 64 * 64 * 2;                     // N x 64 bf16
    const int t = ctx.warpgroup().thread_rank();
    if (t == 0) full.init(ctx, 1);
    ctx.block().sync();
    if (t == 0) {
      full.arrive_expect_tx(ctx, (64 + N) * 64 * 2);
      strata::copy::tma_load(ctx, sa, p.a, full, 0, p.m0);
      strata::copy::tma_load(ctx, sb, p.b, full, 0, p.n0);
    }
    full.wait(ctx, 0);
    typename atom::c_fragment acc;
    strata::mma::wgmma_fence(ctx, acc);
    const auto da = strata::mma::smem_descriptor::of(ctx, sa, strata::mma::wgmma_swizzle::b128, 16, 1024);
    const auto db = strata::mma::smem_descriptor::of(ctx, sb, strata::mma::wgmma_swizzle::b128, 16, 1024);
    STRATA_UNROLL
    for (int k = 0; k < 4; ++k) atom::mma_async(ctx, da.advanced(32 * k), db.advanced(32 * k), acc, k > 0);
    strata::mma::wgmma_commit(ctx);
    if (p.reload_early && t == 0) {  // the stage handed back before the wait covering its reads
      full.arrive_expect_tx(ctx, N * 64 * 2);
      strata::copy::tma_load(ctx, sb, p.b, full, 0, p.n0);
    }
    strata::mma::wgmma_wait<0>(ctx, acc);
    STRATA_UNROLL
    for (int v = 0; v < atom::c_values; ++v) {
      const auto x = atom::c_coord(t, v);
      p.d[x.row * N + x.col] = acc[v];
    }
  }
};

/// The block's dynamic shared memory from its first 1024-byte boundary (the 128-byte swizzle's period),
/// and that boundary's shared address.
struct aligned_stage {
  unsigned char* stage;
  std::uint32_t address;
  template <class Ctx>
  STRATA_HOST_DEVICE explicit aligned_stage(Ctx& ctx) {
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const std::uint32_t base = strata::mma::smem_descriptor::of(ctx, dyn, strata::mma::wgmma_swizzle::none, 0, 0).address();
    stage = dyn + (1024 - base % 1024) % 1024;
    address = base + std::uint32_t(stage - dyn);
  }
};

struct store_params {
  strata::copy::tensor_map map;  // rows x cols of u16, boxes of box_rows x box_cols
  int c0, r0;            // the box's coordinates (column, row)
  int box_rows, box_cols;
  strata::copy::tma_swizzle sw;
  bool wait;             // false: a kernel bug on purpose (the store never waited for)
};

/// The block writes value 1000 + e at box element e (row-major in the box) into a 1024-byte aligned
/// stage, where tma_load would have landed it (the swizzle applied to whole shared addresses); then
/// thread 0 stores the box with TMA, commits and waits.
struct store_kernel {
  using target = strata::arch::sm90a;
  static constexpr const char* name = "store_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const store_params& p) const {
    const aligned_stage at(ctx);
    unsigned char* stage = at.stage;
    const std::uint32_t address = at.address;
    const int elements = p.box_rows * p.box_cols;
    for (int e = ctx.block().thread_rank(); e < elements; e += ctx.block().size()) {
      const std::uint16_t v = std::uint16_t(1000 + e);
      const std::uint32_t at = strata::span_swizzled(address + std::uint32_t(2 * e), strata::copy::swizzle_bytes(p.sw)) - address;
      std::memcpy(stage + at, &v, 2);
    }
    strata::mma::fence_async_shared(ctx);
    ctx.block().sync();
    if (ctx.block().thread_rank() == 0) {
      strata::copy::tma_store(ctx, p.map, stage, p.c0, p.r0);
      strata::copy::tma_store_commit(ctx);
      if (p.wait) strata::copy::tma_store_wait<0>(ctx);
    }
  }
};

struct reduce_params {
  strata::copy::tensor_map map;  // rows x cols of fp32 (a map made with tma_element::f32, or raw bits on purpose)
  int c0, r0;                    // block b's box at (c0, r0 + b * row_step)
  int row_step;
  int box_rows, box_cols;        // 128-byte swizzled boxes: box_cols 32
  bool complete;                 // wait for the writes (tma_store_complete), not only the reads
};

/// Block b adds value b + 1 + e / 1024 at box element e (row-major in the box, swizzled as tma_load
/// lands a 128-byte box) into the tensor with one TMA reduction; blocks overlap where row_step is
/// below box_rows.
struct reduce_kernel {
  using target = strata::arch::sm90a;
  static constexpr const char* name = "reduce_kernel";
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const reduce_params& p) const {
    const aligned_stage at(ctx);
    unsigned char* stage = at.stage;
    const std::uint32_t address = at.address;
    const int b = int(ctx.block().rank());
    const int elements = p.box_rows * p.box_cols;
    for (int e = ctx.block().thread_rank(); e < elements; e += ctx.block().size()) {
      const float v = float(b + 1) + float(e) / 1024.f;
      const std::uint32_t at = strata::span_swizzled(address + std::uint32_t(4 * e), 128) - address;
      std::memcpy(stage + at, &v, 4);
    }
    strata::mma::fence_async_shared(ctx);
    ctx.block().sync();
    if (ctx.block().thread_rank() == 0) {
      strata::copy::tma_reduce_add(ctx, p.map, stage, p.c0, p.r0 + b * p.row_step);
      strata::copy::tma_store_commit(ctx);
      if (p.complete) strata::copy::tma_store_complete<0>(ctx);
      else strata::copy::tma_store_wait<0>(ctx);
    }
  }
};

struct cluster_params {
  strata::copy::tensor_map map;  // rows x 64 bf16, boxes of (rows / 2) x 64
  int rows;
  unsigned char* out;  // per block: the rows x 64 stage after the wait
  int* arrived;        // block 0 thread 0: 1 once its barrier of two arrivals (one remote) completed
};

/// A cluster of two blocks: each loads half of a rows x 64 box and multicasts it into both blocks' stage;
/// each block's barrier expects the whole box. Then block 1 arrives on block 0's second barrier.
struct multicast_kernel {
  using target = strata::arch::sm90a;
  static constexpr const char* name = "multicast_kernel";
  struct shared_storage {
    strata::mbarrier full, pair;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const cluster_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const auto offset = std::uint32_t(dyn - &ctx.template shared<unsigned char>());
    unsigned char* stage = dyn + (1024 - offset % 1024) % 1024;
    const int t = ctx.block().thread_rank(), rank = ctx.cluster().block_rank();
    const std::size_t bytes = std::size_t(p.rows) * 64 * 2, half = bytes / 2;
    if (t == 0) {
      s.full.init(ctx, 1);
      s.pair.init(ctx, 2);
      strata::mbarrier::fence_init(ctx);
    }
    ctx.cluster().sync();
    if (t == 0) {
      s.full.arrive_expect_tx(ctx, std::uint32_t(bytes));
      strata::copy::tma_load_multicast(ctx, stage + rank * half, p.map, s.full, std::uint16_t(0b11), 0, rank * (p.rows / 2));
    }
    s.full.wait(ctx, 0);
    for (std::size_t i = std::size_t(t); i < bytes; i += 128) p.out[rank * bytes + i] = stage[i];
    if (t == 0) {
      if (rank == 0) s.pair.arrive(ctx);
      else s.pair.arrive_cluster(ctx, 0);
    }
    if (rank == 0) {
      s.pair.wait(ctx, 0);
      if (t == 0) *p.arrived = 1;
    }
    ctx.cluster().sync();  // block 0's barrier outlives block 1's arrival
  }
};

}  // namespace strata_test
