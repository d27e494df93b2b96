// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/options.hpp -- how the host emulator runs a launch: workers, fiber order, stacks.
//
// Every field can also be set from the environment (read by options::from_environment(), which is
// what a default-constructed strata::stream uses on the host backend):
//   STRATA_EMU_WORKERS   worker threads (default: all hardware threads)
//   STRATA_EMU_SCHEDULE  round_robin | reverse | random   (order in which runnable fibers resume)
//   STRATA_EMU_SEED      seed for the random schedule
//   STRATA_EMU_STACK_KB  stack per GPU thread in KiB (default 256; 1024 under AddressSanitizer)
//   STRATA_EMU_PLACEMENT dispatch_model | shuffled     (which chiplet each block reports)
//   STRATA_EMU_RACECHECK 0 | 1   shared-memory race detector (default 1 in the race-check build,
//                                which it needs; see emulator/detail/race_check.hpp)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "strata/runtime/error.hpp"

namespace strata::emulator {

/// Order in which the fibers of a block (or cluster) that are ready to run are resumed. Results of a
/// correct kernel do not depend on it; a kernel with a race usually does, so tests run several.
enum class schedule { round_robin, reverse, random };

/// Which chiplet each block runs on (what ctx.chiplet().index() reports).
///  - dispatch_model: the target's modelled dispatch (block b on XCD b % 8 on gfx942).
///  - shuffled: a seeded random, balanced placement unlike any model -- what a kernel sees when the
///    hardware does not follow the model (CPX mode, concurrent grids). Code that must be correct
///    wherever blocks land (persistent schedulers, chiplet barriers) is tested under it.
enum class placement { dispatch_model, shuffled };

struct options {
  int workers = 0;                       // 0: every hardware thread
  schedule order = schedule::round_robin;
  std::uint64_t seed = 0;                // for schedule::random
  std::size_t stack_bytes = 0;           // 0: the default below
  placement chiplets = placement::dispatch_model;  // seeded by `seed` when shuffled
#if defined(STRATA_RACE_CHECK) && STRATA_RACE_CHECK
  bool race_check = true;                // report shared-memory races (the race-check build only)
#else
  bool race_check = false;               // report shared-memory races (the race-check build only)
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(STRATA_ASAN)
  static constexpr std::size_t default_stack_bytes = 1024 * 1024;
#else
  static constexpr std::size_t default_stack_bytes = 256 * 1024;
#endif

  int resolved_workers() const {
    if (workers > 0) return workers;
    const unsigned h = std::thread::hardware_concurrency();
    return h == 0 ? 1 : static_cast<int>(h);
  }
  std::size_t resolved_stack_bytes() const { return stack_bytes ? stack_bytes : default_stack_bytes; }

  /// Options from the STRATA_EMU_* environment variables; malformed values are an error, not ignored.
  static options from_environment() {
    options o;
    auto get = [](const char* name) -> const char* {
      const char* v = std::getenv(name);
      return (v && *v) ? v : nullptr;
    };
    auto number = [](const char* name, const char* v, long long lo) {
      char* end = nullptr;
      const long long x = std::strtoll(v, &end, 10);
      if (*end != '\0' || x < lo)
        throw invalid_argument("strata::emulator::options", name,
                               "must be an integer >= " + std::to_string(lo) + ", got '" + v + "'");
      return x;
    };
    if (const char* v = get("STRATA_EMU_WORKERS")) o.workers = static_cast<int>(number("STRATA_EMU_WORKERS", v, 1));
    if (const char* v = get("STRATA_EMU_SEED")) o.seed = static_cast<std::uint64_t>(number("STRATA_EMU_SEED", v, 0));
    if (const char* v = get("STRATA_EMU_STACK_KB"))
      o.stack_bytes = static_cast<std::size_t>(number("STRATA_EMU_STACK_KB", v, 16)) * 1024;
    if (const char* v = get("STRATA_EMU_PLACEMENT")) {
      const std::string_view s(v);
      if (s == "dispatch_model") o.chiplets = placement::dispatch_model;
      else if (s == "shuffled") o.chiplets = placement::shuffled;
      else
        throw invalid_argument("strata::emulator::options", "STRATA_EMU_PLACEMENT",
                               "must be dispatch_model or shuffled, got '" + std::string(s) + "'");
    }
    if (const char* v = get("STRATA_EMU_RACECHECK")) {
      const std::string_view s(v);
      if (s == "1") o.race_check = true;
      else if (s == "0") o.race_check = false;
      else throw invalid_argument("strata::emulator::options", "STRATA_EMU_RACECHECK", "must be 0 or 1, got '" + std::string(s) + "'");
    }
    if (const char* v = get("STRATA_EMU_SCHEDULE")) {
      const std::string_view s(v);
      if (s == "round_robin") o.order = schedule::round_robin;
      else if (s == "reverse") o.order = schedule::reverse;
      else if (s == "random") o.order = schedule::random;
      else
        throw invalid_argument("strata::emulator::options", "STRATA_EMU_SCHEDULE",
                               "must be round_robin, reverse or random, got '" + std::string(s) + "'");
    }
    return o;
  }
};

}  // namespace strata::emulator
