// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/chiplet_calibration.hpp -- which die an NVIDIA SM sits on: %smid through an optional,
// user-measured calibration table.
//
// Why a table. B200 (sm_100a) is two dies presented as one device, but NVIDIA documents no die id:
// there is no special register, no driver attribute and no published numbering that says which die
// an SM belongs to. AMD has one (HW_REG_XCC_ID on gfx94x/gfx950); on NVIDIA the only hardware fact a
// block can read is its SM id, %smid. Without more information ctx.chiplet().index() splits %smid
// into Target::chiplets.count contiguous ranges of %nsmid, an EXPERIMENTAL guess: %nsmid may exceed
// the number of SMs, the ids need not be contiguous, and nothing promises that the low half of the
// ids is one die.
//
// The table replaces that guess with a measurement the user makes on the actual GPU:
// smid_to_chiplet[smid] is the die of SM `smid`. One way to build it is to time, from one block
// pinned to each SM, loads of lines homed in different parts of L2 and cluster the per-SM latency
// profiles (the technique of the H100/H200 "near/far L2 partition" microbenchmarks): SMs that see
// the same lines as near belong to the same partition or die. Strata does not ship such a
// benchmark; it only carries the result to the kernels.
//
// Any protocol whose correctness needs two blocks to share an L2 -- the chiplet barrier, per-chiplet
// queues of strata::persistent_tiles, anything that relies on a chiplet-local cache -- must take the
// chiplet from this hardware query (ctx.chiplet().index(): the table when one is set, the default
// split otherwise), never from the dispatch model (arch::modelled_chiplet), which only predicts
// where the hardware will probably place a block.
//
// API (host side, per device ordinal):
//   strata::set_chiplet_calibration(device, smid_to_chiplet, chiplets)   validate, copy, upload
//   strata::clear_chiplet_calibration(device)                            back to the default split
//   strata::chiplet_calibration_table(device)    the device copy (nullptr when none, or not CUDA)
//   strata::get_chiplet_calibration(device)      the host copy, for inspection
// strata::launch passes the current device's table to every kernel whose target has more than one
// chiplet; an SM id past the end of the table falls back to the default split.
//
// Limits. At most 4096 entries (max_chiplet_calibration_entries), each < `chiplets`. The device copy
// exists only in CUDA builds (cudaMalloc + cudaMemcpy, kept for the life of the process; replacing
// or clearing a table frees the previous copy). Host and HIP builds validate and keep the host copy
// (so the registry can be unit-tested) and report no device table. Replacing or clearing a table is
// not ordered with launches that other threads issue at the same time: set it up before launching.
//
// Status, plainly: the lookup (chiplet_from_smid) and the registry are tested on the host, and the
// device path is compiled for sm_100a (test/compile), but the table has NEVER been run on a B200.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/config/config.hpp"
#include "strata/runtime/error.hpp"

#if STRATA_BACKEND_CUDA
#include <cuda_runtime.h>

#include "strata/runtime/cuda/error.hpp"
#endif

namespace strata {

/// The most SM ids one calibration table may cover.
inline constexpr int max_chiplet_calibration_entries = 4096;

/// The chiplet of SM `smid`, for a GPU with `count` chiplets and `nsmid` SM ids (%nsmid). With a
/// table (non-null) and smid < table_size: table[smid], whose values the registry checked are below
/// the chiplet count. Otherwise the default split of the SM ids into `count` contiguous ranges,
/// smid * count / nsmid clamped to count - 1 (nsmid 0 reads as 1). count <= 1 gives 0.
STRATA_HOST_DEVICE constexpr int chiplet_from_smid(unsigned smid, unsigned nsmid, int count, const unsigned char* table,
                                                   int table_size) {
  if (count <= 1) return 0;
  if (table != nullptr && table_size > 0 && smid < static_cast<unsigned>(table_size)) return table[smid];
  const unsigned long long n = nsmid ? nsmid : 1u;
  const unsigned long long c = static_cast<unsigned long long>(smid) * static_cast<unsigned>(count) / n;
  return c < static_cast<unsigned long long>(count) ? static_cast<int>(c) : count - 1;
}

/// A device's calibration as the registry holds it.
struct chiplet_calibration_info {
  std::vector<std::uint8_t> smid_to_chiplet;    ///< host copy: chiplet of each SM id
  int chiplets = 0;                             ///< the chiplet count the table was validated against
  const unsigned char* device_table = nullptr;  ///< device copy (CUDA builds), else nullptr
};

namespace detail {

struct chiplet_calibration_record {
  std::vector<std::uint8_t> host;
  int chiplets = 0;
  unsigned char* device = nullptr;
};

struct chiplet_calibration_registry {
  std::mutex mutex;
  std::map<int, chiplet_calibration_record> devices;
};

/// The process's one registry: a function-local static of an inline function is a single object
/// across translation units. Its device copies are not freed at exit: the CUDA runtime may already
/// be torn down by then, and the end of the process releases them anyway.
inline chiplet_calibration_registry& chiplet_calibration_state() {
  static chiplet_calibration_registry registry;
  return registry;
}

/// What a launch needs, read under one lock so that the pointer and size belong together.
struct chiplet_calibration_view {
  const unsigned char* table = nullptr;
  int size = 0;
  int chiplets = 0;
};

inline chiplet_calibration_view chiplet_calibration_device_view(int device) {
  auto& r = chiplet_calibration_state();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.devices.find(device);
  if (it == r.devices.end() || it->second.device == nullptr) return {};
  return {it->second.device, static_cast<int>(it->second.host.size()), it->second.chiplets};
}

#if STRATA_BACKEND_CUDA
/// Makes `device` current for the guard's lifetime (for set_chiplet_calibration's upload).
class scoped_cuda_device {
 public:
  explicit scoped_cuda_device(int device) {
    cuda::detail::check(cudaGetDevice(&previous_),
                        [] { return std::string("strata::set_chiplet_calibration: cudaGetDevice()"); });
    if (previous_ != device)
      cuda::detail::check(cudaSetDevice(device), [device] {
        return "strata::set_chiplet_calibration: cudaSetDevice(" + std::to_string(device) + ")";
      });
  }
  scoped_cuda_device(const scoped_cuda_device&) = delete;
  scoped_cuda_device& operator=(const scoped_cuda_device&) = delete;
  ~scoped_cuda_device() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

inline unsigned char* upload_chiplet_calibration(int device, std::span<const std::uint8_t> table) {
  const scoped_cuda_device guard(device);
  void* p = nullptr;
  const std::size_t bytes = table.size();
  cuda::detail::check(cudaMalloc(&p, bytes), [bytes] {
    return "strata::set_chiplet_calibration: cudaMalloc(" + std::to_string(bytes) + " bytes)";
  });
  const cudaError_t e = cudaMemcpy(p, table.data(), bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) (void)cudaFree(p);
  cuda::detail::check(e, [bytes] {
    return "strata::set_chiplet_calibration: cudaMemcpy(" + std::to_string(bytes) + " bytes, cudaMemcpyHostToDevice)";
  });
  return static_cast<unsigned char*>(p);
}

/// cudaFree synchronizes the device, so kernels already running with the old table finish first.
/// Its error (only possible with a broken context) is dropped, as device_buffer's destructor does.
inline void free_chiplet_calibration(int device, unsigned char* p) noexcept {
  if (p == nullptr) return;
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
  (void)cudaFree(p);
  if (switched) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
}
#endif

inline void check_calibration_device(const char* op, int device) {
  if (device < 0)
    throw invalid_argument(op, "device", "is " + std::to_string(device) + "; device ordinals start at 0");
}

}  // namespace detail

/// Sets the SM-id -> chiplet table of `device`: smid_to_chiplet[smid] is the chiplet (die) of SM
/// `smid`, for a GPU with `chiplets` chiplets. Replaces any earlier table of that device. Throws
/// strata::invalid_argument for a negative device, chiplets < 1, an empty table, more than
/// max_chiplet_calibration_entries entries or an entry >= chiplets; in CUDA builds
/// strata::backend_error when the upload fails (e.g. no such device).
inline void set_chiplet_calibration(int device, std::span<const std::uint8_t> smid_to_chiplet, int chiplets) {
  constexpr const char* op = "strata::set_chiplet_calibration";
  detail::check_calibration_device(op, device);
  if (chiplets < 1)
    throw invalid_argument(op, "chiplets", "is " + std::to_string(chiplets) + "; a GPU has at least one chiplet");
  if (smid_to_chiplet.empty())
    throw invalid_argument(op, "smid_to_chiplet",
                           "is empty; give the chiplet of each SM id, or call strata::clear_chiplet_calibration "
                           "to return to the default split");
  if (smid_to_chiplet.size() > static_cast<std::size_t>(max_chiplet_calibration_entries))
    throw invalid_argument(op, "smid_to_chiplet",
                           "has " + std::to_string(smid_to_chiplet.size()) + " entries, more than the " +
                               std::to_string(max_chiplet_calibration_entries) + " SM ids a table may cover");
  for (std::size_t smid = 0; smid < smid_to_chiplet.size(); ++smid) {
    if (static_cast<int>(smid_to_chiplet[smid]) >= chiplets)
      throw invalid_argument(op, "smid_to_chiplet",
                             "maps SM id " + std::to_string(smid) + " to chiplet " +
                                 std::to_string(smid_to_chiplet[smid]) + ", but there are only " +
                                 std::to_string(chiplets) + " chiplets (ids 0 to " + std::to_string(chiplets - 1) +
                                 ")");
  }

  detail::chiplet_calibration_record fresh;
  fresh.host.assign(smid_to_chiplet.begin(), smid_to_chiplet.end());
  fresh.chiplets = chiplets;
#if STRATA_BACKEND_CUDA
  fresh.device = detail::upload_chiplet_calibration(device, smid_to_chiplet);
#endif
  unsigned char* old = nullptr;
  {
    auto& r = detail::chiplet_calibration_state();
    const std::lock_guard<std::mutex> lock(r.mutex);
    auto& slot = r.devices[device];
    old = std::exchange(slot.device, nullptr);
    slot = std::move(fresh);
  }
#if STRATA_BACKEND_CUDA
  detail::free_chiplet_calibration(device, old);
#else
  (void)old;
#endif
}

/// Removes the table of `device` (a no-op when it has none): its kernels return to the default split.
inline void clear_chiplet_calibration(int device) {
  detail::check_calibration_device("strata::clear_chiplet_calibration", device);
  unsigned char* old = nullptr;
  {
    auto& r = detail::chiplet_calibration_state();
    const std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.devices.find(device);
    if (it == r.devices.end()) return;
    old = it->second.device;
    r.devices.erase(it);
  }
#if STRATA_BACKEND_CUDA
  detail::free_chiplet_calibration(device, old);
#else
  (void)old;
#endif
}

/// The device copy of `device`'s table, or nullptr when it has none (always nullptr outside CUDA
/// builds). Its entry count is get_chiplet_calibration(device)->smid_to_chiplet.size().
inline const unsigned char* chiplet_calibration_table(int device) {
  return detail::chiplet_calibration_device_view(device).table;
}

/// The table of `device` as set, or nullopt when it has none.
inline std::optional<chiplet_calibration_info> get_chiplet_calibration(int device) {
  auto& r = detail::chiplet_calibration_state();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.devices.find(device);
  if (it == r.devices.end()) return std::nullopt;
  return chiplet_calibration_info{it->second.host, it->second.chiplets, it->second.device};
}

}  // namespace strata
