// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/sm90_tma.hpp -- what the Hopper attention kernels (sm90_forward.hpp,
// sm90_backward.hpp) check and build on the host to read Q, K, V, O and dO by TMA: the tensors' rows
// the copy engine can move, the packed row counts, the kernel's element type and head dims, and the
// 4-D tensor maps over (D, seqlen, heads, batch) with 64-column boxes and the 128-byte swizzle.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "strata/copy/tma.hpp"
#include "strata/ops/attention/host.hpp"

namespace strata::attn::detail {

/// Whether TMA can move the tensor's rows: base 16-byte aligned, row, head and batch strides multiples
/// of 16 bytes.
template <class Elem>
bool sm90_tma_rows(const tensor& t) {
  constexpr long long per16 = 16 / static_cast<long long>(sizeof(Elem));
  return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0 && t.row_stride % per16 == 0 && t.head_stride % per16 == 0 &&
         (t.batch <= 1 || t.batch_stride % per16 == 0);
}

/// The first option, by its name, that only the Hopper kernels' form with extras takes (soft-cap,
/// ALiBi, dropout), or null: what the run_sm90_* entries choose the form by and the short forms refuse.
inline const char* sm90_extra_option(const options& opt) {
  return opt.softcap > 0.f ? "options.softcap" : opt.alibi_slopes ? "options.alibi_slopes"
                           : opt.dropout_p > 0.f ? "options.dropout_p" : nullptr;
}

/// Whether the tensor may be written two elements per 4-byte store.
template <class Elem>
bool sm90_pair_rows(const tensor& t) {
  return reinterpret_cast<std::uintptr_t>(t.data) % (2 * sizeof(Elem)) == 0 && t.row_stride % 2 == 0 && t.head_stride % 2 == 0 &&
         (t.batch <= 1 || t.batch_stride % 2 == 0);
}

/// The checks every Hopper attention kernel makes of its inputs (after the entry's own validation):
/// the element type and head dims it was compiled for, the packed row counts its TMA reads need
/// (`what`: "forward" or "backward"), and rows TMA can move for each of `read`.
template <class Elem, int D>
void sm90_check_inputs(const std::string& op, const char* what, const tensor& q, const tensor& v, const options& opt,
                       std::initializer_list<std::pair<const tensor*, const char*>> read) {
  const strata::dtype want = dtype_of<Elem>();
  if (q.type != want) throw invalid_argument(op, "q", std::string("has dtype ") + to_string(q.type) + " but this kernel is " + to_string(want));
  if (q.dim != D || v.dim != D)
    throw invalid_argument(op, "q", "head dims " + num(q.dim) + "/" + num(v.dim) + " do not match this kernel's " + num(D) + "/" + num(D));
  // Packed sequences are read by TMA from the packed tensors, which must say how many rows they have
  // (the descriptors give the longest sequence only): a box never reads past them.
  if (opt.cu_seqlens_q && opt.total_q <= 0)
    throw invalid_argument(op, "options.total_q", std::string("must be the packed row count of q: the Hopper ") + what + " reads packed rows by TMA");
  if (opt.cu_seqlens_q && opt.total_k <= 0)
    throw invalid_argument(op, "options.total_k", std::string("must be the packed row count of k and v: the Hopper ") + what +
                                                      " reads packed K and V by TMA");
  for (const auto& [t, arg] : read)
    if (!sm90_tma_rows<Elem>(*t))
      throw invalid_argument(op, arg, "is read by TMA: its base must be 16-byte aligned and its row, head and batch strides "
                                      "multiples of 16 bytes (" + num(16 / sizeof(Elem)) + " elements)");
}

/// (D, seqlen, heads, batch) with boxes of 64 columns (128 bytes) x `rows`, swizzled by 128 bytes;
/// packed sequences: (D, total rows, heads, 1), `seq_rows` the packed row count.
template <class Elem>
copy::tensor_map sm90_head_map(const tensor& t, int rows, long long seq_rows, bool packed) {
  copy::tma_tensor m;
  m.base = t.data;
  m.element_bytes = int(sizeof(Elem));
  m.rank = 4;
  m.dims[0] = t.dim;
  m.dims[1] = seq_rows;
  m.dims[2] = t.heads;
  m.dims[3] = packed ? 1 : t.batch;
  const long long e = static_cast<long long>(sizeof(Elem));
  m.strides[1] = t.row_stride * e;
  m.strides[2] = t.head_stride * e;
  m.strides[3] = m.dims[3] > 1 ? t.batch_stride * e : 16;  // one batch entry: any stride the TMA takes (never stepped)
  m.box[0] = 64;
  m.box[1] = rows;
  m.box[2] = 1;
  m.box[3] = 1;
  m.swizzle = copy::tma_swizzle::b128;
  return copy::make_tensor_map(m);
}

/// Runs `run(kernel)` with the form of a Hopper attention kernel (sm90_forward_kernel,
/// sm90_backward_kernel: template <Elem, D, Extras, ScoreMod, MaskMod>) that the call needs: the
/// form with extras carrying the mods when there are any, the form with extras (no mods) when the
/// options ask for soft-cap, ALiBi or dropout, and the plain form otherwise.
template <template <class, int, bool, class, class> class Kernel, class Elem, int D, class ScoreMod, class MaskMod, class Run>
void with_sm90_form(const options& opt, const ScoreMod& score_mod, const MaskMod& mask_mod, const Run& run) {
  using with_mods = Kernel<Elem, D, true, ScoreMod, MaskMod>;
  if constexpr (with_mods::has_mods) {
    with_mods kernel;
    kernel.score_mod = score_mod;
    kernel.mask_mod = mask_mod;
    run(kernel);
  } else if (sm90_extra_option(opt)) {
    run(Kernel<Elem, D, true, no_score_mod, no_mask_mod>{});
  } else {
    run(Kernel<Elem, D, false, no_score_mod, no_mask_mod>{});
  }
}

}  // namespace strata::attn::detail
