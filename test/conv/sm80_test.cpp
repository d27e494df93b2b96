// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The implicit-GEMM kernel in its sm80 configurations on the emulator (mma.sync atoms with their exact
// fragment layouts, cp.async stages, ldmatrix fragment loads): 16-byte gathers where the channels
// allow them, element-wise gathers otherwise; f16 / bf16, tf32 and int8; fprop, dgrad and wgrad.
#include "support.hpp"

using namespace strata_test::conv;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using strata::f16;
using act = sc::activation;

namespace {

template <sc::kind Kind, class TA, class TD, strata::ops::gemm::shape S, std::size_t Align>
using sm80_kernel =
    sc::kernel<Kind, arch::sm80, typename cfg::sm80_atom<TA>::type, S,
               std::conditional_t<Kind == sc::kind::wgrad, sc::detail::wgrad_epilogue<TD>, sc::detail::entry_epilogue<TD>>,
               strata::order::default_for<arch::sm80>, Align>;

template <class TA, class TD, strata::ops::gemm::shape S, std::size_t Align>
void all(const case_t& c, bool tf32 = false) {
  check<TA, TD>(sc::kind::fprop, c, kernel_launcher<sm80_kernel<sc::kind::fprop, TA, TD, S, Align>>{}, tf32);
  check<TA, TD>(sc::kind::dgrad, c, kernel_launcher<sm80_kernel<sc::kind::dgrad, TA, TD, S, Align>>{}, tf32);
  case_t w = c;
  w.bias = false;
  w.act = act::none;
  check<TA, TD>(sc::kind::wgrad, w, kernel_launcher<sm80_kernel<sc::kind::wgrad, TA, TD, S, Align>>{}, tf32);
}

sc::problem p2d(int n, int h, int w, int c, int k, int r, int s) {
  return {.n = n, .c = c, .k = k, .input = {1, h, w}, .filter = {1, r, s}};
}

}  // namespace

TEST_CASE("conv sm80 bf16: 16-byte gathers (cp.async + ldmatrix), 3x3, stride 2, groups", "[conv]") {
  sc::problem p = p2d(2, 7, 6, 16, 24, 3, 3);
  p.pad = p.pad_end = {0, 1, 1};
  all<bf16, bf16, cfg::sm80_medium, 16>({.pr = p, .beta = 0.5f, .bias = true, .act = act::relu, .seed = 201});
  sc::problem q = p2d(1, 9, 5, 32, 16, 3, 1);
  q.groups = 2;
  q.stride = {1, 2, 1};
  q.pad = {0, 1, 0};
  all<bf16, float, cfg::sm80_medium, 16>({.pr = q, .pixel_pad = 8, .split_k = 2, .seed = 202});
}

TEST_CASE("conv sm80 f16: element-wise gathers for odd channel counts and NCHW; large tile", "[conv]") {
  sc::problem p = p2d(2, 5, 6, 5, 7, 3, 3);
  p.pad = {0, 1, 0};
  p.pad_end = {0, 0, 1};
  p.dilation = {1, 1, 2};
  all<f16, f16, cfg::sm80_medium, 2>({.pr = p, .seed = 211});
  all<f16, float, cfg::sm80_medium, 2>({.pr = p, .nchw = true, .seed = 212});
  sc::problem big = p2d(2, 9, 9, 8, 136, 1, 1);  // M = 162, N = 136: several large tiles, partial edges
  check<f16, f16>(sc::kind::fprop, {.pr = big, .seed = 213},
                  kernel_launcher<sm80_kernel<sc::kind::fprop, f16, f16, cfg::sm80_large, 16>>{});
}

TEST_CASE("conv sm80 fprop through its gather streams: 3D, dilation, wide channels, K residue, both tiles", "[conv]") {
  // conv::kernel::fprop_streams (16-byte vectors on sm80): each row's pixel decoded once per tile, the
  // column's tap and channel moved on per K step. Channels per group below, at and above tile_k (taps
  // wrapping inside one K step, on its edge, every few steps), K not a multiple of tile_k, padding on
  // every side, strides, dilation, depth, groups, padded pixel strides, M and N edges.
  using KM = sm80_kernel<sc::kind::fprop, bf16, bf16, cfg::sm80_medium, 16>;
  using KL = sm80_kernel<sc::kind::fprop, bf16, bf16, cfg::sm80_large, 16>;
  static_assert(KM::fprop_streams && KL::fprop_streams);
  sc::problem a{.n = 2, .c = 8, .k = 20, .input = {3, 5, 6}, .filter = {2, 3, 3}};  // K = 144: a residue of 16
  a.pad = {1, 1, 0};
  a.pad_end = {0, 1, 2};
  a.stride = {1, 2, 1};
  a.dilation = {2, 1, 2};
  check<bf16, bf16>(sc::kind::fprop, {.pr = a, .beta = 0.5f, .bias = true, .act = act::relu, .seed = 231},
                    kernel_launcher<KM>{});
  sc::problem b = p2d(3, 11, 10, 96, 72, 3, 3);  // C 96: three K steps per tap
  b.pad = b.pad_end = {0, 1, 1};
  b.groups = 2;
  check<bf16, bf16>(sc::kind::fprop, {.pr = b, .pixel_pad = 8, .seed = 232}, kernel_launcher<KL>{});
  sc::problem c = p2d(1, 13, 3, 40, 130, 2, 1);  // C 40: taps straddling K steps; N = 130 past a tile
  c.stride = {1, 3, 1};
  c.pad = {0, 2, 0};
  check<bf16, bf16>(sc::kind::fprop, {.pr = c, .seed = 233}, kernel_launcher<KL>{});
  check<bf16, bf16>(sc::kind::fprop, {.pr = c, .seed = 234}, kernel_launcher<KM>{});
  sc::problem one = p2d(1, 1, 1, 8, 8, 1, 1);  // one pixel, one K step of 8
  check<bf16, bf16>(sc::kind::fprop, {.pr = one, .seed = 235}, kernel_launcher<KM>{});
  // The streams into XOR-swizzled stages (the GEMM tile compiled for fprop's operand orders; the CUDA
  // entry keeps the padded stages, which issue fewer instructions there, and CDNA runs this layout).
  using KS = sc::kernel<sc::kind::fprop, arch::sm80, cfg::sm80_atom<bf16>::type, cfg::sm80_large, sc::detail::entry_epilogue<bf16>,
                        strata::order::default_for<arch::sm80>, 16, strata::ops::gemm::operand_orders::a_row_b_col>;
  static_assert(KS::fprop_streams && KS::gemm_kernel::swizzled_stages);
  check<bf16, bf16>(sc::kind::fprop, {.pr = a, .bias = true, .seed = 236}, kernel_launcher<KS>{});
  check<bf16, bf16>(sc::kind::fprop, {.pr = c, .seed = 237}, kernel_launcher<KS>{});
}

TEST_CASE("conv sm80 tf32 and int8", "[conv]") {
  sc::problem p = p2d(1, 6, 7, 8, 12, 3, 3);
  p.pad = p.pad_end = {0, 1, 1};
  all<float, float, cfg::sm80_medium, 16>({.pr = p, .seed = 221}, /*tf32*/ true);
  sc::problem q = p2d(2, 5, 5, 16, 32, 3, 3);
  q.stride = {1, 2, 2};
  all<std::int8_t, std::int32_t, cfg::sm80_medium, 16>({.pr = q, .beta = 1.f, .seed = 222});
  all<std::int8_t, std::int8_t, cfg::sm80_medium, 1>({.pr = p, .alpha = 0.25f, .seed = 223});
}

TEST_CASE("conv 1x1 on the CUDA entry's GEMM tiles: fixed operand orders, copy streams, the 128 x 256 tile", "[conv]") {
  // fprop is A row-major x B column-major (x times w^T), dgrad both row-major (dy times w); with 16-byte
  // rows each takes the GEMM tiles compiled for its pair (sc::detail::run_one_by_one): skinny (M <= 16),
  // medium (M <= 128), large, and for fprop with M >= 256, N >= 512 the 128 x 256 tile. Channels
  // that are not whole 16-byte vectors take the any-layout tiles.
  using cuda = strata::ops::gemm::detail::platform<strata::ops::gemm::detail::platform_kind::cuda>;
  check_one_by_one<cuda, bf16, bf16>({.pr = p2d(2, 9, 8, 40, 72, 1, 1), .beta = 0.5f, .bias = true, .act = act::relu, .seed = 301});
  check_one_by_one<cuda, f16, f16>({.pr = p2d(1, 5, 7, 24, 40, 1, 1), .bias = true, .seed = 302});
  check_one_by_one<cuda, bf16, float>({.pr = p2d(1, 3, 5, 16, 56, 1, 1), .beta = 1.f, .seed = 303});
  check_one_by_one<cuda, bf16, bf16>({.pr = p2d(1, 16, 16, 16, 520, 1, 1), .seed = 304});
  check_one_by_one<cuda, f16, f16>({.pr = p2d(2, 6, 5, 40, 24, 1, 1), .pixel_pad = 8, .seed = 305});  // pixels one stride apart
  check_one_by_one<cuda, bf16, bf16>({.pr = p2d(2, 6, 5, 7, 5, 1, 1), .seed = 306});                  // 14-byte rows: any layout
}
