// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Decoding on the emulator: 1..16 query tokens against a KV cache, split-KV with its combine step,
// new K/V appended first, dense and paged caches (page size 16 and 32, shuffled pages). Checked against
// the reference (tolerances as in support.hpp), and paged == dense bit for bit.
#include <algorithm>

#include "support.hpp"

using namespace attn_test;
using host = strata::arch::host;

namespace {

template <class E, int D, class Target = host>
struct decode_case {
  int B = 2, H = 4, HK = 2, SQ = 3, S = 100, s_new = 2, page = 16;
  std::vector<int> lens{37, 60};
  // Optional features (decode takes every forward option but dropout): soft-cap, ALiBi slopes and
  // sinks per query head (derived from the head when on), a window to the left.
  float softcap = 0.f;
  bool alibi = false, sinks = false;
  int window_left = -1;

  std::vector<float> slopes() const {
    std::vector<float> x;
    for (int h = 0; alibi && h < H; ++h) x.push_back(0.05f * static_cast<float>(h + 1));
    return x;
  }
  std::vector<float> sink_logits() const {
    std::vector<float> x;
    for (int h = 0; sinks && h < H; ++h) x.push_back(0.5f * static_cast<float>(h % 5) - 1.f);
    return x;
  }

  // Runs decode with `splits`, dense (page 0) or paged; returns O (B, SQ, H, D) and LSE.
  std::pair<std::vector<E>, std::vector<float>> run(int splits, bool paged, const host_tensor<E>& q,
                                                    const host_tensor<E>& kc, const host_tensor<E>& vc,
                                                    const host_tensor<E>& kn, const host_tensor<E>& vn, bool causal) {
    strata::stream s;
    const strata::dtype t = dtype_of<E>();
    const int pages_per_seq = (S + page - 1) / page, num_pages = B * pages_per_seq;
    // Paged pool: sequence b's logical page p lives at physical page perm[b * pages_per_seq + p].
    std::vector<int> perm(num_pages);
    for (int i = 0; i < num_pages; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(11));
    std::vector<E> kpool(static_cast<std::size_t>(num_pages) * page * HK * D), vpool(kpool.size());
    std::vector<E> kdense = kc.data, vdense = vc.data;
    if (paged)
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < S; ++j) {
          const int pg = perm[b * pages_per_seq + j / page];
          for (int h = 0; h < HK; ++h)
            for (int d = 0; d < D; ++d) {
              const std::size_t src = ((static_cast<std::size_t>(b) * S + j) * HK + h) * D + d;
              const std::size_t dst = ((static_cast<std::size_t>(pg) * page + j % page) * HK + h) * D + d;
              kpool[dst] = kc.data[src];
              vpool[dst] = vc.data[src];
            }
        }
    auto dk = upload(s, paged ? kpool : kdense), dv = upload(s, paged ? vpool : vdense);
    auto dq = upload(s, q.data), dkn = upload(s, kn.data), dvn = upload(s, vn.data);
    auto dlens = upload(s, lens), dtable = upload(s, perm);
    auto dslopes = upload(s, alibi ? slopes() : std::vector<float>(1)), dsinks = upload(s, sinks ? sink_logits() : std::vector<float>(1));
    std::vector<E> o(static_cast<std::size_t>(B) * SQ * H * D);
    std::memset(static_cast<void*>(o.data()), 0xFF, o.size() * sizeof(E));
    auto dout = upload(s, o);
    std::vector<float> lse(static_cast<std::size_t>(B) * H * SQ, 0.f);
    auto dlse = upload(s, lse);
    A::tensor tq = A::bshd(dq.data(), t, B, SQ, H, D), to = A::bshd(dout.data(), t, B, SQ, H, D);
    A::tensor tk = paged ? A::bshd(dk.data(), t, num_pages, page, HK, D) : A::bshd(dk.data(), t, B, S, HK, D);
    A::tensor tv = paged ? A::bshd(dv.data(), t, num_pages, page, HK, D) : A::bshd(dv.data(), t, B, S, HK, D);
    A::decode_args dec;
    dec.cache_seqlens = dlens.data();
    if (s_new > 0) {  // else nothing to append (k_new's data null)
      dec.k_new = A::bshd(dkn.data(), t, B, s_new, HK, D);
      dec.v_new = A::bshd(dvn.data(), t, B, s_new, HK, D);
    }
    dec.num_splits = splits;
    if (paged) dec.paged = {dtable.data(), pages_per_seq, page, num_pages};
    A::options opt;
    opt.causal = causal;
    opt.lse = dlse.data();
    opt.softcap = softcap;
    opt.window_left = window_left;
    if (alibi) opt.alibi_slopes = dslopes.data();
    if (sinks) opt.sinks = dsinks.data();
    strata::device_buffer<unsigned char> ws(std::max<std::size_t>(1, strata::attention_decode_workspace_size(tq, D, splits, S)));
    strata::attention_decode<Target>(s, tq, tk, tv, to, dec, opt, {ws.data(), ws.size()});
    strata::copy_to_host(s, o.data(), dout.data(), o.size());
    strata::copy_to_host(s, lse.data(), dlse.data(), lse.size());
    s.synchronize();
    return {o, lse};
  }

  void test(bool causal) {
    std::mt19937_64 g(7);
    auto q = random_tensor<E>(static_cast<std::size_t>(B) * SQ * H * D, g);
    auto kc = random_tensor<E>(static_cast<std::size_t>(B) * S * HK * D, g);
    auto vc = random_tensor<E>(kc.data.size(), g);
    auto kn = random_tensor<E>(static_cast<std::size_t>(B) * s_new * HK * D, g);
    auto vn = random_tensor<E>(kn.data.size(), g);
    const auto one = run(1, false, q, kc, vc, kn, vn, causal);
    const auto split = run(4, false, q, kc, vc, kn, vn, causal);
    const auto paged = run(4, true, q, kc, vc, kn, vn, causal);
    const auto chosen = run(0, false, q, kc, vc, kn, vn, causal);  // splits chosen by the entry, workspace by the size function
    CHECK(std::memcmp(split.first.data(), paged.first.data(), split.first.size() * sizeof(E)) == 0);
    CHECK(split.second == paged.second);
    A::reference::problem rp;
    rp.heads = H, rp.heads_k = HK, rp.d = D, rp.dv = D, rp.causal = causal;
    rp.scale = static_cast<float>(1.0 / std::sqrt(static_cast<float>(D)));
    rp.softcap = softcap;
    rp.window_left = window_left;
    rp.alibi = slopes();
    rp.sinks = sink_logits();
    int bad = 0;
    for (int b = 0; b < B; ++b) {
      A::reference::sequence rs;
      rs.sq = SQ, rs.sk = lens[b] + s_new;
      for (int i = 0; i < SQ; ++i)
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < D; ++d) rs.q.push_back(q.exact[((static_cast<std::size_t>(b) * SQ + i) * H + h) * D + d]);
      for (auto* src : {&kc, &vc}) {
        auto& dst = src == &kc ? rs.k : rs.v;
        const auto& nw = src == &kc ? kn : vn;
        for (int j = 0; j < rs.sk; ++j)
          for (int h = 0; h < HK; ++h)
            for (int d = 0; d < D; ++d)
              dst.push_back(j < lens[b] ? src->exact[((static_cast<std::size_t>(b) * S + j) * HK + h) * D + d]
                                        : nw.exact[((static_cast<std::size_t>(b) * s_new + j - lens[b]) * HK + h) * D + d]);
      }
      const auto ref = A::reference::forward(rp, rs, b);
      for (const auto* res : {&one, &split, &chosen})
        for (int i = 0; i < SQ; ++i)
          for (int h = 0; h < H; ++h) {
            const double rl = ref.lse[static_cast<std::size_t>(h) * SQ + i];
            const float got = res->second[(static_cast<std::size_t>(b) * H + h) * SQ + i];
            if (std::isinf(rl) ? !(std::isinf(got) && got < 0) : !(std::fabs(got - rl) <= 1e-3)) ++bad;  // masked: -inf
            for (int d = 0; d < D; ++d) {
              const double x = static_cast<float>(res->first[((static_cast<std::size_t>(b) * SQ + i) * H + h) * D + d]);
              if (!(std::fabs(x - ref.o[(static_cast<std::size_t>(i) * H + h) * D + d]) <= tolerance<E>())) ++bad;
            }
          }
    }
    CHECK(bad == 0);
  }
};

}  // namespace

TEST_CASE("attention decode: split-KV, append, paged == dense", "[attention]") {
  decode_case<f16, 64>{}.test(true);
  decode_case<float, 32>{.SQ = 1, .page = 32}.test(false);
  decode_case<bf16, 128>{.B = 2, .H = 2, .HK = 1, .SQ = 16, .S = 80, .s_new = 1, .page = 16, .lens = {0, 79}}.test(true);
  // sm80 at head dim 256: Q staged in shared memory and O in 64-column slices, split-KV partials too.
  decode_case<bf16, 256, strata::arch::sm80>{.B = 1, .H = 2, .HK = 1, .SQ = 5, .S = 70, .lens = {41}}.test(true);
  // sm90a at head dim 512: V split over two blocks (v_slices), each writing its columns of the partials.
  decode_case<f16, 512, strata::arch::sm90a>{.B = 1, .H = 2, .HK = 1, .SQ = 2, .S = 90, .lens = {70}}.test(true);
  // One query token with GQA: the group's heads share a block (pack_gqa), on mma.sync with the
  // interior loop's streams, on the FMA atom with a group wider than a row tile, and on MFMA.
  decode_case<bf16, 128, strata::arch::sm80>{.B = 2, .H = 8, .HK = 2, .SQ = 1, .S = 300, .s_new = 1, .lens = {250, 299}}.test(true);
  decode_case<float, 32>{.B = 1, .H = 72, .HK = 1, .SQ = 1, .S = 60, .lens = {50}}.test(false);
  decode_case<f16, 64, strata::arch::gfx942>{.B = 1, .H = 6, .HK = 2, .SQ = 1, .S = 80, .lens = {70}}.test(true);
  // gfx942 (MFMA, wave64): the decode path of the AMD forward.
  decode_case<f16, 64, strata::arch::gfx942>{.B = 2, .H = 2, .HK = 2, .SQ = 2, .S = 50, .lens = {17, 33}}.test(false);
}

// The key split (config.hpp, forward_tile::split_keys): on 16-bit mma.sync a decode block's four warps
// share its 16 rows, each with 16 keys of every 64-key tile, and merge (m, l, O) at the end. Cases
// where the merge matters: warps whose keys are all masked (short caches, windows, lengths 0), sinks
// (counted once per row, not per warp), GQA groups of more than 16 heads (several row tiles), 16 new
// tokens under causality, and the kernel with soft-cap and ALiBi.
TEST_CASE("attention decode: the key split on mma.sync", "[attention]") {
  using sm80 = strata::arch::sm80;
  using sm90a = strata::arch::sm90a;
  STATIC_REQUIRE(A::default_config<sm80, bf16, 128, 128, A::forward_tile::split_keys>().key_split);
  STATIC_REQUIRE(A::default_config<sm80, bf16, 128, 128, A::forward_tile::split_keys>().block_n == 64);
  STATIC_REQUIRE(!A::default_config<host, float, 32, 32, A::forward_tile::split_keys>().key_split);
  // GQA 24 / 1 (two row tiles of 16), lengths that leave warps without keys in the last tile, sinks.
  decode_case<bf16, 128, sm80>{.B = 2, .H = 24, .HK = 1, .SQ = 1, .S = 200, .s_new = 1, .lens = {3, 150}, .sinks = true}.test(false);
  // 16 new tokens, causal, a sequence with no cached keys, soft-cap, ALiBi and a window (the extras kernel).
  decode_case<f16, 64, sm90a>{.B = 2, .H = 2, .HK = 2, .SQ = 16, .S = 120, .s_new = 16, .lens = {0, 101},
                              .softcap = 20.f, .alibi = true, .window_left = 40}
      .test(true);
  // A sequence with no keys at all (length 0, nothing appended): O = 0, LSE = -inf from every warp;
  // with sinks, O = 0 and LSE = the sink.
  decode_case<bf16, 64, sm80>{.B = 2, .H = 4, .HK = 2, .SQ = 1, .S = 70, .s_new = 0, .lens = {0, 66}}.test(false);
  decode_case<bf16, 64, sm80>{.B = 2, .H = 4, .HK = 2, .SQ = 1, .S = 70, .s_new = 0, .lens = {0, 66}, .sinks = true}.test(true);
  // Head dim 96 (the generic copy: 12 vectors per row), the paged cache with 32-key pages.
  decode_case<f16, 96, sm80>{.B = 1, .H = 4, .HK = 1, .SQ = 1, .S = 140, .s_new = 1, .page = 32, .lens = {130}}.test(true);
}

// The key split on MFMA (2026-12-08): the 16x16x16 atom with its operands exchanged holds one row per
// lane and P in registers, so the forward's key split serves it too: 4 waves x 16 of 64 keys at head
// dims up to 64, 2 waves x 16 of 32 keys at 128 (64 keys of K and V^T do not fit 64 KiB of LDS there).
TEST_CASE("attention decode: the key split on MFMA", "[attention]") {
  using gfx942 = strata::arch::gfx942;
  using gfx90a = strata::arch::gfx90a;
  constexpr auto d64 = A::default_config<gfx942, f16, 64, 64, A::forward_tile::split_keys>();
  constexpr auto d128 = A::default_config<gfx942, bf16, 128, 128, A::forward_tile::split_keys>();
  STATIC_REQUIRE((d64.key_split && d64.warps == 4 && d64.block_n == 64));
  STATIC_REQUIRE((d128.key_split && d128.warps == 2 && d128.block_n == 32));
  STATIC_REQUIRE(!A::default_config<gfx942, strata::f8_e4m3, 128, 128, A::forward_tile::split_keys>().key_split);
  // GQA 24 / 1 (two row tiles of 16), lengths that leave waves without keys in the last tile, sinks.
  decode_case<bf16, 128, gfx942>{.B = 2, .H = 24, .HK = 1, .SQ = 1, .S = 200, .s_new = 1, .lens = {3, 150}, .sinks = true}.test(true);
  // 16 new tokens, causal, a sequence with no cached keys, soft-cap, ALiBi and a window (the extras kernel).
  decode_case<f16, 64, gfx90a>{.B = 2, .H = 2, .HK = 2, .SQ = 16, .S = 120, .s_new = 16, .lens = {0, 101},
                               .softcap = 20.f, .alibi = true, .window_left = 40}
      .test(true);
  // No keys at all: O = 0 and LSE = -inf from every wave.
  decode_case<bf16, 64, gfx942>{.B = 2, .H = 4, .HK = 2, .SQ = 1, .S = 70, .s_new = 0, .lens = {0, 66}}.test(false);
}

TEST_CASE("attention validation names the argument", "[attention]") {
  strata::stream s;
  strata::device_buffer<f16> buf(4096);
  auto T = [&](int b, int sl, int h, int d, strata::dtype t = strata::dtype::fp16) { return A::bshd(buf.data(), t, b, sl, h, d); };
  auto msg = [&](auto f) {
    try {
      f();
    } catch (const strata::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(msg([&] { strata::attention<host>(s, T(1, 4, 3, 32), T(1, 4, 2, 32), T(1, 4, 2, 32), T(1, 4, 3, 32)); }),
             Catch::Contains("strata::attention") && Catch::Contains("heads_k"));
  CHECK_THAT(msg([&] { strata::attention<host>(s, T(1, 4, 2, 48), T(1, 4, 2, 48), T(1, 4, 2, 48), T(1, 4, 2, 48)); }),
             Catch::Contains("head dim 48"));
  CHECK_THAT(msg([&] {
               strata::attention<host>(s, T(1, 4, 2, 32), T(1, 4, 2, 32, strata::dtype::bf16), T(1, 4, 2, 32), T(1, 4, 2, 32));
             }),
             Catch::Contains("argument 'k'") && Catch::Contains("dtype bf16"));
  CHECK_THAT(msg([&] {
               strata::attention<host>(s, T(1, 2, 2, 512, strata::dtype::fp32), T(1, 2, 2, 512, strata::dtype::fp32),
                                       T(1, 2, 2, 512, strata::dtype::fp32), T(1, 2, 2, 512, strata::dtype::fp32));
             }),
             Catch::Contains("does not fit"));
  A::decode_args dec;
  CHECK_THAT(msg([&] { strata::attention_decode<host>(s, T(1, 1, 2, 32), T(1, 8, 2, 32), T(1, 8, 2, 32), T(1, 1, 2, 32), dec, {}, {}); }),
             Catch::Contains("decode.cache_seqlens"));
}
