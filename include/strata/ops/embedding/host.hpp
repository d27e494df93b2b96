// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/host.hpp -- the forward host entries.
//
//   std::size_t strata::embedding_bag_workspace_size(const embedding::forward_args&)
//   void strata::embedding_bag(stream&, const embedding::forward_args&, workspace)
//       validate -> upload descriptors, reset the status record -> launch -> synchronize and throw
//       embedding::bounds_error if the policy is bounds::error and the input was bad. Under clamp and
//       skip it does not synchronize (the status record still counts the bad input: read_status()).
//   void strata::embedding_bag_async(stream&, const embedding::forward_args&, workspace)
//       the same without the synchronization; then strata::embedding_check(stream, args.in, ws)
//       (synchronizes, throws like embedding_bag) or strata::embedding::read_status(stream, ws).
// The optional template argument runs the kernels as a given target (the emulator then uses its warp
// size and chiplet dispatch model); void: the backend's default.
#pragma once

#include <string>

#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/detail/plan.hpp"
#include "strata/ops/embedding/forward.hpp"
#include "strata/runtime/runtime.hpp"

namespace strata {

namespace embedding::detail {

inline const char* forward_op = "strata::embedding_bag";

/// "Use the target's configuration for the row format" (config.hpp); anything else is an explicit
/// configuration for every format, which is how benchmark/embedding_bench.cpp --sweep tunes them.
inline constexpr kernel_config default_config{.threads = 0};

/// The configuration the forward kernel for rows `Rows` runs with.
template <class Target, scalar Rows, kernel_config Cfg = default_config>
inline constexpr kernel_config forward_config =
    Cfg.threads == 0 ? config_for<resolved_target<Target>, Rows>() : Cfg;

/// The plan of a forward call for kernel configuration (E, K) of `format` at the target's warp size.
template <class Target, kernel_config Cfg = default_config>
plan forward_plan(const std::string& op, const lookup& in) {
  using T = resolved_target<Target>;
  return with_format(in.row_format, [&](auto fmt) {
    constexpr kernel_config cfg = forward_config<Target, decltype(fmt)::value, Cfg>;
    using K = forward_kernel<decltype(fmt)::value, Target, cfg>;
    return make_plan(op, in, K::E, K::K, T::warp_size, cfg.threads);
  });
}

inline void validate_forward(const std::string& op, const forward_args& a, const plan& p) {
  check_element_type(op, "output_format", a.output_format, "outputs");
  const bool none = a.in.mode == pooling::none;
  if (none && a.output_row_stride != 0 && a.output_row_stride < p.max_dim)
    throw invalid_argument(op, "output_row_stride", "is " + num(a.output_row_stride) + " but the largest dim is " + num(p.max_dim));
}

/// The forward's pointer table: the lookup's rows (add_lookup_rows), then
///   output     output, aligned to its element, the pooled rows (or num_indices rows output_row_stride apart)
///   workspace  workspace, 256-byte aligned, embedding_bag_workspace_size bytes
inline void check_forward_pointers(const std::string& op, const forward_args& a, const plan& p, const workspace& ws,
                                   std::size_t need) {
  pointer_table t(op);
  add_lookup_rows(t, a.in, p, false);
  t.output("output", a.output)
      .aligned(static_cast<std::size_t>(element_bytes(a.output_format)), "its element size")
      .spans(output_bytes(a.in, p, a.output_format, a.output_row_stride));
  add_workspace_row(t, ws, need);
  t.check();
}

/// Every row format's kernel is compiled, or only Only's (the typed entries).
inline constexpr int any_format = -1;

/// The typed entries take one row format: the lookup must have it.
template <scalar Rows>
void check_row_format(const std::string& op, const lookup& in) {
  if (in.row_format != Rows)
    throw invalid_argument(op, "in.row_format", std::string("is ") + to_string(in.row_format) + ", but this call is " + op +
                                                    "<" + to_string(Rows) + ">");
}

template <class Target, kernel_config Cfg = default_config, int Only = any_format>
void launch_forward(stream& s, const forward_args& a, const plan& p, const device_descriptors& d) {
  copy_to_device(s, d.tables, p.tables.data(), p.tables.size());
  copy_to_device(s, d.features, p.tile_order.data(), p.tile_order.size());
  launch(s, {.grid = 1, .block = 32}, reset_kernel<Target>{}, typename reset_kernel<Target>::params{d.header});
  if (p.num_tiles == 0) return;
  forward_params fp{};
  fp.tables = d.tables;
  fp.features = d.features;
  fp.header = d.header;
  fp.indices = a.in.indices;
  fp.offsets = a.in.offsets;
  fp.weights = a.in.per_sample_weights;
  fp.out = a.output;
  fp.num_tiles = p.num_tiles;
  fp.num_indices = a.in.num_indices;
  fp.bag_size = a.in.bag_size;
  fp.none_stride = a.output_row_stride ? a.output_row_stride : p.max_dim;
  fp.num_features = static_cast<int>(p.tile_order.size());
  fp.is64 = a.in.indices_type == index_type::int64;
  fp.mode = static_cast<int>(a.in.mode);
  fp.policy = static_cast<int>(a.in.policy);
  fp.out_format = static_cast<int>(a.output_format.type);
  with_format(a.in.row_format, [&](auto fmt) {
    constexpr scalar S = decltype(fmt)::value;
    if constexpr (Only == any_format || S == scalar(Only)) {
      constexpr kernel_config cfg = forward_config<Target, S, Cfg>;
      const int grid = static_cast<int>(std::min<long long>(p.num_tiles, cfg.max_blocks));
      launch(s, {.grid = grid, .block = cfg.threads}, forward_kernel<S, Target, cfg>{}, fp);
    }
  });
}

/// embedding_bag_async with kernel configuration `Cfg` for every row format instead of the tuned
/// ones: the tuning hook of benchmark/embedding_bench.cpp --sweep. Not a stable interface.
template <class Target, kernel_config Cfg>
void embedding_bag_async_with(stream& s, const forward_args& a, workspace ws);

}  // namespace embedding::detail

/// Scratch bytes strata::embedding_bag needs for `a` (descriptors and the status record).
inline std::size_t embedding_bag_workspace_size(const embedding::forward_args& a) {
  return embedding::detail::descriptor_bytes(a.in.tables.size(), a.in.features.size());
}

namespace embedding::detail {
template <class Target, int Only>
void embedding_bag_async_for(stream& s, const forward_args& a, workspace ws) {
  const std::string op = forward_op;
  if constexpr (Only != any_format) check_row_format<scalar(Only)>(op, a.in);
  validate_lookup(op, a.in);
  const plan p = forward_plan<Target>(op, a.in);
  validate_forward(op, a, p);
  check_forward_pointers(op, a, p, ws, embedding_bag_workspace_size(a));
  launch_forward<Target, default_config, Only>(s, a, p, carve(ws, p.tables.size(), p.tile_order.size()));
}
}  // namespace embedding::detail

/// Launches the forward pass without waiting; check later with embedding_check or read_status.
/// embedding_bag_async<Rows>: the same for row format Rows only, which is all it compiles (the
/// runtime-typed form compiles all six row formats' kernels); a lookup of another format is an error.
template <class Target = void>
void embedding_bag_async(stream& s, const embedding::forward_args& a, workspace ws) {
  embedding::detail::embedding_bag_async_for<Target, embedding::detail::any_format>(s, a, ws);
}
template <embedding::scalar Rows, class Target = void>
void embedding_bag_async(stream& s, const embedding::forward_args& a, workspace ws) {
  embedding::detail::embedding_bag_async_for<Target, int(Rows)>(s, a, ws);
}

template <class Target, embedding::kernel_config Cfg>
void embedding::detail::embedding_bag_async_with(stream& s, const forward_args& a, workspace ws) {
  const std::string op = forward_op;
  validate_lookup(op, a.in);
  const plan p = forward_plan<Target, Cfg>(op, a.in);
  validate_forward(op, a, p);
  check_forward_pointers(op, a, p, ws, embedding_bag_workspace_size(a));
  launch_forward<Target, Cfg>(s, a, p, carve(ws, p.tables.size(), p.tile_order.size()));
}

namespace embedding {
/// Reads the status record of the last call that used `ws` (synchronizes the stream).
inline status read_status(stream& s, workspace ws) {
  if (!ws.data || ws.bytes < sizeof(detail::workspace_header))
    throw invalid_argument("strata::embedding::read_status", "workspace", "is null or smaller than the status header");
  return detail::read_header(s, static_cast<const detail::workspace_header*>(ws.data));
}
}  // namespace embedding

/// Synchronizes and throws embedding::bounds_error if the call that used `ws` met bad input under
/// bounds::error. `in` must be the lookup of that call.
template <class Target = void>
void embedding_check(stream& s, const embedding::lookup& in, workspace ws, const char* op = "strata::embedding_bag") {
  using namespace embedding::detail;
  const embedding::status st = embedding::read_status(s, ws);
  if (st.ok() || in.policy != embedding::bounds::error) return;
  throw_if_bad(s, op, in, forward_plan<Target>(op, in), st);
}

/// The forward pass: pooled (or gathered) rows of every feature, in one launch. embedding_bag<Rows>
/// (e.g. embedding_bag<embedding::scalar::fp16>): typed, one row format's kernel only.
template <class Target = void>
void embedding_bag(stream& s, const embedding::forward_args& a, workspace ws) {
  embedding_bag_async<Target>(s, a, ws);
  if (a.in.policy == embedding::bounds::error) embedding_check<Target>(s, a.in, ws);
}
template <embedding::scalar Rows, class Target = void>
void embedding_bag(stream& s, const embedding::forward_args& a, workspace ws) {
  embedding_bag_async<Rows, Target>(s, a, ws);
  if (a.in.policy == embedding::bounds::error) embedding_check<Target>(s, a.in, ws);
}

}  // namespace strata
