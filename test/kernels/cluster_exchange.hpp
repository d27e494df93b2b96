// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/kernels/cluster_exchange.hpp -- each block of a cluster publishes values in its shared memory;
// after a cluster barrier every block reads its right neighbour's values through distributed shared
// memory. A second cluster barrier keeps a block alive until its neighbour has read it.
#pragma once

#include "strata/strata.hpp"

namespace strata_test {

struct exchange_params {
  int* out;  // [blocks][threads]: what each thread read from the neighbour block
};

template <class Target>
struct cluster_exchange_kernel {
  using target = Target;
  static constexpr const char* name = "cluster_exchange_kernel";
  static constexpr int max_threads = 256;

  struct shared_storage {
    int values[max_threads];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const exchange_params& p) const {
    auto block = ctx.block();
    auto cluster = ctx.cluster();
    auto& smem = ctx.template shared<shared_storage>();
    const int t = block.thread_rank();

    smem.values[t] = static_cast<int>(block.rank()) * 1000 + t;
    cluster.sync();
    const int neighbour = (cluster.block_rank() + 1) % cluster.size();
    const shared_storage& remote = cluster.shared_of(smem, neighbour);
    p.out[block.rank() * block.size() + t] = remote.values[(t + 1) % block.size()];
    cluster.sync();
  }
};

}  // namespace strata_test
