// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/hierarchy/chiplet_topology.hpp -- the chiplet topology a program actually uses, and two ways
// to override it: at compile time with a target adaptor, at run time with an environment variable.
//
//   arch::with_chiplets<arch::gfx942, 4, 38>      gfx942 with 4 chiplets of 38 CUs (a DPX-like part);
//                                                 a target like any other (the emulator, tile orders and
//                                                 kernels see the new topology)
//   chiplet::runtime_topology<Target>()           Target::chiplets, overridden by STRATA_CHIPLETS
//   chiplet::runtime_topology<Target>(props)      ... with the chiplet count and CUs per chiplet that the
//                                                 runtime reported for the device in between
//   chiplet::parse_topology(spec, base)           the parser behind STRATA_CHIPLETS
//
// STRATA_CHIPLETS grammar (sizes in bytes, or with a binary suffix K/KiB, M/MiB, G/GiB):
//
//   <count>x<units>[,l2=<size>][,llc=<size>][,dispatch=round_robin|contiguous|monolithic]
//
//   STRATA_CHIPLETS=8x38                         MI300X in SPX mode
//   STRATA_CHIPLETS=4x38,l2=4M                   half of one
//   STRATA_CHIPLETS=2x74,dispatch=contiguous     a two-die part whose dies own halves of the grid
//   STRATA_CHIPLETS=1x38                         CPX mode: one XCD per device, no chiplet level left
//
// Fields not given keep the base topology's value. A count of 1 implies the monolithic model; a count
// above 1 on a base that had none (the host target) implies round_robin, the documented AMD rule.
// A malformed value throws strata::invalid_argument naming the variable, the value and the grammar:
// a silently ignored override would make every later number about locality wrong.
//
// Precedence: STRATA_CHIPLETS > what the runtime reports for the device > the target descriptor. The
// result only sizes tile orders and the locality simulator; it never tells a kernel where a block runs
// (that is ctx.chiplet().index(), see arch/dispatch.hpp).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include "strata/arch/target.hpp"
#include "strata/runtime/device_properties.hpp"
#include "strata/runtime/error.hpp"

namespace strata::arch {

/// Target `T` with its chiplet level replaced: `Count` chiplets of `Units` compute units, `L2Bytes` of
/// L2 each (default: T's). Everything else (warp size, atoms, shared memory) is T's. With Count == 1
/// the dispatch model becomes monolithic; with Count > 1 on a target that had no chiplet level it
/// becomes round_robin.
template <target T, int Count, int Units, std::size_t L2Bytes = T::chiplets.l2_bytes_per_chiplet>
struct with_chiplets : T {
  static_assert(Count >= 1, "with_chiplets: the chiplet count must be at least 1");
  static_assert(Units >= 1, "with_chiplets: each chiplet needs at least one compute unit");
  using base_target = T;
  static constexpr chiplet_topology chiplets = [] {
    chiplet_topology c = T::chiplets;
    c.count = Count;
    c.units_per_chiplet = Units;
    c.l2_bytes_per_chiplet = L2Bytes;
    if (Count == 1) c.dispatch = dispatch_model::monolithic;
    else if (c.dispatch == dispatch_model::monolithic) c.dispatch = dispatch_model::round_robin;
    return c;
  }();
};

}  // namespace strata::arch

namespace strata::chiplet {

/// The environment variable read by runtime_topology().
inline constexpr const char* environment_variable = "STRATA_CHIPLETS";

inline constexpr const char* topology_grammar =
    "<count>x<units>[,l2=<size>][,llc=<size>][,dispatch=round_robin|contiguous|monolithic] "
    "(sizes in bytes or with K/M/G), e.g. 8x38 or 4x38,l2=4M";

constexpr const char* to_string(arch::dispatch_model d) {
  switch (d) {
    case arch::dispatch_model::round_robin: return "round_robin";
    case arch::dispatch_model::contiguous: return "contiguous";
    default: return "monolithic";
  }
}

namespace detail {

[[noreturn]] inline void bad_topology(std::string_view source, std::string_view spec, const std::string& why) {
  throw invalid_argument("strata::chiplet::parse_topology", std::string(source),
                         "is '" + std::string(spec) + "': " + why + "; expected " + topology_grammar);
}

/// A positive integer that fills `s` exactly, or -1.
inline long long parse_count(std::string_view s) {
  long long v = -1;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty() || v < 1) return -1;
  return v;
}

/// "4194304", "4M", "4MiB", "512K": bytes, or -1.
inline long long parse_size(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits == 0) return -1;
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + digits, v);
  if (ec != std::errc{}) return -1;
  const std::string_view unit = s.substr(digits);
  long long scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB") scale = 1LL << 10;
  else if (unit == "M" || unit == "m" || unit == "MiB") scale = 1LL << 20;
  else if (unit == "G" || unit == "g" || unit == "GiB") scale = 1LL << 30;
  else return -1;
  if (v > (1LL << 50) / scale) return -1;  // beyond any cache; also keeps v * scale from overflowing
  return v * scale;
}

}  // namespace detail

/// Parses a STRATA_CHIPLETS value (grammar at the top of this file) over `base`. `source` names the
/// value in error messages. Throws strata::invalid_argument on anything malformed.
inline arch::chiplet_topology parse_topology(std::string_view spec, arch::chiplet_topology base,
                                             std::string_view source = environment_variable) {
  const std::string_view full = spec;
  const auto comma = spec.find(',');
  const std::string_view shape = spec.substr(0, comma);
  const auto x = shape.find('x');
  if (x == std::string_view::npos)
    detail::bad_topology(source, full, "'" + std::string(shape) + "' is not <count>x<units>");
  const long long count = detail::parse_count(shape.substr(0, x));
  const long long units = detail::parse_count(shape.substr(x + 1));
  if (count < 1 || count > 1024)
    detail::bad_topology(source, full, "the chiplet count '" + std::string(shape.substr(0, x)) +
                                           "' is not an integer in 1..1024");
  if (units < 1 || units > 100000)
    detail::bad_topology(source, full, "the units per chiplet '" + std::string(shape.substr(x + 1)) +
                                           "' is not an integer in 1..100000");
  arch::chiplet_topology t = base;
  t.count = static_cast<int>(count);
  t.units_per_chiplet = static_cast<int>(units);
  bool dispatch_given = false;
  std::string_view rest = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
  while (comma != std::string_view::npos) {
    const auto next = rest.find(',');
    const std::string_view field = rest.substr(0, next);
    const auto eq = field.find('=');
    if (eq == std::string_view::npos)
      detail::bad_topology(source, full, "the field '" + std::string(field) + "' is not <key>=<value>");
    const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "l2" || key == "llc") {
      const long long bytes = detail::parse_size(value);
      if (bytes < 0 || (key == "l2" && bytes == 0))
        detail::bad_topology(source, full, "'" + std::string(value) + "' is not a size for " + std::string(key));
      (key == "l2" ? t.l2_bytes_per_chiplet : t.last_level_cache_bytes) = static_cast<std::size_t>(bytes);
    } else if (key == "dispatch") {
      if (value == "round_robin") t.dispatch = arch::dispatch_model::round_robin;
      else if (value == "contiguous") t.dispatch = arch::dispatch_model::contiguous;
      else if (value == "monolithic") t.dispatch = arch::dispatch_model::monolithic;
      else detail::bad_topology(source, full, "'" + std::string(value) + "' is not a dispatch model");
      dispatch_given = true;
    } else {
      detail::bad_topology(source, full, "unknown key '" + std::string(key) + "'");
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  if (!dispatch_given) {
    if (t.count == 1) t.dispatch = arch::dispatch_model::monolithic;
    else if (t.dispatch == arch::dispatch_model::monolithic) t.dispatch = arch::dispatch_model::round_robin;
  }
  return t;
}

/// `base` overridden by the environment variable STRATA_CHIPLETS when it is set and not empty.
inline arch::chiplet_topology from_environment(arch::chiplet_topology base) {
  const char* v = std::getenv(environment_variable);
  if (v == nullptr || *v == '\0') return base;
  return parse_topology(v, base);
}

/// `base` with the chiplet count and units per chiplet the runtime reported (HIP derives the XCD count
/// from the architecture and CU count: runtime/hip/topology.hpp). A device reporting one chiplet is a
/// partition (CPX) or a monolithic GPU: no chiplet level, monolithic dispatch. Caches stay base's,
/// since HIP reports only the aggregate L2.
inline arch::chiplet_topology from_device(const device_properties& p, arch::chiplet_topology base) {
  if (p.chiplets < 1 || p.units_per_chiplet < 1) return base;
  base.count = p.chiplets;
  base.units_per_chiplet = p.units_per_chiplet;
  if (base.count == 1) base.dispatch = arch::dispatch_model::monolithic;
  return base;
}

/// The topology to size tile orders with: Target's descriptor, overridden by STRATA_CHIPLETS.
template <arch::target Target>
arch::chiplet_topology runtime_topology() {
  return from_environment(Target::chiplets);
}

/// The topology of a device the runtime described: Target's descriptor, then what the device reported,
/// then STRATA_CHIPLETS.
template <arch::target Target>
arch::chiplet_topology runtime_topology(const device_properties& p) {
  return from_environment(from_device(p, Target::chiplets));
}

/// "8x38, L2 4 MiB, LLC 256 MiB, round_robin": for tools and logs.
inline std::string to_string(const arch::chiplet_topology& t) {
  auto size = [](std::size_t b) {
    if (b >= arch::MiB && b % arch::MiB == 0) return std::to_string(b / arch::MiB) + " MiB";
    if (b >= arch::KiB && b % arch::KiB == 0) return std::to_string(b / arch::KiB) + " KiB";
    return std::to_string(b) + " B";
  };
  std::string s = std::to_string(t.count) + "x" + std::to_string(t.units_per_chiplet) + ", L2 " +
                  size(t.l2_bytes_per_chiplet);
  if (t.last_level_cache_bytes) s += ", LLC " + size(t.last_level_cache_bytes);
  s += ", ";
  s += to_string(t.dispatch);
  if (t.experimental) s += " (experimental)";
  return s;
}

}  // namespace strata::chiplet
