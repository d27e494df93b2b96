// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/mbarrier_kernels.cu -- the mbarrier ring of test/unit/mbarrier_kernels.hpp compiled for
// sm_80 (arrive / test_wait) and sm_90a (transaction counts, try_wait), so that the PTX holds the
// mbarrier instructions each target's form claims. The emulator runs the same kernel in
// test/unit/mbarrier_test.cpp.
//
// compile-targets sm_80|sm_90a
// compile-expect-kernels sm_.*: ring_sm80_kernel
// compile-expect-kernels sm_90a: ring_sm90a_kernel
// compile-expect-code sm_.*: mbarrier.init = mbarrier\.init\.shared::cta\.b64
// compile-expect-code sm_.*: mbarrier.arrive = mbarrier\.arrive\.shared::cta\.b64
// compile-expect-code sm_80: mbarrier.test_wait (sm80) = mbarrier\.test_wait\.parity\.shared::cta\.b64
// compile-expect-code sm_90a: mbarrier.try_wait (sm90) = mbarrier\.try_wait\.parity\.shared::cta\.b64
// compile-expect-code sm_90a: arrive with a transaction count = mbarrier\.arrive\.expect_tx\.shared::cta\.b64
// compile-expect-code sm_90a: transactions completed = mbarrier\.complete_tx\.relaxed\.cta\.shared::cta\.b64
#include "unit/mbarrier_kernels.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=sm80 or sm90a"
#endif

namespace strata_test {
struct ring_sm80_kernel : ring_kernel<strata::arch::sm80> {};
struct ring_sm90a_kernel : ring_kernel<strata::arch::sm90a, 4> {};
}  // namespace strata_test

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_mbarrier_kernels(strata::stream& s) {
  using namespace strata_test;
  strata::launch(s, {.grid = {1}, .block = {64}}, ring_sm80_kernel{}, ring_params{});
  if constexpr (std::is_same_v<strata::arch::STRATA_COMPILE_TARGET, strata::arch::sm90a>)
    strata::launch(s, {.grid = {1}, .block = {64}}, ring_sm90a_kernel{}, ring_params{});
}
