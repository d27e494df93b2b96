// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/embedding/reference.hpp -- a plain host implementation of the embedding operators in
// double precision, over HOST pointers: the oracle of the tests and of the example's --check.
// It follows the documented semantics (docs/embedding.md) statement by statement, with no tiling.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "strata/numeric/numeric.hpp"
#include "strata/ops/embedding/args.hpp"
#include "strata/ops/embedding/detail/plan.hpp"
#include "strata/ops/embedding/optimizer.hpp"

namespace strata::embedding::reference {

/// Value of element `c` of a row in `format` (exact; quantized rows apply scale and bias in double).
inline double element(scalar format, const unsigned char* row, int dim, int c) {
  switch (format) {
    case scalar::fp32: { float v; std::memcpy(&v, row + 4 * c, 4); return v; }
    case scalar::fp16: { std::uint16_t b; std::memcpy(&b, row + 2 * c, 2); return double(f16::from_bits(b)); }
    case scalar::bf16: { std::uint16_t b; std::memcpy(&b, row + 2 * c, 2); return double(bf16::from_bits(b)); }
    case scalar::fp8_e4m3: return double(f8_e4m3::from_bits(row[c]));
    case scalar::int8_rowwise: {
      float s, b;
      std::memcpy(&s, row + dim, 4);
      std::memcpy(&b, row + dim + 4, 4);
      return double(s) * row[c] + double(b);
    }
    case scalar::int4_rowwise: {
      const unsigned char* q = row + (dim + 1) / 2;
      const double s = double(f16::from_bits(std::uint16_t(q[0] | (q[1] << 8))));
      const double b = double(f16::from_bits(std::uint16_t(q[2] | (q[3] << 8))));
      return s * ((row[c / 2] >> ((c & 1) * 4)) & 0xF) + b;
    }
  }
  return 0;
}

/// |scale * q| + |bias| for quantized rows (what the fp32 dequantization's rounding is relative
/// to), |value| otherwise: for error bounds.
inline double element_magnitude(scalar format, const unsigned char* row, int dim, int c) {
  if (format == scalar::int8_rowwise || format == scalar::int4_rowwise) {
    const double b = element(format, row, dim, c);
    const double b0 = [&] {  // the bias alone: the value of q = 0
      if (format == scalar::int8_rowwise) { float x; std::memcpy(&x, row + dim + 4, 4); return double(x); }
      const unsigned char* q = row + (dim + 1) / 2;
      return double(f16::from_bits(std::uint16_t(q[2] | (q[3] << 8))));
    }();
    return std::fabs(b - b0) + std::fabs(b0);
  }
  return std::fabs(element(format, row, dim, c));
}

inline long long index_at(const lookup& in, const void* p, long long i) {
  return in.indices_type == index_type::int64 ? static_cast<const long long*>(p)[i]
                                              : static_cast<const int*>(p)[i];
}

/// Bag range of global bag g under the policy (as the kernels), and whether it was malformed.
inline detail::bag_range bag(const lookup& in, long long g) {
  return detail::bag_of(in.offsets, in.indices_type == index_type::int64, in.bag_size, in.num_indices, g,
                        static_cast<int>(in.policy));
}

/// What one position contributes: 0 nothing, 1 a row, 2 a zero row.
inline int kind_of(const lookup& in, const table& t, long long idx) {
  if (idx < 0 || idx >= t.num_rows) return in.policy == bounds::clamp ? 2 : 0;
  return idx == t.padding_index ? 0 : 1;
}

struct forward_result {
  std::vector<double> out;  // the output extent; NaN where the operator writes nothing
  std::vector<double> mag;  // sum of |terms| behind each output element (for error bounds)
  std::vector<long long> terms;  // rows that contributed to each output element
  status st;
};

/// The forward pass in double. Pointers in `a` are host pointers.
inline forward_result embedding_bag(const forward_args& a) {
  const lookup& in = a.in;
  const detail::plan p = detail::make_plan("reference", in, 4, 1, 32, 256);
  const bool none = in.mode == pooling::none;
  const long long stride = a.output_row_stride ? a.output_row_stride : p.max_dim;
  forward_result r;
  r.out.assign(static_cast<std::size_t>(none ? in.num_indices * stride : p.output_elements),
               std::numeric_limits<double>::quiet_NaN());
  r.mag.assign(r.out.size(), 0.0);
  r.terms.assign(r.out.size(), 0);
  unsigned long long first_pos = status_none, first_bag = status_none;
  for (std::size_t f = 0; f < in.features.size(); ++f) {
    const table& t = in.tables[in.features[f].table];
    const long long rs = detail::stride_of(in, t);
    const auto* rows = static_cast<const unsigned char*>(t.rows);
    for (long long b = 0; b < in.features[f].batch_size; ++b) {
      const long long g = p.bag_base[f] + b;
      const detail::bag_range br = bag(in, g);
      if (!br.ok) ++r.st.bad_bags, first_bag = std::min<unsigned long long>(first_bag, g);
      std::vector<double> acc(t.dim, in.mode == pooling::max ? -INFINITY : 0.0), mag(t.dim, 0.0);
      long long count = 0;
      for (long long i = br.begin; i < br.end; ++i) {
        const long long idx = index_at(in, in.indices, i);
        const int k = kind_of(in, t, idx);
        if (idx < 0 || idx >= t.num_rows) ++r.st.bad_positions, first_pos = std::min<unsigned long long>(first_pos, i);
        const double w = in.per_sample_weights ? in.per_sample_weights[i] : 1.0;
        if (none) {
          for (int c = 0; c < t.dim; ++c) {
            const auto at = static_cast<std::size_t>(i * stride + c);
            r.out[at] = k == 1 ? w * element(in.row_format, rows + idx * rs, t.dim, c) : 0.0;
            r.mag[at] = k == 1 ? std::fabs(w) * element_magnitude(in.row_format, rows + idx * rs, t.dim, c) : 0.0;
            r.terms[at] = 1;
          }
          continue;
        }
        if (k == 0) continue;
        ++count;
        for (int c = 0; c < t.dim; ++c) {
          const double x = k == 1 ? w * element(in.row_format, rows + idx * rs, t.dim, c) : 0.0;
          acc[c] = in.mode == pooling::max ? std::max(acc[c], x) : acc[c] + x;
          mag[c] += k == 1 ? std::fabs(w) * element_magnitude(in.row_format, rows + idx * rs, t.dim, c) : 0.0;
        }
      }
      if (none) continue;
      for (int c = 0; c < t.dim; ++c) {
        double y = count == 0 ? 0.0 : acc[c];
        if (in.mode == pooling::mean && count > 0) y /= static_cast<double>(count);
        const auto at = static_cast<std::size_t>(p.out_offset[f] + b * p.out_stride[f] + c);
        r.out[at] = y;
        r.mag[at] = in.mode == pooling::mean && count > 0 ? mag[c] / static_cast<double>(count) : mag[c];
        r.terms[at] = count;
      }
    }
  }
  r.st.first_bad_position = first_pos == status_none ? -1 : static_cast<long long>(first_pos);
  r.st.first_bad_bag = first_bag == status_none ? -1 : static_cast<long long>(first_bag);
  return r;
}

struct backward_result {
  std::vector<std::vector<double>> grad;        // per table, num_rows * dim
  std::vector<std::vector<double>> mag;         // sum of |terms| behind each element
  std::vector<std::vector<long long>> terms;    // occurrences behind each element (0: untouched row)
  status st;
};

/// Gradients with respect to the rows in double (dense). Pointers in `a` are host pointers.
/// A position covered by several (malformed, overlapping) bags belongs to the one with the largest id.
inline backward_result embedding_bag_backward(const backward_args& a) {
  const lookup& in = a.in;
  const detail::plan p = detail::make_plan("reference", in, 4, 1, 32, 256);
  const long long none_stride = a.grad_row_stride ? a.grad_row_stride : p.max_dim;
  backward_result r;
  for (const table& t : in.tables) {
    r.grad.emplace_back(static_cast<std::size_t>(t.num_rows * t.dim), 0.0);
    r.mag.emplace_back(static_cast<std::size_t>(t.num_rows * t.dim), 0.0);
    r.terms.emplace_back(static_cast<std::size_t>(t.num_rows * t.dim), 0);
  }
  std::vector<long long> owner(static_cast<std::size_t>(in.num_indices), -1);
  std::vector<double> scale(static_cast<std::size_t>(p.total_bags), 1.0);
  unsigned long long first_pos = status_none, first_bag = status_none;
  for (std::size_t f = 0; f < in.features.size(); ++f) {
    const table& t = in.tables[in.features[f].table];
    for (long long b = 0; b < in.features[f].batch_size; ++b) {
      const long long g = p.bag_base[f] + b;
      const detail::bag_range br = bag(in, g);
      if (!br.ok) ++r.st.bad_bags, first_bag = std::min<unsigned long long>(first_bag, g);
      long long count = 0;
      for (long long i = br.begin; i < br.end; ++i) {
        const long long idx = index_at(in, in.indices, i);
        if (idx < 0 || idx >= t.num_rows) ++r.st.bad_positions, first_pos = std::min<unsigned long long>(first_pos, i);
        const int k = kind_of(in, t, idx);
        count += k != 0;
        if (k == 1) owner[static_cast<std::size_t>(i)] = std::max(owner[static_cast<std::size_t>(i)], g);
      }
      if (in.mode == pooling::mean && count > 0) scale[static_cast<std::size_t>(g)] = 1.0 / static_cast<double>(count);
    }
  }
  r.st.first_bad_position = first_pos == status_none ? -1 : static_cast<long long>(first_pos);
  r.st.first_bad_bag = first_bag == status_none ? -1 : static_cast<long long>(first_bag);
  for (long long i = 0; i < in.num_indices; ++i) {
    const long long g = owner[static_cast<std::size_t>(i)];
    if (g < 0) continue;
    const int f = detail::feature_of_bag(p, g);
    const int ti = in.features[f].table;
    const table& t = in.tables[ti];
    const long long idx = index_at(in, in.indices, i);
    const double w = (in.per_sample_weights ? in.per_sample_weights[i] : 1.0) * scale[static_cast<std::size_t>(g)];
    for (int c = 0; c < t.dim; ++c) {
      const long long at = in.mode == pooling::none ? i * none_stride + c
                                                    : p.out_offset[f] + (g - p.bag_base[f]) * p.out_stride[f] + c;
      const double x = w * detail::load_value(a.grad_output, at, static_cast<int>(a.grad_format.type));
      const auto e = static_cast<std::size_t>(idx * t.dim + c);
      r.grad[ti][e] += x;
      r.mag[ti][e] += std::fabs(x);
      r.terms[ti][e] += 1;
    }
  }
  return r;
}

/// Applies the fused optimizer to host copies of the rows (as doubles) and of the state, from the
/// reference gradient: rows with no occurrence are left alone.
inline void apply_optimizer(const backward_args& a, const backward_result& g, std::vector<std::vector<double>>& rows,
                            std::vector<std::vector<double>>& state) {
  for (std::size_t t = 0; t < a.in.tables.size(); ++t) {
    const table& tb = a.in.tables[t];
    for (long long r = 0; r < tb.num_rows; ++r) {
      const auto e0 = static_cast<std::size_t>(r * tb.dim);
      if (g.terms[t][e0] == 0) continue;
      double sq = 0;
      for (int c = 0; c < tb.dim; ++c) sq += g.grad[t][e0 + c] * g.grad[t][e0 + c];
      double h_row = 0;
      if (a.opt == optimizer::rowwise_adagrad) h_row = state[t][static_cast<std::size_t>(r)] += sq / tb.dim;
      for (int c = 0; c < tb.dim; ++c) {
        const double gg = g.grad[t][e0 + c];
        double& w = rows[t][e0 + c];
        if (a.opt == optimizer::sgd) w -= a.learning_rate * gg;
        else if (a.opt == optimizer::adagrad) {
          double& h = state[t][e0 + c];
          h += gg * gg;
          w -= a.learning_rate * gg / (std::sqrt(h) + a.eps);
        } else {
          w -= a.learning_rate * gg / (std::sqrt(h_row) + a.eps);
        }
      }
    }
  }
}

}  // namespace strata::embedding::reference
