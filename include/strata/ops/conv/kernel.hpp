// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/conv/kernel.hpp -- implicit-GEMM convolution: fprop, dgrad and wgrad as one kernel
// template over the GEMM mainloop.
//
//   namespace sc = strata::ops::conv;
//   using ep = strata::epilogue::chain<strata::epilogue::bias_col<float>, strata::epilogue::relu,
//                                      strata::epilogue::convert_to<bf16>>;
//   using K  = sc::kernel<sc::kind::fprop, strata::arch::sm80, strata::mma::sm80_16x8x16_f32bf16,
//                         strata::ops::gemm::shape{128, 128, 32, 2, 4, 3}, ep, /*Order*/ ..., /*AlignBytes*/ 16>;
//   auto p = K::make_params(geometry, x, w, y, ep_params);      // host
//   strata::launch(stream, K::launch_shape_of(p), K{}, p);
//
// Each kind is a GEMM per group (types.hpp has the three products). The tensors are never unfolded
// in memory: the stage loads gather the operand tiles straight from the activations, one vector of
// contiguous channels at a time, and zero-fill what falls in the padding (or, for dgrad, between the
// strided output positions). Everything after the load is gemm::kernel's: the shared-memory pipeline,
// the fragment loads (ldmatrix where the target has it), the MMA atoms, the epilogue chain.
//
//   operand     fprop                     dgrad                          wgrad
//   A (M x K)   x gathered, row-major     dy gathered, row-major         dy by pixel, column-major stage
//   B (K x N)   w, a strided tile         w gathered per (tap, k) row    x gathered, row-major
//   D (M x N)   y (pixel map, channel)    dx (pixel map, channel)        dw (K/G rows of T R S C/G)
//
// K ordering: filter tap outer, channel inner ((t, r, s, c) for fprop and wgrad, (t, r, s, k) for
// dgrad), so a vector of channels is contiguous in the activation and in the filter.
//
// Vector width (AlignBytes): a gathered vector must be contiguous in the source, so the 16-byte
// instantiation needs channel stride 1, every pixel stride and the channels per group (both sides)
// multiples of the vector, and 16-byte aligned base pointers; the host entry checks that and falls
// back to the element-wise instantiation (AlignBytes = sizeof(T)) for anything else, NCHW included.
//
// The epilogue sees each element at (row, col) = (output pixel, output channel over all groups) for
// fprop and dgrad, and (output channel, T R S C/G index) for wgrad: the coordinates of D as the
// matrix [pixels x channels] or [K x filter row], so bias_col is a per-channel bias.
//
// Split-K (wgrad, whose K is every output pixel): splits write fp32 / int32 partials to a workspace,
// (group, split, M, N), and gemm::reduce_kernel sums them in split order (deterministic).
#pragma once

#include <cstddef>
#include <type_traits>

#include "strata/copy/tile_stream.hpp"
#include "strata/ops/conv/fprop_gather.hpp"
#include "strata/ops/conv/types.hpp"
#include "strata/ops/gemm/kernel.hpp"

namespace strata::ops::conv {

/// The GEMM a kind is, per group (types.hpp): extents M, N, K; batch = groups.
template <kind Kind>
constexpr gemm::problem gemm_size(const geometry& g) {
  const long long in_pixels = (long long)g.n * g.in.extent.d * g.in.extent.h * g.in.extent.w;
  const long long out_pixels = (long long)g.n * g.out.extent.d * g.out.extent.h * g.out.extent.w;
  if constexpr (Kind == kind::fprop)
    return {int(out_pixels), g.k_group, int(g.filter_row()), g.groups};
  else if constexpr (Kind == kind::dgrad)
    return {int(in_pixels), g.c_group, int((long long)g.taps() * g.k_group), g.groups};
  else
    return {g.k_group, int(g.filter_row()), int(out_pixels), g.groups};
}

template <kind Kind, class Target, class Atom, gemm::shape S, class Epilogue, class Order = order::default_for<Target>,
          std::size_t AlignBytes = sizeof(typename Atom::a_type), gemm::operand_orders Orders = gemm::operand_orders::any>
struct kernel {
  using gemm_kernel = gemm::kernel<Target, Atom, S, Epilogue, Order, AlignBytes, Orders>;
  // Fixed operand orders (fprop with 16-byte gathers; the HIP entry's, host.hpp): x's rows and the
  // filter's both run along K (A row-major, B column-major), so the GEMM's mainloop for that pair
  // serves: XOR-swizzled stages and, on CDNA, the register-staged loop with 16-byte fragment reads.
  // (The CUDA entry keeps the padded any-order tile there: fewer instructions per HMMA, host.hpp.)
  static_assert(Orders == gemm::operand_orders::any || (Kind == kind::fprop && Orders == gemm::operand_orders::a_row_b_col),
                "conv::kernel: fixed operand orders are fprop's: x along K (A row-major), the filter along K (B column-major)");
  using target = Target;
  using atom = Atom;
  using epilogue_type = Epilogue;
  using ta = typename gemm_kernel::ta;
  using tb = typename gemm_kernel::tb;
  using acc_type = typename gemm_kernel::acc_type;
  using td = typename gemm_kernel::td;
  using warp_tile = typename gemm_kernel::warp_tile;
  using shared_storage = typename gemm_kernel::shared_storage;
  static constexpr kind conv_kind = Kind;
  static constexpr gemm::shape tiles = S;
  static constexpr int threads = gemm_kernel::threads;
  static constexpr int max_threads_per_block = threads;
  static constexpr int min_waves_per_eu = gemm_kernel::min_waves_per_eu;  // HIP: as gemm::kernel (MFMA accumulators in VGPRs)
  static constexpr std::size_t align_bytes = AlignBytes;
  static constexpr const char* name = Kind == kind::fprop   ? "strata::ops::conv::kernel<fprop>"
                                      : Kind == kind::dgrad ? "strata::ops::conv::kernel<dgrad>"
                                                            : "strata::ops::conv::kernel<wgrad>";
  static_assert(std::is_same_v<ta, tb>, "conv::kernel: activations and filters share one element type");

  /// The operands by role: fprop (x, w, y), dgrad (dy, w, dx), wgrad (dy, x, dw).
  struct params {
    geometry g;
    gemm::problem size;      // one group's GEMM; size.batch = groups
    const ta* a = nullptr;   // fprop x, dgrad dy, wgrad dy
    const tb* b = nullptr;   // fprop w, dgrad w, wgrad x
    td* d = nullptr;         // fprop y, dgrad dx, wgrad dw
    Order order;
    long long tiles = 0;     // output tiles per group
    int k_tiles = 0;
    int splits = 1;          // wgrad only: K splits writing partials
    acc_type* partials = nullptr;
    typename Epilogue::params epilogue;
  };

  /// The GEMM extents of one group for geometry g.
  static gemm::problem gemm_size(const geometry& g) { return conv::gemm_size<Kind>(g); }

  static params make_params(const geometry& g, const ta* a, const tb* b, td* d, const typename Epilogue::params& ep,
                            int splits = 1, acc_type* partials = nullptr) {
    params p{};
    p.g = g;
    p.size = gemm_size(g);
    p.a = a;
    p.b = b;
    p.d = d;
    const auto op = order::gemm_problem(p.size.m, p.size.n, p.size.k, S.tile_m, S.tile_n, S.tile_k, int(sizeof(ta)),
                                        Target::chiplets);
    p.order = Order(op);
    p.tiles = op.tiles();
    p.k_tiles = (p.size.k + S.tile_k - 1) / S.tile_k;
    p.splits = Kind == kind::wgrad && splits > 1 ? splits : 1;
    p.partials = partials;
    p.epilogue = ep;
    return p;
  }

  /// Accumulator elements of the split-K workspace (wgrad with splits > 1).
  static std::size_t partial_elements(const params& p) {
    return p.splits > 1 ? std::size_t(p.size.batch) * p.splits * std::size_t(p.size.m) * std::size_t(p.size.n) : 0;
  }

  /// One block per (tile, split, group).
  static launch_shape launch_shape_of(const params& p) {
    return launch_shape{.grid = dims(int(p.tiles > 0 ? p.tiles : 1), p.splits, p.size.batch), .block = dims(threads)};
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    Atom::template require_target<typename Ctx::target>();
    if (p.size.m <= 0 || p.size.n <= 0) return;
    const dims blk = ctx.block().index();
    const order::tile t = p.order(blk.x);
    const int split = blk.y, group = blk.z;
    const int kt_begin = int((long long)p.k_tiles * split / p.splits);
    const int kt_end = int((long long)p.k_tiles * (split + 1) / p.splits);
    typename warp_tile::accumulator acc;
    accumulate(ctx, p, t, group, kt_begin, kt_end, acc);
    // Only wgrad splits K (make_params); the other kinds do not compile the partials' store (in the
    // fprop 128 x 128 tile it spilled 60 bytes on sm_80, on a path fprop never takes).
    if constexpr (Kind == kind::wgrad) {
      if (p.splits > 1) return store_partials(ctx, p, t, split, group, acc);
    }
    store_tile(ctx, p, t, group, acc);
  }

  // fprop's operands as streams on targets with cp.async (vectors of 4 bytes or more: the 16-byte
  // instantiation): A through conv::fprop_a_stream (each row's pixel decoded once per tile, the tap and
  // channel moved on per K step), B, the filter rows (a strided tile along K), through
  // copy::tile_stream. The thread count is a constant, so each thread's vectors unroll.
  template <class T, int Rows>
  using stream_tile = copy::tile_copy<T, Rows, S.tile_k, AlignBytes, copy::widest_vector_bytes<T, S.tile_k, AlignBytes>, threads>;
  using a_stream_tile = stream_tile<ta, S.tile_m>;
  using b_stream_tile = stream_tile<tb, S.tile_n>;
  static constexpr bool fprop_streams = Kind == kind::fprop && Target::atoms.has(arch::atom_family::cp_async) &&
                                        a_stream_tile::vector_bytes >= 4 && b_stream_tile::vector_bytes >= 4 &&
                                        threads % a_stream_tile::vectors_per_row == 0 &&
                                        threads % b_stream_tile::vectors_per_row == 0;
  // The same streams staged through registers on targets without cp.async (CDNA), with the fixed
  // orders' tile: gemm_kernel::register_staged_run (loads of the next K step in flight during this
  // one's MFMAs, 16-byte LDS writes to XOR-swizzled stages, 16-byte fragment reads).
  static constexpr bool fprop_register_streams = Kind == kind::fprop && gemm_kernel::use_register_streams &&
                                                 gemm_kernel::k_major_orders;
  static_assert(Orders == gemm::operand_orders::any || fprop_streams || fprop_register_streams,
                "conv::kernel: fixed orders need fprop's streams (16-byte gathers: AlignBytes 16)");
  using stage_swizzle = typename gemm_kernel::stage_swizzle;

  /// The mainloop with this kind's gathers (gemm_kernel::mainloop does the rest).
  template <class Ctx>
  STRATA_HOST_DEVICE void accumulate(Ctx& ctx, const params& p, order::tile t, int group, int kt_begin, int kt_end,
                                     typename warp_tile::accumulator& acc) const {
    const int m0 = int(t.m) * S.tile_m, n0 = int(t.n) * S.tile_n;
    const geometry& g = p.g;
    constexpr bool a_row = Kind != kind::wgrad, b_row = Kind != kind::fprop;
    if constexpr (fprop_register_streams) {
      register_staged_fprop(ctx, p, group, m0, n0, kt_begin, kt_end, acc);
      return;
    }
    if constexpr (fprop_streams) {
      fprop_a_stream<ta, a_stream_tile> sa(ctx, g, p.size.m, p.size.k, p.a, group, m0, kt_begin);
      const tb* w = p.b + ((long long)group * g.k_group + n0) * g.filter_row() + (long long)kt_begin * S.tile_k;
      copy::tile_stream<b_stream_tile> sb(ctx, w, g.filter_row(), p.size.n - n0);
      const bool k_residue = p.size.k % S.tile_k != 0;
      // The K steps are loaded in order, one call each (the pipeline's prologue, then its loop).
      gemm_kernel::mainloop(ctx, kt_begin, kt_end, a_row, b_row, acc, [&](auto&, shared_storage& smem, int st, int kt) {
        sa.template copy_async<gemm_kernel::lda_row, stage_swizzle>(ctx, smem.a[st]);
        if (k_residue && kt + 1 == p.k_tiles)
          sb.template copy_async_partial<gemm_kernel::ldb_col, stage_swizzle>(ctx, smem.b[st], p.size.k - kt * S.tile_k);
        else
          sb.template copy_async<gemm_kernel::ldb_col, stage_swizzle>(ctx, smem.b[st]);
        sa.advance();
        sb.advance();
      });
      return;
    }
    gemm_kernel::mainloop(ctx, kt_begin, kt_end, a_row, b_row, acc, [&](auto& pipe, shared_storage& smem, int st, int kt) {
      const int k0 = kt * S.tile_k;
      if constexpr (Kind == kind::fprop) {
        // A (pixel, tap-channel) from x; B: the filter rows of this group, a plain strided tile
        // (column-major B: element (kk, n) at w[n * TRSC + kk]).
        pipe.template gather_tile<typename gemm_kernel::copy_a_row>(
            smem.a[st], gemm_kernel::lda_row, p.a, [&](int r, int c) { return fprop_a(p, group, m0 + r, k0 + c); });
        const tb* w = p.b + ((long long)group * g.k_group + n0) * g.filter_row() + k0;
        gemm_kernel::template copy_stage<typename gemm_kernel::copy_b_col>(pipe, ctx, smem.b[st], gemm_kernel::ldb_col, w,
                                                                         g.filter_row(), p.size.n - n0, p.size.k - k0);
      } else if constexpr (Kind == kind::dgrad) {
        pipe.template gather_tile<typename gemm_kernel::copy_a_row>(
            smem.a[st], gemm_kernel::lda_row, p.a, [&](int r, int c) { return dgrad_a(p, group, m0 + r, k0 + c); });
        pipe.template gather_tile<typename gemm_kernel::copy_b_row>(
            smem.b[st], gemm_kernel::ldb_row, p.b, [&](int r, int c) { return dgrad_b(p, group, k0 + r, n0 + c); });
      } else {
        // A staged column-major: stage row r is output pixel k0 + r, its columns the channels m0 + c.
        pipe.template gather_tile<typename gemm_kernel::copy_a_col>(
            smem.a[st], gemm_kernel::lda_col, p.a, [&](int r, int c) { return wgrad_a(p, group, m0 + c, k0 + r); });
        pipe.template gather_tile<typename gemm_kernel::copy_b_row>(
            smem.b[st], gemm_kernel::ldb_row, p.b, [&](int r, int c) { return wgrad_b(p, group, k0 + r, n0 + c); });
      }
    });
  }

  /// fprop's K loop on CDNA (fprop_register_streams): the gather stream of x and the filter's stream
  /// staged through registers. The K residue, when this range ends in it, goes first (its own streams
  /// at the last K step: the filter's read zero past K, x's gather zero-fills past K by itself), then
  /// the full steps in order, as the GEMM's register-staged loop sums them.
  template <class Ctx>
  STRATA_HOST_DEVICE void register_staged_fprop(Ctx& ctx, const params& p, int group, int m0, int n0, int kt_begin, int kt_end,
                                                typename warp_tile::accumulator& acc) const {
    acc.fill(acc_type(0));
    if (kt_begin >= kt_end) return;
    using a_stream = fprop_a_stream<ta, a_stream_tile>;
    using b_stream = copy::tile_stream<b_stream_tile>;
    const geometry& g = p.g;
    auto& smem = ctx.template shared<shared_storage>();
    const int warp = ctx.warp().index();
    const tb* w = p.b + ((long long)group * g.k_group + n0) * g.filter_row();
    a_stream sa(ctx, g, p.size.m, p.size.k, p.a, group, m0, kt_begin);
    b_stream sb(ctx, w + (long long)kt_begin * S.tile_k, g.filter_row(), p.size.n - n0);
    typename a_stream::staged ra;
    typename b_stream::staged rb;
    const auto next = [&] {
      sa.load(ctx, ra);
      sb.load(ctx, rb);
      sa.advance();
      sb.advance();
    };
    const auto first = [&] {
      if (kt_end == p.k_tiles && p.size.k % S.tile_k != 0) {
        const int kr = kt_end - 1;
        const a_stream last_a(ctx, g, p.size.m, p.size.k, p.a, group, m0, kr);
        last_a.load(ctx, ra);
        const b_stream last_b(ctx, w + (long long)kr * S.tile_k, g.filter_row(), p.size.n - n0);
        last_b.load_partial(ctx, rb, p.size.k - kr * S.tile_k);
      } else {
        next();
      }
    };
    gemm_kernel::register_staged_run(ctx, warp, kt_end - kt_begin, first, next,
                                     [&](int st) {
                                       sa.template store<gemm_kernel::lda_row, stage_swizzle>(ctx, ra, smem.a[st]);
                                       sb.template store<gemm_kernel::ldb_col, stage_swizzle>(ctx, rb, smem.b[st]);
                                     },
                                     acc);
  }

  // ---- the gathers: the address of GEMM element (row, col)'s vector, nullptr for a zero -------------

  /// fprop A(m, kk): x at the input pixel output pixel m sees through tap kk / C_g, channel kk % C_g.
  STRATA_HOST_DEVICE static const ta* fprop_a(const params& p, int group, int m, int kk) {
    if (m >= p.size.m || kk >= p.size.k) return nullptr;
    const geometry& g = p.g;
    const auto o = g.out.decode(m);
    const int c = kk % g.c_group;
    int in[3];
    if (!input_of(g, kk / g.c_group, o.d, o.h, o.w, in)) return nullptr;
    return p.a + g.in.offset(o.n, in[0], in[1], in[2]) + ((long long)group * g.c_group + c) * g.in_stride_c;
  }

  /// dgrad A(m, kk): dy at the output pixel that input pixel m meets through tap kk / K_g (none when
  /// the stride skips it or it lies outside), channel kk % K_g.
  STRATA_HOST_DEVICE static const ta* dgrad_a(const params& p, int group, int m, int kk) {
    if (m >= p.size.m || kk >= p.size.k) return nullptr;
    const geometry& g = p.g;
    const auto i = g.in.decode(m);
    const int k = kk % g.k_group;
    const int tap = kk / g.k_group;
    const int f[3] = {tap / (g.filter.h * g.filter.w), (tap / g.filter.w) % g.filter.h, tap % g.filter.w};
    const int pos[3] = {i.d, i.h, i.w};
    int out[3];
    for (int x = 0; x < 3; ++x) {
      const int num = pos[x] + g.pad[x] - f[x] * g.dilation[x];
      if (num < 0 || num % g.stride[x] != 0) return nullptr;
      out[x] = num / g.stride[x];
      if (out[x] >= g.out.extent[x]) return nullptr;
    }
    return p.a + g.out.offset(i.n, out[0], out[1], out[2]) + ((long long)group * g.k_group + k) * g.out_stride_c;
  }

  /// dgrad B(kk, c): w[group K_g + kk % K_g][tap kk / K_g][c].
  STRATA_HOST_DEVICE static const tb* dgrad_b(const params& p, int group, int kk, int c) {
    if (kk >= p.size.k || c >= p.size.n) return nullptr;
    const geometry& g = p.g;
    const int k = kk % g.k_group, tap = kk / g.k_group;
    return p.b + ((long long)group * g.k_group + k) * g.filter_row() + (long long)tap * g.c_group + c;
  }

  /// wgrad A(k, j): dy at output pixel j, channel k of the group.
  STRATA_HOST_DEVICE static const ta* wgrad_a(const params& p, int group, int k, int j) {
    if (k >= p.size.m || j >= p.size.k) return nullptr;
    const geometry& g = p.g;
    return p.a + g.out.offset(j) + ((long long)group * g.k_group + k) * g.out_stride_c;
  }

  /// wgrad B(j, col): x at the input pixel output pixel j sees through tap col / C_g, channel col % C_g.
  STRATA_HOST_DEVICE static const tb* wgrad_b(const params& p, int group, int j, int col) {
    if (j >= p.size.k || col >= p.size.n) return nullptr;
    const geometry& g = p.g;
    const auto o = g.out.decode(j);
    int in[3];
    if (!input_of(g, col / g.c_group, o.d, o.h, o.w, in)) return nullptr;
    return p.b + g.in.offset(o.n, in[0], in[1], in[2]) + ((long long)group * g.c_group + col % g.c_group) * g.in_stride_c;
  }

  /// The input position output position (z, y, x) reads through filter tap `tap`; false in the padding.
  STRATA_HOST_DEVICE static bool input_of(const geometry& g, int tap, int z, int y, int x, int (&in)[3]) {
    const int f[3] = {tap / (g.filter.h * g.filter.w), (tap / g.filter.w) % g.filter.h, tap % g.filter.w};
    const int pos[3] = {z, y, x};
    for (int i = 0; i < 3; ++i) {
      in[i] = pos[i] * g.stride[i] - g.pad[i] + f[i] * g.dilation[i];
      if (in[i] < 0 || in[i] >= g.in.extent[i]) return false;
    }
    return true;
  }

  // ---- the stores -----------------------------------------------------------------------------------

  /// D's element (r, c) of one group as an offset into the output tensor, and its epilogue coordinates.
  STRATA_HOST_DEVICE static long long out_offset(const params& p, int group, int r, int c) {
    const geometry& g = p.g;
    if constexpr (Kind == kind::fprop)
      return g.out.offset(r) + ((long long)group * g.k_group + c) * g.out_stride_c;
    else if constexpr (Kind == kind::dgrad)
      return g.in.offset(r) + ((long long)group * g.c_group + c) * g.in_stride_c;
    else
      return ((long long)group * g.k_group + r) * g.filter_row() + c;
  }
  STRATA_HOST_DEVICE static void epilogue_coords(const params& p, int group, int& r, int& c) {
    if constexpr (Kind == kind::fprop) c += group * p.g.k_group;
    else if constexpr (Kind == kind::dgrad) c += group * p.g.c_group;
    else r += group * p.g.k_group;
  }

  template <class Ctx>
  STRATA_HOST_DEVICE void store_tile(Ctx& ctx, const params& p, order::tile t, int group,
                                     const typename warp_tile::accumulator& acc) const {
    gemm_kernel::for_each_element(ctx.lane().index(), acc, gemm_kernel::warp_row0(ctx, t), gemm_kernel::warp_col0(ctx, t),
                                  p.size, [&](int r, int c, acc_type v) {
                                    const long long at = out_offset(p, group, r, c);
                                    epilogue_coords(p, group, r, c);
                                    p.d[at] = Epilogue::apply(v, r, c, p.epilogue);
                                  });
  }

 private:
  template <class Ctx>
  STRATA_HOST_DEVICE void store_partials(Ctx& ctx, const params& p, order::tile t, int split, int group,
                                         const typename warp_tile::accumulator& acc) const {
    acc_type* part = p.partials + (std::size_t(group) * p.splits + split) * std::size_t(p.size.m) * p.size.n;
    gemm_kernel::for_each_element(ctx.lane().index(), acc, gemm_kernel::warp_row0(ctx, t), gemm_kernel::warp_col0(ctx, t),
                                  p.size, [&](int r, int c, acc_type v) { part[std::size_t(r) * p.size.n + c] = v; });
  }
};

}  // namespace strata::ops::conv
