// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/tile_stream_transposed.hpp -- one thread's share of a run of tiles down a matrix's rows,
// loaded into registers and written transposed into shared memory: element (r, c) of a tile lands in
// row c, column r of the stage. Set up once, then advanced.
//
//   using tile = strata::copy::tile_copy<bf16, 32, 128, 16, 16, 256>;    // K rows x N columns, Threads fixed
//   strata::copy::tile_stream_transposed<tile> s(ctx, b + k0 * ldb + n0, ldb, n - n0);
//   for (...) {                                       // K loop
//     s.load(ctx, r);                                 // this thread's vectors of the current tile
//     ...                                             // the MMAs on the other stage
//     s.store<32, swizzle>(ctx, r, stage_b);          // (N, K): stage rows run along K
//     s.advance(32 * ldb);                            // the next tile, 32 rows down
//   }
//
// For an MFMA operand stored along M or N (a row-major B, x W with W stored (in, out); a column-major
// A, the weight gradient's X^T): the MFMA atoms read their operands along K, 16 bytes per lane
// (mma::vector_fragments), so the stage must run along K. Targets without cp.async copy through
// registers anyway (gemm::kernel's register-staged loop), so the transpose costs element stores
// instead of one vector store per vector, written once per block; without it every wave reads the
// stage element by element (gfx940, bf16, 128 x 128: 46.94 static instructions per MFMA in the K loop
// against 4.38 for the K-major pair).
//
// Thread mapping: consecutive threads take consecutive rows of one vector column (rank % Rows is the
// thread's row, fixed for the run; its vectors are columns rank / Rows, + Threads / Rows, ...). A
// wave's store of its element e then writes Rows consecutive elements of one stage row per vector
// column: no bank conflicts (with the stage swizzle, whose XOR moves the other columns' rows to other
// banks), where the row-first mapping of tile_stream put every lane of a row on one bank. A wave's
// loads cover whole 32-byte sectors of each row between the lanes of neighbouring columns.
//
// Edges: every tile of the run has all its rows but one partial tile (the K residue), which
// load_rows() loads with the rows past its end zero. Columns at and past `valid_cols` (the M or N
// edge): load<true>() and load_rows() read a vector that straddles the edge element by element and
// one wholly past it not at all (zero past the edge). load<false>() keeps those branches out of a
// kernel's interior loop; it may be used only where no vector straddles (straddles() is false, so
// valid_cols is a multiple of the vector or the whole tile): there a vector wholly past the edge
// reads its row's first vector, which exists (its elements land in stage rows past M or N, which only
// reach outputs that are never stored).
//
// Requirements: Tile's Threads is the block's thread count (checked on the emulator), a multiple of
// its Rows; the vector is 4, 8 or 16 bytes of 1-, 2- or 4-byte elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/tile.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata::copy {

template <class Tile>
class tile_stream_transposed {
 public:
  using value_type = typename Tile::value_type;
  static_assert(Tile::threads > 0, "tile_stream_transposed: the tile_copy needs the block's thread count at compile time (Threads)");
  static_assert(Tile::threads % Tile::rows == 0,
                "tile_stream_transposed: Threads must be a multiple of the tile's rows (each thread keeps one row)");
  static_assert(Tile::vector_bytes == 4 || Tile::vector_bytes == 8 || Tile::vector_bytes == 16,
                "tile_stream_transposed: 4-, 8- or 16-byte vectors");
  static constexpr int element_bytes = static_cast<int>(sizeof(value_type));
  static_assert(element_bytes == 1 || element_bytes == 2 || element_bytes == 4,
                "tile_stream_transposed: 1-, 2- or 4-byte elements");
  static constexpr int per_vector = Tile::elements_per_vector;
  /// Vectors per thread per tile, and the columns between a thread's consecutive vectors.
  static constexpr int per_thread = (Tile::vectors + Tile::threads - 1) / Tile::threads;
  static constexpr int col_step = (Tile::threads / Tile::rows) * per_vector;
  /// Every thread has per_thread vectors (else the last one exists for the lower ranks only).
  static constexpr bool even = Tile::vectors % Tile::threads == 0;
  using bits_type = std::conditional_t<element_bytes == 1, std::uint8_t,
                                       std::conditional_t<element_bytes == 2, std::uint16_t, std::uint32_t>>;

  /// The run starts at `src` (its first tile's element (0, 0)); columns at and past `valid_cols` do
  /// not exist (at least one does).
  template <class Ctx>
  STRATA_HOST_DEVICE tile_stream_transposed(Ctx& ctx, const value_type* src, long long src_ld, int valid_cols) {
    Tile::require_threads(ctx, "tile_stream_transposed");
    const unsigned u = static_cast<unsigned>(ctx.block().thread_rank());
    row0_ = static_cast<int>(u % Tile::rows);
    col0_ = static_cast<int>(u / Tile::rows) * per_vector;
    const value_type* row = src + row0_ * src_ld;
    straddles_ = false;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int c = col0_ + i * col_step;
      const int n = valid_cols - c;
      count_[i] = n <= 0 ? 0 : (n > per_vector ? per_vector : n);
      src_[i] = count_[i] > 0 ? row + c : row;
      straddles_ = straddles_ || (has(i) && count_[i] > 0 && count_[i] < per_vector);
    }
  }

  /// Whether one of this thread's vectors straddles the column edge (then load<true>() is needed).
  STRATA_HOST_DEVICE bool straddles() const { return straddles_; }

  /// This thread's vectors of one tile in registers.
  struct staged {
    detail::raw_vector<Tile::vector_bytes> v[per_thread];
  };

  /// Issues this thread's global loads of the current tile (every row exists) into `r`. Straddle:
  /// a vector that straddles the column edge is read element by element, zero past it, and one
  /// wholly past it is zero (not read). Without, a vector wholly past the edge reads its row's first.
  template <bool Straddle = true, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void load(Ctx& ctx, staged& r) const {
    if constexpr (Ctx::emulated) {
      if (!Straddle && straddles_) kernel_bug(ctx.emulated_thread(), "tile_stream_transposed::load<false> on a straddling vector");
    }
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      if (Straddle && count_[i] < per_vector) r.v[i] = detail::load_first_elements<Tile::vector_bytes>(src_[i], count_[i]);
      else r.v[i] = detail::load_raw<Tile::vector_bytes>(src_[i]);
    }
  }

  /// The tile `offset` elements past the current one (a K residue: offset = its distance in rows x
  /// src_ld), whose rows at and past `valid_rows` do not exist: this thread's vectors are zero there
  /// and nothing is read. For a prologue; taken from this stream so that no second stream keeps its
  /// own pointers live beside this one's.
  template <class Ctx>
  STRATA_HOST_DEVICE void load_rows(Ctx& ctx, staged& r, int valid_rows, long long offset) const {
    (void)ctx;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      if (row0_ >= valid_rows) r.v[i] = detail::raw_vector<Tile::vector_bytes>{};
      else if (count_[i] < per_vector) r.v[i] = detail::load_first_elements<Tile::vector_bytes>(src_[i] + offset, count_[i]);
      else r.v[i] = detail::load_raw<Tile::vector_bytes>(src_[i] + offset);
    }
  }

  /// Writes registers loaded by load() into `dst` transposed: element (row0, c) of the tile goes to
  /// dst[Swizzle(c * DstLd + row0)], a stage of DstLd-element rows (the tile's columns) whose element
  /// offsets go through Swizzle (tensor/swizzle.hpp).
  ///
  /// The addresses: this thread's elements are at c * DstLd + row0 for c = col0 + i col_step + e, and
  /// col0 + i col_step + e = col0 | i col_step | e (powers of two, col0 < col_step), so each offset is
  /// the OR of the thread's own o0 = col0 DstLd + row0 and a compile-time delta. An XOR swizzle is
  /// linear over XOR: Sw(o0 | delta) = Sw(o0) ^ Sw(delta), and Sw(delta) = delta ^ F(delta), whose F
  /// bits lie below DstLd's (the 16-byte units within a row). So the offset is (Sw(o0) ^ F(delta)) +
  /// delta: one base per distinct F (at most 2^bits) and an immediate. Computed naively, clang kept
  /// a swizzled address per element (gfx940, the 128 x 128 tile: 14 registers and an add per store).
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void store(Ctx& ctx, const staged& r, value_type* dst) const {
    bits_type* out = reinterpret_cast<bits_type*>(dst);
    constexpr bool swizzled = Swizzle::bits > 0;
    static_assert(!swizzled || (pow2(DstLd) && pow2(per_vector) && pow2(col_step) && Swizzle::zzz_mask < DstLd),
                  "tile_stream_transposed::store: a swizzled stage needs power-of-two rows, vectors and column steps, "
                  "and a swizzle within a row's units");
    const int o0 = col0_ * DstLd + row0_;
    const int s0 = static_cast<int>(Swizzle{}(o0));
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      STRATA_UNROLL
      for (int e = 0; e < per_vector; ++e) {
        const int delta = (i * col_step + e) * DstLd;
        const int at = swizzled ? (s0 ^ static_cast<int>(Swizzle{}(delta) ^ delta)) + delta : o0 + delta;
        bits_type* p = out + at;
        const bits_type x = element(r.v[i], e);
        if constexpr (Ctx::emulated) {
          auto& t = ctx.emulated_thread();
          if (at != static_cast<int>(Swizzle{}(o0 + delta))) kernel_bug(t, "tile_stream_transposed::store: swizzled offset");
          // Counted as the copy's shared-memory writes (the launch statistics), not as plain accesses.
          [[maybe_unused]] auto counted = enter_counted_atom(t);
          count_fragment_access(t, true, p, element_bytes);
          *p = x;
        } else {
          *p = x;
        }
      }
    }
  }

  /// The next tile `elements` further (Rows x src_ld for the next tile down the rows).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void advance(long long elements) {
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) src_[i] += elements;
  }

 private:
  STRATA_HOST_DEVICE static constexpr bool pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

  /// Whether this thread has its i-th vector (all do but, in an uneven tile, the last one).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE bool has(int i) const {
    return even || i + 1 < per_thread || col0_ + i * col_step < Tile::cols;
  }

  /// Element e of a vector, as its bits.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE static bits_type element(const detail::raw_vector<Tile::vector_bytes>& v, int e) {
    if constexpr (element_bytes == 4) return v.w[e];
    else return static_cast<bits_type>(v.w[(e * element_bytes) / 4] >> (8 * ((e * element_bytes) % 4)));
  }

  const value_type* src_[per_thread];
  int count_[per_thread];  // elements of vector i that exist (0: wholly past the column edge)
  int row0_ = 0, col0_ = 0;
  bool straddles_ = false;
};

}  // namespace strata::copy
