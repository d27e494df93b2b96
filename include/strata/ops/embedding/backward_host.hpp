// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/backward_host.hpp -- the backward host entries.
//
//   std::size_t strata::embedding_bag_backward_workspace_size(const embedding::backward_args&)
//   void strata::embedding_bag_backward(stream&, const embedding::backward_args&, workspace)
//       validate -> upload descriptors -> the kernels of backward.hpp -> under bounds::error,
//       synchronize and throw embedding::bounds_error on bad input. Under bounds::error nothing is
//       updated when the input is bad: the apply kernel reads the status record first (dense
//       gradients stay zero, sparse_count is 0, tables and optimizer state are untouched).
//   void strata::embedding_bag_backward_async(...)   the same without the synchronization
#pragma once

#include <string>

#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/backward.hpp"
#include "strata/ops/embedding/detail/plan.hpp"
#include "strata/ops/embedding/host.hpp"
#include "strata/runtime/runtime.hpp"

namespace strata {

namespace embedding::detail {

inline const char* backward_op = "strata::embedding_bag_backward";

/// Byte offsets of the backward's scratch after the descriptors.
struct backward_layout {
  std::size_t keys0, keys1, vals0, vals1, bag_of, bag_scale, hist, flags, starts, end;
  long long tiles;
};
inline backward_layout backward_scratch(long long n, long long bags, std::size_t start) {
  backward_layout l{};
  l.tiles = (n + sort_tile - 1) / sort_tile;
  std::size_t at = start;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += round256(bytes);
    return here;
  };
  const auto N = static_cast<std::size_t>(n);
  l.keys0 = take(N * 8);
  l.keys1 = take(N * 8);
  l.vals0 = take(N * 4);
  l.vals1 = take(N * 4);
  l.bag_of = take(N * 8);
  l.bag_scale = take(static_cast<std::size_t>(bags) * 4);
  l.hist = take(static_cast<std::size_t>(l.tiles * radix + 1) * 4);
  l.flags = take((N + 1) * 4);
  l.starts = take((N + 1) * 4);
  l.end = at;
  return l;
}

inline void validate_backward(const std::string& op, const backward_args& a, const plan& p) {
  const lookup& in = a.in;
  if (in.mode == pooling::max)
    throw unsupported(op + ": max pooling has no backward (FBGEMM has none either); use sum, mean or none");
  if (in.num_indices >= (1LL << 31))
    throw invalid_argument(op, "num_indices", "is " + num(in.num_indices) + "; the backward sorts 32-bit positions (< 2^31)");
  check_element_type(op, "grad_format", a.grad_format, "gradients");
  if (in.mode == pooling::none && a.grad_row_stride != 0 && a.grad_row_stride < p.max_dim)
    throw invalid_argument(op, "grad_row_stride", "is " + num(a.grad_row_stride) + " but the largest dim is " + num(p.max_dim));
  const std::size_t T = in.tables.size();
  switch (a.kind) {
    case gradient::dense:
      if (a.dense_grads.size() != T)
        throw invalid_argument(op, "dense_grads", "has " + num(a.dense_grads.size()) + " entries for " + num(T) + " tables");
      break;
    case gradient::sparse:
      if (a.sparse_grad_stride != 0 && a.sparse_grad_stride < p.max_dim)
        throw invalid_argument(op, "sparse_grad_stride", "is " + num(a.sparse_grad_stride) + " but the largest dim is " + num(p.max_dim));
      break;
    case gradient::fused:
      if (in.row_format != scalar::fp32 && in.row_format != scalar::fp16 && in.row_format != scalar::bf16)
        throw unsupported(op + ": fused optimizer updates need fp32, fp16 or bf16 rows, not " + to_string(in.row_format) +
                          " (quantized tables are for inference)");
      if (!(a.learning_rate == a.learning_rate) || !(a.eps >= 0.f))
        throw invalid_argument(op, !(a.learning_rate == a.learning_rate) ? "learning_rate" : "eps", "must be a number (eps >= 0)");
      if (a.opt != optimizer::sgd) {
        if (a.optimizer_state.size() != T)
          throw invalid_argument(op, "optimizer_state", "has " + num(a.optimizer_state.size()) + " entries for " + num(T) + " tables");
      }
      break;
  }
}

/// The backward's pointer table: the lookup's rows (add_lookup_rows; the table rows are outputs under
/// a fused optimizer), then
///   grad_output         input, aligned to its element, the forward output's extent
///   dense_grads[t]      dense: output, float-aligned, num_rows x dim floats
///   sparse_count        sparse: output, one long long (first: it is needed even without indices)
///   sparse_tables       sparse: output, int-aligned, num_indices ints
///   sparse_rows         sparse: output, num_indices long longs
///   sparse_grads        sparse: output, float-aligned, num_indices rows sparse_grad_stride apart
///   optimizer_state[t]  fused adagrad: output, float-aligned, num_rows x dim (rowwise: num_rows) floats
///   workspace           workspace, 256-byte aligned, embedding_bag_backward_workspace_size bytes
inline void check_backward_pointers(const std::string& op, const backward_args& a, const plan& p, const workspace& ws,
                                    std::size_t need) {
  const lookup& in = a.in;
  pointer_table t(op);
  add_lookup_rows(t, in, p, a.kind == gradient::fused);
  t.input("grad_output", a.grad_output)
      .aligned(static_cast<std::size_t>(element_bytes(a.grad_format)), "its element size")
      .spans(output_bytes(in, p, a.grad_format, a.grad_row_stride));
  const std::uint64_t n = static_cast<std::uint64_t>(std::max<long long>(0, in.num_indices));
  const auto rows_of = [&](std::size_t i) { return static_cast<std::uint64_t>(std::max<long long>(0, in.tables[i].num_rows)); };
  if (a.kind == gradient::dense)
    for (std::size_t i = 0; i < a.dense_grads.size(); ++i)
      t.output("dense_grads[" + std::to_string(i) + "]", a.dense_grads[i]).aligned(4, "a float")
          .spans(rows_of(i) * std::uint64_t(in.tables[i].dim) * 4);
  if (a.kind == gradient::sparse) {
    const std::uint64_t stride = std::uint64_t(a.sparse_grad_stride ? a.sparse_grad_stride : p.max_dim);
    t.output("sparse_count", a.sparse_count).aligned(alignof(long long)).spans(sizeof(long long));
    t.output("sparse_tables", a.sparse_tables).aligned(alignof(int)).spans(n * sizeof(int));
    t.output("sparse_rows", a.sparse_rows).aligned(alignof(long long)).spans(n * sizeof(long long));
    t.output("sparse_grads", a.sparse_grads).aligned(4, "a float").spans(n > 0 ? ((n - 1) * stride + std::uint64_t(p.max_dim)) * 4 : 0);
  }
  if (a.kind == gradient::fused && a.opt != optimizer::sgd)
    for (std::size_t i = 0; i < a.optimizer_state.size(); ++i)
      t.output("optimizer_state[" + std::to_string(i) + "]", a.optimizer_state[i]).aligned(4, "a float")
          .spans(rows_of(i) * (a.opt == optimizer::adagrad ? std::uint64_t(in.tables[i].dim) : 1) * 4);
  add_workspace_row(t, ws, need);
  t.check();
}

template <class Target, int Only = any_format>
void launch_backward(stream& s, const backward_args& a, plan& p, const workspace& ws) {
  using T = resolved_target<Target>;
  constexpr kernel_config cfg = config_for<T>();  // the grid caps (max_blocks)
  const lookup& in = a.in;
  const long long n = in.num_indices;
  // Tables: gradient / state pointers; features in user order (bag_base ascending).
  for (std::size_t t = 0; t < p.tables.size(); ++t) {
    if (a.kind == gradient::dense) p.tables[t].dense_grad = a.dense_grads[t];
    if (a.kind == gradient::fused && a.opt != optimizer::sgd) p.tables[t].state = a.optimizer_state[t];
  }
  std::vector<feature_desc> user(p.tile_order.size());
  for (const auto& f : p.tile_order) user[static_cast<std::size_t>(f.feature)] = f;
  const device_descriptors d = carve(ws, p.tables.size(), user.size());
  copy_to_device(s, d.tables, p.tables.data(), p.tables.size());
  copy_to_device(s, d.features, user.data(), user.size());
  launch(s, {.grid = 1, .block = 32}, reset_kernel<Target>{}, typename reset_kernel<Target>::params{d.header});

  const backward_layout l = backward_scratch(n, p.total_bags, static_cast<std::size_t>(d.rest - static_cast<unsigned char*>(ws.data)));
  auto* base = static_cast<unsigned char*>(ws.data);
  backward_params bp{};
  bp.tables = d.tables;
  bp.features = d.features;
  bp.header = d.header;
  bp.indices = in.indices;
  bp.offsets = in.offsets;
  bp.weights = in.per_sample_weights;
  bp.grad = a.grad_output;
  bp.keys[0] = reinterpret_cast<unsigned long long*>(base + l.keys0);
  bp.keys[1] = reinterpret_cast<unsigned long long*>(base + l.keys1);
  bp.vals[0] = reinterpret_cast<unsigned int*>(base + l.vals0);
  bp.vals[1] = reinterpret_cast<unsigned int*>(base + l.vals1);
  bp.bag_of = reinterpret_cast<unsigned long long*>(base + l.bag_of);
  bp.bag_scale = reinterpret_cast<float*>(base + l.bag_scale);
  bp.hist = reinterpret_cast<unsigned int*>(base + l.hist);
  bp.flags = reinterpret_cast<unsigned int*>(base + l.flags);
  bp.starts = reinterpret_cast<unsigned int*>(base + l.starts);
  bp.sparse_tables = a.sparse_tables;
  bp.sparse_rows = a.sparse_rows;
  bp.sparse_grads = a.sparse_grads;
  bp.sparse_count = a.kind == gradient::sparse ? a.sparse_count : nullptr;
  bp.sparse_stride = a.sparse_grad_stride ? a.sparse_grad_stride : p.max_dim;
  bp.num_indices = n;
  bp.total_bags = p.total_bags;
  bp.bag_size = in.bag_size;
  bp.none_stride = a.grad_row_stride ? a.grad_row_stride : p.max_dim;
  bp.tiles = l.tiles;
  unsigned long long rows = 0;
  for (const auto& t : in.tables) rows += static_cast<unsigned long long>(t.num_rows);
  bp.sentinel = rows;
  bp.num_tables = static_cast<int>(p.tables.size());
  bp.num_features = static_cast<int>(user.size());
  bp.is64 = in.indices_type == index_type::int64;
  bp.mode = static_cast<int>(in.mode);
  bp.policy = static_cast<int>(in.policy);
  bp.grad_format = static_cast<int>(a.grad_format.type);
  bp.row_format = static_cast<int>(in.row_format);
  bp.kind = static_cast<int>(a.kind);
  bp.opt = static_cast<int>(a.opt);
  bp.lr = a.learning_rate;
  bp.eps = a.eps;

  const auto blocks_for = [&](long long work) {
    return static_cast<int>(std::max<long long>(1, std::min<long long>((work + 255) / 256, cfg.max_blocks)));
  };
  launch(s, {.grid = blocks_for(n), .block = 256}, backward_prepare_kernel<Target>{}, bp);
  if (a.kind == gradient::dense)
    for (std::size_t t = 0; t < p.tables.size(); ++t) {
      const long long cnt = in.tables[t].num_rows * in.tables[t].dim;
      if (cnt > 0)
        launch(s, {.grid = blocks_for(cnt), .block = 256}, zero_kernel<Target>{},
               typename zero_kernel<Target>::params{a.dense_grads[t], cnt});
    }
  launch(s, {.grid = blocks_for(p.total_bags), .block = 256}, backward_bags_kernel<Target>{}, bp);
  // Radix passes over the bits of the largest key (the sentinel).
  int bits = 0;
  while (bits < 64 && (rows >> bits) != 0) ++bits;
  bp.in = 0;
  if (n > 0)
    for (int shift = 0; shift < bits; shift += radix_bits) {
      bp.shift = shift;
      const int tiles = static_cast<int>(l.tiles);
      launch(s, {.grid = tiles, .block = sort_threads}, sort_histogram_kernel<Target>{}, bp);
      launch(s, {.grid = 1, .block = sort_threads}, scan_kernel<Target>{},
             typename scan_kernel<Target>::params{bp.hist, l.tiles * radix, nullptr});
      launch(s, {.grid = tiles, .block = sort_threads}, sort_scatter_kernel<Target>{}, bp);
      bp.in = 1 - bp.in;
    }
  launch(s, {.grid = blocks_for(n + 1), .block = 256}, segment_heads_kernel<Target>{}, bp);
  launch(s, {.grid = 1, .block = sort_threads}, scan_kernel<Target>{},
         typename scan_kernel<Target>::params{bp.flags, n + 1, &d.header->scalars[0]});
  launch(s, {.grid = blocks_for(n), .block = 256}, segment_starts_kernel<Target>{}, bp);
  const int warps_per_block = 256 / T::warp_size;
  const int apply_grid = static_cast<int>(std::max<long long>(1, std::min<long long>((n + warps_per_block - 1) / warps_per_block, cfg.max_blocks)));
  with_format(in.row_format, [&](auto fmt) {
    constexpr scalar S = decltype(fmt)::value;
    // Only fp32 / fp16 / bf16 rows are ever written; other formats share the fp32 instantiation
    // (their apply kernel never touches rows: validation rejects fused updates of them).
    constexpr scalar R = (S == scalar::fp16 || S == scalar::bf16) ? S : scalar::fp32;
    if constexpr (Only == any_format || S == scalar(Only))
      launch(s, {.grid = apply_grid, .block = 256}, backward_apply_kernel<R, Target>{}, bp);
  });
}

}  // namespace embedding::detail

/// Scratch bytes strata::embedding_bag_backward needs for `a` (about 36 bytes per index, 4 per bag).
inline std::size_t embedding_bag_backward_workspace_size(const embedding::backward_args& a) {
  using namespace embedding::detail;
  long long bags = 0;
  for (const auto& f : a.in.features) bags += f.batch_size;
  const std::size_t start = descriptor_bytes(a.in.tables.size(), a.in.features.size());
  return backward_scratch(std::max<long long>(0, a.in.num_indices), std::max<long long>(0, bags), start).end;
}

namespace embedding::detail {
template <class Target, int Only>
void embedding_bag_backward_async_for(stream& s, const backward_args& a, workspace ws) {
  const std::string op = backward_op;
  if constexpr (Only != any_format) check_row_format<scalar(Only)>(op, a.in);
  validate_lookup(op, a.in);
  plan p = forward_plan<Target>(op, a.in);
  validate_backward(op, a, p);
  check_backward_pointers(op, a, p, ws, embedding_bag_backward_workspace_size(a));
  launch_backward<Target, Only>(s, a, p, ws);
}
}  // namespace embedding::detail

/// embedding_bag_backward_async<Rows>: typed, row format Rows only (see embedding_bag_async).
template <class Target = void>
void embedding_bag_backward_async(stream& s, const embedding::backward_args& a, workspace ws) {
  embedding::detail::embedding_bag_backward_async_for<Target, embedding::detail::any_format>(s, a, ws);
}
template <embedding::scalar Rows, class Target = void>
void embedding_bag_backward_async(stream& s, const embedding::backward_args& a, workspace ws) {
  embedding::detail::embedding_bag_backward_async_for<Target, int(Rows)>(s, a, ws);
}

/// Gradients with respect to the table rows: dense, sparse, or a fused optimizer update.
/// embedding_bag_backward<Rows>: typed, row format Rows only.
template <class Target = void>
void embedding_bag_backward(stream& s, const embedding::backward_args& a, workspace ws) {
  embedding_bag_backward_async<Target>(s, a, ws);
  if (a.in.policy == embedding::bounds::error)
    embedding_check<Target>(s, a.in, ws, embedding::detail::backward_op);
}
template <embedding::scalar Rows, class Target = void>
void embedding_bag_backward(stream& s, const embedding::backward_args& a, workspace ws) {
  embedding_bag_backward_async<Rows, Target>(s, a, ws);
  if (a.in.policy == embedding::bounds::error)
    embedding_check<Target>(s, a.in, ws, embedding::detail::backward_op);
}

}  // namespace strata

// The instances a precompiled kernel library provides (extern under STRATA_PRECOMPILED_ENTRIES).
#include "strata/ops/embedding/precompiled.hpp"
