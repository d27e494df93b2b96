// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/sass/conv.cu -- the implicit-GEMM fprop tiles the CUDA conv entry launches for bf16 with
// 16-byte gathers (channels-last, channels per group a multiple of 8: include/strata/ops/conv/host.hpp,
// dispatch): the 128 x 128 tile (M > 128) and the 64 x 64 one, on the GEMM mainloop. Their K loops are
// held to test/sass/budgets.txt (`ctest -L sass`): A through conv::fprop_a_stream, B through
// copy::tile_stream (conv::kernel::fprop_streams).
// sass-targets sm_90a
#include "strata/runtime/runtime.hpp"
#include "strata/ops/conv/epilogue.hpp"
#include "strata/ops/conv/kernel.hpp"
#include "strata/ops/gemm/configs.hpp"

namespace sc = strata::ops::conv;
namespace cfg = strata::ops::gemm::configs;
using epilogue = sc::detail::entry_epilogue<strata::bf16>;
template <strata::ops::gemm::shape S>
using fprop_tile = sc::kernel<sc::kind::fprop, strata::arch::sm80, cfg::sm80_atom<strata::bf16>::type, S, epilogue,
                              strata::order::default_for<strata::arch::sm80>, 16>;
struct sass_conv_fprop_bf16_large : fprop_tile<cfg::sm80_large> {};
struct sass_conv_fprop_bf16_medium : fprop_tile<cfg::sm80_medium> {};

template <class K>
void launch_tile(strata::stream& s, const sc::geometry& g, const strata::bf16* x, const strata::bf16* w, strata::bf16* y) {
  const auto p = K::make_params(g, x, w, y, epilogue::make_params({}, {}));
  strata::launch(s, K::launch_shape_of(p), K{}, p);
}

// Never called: instantiates the launches, so that nvcc compiles the kernels.
void sass_conv(strata::stream& s, const sc::geometry& g, const strata::bf16* x, const strata::bf16* w, strata::bf16* y) {
  launch_tile<sass_conv_fprop_bf16_large>(s, g, x, w, y);
  launch_tile<sass_conv_fprop_bf16_medium>(s, g, x, w, y);
}
