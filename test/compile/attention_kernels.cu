// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/compile/attention_kernels.cu -- compiles every shipped attention forward configuration and the
// decode helpers for one GPU target per compile (STRATA_COMPILE_TARGET = sm80, sm90a, sm100a, gfx90a
// or gfx942), so the compile check reads their registers / spills and finds the tensor-core and
// async-copy instructions. "Shipped" = attn::shipped<target, elem, D, Dv>() (config.hpp); what a GPU
// build's host entry throws strata::unsupported for is listed in docs/attention.md with the spills
// that keep it out. Registers per configuration: docs/attention.md, "Compile report".
//
// fp16 / bf16 head dims 32 .. 256 and 192/128 on every target: mma.sync m16n8k16 on NVIDIA (192 and
// 256 with Q staged in shared memory), MFMA 16x16x16 on AMD; fp16 / bf16 512 on NVIDIA (Q in shared
// memory, V split over two blocks); and FMA fp32 head dim 32 on NVIDIA.
// Each configuration twice: attn_fwd_* without the optional score features (soft-cap, ALiBi, dropout:
// what the entries launch unless the options ask for one) and attn_fwdx_* with them; the paged-cache
// form (the decode entry with a block table) for two common head dims, and the decode entry's
// contiguous kernels: the key split on 16-bit mma.sync (config.hpp, forward_tile::split_keys: a kernel
// of its own at every head dim, so compiled here at each bf16 one, at 128 in f16 too, and with the
// optional features at 128 and 256), the standard tile elsewhere (the same kernel as the prefill one
// but at 64 and 128, where prefill takes the tall tile: compiled at 128).
// fp8 e4m3 head dims 32 .. 256 and 192/128 where the target has fp8 tensor cores: mma.sync m16n8k32
// on sm_90a / sm_100a (192 and up with Q in shared memory; 256 not on sm_100a, 40 B of spills), MFMA
// 16x16x32 (OCP bytes on the FNUZ instruction) on gfx940; not on sm_80 or gfx90a, which have none.
//
// compile-timeout 600
// compile-expect-kernels sm_.*|gfx.*: attn_fwd_f16_d32 attn_fwd_f16_d64 attn_fwd_f16_d96 attn_fwd_f16_d128
// compile-expect-kernels sm_.*|gfx.*: attn_fwd_bf16_d32 attn_fwd_bf16_d64 attn_fwd_bf16_d96 attn_fwd_bf16_d128
// compile-expect-kernels sm_.*|gfx.*: attn_fwd_f16_d192_128 attn_fwd_bf16_d192_128
// compile-expect-kernels sm_.*|gfx.*: attn_fwd_f16_d192 attn_fwd_bf16_d192 attn_fwd_f16_d256 attn_fwd_bf16_d256
// compile-expect-kernels sm_.*: attn_fwd_f32_d32 attn_fwd_f16_d512 attn_fwd_bf16_d512
// compile-expect-kernels sm_90a|sm_100a|gfx940: attn_fwd_e4m3_d32 attn_fwd_e4m3_d64 attn_fwd_e4m3_d96 attn_fwd_e4m3_d128
// compile-expect-kernels sm_90a|sm_100a|gfx940: attn_fwd_e4m3_d192 attn_fwd_e4m3_d192_128
// compile-expect-kernels sm_90a|gfx940: attn_fwd_e4m3_d256
// compile-expect-kernels sm_.*|gfx.*: attn_fwdx_f16_d32 attn_fwdx_f16_d64 attn_fwdx_f16_d96 attn_fwdx_f16_d128
// compile-expect-kernels sm_.*|gfx.*: attn_fwdx_bf16_d32 attn_fwdx_bf16_d64 attn_fwdx_bf16_d96 attn_fwdx_bf16_d128
// compile-expect-kernels sm_.*|gfx.*: attn_fwdx_f16_d192_128 attn_fwdx_bf16_d192_128
// compile-expect-kernels sm_.*|gfx.*: attn_fwdx_f16_d192 attn_fwdx_bf16_d192 attn_fwdx_f16_d256 attn_fwdx_bf16_d256
// compile-expect-kernels sm_.*: attn_fwdx_f32_d32 attn_fwdx_f16_d512 attn_fwdx_bf16_d512
// compile-expect-kernels sm_90a|sm_100a|gfx940: attn_fwdx_e4m3_d32 attn_fwdx_e4m3_d64 attn_fwdx_e4m3_d96 attn_fwdx_e4m3_d128
// compile-expect-kernels sm_90a|sm_100a|gfx940: attn_fwdx_e4m3_d192 attn_fwdx_e4m3_d192_128
// compile-expect-kernels sm_90a|gfx940: attn_fwdx_e4m3_d256
// compile-expect-kernels sm_.*|gfx.*: attn_fwd_paged_f16_d64 attn_fwd_paged_bf16_d128 attn_fwd_decode_f16_d128 attn_fwd_decode_bf16_d128
// compile-expect-kernels sm_.*: attn_fwd_decode_bf16_d32 attn_fwd_decode_bf16_d64 attn_fwd_decode_bf16_d96 attn_fwd_decode_bf16_d192_128
// compile-expect-kernels sm_.*: attn_fwd_decode_bf16_d192 attn_fwd_decode_bf16_d256 attn_fwdx_decode_bf16_d128 attn_fwdx_decode_bf16_d256
// compile-expect-kernels sm_90a|sm_100a: attn_fwd_decode_bf16_d512
// compile-expect-kernels sm_.*|gfx.*: attn_combine_f16 attn_combine_bf16 attn_append_f16 attn_append_bf16
// compile-expect-code sm_.*: ldmatrix fragment loads = ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
// compile-expect-code sm_.*: ldmatrix.trans fragment loads = ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16
// compile-expect-code sm_.*: tensor-core MMA = mma\.sync\.aligned\.m16n8k16
// compile-expect-code sm_.*: async global->shared copies = cp\.async
// compile-expect-code gfx.*: matrix cores = v_mfma_f32_16x16x16
// compile-expect-code sm_90a|sm_100a: fp8 tensor-core MMA = mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e4m3\.e4m3
// compile-expect-code gfx940: fp8 matrix cores = v_mfma_f32_16x16x32_fp8_fp8
#include <type_traits>

#include "strata/attention.hpp"

#ifndef STRATA_COMPILE_TARGET
#error "compile with -DSTRATA_COMPILE_TARGET=<arch descriptor>, e.g. sm80 or gfx90a"
#endif

// tag, element, QK head dim, V head dim
#define STRATA_ATTN_CONFIGS(X)                                                                             \
  X(f16_d32, f16, 32, 32) X(f16_d64, f16, 64, 64) X(f16_d96, f16, 96, 96) X(f16_d128, f16, 128, 128)     \
  X(f16_d192_128, f16, 192, 128) X(bf16_d32, bf16, 32, 32) X(bf16_d64, bf16, 64, 64)                     \
  X(bf16_d96, bf16, 96, 96) X(bf16_d128, bf16, 128, 128) X(bf16_d192_128, bf16, 192, 128)                \
  X(f16_d192, f16, 192, 192) X(bf16_d192, bf16, 192, 192) X(f16_d256, f16, 256, 256)                     \
  X(bf16_d256, bf16, 256, 256) X(f32_d32, float, 32, 32) X(e4m3_d32, f8_e4m3, 32, 32) X(e4m3_d64, f8_e4m3, 64, 64)   \
  X(e4m3_d96, f8_e4m3, 96, 96) X(e4m3_d128, f8_e4m3, 128, 128) X(e4m3_d192, f8_e4m3, 192, 192)                  \
  X(e4m3_d256, f8_e4m3, 256, 256) X(e4m3_d192_128, f8_e4m3, 192, 128) X(f16_d512, f16, 512, 512)                \
  X(bf16_d512, bf16, 512, 512)

namespace strata_test {
using target = strata::arch::STRATA_COMPILE_TARGET;
namespace A = strata::attn;
using strata::bf16;
using strata::f16;
using strata::f8_e4m3;
// Named wrappers, so that the report lists each configuration; a configuration not shipped on this
// target is declared but never launched (with a placeholder tile where none fits) so that the list
// stays one macro.
// The plain kernel takes the tall query tile where it applies (config.hpp, forward_tile), the kernel
// with the optional features the standard one and the decode entry's kernels the key split, as the
// host entries do.
#define STRATA_ATTN_CFG(E, D, DV, TILE)                                                                       \
  (A::default_config<target, E, D, DV, TILE>().block_n > 0 ? A::default_config<target, E, D, DV, TILE>()      \
                                                           : A::kernel_config{16, 4, 2})
#define STRATA_ATTN_WRAP(tag, E, D, DV)                                                                          \
  struct attn_fwd_##tag : A::forward_kernel<E, D, DV, target, STRATA_ATTN_CFG(E, D, DV, A::forward_tile::tall),  \
                                            A::no_score_mod, A::no_mask_mod, A::score_features::none> {};          \
  struct attn_fwdx_##tag : A::forward_kernel<E, D, DV, target, STRATA_ATTN_CFG(E, D, DV, A::forward_tile::standard), \
                                             A::no_score_mod, A::no_mask_mod, A::score_features::any> {};
STRATA_ATTN_CONFIGS(STRATA_ATTN_WRAP)
#undef STRATA_ATTN_WRAP
// attention_decode's kernels (the key split where it applies, else the standard tile), contiguous and
// paged; attn_fwdx_decode_* with the optional score features (decode takes soft-cap and ALiBi).
#define STRATA_ATTN_DECODE(name, E, D, DV, F, KV)                                                                         \
  struct name : A::forward_kernel<E, D, DV, target, STRATA_ATTN_CFG(E, D, DV, A::forward_tile::split_keys), A::no_score_mod, \
                                  A::no_mask_mod, A::score_features::F, A::kv_storage::KV> {};
STRATA_ATTN_DECODE(attn_fwd_decode_f16_d128, f16, 128, 128, none, contiguous)
STRATA_ATTN_DECODE(attn_fwd_decode_bf16_d128, bf16, 128, 128, none, contiguous)
STRATA_ATTN_DECODE(attn_fwd_paged_f16_d64, f16, 64, 64, none, paged)
STRATA_ATTN_DECODE(attn_fwd_paged_bf16_d128, bf16, 128, 128, none, paged)
// The key split's other kernels (NVIDIA only: elsewhere they are the prefill ones).
#define STRATA_ATTN_DECODE_SPLIT(X)                                                                                         \
  X(attn_fwd_decode_bf16_d32, bf16, 32, 32, none) X(attn_fwd_decode_bf16_d64, bf16, 64, 64, none)                           \
  X(attn_fwd_decode_bf16_d96, bf16, 96, 96, none) X(attn_fwd_decode_bf16_d192_128, bf16, 192, 128, none)                    \
  X(attn_fwd_decode_bf16_d192, bf16, 192, 192, none) X(attn_fwd_decode_bf16_d256, bf16, 256, 256, none)                     \
  X(attn_fwd_decode_bf16_d512, bf16, 512, 512, none) X(attn_fwdx_decode_bf16_d128, bf16, 128, 128, any)                     \
  X(attn_fwdx_decode_bf16_d256, bf16, 256, 256, any)
#define STRATA_ATTN_DECODE_WRAP(name, E, D, DV, F) STRATA_ATTN_DECODE(name, E, D, DV, F, contiguous)
STRATA_ATTN_DECODE_SPLIT(STRATA_ATTN_DECODE_WRAP)
#undef STRATA_ATTN_DECODE_WRAP
#undef STRATA_ATTN_DECODE
#undef STRATA_ATTN_CFG
struct attn_combine_f16 : A::combine_kernel<f16, target> {};
struct attn_combine_bf16 : A::combine_kernel<bf16, target> {};
struct attn_append_f16 : A::append_kernel<f16, target> {};
struct attn_append_bf16 : A::append_kernel<bf16, target> {};

#define STRATA_ATTN_LAUNCH(tag, E, D, DV)                                                                  \
  if constexpr (A::shipped<Target, E, D, DV>()) {                                                          \
    strata::launch(s, {.grid = {8}, .block = {attn_fwd_##tag::max_threads_per_block}}, attn_fwd_##tag{}, fp);   \
    strata::launch(s, {.grid = {8}, .block = {attn_fwdx_##tag::max_threads_per_block}}, attn_fwdx_##tag{}, fp); \
  }

// Never called: only instantiated, so that every shipped kernel is compiled for the device (a
// template, so that `if constexpr` discards the configurations this target does not ship).
template <class Target>
void compile_attention(strata::stream& s) {
  const A::detail::forward_params fp{};
  STRATA_ATTN_CONFIGS(STRATA_ATTN_LAUNCH)
  strata::launch(s, {.grid = {8}, .block = {attn_fwd_decode_f16_d128::max_threads_per_block}}, attn_fwd_decode_f16_d128{}, fp);
  strata::launch(s, {.grid = {8}, .block = {attn_fwd_decode_bf16_d128::max_threads_per_block}}, attn_fwd_decode_bf16_d128{}, fp);
  strata::launch(s, {.grid = {8}, .block = {attn_fwd_paged_f16_d64::max_threads_per_block}}, attn_fwd_paged_f16_d64{}, fp);
  strata::launch(s, {.grid = {8}, .block = {attn_fwd_paged_bf16_d128::max_threads_per_block}}, attn_fwd_paged_bf16_d128{}, fp);
  // Launched only where they are key-split kernels (a kernel of their own); 512 where it is shipped
  // and its split fits (not sm_80's shared memory, where decode takes the standard tile: the prefill kernel).
#define STRATA_ATTN_DECODE_LAUNCH(name, E, D, DV, F)                                                       \
  if constexpr (name::key_split && A::shipped<Target, E, D, DV>())                                        \
    strata::launch(s, {.grid = {8}, .block = {name::max_threads_per_block}}, name{}, fp);
  STRATA_ATTN_DECODE_SPLIT(STRATA_ATTN_DECODE_LAUNCH)
#undef STRATA_ATTN_DECODE_LAUNCH
  strata::launch(s, {.grid = {8}, .block = {Target::warp_size}}, attn_combine_f16{}, A::detail::combine_params{});
  strata::launch(s, {.grid = {8}, .block = {Target::warp_size}}, attn_combine_bf16{}, A::detail::combine_params{});
  strata::launch(s, {.grid = {8}, .block = {Target::warp_size}}, attn_append_f16{}, A::detail::append_params{});
  strata::launch(s, {.grid = {8}, .block = {Target::warp_size}}, attn_append_bf16{}, A::detail::append_params{});
}
#undef STRATA_ATTN_LAUNCH
#undef STRATA_ATTN_DECODE_SPLIT
}  // namespace strata_test

void strata_compile_attention(strata::stream& s) { strata_test::compile_attention<strata_test::target>(s); }
