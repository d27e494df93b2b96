// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/simulator/orders.hpp -- the tile orders the simulator and chiplet_sim compare, by name.
#pragma once

#include <string>
#include <vector>

#include "strata/hierarchy/tile_order.hpp"
#include "strata/simulator/locality.hpp"

namespace strata::simulator {

struct named_order {
  std::string name;                                            // what chiplet_sim prints
  std::vector<order::tile> (*tabulate)(const order::problem&);  // id -> tile for every id
};

/// The orders of the comparison table, the chiplet-aware default first. Fixed group sizes (8, chunk
/// 64) are the published settings of other libraries, kept as baselines; `auto` sizes come from the
/// topology (order::auto_group_size).
inline std::vector<named_order> standard_orders() {
  using namespace order;
  return {
      {"default (dispatch_inverse + group_m<auto>)", &simulator::tabulate<chiplet_default>},
      {"row-major (linear)", &simulator::tabulate<linear>},
      {"column-major (raster_m)", &simulator::tabulate<raster<axis::m>>},
      {"group_m<8>", &simulator::tabulate<group_m<8>>},
      {"group_m<auto>", &simulator::tabulate<group_m<0>>},
      {"band<8> (CUTLASS)", &simulator::tabulate<band<8>>},
      {"block2d<auto>", &simulator::tabulate<block2d<>>},
      {"dispatch_inverse + linear", &simulator::tabulate<compose<dispatch_inverse<contiguous>, linear>>},
      {"dispatch_inverse + raster_m", &simulator::tabulate<compose<dispatch_inverse<contiguous>, raster<axis::m>>>},
      {"dispatch_inverse + group_m<8>", &simulator::tabulate<compose<dispatch_inverse<contiguous>, group_m<8>>>},
      {"chunked<64> + group_m<8>", &simulator::tabulate<compose<dispatch_inverse<chunked<64>>, group_m<8>>>},
      {"chunked<auto> + group_m<auto>", &simulator::tabulate<compose<dispatch_inverse<chunked<0>>, group_m<0>>>},
      {"dispatch_inverse + block2d<auto>", &simulator::tabulate<compose<dispatch_inverse<contiguous>, block2d<>>>},
  };
}

}  // namespace strata::simulator
