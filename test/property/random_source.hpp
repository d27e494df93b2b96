// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/property/random_source.hpp -- where a randomized case gets its choices from. The property
// tests draw them from a seeded generator (rng); the fuzz targets from the fuzzer's bytes
// (test/fuzz/fuzz_input.hpp, byte_source). Case builders are templates over either. No Catch2.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace strata_property {

/// The helpers every source has, over Derived::next() (64 random bits).
template <class Derived>
struct source_base {
  std::uint64_t bits() { return static_cast<Derived*>(this)->next(); }
  /// Uniform-ish in [lo, hi] (hi >= lo).
  long long range(long long lo, long long hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<long long>(bits() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  /// True with probability p; a zero draw (an exhausted fuzz input) is always false.
  bool chance(double p) { return static_cast<double>(bits() % 256) >= 256.0 * (1.0 - p); }
  double real(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(bits() % 256) / 255.0; }
  std::uint64_t seed() { return bits() * 0x9E3779B97F4A7C15ull + bits(); }
  template <class T, std::size_t N>
  T pick(const T (&xs)[N]) { return xs[bits() % N]; }
  /// An extent in [lo, hi] biased toward the edges: lo, 1, hi, and values next to multiples of `tile`.
  int extent(int hi, int tile = 32, int lo = 0) {
    switch (bits() % 8) {
      case 0: return lo;
      case 1: return std::clamp(1, lo, hi);
      case 2: return hi;
      case 3: {
        const long long m = range(1, std::max(1, hi / tile));
        return static_cast<int>(std::clamp<long long>(m * tile + range(-1, 1), lo, hi));
      }
      default: return static_cast<int>(range(lo, hi));
    }
  }
};

/// A seeded generator (property tests).
struct rng : source_base<rng> {
  std::mt19937_64 g;
  explicit rng(std::uint64_t seed) : g(seed ^ 0x5DEECE66Dull) {}
  std::uint64_t next() { return g(); }
};

}  // namespace strata_property
