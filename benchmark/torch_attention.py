#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""benchmark/torch_attention.py -- PyTorch's scaled_dot_product_attention (flash and cuDNN backends)
on the shapes of strata_bench_attention, in TFLOP/s with FlashAttention's FLOP convention
(forward 4*B*H*S*S*D, halved when causal; backward 2.5x the forward; decode 4*B*H*1*SK*D).

    python3 benchmark/torch_attention.py [--batch 4] [--heads 16] [--seqlen 4096] [--dim 128]
                                         [--dtype bf16] [--causal] [--decode-seqlen-k 8192]
                                         [--strata build/benchmark/strata_bench_attention]

With --strata it also runs that binary with the same arguments and prints its lines, so both
columns come from the same run. Skips (exit 0) when torch or a CUDA device is absent.
"""
import argparse
import subprocess
import sys


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seqlen", type=int, default=4096)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--decode-seqlen-k", type=int, default=8192)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--strata", default=None, help="path of strata_bench_attention to run with the same shapes")
    a = p.parse_args()
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: torch with torch.nn.attention is not available ({e})")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    B, H, S, D = a.batch, a.heads, a.seqlen, a.dim
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    do = torch.randn(B, H, S, D, device="cuda", dtype=dt)
    fwd = 4.0 * B * H * S * S * D * (0.5 if a.causal else 1.0)

    def timed(fn):
        fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(a.reps):
            fn()
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / 1e3 / a.reps

    F = torch.nn.functional.scaled_dot_product_attention
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", getattr(SDPBackend, "CUDNN_ATTENTION", None))):
        if be is None:
            print(f"torch-{name}: backend not in this torch")
            continue
        try:
            with sdpa_kernel(be):
                out = F(q, k, v, is_causal=a.causal)
                t = timed(lambda: F(q, k, v, is_causal=a.causal))
                print(f"torch-{name} forward   {t * 1e3:8.3f} ms  {fwd / t / 1e12:7.1f} TFLOP/s")
                t = timed(lambda: torch.autograd.grad(F(q, k, v, is_causal=a.causal), (q, k, v), do))
                t_b = max(t - timed(lambda: F(q, k, v, is_causal=a.causal)), 1e-9)
                print(f"torch-{name} backward  {t_b * 1e3:8.3f} ms  {2.5 * fwd / t_b / 1e12:7.1f} TFLOP/s")
                SK = a.decode_seqlen_k
                qd = torch.randn(B, H, 1, D, device="cuda", dtype=dt)
                kc, vc = (torch.randn(B, H, SK, D, device="cuda", dtype=dt) for _ in range(2))
                t = timed(lambda: F(qd, kc, vc))
                print(f"torch-{name} decode    {t * 1e3:8.3f} ms  {4.0 * B * H * SK * D / t / 1e12:7.1f} TFLOP/s")
                del out
        except RuntimeError as e:
            print(f"torch-{name}: not available for these shapes ({str(e).splitlines()[0]})")
    if a.strata:
        cmd = [a.strata, "--batch", str(B), "--heads", str(H), "--heads-k", str(H), "--seqlen", str(S), "--dim", str(D),
               "--dtype", a.dtype, "--decode-seqlen-k", str(a.decode_seqlen_k), "--reps", str(a.reps)]
        if a.causal:
            cmd.append("--causal")
        print(subprocess.run(cmd, check=False, capture_output=True, text=True).stdout, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
