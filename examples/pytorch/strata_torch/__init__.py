# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Strata's operators for PyTorch: importing this registers torch.ops.strata.{gemm, attention, embedding_bag}.

The CPU library (schemas + CPU kernels on Strata's host emulator) loads first; the CUDA library, when it
was built, adds the CUDA kernels. They are separate shared objects on purpose (see strata_ops.cpp).
"""
import importlib.util
from pathlib import Path

import torch

_here = Path(__file__).resolve().parent


def _load(name):
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    if spec is None or spec.origin is None:
        return False
    torch.ops.load_library(spec.origin)
    return True


if not _load("_strata_torch_cpu"):
    raise ImportError("strata_torch: the extension is not built (pip install --no-build-isolation examples/pytorch)")
has_cuda = _load("_strata_torch_cuda")

gemm = torch.ops.strata.gemm
attention = torch.ops.strata.attention
embedding_bag = torch.ops.strata.embedding_bag
