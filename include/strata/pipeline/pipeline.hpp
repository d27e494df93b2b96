// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/pipeline/pipeline.hpp -- a multi-stage producer/consumer pipeline over shared-memory stages,
// shared by GEMM, attention and convolution mainloops.
//
// The block is both producer and consumer: every thread copies its share of the next tile into a free
// stage (producer) and, later, every thread reads a full stage (consumer). `Stages` buffers live in the
// kernel's shared storage; the pipeline only says which buffer to use when and makes the data safe to
// read. A mainloop over k_tiles tiles:
//
//   auto pipe = strata::make_pipeline<Stages>(ctx);
//   for (int s = 0; s < Stages - 1; ++s) {                 // prologue: fill Stages-1 stages
//     const int st = pipe.producer_acquire();
//     if (s < k_tiles) pipe.copy_tile<Tile>(smem.stage[st], ld, src_of(s), src_ld, rows, cols);
//     pipe.producer_commit();                              // always, even when nothing was copied
//   }
//   for (int k = 0; k < k_tiles; ++k) {
//     const int st = pipe.consumer_wait();                 // tile k is in stage st, visible to all
//     const int ps = pipe.producer_acquire();              // refill the stage tile k-1 used
//     if (k + Stages - 1 < k_tiles) pipe.copy_tile<Tile>(smem.stage[ps], ...tile k + Stages - 1...);
//     pipe.producer_commit();
//     ... read smem.stage[st] ...
//     pipe.consumer_release();
//   }
//
// Stage/phase protocol. Stages are used round-robin: the producer fills stage w = produced % Stages,
// the consumer reads stage r = consumed % Stages. A stage's phase is the parity of the times it was
// filled (produced / Stages % 2), which is what an mbarrier-based pipeline (TMA, sm90) waits on; here
// `read_phase()` / `write_phase()` report it for such extensions and for debugging. Invariants:
//   - the producer may hold at most Stages stages ahead of the consumer: producer_acquire() needs a stage
//     that is neither filled-and-unread nor being read;
//   - consumer_wait() returns stage r only after every thread's copies into it have landed and a block
//     barrier has made them visible to every thread: on cp.async targets (sm80+) it is
//     cp.async.wait_group<Stages-2> (the Stages-2 newest groups may still fly) then block.sync(); on
//     targets without cp.async (host, gfx) copies are plain loads, done at issue, and it is block.sync();
//   - the barrier inside consumer_wait() also orders the reads of the previous tile before any thread's
//     refill of that stage, so a producer_acquire() after consumer_wait() never overwrites a stage that
//     another thread still reads (the write-after-read hazard needs no second barrier);
//   - producer_commit() is called once per acquire, also when the tail has nothing to copy: an empty
//     group keeps the count of groups in flight at Stages-1, which wait_group<Stages-2> relies on.
// On the emulator the bookkeeping is checked (a consumer_wait() with no committed stage, an acquire that
// would overwrite a stage in use are reported as kernel bugs), and cp.async destinations stay poisoned
// until their wait: a consumer that reads a stage before consumer_wait() reads NaN.
#pragma once

#include <string>

#include "strata/arch/target.hpp"
#include "strata/config/config.hpp"
#include "strata/copy/cp_async.hpp"
#include "strata/copy/tile.hpp"

namespace strata {

template <int Stages, class Ctx>
class pipeline {
  static_assert(Stages >= 2, "strata::pipeline needs at least 2 stages (one filling while one is read)");
  static_assert(Stages <= 32, "strata::pipeline: more than 32 stages is surely a configuration mistake");

 public:
  static constexpr int stages = Stages;
  /// True where copies are asynchronous (cp.async): on targets with atom_family::cp_async.
  static constexpr bool asynchronous = Ctx::target::atoms.has(arch::atom_family::cp_async);

  STRATA_HOST_DEVICE explicit pipeline(Ctx& ctx) : ctx_(&ctx) {}

  /// The stage the producer fills next; copy into it, then producer_commit().
  STRATA_HOST_DEVICE int producer_acquire() {
    if constexpr (Ctx::emulated) {
      if (produced_ - consumed_ >= Stages)  // stages filled and not yet released (one may be being read)
        kernel_bug(ctx_->emulated_thread(),
                   "pipeline: producer_acquire() with all " + std::to_string(Stages) +
                       " stages filled or being read: it would overwrite a stage the consumer has not released");
    }
    return write_index();
  }

  /// Copies one tile into stage memory `dst` with this pipeline's copy: cp.async where the target has it,
  /// plain vector loads elsewhere. Out-of-range elements are zero-filled.
  template <class Tile, class T>
  STRATA_HOST_DEVICE void copy_tile(T* dst, int dst_ld, const T* src, long long src_ld, int valid_rows = Tile::rows,
                                    int valid_cols = Tile::cols) {
    if constexpr (asynchronous) Tile::block_copy_async(*ctx_, dst, dst_ld, src, src_ld, valid_rows, valid_cols);
    else Tile::template block_copy<copy::fill::zero>(*ctx_, dst, dst_ld, src, src_ld, valid_rows, valid_cols);
  }

  /// Copies one tile transposed into stage memory: element (r, c) at dst[c * dst_ld + r]
  /// (tile_copy::block_copy_transposed). Synchronous targets only: cp.async moves whole vectors.
  /// `column_of(r)`: the column row r lands in (default r; a permutation, see block_copy_transposed).
  template <class Tile, class T, class ColumnOf = copy::identity_column>
  STRATA_HOST_DEVICE void copy_tile_transposed(T* dst, int dst_ld, const T* src, long long src_ld, int valid_rows = Tile::rows,
                                               int valid_cols = Tile::cols, ColumnOf column_of = {}) {
    static_assert(!asynchronous, "pipeline::copy_tile_transposed: cp.async cannot transpose; only for synchronous targets");
    Tile::block_copy_transposed(*ctx_, dst, dst_ld, src, src_ld, valid_rows, valid_cols, column_of);
  }

  /// Gathers one tile into stage memory `dst`: vector (r, c) from src(r, c), zeros where it returns
  /// nullptr (tile_copy::block_gather). cp.async where the target has it and the vector is 4, 8 or 16
  /// bytes, plain loads otherwise. `fallback`: a readable address aligned to the vector width.
  template <class Tile, class T, class Src>
  STRATA_HOST_DEVICE void gather_tile(T* dst, int dst_ld, const T* fallback, Src&& src) {
    if constexpr (asynchronous && Tile::vector_bytes >= 4) Tile::block_gather_async(*ctx_, dst, dst_ld, fallback, src);
    else Tile::block_gather(*ctx_, dst, dst_ld, src);
  }

  /// Closes the stage being filled (cp.async.commit_group; nothing on the portable path).
  STRATA_HOST_DEVICE void producer_commit() {
    if constexpr (asynchronous) copy::cp_async_commit(*ctx_);
    ++produced_;
    if constexpr (!power_of_two) write_ = next(write_);
  }

  /// Waits until the oldest filled stage has landed and is visible to the whole block; returns it.
  STRATA_HOST_DEVICE int consumer_wait() {
    if constexpr (Ctx::emulated) {
      if (produced_ == consumed_)
        kernel_bug(ctx_->emulated_thread(), "pipeline: consumer_wait() with no committed stage to wait for");
      if (reading_)
        kernel_bug(ctx_->emulated_thread(), "pipeline: consumer_wait() before consumer_release() of the previous stage");
    }
    if constexpr (asynchronous) {
      // Exactly produced - consumed groups are in flight; all but the newest (that count - 1) must land.
      // In the steady state that count is Stages - 1, so the compile-time wait is Stages - 2; in a loop
      // that has filled fewer stages (short prologues) wait for everything.
      if (produced_ - consumed_ >= Stages - 1) copy::cp_async_wait<Stages - 2>(*ctx_);
      else copy::cp_async_wait<0>(*ctx_);
    }
    return enter_stage();
  }

  /// consumer_wait() for a loop that keeps Stages - 1 stages committed ahead of the consumer (one
  /// commit, empty or not, per stage consumed): the wait is then always for all but the newest
  /// Stages - 2 groups, with no run-time choice (a branch per K step in the GEMM's double-buffered
  /// loop). The emulator checks the count.
  STRATA_HOST_DEVICE int consumer_wait_steady() {
    if constexpr (Ctx::emulated) {
      if (produced_ - consumed_ != Stages - 1)
        kernel_bug(ctx_->emulated_thread(), "pipeline: consumer_wait_steady() with " + std::to_string(produced_ - consumed_) +
                                                " stages committed ahead, not Stages - 1 = " + std::to_string(Stages - 1));
      if (reading_)
        kernel_bug(ctx_->emulated_thread(), "pipeline: consumer_wait_steady() before consumer_release() of the previous stage");
    }
    if constexpr (asynchronous) copy::cp_async_wait<Stages - 2>(*ctx_);
    return enter_stage();
  }

  /// Hands the stage read since consumer_wait() back to the producer.
  STRATA_HOST_DEVICE void consumer_release() {
    if constexpr (Ctx::emulated) {
      if (!reading_)
        kernel_bug(ctx_->emulated_thread(), "pipeline: consumer_release() without a consumer_wait()");
    }
    reading_ = false;
    ++consumed_;
    if constexpr (!power_of_two) read_ = next(read_);
  }

  /// The stage consumer_wait() returns next. For inspection only: reading it before consumer_wait() races
  /// with its copies (the emulator shows NaN poison there).
  STRATA_HOST_DEVICE int read_stage() const { return read_index(); }
  STRATA_HOST_DEVICE int write_stage() const { return write_index(); }
  /// Phase (fill parity) of the stage read next / written next.
  STRATA_HOST_DEVICE int read_phase() const { return (consumed_ / Stages) & 1; }
  STRATA_HOST_DEVICE int write_phase() const { return (produced_ / Stages) & 1; }

 private:
  /// What both consumer waits end with, once the stage's copies have landed: the barrier that makes
  /// them visible to every thread (and orders the previous stage's reads before any refill of it).
  STRATA_HOST_DEVICE int enter_stage() {
    ctx_->block().sync();
    reading_ = true;
    return read_index();
  }

  Ctx* ctx_;
  // Stage indices. With a power-of-two stage count `count % Stages` is one AND of the counter. With
  // another (the GEMM's 3) it compiled to a division (a multiply-high and two more instructions) per
  // use, twice per K step (gemm-forensic.md): those pipelines keep the indices themselves and wrap
  // them by compare and reset. (Kept for every count, the two indices cost the attention forward's
  // 2-stage e4m3 d128 kernel, at 255 registers, a 4-byte spill on sm_90a.)
  static constexpr bool power_of_two = (Stages & (Stages - 1)) == 0;
  STRATA_HOST_DEVICE static int next(int s) { return s + 1 == Stages ? 0 : s + 1; }
  STRATA_HOST_DEVICE int write_index() const {
    if constexpr (power_of_two) return produced_ & (Stages - 1);
    else return write_;
  }
  STRATA_HOST_DEVICE int read_index() const {
    if constexpr (power_of_two) return consumed_ & (Stages - 1);
    else return read_;
  }

  int produced_ = 0;  // stages committed
  int consumed_ = 0;  // stages released
  int write_ = 0;     // produced_ % Stages (kept where Stages is not a power of two)
  int read_ = 0;      // consumed_ % Stages (likewise)
  bool reading_ = false;
};

/// `auto pipe = strata::make_pipeline<3>(ctx);`
template <int Stages, class Ctx>
STRATA_HOST_DEVICE pipeline<Stages, Ctx> make_pipeline(Ctx& ctx) {
  return pipeline<Stages, Ctx>(ctx);
}

}  // namespace strata
