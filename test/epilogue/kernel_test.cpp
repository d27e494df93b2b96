// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An epilogue chain inside a kernel on the host emulator: blocks walk the output tiles, threads apply
// the chain to their accumulator fragments, outputs start poisoned (the padding columns between cols
// and ldd must stay poisoned), for warp size 32 and 64 and under several fiber schedules.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "../unit/support.hpp"
#include "reference.hpp"
#include "tile_kernel.hpp"

namespace ep = strata::epilogue;
namespace arch = strata::arch;
using namespace strata_test;
using namespace strata_test::ep_ref;
using strata::bf16;

namespace {

// The two chains test/compile/epilogue_kernels.cu also builds for every GPU target.
using gelu_bf16 = ep::chain<ep::alpha_beta<bf16>, ep::bias_col<bf16>, ep::gelu_tanh, ep::convert_to<bf16>>;
using dequant_i8 = ep::chain<ep::scale_row<>, ep::scale_col<>, ep::bias_row<>, ep::relu, ep::convert_to<std::int8_t>>;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class Target>
void check_gelu_bf16(int rows, int cols, int grid) {
  strata::stream s;
  const std::int64_t ldd = cols + 3, ldc = cols + 1;
  const auto h_acc = random_nonzero(std::size_t(rows) * cols, 200 + rows);
  const auto h_c = random_nonzero<bf16>(std::size_t(rows) * ldc, 201 + cols);
  const auto h_bias = random_nonzero<bf16>(std::size_t(cols), 202);
  auto acc = to_device(s, h_acc);
  auto c = to_device(s, h_c);
  auto bias = to_device(s, h_bias);
  const bf16 poison = bf16::from_bits(0x7FC1);  // a NaN no conversion produces (canonical is 0x7FFF)
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto d = poisoned<bf16>(s, std::size_t(rows) * ldd, poison);
    using kernel = epilogue_tile_kernel<Target, gelu_bf16, float>;
    const typename kernel::params p{
        acc.data(), d.data(), rows, cols, ldd,
        gelu_bf16::make_params({.alpha = 1.5f, .beta = 0.5f, .c = ep::row_major(c.data(), ldc)},
                               {.data = bias.data()}, {}, {})};
    strata::launch(s, {.grid = grid, .block = 128}, kernel{}, p);
    const auto h_d = to_host(s, d);
    for (int r = 0; r < rows; ++r) {
      for (int col = 0; col < cols; ++col) {
        const double a = 1.5 * h_acc[r * cols + col], b = 0.5 * to_double(h_c[r * ldc + col]),
                     bb = to_double(h_bias[col]);
        INFO("target " << Target::name << " " << rows << "x" << cols << " workers " << opt.workers);
        check_element(h_d[r * ldd + col], gelu_tanh(a + b + bb), std::fabs(a) + std::fabs(b) + std::fabs(bb), r, col);
      }
      for (std::int64_t col = cols; col < ldd; ++col) REQUIRE(same_bits(h_d[r * ldd + col], poison));
    }
  }
}

template <class Target>
void check_dequant_i8(int rows, int cols, int grid) {
  strata::stream s;
  const auto h_acc = random_nonzero<std::int32_t>(std::size_t(rows) * cols, 300 + rows, 1, 3000);
  const auto h_sr = random_nonzero(std::size_t(rows), 301, 0.01, 0.05);
  const auto h_sc = random_nonzero(std::size_t(cols), 302, 0.5, 2.0);
  const auto h_b = random_nonzero(std::size_t(rows), 303);
  auto acc = to_device(s, h_acc);
  auto sr = to_device(s, h_sr);
  auto sc = to_device(s, h_sc);
  auto b = to_device(s, h_b);
  const std::int8_t poison = -77;  // never produced here: relu makes every output >= 0
  s.set_emulator_options(schedules().back());
  auto d = poisoned<std::int8_t>(s, std::size_t(rows) * cols, poison);
  using kernel = epilogue_tile_kernel<Target, dequant_i8, std::int32_t>;
  const typename kernel::params p{acc.data(), d.data(), rows, cols, cols,
                                  dequant_i8::make_params({sr.data()}, {sc.data()}, {b.data()}, {}, {})};
  strata::launch(s, {.grid = grid, .block = 128}, kernel{}, p);
  const auto h_d = to_host(s, d);
  for (int r = 0; r < rows; ++r)
    for (int col = 0; col < cols; ++col) {
      const double x = double(h_acc[r * cols + col]) * h_sr[r] * h_sc[col];
      INFO("target " << Target::name << " " << rows << "x" << cols);
      check_element(h_d[r * cols + col], relu(x + h_b[r]), std::fabs(x) + std::fabs(h_b[r]), r, col);
    }
}

}  // namespace

TEST_CASE("epilogue chain in a kernel on the emulator, tile by tile, poisoned outputs", "[epilogue][emulator]") {
  // Shapes that are not multiples of the 16 x 32 tile, tiny ones, and more tiles than blocks.
  for (auto [rows, cols] : {std::pair{1, 1}, {16, 32}, {17, 33}, {50, 7}, {5, 97}}) {
    check_gelu_bf16<arch::host>(rows, cols, 3);
    check_gelu_bf16<arch::sm80>(rows, cols, 2);
    check_gelu_bf16<arch::gfx942>(rows, cols, 5);  // wavefront 64: 2 wavefronts per block
    check_dequant_i8<arch::sm90a>(rows, cols, 4);
    check_dequant_i8<arch::gfx90a>(rows, cols, 1);
  }
}
