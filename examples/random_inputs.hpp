// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/random_inputs.hpp -- the inputs the operator examples check with: random values that are
// never zero (a zero input hides a missing term from the check), the same for every example.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace strata_examples {

/// n values of T from `seed`: magnitudes uniform in [0.25, 1) with a random sign for floating types
/// (so sums do not cancel to nothing and relative errors stay meaningful), integers in [-9, 9] \ {0}.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(0.25f, 1.f);
  std::vector<T> v(n);
  for (auto& x : v) {
    const bool neg = g() & 1;
    if constexpr (std::is_integral_v<T>) x = T((neg ? -1 : 1) * int(1 + g() % 9));
    else x = T(neg ? -d(g) : d(g));
  }
  return v;
}

}  // namespace strata_examples
