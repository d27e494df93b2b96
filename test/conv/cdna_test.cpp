// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The implicit-GEMM kernel in its CDNA configurations on the emulator (wave64, MFMA with the exact
// gfx942 / gfx90a fragment layouts): bf16 on gfx942 (the MI300-class descriptor), int8 on gfx90a and
// fp32 on the f32 MFMA (the configuration the HIP entry runs for fp32).
#include "support.hpp"

using namespace strata_test::conv;
namespace arch = strata::arch;
namespace cfg = strata::ops::gemm::configs;
using strata::bf16;
using strata::f16;
using act = sc::activation;

namespace {
sc::problem p2d(int n, int h, int w, int c, int k, int r, int s) {
  return {.n = n, .c = c, .k = k, .input = {1, h, w}, .filter = {1, r, s}};
}

template <sc::kind Kind, class Target, class TA, class TD>
using cdna_kernel =
    sc::kernel<Kind, Target, typename cfg::cdna_atom<Target, TA, true>::type,
               sizeof(TA) == 4 ? cfg::cdna_large_f32 : cfg::cdna_large,
               std::conditional_t<Kind == sc::kind::wgrad, sc::detail::wgrad_epilogue<TD>, sc::detail::entry_epilogue<TD>>>;
/// fprop with 16-byte gathers as the HIP entry runs it: the A row-major x B column-major tile, its
/// K loop staged through registers (conv::kernel::register_staged_fprop).
template <class Target, class TA, class TD>
using cdna_fprop16 =
    sc::kernel<sc::kind::fprop, Target, typename cfg::cdna_atom<Target, TA, true>::type,
               sizeof(TA) == 4 ? cfg::cdna_large_f32 : cfg::cdna_large, sc::detail::entry_epilogue<TD>,
               strata::order::default_for<Target>, 16, strata::ops::gemm::operand_orders::a_row_b_col>;
}  // namespace

TEST_CASE("conv fprop on CDNA through its gather streams staged in registers: 3D, dilation, K residue, edges", "[conv]") {
  // As sm80_test.cpp's stream cases: channels per group below, at and above tile_k (taps wrapping
  // inside one K step, on its edge, every few steps), K not a multiple of tile_k (the residue step
  // first), padding on every side, strides, dilation, depth, groups, padded pixel strides, M and N edges.
  using K = cdna_fprop16<arch::gfx942, bf16, bf16>;
  static_assert(K::fprop_register_streams && K::gemm_kernel::use_vector_fragments && K::gemm_kernel::swizzled_stages);
  sc::problem a{.n = 2, .c = 8, .k = 20, .input = {3, 5, 6}, .filter = {2, 3, 3}};  // K = 144: a residue of 16
  a.pad = {1, 1, 0};
  a.pad_end = {0, 1, 2};
  a.stride = {1, 2, 1};
  a.dilation = {2, 1, 2};
  check<bf16, bf16>(sc::kind::fprop, {.pr = a, .beta = 0.5f, .bias = true, .act = act::relu, .seed = 331}, kernel_launcher<K>{});
  sc::problem b = p2d(3, 11, 10, 96, 72, 3, 3);  // C 96: three K steps per tap
  b.pad = b.pad_end = {0, 1, 1};
  b.groups = 2;
  check<bf16, bf16>(sc::kind::fprop, {.pr = b, .pixel_pad = 8, .seed = 332}, kernel_launcher<K>{});
  sc::problem c = p2d(1, 13, 3, 40, 130, 2, 1);  // C 40: taps straddling K steps; N = 130 past a tile
  c.stride = {1, 3, 1};
  c.pad = {0, 2, 0};
  check<bf16, bf16>(sc::kind::fprop, {.pr = c, .seed = 333}, kernel_launcher<K>{});
  check<f16, float>(sc::kind::fprop, {.pr = c, .bias = true, .seed = 334}, kernel_launcher<cdna_fprop16<arch::gfx90a, f16, float>>{});
  sc::problem one = p2d(1, 1, 1, 8, 8, 1, 1);  // one pixel, one K step of 8
  check<bf16, bf16>(sc::kind::fprop, {.pr = one, .seed = 335}, kernel_launcher<K>{});
  // int8 (16-channel vectors) on both CDNA generations' atoms, fp32 on the f32 MFMA (4-channel vectors).
  sc::problem q = p2d(2, 6, 7, 48, 24, 3, 3);  // K = 432: a residue of 16 past 13 steps of 32
  q.pad = q.pad_end = {0, 1, 1};
  check<std::int8_t, std::int32_t>(sc::kind::fprop, {.pr = q, .beta = 1.f, .seed = 336},
                                   kernel_launcher<cdna_fprop16<arch::gfx942, std::int8_t, std::int32_t>>{});
  check<std::int8_t, std::int32_t>(sc::kind::fprop, {.pr = q, .seed = 337},
                                   kernel_launcher<cdna_fprop16<arch::gfx90a, std::int8_t, std::int32_t>>{});
  sc::problem f = p2d(1, 5, 9, 12, 10, 3, 2);  // K = 72 over tile_k 16: a residue of 8
  f.stride = {1, 1, 2};
  f.pad = {0, 1, 0};
  check<float, float>(sc::kind::fprop, {.pr = f, .bias = true, .act = act::silu, .seed = 338},
                      kernel_launcher<cdna_fprop16<arch::gfx942, float, float>>{});
}

TEST_CASE("conv gfx942 MFMA bf16: fprop, dgrad, wgrad", "[conv]") {
  const sc::problem p{.n = 2, .c = 6, .k = 10, .input = {1, 5, 7}, .filter = {1, 3, 3}, .stride = {1, 1, 2},
                      .pad = {0, 1, 1}, .pad_end = {0, 1, 1}};
  check<bf16, bf16>(sc::kind::fprop, {.pr = p, .bias = true, .act = sc::activation::relu, .seed = 301},
                    kernel_launcher<cdna_kernel<sc::kind::fprop, arch::gfx942, bf16, bf16>>{});
  check<bf16, float>(sc::kind::dgrad, {.pr = p, .beta = 1.f, .seed = 302},
                     kernel_launcher<cdna_kernel<sc::kind::dgrad, arch::gfx942, bf16, float>>{});
  check<bf16, float>(sc::kind::wgrad, {.pr = p, .split_k = 2, .seed = 303},
                     kernel_launcher<cdna_kernel<sc::kind::wgrad, arch::gfx942, bf16, float>>{});
}

TEST_CASE("conv gfx90a MFMA int8 fprop", "[conv]") {
  const sc::problem p{.n = 1, .c = 9, .k = 5, .groups = 1, .input = {2, 3, 4}, .filter = {2, 2, 2}, .pad = {1, 0, 1}};
  check<std::int8_t, std::int32_t>(sc::kind::fprop, {.pr = p, .seed = 311},
                                   kernel_launcher<cdna_kernel<sc::kind::fprop, arch::gfx90a, std::int8_t, std::int32_t>>{});
}

TEST_CASE("conv gfx942 / gfx90a MFMA fp32: fprop, dgrad with stride, wgrad", "[conv]") {
  const sc::problem p{.n = 2, .c = 5, .k = 7, .input = {1, 6, 5}, .filter = {1, 3, 2}, .stride = {1, 2, 1},
                      .pad = {0, 1, 0}, .pad_end = {0, 0, 1}};
  check<float, float>(sc::kind::fprop, {.pr = p, .bias = true, .act = sc::activation::silu, .seed = 321},
                      kernel_launcher<cdna_kernel<sc::kind::fprop, arch::gfx942, float, float>>{});
  check<float, float>(sc::kind::dgrad, {.pr = p, .beta = 0.5f, .seed = 322},
                      kernel_launcher<cdna_kernel<sc::kind::dgrad, arch::gfx90a, float, float>>{});
  check<float, float>(sc::kind::wgrad, {.pr = p, .seed = 323},
                      kernel_launcher<cdna_kernel<sc::kind::wgrad, arch::gfx942, float, float>>{});
}

TEST_CASE("conv 1x1 on the HIP entry's GEMM tiles: fixed operand orders, B row-major written transposed", "[conv]") {
  // As on CUDA (sm80_test.cpp): fprop A row-major x B column-major, dgrad both row-major, each on the
  // gfx942 tiles compiled for its pair when rows are 16-byte aligned (dgrad's w along N goes into its
  // stage transposed): the 16 x 64 tile for M <= 32, else 128 x 128.
  using hip = strata::ops::gemm::detail::platform<strata::ops::gemm::detail::platform_kind::hip, true>;
  check_one_by_one<hip, bf16, bf16>({.pr = p2d(2, 9, 8, 40, 72, 1, 1), .beta = 0.5f, .bias = true, .act = act::relu, .seed = 311});
  check_one_by_one<hip, f16, f16>({.pr = p2d(1, 3, 5, 24, 40, 1, 1), .bias = true, .seed = 312});
  check_one_by_one<hip, std::int8_t, std::int32_t>({.pr = p2d(2, 4, 6, 32, 48, 1, 1), .beta = 1.f, .seed = 313});
  check_one_by_one<hip, float, float>({.pr = p2d(1, 7, 6, 12, 20, 1, 1), .seed = 314});
  check_one_by_one<hip, bf16, bf16>({.pr = p2d(2, 6, 5, 7, 5, 1, 1), .seed = 315});  // 14-byte rows: any layout
}
