// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Copy atoms on the emulator: vector copies with predication, the cooperative tile copy (plain and
// cp.async), cp.async group semantics with a planted missing wait, AMD buffer loads out of range.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "../unit/support.hpp"
#include "kernels.hpp"

using namespace strata_test;
namespace arch = strata::arch;
namespace copy = strata::copy;

// The widths chosen at compile time.
static_assert(copy::widest_vector_bytes<float, 8, 16> == 16);
static_assert(copy::widest_vector_bytes<float, 8, 8> == 8);
static_assert(copy::widest_vector_bytes<float, 6, 16> == 8);   // 24 bytes: 16 does not divide the run
static_assert(copy::widest_vector_bytes<float, 3, 16> == 4);
static_assert(copy::widest_vector_bytes<std::uint16_t, 8, 16> == 16);
static_assert(copy::widest_vector_bytes<std::uint16_t, 3, 16> == 2);
static_assert(copy::widest_vector_bytes<std::uint8_t, 32, 4> == 4);
static_assert(copy::widest_vector_bytes<double, 2, 8> == 8);
static_assert(copy::vector_copy<float, 8, 16>::vectors == 2);
static_assert(copy::tile_copy<float, 16, 32, 16>::vectors == 128);
static_assert(copy::tile_copy<float, 16, 37, 4>::elements_per_vector == 1);
// The ldmatrix maps: lanes 0-3 hold row 0; .trans hands lane 0 column 0 of rows 0 and 1.
static_assert(copy::ldmatrix<4>::value_of(5, 2, 1) == copy::matrix_coord{2, 1, 3});
static_assert(copy::ldmatrix<1, true>::value_of(0, 0, 1) == copy::matrix_coord{0, 1, 0});
static_assert(copy::ldmatrix<2>::address_of(13) == copy::matrix_coord{1, 5, 0});
// (Uncomment to see the message "a 16-byte vector copy needs 16-byte alignment; this view guarantees 4".)
// using too_wide = copy::vector_copy<float, 4, 4, 16>; static_assert(too_wide::vectors == 1);

template <class T, int N, std::size_t Align, copy::fill Fill>
void check_vector_copy() {
  strata::stream s;
  const int threads = 70;
  std::vector<T> in(static_cast<std::size_t>(threads) * N);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(1 + (i * 7919) % 100);
  std::vector<int> valid(threads);
  for (int t = 0; t < threads; ++t) valid[t] = t % (N + 3) - 1;  // -1 .. N+1: none, edges, all
  auto din = to_device(s, in);
  auto dvalid = to_device(s, valid);
  auto out = poisoned<T>(s, in.size(), T(-3));
  strata::launch(s, {.grid = 2, .block = 64}, vector_copy_kernel<arch::host, T, N, Align, Fill>{},
                 vector_params<T>{din.data(), out.data(), dvalid.data(), threads});
  const auto o = to_host(s, out);
  for (int t = 0; t < threads; ++t)
    for (int e = 0; e < N; ++e) {
      const std::size_t i = static_cast<std::size_t>(t) * N + e;
      const T expect = e < valid[t] ? in[i] : (Fill == copy::fill::zero ? T(0) : T(-3));
      INFO("N " << N << " align " << Align << " thread " << t << " valid " << valid[t] << " element " << e);
      REQUIRE(o[i] == expect);
    }
}

TEST_CASE("vector_copy: widths from type, run and alignment; predicated elements zero-filled or kept", "[copy]") {
  check_vector_copy<float, 8, 16, copy::fill::zero>();
  check_vector_copy<float, 8, 16, copy::fill::keep>();
  check_vector_copy<float, 6, 8, copy::fill::zero>();
  check_vector_copy<float, 3, 4, copy::fill::keep>();
  check_vector_copy<std::int16_t, 8, 16, copy::fill::zero>();
  check_vector_copy<std::int16_t, 5, 2, copy::fill::keep>();
  check_vector_copy<double, 4, 16, copy::fill::zero>();
  check_vector_copy<std::int8_t, 16, 16, copy::fill::keep>();
}

template <class Target, int Rows, int Cols, std::size_t Align, bool Async, bool MissingWait = false, int Threads = 0,
          bool Transposed = false>
std::vector<float> run_tile_copy(int rows, int cols, int ld, const strata::emulator::options& opt) {
  strata::stream s;
  s.set_emulator_options(opt);
  const auto h = random_vector<float>(static_cast<std::size_t>(rows) * ld, rows * 131 + cols, -4.f, 4.f);
  auto in = to_device(s, h);
  const int tiles = ((rows + Rows - 1) / Rows) * ((cols + Cols - 1) / Cols);
  auto out = poisoned<float>(s, static_cast<std::size_t>(tiles) * Rows * Cols, -99.f);
  strata::launch(s, {.grid = tiles, .block = 96}, tile_copy_kernel<Target, Rows, Cols, Align, Async, MissingWait, Threads, Transposed>{},
                 tile_params{in.data(), out.data(), rows, cols, ld});
  const auto o = to_host(s, out);
  // Every element: the matrix where it exists, zero outside.
  const int tiles_per_row = (cols + Cols - 1) / Cols;
  std::vector<float> expect(o.size());
  for (int b = 0; b < tiles; ++b)
    for (int r = 0; r < Rows; ++r)
      for (int c = 0; c < Cols; ++c) {
        const int gr = (b / tiles_per_row) * Rows + r, gc = (b % tiles_per_row) * Cols + c;
        expect[static_cast<std::size_t>(b) * Rows * Cols + r * Cols + c] =
            gr < rows && gc < cols ? h[static_cast<std::size_t>(gr) * ld + gc] : 0.f;
      }
  if constexpr (!MissingWait) {
    for (std::size_t i = 0; i < o.size(); ++i) {
      INFO("tile " << Rows << "x" << Cols << " align " << Align << " async " << Async << " transposed " << Transposed << " matrix " << rows << "x"
                   << cols << " ld " << ld << " at " << i);
      REQUIRE(o[i] == expect[i]);
    }
  }
  return o;
}

TEST_CASE("block tile copy spreads vectors over the block, edges predicated", "[copy][tile]") {
  for (const auto& opt : schedules()) {
    for (auto [r, c] : {std::pair{16, 32}, {1, 1}, {17, 33}, {45, 70}, {5, 100}}) {
      const int ld4 = (c + 3) / 4 * 4;  // rows 16-byte aligned
      run_tile_copy<arch::host, 16, 32, 16, false>(r, c, ld4, opt);
      run_tile_copy<arch::gfx942, 16, 32, 16, false>(r, c, ld4, opt);
      run_tile_copy<arch::host, 8, 24, 4, false>(r, c, c, opt);  // ld = cols: only 4-byte alignment
      run_tile_copy<arch::sm80, 16, 32, 16, true>(r, c, ld4, opt);
      run_tile_copy<arch::sm80, 8, 24, 8, true>(r, c, (c + 1) / 2 * 2, opt);
      run_tile_copy<arch::sm80, 8, 24, 4, true>(r, c, c, opt);
      // The block's 96 threads known at compile time (the unrolled form gemm::kernel uses): 128 and 48
      // vectors, neither a multiple of 96, so the last round is partial.
      run_tile_copy<arch::host, 16, 32, 16, false, false, 96>(r, c, ld4, opt);
      run_tile_copy<arch::sm80, 16, 32, 16, true, false, 96>(r, c, ld4, opt);
      run_tile_copy<arch::sm80, 8, 24, 8, true, false, 96>(r, c, (c + 1) / 2 * 2, opt);
    }
  }
}

// The transposing copy (attention's V^T stages on CDNA, forward.hpp): element (r, c) of the tile at
// stage[c * ld + r], zeros outside the matrix, for the launch's thread count and a compile-time one.
TEST_CASE("block tile copy, transposed: rows become columns, edges predicated", "[copy][tile]") {
  for (const auto& opt : schedules()) {
    for (auto [r, c] : {std::pair{16, 32}, {1, 1}, {17, 33}, {45, 70}, {5, 100}}) {
      const int ld4 = (c + 3) / 4 * 4;
      run_tile_copy<arch::gfx942, 16, 32, 16, false, false, 0, true>(r, c, ld4, opt);
      run_tile_copy<arch::host, 8, 24, 4, false, false, 0, true>(r, c, c, opt);
      run_tile_copy<arch::gfx942, 16, 32, 16, false, false, 96, true>(r, c, ld4, opt);
    }
  }
}

TEST_CASE("tile_copy for a compile-time thread count refuses a block of another size", "[copy][tile]") {
  strata::stream s;
  auto in = to_device(s, std::vector<float>(16 * 32, 1.f));
  auto out = poisoned<float>(s, 16 * 32, 0.f);
  REQUIRE_THROWS_WITH(strata::launch(s, {.grid = 1, .block = 96}, tile_copy_kernel<arch::sm80, 16, 32, 16, true, false, 128>{},
                                     tile_params{in.data(), out.data(), 16, 32, 32}),
                      Catch::Contains("tile_copy for 128 threads used by a block of 96") &&
                          Catch::Contains("tile_copy_kernel"));
}

TEST_CASE("cp.async: a planted missing wait reads poison; the same kernel with the wait passes", "[copy][cp_async]") {
  const auto opt = schedules()[0];
  // With the wait: exact (checked inside).
  run_tile_copy<arch::sm80, 16, 32, 16, true, false>(20, 40, 40, opt);
  // Without: the block reads the tile while copies are in flight. A thread's copies land when it exits
  // (as on a GPU, eventually), so threads that read after others exited may see data; the first
  // readers see poison, and the result is wrong.
  const auto o = run_tile_copy<arch::sm80, 16, 32, 16, true, true>(20, 40, 40, opt);
  std::size_t nans = 0;
  for (float x : o) nans += std::isnan(x) ? 1 : 0;
  REQUIRE(nans > 0);
}

TEST_CASE("cp.async groups: wait<N> lands all but the N newest groups, in order", "[copy][cp_async]") {
  strata::stream s;
  const int threads = 200;
  const auto h = random_vector<float>(3 * threads, 5, 1.f, 2.f);
  auto in = to_device(s, h);
  for (const auto& opt : schedules()) {
    s.set_emulator_options(opt);
    auto out = poisoned<float>(s, 12 * threads, -1.f);
    strata::launch(s, {.grid = 1, .block = threads}, cp_async_groups_kernel<arch::sm80>{},
                   groups_params{in.data(), out.data()});
    const auto o = to_host(s, out);
    for (int t = 0; t < threads; ++t) {
      const float* x = &o[12 * t];
      const float* v = &h[3 * t];
      INFO("thread " << t);
      // after wait<2>: group 0 only
      REQUIRE(x[0] == v[0]);
      REQUIRE(std::isnan(x[1]));
      REQUIRE(std::isnan(x[2]));
      // after wait<1>: groups 0, 1
      REQUIRE(x[3] == v[0]);
      REQUIRE(x[4] == v[1]);
      REQUIRE(std::isnan(x[5]));
      // wait<7> with one group pending: nothing more lands, not an error
      REQUIRE(x[6] == v[0]);
      REQUIRE(x[7] == v[1]);
      REQUIRE(std::isnan(x[8]));
      // wait<0>: everything
      REQUIRE(x[9] == v[0]);
      REQUIRE(x[10] == v[1]);
      REQUIRE(x[11] == v[2]);
    }
  }
}

TEST_CASE("cp.async copies outstanding at thread exit land and do not leak into the next launch", "[copy][cp_async]") {
  // The missing-wait kernel exits with copies in flight; run it, then the correct kernel on the same
  // workers: the fibers are reused and must start with empty queues.
  const auto opt = strata::emulator::options{.workers = 1};
  for (int i = 0; i < 2; ++i) {
    run_tile_copy<arch::sm80, 16, 32, 16, true, true>(16, 32, 32, opt);
    run_tile_copy<arch::sm80, 16, 32, 16, true, false>(16, 32, 32, opt);
  }
}

TEST_CASE("AMD buffer loads: words outside the buffer read as zero", "[copy][buffer]") {
  strata::stream s;
  const int n = 37;  // not a multiple of the 4-float vectors: the last vector straddles the end
  const auto h = random_vector<float>(n, 11, 1.f, 2.f);
  auto in = to_device(s, h);
  const int threads = 64;
  for (int start : {-6, 0, 3}) {
    auto out = poisoned<float>(s, 5 * threads, -1.f);
    strata::launch(s, {.grid = 1, .block = threads}, buffer_load_kernel<arch::gfx90a>{},
                   buffer_params{in.data(), n, start, out.data()});
    const auto o = to_host(s, out);
    auto at = [&](long long i) { return i >= 0 && i < n ? h[i] : 0.f; };
    for (int t = 0; t < threads; ++t) {
      INFO("start " << start << " thread " << t);
      // A vector that starts below the buffer is all zeros: the offset is unsigned and the per-word
      // check saturates, so even its words that would fall inside are out of range.
      const long long first = start + 4LL * t;
      for (int i = 0; i < 4; ++i) REQUIRE(o[4 * t + i] == (first < 0 ? 0.f : at(first + i)));
      REQUIRE(o[4 * threads + t] == at(start + 4LL * t + 1));
    }
  }
}

namespace {
struct bad_cp_async_kernel {
  using target = arch::sm80;
  static constexpr const char* name = "bad_cp_async_kernel";
  template <class Ctx>
  void operator()(Ctx& ctx, const tile_params& p) const {
    copy::cp_async<4>(ctx, p.out, p.in);  // global destination: not allowed
  }
};
}  // namespace

TEST_CASE("emulator reports cp.async misuse: destination outside shared memory", "[copy][cp_async]") {
  strata::stream s;
  auto in = to_device(s, std::vector<float>(4, 1.f));
  auto out = poisoned<float>(s, 4, 0.f);
  REQUIRE_THROWS_WITH(strata::launch(s, {.grid = 1, .block = 32}, bad_cp_async_kernel{}, tile_params{in.data(), out.data(), 0, 0, 0}),
                      Catch::Contains("cp.async writes shared memory only") && Catch::Contains("bad_cp_async_kernel"));
}
