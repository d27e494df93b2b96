#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Plot the locality simulator's comparison of tile orders (docs/img/chiplet_sim.svg).

Runs chiplet_sim for the configurations of docs/chiplets.md (8192^3 bf16 GEMM, 256x256x64 tiles; GQA
attention forward, batch 2, 64 query / 8 KV heads, 4096 tokens, d 128, 128x64 tiles) on the gfx942 and
gfx950 models, writes the rows to docs/img/chiplet_sim.csv and draws the bytes fetched from below L2 per
order. Needs matplotlib (a one-off: pip install matplotlib); nothing in the build or tests runs this.

    python3 tools/plot_chiplet_sim.py --sim build/host/tools/chiplet_sim
"""
import argparse
import csv
import io
import pathlib
import subprocess

CONFIGS = [
    ("gemm", ["--m", "8192", "--n", "8192", "--k", "8192", "--tile", "256x256x64"], "GEMM 8192³ bf16, 256×256×64"),
    ("attention", ["--batch", "2", "--heads", "64", "--heads-k", "8", "--seqlen-q", "4096", "--head-dim", "128",
                   "--tile", "128x64"], "GQA attention fwd, 64/8 heads, 4096 tokens"),
]
TARGETS = ["gfx942", "gfx950"]


def run(sim, mode, args, target):
    out = subprocess.run([sim, mode, *args, "--target", target, "--csv"], check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True, help="path to the chiplet_sim executable")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent / "docs/img/chiplet_sim.svg"))
    a = ap.parse_args()

    rows = []
    for mode, args, _ in CONFIGS:
        for t in TARGETS:
            rows += run(a.sim, mode, args, t)
    out = pathlib.Path(a.out)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: a small, diffable SVG
    import matplotlib.pyplot as plt

    orders = list(dict.fromkeys(r["order"] for r in rows))
    fig, axes = plt.subplots(1, len(CONFIGS), figsize=(13, 6), sharey=True)
    height = 0.38
    for ax, (mode, _, title) in zip(axes, CONFIGS):
        for j, t in enumerate(TARGETS):
            by = {r["order"]: int(r["bytes_below_l2"]) / 2**30 for r in rows if r["mode"] == mode and r["target"] == t}
            ys = [i + (j - 0.5) * height for i in range(len(orders))]
            ax.barh(ys, [by[o] for o in orders], height=height, label=f"{t} model")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("bytes fetched from below the L2s (GiB, modelled)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(orders)))
    axes[0].set_yticklabels(orders, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle("Strata locality simulator: L2 traffic per tile order (a model, not a measurement)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out} and {out.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
