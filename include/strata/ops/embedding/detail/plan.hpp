// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/detail/plan.hpp -- host side of both directions: argument validation (every
// message names the operator and the argument), the device descriptors, the tile order, the
// workspace layout and the decoding of the status record into strata::embedding::bounds_error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/arch/arch.hpp"
#include "strata/hierarchy/kernel.hpp"
#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/config.hpp"
#include "strata/ops/embedding/detail/common.hpp"
#include "strata/ops/embedding/detail/rows.hpp"
#include "strata/runtime/pointer_table.hpp"
#include "strata/runtime/runtime.hpp"

namespace strata::embedding::detail {

/// The target a kernel declared with `Target` runs as: Target, or the backend's default.
template <class Target>
using resolved_target = std::conditional_t<!std::is_void_v<Target>, Target,
#if STRATA_BACKEND_CUDA
                                           arch::sm80
#elif STRATA_BACKEND_HIP
                                           arch::gfx90a
#else
                                           arch::host
#endif
                                           >;

/// Calls f(std::integral_constant<scalar, S>{}) for the runtime format s.
template <class F>
decltype(auto) with_format(scalar s, F&& f) {
  switch (s) {
    case scalar::fp16: return f(std::integral_constant<scalar, scalar::fp16>{});
    case scalar::bf16: return f(std::integral_constant<scalar, scalar::bf16>{});
    case scalar::fp8_e4m3: return f(std::integral_constant<scalar, scalar::fp8_e4m3>{});
    case scalar::int8_rowwise: return f(std::integral_constant<scalar, scalar::int8_rowwise>{});
    case scalar::int4_rowwise: return f(std::integral_constant<scalar, scalar::int4_rowwise>{});
    default: return f(std::integral_constant<scalar, scalar::fp32>{});
  }
}

inline std::string num(long long v) { return std::to_string(v); }

inline bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

inline int element_bytes(scalar s) {
  switch (s) {
    case scalar::fp32: return 4;
    case scalar::fp16:
    case scalar::bf16: return 2;
    default: return 1;
  }
}

/// Outputs and gradients: the element types the kernels store and load (rows.hpp, store_value and
/// load_value); any other strata::dtype is refused naming `arg` (output_format or grad_format).
inline void check_element_type(const std::string& op, const char* arg, strata::dtype t, const char* what) {
  if (t != strata::dtype::fp32 && t != strata::dtype::fp16 && t != strata::dtype::bf16)
    throw invalid_argument(op, arg, std::string("has dtype ") + to_string(t) + "; embedding " + what +
                                        " are fp32, fp16 or bf16");
}

/// Bytes of one output or gradient element (checked by check_element_type: fp32, fp16 or bf16).
inline int element_bytes(strata::dtype t) { return static_cast<int>(strata::size_of(t)); }

inline long long stride_of(const lookup& in, const table& t) {
  return t.row_stride_bytes ? t.row_stride_bytes : packed_row_bytes(in.row_format, t.dim);
}

/// Everything the host works out once per call.
struct plan {
  std::vector<table_desc> tables;
  std::vector<feature_desc> tile_order;  // features sorted by table
  std::vector<long long> bag_base;       // per user feature
  std::vector<long long> out_offset, out_stride;  // per user feature
  long long total_bags = 0;
  long long num_tiles = 0;
  long long output_elements = 0;         // extent of the pooled output / grad_output (elements)
  int max_dim = 0;
};

/// Checks the lookup's sizes and formats; throws strata::invalid_argument("<op>", "<argument>", ...).
/// Its pointers are checked by the entry's pointer table (add_lookup_rows).
inline void validate_lookup(const std::string& op, const lookup& in) {
  if (in.tables.empty()) throw invalid_argument(op, "tables", "is empty: pass at least one table");
  if (in.features.empty()) throw invalid_argument(op, "features", "is empty: pass at least one feature");
  const int eb = element_bytes(in.row_format);
  for (std::size_t t = 0; t < in.tables.size(); ++t) {
    const table& tb = in.tables[t];
    const std::string a = "tables[" + std::to_string(t) + "]";
    if (tb.num_rows < 0) throw invalid_argument(op, a + ".num_rows", "is negative (" + num(tb.num_rows) + ")");
    if (tb.dim < 1) throw invalid_argument(op, a + ".dim", "must be at least 1, got " + num(tb.dim));
    if (tb.dim > (1 << 20)) throw invalid_argument(op, a + ".dim", "is " + num(tb.dim) + "; at most 2^20 is supported");
    const long long packed = packed_row_bytes(in.row_format, tb.dim);
    if (tb.row_stride_bytes != 0 && tb.row_stride_bytes < packed)
      throw invalid_argument(op, a + ".row_stride_bytes", "is " + num(tb.row_stride_bytes) + " but a " +
                                                              to_string(in.row_format) + " row of dim " + num(tb.dim) +
                                                              " takes " + num(packed) + " bytes");
    if (stride_of(in, tb) % eb != 0)
      throw invalid_argument(op, a + ".row_stride_bytes", "must be a multiple of the element size (" + num(eb) + " bytes)");
    if (tb.padding_index != no_padding && (tb.padding_index < 0 || tb.padding_index >= tb.num_rows))
      throw invalid_argument(op, a + ".padding_index", "is " + num(tb.padding_index) + "; use no_padding (-1) or a row in [0, " +
                                                           num(tb.num_rows) + ")");
    if (tb.num_rows > (1LL << 52) / std::max<long long>(1, stride_of(in, tb)))
      throw invalid_argument(op, a + ".num_rows", "is too large: the table would exceed 2^52 bytes");
  }
  for (std::size_t f = 0; f < in.features.size(); ++f) {
    const feature& ft = in.features[f];
    const std::string a = "features[" + std::to_string(f) + "]";
    if (ft.table < 0 || ft.table >= static_cast<int>(in.tables.size()))
      throw invalid_argument(op, a + ".table", "is " + num(ft.table) + " but there are " + num(in.tables.size()) + " tables");
    if (ft.batch_size < 0 || ft.batch_size > (1LL << 40))
      throw invalid_argument(op, a + ".batch_size", "must be in [0, 2^40], got " + num(ft.batch_size));
  }
  if (in.num_indices < 0 || in.num_indices > (1LL << 40))
    throw invalid_argument(op, "num_indices", "must be in [0, 2^40], got " + num(in.num_indices));
  long long bags = 0;
  for (const feature& ft : in.features) bags += ft.batch_size;
  if (!in.offsets) {
    if (in.bag_size < 0) throw invalid_argument(op, "bag_size", "is negative (" + num(in.bag_size) + ")");
    if (in.bag_size > 0 && bags > (1LL << 40) / in.bag_size)
      throw invalid_argument(op, "bag_size", "times the " + num(bags) + " bags exceeds 2^40 indices");
    if (bags * in.bag_size != in.num_indices)
      throw invalid_argument(op, "num_indices", "is " + num(in.num_indices) + " but fixed-size bags (offsets null) need " +
                                                    num(bags) + " bags x bag_size " + num(in.bag_size) + " = " +
                                                    num(bags * in.bag_size));
  } else if (in.indices_type == index_type::int32 && in.num_indices > 0x7FFFFFFFLL) {
    throw invalid_argument(op, "indices_type", "int32 offsets cannot address " + num(in.num_indices) + " indices");
  }
  if (in.per_sample_weights) {
    if (in.mode != pooling::sum && in.mode != pooling::none)
      throw invalid_argument(op, "per_sample_weights", std::string("are only defined for sum and none pooling (as in PyTorch "
                                                                   "and FBGEMM), not ") + to_string(in.mode));
  }
}

/// Group (lanes per bag) and column passes of a table for a kernel with E elements per 16 bytes and
/// K chunks per lane, at warp size W.
inline std::pair<int, int> group_of(int dim, int E, int K, int W) {
  const long long chunks = (dim + E - 1) / E;
  if (chunks <= static_cast<long long>(W) * K) {
    const int need = static_cast<int>((chunks + K - 1) / K);
    int g = 1;
    while (g < need) g *= 2;
    return {g, 1};
  }
  return {W, static_cast<int>((chunks + static_cast<long long>(W) * K - 1) / (static_cast<long long>(W) * K))};
}

/// Builds the descriptors and the tile order. `pooled_layout` resolves the features' output layout.
inline plan make_plan(const std::string& op, const lookup& in, int E, int K, int W, int threads) {
  plan p;
  const int T = static_cast<int>(in.tables.size()), F = static_cast<int>(in.features.size());
  p.tables.resize(T);
  long long row_base = 0;
  for (int t = 0; t < T; ++t) {
    const table& tb = in.tables[t];
    table_desc& d = p.tables[t];
    d = table_desc{};
    d.rows = static_cast<const unsigned char*>(tb.rows);
    d.rows_mut = const_cast<unsigned char*>(d.rows);
    d.num_rows = tb.num_rows;
    d.stride = stride_of(in, tb);
    d.padding = tb.padding_index;
    d.row_base = row_base;
    row_base += tb.num_rows;
    d.dim = tb.dim;
    // 16-byte chunks: in one load where rows are 16-byte aligned; in two 8-byte loads where they are
    // 8-byte aligned and a row's last chunk, read whole, still ends inside the row's stride.
    const long long payload = payload_bytes(in.row_format, tb.dim);
    if (aligned(tb.rows, 16) && d.stride % 16 == 0) d.vector = rows_by_16;
    else if (aligned(tb.rows, 8) && d.stride % 8 == 0 && (payload + 15) / 16 * 16 <= d.stride) d.vector = rows_by_8x2;
    else d.vector = rows_by_element;
    // Quantization parameters right after the payload: word loads where every row's are 4-byte aligned.
    d.qwords = aligned(tb.rows, 4) && d.stride % 4 == 0 && payload % 4 == 0;
    std::tie(d.group, d.passes) = group_of(tb.dim, E, K, W);
    p.max_dim = std::max(p.max_dim, tb.dim);
  }
  // Output layout.
  p.bag_base.resize(F);
  p.out_offset.resize(F);
  p.out_stride.resize(F);
  bool any_default = false, all_default = true, same_batch = true;
  long long sum_dims = 0;
  for (int f = 0; f < F; ++f) {
    const feature& ft = in.features[f];
    p.bag_base[f] = p.total_bags;
    p.total_bags += ft.batch_size;
    if (ft.output_offset < 0) any_default = true;
    else all_default = false;
    if (ft.batch_size != in.features[0].batch_size) same_batch = false;
    sum_dims += in.tables[ft.table].dim;
  }
  if (any_default && !all_default)
    throw invalid_argument(op, "features", "mix default (output_offset < 0) and explicit output layouts; give all or none");
  long long off = 0;
  for (int f = 0; f < F; ++f) {
    const feature& ft = in.features[f];
    const int dim = in.tables[ft.table].dim;
    if (any_default) {
      if (same_batch) p.out_offset[f] = off, p.out_stride[f] = sum_dims, off += dim;
      else p.out_offset[f] = off, p.out_stride[f] = dim, off += ft.batch_size * dim;
    } else {
      if (ft.output_stride < dim)
        throw invalid_argument(op, "features[" + std::to_string(f) + "].output_stride",
                               "is " + num(ft.output_stride) + " but its table's dim is " + num(dim));
      p.out_offset[f] = ft.output_offset;
      p.out_stride[f] = ft.output_stride;
    }
    if (ft.batch_size > 0)
      p.output_elements = std::max(p.output_elements, p.out_offset[f] + (ft.batch_size - 1) * p.out_stride[f] + dim);
  }
  // Tile order: features sorted by table (stable), so the tiles of one table are contiguous.
  std::vector<int> order(F);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return in.features[a].table < in.features[b].table; });
  for (int f : order) {
    const feature& ft = in.features[f];
    feature_desc d{};
    d.batch = ft.batch_size;
    d.bag_base = p.bag_base[f];
    d.out_offset = p.out_offset[f];
    d.out_stride = p.out_stride[f];
    d.table = ft.table;
    d.feature = f;
    d.bags_per_tile = threads / p.tables[ft.table].group;
    d.tile_begin = p.num_tiles;
    p.num_tiles += (ft.batch_size + d.bags_per_tile - 1) / d.bags_per_tile;
    p.tile_order.push_back(d);
  }
  return p;
}

inline std::size_t round256(std::size_t b) { return (b + 255) / 256 * 256; }

/// The lookup's rows of an entry's pointer table (after validate_lookup and the plan):
///   tables[t].rows      input (output when a fused optimizer updates it), aligned to the row format's
///                       element, (num_rows - 1) * stride + one packed row of bytes
///   indices             input, aligned to the index type, num_indices of them
///   offsets             input, aligned to the index type, total_bags + 1 of them (null: fixed-size bags)
///   per_sample_weights  input, float-aligned, num_indices floats
/// in.features is a host array of plain descriptors: it has no row.
inline void add_lookup_rows(pointer_table& t, const lookup& in, const plan& p, bool rows_written) {
  const std::size_t eb = static_cast<std::size_t>(element_bytes(in.row_format));
  for (std::size_t i = 0; i < in.tables.size(); ++i) {
    const table& tb = in.tables[i];
    const std::string name = "tables[" + std::to_string(i) + "].rows";
    pointer_arg& r = rows_written ? t.output(name, tb.rows) : t.input(name, tb.rows);
    r.aligned(eb, "its row format's element")
        .spans(tb.num_rows > 0 ? std::uint64_t(tb.num_rows - 1) * std::uint64_t(stride_of(in, tb)) +
                                     std::uint64_t(packed_row_bytes(in.row_format, tb.dim))
                               : 0);
  }
  const std::uint64_t ib = in.indices_type == index_type::int64 ? 8 : 4;
  const std::uint64_t n = static_cast<std::uint64_t>(std::max<long long>(0, in.num_indices));
  t.input("indices", in.indices).aligned(ib).spans(n * ib);
  t.input("offsets", in.offsets).aligned(ib).spans(in.offsets ? std::uint64_t(p.total_bags + 1) * ib : 0);
  t.input("per_sample_weights", in.per_sample_weights).aligned(4, "a float").spans(in.per_sample_weights ? n * 4 : 0);
}

/// Bytes of an output or gradient of `format` in the forward's layout (pooled rows, or gathered rows
/// `row_stride` apart under pooling none).
inline std::uint64_t output_bytes(const lookup& in, const plan& p, strata::dtype format, long long row_stride) {
  const std::uint64_t e = static_cast<std::uint64_t>(element_bytes(format));
  if (in.mode == pooling::none)
    return in.num_indices > 0 ? (std::uint64_t(in.num_indices - 1) * std::uint64_t(row_stride ? row_stride : p.max_dim) +
                                 std::uint64_t(p.max_dim)) * e
                              : 0;
  return std::uint64_t(std::max<long long>(0, p.output_elements)) * e;
}

/// Workspace: the header, the table descriptors, the feature descriptors (then the backward's scratch).
inline std::size_t descriptor_bytes(std::size_t tables, std::size_t features) {
  return sizeof(workspace_header) + round256(tables * sizeof(table_desc)) + round256(features * sizeof(feature_desc));
}

struct device_descriptors {
  workspace_header* header;
  table_desc* tables;
  feature_desc* features;
  unsigned char* rest;  // first byte after the descriptors
};

inline device_descriptors carve(const workspace& ws, std::size_t tables, std::size_t features) {
  auto* base = static_cast<unsigned char*>(ws.data);
  device_descriptors d;
  d.header = reinterpret_cast<workspace_header*>(base);
  d.tables = reinterpret_cast<table_desc*>(base + sizeof(workspace_header));
  d.features = reinterpret_cast<feature_desc*>(base + sizeof(workspace_header) + round256(tables * sizeof(table_desc)));
  d.rest = base + descriptor_bytes(tables, features);
  return d;
}

/// The workspace's row of an entry's pointer table: 256-byte aligned, `need` bytes of the ws.bytes it holds.
inline void add_workspace_row(pointer_table& t, const workspace& ws, std::size_t need) {
  t.workspace("workspace", ws.data, ws.bytes).aligned(256).spans(need).needs("the *_workspace_size function");
}

/// Reads the status record (synchronizes the stream).
inline status read_header(stream& s, const workspace_header* h) {
  workspace_header host{};
  copy_to_host(s, &host, h, 1);
  s.synchronize();
  status st;
  st.bad_positions = host.status.bad_positions;
  st.bad_bags = host.status.bad_bags;
  st.first_bad_position = host.status.first_bad_position == status_none ? -1 : static_cast<long long>(host.status.first_bad_position);
  st.first_bad_bag = host.status.first_bad_bag == status_none ? -1 : static_cast<long long>(host.status.first_bad_bag);
  return st;
}

inline long long read_index(stream& s, const void* p, index_type it, long long i) {
  if (it == index_type::int64) {
    long long v = 0;
    copy_to_host(s, &v, static_cast<const long long*>(p) + i, 1);
    s.synchronize();
    return v;
  }
  int v = 0;
  copy_to_host(s, &v, static_cast<const int*>(p) + i, 1);
  s.synchronize();
  return v;
}

inline int feature_of_bag(const plan& p, long long g) {
  const auto it = std::upper_bound(p.bag_base.begin(), p.bag_base.end(), g);
  int f = static_cast<int>(it - p.bag_base.begin()) - 1;
  // Skip features without bags that share the same base.
  while (f + 1 < static_cast<int>(p.bag_base.size()) && p.bag_base[f + 1] <= g) ++f;
  return f < 0 ? 0 : f;
}

/// Turns a status with bad input into strata::embedding::bounds_error (policy error only).
inline void throw_if_bad(stream& s, const std::string& op, const lookup& in, const plan& p, const status& st) {
  if (st.ok() || in.policy != bounds::error) return;
  const char* hint = " (bounds::clamp or bounds::skip opt in to tolerating bad input)";
  if (st.first_bad_bag >= 0) {
    const long long g = st.first_bad_bag;
    const int f = feature_of_bag(p, g);
    const long long b = read_index(s, in.offsets, in.indices_type, g), e = read_index(s, in.offsets, in.indices_type, g + 1);
    const int t = in.features[f].table;
    throw bounds_error(op, bounds_error::kind_t::offsets, f, t, g - p.bag_base[f], -1, e,
                       "are malformed: feature " + num(f) + " (table " + num(t) + "), bag " + num(g - p.bag_base[f]) +
                           " (global bag " + num(g) + ") has offsets[" + num(g) + "] = " + num(b) + ", offsets[" +
                           num(g + 1) + "] = " + num(e) + " with " + num(in.num_indices) +
                           " indices; offsets must be non-decreasing within [0, num_indices]; " +
                           num(static_cast<long long>(st.bad_bags)) + " malformed bag(s) in all" + hint);
  }
  const long long pos = st.first_bad_position;
  const long long value = read_index(s, in.indices, in.indices_type, pos);
  long long g = 0, first = 0;
  if (!in.offsets) {
    g = in.bag_size > 0 ? pos / in.bag_size : 0;
    first = g * in.bag_size;
  } else {
    // Error path only: fetch the offsets to find the bag (they are well formed, or we would have
    // reported them above).
    const long long n = p.total_bags + 1;
    std::vector<long long> off(static_cast<std::size_t>(n));
    if (in.indices_type == index_type::int64) {
      copy_to_host(s, off.data(), static_cast<const long long*>(in.offsets), off.size());
      s.synchronize();
    } else {
      std::vector<int> o32(off.size());
      copy_to_host(s, o32.data(), static_cast<const int*>(in.offsets), o32.size());
      s.synchronize();
      std::copy(o32.begin(), o32.end(), off.begin());
    }
    g = static_cast<long long>(std::upper_bound(off.begin(), off.end(), pos) - off.begin()) - 1;
    g = std::clamp<long long>(g, 0, std::max<long long>(0, p.total_bags - 1));
    first = off[static_cast<std::size_t>(g)];
  }
  const int f = feature_of_bag(p, g);
  const int t = in.features[f].table;
  throw bounds_error(op, bounds_error::kind_t::index, f, t, g - p.bag_base[f], pos, value,
                     "hold an index out of range: feature " + num(f) + " (table " + num(t) + ", " +
                         num(in.tables[t].num_rows) + " rows), bag " + num(g - p.bag_base[f]) + ", position " + num(pos) +
                         " (entry " + num(pos - first) + " of the bag), value " + num(value) + "; " +
                         num(static_cast<long long>(st.bad_positions)) + " bad index(es) in all" + hint);
}

}  // namespace strata::embedding::detail
