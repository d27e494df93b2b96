// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/dims.hpp -- a three-dimensional extent or index, the same type on every backend.
#pragma once

#include <cstdint>

#include "strata/config/config.hpp"

namespace strata {

/// Extent or index in x, y, z (x fastest). Unlike CUDA's dim3 it exists on the host backend too.
struct dims {
  int x = 1, y = 1, z = 1;

  constexpr dims() = default;
  STRATA_HOST_DEVICE constexpr dims(int x_, int y_ = 1, int z_ = 1) : x(x_), y(y_), z(z_) {}

  /// Number of points: x * y * z.
  STRATA_HOST_DEVICE constexpr long long volume() const { return static_cast<long long>(x) * y * z; }
  /// Linear index (x fastest) of the point `i` inside this extent.
  STRATA_HOST_DEVICE constexpr long long linear(dims i) const {
    return i.x + static_cast<long long>(x) * (i.y + static_cast<long long>(y) * i.z);
  }
  /// Inverse of linear().
  STRATA_HOST_DEVICE constexpr dims unlinear(long long l) const {
    return dims(static_cast<int>(l % x), static_cast<int>((l / x) % y),
                static_cast<int>(l / (static_cast<long long>(x) * y)));
  }
  friend constexpr bool operator==(const dims&, const dims&) = default;
};

}  // namespace strata
