// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/statistics.hpp -- per-launch statistics of the host emulator: what a kernel asked of
// the GPU's shared memory, in 128-byte wavefronts under a bank model (detail/bank_model.hpp).
//
//   strata::emulator::statistics_recorder rec;          // counting on for launches from this thread
//   strata::attn::run<bf16, 128, 128, strata::arch::sm80>(s, q, k, v, o);
//   for (const auto& l : rec.launches())
//     std::printf("%s: %lld wavefronts (ideal %lld)\n", l.kernel.c_str(), l.shared.total().wavefronts,
//                 l.shared.total().ideal);
//
// What is counted: the shared-memory accesses the atoms make, where the emulator sees every lane's
// address of one warp-wide request: ldmatrix (copy/ldmatrix.hpp; also mma::ldmatrix_fragments), the
// shared-memory writes of cp.async (copy/cp_async.hpp, counted at issue as 4/8/16-byte stores), and
// the fragment loads and stores of mma::warp_tile (load_a, load_b, load_c, store_c) whose matrix lies
// in the block's shared memory. Per-thread accesses (cp.async, fragments) are grouped into warp
// requests by order: the k-th counted access of each lane since the warp's last collective or barrier
// is one request (lanes of converged code issue the same sequence).
// What is not: plain C++ loads and stores of shared memory outside those atoms (a softmax over a
// shared tile, copy::vector_copy, atomics). The race-check build sees them (its compiler reports every
// load and store) and counts them, per lane access, in shared_traffic::uncounted; other builds cannot
// see them, and say so: uncounted is empty there, never a made-up 0.
// Counts are sums over blocks, so they do not depend on the worker count or the schedule.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::emulator {

/// The atoms whose shared-memory accesses are counted.
enum class shared_access {
  ldmatrix,        // copy::ldmatrix (.x1/.x2/.x4, .trans): one request per instruction
  cp_async,        // copy::cp_async: its write into shared memory, at issue
  fragment_load,   // mma::warp_tile::load_a / load_b / load_c from shared memory
  fragment_store,  // mma::warp_tile::store_c into shared memory
};
inline constexpr int shared_access_kinds = 4;

constexpr const char* to_string(shared_access k) {
  switch (k) {
    case shared_access::ldmatrix: return "ldmatrix";
    case shared_access::cp_async: return "cp.async write";
    case shared_access::fragment_load: return "fragment load";
    case shared_access::fragment_store: return "fragment store";
  }
  return "?";
}

/// Warp-wide requests and their cost: `ideal` is what they would cost with no bank conflict.
struct access_traffic {
  long long requests = 0;
  long long wavefronts = 0;
  long long ideal = 0;
  access_traffic& operator+=(const access_traffic& o) {
    requests += o.requests, wavefronts += o.wavefronts, ideal += o.ideal;
    return *this;
  }
};

struct shared_traffic {
  access_traffic by_kind[shared_access_kinds];
  /// Lane accesses of shared memory made outside the counted atoms: a value only in the race-check
  /// build (the only one whose compiler reports plain loads and stores); empty elsewhere.
  std::optional<long long> uncounted;
  /// Lane accesses whose k-th place in the warp's sequence held a different atom or width in another
  /// lane (divergent code): each was counted as a request of its own.
  long long unpaired = 0;

  const access_traffic& operator[](shared_access k) const { return by_kind[static_cast<int>(k)]; }
  access_traffic& operator[](shared_access k) { return by_kind[static_cast<int>(k)]; }
  access_traffic total() const {
    access_traffic t;
    for (const access_traffic& k : by_kind) t += k;
    return t;
  }
  /// "ldmatrix 64 req / 256 wf (ideal 256); ..." for messages.
  std::string describe() const {
    std::string s;
    for (int k = 0; k < shared_access_kinds; ++k) {
      const access_traffic& a = by_kind[k];
      if (!a.requests) continue;
      s += (s.empty() ? "" : "; ") + std::string(to_string(static_cast<shared_access>(k))) + " " +
           std::to_string(a.requests) + " requests, " + std::to_string(a.wavefronts) + " wavefronts (ideal " +
           std::to_string(a.ideal) + ")";
    }
    s += std::string(s.empty() ? "" : "; ") + "uncounted lane accesses " +
         (uncounted ? std::to_string(*uncounted) : std::string("not observed in this build"));
    return s;
  }
};

/// One launch, as the emulator ran it.
struct launch_statistics {
  std::string kernel;  // the kernel's name
  std::string target;  // the arch it ran as
  long long blocks = 0;
  int threads_per_block = 0;
  int warp_size = 0;
  int warps_per_block = 0;
  shared_traffic shared;
};

/// While alive, counts the shared-memory traffic of every emulator launch made from the thread that
/// created it and records one launch_statistics per launch, in launch order. Recorders nest (the
/// innermost one records). Counting costs time (every counted access is recorded per lane), so it is
/// off unless a recorder asks for it. Not copyable; destroy on the thread that created it.
class statistics_recorder {
 public:
  statistics_recorder() : previous_(current()) { current() = this; }
  ~statistics_recorder() { current() = previous_; }
  statistics_recorder(const statistics_recorder&) = delete;
  statistics_recorder& operator=(const statistics_recorder&) = delete;

  const std::vector<launch_statistics>& launches() const { return launches_; }
  void clear() { launches_.clear(); }

  /// The recorder of this thread's launches, or null (emulator/launch.hpp asks).
  static statistics_recorder*& current() {
    thread_local statistics_recorder* r = nullptr;
    return r;
  }
  void record(launch_statistics s) { launches_.push_back(std::move(s)); }

 private:
  statistics_recorder* previous_;
  std::vector<launch_statistics> launches_;
};

}  // namespace strata::emulator
