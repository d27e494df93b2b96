// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tensor layer in a kernel on the emulator: a matrix copied tile by tile through a swizzled
// shared-memory tile (tile_copy_kernel.hpp), for shapes that are not multiples of the tile and thread
// counts that do not divide it, at warp size 32 and 64. Outputs start poisoned.
#include <catch2/catch.hpp>

#include <cmath>

#include "../unit/support.hpp"
#include "tile_copy_kernel.hpp"

using namespace strata_test;
namespace arch = strata::arch;

template <class Kernel>
void check_tile_copy(int rows, int cols) {
  strata::stream s;
  const auto h = random_vector<float>(static_cast<std::size_t>(rows) * cols, rows * 7919 + cols, -3.f, 3.f);
  auto in = to_device(s, h);
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, h.size(), NAN);
    const strata::dims grid((cols + 63) / 64, (rows + 31) / 32);
    strata::launch(s, {.grid = grid, .block = Kernel::threads}, Kernel{}, tile_copy_params{in.data(), out.data(), rows, cols});
    const auto o = to_host(s, out);
    for (std::size_t i = 0; i < h.size(); ++i) {
      INFO("kernel " << Kernel::threads << " threads, " << rows << " x " << cols << " at " << i / cols << "," << i % cols);
      REQUIRE(o[i] == h[i]);
    }
  }
}

TEST_CASE("tile copy through a swizzled shared tile: partition + predicates", "[tensor][emulator][kernel]") {
  for (auto [r, c] : {std::pair{1, 1}, {32, 64}, {33, 65}, {100, 37}, {64, 128}, {7, 200}}) {
    check_tile_copy<tensor_tile_copy_kernel<arch::sm80>>(r, c);                   // 8 x 32 threads
    check_tile_copy<tensor_tile_copy_kernel<arch::gfx942, 32, 64, 6, 16>>(r, c);  // 96 threads, 6 does not divide 32
    check_tile_copy<tensor_tile_copy_kernel<arch::host, 32, 64, 5, 7>>(r, c);     // 35 threads, divides neither
  }
}
