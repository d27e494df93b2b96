// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/unit/support.hpp -- small helpers shared by the emulator tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "strata/strata.hpp"

namespace strata_test {

/// Every (workers, schedule) combination a test runs under: results must not depend on them.
inline std::vector<strata::emulator::options> schedules() {
  using strata::emulator::schedule;
  return {{.workers = 1, .order = schedule::round_robin},
          {.workers = 2, .order = schedule::reverse},
          {.workers = 2, .order = schedule::random, .seed = 12345}};
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed, T lo, T hi) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  } else {
    std::uniform_real_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  }
  return v;
}

/// A device buffer filled with `poison` (outputs start poisoned so an unwritten element fails).
template <class T>
strata::device_buffer<T> poisoned(strata::stream& s, std::size_t n, T poison) {
  strata::device_buffer<T> b(n);
  std::vector<T> h(n, poison);
  strata::copy_to_device(s, b.data(), h.data(), n);
  return b;
}

template <class T>
std::vector<T> to_host(strata::stream& s, const strata::device_buffer<T>& b) {
  std::vector<T> h(b.size());
  strata::copy_to_host(s, h.data(), b.data(), b.size());
  s.synchronize();
  return h;
}

template <class T>
strata::device_buffer<T> to_device(strata::stream& s, const std::vector<T>& h) {
  strata::device_buffer<T> b(h.size());
  strata::copy_to_device(s, b.data(), h.data(), h.size());
  return b;
}

}  // namespace strata_test
