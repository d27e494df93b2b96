// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/warp_tile.hpp -- one warp's TileM x TileN x TileK sub-product, tiled with an atom.
//
//   using tile = strata::mma::warp_tile<Atom, 32, 16, 32>;   // (TILE_M, TILE_N, TILE_K)
//   typename tile::accumulator acc{};                        // C fragments of the whole warp tile
//   for (int k0 = 0; k0 < K; k0 += tile::tile_k) {
//     typename tile::a_fragments a;                          // (ATOMS_M, ATOMS_K) A fragments
//     typename tile::b_fragments b;                          // (ATOMS_K, ATOMS_N) B fragments
//     tile::load_a(ctx, a, A, m0, k0);                       // A: matrix_ref, row- or column-major
//     tile::load_b(ctx, b, B, k0, n0);
//     tile::mma(ctx, a, b, acc);
//   }
//   tile::store_c(ctx, acc, C, m0, n0);
//
// Loads and stores are plain per-lane loads at the positions the atom's a_coord / b_coord /
// c_coord give (ldmatrix and LDS transposes belong to copy/). Elements outside the matrix read as
// zero and are not stored, so tiles may overhang the matrix edges on every side (partial tiles).
// The same code runs on the emulator, on sm80+ and on CDNA: only the atom changes. On the emulator,
// accesses to the block's shared memory are counted for the launch statistics (count_fragment below,
// emulator/statistics.hpp); the GPU path has no trace of it.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/mma/layout.hpp"
#include "strata/mma/mma_op.hpp"

namespace strata::mma {

enum class major { row, col };

/// Whether a fragment load may reach past the edge of its matrix_ref.
enum class edges {
  zero_fill,  // elements outside the matrix read as zero: one bounds test per element
  inside,     // the caller guarantees every element lies inside (a whole staged tile): no test on a GPU,
              // where each per-element predicate is a lane mask the compiler keeps in scalar registers
              // for the whole K loop (the MFMA GEMM kernels ran out of SGPRs that way); the emulator
              // still tests each element and reports a broken promise as a kernel bug
  rows,       // only the row may fall outside (a partial tile of whole rows, e.g. the last query rows
              // of an attention tile): one row test per element, the column is promised inside (and
              // checked by the emulator) -- a column test per element cost the MFMA attention forward
              // a live lane mask per fragment column, in SGPRs, up to the epilogue
};

/// A rows x cols matrix in memory (global or shared): element (r, c) at data[r * ld + c] when
/// row-major, data[c * ld + r] when column-major.
template <class T>
struct matrix_ref {
  T* data;
  int rows;
  int cols;
  long long ld;
  major order = major::row;

  STRATA_HOST_DEVICE constexpr bool contains(int r, int c) const { return r >= 0 && r < rows && c >= 0 && c < cols; }
  STRATA_HOST_DEVICE constexpr T& operator()(int r, int c) const {
    return order == major::row ? data[r * ld + c] : data[c * ld + r];
  }
};

namespace detail {
template <class T>
STRATA_HOST_DEVICE constexpr T zero_of() {
  if constexpr (std::is_arithmetic_v<T>) return T(0);
  else return T(0.0f);
}
}  // namespace detail

template <class Atom, int TileM, int TileN, int TileK = Atom::K>
struct warp_tile {
  // Preconditions, in words.
  static_assert(TileM > 0 && TileM % Atom::M == 0, "warp_tile: TileM must be a positive multiple of the atom's M");
  static_assert(TileN > 0 && TileN % Atom::N == 0, "warp_tile: TileN must be a positive multiple of the atom's N");
  static_assert(TileK > 0 && TileK % Atom::K == 0, "warp_tile: TileK must be a positive multiple of the atom's K");

  using atom = Atom;
  static constexpr int tile_m = TileM, tile_n = TileN, tile_k = TileK;
  static constexpr int atoms_m = TileM / Atom::M, atoms_n = TileN / Atom::N, atoms_k = TileK / Atom::K;

  struct a_fragments {
    typename Atom::a_fragment f[atoms_m][atoms_k];  // (ATOMS_M, ATOMS_K)
  };
  struct b_fragments {
    typename Atom::b_fragment f[atoms_k][atoms_n];  // (ATOMS_K, ATOMS_N)
  };
  struct accumulator {
    typename Atom::c_fragment f[atoms_m][atoms_n];  // (ATOMS_M, ATOMS_N)
    STRATA_HOST_DEVICE void fill(typename Atom::c_type x) {
      STRATA_UNROLL
      for (int i = 0; i < atoms_m; ++i)
        STRATA_UNROLL
        for (int j = 0; j < atoms_n; ++j)
          STRATA_UNROLL
          for (int v = 0; v < Atom::c_values; ++v) f[i][j].v[v] = x;
    }
  };

  /// A fragments of A(m0 .. m0+TileM, k0 .. k0+TileK); out-of-range elements are zero, or, with
  /// edges::inside, the caller guarantees there are none (see edges).
  template <edges Edges = edges::zero_fill, class Ctx, class T>
  STRATA_HOST_DEVICE static void load_a(Ctx& ctx, a_fragments& a, const matrix_ref<T>& A, int m0, int k0) {
    static_assert(std::is_same_v<std::remove_cv_t<T>, typename Atom::a_type>, "warp_tile::load_a: A's element type must be the atom's a_type");
    const int lane = ctx.lane().index();
    if constexpr (Ctx::emulated)
      if (counting_shared(ctx.emulated_thread()))
        for (int i = 0; i < atoms_m; ++i)
          for (int kk = 0; kk < atoms_k; ++kk)
            count_fragment<Edges>(ctx, false, A, m0 + i * Atom::M, k0 + kk * Atom::K, Atom::a_values,
                                  [](int l, int v) { return Atom::a_coord(l, v); });
    [[maybe_unused]] auto counted = counted_scope(ctx);
    STRATA_UNROLL
    for (int i = 0; i < atoms_m; ++i)
      STRATA_UNROLL
      for (int kk = 0; kk < atoms_k; ++kk)
        STRATA_UNROLL
        for (int v = 0; v < Atom::a_values; ++v) {
          const coord x = Atom::a_coord(lane, v);
          const int r = m0 + i * Atom::M + x.row, c = k0 + kk * Atom::K + x.col;
          a.f[i][kk].v[v] = read<Edges>(ctx, A, r, c, "load_a");
        }
  }

  /// B fragments of B(k0 .. k0+TileK, n0 .. n0+TileN); out-of-range elements are zero, or, with
  /// edges::inside, the caller guarantees there are none.
  template <edges Edges = edges::zero_fill, class Ctx, class T>
  STRATA_HOST_DEVICE static void load_b(Ctx& ctx, b_fragments& b, const matrix_ref<T>& B, int k0, int n0) {
    static_assert(std::is_same_v<std::remove_cv_t<T>, typename Atom::b_type>, "warp_tile::load_b: B's element type must be the atom's b_type");
    const int lane = ctx.lane().index();
    if constexpr (Ctx::emulated)
      if (counting_shared(ctx.emulated_thread()))
        for (int kk = 0; kk < atoms_k; ++kk)
          for (int j = 0; j < atoms_n; ++j)
            count_fragment<Edges>(ctx, false, B, k0 + kk * Atom::K, n0 + j * Atom::N, Atom::b_values,
                                  [](int l, int v) { return Atom::b_coord(l, v); });
    [[maybe_unused]] auto counted = counted_scope(ctx);
    STRATA_UNROLL
    for (int kk = 0; kk < atoms_k; ++kk)
      STRATA_UNROLL
      for (int j = 0; j < atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < Atom::b_values; ++v) {
          const coord x = Atom::b_coord(lane, v);
          const int r = k0 + kk * Atom::K + x.row, c = n0 + j * Atom::N + x.col;
          b.f[kk][j].v[v] = read<Edges>(ctx, B, r, c, "load_b");
        }
  }

  /// One operand element for a fragment: zero outside M unless the caller promised it is inside, which
  /// the emulator verifies (a broken promise is reported as a kernel bug, never read out of bounds).
  template <edges Edges, class Ctx, class T>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static std::remove_cv_t<T> read(Ctx& ctx, const matrix_ref<T>& M, int r, int c,
                                                                        const char* what) {
    if constexpr (Edges == edges::inside || Edges == edges::rows) {
      if constexpr (Ctx::emulated) check_promise<Edges>(ctx, M, r, c, what);
      (void)what;
      if constexpr (Edges == edges::rows) return row_inside(M, r) ? M(r, c) : detail::zero_of<std::remove_cv_t<T>>();
      return M(r, c);
    } else {
      (void)ctx, (void)what;
      return M.contains(r, c) ? M(r, c) : detail::zero_of<std::remove_cv_t<T>>();
    }
  }

  template <class T>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static bool row_inside(const matrix_ref<T>& M, int r) {
    return static_cast<unsigned>(r) < static_cast<unsigned>(M.rows);
  }

  /// The emulator's check of an edges::inside / edges::rows promise: a broken one is a kernel bug.
  template <edges Edges, class Ctx, class T>
  static void check_promise(Ctx& ctx, const matrix_ref<T>& M, int r, int c, const char* what) {
    const bool broken = Edges == edges::inside ? !M.contains(r, c) : (c < 0 || c >= M.cols);
    if (broken)
      kernel_bug(ctx.emulated_thread(), std::string("warp_tile::") + what +
                                            (Edges == edges::inside ? "<edges::inside>: element (" : "<edges::rows>: element (") +
                                            std::to_string(r) + ", " + std::to_string(c) + ") is outside the " +
                                            std::to_string(M.rows) + " x " + std::to_string(M.cols) + " matrix");
  }

  /// Emulator only, while the launch counts: counts one fragment's accesses to M (values 0 .. n-1 at (row0, col0) + coord(lane,
  /// v)) for the launch's shared-memory statistics, if M lies in the block's shared memory (global
  /// memory is not counted). Each lane's k-th call becomes part of warp request k (emulator/detail/
  /// wavefronts.hpp). What a GPU compiler issues is ASSUMED, as the attention review read it in nvcc's
  /// SASS (sm_80/sm_90a, 2026): values 2i and 2i+1 become ONE access of twice the element width (two
  /// bf16 of one 32-bit register: LDS.32; two fp32 accumulators: STS.64) when, in lane 0, they are
  /// neighbours along M's contiguous dimension, the pair is at most 8 bytes, and lane 0's first element
  /// and M's row stride are aligned to the pair; otherwise each value is its own access (LDS.U16 for a
  /// bf16 B fragment read along K from a row-major tile). The decision is taken once for the warp (from
  /// lane 0), as the compiler takes it once for all lanes. A value outside M (zero-filled, or not
  /// stored) leaves its lane out of the request; a pair is in when either of its values is.
  template <edges Edges, class Ctx, class T, class CoordOf>
  static void count_fragment(Ctx& ctx, bool store, const matrix_ref<T>& M, int row0, int col0, int n, CoordOf coord_of) {
    auto& t = ctx.emulated_thread();
    if (!in_shared(t, M.data)) return;
    const int lane = ctx.lane().index();
    constexpr int bytes = static_cast<int>(sizeof(T));
    auto place = [&](int l, int v, bool& active) {
      const coord x = coord_of(l, v);
      const int r = row0 + x.row, c = col0 + x.col;
      active = Edges == edges::inside ? true : Edges == edges::rows ? row_inside(M, r) : M.contains(r, c);
      return reinterpret_cast<const unsigned char*>(M.data + (M.order == major::row ? r * M.ld + c : c * M.ld + r));
    };
    for (int v = 0; v < n; v += 2) {
      bool a0 = false, a1 = false;
      if (v + 1 < n && 2 * bytes <= 8) {
        const unsigned char* first = place(0, v, a0);
        const unsigned char* second = place(0, v + 1, a1);
        const bool merged = second == first + bytes && reinterpret_cast<std::uintptr_t>(first) % (2 * bytes) == 0 &&
                            (M.ld * bytes) % (2 * bytes) == 0;
        if (merged) {
          const unsigned char* p = place(lane, v, a0);
          place(lane, v + 1, a1);
          count_fragment_access(t, store, a0 || a1 ? p : nullptr, 2 * bytes);
          continue;
        }
      }
      for (int e = v; e < v + 2 && e < n; ++e) {
        const unsigned char* p = place(lane, e, a0);
        count_fragment_access(t, store, a0 ? p : nullptr, bytes);
      }
    }
  }

  /// On the emulator, marks the fragment accesses that follow as the atom's own (counted above, not
  /// plain loads for the race-check build's statistics); nothing on a GPU.
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static auto counted_scope(Ctx& ctx) {
    if constexpr (Ctx::emulated) return enter_counted_atom(ctx.emulated_thread());
    else return (void)ctx, 0;
  }

  /// acc += A * B over the warp tile: atoms_m * atoms_n * atoms_k atom executions.
  template <class Ctx>
  STRATA_HOST_DEVICE static void mma(Ctx& ctx, const a_fragments& a, const b_fragments& b, accumulator& acc) {
    Atom::template require_target<typename Ctx::target>();
    const auto warp = ctx.warp();
    STRATA_UNROLL
    for (int kk = 0; kk < atoms_k; ++kk)
      STRATA_UNROLL
      for (int i = 0; i < atoms_m; ++i)
        STRATA_UNROLL
        for (int j = 0; j < atoms_n; ++j) strata::mma::mma<Atom>(warp, a.f[i][kk], b.f[kk][j], acc.f[i][j]);
  }

  /// C fragments from C(m0 .., n0 ..): to accumulate onto existing values. Out-of-range elements are zero.
  template <class Ctx, class T>
  STRATA_HOST_DEVICE static void load_c(Ctx& ctx, accumulator& acc, const matrix_ref<T>& C, int m0, int n0) {
    const int lane = ctx.lane().index();
    if constexpr (Ctx::emulated)
      if (counting_shared(ctx.emulated_thread()))
        for (int i = 0; i < atoms_m; ++i)
          for (int j = 0; j < atoms_n; ++j)
            count_fragment<edges::zero_fill>(ctx, false, C, m0 + i * Atom::M, n0 + j * Atom::N, Atom::c_values,
                                             [](int l, int v) { return Atom::c_coord(l, v); });
    [[maybe_unused]] auto counted = counted_scope(ctx);
    STRATA_UNROLL
    for (int i = 0; i < atoms_m; ++i)
      STRATA_UNROLL
      for (int j = 0; j < atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < Atom::c_values; ++v) {
          const coord x = Atom::c_coord(lane, v);
          const int r = m0 + i * Atom::M + x.row, c = n0 + j * Atom::N + x.col;
          acc.f[i][j].v[v] = C.contains(r, c) ? static_cast<typename Atom::c_type>(C(r, c)) : typename Atom::c_type(0);
        }
  }

  /// Writes the accumulators into C(m0 .., n0 ..), skipping elements outside the matrix (edges::inside:
  /// the caller guarantees there are none). For an atom with a broadcast operand every element still
  /// has exactly one owner (C is always a partition).
  template <edges Edges = edges::zero_fill, class Ctx, class T>
  STRATA_HOST_DEVICE static void store_c(Ctx& ctx, const accumulator& acc, const matrix_ref<T>& C, int m0, int n0) {
    const int lane = ctx.lane().index();
    if constexpr (Ctx::emulated)
      if (counting_shared(ctx.emulated_thread()))
        for (int i = 0; i < atoms_m; ++i)
          for (int j = 0; j < atoms_n; ++j)
            count_fragment<Edges>(ctx, true, C, m0 + i * Atom::M, n0 + j * Atom::N, Atom::c_values,
                                  [](int l, int v) { return Atom::c_coord(l, v); });
    [[maybe_unused]] auto counted = counted_scope(ctx);
    STRATA_UNROLL
    for (int i = 0; i < atoms_m; ++i)
      STRATA_UNROLL
      for (int j = 0; j < atoms_n; ++j)
        STRATA_UNROLL
        for (int v = 0; v < Atom::c_values; ++v) {
          const coord x = Atom::c_coord(lane, v);
          const int r = m0 + i * Atom::M + x.row, c = n0 + j * Atom::N + x.col;
          if constexpr (Edges == edges::inside || Edges == edges::rows) {
            if constexpr (Ctx::emulated) check_promise<Edges>(ctx, C, r, c, "store_c");
            if (Edges == edges::inside || row_inside(C, r)) C(r, c) = static_cast<T>(acc.f[i][j].v[v]);
          } else if (C.contains(r, c)) {
            C(r, c) = static_cast<T>(acc.f[i][j].v[v]);
          }
        }
  }

  /// The whole warp-tile product C(m0.., n0..) = A(m0.., 0..K) * B(0..K, n0..), K = A.cols.
  template <class Ctx, class TA, class TB, class TC>
  STRATA_HOST_DEVICE static void run(Ctx& ctx, const matrix_ref<TA>& A, const matrix_ref<TB>& B,
                                     const matrix_ref<TC>& C, int m0, int n0) {
    accumulator acc;
    acc.fill(typename Atom::c_type(0));
    for (int k0 = 0; k0 < A.cols; k0 += TileK) {
      a_fragments a;
      b_fragments b;
      load_a(ctx, a, A, m0, k0);
      load_b(ctx, b, B, k0, n0);
      mma(ctx, a, b, acc);
    }
    store_c(ctx, acc, C, m0, n0);
  }
};

}  // namespace strata::mma
