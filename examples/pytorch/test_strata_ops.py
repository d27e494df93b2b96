#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Strata's PyTorch operators against torch's own: torch.matmul, F.scaled_dot_product_attention and
F.embedding_bag, on CPU tensors (Strata's host emulator) and, where the CUDA library was built and a GPU
exists, on CUDA tensors.

Runs under pytest (python3 -m pytest examples/pytorch/test_strata_ops.py) or alone
(python3 examples/pytorch/test_strata_ops.py). Without torch it prints a SKIP line and exits 0.
The extension is taken from an installed strata_torch, else built in place (JIT, into a temporary
directory) with torch.utils.cpp_extension: the CPU library always, the CUDA one when torch has CUDA.
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

if torch is None:
    try:
        import pytest  # noqa: F401

        pytest.skip("torch is not installed", allow_module_level=True)
    except ImportError:
        pass
    if __name__ == "__main__":
        print("SKIP: torch is not installed; Strata's PyTorch operators were not tested")
        sys.exit(0)


def _build_in_place():
    from torch.utils import cpp_extension

    sys.path.insert(0, str(HERE))
    import kernel_pieces

    import tempfile

    # The entries precompiled in parallel pieces, as setup.py builds them (kernel_pieces.py).
    define = "-D%s=%s" % kernel_pieces.DEFINE
    flags = ["-std=c++20", "-O2", "-fvisibility=hidden", define]
    pieces = Path(tempfile.gettempdir()) / "strata_torch_pieces"
    inc = [str(ROOT / "include")]
    cpu = cpp_extension.load(
        name="_strata_torch_cpu",
        sources=[str(HERE / "strata_ops.cpp")] + kernel_pieces.piece_sources(pieces / "cpu", "cpp"),
        extra_include_paths=inc,
        extra_cflags=flags,
        extra_ldflags=["-lboost_context", "-pthread"],
        is_python_module=False,
        verbose=bool(os.environ.get("STRATA_VERBOSE")),
    )
    del cpu
    if torch.cuda.is_available() and cpp_extension.CUDA_HOME:
        cpp_extension.load(
            name="_strata_torch_cuda",
            sources=[str(HERE / "strata_ops_cuda.cu")] + kernel_pieces.piece_sources(pieces / "cuda", "cu"),
            extra_include_paths=inc,
            extra_cflags=flags,
            extra_cuda_cflags=["-std=c++20", "-O3", "--expt-relaxed-constexpr", define],
            is_python_module=False,
        )
        return True
    return False


def _setup():
    try:
        import strata_torch

        return strata_torch.has_cuda
    except ImportError:
        return _build_in_place()


if torch is not None:
    HAS_CUDA_OPS = _setup()
    DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA_OPS and torch.cuda.is_available() else [])
else:
    DEVICES = []


def _close(got, want, rtol, atol, what):
    got, want = got.float().cpu(), want.float().cpu()
    if not torch.allclose(got, want, rtol=rtol, atol=atol):
        err = (got - want).abs().max().item()
        raise AssertionError(f"{what}: max abs error {err:.3g} (rtol {rtol}, atol {atol})")


TOL = {torch.float32: (1e-4, 1e-4), torch.float16: (2e-2, 2e-2), torch.bfloat16: (5e-2, 5e-2)} if torch else {}


def check_gemm(device):
    g = torch.Generator().manual_seed(1)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for m, n, k in ((37, 29, 45), (1, 1, 1), (64, 130, 17)):
            a = torch.randn(m, k, generator=g).to(device, dtype)
            b = torch.randn(k, n, generator=g).to(device, dtype)
            want = a.float() @ b.float()
            _close(torch.ops.strata.gemm(a, b), want, *TOL[dtype], f"gemm {m}x{n}x{k} {dtype} {device}")
            _close(torch.ops.strata.gemm(a, b.t().contiguous().t()), want, *TOL[dtype], f"gemm col-major b {dtype}")


def check_attention(device):
    g = torch.Generator().manual_seed(2)
    for dtype in (torch.float32, torch.bfloat16):
        for b, h, hk, sq, sk, d, causal in ((2, 4, 2, 37, 53, 64, False), (1, 2, 2, 33, 33, 32, True)):
            q = torch.randn(b, h, sq, d, generator=g).to(device, dtype)
            k = torch.randn(b, hk, sk, d, generator=g).to(device, dtype)
            v = torch.randn(b, hk, sk, d, generator=g).to(device, dtype)
            rep = h // hk
            want = F.scaled_dot_product_attention(
                q.float(), k.float().repeat_interleave(rep, 1), v.float().repeat_interleave(rep, 1), is_causal=causal
            )
            got = torch.ops.strata.attention(q, k, v, causal, None)
            _close(got, want, *TOL[dtype], f"attention {b}x{h}/{hk}x{sq}x{sk}x{d} causal={causal} {dtype} {device}")


def check_embedding_bag(device):
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.float16):
        weight = torch.randn(100, 33, generator=g).to(device, dtype)
        indices = torch.randint(0, 100, (60,), generator=g).to(device)
        offsets = torch.tensor([0, 5, 5, 20, 41], device=device)  # an empty bag too
        for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
            want = F.embedding_bag(indices, weight.float(), offsets, mode=name)
            got = torch.ops.strata.embedding_bag(weight, indices, offsets, mode, None, -1)
            _close(got, want, *TOL[dtype], f"embedding_bag {name} {dtype} {device}")
        psw = torch.rand(60, generator=g).to(device)
        want = F.embedding_bag(indices, weight.float(), offsets, mode="sum", per_sample_weights=psw)
        _close(torch.ops.strata.embedding_bag(weight, indices, offsets, 0, psw, -1), want, *TOL[dtype],
               f"embedding_bag weighted {dtype} {device}")
        want = F.embedding_bag(indices, weight.float(), offsets, mode="sum", padding_idx=indices[0].item())
        _close(torch.ops.strata.embedding_bag(weight, indices, offsets, 0, None, indices[0].item()), want,
               *TOL[dtype], f"embedding_bag padding_idx {dtype} {device}")


def test_gemm():
    for d in DEVICES:
        check_gemm(d)


def test_attention():
    for d in DEVICES:
        check_attention(d)


def test_embedding_bag():
    for d in DEVICES:
        check_embedding_bag(d)


if __name__ == "__main__":
    failed = 0
    for t in (test_gemm, test_attention, test_embedding_bag):
        try:
            t()
            print(f"ok   {t.__name__} on {', '.join(DEVICES)}")
        except Exception as e:  # noqa: BLE001 -- report every failure, then exit non-zero
            failed += 1
            print(f"FAIL {t.__name__}: {e}")
    print("PASS" if failed == 0 else "FAIL")
    sys.exit(1 if failed else 0)
