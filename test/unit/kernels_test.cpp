// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The emulator's semantics shown with real kernels: a block reduction, a shared-memory tiled transpose,
// a warp-shuffle scan and a cluster exchange, each at warp size 32 and 64 where it applies, under
// several worker counts and fiber orders.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "../kernels/block_reduce.hpp"
#include "../kernels/cluster_exchange.hpp"
#include "../kernels/transpose.hpp"
#include "../kernels/warp_scan.hpp"
#include "support.hpp"

using namespace strata_test;
namespace arch = strata::arch;

template <class Target>
void check_block_reduce(long long n, int grid) {
  strata::stream s;
  const auto h = random_vector<float>(static_cast<std::size_t>(n), 7 + n, -1.f, 1.f);
  auto in = to_device(s, h);
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, grid, NAN);
    strata::launch(s, {.grid = grid, .block = 256}, block_reduce_kernel<Target>{},
                   reduce_params{in.data(), out.data(), n});
    const auto o = to_host(s, out);
    // Reference in double: each block's grid-stride share.
    for (int b = 0; b < grid; ++b) {
      double ref = 0, mag = 0;
      for (long long i = b * 256LL; i < n; i += 256LL * grid)
        for (long long j = i; j < std::min(i + 256, n); ++j) ref += h[j], mag += std::fabs(h[j]);
      INFO("target " << Target::name << " n " << n << " block " << b << " workers " << opt.workers);
      REQUIRE(std::fabs(o[b] - ref) <= 1e-6 * mag + 1e-6);
    }
  }
}

TEST_CASE("block reduction: warp tree, shared memory and block barrier", "[emulator][kernel]") {
  for (long long n : {1LL, 255LL, 256LL, 4099LL, 100003LL}) {
    check_block_reduce<arch::host>(n, 7);
    check_block_reduce<arch::sm80>(n, 3);
    check_block_reduce<arch::gfx942>(n, 5);  // wavefront 64: 4 warps per block
  }
}

TEST_CASE("block reduction is bitwise reproducible across worker counts and fiber orders", "[emulator][determinism]") {
  strata::stream s;
  const long long n = 50000;
  auto in = to_device(s, random_vector<float>(n, 99, -100.f, 100.f));
  std::vector<float> first;
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, 9, NAN);
    strata::launch(s, {.grid = 9, .block = 256}, block_reduce_kernel<arch::gfx90a>{},
                   reduce_params{in.data(), out.data(), n});
    auto o = to_host(s, out);
    if (first.empty()) first = o;
    REQUIRE(std::memcmp(first.data(), o.data(), o.size() * sizeof(float)) == 0);
  }
}

template <class Target>
void check_transpose(int rows, int cols) {
  strata::stream s;
  const auto h = random_vector<float>(static_cast<std::size_t>(rows) * cols, rows * 1000 + cols, -5.f, 5.f);
  auto in = to_device(s, h);
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, h.size(), NAN);
    const strata::dims grid((cols + 31) / 32, (rows + 31) / 32);
    strata::launch(s, {.grid = grid, .block = strata::dims(32, 8)}, transpose_kernel<Target>{},
                   transpose_params{in.data(), out.data(), rows, cols});
    const auto o = to_host(s, out);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        INFO("rows " << rows << " cols " << cols << " at " << r << "," << c);
        REQUIRE(o[static_cast<std::size_t>(c) * rows + r] == h[static_cast<std::size_t>(r) * cols + c]);
      }
  }
}

TEST_CASE("tiled transpose through shared memory, edges predicated", "[emulator][kernel]") {
  for (auto [r, c] : {std::pair{1, 1}, {32, 32}, {33, 31}, {70, 5}, {3, 97}, {64, 96}}) {
    check_transpose<arch::host>(r, c);
    check_transpose<arch::gfx942>(r, c);  // 256 threads = 4 wavefronts of 64
  }
}

template <class Target>
void check_scan(int block, long long n) {
  constexpr int W = Target::warp_size;
  strata::stream s;
  const auto h = random_vector<int>(static_cast<std::size_t>(n), n + block, -1000, 1000);
  auto in = to_device(s, h);
  const int grid = static_cast<int>((n + block - 1) / block);
  const int warps = (block + W - 1) / W;
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<int>(s, n, -77777);
    auto odd = poisoned<unsigned long long>(s, static_cast<std::size_t>(grid) * warps, ~0ull);
    auto mx = poisoned<int>(s, static_cast<std::size_t>(grid) * warps, -77777);
    strata::launch(s, {.grid = grid, .block = block}, warp_scan_kernel<Target>{},
                   scan_params{in.data(), out.data(), odd.data(), mx.data(), n});
    const auto o = to_host(s, out);
    const auto ob = to_host(s, odd);
    const auto om = to_host(s, mx);
    for (int b = 0; b < grid; ++b)
      for (int w = 0; w < warps; ++w) {
        long long acc = 0;
        unsigned long long bits = 0;
        int m = 0;  // out-of-range lanes contribute 0 to the max
        bool any_lane = false;
        for (int l = 0; l < W && w * W + l < block; ++l) {
          const long long i = static_cast<long long>(b) * block + w * W + l;
          const int x = i < n ? h[i] : 0;
          acc += x;
          if (i < n) {
            REQUIRE(o[i] == acc);
            if (x & 1) bits |= 1ull << l;
          }
          m = any_lane ? std::max(m, x) : x;
          any_lane = true;
        }
        INFO("target " << Target::name << " block " << block << " warp " << w);
        REQUIRE(ob[static_cast<std::size_t>(b) * warps + w] == bits);
        REQUIRE(om[static_cast<std::size_t>(b) * warps + w] == m);
      }
  }
}

TEST_CASE("warp-shuffle scan, ballot and max at warp size 32 and 64, partial last warps", "[emulator][kernel][warp]") {
  for (int block : {32, 64, 100, 256, 33}) {
    check_scan<arch::sm80>(block, 1000);
    check_scan<arch::gfx942>(block, 1000);
  }
  check_scan<arch::host>(1, 5);
}

TEST_CASE("cluster exchange through distributed shared memory", "[emulator][kernel][cluster]") {
  strata::stream s;
  for (int cluster : {1, 2, 4, 8}) {
    for (const auto& opt : schedules()) {
      s.set_emulator_options(opt);
      const int grid = 16, block = 96;
      auto out = poisoned<int>(s, grid * block, -1);
      strata::launch(s, {.grid = grid, .block = block, .cluster = cluster}, cluster_exchange_kernel<arch::sm90a>{},
                     exchange_params{out.data()});
      const auto o = to_host(s, out);
      for (int b = 0; b < grid; ++b)
        for (int t = 0; t < block; ++t) {
          const int neighbour = (b / cluster) * cluster + (b % cluster + 1) % cluster;
          INFO("cluster " << cluster << " block " << b << " thread " << t);
          REQUIRE(o[b * block + t] == neighbour * 1000 + (t + 1) % block);
        }
    }
  }
}
