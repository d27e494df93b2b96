// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Chains of epilogue ops against a double-precision reference on random data and non-square shapes;
// the integer-accumulator path; the params aggregate; and user-defined ops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "reference.hpp"

namespace ep = strata::epilogue;
using namespace strata_test::ep_ref;
using strata::bf16;
using strata::f16;
using strata::f8_e4m3;
using strata::f8_e5m2;

namespace {

// ---- two user-defined ops, written as op.hpp describes ------------------------------------------------

/// An op with run-time parameters: leaky ReLU, slope * x below 0.
struct leaky_relu {
  struct params {
    float slope;
  };
  template <ep::value V>
  STRATA_HOST_DEVICE float operator()(V v, int, int, const params& p) const {
    const float x = static_cast<float>(v);
    return x < 0.f ? p.slope * x : x;
  }
};

/// An op that uses the coordinates: a causal mask (attention scores above the diagonal, shifted by
/// `offset`, become -Inf). Not a template: it takes float, and an int32 value would arrive converted.
struct causal_mask {
  struct params {
    int offset;
  };
  STRATA_HOST_DEVICE float operator()(float v, int row, int col, const params& p) const {
    return col > row + p.offset ? -std::numeric_limits<float>::infinity() : v;
  }
};

/// A user-defined output conversion: a float in [0, 1] to an 8-bit unsigned normalized value.
struct to_unorm8 {
  using output_type = std::uint8_t;
  using params = ep::no_params;
  template <ep::value V>
  STRATA_HOST_DEVICE std::uint8_t operator()(V v, int, int, const params&) const {
    const float x = static_cast<float>(v);
    return static_cast<std::uint8_t>(x <= 0.f ? 0.f : (x >= 1.f ? 255.f : x * 255.f + 0.5f));
  }
};

static_assert(ep::op<leaky_relu> && ep::op<causal_mask> && !ep::conversion<leaky_relu>);
static_assert(ep::conversion<to_unorm8> && ep::conversion<ep::convert_to<bf16>> && !ep::op<ep::convert_to<bf16>>);
static_assert(ep::op<ep::relu> && ep::op<ep::alpha_beta<f16>> && ep::op<ep::clamp<std::int32_t>>);

template <class Chain, class Acc, class Ref>
void check(int rows, int cols, const std::vector<Acc>& acc, const typename Chain::params& p, Ref ref,
           double rel_compute = 4e-6) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const auto [want, mag] = ref(r, c);
      check_element(Chain::apply(acc[std::size_t(r) * cols + c], r, c, p), want, mag, r, c, rel_compute);
    }
}

}  // namespace

TEST_CASE("params: one trivially copyable aggregate, a slot per op, set by position or by op", "[epilogue][chain]") {
  using ch = ep::chain<ep::alpha_beta<bf16>, ep::bias_col<>, ep::bias_col<>, ep::relu, ep::convert_to<f16>>;
  static_assert(std::is_trivially_copyable_v<ch::params> && std::is_aggregate_v<ch::params>);
  static_assert(std::is_same_v<ch::output_type, f16> && ch::size == 5);
  const float b0[3] = {1.f, 2.f, 3.f}, b1[3] = {10.f, 20.f, 30.f};
  // Aggregate initialization, one braced list per op in order.
  ch::params p{{2.f, 0.f, {}}, {b0}, {b1}, {}, {}};
  REQUIRE(ep::get<0>(p).alpha == 2.f);
  REQUIRE(ep::get<ep::alpha_beta<bf16>>(p).alpha == 2.f);  // by type: it appears once
  REQUIRE(ep::get<1>(p).data == b0);                       // two bias_col: by index
  REQUIRE(ep::get<2>(p).data == b1);
  REQUIRE(float(ch::apply(1.f, 0, 2, p)) == 2.f + 3.f + 30.f);
  // Changing one op's params in place.
  ep::get<ep::alpha_beta<bf16>>(p).alpha = -100.f;
  REQUIRE(float(ch::apply(1.f, 0, 2, p)) == 0.f);  // relu
  // make_params with designated initializers builds the same thing.
  const auto q = ch::make_params({.alpha = 2.f, .beta = 0.f}, {.data = b0}, {.data = b1}, {}, {});
  REQUIRE(float(ch::apply(1.f, 1, 1, q)) == 2.f + 2.f + 20.f);
  // It travels by value: a byte copy is a working copy.
  ch::params copy;
  std::memcpy(&copy, &q, sizeof q);
  REQUIRE(float(ch::apply(1.f, 1, 1, copy)) == 24.f);
  // A chain is also a function object.
  REQUIRE(float(ch{}(1.f, 1, 1, q)) == 24.f);
}

TEST_CASE("chain: alpha/beta with bf16 C, bf16 column bias, tanh GELU, bf16 output", "[epilogue][chain]") {
  const int rows = 19, cols = 37, ldc = 40;
  const auto acc = random_nonzero(std::size_t(rows) * cols, 100);
  const auto c = random_nonzero<bf16>(std::size_t(rows) * ldc, 101);
  const auto bias = random_nonzero<bf16>(std::size_t(cols), 102);
  using ch = ep::chain<ep::alpha_beta<bf16>, ep::bias_col<bf16>, ep::gelu_tanh, ep::convert_to<bf16>>;
  const auto p = ch::make_params({.alpha = 0.5f, .beta = -1.25f, .c = ep::row_major(c.data(), ldc)},
                                 {.data = bias.data()}, {}, {});
  check<ch>(rows, cols, acc, p, [&](int r, int col) {
    const double a = 0.5 * acc[r * cols + col], b = -1.25 * to_double(c[std::size_t(r) * ldc + col]),
                 d = to_double(bias[col]);
    return std::pair{gelu_tanh(a + b + d), std::fabs(a) + std::fabs(b) + std::fabs(d)};
  });
}

TEST_CASE("chain: dequant scales, f16 row bias, SiLU, f16 residual, clamp, f16 output", "[epilogue][chain]") {
  const int rows = 33, cols = 9;
  const auto acc = random_nonzero(std::size_t(rows) * cols, 110);
  const auto sr = random_nonzero(std::size_t(rows), 111, 0.1, 2.0);
  const auto sc = random_nonzero(std::size_t(cols), 112, 0.1, 2.0);
  const auto bias = random_nonzero<f16>(std::size_t(rows), 113);
  const auto res = random_nonzero<f16>(std::size_t(rows) * cols, 114);
  using ch = ep::chain<ep::scale_row<>, ep::scale_col<>, ep::bias_row<f16>, ep::silu, ep::residual<f16>, ep::clamp<>,
                       ep::convert_to<f16>>;
  const auto p = ch::make_params({sr.data()}, {sc.data()}, {bias.data()}, {}, {ep::row_major(res.data(), cols)},
                                 {.lo = -3.f, .hi = 3.f}, {});
  check<ch>(rows, cols, acc, p, [&](int r, int c) {
    const double x = double(acc[r * cols + c]) * sr[r] * sc[c], b = to_double(bias[r]);
    const double y = silu(x + b) + to_double(res[std::size_t(r) * cols + c]);
    return std::pair{std::fmin(std::fmax(y, -3.0), 3.0), std::fabs(x) + std::fabs(b) + std::fabs(y)};
  });
}

TEST_CASE("chain: alpha/beta with column-major C and erf GELU, float output", "[epilogue][chain]") {
  const int rows = 6, cols = 25, ldc = 8;
  const auto acc = random_nonzero(std::size_t(rows) * cols, 120);
  const auto c = random_nonzero(std::size_t(cols) * ldc, 121);
  using ch = ep::chain<ep::alpha_beta<>, ep::gelu_erf, ep::convert_to<float>>;
  const auto p = ch::make_params({1.f, 0.5f, ep::col_major(c.data(), ldc)}, {}, {});
  check<ch>(rows, cols, acc, p, [&](int r, int col) {
    const double a = acc[r * cols + col], b = 0.5 * c[std::size_t(col) * ldc + r];
    return std::pair{gelu_erf(a + b), std::fabs(a) + std::fabs(b)};
  });
}

TEST_CASE("chain: sigmoid then a column scale into f8_e5m2; narrow accumulators widen", "[epilogue][chain]") {
  const int rows = 10, cols = 21;
  const auto acc = random_nonzero<f16>(std::size_t(rows) * cols, 130);  // e.g. an f16-accumulating MMA
  const auto sc = random_nonzero(std::size_t(cols), 131, 1.0, 300.0);
  using ch = ep::chain<ep::sigmoid, ep::scale_col<>, ep::convert_to<f8_e5m2>>;
  check<ch>(rows, cols, acc, ch::make_params({}, {sc.data()}, {}), [&](int r, int c) {
    const double y = sigmoid(to_double(acc[r * cols + c])) * sc[c];
    return std::pair{y, std::fabs(y)};
  });
}

TEST_CASE("chain: quantized output, float accumulators to int8", "[epilogue][chain][int]") {
  const int rows = 14, cols = 5;
  const auto acc = random_nonzero(std::size_t(rows) * cols, 140, 0.25, 60.0);
  const auto sc = random_nonzero(std::size_t(cols), 141, 0.5, 3.0);
  const auto br = random_nonzero(std::size_t(rows), 142);
  using ch = ep::chain<ep::scale_col<>, ep::bias_row<>, ep::relu, ep::convert_to<std::int8_t>>;
  check<ch>(rows, cols, acc, ch::make_params({sc.data()}, {br.data()}, {}, {}), [&](int r, int c) {
    const double x = double(acc[r * cols + c]) * sc[c];
    return std::pair{relu(x + br[r]), std::fabs(x) + std::fabs(br[r])};  // saturates above 127
  });
}

TEST_CASE("int32 accumulators: integer ops stay exact in int32", "[epilogue][chain][int]") {
  const int rows = 7, cols = 12;
  const auto acc = random_nonzero<std::int32_t>(std::size_t(rows) * cols, 150, 1, 400);
  const auto br = random_nonzero<std::int32_t>(std::size_t(rows), 151, 1, 100);
  const auto bc = random_nonzero<std::int8_t>(std::size_t(cols), 152, 1, 100);
  // Which type each op computes in, for an int32 value.
  using i32 = std::int32_t;
  static_assert(std::is_same_v<decltype(ep::bias_col<std::int8_t>{}(i32{}, 0, 0, {})), i32>);
  static_assert(std::is_same_v<decltype(ep::relu{}(i32{}, 0, 0, {})), i32>);
  static_assert(std::is_same_v<decltype(ep::clamp<i32>{}(i32{}, 0, 0, {})), i32>);
  static_assert(std::is_same_v<decltype(ep::bias_col<float>{}(i32{}, 0, 0, {})), float>);
  static_assert(std::is_same_v<decltype(ep::scale_row<bf16>{}(i32{}, 0, 0, {})), float>);
  static_assert(std::is_same_v<decltype(ep::alpha_beta<std::int8_t>{}(i32{}, 0, 0, {})), float>);
  static_assert(std::is_same_v<decltype(ep::gelu_erf{}(i32{}, 0, 0, {})), float>);

  using ch = ep::chain<ep::bias_row<i32>, ep::bias_col<std::int8_t>, ep::relu, ep::clamp<i32>,
                       ep::convert_to<std::int8_t>>;
  const auto p = ch::make_params({br.data()}, {bc.data()}, {}, {.lo = -50, .hi = 90}, {});
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const long long x = std::clamp<long long>(std::max<long long>(acc[r * cols + c] + br[r] + bc[c], 0), -50, 90);
      REQUIRE(ch::apply(acc[r * cols + c], r, c, p) == x);
    }
  SECTION("int32 arithmetic wraps as on the GPU (no undefined behaviour)") {
    const i32 one = 1;
    using w = ep::chain<ep::bias_col<i32>, ep::convert_to<i32>>;
    REQUIRE(w::apply(std::numeric_limits<i32>::max(), 0, 0, {{&one}, {}}) == std::numeric_limits<i32>::min());
  }
}

TEST_CASE("int32 accumulators: int8 GEMM dequantized by row and column scales, fp8 output", "[epilogue][chain][int]") {
  const int rows = 23, cols = 11;
  const auto acc = random_nonzero<std::int32_t>(std::size_t(rows) * cols, 160, 1, 20000);
  const auto sr = random_nonzero(std::size_t(rows), 161, 1e-3, 4e-3);
  const auto sc = random_nonzero<bf16>(std::size_t(cols), 162, 0.5, 2.0);
  const auto bias = random_nonzero(std::size_t(cols), 163);
  using ch = ep::chain<ep::scale_row<>, ep::scale_col<bf16>, ep::bias_col<>, ep::relu, ep::convert_to<f8_e4m3>>;
  check<ch>(rows, cols, acc, ch::make_params({sr.data()}, {sc.data()}, {bias.data()}, {}, {}), [&](int r, int c) {
    const double x = double(acc[r * cols + c]) * sr[r] * to_double(sc[c]);
    return std::pair{relu(x + bias[c]), std::fabs(x) + std::fabs(bias[c])};
  });
}

TEST_CASE("user-defined ops: parameters, coordinates and a custom conversion", "[epilogue][chain][user]") {
  const int rows = 9, cols = 16;
  const auto acc = random_nonzero(std::size_t(rows) * cols, 170);
  using ch = ep::chain<ep::alpha_beta<>, causal_mask, leaky_relu, ep::sigmoid, to_unorm8>;
  auto p = ch::make_params({.alpha = 0.5f, .beta = 0.f}, {.offset = 2}, {.slope = 0.1f}, {}, {});
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double x = 0.5 * acc[r * cols + c];
      x = c > r + 2 ? -INFINITY : (x < 0 ? 0.1 * x : x);
      const double want = std::floor(sigmoid(x) * 255.0 + 0.5);
      INFO("at " << r << "," << c);
      REQUIRE(std::fabs(ch::apply(acc[r * cols + c], r, c, p) - want) <= 1.0);  // float rounding at .5
      if (c > r + 2) REQUIRE(ch::apply(acc[r * cols + c], r, c, p) == 0);
    }
  // Its params are reached like the built-in ones.
  ep::get<causal_mask>(p).offset = 100;
  ep::get<leaky_relu>(p).slope = 0.f;
  REQUIRE(ch::apply(-1.f, 0, 50, p) == 128);  // sigmoid(0) = 0.5 -> 128
}

namespace {

/// apply_pair must give, bit for bit, what two apply() calls give: the kernels' paired stores
/// (gemm::kernel::store_pairs) rely on it. Random values and the special ones (signed NaN and zero,
/// Inf, values past the output's range, halfway cases) at neighbouring columns.
template <class Chain, class Acc = float>
void check_pairs(const typename Chain::params& p) {
  using out = typename Chain::output_type;
  std::vector<Acc> v = {Acc(0), Acc(1), Acc(-1), Acc(3), Acc(-7), Acc(100000), Acc(-100000)};
  if constexpr (std::is_same_v<Acc, float>) {
    for (float x : {-0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), 65520.f,
                    -65519.f, 1e30f, 3.0e38f, 1.00390625f, 1e-40f, -2.5e-39f})
      v.push_back(x);
  }
  const auto rnd = random_nonzero(64, 180, 0.01, 50.0);
  for (double x : rnd) v.push_back(Acc(x));
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < v.size(); j += 3) {
      const int r = int(i % 5), c = int(2 * (j % 7));
      const ep::output_pair<out> got = Chain::apply_pair(v[i], v[j], r, c, r, c + 1, p);
      const out a = Chain::apply(v[i], r, c, p), b = Chain::apply(v[j], r, c + 1, p);
      INFO("pair " << i << ", " << j);
      REQUIRE(std::memcmp(&got.first, &a, sizeof(out)) == 0);
      REQUIRE(std::memcmp(&got.second, &b, sizeof(out)) == 0);
    }
}

}  // namespace

TEST_CASE("apply_pair: the same bits as apply on each element, for every output type", "[epilogue][chain][pair]") {
  static_assert(sizeof(ep::output_pair<bf16>) == 4 && alignof(ep::output_pair<bf16>) == 4);
  static_assert(sizeof(ep::output_pair<float>) == 8 && alignof(ep::output_pair<float>) == 8);
  static_assert(sizeof(ep::output_pair<f8_e4m3>) == 2 && alignof(ep::output_pair<f8_e4m3>) == 2);
  const auto bias = random_nonzero(16, 181);
  {
    using ch = ep::chain<ep::alpha_beta<>, ep::bias_col<>, ep::relu, ep::convert_to<bf16>>;
    check_pairs<ch>(ch::make_params({.alpha = 1.5f}, {bias.data()}, {}, {}));
  }
  {
    using ch = ep::chain<ep::convert_to<f16>>;  // the conversion alone
    check_pairs<ch>(ch::make_params({}));
  }
  {
    using ch = ep::chain<ep::bias_col<>, ep::convert_to<f16, strata::overflow::propagate>>;
    check_pairs<ch>(ch::make_params({bias.data()}, {}));
  }
  {
    using ch = ep::chain<ep::alpha_beta<>, ep::convert_to<bf16, strata::overflow::propagate>>;
    check_pairs<ch>(ch::make_params({.alpha = -2.f}, {}));
  }
  {
    using ch = ep::chain<ep::bias_col<>, ep::convert_to<f8_e4m3>>;
    check_pairs<ch>(ch::make_params({bias.data()}, {}));
  }
  {
    using ch = ep::chain<ep::alpha_beta<>, ep::convert_to<float>>;
    check_pairs<ch>(ch::make_params({.alpha = 0.25f}, {}));
  }
  {
    using ch = ep::chain<ep::alpha_beta<>, ep::convert_to<std::int8_t>>;  // int32 accumulators
    check_pairs<ch, std::int32_t>(ch::make_params({.alpha = 0.5f}, {}));
  }
  {
    using ch = ep::chain<ep::convert_to<bf16>>;  // a narrow accumulator widens first
    check_pairs<ch, f16>(ch::make_params({}));
  }
}
