// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The embedding forward's and backward's pointer tables, walked (issue 30, item 1).
#include <catch2/catch.hpp>

#include <vector>

#include "../unit/support.hpp"
#include "pointer_table.hpp"
#include "strata/embedding.hpp"

namespace E = strata::embedding;

TEST_CASE("embedding_bag: the pointer tables of the forward and the backward, walked", "[pointer-table][embedding]") {
  strata::stream s;
  // Two fp32 tables (10 x 8, 6 x 4), two features of 3 bags each, int64 CSR indices, weights.
  strata::device_buffer<float> rows0(80), rows1(24), out(64), weights(16), grad(64), dense0(80), dense1(24), state0(80), state1(24);
  strata::device_buffer<float> sgrads(256);
  strata::device_buffer<int> stables(16);
  strata::device_buffer<long long> srows(16), scount(1);
  const auto idx = strata_test::to_device(s, std::vector<long long>{1, 2, 3, 4, 5, 0, 1, 2});
  const auto off = strata_test::to_device(s, std::vector<long long>{0, 2, 2, 5, 6, 7, 8});
  strata::device_buffer<unsigned char> ws(1 << 16);
  std::vector<E::table> tables{{.rows = rows0.data(), .num_rows = 10, .dim = 8}, {.rows = rows1.data(), .num_rows = 6, .dim = 4}};
  const std::vector<E::feature> features{{.table = 0, .batch_size = 3}, {.table = 1, .batch_size = 3}};
  E::forward_args f;
  f.in.tables = tables;
  f.in.features = features;
  f.in.indices = idx.data();
  f.in.num_indices = 8;
  f.in.offsets = off.data();
  f.in.per_sample_weights = weights.data();
  f.output = out.data();
  const strata::workspace w{ws.data(), ws.size()};
  const auto t = pointer_walk::walk("strata::embedding_bag", [&] { strata::embedding_bag<E::scalar::fp32>(s, f, w); },
                                    {{"tables[0].rows", rows0.data()}, {"tables[1].rows", rows1.data()}, {"indices", idx.data()},
                                     {"offsets", off.data()}, {"per_sample_weights", weights.data()}, {"output", out.data()},
                                     {"workspace", ws.data()}});
  CHECK(t.find("output")->bytes == 3 * 12 * 4);  // [B = 3, 8 + 4] floats

  E::backward_args b;
  b.in = f.in;
  b.in.per_sample_weights = nullptr;
  b.grad_output = grad.data();
  const std::vector<float*> dense{dense0.data(), dense1.data()};
  b.dense_grads = dense;
  pointer_walk::walk("strata::embedding_bag_backward", [&] { strata::embedding_bag_backward<E::scalar::fp32>(s, b, w); },
                     {{"grad_output", grad.data()}, {"dense_grads[0]", dense0.data()}, {"dense_grads[1]", dense1.data()}});
  b.kind = E::gradient::sparse;
  b.sparse_tables = stables.data();
  b.sparse_rows = srows.data();
  b.sparse_grads = sgrads.data();
  b.sparse_count = scount.data();
  pointer_walk::walk("strata::embedding_bag_backward", [&] { strata::embedding_bag_backward<E::scalar::fp32>(s, b, w); },
                     {{"sparse_tables", stables.data()}, {"sparse_rows", srows.data()}, {"sparse_grads", sgrads.data()},
                      {"sparse_count", scount.data()}});
  b.kind = E::gradient::fused;
  b.opt = E::optimizer::adagrad;
  const std::vector<float*> state{state0.data(), state1.data()};
  b.optimizer_state = state;
  const auto tf = pointer_walk::walk("strata::embedding_bag_backward",
                                     [&] { strata::embedding_bag_backward<E::scalar::fp32>(s, b, w); },
                                     {{"optimizer_state[0]", state0.data()}, {"optimizer_state[1]", state1.data()},
                                      {"tables[0].rows", rows0.data()}});
  CHECK(tf.find("tables[0].rows")->role == strata::pointer_role::output);  // updated in place

  // Every pointer field of the argument structs has rows (in.features: a host array without pointers).
  pointer_walk::fields_have_rows<E::lookup>("strata::embedding::lookup", 1,
                                            {"tables[0].rows", "indices", "offsets", "per_sample_weights"});
  pointer_walk::fields_have_rows<E::forward_args>("strata::embedding::forward_args", 1, {"output"});  // + in
  pointer_walk::fields_have_rows<E::backward_args>(
      "strata::embedding::backward_args", 1,  // + in
      {"grad_output", "dense_grads[0]", "sparse_tables", "sparse_rows", "sparse_grads", "sparse_count", "optimizer_state[0]"});
  pointer_walk::fields_have_rows<E::table>("strata::embedding::table", 0, {"tables[1].rows"});
}
