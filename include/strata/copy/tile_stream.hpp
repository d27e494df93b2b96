// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/copy/tile_stream.hpp -- one thread's share of a run of full tiles that step along a matrix's
// rows (the GEMM's K loop over a row-major A or a column-major B) or down its rows (the attention
// forward's K / V tiles: advance(Rows x ld)), set up once and then advanced.
//
//   using tile   = strata::copy::tile_copy<bf16, 128, 32, 16, 16, 256>;   // Threads fixed
//   strata::copy::tile_stream<tile> s(ctx, a + m0 * lda + k0, lda, m - m0);  // prologue, once
//   for (...) {                                                              // K loop
//     s.copy_async<lda_stage>(ctx, stage_a);   // this thread's vectors of the current tile
//     s.advance();                             // next tile: Cols elements further along the rows
//   }
//
// tile_copy::block_copy_async recomputes, per vector and per call, the vector's row and column, both
// bounds tests, a 64-bit source address and cp.async's source size (../shared/research/gemm-forensic.md:
// about 38 instructions per cp.async in the GEMM's K loop; still about 25 with the loop unrolled). A
// stream does that work once: each of the thread's vectors keeps its source pointer, and whether its
// row exists is a predicate fixed for the whole run. A call issues one cp.async per vector under that
// predicate (ignore-src: the row is zero-filled, nothing read) at a destination offset that is a
// compile-time constant from the stage base; advance() adds a constant to each pointer.
//
// Columns past the source's end: every tile of the run must be whole along the rows but one partial
// tile (the K residue), which copy_async_partial() / load_partial() copy with the columns past the end
// zero. Rows past `valid_rows` are zero-filled in every tile.
//
// Targets without cp.async (CDNA) stage the tile through registers instead: load() issues this
// thread's global loads of the current tile into a `staged` set of registers, and store() writes them
// into a stage later, so the loads fly while the caller computes on the previous stage (the GEMM's
// register-staged loop, gemm::kernel). There a row past `valid_rows` is not zero-filled: each of its
// vectors holds a copy of the run's first vector (row 0), read from a valid address, which is all a
// GEMM operand needs (row i of A only reaches row i of D, which is not stored past M; likewise B's rows
// and N), and it saves a select per register.
//
// A run down the rows whose columns end (Edge = stream_edge::columns: the GEMM's K loop over a
// column-major A or a row-major B, whose stage rows run along M or N): columns at and past
// `valid_cols` are zero-filled in every tile, and each tile is Rows further down (advance(Rows x
// src_ld)). A thread's vectors share one column, so how many of its bytes exist is fixed for the
// run: each cp.async carries that source size (a vector that straddles the end reads its first
// elements; one wholly past it reads nothing). The one partial tile (the K residue: rows at and past
// valid_rows do not exist) is copied by copy_async_rows().
//
// Requirements: Tile's Threads is the block's thread count (checked on the emulator), a multiple of
// the vectors per row, so that each thread's vectors share one column and step by a constant number
// of rows; the vector is 4, 8 or 16 bytes; copy_async needs cp.async.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/config/config.hpp"
#include "strata/copy/cp_async.hpp"
#include "strata/copy/detail/vector_types.hpp"
#include "strata/copy/tile.hpp"
#include "strata/tensor/swizzle.hpp"

namespace strata::copy {

namespace detail {
/// The register-staged copies' store (tile_stream::store, conv::fprop_a_stream::store): vector i of a
/// thread's staged registers to base + i x step where has(i), counted on the emulator as the copy's
/// shared-memory writes (the launch statistics), not as plain accesses.
template <int VectorBytes, int N, class Ctx, class T, class Has>
STRATA_HOST_DEVICE STRATA_FORCEINLINE void store_staged(Ctx& ctx, T* base, int step, const raw_vector<VectorBytes> (&v)[N], Has&& has) {
  if constexpr (Ctx::emulated) {
    auto& t = ctx.emulated_thread();
    [[maybe_unused]] auto counted = enter_counted_atom(t);
    for (int i = 0; i < N; ++i)
      if (has(i)) {
        count_fragment_access(t, true, base + i * step, VectorBytes);
        store_raw<VectorBytes>(base + i * step, v[i]);
      }
  } else {
    (void)ctx;
    STRATA_UNROLL
    for (int i = 0; i < N; ++i)
      if (has(i)) store_raw<VectorBytes>(base + i * step, v[i]);
  }
}
}  // namespace detail

/// Where a stream's tiles end: rows past a count (the run steps along the rows) or columns past a
/// count (the run steps down the rows).
enum class stream_edge { rows, columns };

template <class Tile, stream_edge Edge = stream_edge::rows>
class tile_stream {
 public:
  using value_type = typename Tile::value_type;
  static_assert(Tile::threads > 0, "tile_stream: the tile_copy needs the block's thread count at compile time (Threads)");
  static_assert(Tile::threads % Tile::vectors_per_row == 0,
                "tile_stream: Threads must be a multiple of the vectors per row (each thread keeps one column)");
  static_assert(Tile::vector_bytes == 4 || Tile::vector_bytes == 8 || Tile::vector_bytes == 16,
                "tile_stream: cp.async moves 4, 8 or 16 bytes; the tile's rows need 4-byte alignment at least");
  /// Vectors per thread per tile, and the rows between a thread's consecutive vectors.
  static constexpr int per_thread = (Tile::vectors + Tile::threads - 1) / Tile::threads;
  static constexpr int row_step = Tile::threads / Tile::vectors_per_row;
  /// Every thread has per_thread vectors (else the last one exists for the lower ranks only).
  static constexpr bool even = Tile::vectors % Tile::threads == 0;

  /// The run starts at `src` (its first tile's element (0, 0)). Edge rows: rows at and past `valid`
  /// are zero-filled in every tile (negative: none exist). Edge columns: columns at and past `valid`
  /// are, and every row exists.
  template <class Ctx>
  STRATA_HOST_DEVICE tile_stream(Ctx& ctx, const value_type* src, long long src_ld, int valid) {
    if constexpr (Edge == stream_edge::rows) {
      start(ctx, src, src_ld, valid, false);
    } else {
      start(ctx, src, src_ld, 0, true);
      // This thread's column: its bytes that exist, the same in every tile. A column wholly past the
      // end keeps the run's origin as its (never read) address.
      edge_.origin = src;
      edge_.bytes = Tile::valid_in(0, col0_, 1, valid) * static_cast<int>(sizeof(value_type));
      if (edge_.bytes == 0) {
        first_ -= col0_;
        STRATA_UNROLL
        for (int i = 0; i < per_thread; ++i) src_[i] -= col0_;
      }
    }
  }

  /// A run whose tiles all have every row (the attention forward's interior K / V tiles): no row
  /// predicate is kept, each cp.async is unconditional.
  struct whole_rows_t {};
  static constexpr whole_rows_t whole_rows{};
  template <class Ctx>
  STRATA_HOST_DEVICE tile_stream(Ctx& ctx, const value_type* src, long long src_ld, whole_rows_t) {
    start(ctx, src, src_ld, 0, true);
  }

  /// Issues this thread's cp.async copies of the current tile into `dst`, a row-major stage of DstLd
  /// elements per row whose element offsets go through Swizzle (as store()); the caller commits and
  /// waits (strata::pipeline).
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void copy_async(Ctx& ctx, value_type* dst) const {
    value_type* base = dst + destination<DstLd, Swizzle>();
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      if constexpr (Edge == stream_edge::rows)
        cp_async_if<Tile::vector_bytes>(ctx, live_[i], base + i * row_step * DstLd, async_source(i));
      else
        cp_async<Tile::vector_bytes>(ctx, base + i * row_step * DstLd, async_source(i), edge_.bytes);
    }
  }

  /// copy_async() of the current tile with its rows at and past `valid_rows` zero-filled (never
  /// read), for runs whose tiles end at different rows: the attention backward walks the query tiles
  /// of each query head of a GQA group in turn, the last tile of every head partial. One compare per
  /// vector and call; rows the stream itself was told do not exist stay zero-filled too.
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void copy_async_first_rows(Ctx& ctx, value_type* dst, int valid_rows) const {
    static_assert(Edge == stream_edge::rows, "tile_stream::copy_async_first_rows: a run along the rows (stream_edge::rows)");
    value_type* base = dst + destination<DstLd, Swizzle>();
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (has(i))
        cp_async_if<Tile::vector_bytes>(ctx, live_[i] && row0_ + i * row_step < valid_rows, base + i * row_step * DstLd,
                                        async_source(i));
    }
  }

  /// copy_async() of the tile `offset` elements past the current one (Edge columns: the K residue of a
  /// run down the rows, offset = its distance in rows x src_ld), whose rows at and past `valid_rows` do
  /// not exist: they are zero-filled and never read (their address is that tile's row 0, which must
  /// exist). For a prologue; taken from this stream so that no second stream keeps its own pointers
  /// live beside this one's.
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE void copy_async_rows(Ctx& ctx, value_type* dst, int valid_rows, long long offset = 0) const {
    static_assert(Edge == stream_edge::columns, "tile_stream::copy_async_rows: a run down the rows (stream_edge::columns)");
    value_type* base = dst + destination<DstLd, Swizzle>();
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      const bool row = row0_ + i * row_step < valid_rows;
      cp_async<Tile::vector_bytes>(ctx, base + i * row_step * DstLd, (row ? async_source(i) : edge_.origin) + offset,
                                   row ? edge_.bytes : 0);
    }
  }

  /// copy_async() of a tile whose columns at and past `valid_cols` do not exist (a K residue, or the
  /// attention backward's per-row statistics of a partial query tile): they are zero-filled and never
  /// read (cp.async's source size; a vector that straddles the end reads its first elements). Each
  /// call computes the sizes: a few integer instructions per vector.
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE void copy_async_partial(Ctx& ctx, value_type* dst, int valid_cols) const {
    static_assert(Edge == stream_edge::rows, "tile_stream::copy_async_partial: a run along the rows (stream_edge::rows)");
    value_type* base = dst + destination<DstLd, Swizzle>();
    // The vector's valid elements (tile_copy::valid_in; a row's existence is live_ here).
    const int bytes = Tile::valid_in(0, col0_, 1, valid_cols) * static_cast<int>(sizeof(value_type));
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (has(i)) cp_async<Tile::vector_bytes>(ctx, base + i * row_step * DstLd, async_source(i), live_[i] ? bytes : 0);
    }
  }

  /// This thread's vectors of one tile in registers (load / store: targets without cp.async).
  struct staged {
    detail::raw_vector<Tile::vector_bytes> v[per_thread];
  };

  /// Issues this thread's global loads of the current tile into `r` (rows past valid_rows: the run's
  /// first row, see above). The loads complete when `r` is used, by store().
  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void load(Ctx& ctx, staged& r) const {
    (void)ctx;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i)
      if (has(i)) r.v[i] = detail::load_raw<Tile::vector_bytes>(src_[i]);
  }

  /// load() of a tile whose columns at and past `valid_cols` do not exist (a K residue): they are
  /// zero in `r`, and never read (a vector that straddles the end is read element by element).
  template <class Ctx>
  STRATA_HOST_DEVICE void load_partial(Ctx& ctx, staged& r, int valid_cols) const {
    (void)ctx;
    constexpr int per_vector = Tile::elements_per_vector;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      if (!has(i)) continue;
      const int left = valid_cols - col0_;
      if (left >= per_vector) r.v[i] = detail::load_raw<Tile::vector_bytes>(src_[i]);
      else r.v[i] = detail::load_first_elements<Tile::vector_bytes>(src_[i], left);
    }
  }

  /// Writes registers loaded by load() into `dst`, a row-major stage of DstLd elements per row whose
  /// element offsets go through Swizzle (tensor/swizzle.hpp; one 16-byte unit stays whole). A
  /// thread's vectors are row_step rows apart, which must be a whole number of the swizzle's periods,
  /// so the swizzle is applied once.
  template <int DstLd, class Swizzle = no_swizzle, class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void store(Ctx& ctx, const staged& r, value_type* dst) const {
    detail::store_staged(ctx, dst + destination<DstLd, Swizzle>(), row_step * DstLd, r.v, [&](int i) { return has(i); });
  }

  /// The next tile: Cols elements further along every row. (A run down the rows steps Rows x src_ld:
  /// advance(elements) with the caller's ld, which a kernel reads from its parameters instead of the
  /// stream keeping it in two more registers.)
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void advance() {
    static_assert(Edge == stream_edge::rows, "tile_stream::advance(): a run down the rows advances by Rows x src_ld");
    advance(Tile::cols);
  }

  /// The next tile `elements` further: a run down the rows steps Rows x src_ld.
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void advance(long long elements) {
    first_ += elements;
    if constexpr (Edge == stream_edge::columns) edge_.origin += elements;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) src_[i] += elements;
  }

 private:
  /// This thread's first vector's offset in a stage of DstLd-element rows through Swizzle. Its other
  /// vectors are row_step rows further: whole swizzle periods, so the swizzle is applied once.
  template <int DstLd, class Swizzle>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE int destination() const {
    static_assert((static_cast<long long>(row_step) * DstLd) % Swizzle::period == 0 || per_thread == 1,
                  "tile_stream: a thread's rows must be whole swizzle periods apart in the stage");
    return static_cast<int>(Swizzle{}(row0_ * DstLd + col0_));
  }

  /// The source of vector i for cp.async. With four or more vectors per thread: the first vector's
  /// plus i row steps, one wide multiply-add per vector and tile; keeping every vector's pointer and
  /// advancing each took two adds per vector and tile and a register pair each, which ptxas then
  /// moved into place for LDGSTS (the attention forward at D 64 and 128: 8 and 16 pointers). A row
  /// that does not exist gets an address past it, which cp.async's ignore-src form never reads. With
  /// one or two (the GEMM tiles) the pointers stay: there the multiply saved nothing, and the row
  /// step's ld was reloaded in the loop (sm_80, 128 x 128 tile: 3.03 -> 3.12 per HMMA).
  static constexpr bool stepped_sources = per_thread >= 4;
  STRATA_HOST_DEVICE STRATA_FORCEINLINE const value_type* async_source(int i) const {
    if constexpr (stepped_sources) return first_ + i * step_;
    else return src_[i];
  }

  /// Whether this thread has its i-th vector (all do but, in an uneven tile, the last one).
  STRATA_HOST_DEVICE STRATA_FORCEINLINE bool has(int i) const {
    return even || i + 1 < per_thread || row0_ + i * row_step < Tile::rows;
  }

  template <class Ctx>
  STRATA_HOST_DEVICE STRATA_FORCEINLINE void start(Ctx& ctx, const value_type* src, long long src_ld, int valid_rows, bool whole) {
    const int rank = ctx.block().thread_rank();
    Tile::require_threads(ctx, "tile_stream");
    const unsigned u = static_cast<unsigned>(rank);
    row0_ = static_cast<int>(u / Tile::vectors_per_row);
    col0_ = static_cast<int>(u % Tile::vectors_per_row) * Tile::elements_per_vector;
    first_ = src + row0_ * src_ld + col0_;
    step_ = row_step * src_ld;
    STRATA_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int r = row0_ + i * row_step;
      // A row that does not exist keeps a readable address (the run's origin moves along row 0 of the
      // tile, which the caller guarantees whole): ignore-src never reads it, tools still check it.
      live_[i] = whole || r < valid_rows;
      src_[i] = live_[i] ? src + r * src_ld + col0_ : src;
    }
  }

  // The register path reads src_ (a row that does not exist reads the run's first vector); cp.async
  // reads first_ + i step_. Each path's unused state is dead code once the stream is inlined.
  const value_type* src_[per_thread];
  const value_type* first_ = nullptr;
  long long step_ = 0;
  // Edge columns only (a run along the rows keeps none of it, so its code is what it was before).
  struct column_edge {
    const value_type* origin = nullptr;  // the current tile's element (0, 0), read by no copy
    int bytes = Tile::vector_bytes;      // the bytes of this thread's column that exist
  };
  struct row_edge {};
  [[no_unique_address]] std::conditional_t<Edge == stream_edge::columns, column_edge, row_edge> edge_;
  bool live_[per_thread];
  int row0_ = 0, col0_ = 0;
};

}  // namespace strata::copy
