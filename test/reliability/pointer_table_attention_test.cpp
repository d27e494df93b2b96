// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The attention forward's, backward's and decode's pointer tables, walked (issue 30, item 1), and the
// log-sum-exp probes of issue 30 refused by name.
#include <catch2/catch.hpp>

#include <vector>

#include "../unit/support.hpp"
#include "pointer_table.hpp"
#include "strata/attention.hpp"

namespace A = strata::attn;
using host = strata::arch::host;

namespace {
struct bufs {
  strata::stream s;
  strata::device_buffer<float> q{4096}, k{4096}, v{4096}, o{4096}, lse{256}, dout{4096}, dq{4096}, dk{4096}, dv{4096}, dsinks{8};
  strata::device_buffer<float> alibi = strata_test::to_device(s, std::vector<float>{0.5f, 0.25f});
  strata::device_buffer<float> sinks = strata_test::to_device(s, std::vector<float>{0.f, 0.f});
  strata::device_buffer<int> used_q = strata_test::to_device(s, std::vector<int>{4, 3});
  strata::device_buffer<int> used_k = strata_test::to_device(s, std::vector<int>{8, 5});
  strata::device_buffer<int> cu_q = strata_test::to_device(s, std::vector<int>{0, 4, 7});
  strata::device_buffer<int> cu_k = strata_test::to_device(s, std::vector<int>{0, 8, 13});
  strata::device_buffer<unsigned char> ws{1 << 20};
  bufs() {
    for (auto* b : {&q, &k, &v, &o, &dout}) {
      std::vector<float> h(b->size(), 0.125f);
      strata::copy_to_device(s, b->data(), h.data(), h.size());
    }
  }
};
}  // namespace

namespace {
void walk_forward() {
  bufs b;
  const A::tensor q = A::bshd(b.q.data(), strata::dtype::fp32, 2, 4, 2, 32), k = A::bshd(b.k.data(), strata::dtype::fp32, 2, 8, 1, 32);
  const A::tensor v = A::bshd(b.v.data(), strata::dtype::fp32, 2, 8, 1, 32), o = A::bshd(b.o.data(), strata::dtype::fp32, 2, 4, 2, 32);
  A::options opt{.alibi_slopes = b.alibi.data(), .sinks = b.sinks.data(), .lse = b.lse.data(), .seqused_q = b.used_q.data(),
                 .seqused_k = b.used_k.data()};
  const auto t = pointer_walk::walk("strata::attention", [&] { A::run<float, 32, 32, host>(b.s, q, k, v, o, opt); },
                                    {{"q", q.data}, {"k", k.data}, {"v", v.data}, {"o", o.data}, {"options.lse", opt.lse},
                                     {"options.alibi_slopes", opt.alibi_slopes}, {"options.sinks", opt.sinks},
                                     {"options.seqused_q", opt.seqused_q}, {"options.seqused_k", opt.seqused_k}});
  CHECK(t.find("options.lse")->bytes == 2 * 2 * 4 * 4);
  // Packed variable lengths: the tensors' extents are not known (null and alignment only); the LSE's is.
  A::options vl{.lse = b.lse.data(), .total_q = 7, .cu_seqlens_q = b.cu_q.data(), .cu_seqlens_k = b.cu_k.data()};
  const auto tv = pointer_walk::walk("strata::attention", [&] { A::run<float, 32, 32, host>(b.s, q, k, v, o, vl); },
                                     {{"options.cu_seqlens_q", vl.cu_seqlens_q}, {"options.cu_seqlens_k", vl.cu_seqlens_k}});
  CHECK(tv.find("options.lse")->bytes == 2 * 7 * 4);
  CHECK((tv.find("q")->has_elements && tv.find("q")->bytes == 0));
  // The runtime-typed entry checks the same table.
  pointer_walk::walk("strata::attention", [&] { strata::attention<host>(b.s, q, k, v, o, opt); }, {{"o", o.data}});
}

void walk_backward() {
  bufs b;
  const A::tensor q = A::bshd(b.q.data(), strata::dtype::fp32, 2, 4, 2, 32), k = A::bshd(b.k.data(), strata::dtype::fp32, 2, 8, 1, 32);
  const A::tensor v = A::bshd(b.v.data(), strata::dtype::fp32, 2, 8, 1, 32), o = A::bshd(b.o.data(), strata::dtype::fp32, 2, 4, 2, 32);
  const A::tensor dout = A::bshd(b.dout.data(), strata::dtype::fp32, 2, 4, 2, 32), dq = A::bshd(b.dq.data(), strata::dtype::fp32, 2, 4, 2, 32);
  const A::tensor dk = A::bshd(b.dk.data(), strata::dtype::fp32, 2, 8, 1, 32), dv = A::bshd(b.dv.data(), strata::dtype::fp32, 2, 8, 1, 32);
  A::options opt{.sinks = b.sinks.data(), .lse = b.lse.data(), .dsinks = b.dsinks.data()};
  A::run<float, 32, 32, host>(b.s, q, k, v, o, opt);  // the log-sum-exp the backward reads
  const std::size_t need = strata::attention_backward_workspace_size<host>(q, k, v, opt);
  const strata::workspace ws{b.ws.data(), need};
  const auto t = pointer_walk::walk(
      "strata::attention_backward", [&] { A::run_backward<float, 32, 32, host>(b.s, q, k, v, o, dout, dq, dk, dv, opt, ws); },
      {{"q", q.data}, {"dout", dout.data}, {"dq", dq.data}, {"dk", dk.data}, {"dv", dv.data}, {"options.lse", opt.lse},
       {"options.dsinks", opt.dsinks}, {"workspace", ws.data}});
  CHECK(t.find("options.lse")->role == strata::pointer_role::input);
  CHECK(t.find("workspace")->bytes == need);
}

void walk_decode() {
  bufs b;
  strata::device_buffer<float> kn(256), vn(256);
  const auto lens = strata_test::to_device(b.s, std::vector<int>{4, 6});
  const auto pages = strata_test::to_device(b.s, std::vector<int>{0, 1, 2, 3});
  const A::tensor q = A::bshd(b.q.data(), strata::dtype::fp32, 2, 1, 2, 32), o = A::bshd(b.o.data(), strata::dtype::fp32, 2, 1, 2, 32);
  const A::tensor kc = A::bshd(b.k.data(), strata::dtype::fp32, 2, 16, 1, 32), vc = A::bshd(b.v.data(), strata::dtype::fp32, 2, 16, 1, 32);
  A::decode_args dec{.cache_seqlens = lens.data(), .num_splits = 2};
  dec.k_new = A::bshd(kn.data(), strata::dtype::fp32, 2, 1, 1, 32);
  dec.v_new = A::bshd(vn.data(), strata::dtype::fp32, 2, 1, 1, 32);
  const A::options opt{.lse = b.lse.data()};
  const strata::workspace ws{b.ws.data(), strata::attention_decode_workspace_size(q, 32, 2)};
  const std::string AD = "strata::attention_decode";
  pointer_walk::walk(AD, [&] { strata::attention_decode<host>(b.s, q, kc, vc, o, dec, opt, ws); },
                     {{"q", q.data}, {"k_cache", kc.data}, {"v_cache", vc.data}, {"o", o.data}, {"decode.cache_seqlens", lens.data()},
                      {"decode.k_new", kn.data()}, {"decode.v_new", vn.data()}, {"options.lse", opt.lse}, {"workspace", ws.data}});
  // A paged cache: 4 pages of 16 rows, two per sequence.
  A::decode_args paged{.cache_seqlens = lens.data(), .paged = {pages.data(), 2, 16, 4}, .num_splits = 1};
  const A::tensor kp = A::bshd(b.k.data(), strata::dtype::fp32, 4, 16, 1, 32), vp = A::bshd(b.v.data(), strata::dtype::fp32, 4, 16, 1, 32);
  pointer_walk::walk(AD, [&] { strata::attention_decode<host>(b.s, q, kp, vp, o, paged, opt, {}); },
                     {{"decode.paged.block_table", pages.data()}});

}
}  // namespace

TEST_CASE("attention: the pointer tables of the forward, backward and decode, walked", "[pointer-table][attention]") {
  walk_forward();
  walk_backward();
  walk_decode();
  pointer_walk::fields_have_rows<A::options>("strata::attn::options", 0,
                                             {"options.alibi_slopes", "options.sinks", "options.lse", "options.cu_seqlens_q",
                                              "options.cu_seqlens_k", "options.seqused_q", "options.seqused_k", "options.dsinks"});
  pointer_walk::fields_have_rows<A::decode_args>("strata::attn::decode_args", 0,
                                                 {"decode.cache_seqlens", "decode.paged.block_table", "decode.k_new", "decode.v_new"});
  pointer_walk::fields_have_rows<A::paged_kv>("strata::attn::paged_kv", 0, {"decode.paged.block_table"});
  pointer_walk::fields_have_rows<A::tensor>("strata::attn::tensor", 0, {"q"});
}

TEST_CASE("attention: the log-sum-exp probes of issue 30 are refused by name", "[pointer-table][attention]") {
  bufs b;
  const A::tensor q = A::bshd(b.q.data(), strata::dtype::fp32, 1, 64, 2, 32), k = A::bshd(b.k.data(), strata::dtype::fp32, 1, 64, 2, 32);
  const A::tensor v = A::bshd(b.v.data(), strata::dtype::fp32, 1, 64, 2, 32), o = A::bshd(b.o.data(), strata::dtype::fp32, 1, 64, 2, 32);
  const auto refused = [&](float* lse) -> std::string {
    try {
      strata::attention<host>(b.s, q, k, v, o, {.lse = lse});
    } catch (const strata::invalid_argument& e) {
      CHECK(e.argument() == "options.lse");
      return e.what();
    }
    FAIL("accepted");
    return {};
  };
  CHECK_THAT(refused(b.o.data() + 40), Catch::Equals("strata::attention: argument 'options.lse' overlaps o (outputs and workspaces "
                                                      "must not share memory)"));
  CHECK_THAT(refused(b.k.data()), Catch::Equals("strata::attention: argument 'options.lse' overlaps k (an output may not share "
                                                "memory with an input other blocks still read)"));
  CHECK_THAT(refused(reinterpret_cast<float*>(reinterpret_cast<char*>(b.lse.data()) + 2)),
             Catch::Equals("strata::attention: argument 'options.lse' is not aligned to a float (4 bytes)"));
  // An lse in host memory, with the emulator's host-pointer check on (issue 30, item 2).
  const bool was = strata::host_pointer_check();
  strata::set_host_pointer_check(true);
  std::vector<float> host_lse(256);
  const std::string in_host = refused(host_lse.data());
  strata::set_host_pointer_check(was);
  CHECK_THAT(in_host, Catch::Contains("strata::attention: argument 'options.lse' points to host memory that no device allocation covers"));
  // o == q exactly is allowed; o one row into q is not.
  CHECK_NOTHROW(strata::attention<host>(b.s, q, k, v, q, {.lse = b.lse.data()}));
  A::tensor shifted = q;
  shifted.data = b.q.data() + 64;
  try {
    strata::attention<host>(b.s, q, k, v, shifted);
    FAIL("accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("argument 'o' partly overlaps q"));
  }
}
