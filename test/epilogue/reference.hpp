// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/epilogue/reference.hpp -- double-precision references for the epilogue ops, random operands,
// and the tolerance rule shared by the epilogue tests.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "strata/epilogue/epilogue.hpp"

namespace strata_test::ep_ref {

// The definitions from activation.hpp, evaluated literally in double.
inline double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
inline double gelu_tanh(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double silu(double x) { return x * sigmoid(x); }
inline double relu(double x) { return x > 0 ? x : 0.0; }

/// Random values of either sign with magnitude in [lo, hi]: never zero, so a dropped term shows.
template <class T = float>
std::vector<T> random_nonzero(std::size_t n, std::uint64_t seed, double lo = 0.25, double hi = 4.0) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> mag(lo, hi);
  std::bernoulli_distribution neg(0.5);
  std::vector<T> v(n);
  for (auto& x : v) {
    const double m = neg(g) ? -mag(g) : mag(g);
    if constexpr (std::is_integral_v<T>)
      x = static_cast<T>(m < 0 ? std::floor(m) : std::ceil(m));  // never 0
    else
      x = T(m);
  }
  return v;
}

template <class T>
double to_double(T x) {
  if constexpr (strata::narrow_float<T>)
    return double(float(x));
  else
    return static_cast<double>(x);
}

/// Largest finite value of an output type, as double.
template <class T>
double max_of() {
  if constexpr (strata::narrow_float<T>)
    return double(float(std::numeric_limits<T>::max()));
  else
    return double(std::numeric_limits<T>::max());
}

/// What convert_to<T> (saturating) should give for an exact result `ref`, before rounding.
template <class T>
double saturated(double ref) {
  if constexpr (std::is_same_v<T, float>)
    return ref;
  else
    return std::fmin(std::fmax(ref, -max_of<T>()), max_of<T>());
}

/// Allowed |got - ref| for an output of type T when the exact result is `ref` and the float
/// computation before the conversion carries terms of total magnitude `mag`:
///   float compute error: rel_compute * mag (a few tens of float ulps: transcendental functions are
///                        accurate to a few ulps and a chain of k ops adds k roundings);
///   conversion:          half an ulp of T at the result (2^-(mantissa+1) relative), plus half the
///                        smallest subnormal; integers: 0.5 (round to nearest).
template <class T>
double tolerance(double ref, double mag, double rel_compute = 4e-6) {
  const double compute = rel_compute * mag + 1e-30;
  if constexpr (std::is_same_v<T, float>) {
    return compute;
  } else if constexpr (strata::narrow_float<T>) {
    const double half_ulp = std::ldexp(1.0, -(T::mantissa_bits + 1));
    const double tiny = 0.5 * double(float(std::numeric_limits<T>::denorm_min()));
    return half_ulp * 1.001 * (std::fabs(ref) + compute) + compute + tiny;
  } else {
    return 0.5 + compute;
  }
}

/// Checks one output element against the reference.
template <class T>
void check_element(T got, double ref, double mag, int row, int col, double rel_compute = 4e-6) {
  const double g = to_double(got), want = saturated<T>(ref);
  const double tol = tolerance<T>(want, mag, rel_compute);
  INFO("at (" << row << ", " << col << "): got " << g << ", reference " << want << " (exact " << ref
              << "), tolerance " << tol);
  REQUIRE(std::isfinite(g));
  REQUIRE(std::fabs(g - want) <= tol);
}

}  // namespace strata_test::ep_ref
