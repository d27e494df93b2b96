// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// copy::tile_stream (and, at the end, copy::tile_stream_transposed) into plain and XOR-swizzled stages: the cp.async forms (copy_async, and
// copy_async_partial for a K residue) on sm80, the register-staged forms (load / load_partial, store)
// on gfx942. One block copies a 64 x 32 tile of 16-bit values from a strided source whose valid rows
// and columns end inside the tile, then reads the stage back through the swizzle: every element must
// be its source value, and zero past the valid columns (and, on the cp.async path, past the valid
// rows; the register path copies the run's first vector there, which the GEMM never stores). The stage starts
// poisoned, so a vector written to the wrong place shows twice: once missing, once misplaced.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../unit/support.hpp"
#include "strata/copy/tile_stream.hpp"
#include "strata/copy/tile_stream_transposed.hpp"
#include "strata/strata.hpp"

using namespace strata_test;
namespace arch = strata::arch;

namespace {

constexpr int rows = 64, cols = 32, threads = 128;
constexpr std::uint16_t stage_poison = 0xBEEF;

struct stream_params {
  const std::uint16_t* in;
  std::uint16_t* out;  // rows x cols, the stage read back in logical order
  long long ld;
  int valid_rows, valid_cols;
  int advance;  // tiles the stream advances before it copies (the source then starts that far along)
};

template <class Target, class Swizzle, bool Partial>
struct stream_kernel {
  using target = Target;
  static constexpr const char* name = "stream_kernel";
  static constexpr int max_threads_per_block = threads;
  using tile = strata::copy::tile_copy<std::uint16_t, rows, cols, 16, 16, threads>;
  using stream = strata::copy::tile_stream<tile>;
  struct shared_storage {
    alignas(128) std::uint16_t stage[rows * cols];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const stream_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    for (int i = t; i < rows * cols; i += threads) s.stage[i] = stage_poison;
    ctx.block().sync();
    stream st(ctx, p.in, p.ld, p.valid_rows);
    for (int a = 0; a < p.advance; ++a) st.advance();
    if constexpr (Target::atoms.has(arch::atom_family::cp_async)) {
      if constexpr (Partial) st.template copy_async_partial<cols, Swizzle>(ctx, s.stage, p.valid_cols);
      else st.template copy_async<cols, Swizzle>(ctx, s.stage);
      strata::copy::cp_async_commit(ctx);
      strata::copy::cp_async_wait_all(ctx);
    } else {
      typename stream::staged r;
      if constexpr (Partial) st.load_partial(ctx, r, p.valid_cols);
      else st.load(ctx, r);
      st.template store<cols, Swizzle>(ctx, r, s.stage);
    }
    ctx.block().sync();
    for (int i = t; i < rows * cols; i += threads) p.out[i] = s.stage[Swizzle{}(i)];
  }
};

template <class Target, class Swizzle, bool Partial>
void check_stream(int valid_rows, int valid_cols, int advance) {
  const long long ld = 3 * cols + 8;  // rows 16-byte aligned, not a multiple of the tile
  std::vector<std::uint16_t> src(static_cast<std::size_t>(rows) * ld);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint16_t>(1 + (i * 2654435761u) % 60000);
  const bool register_path = !Target::atoms.has(arch::atom_family::cp_async);
  for (const auto& opt : schedules()) {
    strata::stream s;
    s.set_emulator_options(opt);
    auto in = to_device(s, src);
    auto out = poisoned<std::uint16_t>(s, static_cast<std::size_t>(rows) * cols, 0xDEAD);
    strata::launch(s, {.grid = 1, .block = threads}, stream_kernel<Target, Swizzle, Partial>{},
                   stream_params{in.data(), out.data(), ld, valid_rows, valid_cols, advance});
    const auto o = to_host(s, out);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const int k = advance * cols + c;
        std::uint16_t want = 0;
        if (c < valid_cols || !Partial) {
          if (r < valid_rows) want = src[static_cast<std::size_t>(r) * ld + k];
          else if (register_path) want = src[static_cast<std::size_t>(advance * cols + c % 8)];  // the run's first vector
        }
        INFO(Target::name << " swizzle bits " << Swizzle::bits << (Partial ? " partial" : " whole") << " rows "
                          << valid_rows << " cols " << valid_cols << " at (" << r << ", " << c << ")");
        REQUIRE(o[static_cast<std::size_t>(r) * cols + c] == want);
      }
  }
}

template <class Target, class Swizzle>
void check_target() {
  check_stream<Target, Swizzle, false>(rows, cols, 0);
  check_stream<Target, Swizzle, false>(37, cols, 2);  // rows past the source's end, an advanced run
  // K residues: inside the first vector, on a vector boundary, inside a later one, none, all.
  for (int valid_cols : {3, 8, 13, 0, cols}) check_stream<Target, Swizzle, true>(rows, valid_cols, 1);
  check_stream<Target, Swizzle, true>(5, 21, 0);
}

// A run down the rows whose columns end (copy::stream_edge::columns: the GEMM's K loop over a
// column-major A or a row-major B): a 32 x 64 tile into a padded stage (72-element rows), advanced
// `advance` tiles, then copied whole, or (Partial) with only `valid_rows` rows, `ahead` tiles further on.
constexpr int col_rows = 32, col_cols = 64, col_stage_ld = col_cols + 8;

struct column_params {
  const std::uint16_t* in;
  std::uint16_t* out;  // col_rows x col_cols, the stage read back
  long long ld;
  int valid_rows, valid_cols;
  int advance, ahead;
};

template <bool Partial>
struct column_stream_kernel {
  using target = arch::sm80;
  static constexpr const char* name = "column_stream_kernel";
  static constexpr int max_threads_per_block = threads;
  using tile = strata::copy::tile_copy<std::uint16_t, col_rows, col_cols, 16, 16, threads>;
  using stream = strata::copy::tile_stream<tile, strata::copy::stream_edge::columns>;
  struct shared_storage {
    alignas(128) std::uint16_t stage[col_rows * col_stage_ld];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const column_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    for (int i = t; i < col_rows * col_stage_ld; i += threads) s.stage[i] = stage_poison;
    ctx.block().sync();
    stream st(ctx, p.in, p.ld, p.valid_cols);
    for (int a = 0; a < p.advance; ++a) st.advance(col_rows * p.ld);
    if constexpr (Partial) st.template copy_async_rows<col_stage_ld>(ctx, s.stage, p.valid_rows, p.ahead * col_rows * p.ld);
    else st.template copy_async<col_stage_ld>(ctx, s.stage);
    strata::copy::cp_async_commit(ctx);
    strata::copy::cp_async_wait_all(ctx);
    ctx.block().sync();
    for (int i = t; i < col_rows * col_cols; i += threads) p.out[i] = s.stage[(i / col_cols) * col_stage_ld + i % col_cols];
  }
};

template <bool Partial>
void check_column_stream(int valid_rows, int valid_cols, int advance, int ahead) {
  const long long ld = col_cols + 8;  // rows 16-byte aligned
  // The source ends where the last tile's valid part does: a read past it is reported by the emulator.
  const int last_row = (advance + ahead) * col_rows + (Partial ? valid_rows : col_rows) - 1;
  std::vector<std::uint16_t> src(static_cast<std::size_t>(last_row) * ld + std::max(valid_cols, 1));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint16_t>(1 + (i * 2654435761u) % 60000);
  for (const auto& opt : schedules()) {
    strata::stream s;
    s.set_emulator_options(opt);
    auto in = to_device(s, src);
    auto out = poisoned<std::uint16_t>(s, static_cast<std::size_t>(col_rows) * col_cols, 0xDEAD);
    strata::launch(s, {.grid = 1, .block = threads}, column_stream_kernel<Partial>{},
                   column_params{in.data(), out.data(), ld, valid_rows, valid_cols, advance, ahead});
    const auto o = to_host(s, out);
    for (int r = 0; r < col_rows; ++r)
      for (int c = 0; c < col_cols; ++c) {
        const std::size_t row = static_cast<std::size_t>((advance + ahead) * col_rows + r);
        const bool exists = c < valid_cols && (!Partial || r < valid_rows);
        const std::uint16_t want = exists ? src[row * ld + c] : 0;
        INFO((Partial ? "partial" : "whole") << " rows " << valid_rows << " cols " << valid_cols << " advance " << advance
                                             << " ahead " << ahead << " at (" << r << ", " << c << ")");
        REQUIRE(o[static_cast<std::size_t>(r) * col_cols + c] == want);
      }
  }
}

}  // namespace

TEST_CASE("tile_stream down the rows: columns past the end zero-filled, a partial tile by rows (sm80)", "[copy][stream]") {
  // Columns ending: inside a vector, on a vector boundary, inside the first vector, none, all.
  for (int valid_cols : {61, 56, 3, 0, col_cols}) check_column_stream<false>(col_rows, valid_cols, 1, 0);
  check_column_stream<false>(col_rows, 45, 0, 0);
  // The K residue: rows inside a thread's row step, past it, one, all; at the stream's own tile and
  // tiles ahead of it (the GEMM's residue-first prologue), with the columns ending inside a vector.
  for (int valid_rows : {5, 20, 1, col_rows}) check_column_stream<true>(valid_rows, 61, 0, 2);
  check_column_stream<true>(9, col_cols, 1, 0);
  check_column_stream<true>(31, 13, 2, 1);
}

TEST_CASE("tile_stream: cp.async into plain and XOR-swizzled stages, K residue zero-filled (sm80)", "[copy][stream]") {
  check_target<arch::sm80, strata::no_swizzle>();
  check_target<arch::sm80, strata::swizzle_for<std::uint16_t, cols * 2>>();
}

TEST_CASE("tile_stream: register-staged load / store into plain and XOR-swizzled stages (gfx942)", "[copy][stream]") {
  check_target<arch::gfx942, strata::no_swizzle>();
  check_target<arch::gfx942, strata::swizzle_for<std::uint16_t, cols * 2>>();
}

// copy::tile_stream_transposed (the CDNA GEMM's operand stored along M or N): a 32 x 64 tile (32 K
// rows, 64 columns along M or N) loaded into registers and stored transposed into a 64 x 32 stage,
// plain or XOR-swizzled, on gfx942. Element (r, c) of the tile must land in stage row c, column r.
// Columns past valid_cols: zero (load<true> and load_rows read a straddling vector element by
// element and one wholly past the edge not at all), or, in load<false> (no vector straddles), the
// row's first vector (element c % 8) in a vector wholly past it; rows past valid_rows of a partial
// tile (load_rows): zero. The source ends where the last tile's valid part does, so a read past it is
// reported by the emulator.
namespace {

constexpr int tr_rows = 32, tr_cols = 64;

struct transposed_params {
  const std::uint16_t* in;
  std::uint16_t* out;  // tr_cols x tr_rows, the stage read back in logical order
  long long ld;
  int valid_rows, valid_cols;
  int advance, ahead;
};

template <class Swizzle, bool Partial, bool Straddle>
struct transposed_stream_kernel {
  using target = arch::gfx942;
  static constexpr const char* name = "transposed_stream_kernel";
  static constexpr int max_threads_per_block = threads;
  using tile = strata::copy::tile_copy<std::uint16_t, tr_rows, tr_cols, 16, 16, threads>;
  using stream = strata::copy::tile_stream_transposed<tile>;
  struct shared_storage {
    alignas(128) std::uint16_t stage[tr_cols * tr_rows];
  };

  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const transposed_params& p) const {
    auto& s = ctx.template shared<shared_storage>();
    const int t = ctx.block().thread_rank();
    for (int i = t; i < tr_cols * tr_rows; i += threads) s.stage[i] = stage_poison;
    ctx.block().sync();
    stream st(ctx, p.in, p.ld, p.valid_cols);
    for (int a = 0; a < p.advance; ++a) st.advance(tr_rows * p.ld);
    typename stream::staged r;
    if constexpr (Partial) st.load_rows(ctx, r, p.valid_rows, p.ahead * tr_rows * p.ld);
    else st.template load<Straddle>(ctx, r);
    st.template store<tr_rows, Swizzle>(ctx, r, s.stage);
    ctx.block().sync();
    for (int i = t; i < tr_cols * tr_rows; i += threads) p.out[i] = s.stage[Swizzle{}(i)];
  }
};

template <class Swizzle, bool Partial, bool Straddle = true>
void check_transposed(int valid_rows, int valid_cols, int advance, int ahead) {
  const long long ld = tr_cols + 8;  // rows 16-byte aligned
  const int last_row = (advance + ahead) * tr_rows + (Partial ? valid_rows : tr_rows) - 1;
  std::vector<std::uint16_t> src(static_cast<std::size_t>(last_row) * ld + valid_cols);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint16_t>(1 + (i * 2654435761u) % 60000);
  for (const auto& opt : schedules()) {
    strata::stream s;
    s.set_emulator_options(opt);
    auto in = to_device(s, src);
    auto out = poisoned<std::uint16_t>(s, static_cast<std::size_t>(tr_cols) * tr_rows, 0xDEAD);
    strata::launch(s, {.grid = 1, .block = threads}, transposed_stream_kernel<Swizzle, Partial, Straddle>{},
                   transposed_params{in.data(), out.data(), ld, valid_rows, valid_cols, advance, ahead});
    const auto o = to_host(s, out);
    for (int c = 0; c < tr_cols; ++c)
      for (int r = 0; r < tr_rows; ++r) {
        const std::size_t row = static_cast<std::size_t>((advance + ahead) * tr_rows + r);
        const int vector0 = c / 8 * 8;
        std::uint16_t want = 0;
        if (Partial && r >= valid_rows) want = 0;
        else if (c < valid_cols) want = src[row * ld + c];
        else if (vector0 >= valid_cols && !Partial && !Straddle) want = src[row * ld + c % 8];  // the row's first vector
        INFO("swizzle bits " << Swizzle::bits << (Partial ? " partial" : " whole") << " rows " << valid_rows << " cols "
                             << valid_cols << " advance " << advance << " ahead " << ahead << " at (" << r << ", " << c << ")");
        REQUIRE(o[static_cast<std::size_t>(c) * tr_rows + r] == want);
      }
  }
}

template <class Swizzle>
void check_transposed_stage() {
  // Whole tiles: columns ending inside a vector (element by element), on a vector boundary (no vector
  // straddles: the loop's form without the branch), inside the first vector, all.
  for (int valid_cols : {61, 3, tr_cols}) check_transposed<Swizzle, false>(tr_rows, valid_cols, 1, 0);
  check_transposed<Swizzle, false, false>(tr_rows, 56, 2, 0);
  check_transposed<Swizzle, false, false>(tr_rows, tr_cols, 0, 0);
  // A partial tile (the K residue) at the stream's own tile and tiles ahead of it.
  for (int valid_rows : {5, 1, tr_rows}) check_transposed<Swizzle, true>(valid_rows, 61, 0, 2);
  check_transposed<Swizzle, true>(17, 40, 1, 0);
}

}  // namespace

TEST_CASE("tile_stream_transposed: register-staged, stored transposed into plain and XOR-swizzled stages (gfx942)",
          "[copy][stream]") {
  check_transposed_stage<strata::no_swizzle>();
  check_transposed_stage<strata::swizzle_for<std::uint16_t, tr_rows * 2>>();
}
