// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/emulator/detail/wavefronts.hpp -- counts the shared-memory wavefronts of the atoms' accesses
// (statistics.hpp says what is counted; bank_model.hpp what a request costs).
//
// Warp-wide atoms (ldmatrix) see every lane's address at once and count one request. Per-thread atoms
// (cp.async, warp_tile's fragment loads and stores) run lane by lane on the emulator, so their
// accesses are grouped: the k-th counted access of each lane since the warp's last collective or
// barrier belongs to request k (converged lanes issue the same sequence of instructions). Request k is
// complete, and costed, once every lane of the warp has contributed to it or exited; at the next warp
// collective, block or cluster barrier, or when the warp's last lane exits, every open request is
// costed with the lanes that did contribute (a lane predicated off a whole access, e.g. the last pass
// of a copy loop, takes no part). A lane whose k-th access is another atom or width than the other
// lanes' (divergent code) is counted as a request of its own and reported as unpaired.
//
// Everything here runs only while a statistics_recorder asks (warp_state::traffic is set); otherwise
// each hook is one test of a null pointer.
#pragma once

#include <algorithm>
#include <cstdint>

#include "strata/emulator/detail/bank_model.hpp"
#include "strata/emulator/detail/state.hpp"
#include "strata/emulator/statistics.hpp"

namespace strata::emulator::detail {

/// While alive, the thread's shared-memory accesses are an atom's own, counted by the atom: the
/// race-check build's hooks do not report them as uncounted plain accesses.
class counted_atom_scope {
 public:
  explicit counted_atom_scope(gpu_thread& t) : t_(&t) { ++t_->in_counted_atom; }
  ~counted_atom_scope() { --t_->in_counted_atom; }
  counted_atom_scope(const counted_atom_scope&) = delete;
  counted_atom_scope& operator=(const counted_atom_scope&) = delete;

 private:
  gpu_thread* t_;
};

/// Whether this launch counts shared-memory traffic.
inline bool counting_shared(const gpu_thread& t) { return t.warp->traffic != nullptr; }

/// Byte offset of `p` in the block's shared memory, or bank_model::inactive when it lies outside.
inline std::uint32_t shared_offset(const warp_state& w, const void* p) {
  const auto* a = static_cast<const unsigned char*>(p);
  if (!a || a < w.smem || a >= w.smem + w.smem_bytes) return bank_model::inactive;
  return static_cast<std::uint32_t>(a - w.smem);
}

/// Whether `p` lies in the block's shared memory (a warp_tile matrix there is counted, one in global
/// memory is not).
inline bool in_shared(const gpu_thread& t, const void* p) {
  return shared_offset(*t.warp, p) != bank_model::inactive;
}

inline void add_request(traffic_counts& c, shared_access kind, bank_model::cost cost) {
  if (cost.ideal == 0) return;  // no lane active: the GPU issues nothing that reaches the banks
  access_traffic& a = c.by_kind[static_cast<int>(kind)];
  ++a.requests;
  a.wavefronts += cost.wavefronts;
  a.ideal += cost.ideal;
}

/// A whole warp request at once (warp-wide atoms): `offset[l]` for lanes 0 .. lanes-1.
inline void count_warp_request(gpu_thread& t, shared_access kind, const std::uint32_t* offset, int lanes, int bytes) {
  warp_state& w = *t.warp;
  add_request(*w.traffic, kind, bank_model::request_cost(offset, lanes, bytes, w.warp_size));
}

inline std::uint64_t lanes_mask(const warp_state& w) {
  return w.lanes >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << w.lanes) - 1;
}

inline void finish_request(warp_state& w, pending_request& r) {
  add_request(*w.traffic, r.kind, bank_model::request_cost(r.offset, w.lanes, r.bytes, w.warp_size));
  r.lanes = 0;
}

/// Costs every open request of the warp with the lanes that contributed; every lane starts again at
/// k = 0. Called where all lanes of the warp meet (collectives, barriers) and at its last exit.
inline void flush_requests(warp_state& w) {
  if (!w.traffic || w.pending_used == 0) return;
  for (int k = 0; k < w.pending_used; ++k)
    if (w.pending[k].lanes) finish_request(w, w.pending[k]);
  w.pending_used = 0;
  std::fill(w.next_access, w.next_access + max_warp_size, 0u);
}

/// One lane's access of `bytes` bytes at `p` (null or outside shared memory: the lane takes no part,
/// e.g. an element predicated off), as its next access in the warp's sequence.
inline void count_lane_access(gpu_thread& t, shared_access kind, const void* p, int bytes) {
  warp_state& w = *t.warp;
  if (!w.traffic) return;
  const std::uint32_t k = w.next_access[t.lane]++;
  if (k >= w.pending.size()) w.pending.resize(k + 1);
  if (static_cast<int>(k) >= w.pending_used) w.pending_used = static_cast<int>(k) + 1;  // entries past it are free
  pending_request& r = w.pending[k];
  const std::uint32_t off = shared_offset(w, p);
  const std::uint64_t me = std::uint64_t(1) << t.lane;
  if (r.lanes == 0) {
    r.kind = kind;
    r.bytes = bytes;
    std::fill(r.offset, r.offset + w.lanes, bank_model::inactive);
  } else if (r.kind != kind || r.bytes != bytes || (r.lanes & me)) {
    std::uint32_t alone[max_warp_size];
    std::fill(alone, alone + w.lanes, bank_model::inactive);
    alone[t.lane] = off;
    count_warp_request(t, kind, alone, w.lanes, bytes);
    ++w.traffic->unpaired;
    return;
  }
  r.offset[t.lane] = off;
  r.lanes |= me;
  if ((r.lanes | w.exited) == lanes_mask(w)) finish_request(w, r);
}

/// The lane has exited: requests that waited only for it are complete.
inline void count_lane_exit(gpu_thread& t) {
  warp_state& w = *t.warp;
  if (!w.traffic) return;
  w.exited |= std::uint64_t(1) << t.lane;
  if (w.exited == lanes_mask(w)) return flush_requests(w);
  for (int k = 0; k < w.pending_used; ++k) {
    pending_request& r = w.pending[k];
    if (r.lanes && (r.lanes | w.exited) == lanes_mask(w)) finish_request(w, r);
  }
}

/// Prepares a warp for a new block: counting into `counts` (null: off).
inline void reset_counting(warp_state& w, traffic_counts* counts, const unsigned char* smem, std::size_t smem_bytes,
                           int warp_size) {
  w.traffic = counts;
  w.smem = smem;
  w.smem_bytes = smem_bytes;
  w.warp_size = warp_size;
  w.exited = 0;
  for (int k = 0; k < w.pending_used; ++k) w.pending[k].lanes = 0;  // left open by a failed block
  w.pending_used = 0;
  std::fill(w.next_access, w.next_access + max_warp_size, 0u);
}

// ---- the hooks the atoms call (found by argument-dependent lookup on gpu_thread, so that copy/ and
// mma/ need no emulator header; they call them under `if constexpr (Ctx::emulated)` only) ----------

/// `auto scope = enter_counted_atom(t);` around an atom's own shared-memory accesses.
inline counted_atom_scope enter_counted_atom(gpu_thread& t) { return counted_atom_scope(t); }

/// ldmatrix: `rows[l]` is lane l's row address, for the 8 * matrices lanes that give one.
inline void count_ldmatrix(gpu_thread& t, const void* const* rows, int matrices) {
  if (!counting_shared(t)) return;
  std::uint32_t offset[32];
  for (int l = 0; l < 8 * matrices; ++l) offset[l] = shared_offset(*t.warp, rows[l]);
  count_warp_request(t, shared_access::ldmatrix, offset, 8 * matrices, 16);
}

/// cp.async: this lane's write of `bytes` into shared memory at `dst` (counted at issue).
inline void count_cp_async_write(gpu_thread& t, const void* dst, int bytes) {
  count_lane_access(t, shared_access::cp_async, dst, bytes);
}

/// A fragment element access of `bytes` at `p` (null: this lane's element is predicated off).
inline void count_fragment_access(gpu_thread& t, bool store, const void* p, int bytes) {
  count_lane_access(t, store ? shared_access::fragment_store : shared_access::fragment_load, p, bytes);
}

/// The GPU thread running on this worker while its launch counts (else null), for the race-check
/// build's load/store hooks. Constant-initialized: the hooks may read it before anything else.
inline thread_local gpu_thread* counting_thread = nullptr;

/// A plain load or store reported by the race-check build's instrumentation: counted as uncounted when
/// it touches the running thread's block's shared memory outside a counted atom.
/// Self-contained and never instrumented: a load it made would call the hooks again.
STRATA_RACE_UNINSTRUMENTED inline void note_plain_access(const void* p) {
  gpu_thread* t = counting_thread;
  if (!t || t->in_counted_atom) return;
  warp_state* w = t->warp;
  const auto* a = static_cast<const unsigned char*>(p);
  if (a < w->smem || a >= w->smem + w->smem_bytes) return;
  ++w->traffic->uncounted;
}

}  // namespace strata::emulator::detail
