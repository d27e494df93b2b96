// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Malformed epilogue chains, one per STRATA_EPILOGUE_CASE_<name>: each must fail to compile with the
// static_assert sentence that CMakeLists.txt expects (these are compile-fail tests, not a program).
#include <concepts>
#include <cstdint>

#include "strata/epilogue/epilogue.hpp"

namespace ep = strata::epilogue;

struct no_params_declared {
  float operator()(float v, int, int, const ep::no_params&) const { return v; }
};
struct float_only {
  using params = ep::no_params;
  template <std::same_as<float> V>
  float operator()(V v, int, int, const params&) const {
    return v;
  }
};

template <class Chain>
void use() {
  typename Chain::params p{};
  (void)Chain::apply(1.f, 0, 0, p);
}

void instantiate() {
#if defined(STRATA_EPILOGUE_CASE_empty)
  use<ep::chain<>>();
#elif defined(STRATA_EPILOGUE_CASE_no_conversion)
  use<ep::chain<ep::alpha_beta<>, ep::relu>>();
#elif defined(STRATA_EPILOGUE_CASE_conversion_in_middle)
  use<ep::chain<ep::convert_to<strata::f16>, ep::relu, ep::convert_to<float>>>();
#elif defined(STRATA_EPILOGUE_CASE_not_an_op)
  use<ep::chain<no_params_declared, ep::convert_to<float>>>();
#elif defined(STRATA_EPILOGUE_CASE_float_only_op_on_int32)
  using ch = ep::chain<float_only, ep::convert_to<float>>;
  (void)ch::apply(std::int32_t(1), 0, 0, ch::params{});
#elif defined(STRATA_EPILOGUE_CASE_integer_propagate)
  use<ep::chain<ep::convert_to<std::int8_t, strata::overflow::propagate>>>();
#elif defined(STRATA_EPILOGUE_CASE_unsupported_output)
  use<ep::chain<ep::convert_to<double>>>();
#elif defined(STRATA_EPILOGUE_CASE_get_ambiguous)
  using ch = ep::chain<ep::bias_col<>, ep::bias_col<>, ep::convert_to<float>>;
  ch::params p{};
  (void)ep::get<ep::bias_col<>>(p);
#else
#error "define STRATA_EPILOGUE_CASE_<name>"
#endif
}
