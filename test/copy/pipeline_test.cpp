// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata::pipeline streaming K-tiles through 2, 3 and 4 shared-memory stages: cp.async on sm80, plain
// loads and a block barrier on host and gfx942; exact against a reference for K that is not a multiple
// of the tile or of the stage count; a planted protocol bug caught by the emulator's poison.
#include <catch2/catch.hpp>

#include <cmath>

#include "../unit/support.hpp"
#include "kernels.hpp"

using namespace strata_test;
namespace arch = strata::arch;

// Integer-valued floats: every partial sum is exact whatever the order, so the check is equality.
static std::vector<float> integer_matrix(int m, int ld, std::uint64_t seed) {
  const auto v = random_vector<int>(static_cast<std::size_t>(m) * ld, seed, -8, 8);
  return std::vector<float>(v.begin(), v.end());
}

template <class Target, int Stages, std::size_t Align, bool Bug = false>
std::vector<float> run_ksum(int m, int k, int ld, const std::vector<float>& h, const strata::emulator::options& opt) {
  strata::stream s;
  s.set_emulator_options(opt);
  auto in = to_device(s, h);
  auto out = poisoned<float>(s, static_cast<std::size_t>(m) * 8, -1e9f);
  strata::launch(s, {.grid = (m + 15) / 16, .block = 128}, ksum_kernel<Target, Stages, Align, Bug>{},
                 ksum_params{in.data(), out.data(), m, k, ld});
  return to_host(s, out);
}

template <class Target, int Stages, std::size_t Align>
void check_ksum(int m, int k) {
  const int ld = Align >= 16 ? (k + 3) / 4 * 4 : k;
  const auto h = integer_matrix(m, ld, static_cast<std::uint64_t>(m * 1000 + k));
  std::vector<float> ref(static_cast<std::size_t>(m) * 8, 0.f);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < k; ++j) ref[r * 8 + (j % 32) / 4] += h[static_cast<std::size_t>(r) * ld + j];
  for (const auto& opt : schedules()) {
    const auto o = run_ksum<Target, Stages, Align>(m, k, ld, h, opt);
    for (std::size_t i = 0; i < o.size(); ++i) {
      INFO(Target::name << " stages " << Stages << " align " << Align << " m " << m << " k " << k << " at " << i);
      REQUIRE(o[i] == ref[i]);
    }
  }
}

template <class Target, int Stages>
void check_stages() {
  // k / 32 tiles: 1 (fewer than the stages), 4, 7, 9 (last partial), none a multiple of 2, 3 and 4 at once.
  for (int k : {4, 100, 224, 260}) check_ksum<Target, Stages, 16>(45, k);
  for (int k : {1, 37, 129}) check_ksum<Target, Stages, 4>(17, k);
}

TEST_CASE("pipeline over cp.async (sm80): 2, 3 and 4 stages, exact", "[pipeline]") {
  check_stages<arch::sm80, 2>();
  check_stages<arch::sm80, 3>();
  check_stages<arch::sm80, 4>();
}

TEST_CASE("pipeline, portable path (plain loads + block barrier): host and gfx942, exact", "[pipeline]") {
  check_stages<arch::host, 3>();
  check_stages<arch::gfx942, 2>();
  check_stages<arch::gfx942, 4>();
}

TEST_CASE("pipeline: a consumer that reads a stage before consumer_wait() is caught (NaN)", "[pipeline]") {
  const int m = 16, k = 200, ld = 200;
  const auto h = integer_matrix(m, ld, 77);
  const auto o = run_ksum<arch::sm80, 3, 16, true>(m, k, ld, h, schedules()[0]);
  std::size_t nans = 0;
  for (float x : o) nans += std::isnan(x) ? 1 : 0;
  REQUIRE(nans == o.size());
}

namespace {
struct wait_without_commit {
  using target = arch::sm80;
  static constexpr const char* name = "wait_without_commit";
  template <class Ctx>
  void operator()(Ctx& ctx, const ksum_params&) const {
    auto pipe = strata::make_pipeline<2>(ctx);
    pipe.consumer_wait();
  }
};
}  // namespace

TEST_CASE("pipeline bookkeeping errors are reported by the emulator", "[pipeline]") {
  strata::stream s;
  REQUIRE_THROWS_WITH(strata::launch(s, {.grid = 1, .block = 32}, wait_without_commit{}, ksum_params{}),
                      Catch::Contains("consumer_wait() with no committed stage"));
}
