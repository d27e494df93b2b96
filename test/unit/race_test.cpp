// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The emulator's shared-memory race detector (emulator/detail/race_check.hpp). In the race-check build
// (preset racecheck) planted races are reported with the kernel, the shared offset, both threads and
// the access kinds, and correctly synchronized kernels are not; in other builds asking for the
// detector is an error that says which build it needs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "strata/strata.hpp"
#include "support.hpp"

using Catch::Matchers::Contains;
using namespace strata_test;

namespace {

enum class race_mode {
  clean_barrier,       // write own slot, block.sync(), read a neighbour's
  missing_barrier,     // the same without the barrier: a read of another warp's slot races its write
  write_write,         // two threads of one warp write one word
  clean_warp_sync,     // lanes exchange through shared memory with warp.sync() between
  missing_warp_sync,   // the same without warp.sync()
  atomics,             // every thread adds to one word atomically, then a barrier, then all read it
  own_bytes,           // every thread writes its own byte of a shared array: no two touch one byte
  write_after_reads,   // thread 0 writes, barrier, every thread reads, thread 5 overwrites: races the reads
  overrun,             // thread 3 writes 4 bytes past the end of the block's shared memory
};

struct race_params {
  race_mode mode;
  int* out;
};

struct race_kernel {
  using target = strata::arch::host;
  static constexpr const char* name = "race_kernel";
  struct shared_storage {
    int v[256];
    unsigned char bytes[256];
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const race_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    auto block = ctx.block();
    const int t = block.thread_rank(), n = block.size();
    switch (p.mode) {
      case race_mode::clean_barrier:
        s.v[t] = t;
        block.sync();
        p.out[t] = s.v[(t + 33) % n];
        break;
      case race_mode::missing_barrier:
        s.v[t] = t;
        p.out[t] = s.v[(t + 33) % n];
        break;
      case race_mode::write_write:
        if (t < 2) s.v[0] = t;
        break;
      case race_mode::clean_warp_sync:
        s.v[t] = t;
        ctx.warp().sync();
        p.out[t] = s.v[t ^ 1];
        break;
      case race_mode::missing_warp_sync:
        s.v[t] = t;
        p.out[t] = s.v[t ^ 1];
        break;
      case race_mode::atomics:
        if (t == 0) s.v[0] = 0;
        block.sync();
        strata::atomic::add(&s.v[0], 1);
        block.sync();
        p.out[t] = s.v[0];
        break;
      case race_mode::own_bytes:
        s.bytes[t] = static_cast<unsigned char>(t);
        block.sync();
        p.out[t] = s.bytes[n - 1 - t];
        break;
      case race_mode::overrun:
        if (t == 3) reinterpret_cast<int*>(&s)[sizeof(shared_storage) / sizeof(int) + 1] = 1;
        break;
      case race_mode::write_after_reads:
        if (t == 0) s.v[0] = 7;
        block.sync();
        p.out[t] = s.v[0];
        if (t == 5) s.v[0] = 8;
        break;
    }
  }
};

// Runs race_kernel in `mode` over 64 threads (two warps); returns the error text, empty if none.
std::string run(race_mode mode, strata::emulator::options o) {
  strata::stream s(o);
  auto out = poisoned<int>(s, 64, -1);
  try {
    strata::launch(s, {.grid = 2, .block = 64}, race_kernel{}, race_params{mode, out.data()});
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace

#if defined(STRATA_RACE_CHECK) && STRATA_RACE_CHECK

TEST_CASE("race detector: synchronized kernels are not reported", "[emulator][racecheck]") {
  for (const auto& o : schedules()) {
    CHECK(run(race_mode::clean_barrier, o).empty());
    CHECK(run(race_mode::clean_warp_sync, o).empty());
    CHECK(run(race_mode::atomics, o).empty());
    CHECK(run(race_mode::own_bytes, o).empty());
  }
}

TEST_CASE("race detector: planted races are reported with kernel, offset, threads and access kinds",
          "[emulator][racecheck]") {
  for (const auto& o : schedules()) {
    const std::string missing = run(race_mode::missing_barrier, o);
    CHECK_THAT(missing, Contains("race_kernel") && Contains("shared-memory race at shared byte") &&
                            Contains("thread") && Contains("wrote") && Contains("read") &&
                            Contains("no barrier between them"));
    const std::string ww = run(race_mode::write_write, o);
    CHECK_THAT(ww, Contains("shared-memory race at shared byte 0") && Contains("thread 0 (warp 0, lane 0) wrote") &&
                       Contains("thread 1 (warp 0, lane 1) wrote"));
    // Inside one warp (which lanes clash depends on the fiber order).
    CHECK_THAT(run(race_mode::missing_warp_sync, o), Contains("shared-memory race") && Contains("wrote it, and thread"));
    // A write after reads: the report names the writer, a reader and the barrier before the reads.
    CHECK_THAT(run(race_mode::write_after_reads, o),
               Contains("thread 5 (warp 0, lane 5) wrote") && Contains("read it") && Contains("after the block.sync() at"));
  }
}

TEST_CASE("race-check build: a shared-memory overrun is caught at the access, naming the thread",
          "[emulator][racecheck]") {
  CHECK_THAT(run(race_mode::overrun, {.workers = 1}),
             Contains("race_kernel") && Contains("shared-memory access out of bounds: thread 3 (warp 0, lane 3) writes 4 bytes") &&
                 Contains("at shared byte 1284, past the end of the block's 1280 bytes"));
}

TEST_CASE("race detector: STRATA_EMU_RACECHECK=0 turns it off", "[emulator][racecheck]") {
  strata::emulator::options o{.workers = 1};
  o.race_check = false;
  CHECK(run(race_mode::write_write, o).empty());
}

#else

TEST_CASE("race detector: asking for it outside the race-check build names the build it needs", "[emulator]") {
  strata::emulator::options o{.workers = 1};
  o.race_check = true;
  const std::string e = run(race_mode::clean_barrier, o);
  CHECK_THAT(e, Contains("options.race_check") && Contains("racecheck"));
  o.race_check = false;
  CHECK(run(race_mode::missing_barrier, o).empty());  // not detected here: the build cannot see accesses
}

TEST_CASE("a shared-memory overrun is caught by the canary at the end of the block", "[emulator]") {
  CHECK_THAT(run(race_mode::overrun, {.workers = 1}),
             Contains("race_kernel") && Contains("wrote past the end of its shared memory (1280 bytes") &&
                 Contains("at byte 1284"));
}

#endif
