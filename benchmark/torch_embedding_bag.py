#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch's embedding_bag on the shapes of strata_bench_embedding, for the comparison issue 7 asks for.

    python3 benchmark/torch_embedding_bag.py [--tables 32] [--rows 1000000] [--dim 128] [--batch 8192]
                                             [--pooling-factor 32] [--dtype fp16|fp32] [--reps 20]

Reports GB/s of useful bytes counted as strata_bench_embedding counts them (rows read, int64 indices
and offsets, fp32 output). One nn.functional.embedding_bag call per table (PyTorch has no table
batching). Skips with a message (exit 0) where torch or a CUDA device is absent.
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("tables", 32), ("rows", 1000000), ("dim", 128), ("batch", 8192), ("pooling-factor", 32), ("reps", 20)]:
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device visible to torch")
        return 0
    dt = torch.float16 if a.dtype == "fp16" else torch.float32
    dev = torch.device("cuda")
    T, R, D, B, L = a.tables, a.rows, a.dim, a.batch, a.pooling_factor
    weights = [torch.randn(R, D, device=dev, dtype=dt) for _ in range(T)]
    idx = [torch.randint(0, R, (B * L,), device=dev) for _ in range(T)]
    off = torch.arange(0, B * L, L, device=dev)

    def run():
        return [torch.nn.functional.embedding_bag(idx[t], weights[t], off, mode="sum") for t in range(T)]

    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(a.reps):
        run()
    end.record()
    end.synchronize()
    sec = start.elapsed_time(end) / 1e3 / a.reps
    row_bytes = D * (2 if dt == torch.float16 else 4)
    useful = T * B * L * (row_bytes + 8) + (T * B + 1) * 8 + T * B * D * 4
    print(f"device: {torch.cuda.get_device_name()}")
    print(f"torch embedding_bag {a.dtype} T={T} R={R} D={D} B={B} L={L}: {sec * 1e3:.3f} ms, {useful / sec / 1e9:.1f} GB/s useful")
    return 0


if __name__ == "__main__":
    sys.exit(main())
