// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/asan.hpp -- tells AddressSanitizer about fiber stack switches.
//
// ASan tracks one stack per OS thread. Without these calls a fiber's frames look like overflows of
// the thread's stack, and an exception thrown on a fiber stack trips ASan's no-return handling. Every
// switch the emulator makes goes through switch_begin/switch_end below (Boost 1.74 annotates only its
// slow ucontext backend, so we annotate the fcontext one ourselves).
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_EMU_ASAN 1
#endif
#endif
#ifndef STRATA_EMU_ASAN
#define STRATA_EMU_ASAN 0
#endif

#if STRATA_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace strata::emulator::detail {

/// The bounds of a stack, as ASan wants them.
struct stack_bounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

/// Before switching to the stack `to`. `fake_stack` is null when the current fiber is leaving for good.
inline void switch_begin(void** fake_stack, const stack_bounds& to) {
#if STRATA_EMU_ASAN
  __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
#else
  (void)fake_stack, (void)to;
#endif
}

/// Right after arriving on a stack; records the bounds of the stack we came from into `from` if given.
inline void switch_end(void* fake_stack, stack_bounds* from) {
#if STRATA_EMU_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &bottom, &size);
  if (from) *from = {bottom, size};
#else
  (void)fake_stack, (void)from;
#endif
}

}  // namespace strata::emulator::detail
