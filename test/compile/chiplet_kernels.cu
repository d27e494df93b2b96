// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/chiplet_kernels.cu -- the chiplet level's persistent kernels for every GPU target: the
// persistent tile scheduler and the two-level chiplet barrier, with cooperative launches. Checks that
// the hardware chiplet id (HW_REG_XCC_ID) and the agent-scope acquire/release fences assemble for
// gfx940, and that the ordered atomics reach the PTX at GPU scope.
//
// compile-expect-kernels sm_.*|gfx.*: persistent_kernel chiplet_barrier_kernel
// compile-expect-code sm_.*: acquire loads at GPU scope = ld\.acquire\.gpu
// compile-expect-code sm_.*: release stores at GPU scope = st\.release\.gpu
// compile-expect-code sm_.*: acq_rel atomics at GPU scope = atom\.add\.acq_rel\.gpu
// compile-expect-code sm_.*: backoff while spinning = nanosleep
// compile-expect-code gfx94.: chiplet id (HW_REG_XCC_ID) = s_getreg_b32[^\n]*(HW_REG_XCC_ID|hwreg\(20)
// compile-expect-code gfx94.: agent-scope release (L2 write-back) = buffer_wbl2
// compile-expect-code gfx94.: agent-scope acquire (L2 invalidate) = buffer_inv
// compile-expect-code gfx90a: agent-scope acquire (L1 invalidate) = buffer_wbinvl1
// compile-expect-code gfx.*: backoff while spinning = s_sleep
#include "strata/strata.hpp"

#include "chiplet/persistent_kernels.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

namespace {
using target = strata::arch::STRATA_COMPILE_TARGET;
}

#define STRATA_REPORT_SHARED(tag, ...) \
  extern "C" STRATA_DEVICE unsigned long long strata_report_shared_##tag = strata::dynamic_shared_offset<__VA_ARGS__>;
STRATA_REPORT_SHARED(persistent, strata_test::persistent_kernel<target>)
STRATA_REPORT_SHARED(chiplet_barrier, strata_test::chiplet_barrier_kernel<target>)

// Never called: only instantiated, so that every kernel is compiled for the device.
void strata_compile_instantiate_chiplet(strata::stream& s) {
  using namespace strata_test;
  const strata::launch_shape persistent{.grid = {304}, .block = {256}, .cooperative = true};
  strata::launch(s, persistent, persistent_kernel<target>{}, persistent_params{});
  strata::launch(s, persistent, chiplet_barrier_kernel<target>{}, barrier_params{});
}
