# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# examples/pytorch/setup.py -- builds Strata's PyTorch operators (see README.md):
#
#   pip install --no-build-isolation examples/pytorch       (or: python3 setup.py build_ext --inplace)
#
# strata_torch_cpu   strata_ops.cpp as C++ (the host emulator): the operators for CPU tensors, and
#                    the operator schemas. Needs Boost.Context (Debian: libboost-context-dev).
# strata_torch_cuda  strata_ops_cuda.cu with nvcc (C++20: CUDA 12+), for CUDA tensors; built when
#                    torch has CUDA and CUDA_HOME is found, or STRATA_TORCH_CUDA=1 forces it
#                    (STRATA_TORCH_CUDA=0 leaves it out). Architectures: TORCH_CUDA_ARCH_LIST
#                    (sm80+; Strata's GEMM and attention need mma.sync).
#
# Both libraries link Strata's entries precompiled (kernel_pieces.py: the pieces of
# strata_add_kernel_library, built in parallel by ninja; MAX_JOBS sets the width).
import os
import sys
from pathlib import Path

from setuptools import setup
from torch.utils import cpp_extension

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
import kernel_pieces  # noqa: E402

include = str(here.parent.parent / "include")
# torch adds -std=c++17; the later -std=c++20 wins (g++ and nvcc take the last one).
cxx_flags = ["-std=c++20", "-O2", "-fvisibility=hidden"]
pieces = here / "build" / "strata_pieces"

extensions = [
    cpp_extension.CppExtension(
        "strata_torch._strata_torch_cpu",
        ["strata_ops.cpp"] + kernel_pieces.piece_sources(pieces / "cpu", "cpp"),
        include_dirs=[include],
        define_macros=[kernel_pieces.DEFINE],
        extra_compile_args={"cxx": cxx_flags},
        libraries=["boost_context"],
        extra_link_args=["-pthread"],
    )
]

want_cuda = os.environ.get("STRATA_TORCH_CUDA")
import torch  # noqa: E402

if want_cuda == "1" or (want_cuda is None and torch.version.cuda and cpp_extension.CUDA_HOME):
    extensions.append(
        cpp_extension.CUDAExtension(
            "strata_torch._strata_torch_cuda",
            ["strata_ops_cuda.cu"] + kernel_pieces.piece_sources(pieces / "cuda", "cu"),
            include_dirs=[include],
            define_macros=[kernel_pieces.DEFINE],
            extra_compile_args={"cxx": cxx_flags, "nvcc": ["-std=c++20", "-O3", "--expt-relaxed-constexpr"]},
        )
    )

setup(
    name="strata_torch",
    version="0.1.0",
    description="Strata's GEMM, attention and embedding bag as PyTorch operators (example)",
    packages=["strata_torch"],
    ext_modules=extensions,
    cmdclass={"build_ext": cpp_extension.BuildExtension},
)
