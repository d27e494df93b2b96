// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/warp_matmul.cpp -- the kernel that docs/tutorial-warp-matmul.md builds step by step:
// D = relu(A * B + bias), A (m x k) and B (k x n) in f16, accumulation and D in f32, any sizes.
// The same source runs on the host emulator, on NVIDIA (mma.sync) and on AMD (MFMA); only the MMA
// atom changes, and the kernel picks it from its target. The regions between `// [name]` and
// `// [/name]` markers are quoted verbatim by the tutorial: edit them here and re-paste them there.
//
//   strata_example_warp_matmul [--m M] [--n N] [--k K] [--check]
//                              [--emulate host|sm80|gfx90a|gfx942]      (host backend only)
//
// --check compares D with a double-precision reference and prints PASS or FAIL as the last line.
// test/compile/tutorial_kernels.cu compiles this file's kernel for every GPU target (no main()).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <strata/strata.hpp>

#include "command_line.hpp"

namespace tutorial {

using strata::f16;
namespace mma = strata::mma;
namespace epilogue = strata::epilogue;

// [atom]
// Step 3: the MMA atom, picked from the kernel's target. Every atom declares which lane holds which
// element of A, B and C (a_coord / b_coord / c_coord), so the code below never does lane arithmetic.
template <class Target>
using atom_for = std::conditional_t<
    mma::sm80_16x8x16_f32f16::available_on<Target>, mma::sm80_16x8x16_f32f16,   // sm80+: mma.sync
    std::conditional_t<mma::cdna_32x32x8_f32f16::available_on<Target>,
                       mma::cdna_32x32x8_f32f16,                                  // CDNA: MFMA
                       mma::fma_atom<f16, float, Target::warp_size>>>;            // anything: scalar FMA
// [/atom]

// [epilogue-type]
// Step 5: the epilogue, one type: add a bias per column, ReLU, store as float.
using relu_bias = epilogue::chain<epilogue::bias_col<float>, epilogue::relu, epilogue::convert_to<float>>;
// [/epilogue-type]

// [params]
struct params {
  const f16* a;  // (m, k) row-major
  const f16* b;  // (k, n) row-major
  float* d;      // (m, n) row-major
  int m, n, k;
  bool rows16;   // every row of A and B starts 16-byte aligned: wide copies are allowed
  relu_bias::params ep;
};
// [/params]

template <class Target>
struct warp_matmul_kernel {
  // [config]
  // Step 1: the tiles. A block of warps_m x warps_n warps owns a block_m x block_n tile of D and
  // walks K in steps of block_k; each warp owns a warp_m x warp_n sub-tile of the block's tile.
  using target = Target;
  using atom = atom_for<Target>;
  static constexpr int warp_m = atom::M > 32 ? atom::M : 32;  // the FMA atom on 64 lanes has M = 64
  static constexpr int warp_n = 32;
  static constexpr int warps_m = 2, warps_n = 2;
  static constexpr int block_m = warps_m * warp_m, block_n = warps_n * warp_n, block_k = 32;
  static constexpr int threads = warps_m * warps_n * Target::warp_size;
  static constexpr int max_threads_per_block = threads;
  static constexpr const char* name = "warp_matmul_kernel";

  // Preconditions, in words (STYLE.md habit 5).
  static_assert(warp_m % atom::M == 0 && warp_n % atom::N == 0,
                "warp_matmul: the warp tile must be a whole number of atoms in M and N");
  static_assert(block_k % atom::K == 0, "warp_matmul: block_k must be a multiple of the atom's K");

  // The block's shared memory: one tile of A and one of B. Rows are padded by 8 elements (16 bytes)
  // so that consecutive rows start in different banks; the padding keeps rows 16-byte aligned.
  static constexpr int lda_s = block_k + 8, ldb_s = block_n + 8;
  struct shared_storage {
    alignas(16) f16 a[block_m * lda_s];  // (BLOCK_M, BLOCK_K) row-major, ld lda_s
    alignas(16) f16 b[block_k * ldb_s];  // (BLOCK_K, BLOCK_N) row-major, ld ldb_s
  };
  // [/config]

  // [copy]
  // Step 2: copy atoms. vector_copy is one thread's copy of a row segment with the widest vector the
  // promised alignment allows, chosen at compile time: 16 bytes (8 halves) when every row starts
  // 16-byte aligned, single elements otherwise. The block deals a tile's vectors over its threads,
  // consecutive threads on consecutive vectors of a row (coalesced). Elements outside the matrix (the
  // partial tiles at the right and bottom edges) are not read and land as zeros: they add nothing.
  template <std::size_t Align, int Rows, int Cols, class Ctx>
  STRATA_HOST_DEVICE static void copy_tile(Ctx& ctx, f16* dst, int dst_ld, const f16* src, long long src_ld,
                                           int valid_rows, int valid_cols) {
    using run = strata::copy::vector_copy<f16, 8, Align>;  // 8 halves, moved run::vector_bytes at a time
    constexpr int per_row = Cols / run::elements, runs = Rows * per_row;
    static_assert(Cols % run::elements == 0 && runs % threads == 0, "warp_matmul: the tile must split evenly into runs");
    const int t = ctx.block().thread_rank();
    STRATA_UNROLL
    for (int i = 0; i < runs / threads; ++i) {
      const int r = (t + i * threads) / per_row, c = (t + i * threads) % per_row * run::elements;
      run::copy(dst + r * dst_ld + c, src + r * src_ld + c, r < valid_rows ? valid_cols - c : 0);
    }
  }

  template <std::size_t Align, class Ctx>
  STRATA_HOST_DEVICE static void load_tiles(Ctx& ctx, shared_storage& s, const params& p, int m0, int n0, int k0) {
    copy_tile<Align, block_m, block_k>(ctx, s.a, lda_s, p.a + static_cast<long long>(m0) * p.k + k0, p.k, p.m - m0,
                                       p.k - k0);
    copy_tile<Align, block_k, block_n>(ctx, s.b, ldb_s, p.b + static_cast<long long>(k0) * p.n + n0, p.n, p.k - k0,
                                       p.n - n0);
  }
  // [/copy]

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    // [mainloop]
    // Step 4: the warp tile. warp_tile<atom, warp_m, warp_n> holds the warp's accumulators, loads
    // fragments from shared memory with the atom's maps and runs the atom over the sub-tile.
    using tile = mma::warp_tile<atom, warp_m, warp_n>;
    auto& smem = ctx.template shared<shared_storage>();
    auto block = ctx.block();
    const int m0 = block.index().y * block_m, n0 = block.index().x * block_n;  // block tile in D
    const int w = ctx.warp().index();
    const int wm = (w / warps_n) * warp_m, wn = (w % warps_n) * warp_n;        // warp tile in the block tile
    const mma::matrix_ref<const f16> sa{smem.a, block_m, block_k, lda_s};
    const mma::matrix_ref<const f16> sb{smem.b, block_k, block_n, ldb_s};

    typename tile::accumulator acc;  // (ATOMS_M, ATOMS_N) C fragments
    acc.fill(0.f);
    for (int k0 = 0; k0 < p.k; k0 += block_k) {
      if (p.rows16) load_tiles<16>(ctx, smem, p, m0, n0, k0);
      else load_tiles<alignof(f16)>(ctx, smem, p, m0, n0, k0);
      block.sync();  // the tiles are complete and visible to every warp
      for (int kk = 0; kk < block_k; kk += tile::tile_k) {
        typename tile::a_fragments a;  // (ATOMS_M, ATOMS_K)
        typename tile::b_fragments b;  // (ATOMS_K, ATOMS_N)
        tile::load_a(ctx, a, sa, wm, kk);
        tile::load_b(ctx, b, sb, kk, wn);
        tile::mma(ctx, a, b, acc);
      }
      block.sync();  // every warp has read the tiles before the next copy overwrites them
    }
    // [/mainloop]

    // [store]
    // Step 5: the epilogue. c_coord says where each accumulator sits in the atom's C tile, so each
    // value knows its (row, col) in D: what a per-column bias needs, and what the edge check needs.
    const int lane = ctx.lane().index();
    STRATA_UNROLL
    for (int i = 0; i < tile::atoms_m; ++i)
      STRATA_UNROLL
      for (int j = 0; j < tile::atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < atom::c_values; ++v) {
          const mma::coord c = atom::c_coord(lane, v);
          const int row = m0 + wm + i * atom::M + c.row, col = n0 + wn + j * atom::N + c.col;
          if (row < p.m && col < p.n)
            p.d[static_cast<long long>(row) * p.n + col] = relu_bias::apply(acc.f[i][j][v], row, col, p.ep);
        }
    // [/store]
  }
};

}  // namespace tutorial

#ifndef STRATA_TUTORIAL_NO_MAIN
namespace {

constexpr int max_extent = 8192;  // the emulator takes minutes well before this; the GEMM operator is for more

struct problem {
  int m = 100, n = 70, k = 90;
  bool check = false;
};

// [launch]
// Step 6: the launch, the same on every backend: one block per block tile of D, rounded up.
template <class Target>
bool run(const problem& pr) {
  using kernel = tutorial::warp_matmul_kernel<Target>;
  const int m = pr.m, n = pr.n, k = pr.k;
  std::mt19937 gen(2026);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<strata::f16> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
  std::vector<float> bias(n), d(static_cast<std::size_t>(m) * n);
  for (auto& x : a) x = strata::f16(dist(gen));
  for (auto& x : b) x = strata::f16(dist(gen));
  for (auto& x : bias) x = dist(gen);

  strata::stream s;
  strata::device_buffer<strata::f16> da(a.size()), db(b.size());
  strata::device_buffer<float> dbias(bias.size()), dd(d.size());
  strata::copy_to_device(s, da.data(), a.data(), a.size());
  strata::copy_to_device(s, db.data(), b.data(), b.size());
  strata::copy_to_device(s, dbias.data(), bias.data(), bias.size());

  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  tutorial::params p{da.data(), db.data(), dd.data(), m, n, k,
                     k % 8 == 0 && n % 8 == 0 && aligned(da.data()) && aligned(db.data()),
                     tutorial::relu_bias::make_params({.data = dbias.data()}, {}, {})};
  const strata::launch_shape shape{
      .grid = strata::dims((n + kernel::block_n - 1) / kernel::block_n, (m + kernel::block_m - 1) / kernel::block_m),
      .block = kernel::threads};
  const auto t0 = std::chrono::steady_clock::now();
  strata::launch(s, shape, kernel{}, p);
  strata::copy_to_host(s, d.data(), dd.data(), d.size());
  s.synchronize();
  // [/launch]
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("D = relu(A*B + bias), %d x %d x %d, target %s, atom %s, %s copies: %.2f ms\n", m, n, k,
              std::string(Target::name).c_str(), kernel::atom::name, p.rows16 ? "16-byte" : "2-byte", ms);
  if (!pr.check) return true;

  // The reference in double. Bound: the atoms accumulate in float (each product of two f16 values is
  // exact in float), so |D - exact| <= (k + 2) * 2^-24 * (sum |a*b| + |bias|); ReLU does not enlarge it.
  long long wrong = 0;
  double worst = 0;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double sum = bias[c], mag = std::fabs(bias[c]);
      for (int i = 0; i < k; ++i) {
        const double x = static_cast<double>(static_cast<float>(a[static_cast<std::size_t>(r) * k + i])) *
                         static_cast<double>(static_cast<float>(b[static_cast<std::size_t>(i) * n + c]));
        sum += x, mag += std::fabs(x);
      }
      const double ref = sum > 0 ? sum : 0.0;
      const double got = d[static_cast<std::size_t>(r) * n + c];
      const double err = std::fabs(got - ref), tol = (k + 2) * std::ldexp(mag, -24) + 1e-30;
      worst = std::max(worst, err / tol);
      if (!(err <= tol)) {  // NaN counts as wrong
        if (wrong < 5) std::printf("  D(%d, %d) = %.9g, reference %.9g\n", r, c, got, ref);
        ++wrong;
      }
    }
  std::printf("check: %lld of %lld elements outside the fp32-accumulation bound (worst %.3f of the bound)\n", wrong,
              static_cast<long long>(m) * n, worst);
  return wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  problem pr;
  std::string emulate;
  strata_examples::command_line cl("strata_example_warp_matmul",
                                   "usage: strata_example_warp_matmul [--m M] [--n N] [--k K] [--check] "
                                   "[--emulate host|sm80|gfx90a|gfx942]",
                                   argc, argv);
  while (cl.next()) {
    if (cl.is("--m")) pr.m = cl.integer<int>(1, max_extent);
    else if (cl.is("--n")) pr.n = cl.integer<int>(1, max_extent);
    else if (cl.is("--k")) pr.k = cl.integer<int>(1, max_extent);
    else if (cl.is("--check")) pr.check = true;
    else if (cl.is("--emulate")) emulate = cl.value();
    else cl.unknown();
  }

  bool ok = false;
  try {
    namespace arch = strata::arch;
    // On a GPU: mma.sync as sm80 (it runs on every sm80+ GPU) and MFMA 32x32x8 f16 as gfx90a (the same
    // opcode on gfx90a and gfx94x).
    ok = strata_examples::run_on_target<arch::sm80, arch::gfx90a>(
        cl.program(), emulate, strata_examples::targets<arch::host, arch::sm80, arch::gfx90a, arch::gfx942>{},
        [&](auto target) { return run<decltype(target)>(pr); });
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    if (pr.check) std::printf("FAIL\n");
    return 1;
  }
  if (pr.check) std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
#endif  // STRATA_TUTORIAL_NO_MAIN
