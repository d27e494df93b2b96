// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/tensor/tensor.hpp -- the tensor layer: layouts with static or dynamic extents, their algebra,
// swizzles, views over global / shared / register memory, and partitioning over the hierarchy.
//
//   integer.hpp    constant<N>, is_static_v, ceil_div
//   tuple.hpp      tuple, shape(...), stride(...), coord(...), flatten, product
//   layout.hpp     layout<Shape, Stride>, row_major, column_major, *_padded, size, cosize
//   algebra.hpp    coalesce, composition, complement, inverse, products, tile
//   swizzle.hpp    swizzle<B, M, S>, swizzled_layout, swizzle_for<T, RowBytes, LineBytes>
//   view.hpp       tensor_view, register_tensor, local_tile, vectorize
//   partition.hpp  partition, thread_coord, make_identity, in_bounds
#pragma once

#include "strata/tensor/algebra.hpp"
#include "strata/tensor/integer.hpp"
#include "strata/tensor/layout.hpp"
#include "strata/tensor/partition.hpp"
#include "strata/tensor/swizzle.hpp"
#include "strata/tensor/tuple.hpp"
#include "strata/tensor/view.hpp"
