// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/mma/mma.hpp -- umbrella for Strata's MMA atoms and the warp tile built on them.
//
//   layout.hpp      coord, operand, fragment<T, N>, fragment_layout<Atom, operand> (bijection checks)
//   mma_op.hpp      mma<Atom>(warp, a, b, c): one atom on any backend
//   fma.hpp         fma_atom<T, Acc, WarpSize>: scalar FMA, every target
//   mma_sync.hpp    NVIDIA mma.sync m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 s8 / e4m3 / e5m2
//   mfma.hpp        AMD CDNA MFMA 32x32 / 16x16: f16, bf16, int8 (CDNA2 and CDNA3 forms), FNUZ fp8
//   mfma_ocp_fp8.hpp  OCP fp8 (f8_e4m3 / f8_e5m2) on CDNA3's FNUZ MFMA: byte remap, products scaled by 4
//   swapped.hpp     swapped<Atom>: the atom with its operands exchanged (D^T = B^T A^T), tables transposed
//   wgmma.hpp       Hopper warpgroup MMA m64nNk16 / m64nNk32, A from shared memory or registers (sm90a)
//   warp_tile.hpp   warp_tile<Atom, TileM, TileN, TileK>: fragments, loads, stores, the warp's product
//   accumulator_rows.hpp  which accumulator rows a lane holds, row reductions, c_is_a<Atom>
#pragma once

#include "strata/mma/accumulator_rows.hpp"
#include "strata/mma/fma.hpp"
#include "strata/mma/layout.hpp"
#include "strata/mma/mfma.hpp"
#include "strata/mma/mfma_ocp_fp8.hpp"
#include "strata/mma/mma_op.hpp"
#include "strata/mma/mma_sync.hpp"
#include "strata/mma/swapped.hpp"
#include "strata/mma/warp_tile.hpp"
#include "strata/mma/wgmma.hpp"
