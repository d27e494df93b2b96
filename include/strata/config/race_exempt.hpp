// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/config/race_exempt.hpp -- lets code exempt its memory accesses from the emulator's race
// detector (strata/emulator/detail/race_check.hpp): atomic operations are not races, and the
// detector's own bookkeeping must not check itself. Free outside the race-check build.
#pragma once

#include "strata/config/config.hpp"

#if defined(STRATA_RACE_CHECK) && STRATA_RACE_CHECK && !STRATA_DEVICE_PASS
namespace strata::detail {
inline thread_local int race_exempt = 0;
/// Accesses made while one of these lives are not checked.
struct race_exempt_scope {
  race_exempt_scope() { ++race_exempt; }
  ~race_exempt_scope() { --race_exempt; }
  race_exempt_scope(const race_exempt_scope&) = delete;
  race_exempt_scope& operator=(const race_exempt_scope&) = delete;
};
}  // namespace strata::detail
#define STRATA_RACE_EXEMPT() ::strata::detail::race_exempt_scope strata_race_exempt_scope_
#else
#define STRATA_RACE_EXEMPT() static_cast<void>(0)
#endif
