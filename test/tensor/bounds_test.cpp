// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bounds-checking mode of tensor views (STRATA_BOUNDS_CHECK=1, set here for this translation unit):
// an access outside a view's shape throws strata::bounds_error naming the view, its memory, its shape
// and the coordinate; inside an emulated kernel the launch fails naming the kernel, block and thread.
// Correct code (the tensor-layer tile copy) runs unchanged.
#define STRATA_BOUNDS_CHECK 1

#include <catch2/catch.hpp>

#include <vector>

#include "../unit/support.hpp"
#include "strata/tensor/tensor.hpp"
#include "tile_copy_kernel.hpp"

using namespace strata_test;
using Catch::Matchers::Contains;

TEST_CASE("bounds check: host accesses name the view, shape and coordinate", "[tensor][bounds]") {
  std::vector<float> a(6 * 4, 1.f);
  auto v = strata::named(strata::global_view(a.data(), strata::row_major(6, 4)), "A");
  CHECK(v(5, 3) == 1.f);
  CHECK_THROWS_MATCHES(v(6, 0), strata::bounds_error,
                       Catch::Matchers::Message("strata bounds check: view 'A' (global memory, shape (6, 4)) accessed at "
                                                "(6, 0): coordinate 0 is 6, outside [0, 6)"));
  CHECK_THROWS_WITH(v(0, -1), Contains("coordinate 1 is -1, outside [0, 4)"));
  CHECK_THROWS_WITH(v[24], Contains("view 'A'") && Contains("linear index 24 is outside [0, 24)"));
  // Tiles keep the name; their own shape bounds them.
  auto t = strata::local_tile(v, strata::shape(strata::c_<2>, strata::c_<2>), strata::coord(1, 1));
  CHECK(t(1, 1) == 1.f);
  CHECK_THROWS_WITH(t(2, 0), Contains("view 'A'") && Contains("shape (2, 2)") && Contains("coordinate 0 is 2"));
  // Unnamed views say "view".
  auto u = strata::shared_view(a.data(), strata::column_major(strata::c_<3>, strata::c_<8>));
  CHECK_THROWS_WITH(u(0, 8), Contains("view 'view' (shared memory, shape (3, 8))"));
}

namespace {
struct overrun_params {
  float* out;
};
/// Each thread writes its element of a shared tile of 64 and reads the element 64 past its own: a bug.
struct overrun_kernel {
  using target = strata::arch::host;
  static constexpr const char* name = "overrun_kernel";
  struct shared_storage {
    float v[64];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const overrun_params& p) const {
    auto s = strata::named(strata::shared_view(ctx.template shared<shared_storage>().v, strata::row_major(strata::c_<64>)),
                           "staging tile");
    const int t = ctx.block().thread_rank();
    s(t) = float(t);
    ctx.block().sync();
    p.out[t] = s(t + (t == 37 ? 64 : 0));
  }
};
}  // namespace

TEST_CASE("bounds check: a kernel's out-of-range shared access fails the launch, naming kernel, thread and view",
          "[tensor][bounds][emulator]") {
  strata::stream s(strata::emulator::options{.workers = 1});
  auto out = poisoned<float>(s, 64, -1.f);
  CHECK_THROWS_WITH(strata::launch(s, {.grid = 1, .block = 64}, overrun_kernel{}, overrun_params{out.data()}),
                    Contains("overrun_kernel") && Contains("thread (37,0,0)") && Contains("view 'staging tile'") &&
                        Contains("linear index 101 is outside [0, 64)"));
}

TEST_CASE("bounds check: correct tensor-layer kernels run unchanged", "[tensor][bounds][emulator]") {
  strata::stream s;
  const int rows = 33, cols = 65;
  const auto h = random_vector<float>(static_cast<std::size_t>(rows) * cols, 5, -3.f, 3.f);
  auto in = to_device(s, h);
  auto out = poisoned<float>(s, h.size(), -1.f);
  using K = tensor_tile_copy_kernel<strata::arch::host, 32, 64, 5, 7>;
  strata::launch(s, {.grid = strata::dims((cols + 63) / 64, (rows + 31) / 32), .block = K::threads}, K{},
                 tile_copy_params{in.data(), out.data(), rows, cols});
  CHECK(to_host(s, out) == h);
}
