// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/levels.hpp -- the execution context every kernel receives, level by level.
//
//   grid -> chiplet -> cluster -> block -> warp -> lane
//
// A kernel is written once against this interface; each backend supplies a context type with it:
//   host emulator  strata::emulator::context<Target>     (strata/emulator/context.hpp)
//   CUDA           strata::cuda::device_context<Target>  (strata/runtime/cuda/device_context.hpp)
//   HIP            strata::hip::device_context<Target>   (strata/runtime/hip/device_context.hpp)
//
// Every context `ctx` offers:
//   ctx.grid()     .shape() dims of blocks, .size() number of blocks
//   ctx.chiplet()  .index() chiplet this block runs on, .count() chiplets of the target
//   ctx.cluster()  .index() linear cluster id, .count() clusters in the grid, .shape() dims of blocks,
//                  .size() blocks per cluster, .block_rank() this block inside its cluster, .sync(),
//                  .shared_of(T& local, int rank) -> T&  the same shared object in another block of
//                  the cluster (distributed shared memory; rank == block_rank() on size-1 clusters)
//   ctx.block()    .index() dims, .rank() linear block id in the grid, .shape() dims of threads,
//                  .size() threads per block, .thread_index() dims, .thread_rank(), .sync()
//   ctx.warp()     .index() warp in the block, .count() warps per block, .size() lanes (== Ctx::warp_size),
//                  .sync(), .shfl(v, src), .shfl_xor(v, mask), .shfl_up(v, d), .shfl_down(v, d),
//                  .ballot(p) -> lane_mask, .any(p), .all(p), .reduce(v, op), .sum(v), .max(v), .min(v)
//   ctx.lane()     .index() lane inside the warp
//   ctx.template shared<T>()          -> T&   the kernel's static shared storage (Kernel::shared_storage)
//   ctx.template dynamic_shared<T>()  -> T*   the dynamic shared memory requested at launch
//   Ctx::target                        the arch descriptor the kernel runs as
//   Ctx::warp_size                     lanes per warp (32 or 64), a constant expression
//
// A level the target lacks is degenerate: size 1, index 0, and its sync() is the next level's sync
// (a cluster of one block synchronizes the block). Warp collectives act on every lane of the warp
// (the last warp of a block whose size is not a multiple of the warp size has fewer lanes); every
// lane must reach the same collective, as on the GPU. A shuffle that reads a lane which does not
// exist in such a partial warp gives an unspecified value on the GPU; the emulator returns the
// caller's own value (tree_reduce below never uses such values). The emulator reports a collective or barrier
// that cannot complete as an error naming the kernel, block and threads.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/hierarchy/dims.hpp"

namespace strata {

/// Bit mask with one bit per lane of a warp of `WarpSize` lanes.
template <int WarpSize>
using lane_mask = std::conditional_t<(WarpSize > 32), std::uint64_t, std::uint32_t>;

/// Binary operations for warp reductions; usable on every backend.
struct plus {
  template <class T>
  STRATA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const { return a + b; }
};
struct maximum {
  template <class T>
  STRATA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
struct minimum {
  template <class T>
  STRATA_HOST_DEVICE constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};

namespace detail {

/// All-reduce over the lanes of a warp: a shfl_down tree into lane 0, then a broadcast. Every backend
/// uses this same order of operations, so a warp reduction gives bit-identical results on the
/// emulator and on the GPU, and a partial last warp (fewer lanes than the warp size) reduces only the
/// lanes it has. `op` must be associative; it need not be commutative (lane order is kept).
template <class Warp, class T, class Op>
STRATA_HOST_DEVICE T tree_reduce(const Warp& warp, T v, Op op) {
  const int lanes = warp.active_lanes();
  const int me = warp.lane_index();
  STRATA_UNROLL
  for (int offset = Warp::size() / 2; offset > 0; offset >>= 1) {
    const T other = warp.shfl_down(v, offset);
    if (me + offset < lanes) v = op(v, other);
  }
  return warp.shfl(v, 0);
}

}  // namespace detail

/// The minimal interface a kernel context satisfies (checked by every backend's tests).
template <class Ctx>
concept kernel_context = requires(Ctx& ctx) {
  typename Ctx::target;
  { Ctx::warp_size } -> std::convertible_to<int>;
  { ctx.grid().size() } -> std::convertible_to<long long>;
  { ctx.chiplet().index() } -> std::convertible_to<int>;
  { ctx.chiplet().count() } -> std::convertible_to<int>;
  { ctx.cluster().size() } -> std::convertible_to<int>;
  { ctx.cluster().block_rank() } -> std::convertible_to<int>;
  { ctx.block().rank() } -> std::convertible_to<long long>;
  { ctx.block().size() } -> std::convertible_to<int>;
  { ctx.block().thread_rank() } -> std::convertible_to<int>;
  { ctx.warp().index() } -> std::convertible_to<int>;
  { ctx.warp().count() } -> std::convertible_to<int>;
  { ctx.lane().index() } -> std::convertible_to<int>;
};

}  // namespace strata
