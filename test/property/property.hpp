// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/property.hpp -- a tiny driver for randomized property tests.
//
//   STRATA_PROPERTY_CASES  cases per TEST_CASE (default: the test's own, 25 unless told)
//   STRATA_PROPERTY_SEED   base seed (default 20261129)
//
// Case i of a run gets seed base + i * 0x9E3779B97F4A7C15 (mod 2^64), so case 0's seed is the base:
// a failing case prints "STRATA_PROPERTY_SEED=<its seed> STRATA_PROPERTY_CASES=1", which re-runs
// exactly that case (add the test name as the Catch2 filter to skip the others).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "random_source.hpp"

namespace strata_property {

inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 0);
  return end && *end == 0 ? x : fallback;
}

inline int cases(int fallback = 25) { return static_cast<int>(env_u64("STRATA_PROPERTY_CASES", static_cast<std::uint64_t>(fallback))); }
inline std::uint64_t base_seed() { return env_u64("STRATA_PROPERTY_SEED", 20261129ull); }
inline std::uint64_t case_seed(std::uint64_t base, int i) { return base + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull; }

inline std::string reproduce(std::uint64_t seed) {
  return "reproduce: STRATA_PROPERTY_SEED=" + std::to_string(seed) + " STRATA_PROPERTY_CASES=1";
}

/// Runs body(seed, case_index) for every case; each case's seed is in the failure message.
template <class F>
void for_each_case(F&& body, int default_cases = 25) {
  const int n = cases(default_cases);
  const std::uint64_t base = base_seed();
  for (int i = 0; i < n; ++i) {
    const std::uint64_t seed = case_seed(base, i);
    INFO(reproduce(seed) << " (case " << i << " of " << n << ", base seed " << base << ")");
    body(seed, i);
  }
}

}  // namespace strata_property
