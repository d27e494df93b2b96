// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hopper warpgroup MMA (mma/wgmma.hpp) on the emulator, run as sm90a: for each swizzle mode and each
// operand order, a warpgroup writes A (64 x K) and B (K x N) into shared memory in that canonical
// layout, chains K / 16 wgmmas through advanced descriptors and must get A * B (+ C) against a
// double-precision reference. The tiles are written by this file's own layout code (whole swizzle
// atoms placed one after another), not by the emulator's stride formulas, and the 128-byte K-major
// case is also written with strata::swizzle<3, 3, 3>, the swizzle of the GEMM's stage tiles. Then the
// emulator's checks: accumulators read before the wait, a missing fence, a result never waited for,
// a partial warpgroup, threads with different descriptors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "atom_check.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/tensor/swizzle.hpp"

namespace {

using namespace strata_test;
namespace arch = strata::arch;
namespace mma = strata::mma;
using mma::wgmma_major;
using mma::wgmma_swizzle;
using Catch::Matchers::Contains;

/// What the kernel does wrong on purpose (the negative tests), or nothing.
enum class misuse { none, read_early, no_fence, no_wait, different_descriptors, wrong_b_order };

/// Where element (mn, k) of a rows x cols (cols = K) operand tile goes, as byte offsets from the tile
/// before the swizzle, and the descriptor offsets and per-k16 start step that describe it. The tile
/// is a grid of swizzle atoms (8 rows x W bytes for K-major, 8 k-rows x W bytes for MN-major; core
/// matrices of 8 x 16 bytes without swizzle), placed one after another.
struct tile_layout {
  wgmma_major major;
  wgmma_swizzle sw;
  int rows, cols, bytes;

  int w() const { return mma::swizzle_bytes(sw); }
  int per_row() const { return w() / bytes; }  // elements in one W-byte row
  std::uint32_t offset(int mn, int k) const {
    if (major == wgmma_major::k) {
      if (sw == wgmma_swizzle::none) {  // core matrix (mn / 8, k / t) of 8 rows x 16 bytes, column after column
        const int t = 16 / bytes;
        const int core = (k / t) * (rows / 8) + mn / 8;
        return std::uint32_t(core * 128 + (mn % 8) * 16 + (k % t) * bytes);
      }
      // Column block k / per_row of all rows, then 8-row atoms of 8 * W bytes.
      const int block = k / per_row();
      return std::uint32_t(block * rows * w() + (mn / 8) * 8 * w() + (mn % 8) * w() + (k % per_row()) * bytes);
    }
    if (sw == wgmma_swizzle::none) {  // core matrix (mn / 8, k / 8): 8 k-rows of 8 consecutive mn
      const int core = (k / 8) * (rows / 8) + mn / 8;
      return std::uint32_t(core * 128 + (k % 8) * 16 + (mn % 8) * bytes);
    }
    // Atom (mn / per_row, k / 8) of 8 k-rows x W bytes, the mn atoms of one k group together.
    const int atom = (k / 8) * (rows / per_row()) + mn / per_row();
    return std::uint32_t(atom * 8 * w() + (k % 8) * w() + (mn % per_row()) * bytes);
  }
  std::uint32_t lbo() const {
    if (major == wgmma_major::k) return sw == wgmma_swizzle::none ? std::uint32_t(rows / 8 * 128) : 16u;
    return sw == wgmma_swizzle::none ? std::uint32_t(rows / 8 * 128) : std::uint32_t(8 * w());
  }
  std::uint32_t sbo() const {
    if (major == wgmma_major::k) return sw == wgmma_swizzle::none ? 128u : std::uint32_t(8 * w());
    return sw == wgmma_swizzle::none ? 128u : std::uint32_t(rows / per_row() * 8 * w());
  }
  /// Start of the wgmma step s (atom_k elements of K per step) from the tile's start.
  std::uint32_t step(int s, int atom_k) const {
    const int k = atom_k * s;
    if (major == wgmma_major::k) {
      if (sw == wgmma_swizzle::none) return std::uint32_t(k / (16 / bytes)) * lbo();
      return std::uint32_t((k / per_row()) * rows * w() + (k % per_row()) * bytes);
    }
    return std::uint32_t(k / 8) * (sw == wgmma_swizzle::none ? lbo() : sbo());
  }
  std::size_t size() const { return std::size_t(rows) * cols * bytes; }
};

constexpr std::uint32_t swizzled(std::uint32_t address, wgmma_swizzle sw) {
  const std::uint32_t mask = std::uint32_t(mma::swizzle_bytes(sw) / 16 - 1);
  return address ^ (((address >> 7) & mask) << 4);
}

// Per warpgroup: A (64 x K, up to K = 128) and B (K x N, up to 32 KiB), each 1024-byte aligned.
constexpr std::size_t a_bytes = 16 * 1024, b_bytes = 32 * 1024, group_bytes = a_bytes + b_bytes;

/// Writes a rows x cols operand tile (element (mn, k) = at(mn, k)) into shared memory at `tile` in the
/// canonical layout `l` with its swizzle, or, with `strata_swizzle`, in 128-byte rows of K whose
/// 16-byte units strata::swizzle XORs with the row (the GEMM's stage tiles). Warpgroup thread `tid`
/// writes every 128th element.
template <class Ctx, class At>
void write_tile(Ctx& ctx, unsigned char* tile, const tile_layout& l, bool strata_swizzle, int tid, At at) {
  using T = decltype(at(0, 0));
  unsigned char* smem = ctx.template dynamic_shared<unsigned char>();
  // Shared addresses as the descriptors see them: from the start of the block's shared memory.
  const auto base = std::uint32_t(tile - smem);
  for (int e = tid; e < l.rows * l.cols; e += 128) {
    const int mn = e / l.cols, k = e % l.cols;
    std::uint32_t to;
    if (strata_swizzle) {
      constexpr int per_row = 128 / int(sizeof(T));
      using sw = strata::swizzle<3, sizeof(T) == 2 ? 3 : 4, 3>;
      to = base + std::uint32_t(sw{}((k / per_row) * l.rows * per_row + mn * per_row + k % per_row)) * std::uint32_t(sizeof(T));
    } else {
      to = swizzled(base + l.offset(mn, k), l.sw);
    }
    const T x = at(mn, k);
    std::memcpy(smem + to, &x, sizeof x);
  }
}

template <class T>
struct wgmma_params {
  const T* a;      // (instances, 64, K) row-major
  const T* b;      // (instances, K, N) row-major
  const float* c;  // (instances, 64, N) row-major
  float* d;        // (instances, 64, N) row-major
  int k;
  bool accumulate;        // D = A * B + C, else A * B
  bool strata_swizzle;    // write K-major 128-byte tiles with strata::swizzle<3, 3, 3>
  misuse wrong;
};

template <class Atom, wgmma_swizzle Sw>
struct wgmma_kernel {
  using target = arch::sm90a;
  using T = typename Atom::a_type;
  static constexpr const char* name = "wgmma_kernel";
  static constexpr int M = Atom::M, N = Atom::N;

  template <class Ctx>
  void operator()(Ctx& ctx, const wgmma_params<T>& p) const {
    const auto wg = ctx.warpgroup();
    const int tid = wg.thread_rank();
    const long long instance = ctx.block().rank() * wg.count() + wg.index();
    unsigned char* smem = ctx.template dynamic_shared<unsigned char>() + wg.index() * group_bytes;
    unsigned char* sa = smem;
    unsigned char* sb = smem + a_bytes;
    const tile_layout la{Atom::major_a, Sw, M, p.k, int(sizeof(T))};
    const wgmma_major b_written = p.wrong == misuse::wrong_b_order
                                      ? (Atom::major_b == wgmma_major::k ? wgmma_major::mn : wgmma_major::k)
                                      : Atom::major_b;
    const tile_layout lb{b_written, Sw, N, p.k, int(sizeof(T))};
    const T* a = p.a + instance * M * p.k;
    const T* b = p.b + instance * p.k * N;
    write_tile(ctx, sa, la, p.strata_swizzle, tid, [&](int m, int k) { return a[m * p.k + k]; });
    write_tile(ctx, sb, lb, p.strata_swizzle, tid, [&](int n, int k) { return b[k * N + n]; });
    mma::fence_async_shared(ctx);  // generic stores, read next by the tensor cores (async proxy)
    ctx.block().sync();

    typename Atom::c_fragment acc;
    const float* c = p.c + instance * M * N;
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(tid, v);
      acc[v] = c[x.row * N + x.col];
    }
    if (p.wrong != misuse::no_fence) mma::wgmma_fence(ctx);
    const tile_layout& ka = la;
    for (int s = 0; s < p.k / Atom::K; ++s) {
      auto da = mma::smem_descriptor::of(ctx, sa + ka.step(s, Atom::K), Sw, la.lbo(), la.sbo());
      const auto db = mma::smem_descriptor::of(ctx, sb + lb.step(s, Atom::K), Sw, lb.lbo(), lb.sbo());
      if (p.wrong == misuse::different_descriptors && tid == 77) da = da.advanced(16);
      Atom::mma_async(ctx, da, db, acc, s > 0 || p.accumulate);
    }
    mma::wgmma_commit(ctx);
    float early = 0.f;
    if (p.wrong == misuse::read_early) early = acc[0];
    if (p.wrong != misuse::no_wait) mma::wgmma_wait<0>(ctx, acc);
    float* d = p.d + instance * M * N;
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(tid, v);
      d[x.row * N + x.col] = acc[v] + (v == 0 ? early : 0.f);
    }
  }
};

/// The register-A form: each thread loads its A fragment of each k step from global memory by the
/// atom's a_coord, B goes through shared memory as in wgmma_kernel.
template <class Atom, wgmma_swizzle Sw>
struct wgmma_rs_kernel {
  using target = arch::sm90a;
  using T = typename Atom::a_type;
  static constexpr const char* name = "wgmma_rs_kernel";
  static constexpr int M = Atom::M, N = Atom::N;

  template <class Ctx>
  void operator()(Ctx& ctx, const wgmma_params<T>& p) const {
    const auto wg = ctx.warpgroup();
    const int tid = wg.thread_rank();
    const long long instance = ctx.block().rank() * wg.count() + wg.index();
    unsigned char* sb = ctx.template dynamic_shared<unsigned char>() + wg.index() * group_bytes + a_bytes;
    const wgmma_major b_written = p.wrong == misuse::wrong_b_order
                                      ? (Atom::major_b == wgmma_major::k ? wgmma_major::mn : wgmma_major::k)
                                      : Atom::major_b;
    const tile_layout lb{b_written, Sw, N, p.k, int(sizeof(T))};
    const T* a = p.a + instance * M * p.k;
    const T* b = p.b + instance * p.k * N;
    write_tile(ctx, sb, lb, p.strata_swizzle, tid, [&](int n, int k) { return b[k * N + n]; });
    mma::fence_async_shared(ctx);
    ctx.block().sync();

    typename Atom::c_fragment acc;
    const float* c = p.c + instance * M * N;
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(tid, v);
      acc[v] = c[x.row * N + x.col];
    }
    if (p.wrong != misuse::no_fence) mma::wgmma_fence(ctx, acc);
    for (int s = 0; s < p.k / Atom::K; ++s) {
      typename Atom::a_fragment fa;
      for (int v = 0; v < Atom::a_values; ++v) {
        const auto x = Atom::a_coord(tid, v);
        fa[v] = a[x.row * p.k + s * Atom::K + x.col];
      }
      auto db = mma::smem_descriptor::of(ctx, sb + lb.step(s, Atom::K), Sw, lb.lbo(), lb.sbo());
      if (p.wrong == misuse::different_descriptors && tid == 77) db = db.advanced(16);
      Atom::mma_async(ctx, fa, db, acc, s > 0 || p.accumulate);
    }
    mma::wgmma_commit(ctx);
    if (p.wrong != misuse::no_wait) mma::wgmma_wait<0>(ctx, acc);
    float* d = p.d + instance * M * N;
    for (int v = 0; v < Atom::c_values; ++v) {
      const auto x = Atom::c_coord(tid, v);
      d[x.row * N + x.col] = acc[v];
    }
  }
};

/// Attention's two products on one warpgroup: S = Q K^T (both from shared memory, K-major, 128-byte
/// swizzle), P = S rounded to T in registers, used in place as the A fragments of O = P V (V's rows
/// along N, the N-major B of the register-A form). Checks accumulator_is_a_fragment end to end.
template <class T>
struct chain_params {
  const T *q, *k, *v;  // Q (64 x depth), K (keys x depth), V (keys x D), row-major
  float* o;            // O (64 x D), row-major
};

template <class T, int Keys, int D>
struct wgmma_chain_kernel {
  using target = arch::sm90a;
  static constexpr const char* name = "wgmma_chain_kernel";
  using qk = mma::sm90_64xNx16<T, Keys>;
  using pv = mma::sm90_64xNx16_rs<T, D, wgmma_major::mn>;
  static_assert(pv::accumulator_is_a_fragment(), "S's accumulators are P's A fragments");
  static constexpr int depth = 64;  // Q K^T's K: the head dimension of Q and K

  template <class Ctx>
  void operator()(Ctx& ctx, const chain_params<T>& params) const {
    const T *q = params.q, *k = params.k, *v = params.v;
    float* o = params.o;
    const int tid = ctx.warpgroup().thread_rank();
    unsigned char* sq = ctx.template dynamic_shared<unsigned char>();
    unsigned char* sk = sq + a_bytes;
    unsigned char* sv = sk + b_bytes / 2;
    const tile_layout lq{wgmma_major::k, wgmma_swizzle::b128, 64, depth, int(sizeof(T))};
    const tile_layout lk{wgmma_major::k, wgmma_swizzle::b128, Keys, depth, int(sizeof(T))};
    const tile_layout lv{wgmma_major::mn, wgmma_swizzle::b128, D, Keys, int(sizeof(T))};
    write_tile(ctx, sq, lq, false, tid, [&](int m, int c) { return q[m * depth + c]; });
    write_tile(ctx, sk, lk, false, tid, [&](int j, int c) { return k[j * depth + c]; });
    write_tile(ctx, sv, lv, false, tid, [&](int n, int j) { return v[j * D + n]; });
    mma::fence_async_shared(ctx);
    ctx.block().sync();

    typename qk::c_fragment s;
    mma::wgmma_fence(ctx, s);
    for (int step = 0; step < depth / 16; ++step)
      qk::mma_async(ctx, mma::smem_descriptor::of(ctx, sq + lq.step(step, 16), wgmma_swizzle::b128, lq.lbo(), lq.sbo()),
                    mma::smem_descriptor::of(ctx, sk + lk.step(step, 16), wgmma_swizzle::b128, lk.lbo(), lk.sbo()), s,
                    step > 0);
    mma::wgmma_commit(ctx);
    mma::wgmma_wait<0>(ctx, s);

    typename pv::c_fragment acc;
    mma::wgmma_fence(ctx, acc);
    for (int step = 0; step < Keys / 16; ++step) {
      typename pv::a_fragment p;
      for (int i = 0; i < pv::a_values; ++i) p[i] = T(s[8 * step + i]);
      pv::mma_async(ctx, p, mma::smem_descriptor::of(ctx, sv + lv.step(step, 16), wgmma_swizzle::b128, lv.lbo(), lv.sbo()),
                    acc, step > 0);
    }
    mma::wgmma_commit(ctx);
    mma::wgmma_wait<0>(ctx, acc);
    for (int i = 0; i < pv::c_values; ++i) {
      const auto x = pv::c_coord(tid, i);
      o[x.row * D + x.col] = acc[i];
    }
  }
};

/// Whether the chain kernel's O equals (Q K^T rounded to T) V: P is compared through its rounding,
/// so each element may differ by two units in T's last place of P (|P| V summed).
template <class T, int Keys, int D>
bool run_chain(std::uint64_t seed) {
  constexpr int depth = wgmma_chain_kernel<T, Keys, D>::depth;
  const auto q = random_elements<T>(64 * depth, seed);
  const auto k = random_elements<T>(std::size_t(Keys) * depth, seed + 1);
  const auto v = random_elements<T>(std::size_t(Keys) * D, seed + 2);
  strata::stream s;
  auto dq = to_device(s, q);
  auto dk = to_device(s, k);
  auto dv = to_device(s, v);
  auto dout = poisoned<float>(s, 64 * D, NAN);
  strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = group_bytes}, wgmma_chain_kernel<T, Keys, D>{},
                 chain_params<T>{dq.data(), dk.data(), dv.data(), dout.data()});
  const auto out = to_host(s, dout);
  const double ulp = std::is_same_v<T, strata::bf16> ? 0x1p-8 : 0x1p-11;
  bool all = true;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < D; ++n) {
      double ref = 0, mag = 0;
      for (int j = 0; j < Keys; ++j) {
        double sj = 0;
        for (int c = 0; c < depth; ++c) sj += as_double(q[m * depth + c]) * as_double(k[j * depth + c]);
        const double p = as_double(T(float(sj)));
        ref += p * as_double(v[j * D + n]);
        mag += std::abs(p * as_double(v[j * D + n]));
      }
      const double got = out[m * D + n];
      const bool ok = std::abs(got - ref) <= 2 * ulp * mag + (Keys + 2) * 0x1p-23 * mag + 1e-30;
      if (!ok && all) {
        INFO("row " << m << " col " << n << ": got " << got << ", expected " << ref);
        CHECK(ok);
      }
      all = all && ok;
    }
  return all;
}

struct run_result {
  bool matches = true;
  bool any_nan = false;
};

/// Runs `instances` products of 64 x k by k x N on `groups` warpgroups per block; checks each element
/// against the double reference with the fp32-accumulation bound.
template <class Atom, wgmma_swizzle Sw, template <class, wgmma_swizzle> class Kernel = wgmma_kernel>
run_result run_wgmma(int k, bool accumulate, int groups, int blocks, std::uint64_t seed, misuse wrong = misuse::none,
                     bool strata_swizzle = false, bool require = true) {
  using T = typename Atom::a_type;
  constexpr int M = Atom::M, N = Atom::N;
  const int instances = groups * blocks;
  const auto a = random_elements<T>(std::size_t(instances) * M * k, seed);
  const auto b = random_elements<T>(std::size_t(instances) * k * N, seed + 1);
  const auto c = random_elements<float>(std::size_t(instances) * M * N, seed + 2);
  strata::stream s;
  auto da = to_device(s, a);
  auto db = to_device(s, b);
  auto dc = to_device(s, c);
  auto dd = poisoned<float>(s, c.size(), NAN);
  strata::launch(s, {.grid = blocks, .block = 128 * groups, .dynamic_shared_bytes = group_bytes * groups},
                 Kernel<Atom, Sw>{},
                 wgmma_params<T>{da.data(), db.data(), dc.data(), dd.data(), k, accumulate, strata_swizzle, wrong});
  const auto d = to_host(s, dd);
  run_result r;
  for (int i = 0; i < instances; ++i)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const std::size_t o = (std::size_t(i) * M + m) * N + n;
        double ref = accumulate ? double(c[o]) : 0.0, mag = std::abs(ref);
        for (int kk = 0; kk < k; ++kk) {
          const double x = as_double(a[(std::size_t(i) * M + m) * k + kk]) * as_double(b[(std::size_t(i) * k + kk) * N + n]);
          ref += x;
          mag += std::abs(x);
        }
        const double got = d[o];
        if (std::isnan(got)) r.any_nan = true;
        const bool ok = std::abs(got - ref) <= (k + 2) * 0x1p-23 * mag + 1e-30;
        if (!ok && r.matches && require) {
          INFO("instance " << i << " row " << m << " col " << n << ": got " << got << ", expected " << ref);
          CHECK(ok);
        }
        r.matches = r.matches && ok;
      }
  return r;
}

template <class Atom, wgmma_swizzle Sw, template <class, wgmma_swizzle> class Kernel = wgmma_kernel>
std::string error_of(int block, misuse wrong) {
  using T = typename Atom::a_type;
  strata::stream s;
  std::vector<T> a(64 * 16, T(1.f)), b(16 * Atom::N, T(1.f));
  std::vector<float> c(64 * Atom::N, 0.f);
  auto da = to_device(s, a);
  auto db = to_device(s, b);
  auto dc = to_device(s, c);
  strata::device_buffer<float> dd(c.size());
  try {
    strata::launch(s, {.grid = 1, .block = block, .dynamic_shared_bytes = group_bytes},
                   Kernel<Atom, Sw>{}, wgmma_params<T>{da.data(), db.data(), dc.data(), dd.data(), 16, false, false, wrong});
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    return e.what();
  }
  return "no error";
}

using bf16 = strata::bf16;
using f16 = strata::f16;
template <int N, wgmma_major A = wgmma_major::k, wgmma_major B = wgmma_major::k>
using bf16_atom = mma::sm90_64xNx16<bf16, N, A, B>;

}  // namespace

TEST_CASE("wgmma m64nNk16 K-major operands in every swizzle mode equal the product", "[mma][wgmma]") {
  REQUIRE(run_wgmma<bf16_atom<128>, wgmma_swizzle::b128>(64, true, 1, 1, 101).matches);
  REQUIRE(run_wgmma<bf16_atom<128>, wgmma_swizzle::b64>(64, false, 1, 1, 102).matches);
  REQUIRE(run_wgmma<bf16_atom<128>, wgmma_swizzle::b32>(48, true, 1, 1, 103).matches);
  REQUIRE(run_wgmma<bf16_atom<128>, wgmma_swizzle::none>(32, true, 1, 1, 104).matches);
}

TEST_CASE("wgmma m64nNk16 M- and N-major operands (imm-trans) in every swizzle mode", "[mma][wgmma]") {
  constexpr auto mn = wgmma_major::mn, k = wgmma_major::k;
  REQUIRE(run_wgmma<bf16_atom<128, mn, mn>, wgmma_swizzle::b128>(64, true, 1, 1, 111).matches);
  REQUIRE(run_wgmma<bf16_atom<128, k, mn>, wgmma_swizzle::b64>(32, true, 1, 1, 112).matches);
  REQUIRE(run_wgmma<bf16_atom<64, mn, k>, wgmma_swizzle::b32>(32, false, 1, 1, 113).matches);
  REQUIRE(run_wgmma<bf16_atom<64, mn, mn>, wgmma_swizzle::none>(48, true, 1, 1, 114).matches);
}

TEST_CASE("wgmma m64nNk16 f16 and bf16 at N 16 to 256, several warpgroups and blocks", "[mma][wgmma]") {
  REQUIRE(run_wgmma<mma::sm90_64xNx16<f16, 256>, wgmma_swizzle::b128>(64, true, 1, 1, 121).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16<f16, 16>, wgmma_swizzle::b32>(16, true, 2, 2, 122).matches);
  REQUIRE(run_wgmma<bf16_atom<64>, wgmma_swizzle::b128>(128, true, 2, 1, 123).matches);
  REQUIRE(run_wgmma<bf16_atom<192>, wgmma_swizzle::b64>(32, false, 1, 2, 124).matches);
}

TEST_CASE("wgmma m64nNk32 with e4m3 and e5m2 operands, K-major, every swizzle mode", "[mma][wgmma]") {
  using f8_e4m3 = strata::f8_e4m3;
  using f8_e5m2 = strata::f8_e5m2;
  REQUIRE(run_wgmma<mma::sm90_64xNx32<f8_e4m3, 128>, wgmma_swizzle::b128>(128, true, 1, 1, 151).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx32<f8_e5m2, 256>, wgmma_swizzle::b64>(64, false, 1, 1, 152).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx32<f8_e4m3, 64>, wgmma_swizzle::b32>(96, true, 2, 1, 153).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx32<f8_e5m2, 16>, wgmma_swizzle::none>(64, true, 1, 2, 154).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx32<f8_e4m3, 128>, wgmma_swizzle::b128>(256, false, 1, 1, 155, misuse::none, true).matches);
}

TEST_CASE("wgmma reads a 128-byte swizzled K-major tile laid out by strata::swizzle<3, 3, 3>", "[mma][wgmma]") {
  // The GEMM's stage tiles (rows of 64 16-bit elements, 16-byte units XORed with the row) are the
  // 128-byte mode with 8-row atoms 1024 bytes apart, the tile starting on a 1024-byte boundary.
  REQUIRE(run_wgmma<bf16_atom<128>, wgmma_swizzle::b128>(64, true, 1, 1, 131, misuse::none, true).matches);
  REQUIRE(run_wgmma<bf16_atom<64>, wgmma_swizzle::b128>(128, false, 2, 1, 132, misuse::none, true).matches);
}

TEST_CASE("wgmma misuse is reported or poisons the result", "[mma][wgmma][negative]") {
  using atom = bf16_atom<64>;
  SECTION("B written in the other order does not give the product (test of the test)") {
    CHECK_FALSE(run_wgmma<atom, wgmma_swizzle::b128>(64, true, 1, 1, 141, misuse::wrong_b_order, false, false).matches);
    CHECK_FALSE(run_wgmma<atom, wgmma_swizzle::none>(32, true, 1, 1, 142, misuse::wrong_b_order, false, false).matches);
  }
  SECTION("accumulators read before the wait hold NaN") {
    const auto r = run_wgmma<atom, wgmma_swizzle::b128>(64, true, 1, 1, 143, misuse::read_early, false, false);
    CHECK(r.any_nan);
    CHECK_FALSE(r.matches);
  }
  SECTION("a wgmma without a fence") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128>(128, misuse::no_fence)), Contains("without a wgmma_fence"));
  }
  SECTION("a result never waited for") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128>(128, misuse::no_wait)), Contains("never waited for"));
  }
  SECTION("a warpgroup the block does not hold whole") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128>(96, misuse::none)),
               Contains("needs the whole warpgroup 0") && Contains("block has 96 threads"));
  }
  SECTION("threads of a warpgroup with different descriptors") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128>(128, misuse::different_descriptors)),
               Contains("different descriptors"));
  }
}

TEST_CASE("wgmma with A from registers (m64nNk16) equals the product for every B order and swizzle", "[mma][wgmma]") {
  constexpr auto mn = wgmma_major::mn;
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<bf16, 128>, wgmma_swizzle::b128, wgmma_rs_kernel>(64, true, 1, 1, 201).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<f16, 64, mn>, wgmma_swizzle::b128, wgmma_rs_kernel>(64, false, 2, 1, 202).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<bf16, 256, mn>, wgmma_swizzle::b64, wgmma_rs_kernel>(32, true, 1, 2, 203).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<f16, 16>, wgmma_swizzle::b32, wgmma_rs_kernel>(48, true, 1, 1, 204).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<bf16, 192, mn>, wgmma_swizzle::none, wgmma_rs_kernel>(32, true, 1, 1, 205).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx16_rs<bf16, 64>, wgmma_swizzle::b128, wgmma_rs_kernel>(128, true, 1, 1, 206, misuse::none, true).matches);
}

TEST_CASE("wgmma with A from registers, e4m3 and e5m2 (m64nNk32)", "[mma][wgmma]") {
  REQUIRE(run_wgmma<mma::sm90_64xNx32_rs<strata::f8_e4m3, 128>, wgmma_swizzle::b128, wgmma_rs_kernel>(128, true, 1, 1, 211).matches);
  REQUIRE(run_wgmma<mma::sm90_64xNx32_rs<strata::f8_e5m2, 32>, wgmma_swizzle::b64, wgmma_rs_kernel>(64, false, 1, 1, 212).matches);
}

TEST_CASE("wgmma: S = Q K^T's accumulators, rounded in place, are P's A fragments for O = P V", "[mma][wgmma]") {
  REQUIRE(run_chain<bf16, 64, 128>(221));
  REQUIRE(run_chain<f16, 128, 64>(222));
  REQUIRE(run_chain<bf16, 16, 256>(223));
}

TEST_CASE("wgmma with A from registers: misuse is reported", "[mma][wgmma][negative]") {
  using atom = mma::sm90_64xNx16_rs<bf16, 64>;
  SECTION("B written in the other order does not give the product (test of the test)") {
    CHECK_FALSE(run_wgmma<atom, wgmma_swizzle::b128, wgmma_rs_kernel>(64, true, 1, 1, 231, misuse::wrong_b_order, false, false).matches);
  }
  SECTION("a wgmma without a fence") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128, wgmma_rs_kernel>(128, misuse::no_fence)), Contains("without a wgmma_fence"));
  }
  SECTION("a result never waited for") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128, wgmma_rs_kernel>(128, misuse::no_wait)), Contains("never waited for"));
  }
  SECTION("threads of a warpgroup with different B descriptors") {
    CHECK_THAT((error_of<atom, wgmma_swizzle::b128, wgmma_rs_kernel>(128, misuse::different_descriptors)),
               Contains("different descriptors"));
  }
}
