#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# benchmark/gpu/run.sh -- everything one GPU lease should answer, in one command, on a CUDA machine:
#   1. the `gpu` checks (benchmark/gpu/checks.txt: the examples' --check runs on odd shapes),
#   2. GEMM against cuBLASLt (strata_bench_gemm: square, LLM and grouped MoE shapes, bf16 and f16;
#      the Hopper kernel, --kernel sm90, on the square and LLM shapes),
#   2b. convolution against cuDNN (strata_bench_conv: ResNet-50 and U-Net layers, fprop/dgrad/wgrad),
#   3. attention forward/backward/decode against PyTorch SDPA (flash and cuDNN backends), and the
#      Hopper forward and backward (--kernel sm90: checked against the mma.sync entry, then timed),
#   4. embedding bags against the device copy bandwidth and torch.nn.functional.embedding_bag,
# and a table of it all in $OUT/summary.md (full output in $OUT/log.txt).
#
#   benchmark/gpu/run.sh [--bin DIR] [--quick]
#                        [--steps "checks gemm conv attention attention-extra embedding sanitizer"]
#                        [--checks REGEX]
#
# --bin DIR: prebuilt binaries, the examples and strata_bench_* of a CUDA build for sm_90a copied into
#   one folder (built elsewhere to save the lease: configure with -DSTRATA_ENABLE_CUDA=ON
#   -DCMAKE_CUDA_ARCHITECTURES=90a -DSTRATA_ENABLE_BENCHMARKS=ON -DSTRATA_ENABLE_TESTS=OFF). Without
#   it, or when DIR lacks them, the script builds them here with nvcc (CMake and ninja; a CUDA build
#   needs no Boost, Catch2 or Google Benchmark).
# --quick: the checks and one size per benchmark only. --steps: the parts to run (default: all seven;
#   attention-extra: the fp8 and head-dim-512 checks and timings).
# --checks REGEX: only the checks whose name matches (e.g. "^(attn|emb)" when only those binaries
#   were carried).
# strata_bench_conv is built only where CMake finds cuDNN (libcudnn and cudnn.h); without it the conv
# step says so and is skipped.
# Every step has its own time limit so that one hung kernel cannot eat the lease; a step that times
# out is reported as such. Exit status: 0 when every check passed and no benchmark reported a wrong
# result, else 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=""
QUICK=0
STEPS="checks gemm conv attention attention-extra embedding sanitizer"
CHECKS=.
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --steps) STEPS="$2"; shift 2 ;;
    --checks) CHECKS="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/build/gpu-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
SUM=$OUT/summary.md
: >"$LOG"
: >"$SUM"
status=0
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
say() { echo "$*" | tee -a "$SUM"; }
log() { echo "$*" >>"$LOG"; }

say "# Strata GPU run, $(date -u '+%Y-%m-%d %H:%M UTC')"
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
say "GPU: ${gpu:-none found}; nvcc: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
[ -n "$gpu" ] || { say "no NVIDIA GPU: nothing to do"; exit 1; }

# ---- binaries -----------------------------------------------------------------------------------------
if [ -z "$BIN" ] || ! ls "$BIN"/strata_bench_* >/dev/null 2>&1; then
  BIN=build/gpu-run/bin
  say "building for sm_90a here (no prebuilt binaries)"
  t0=$(date +%s)
  { cmake -S . -B build/gpu-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
      -DSTRATA_ENABLE_TESTS=OFF -DSTRATA_ENABLE_TOOLS=OFF -DSTRATA_ENABLE_EXAMPLES=ON -DSTRATA_ENABLE_BENCHMARKS=ON &&
    ninja -C build/gpu-run; } >>"$LOG" 2>&1 || { say "build FAILED (see log.txt)"; tail -30 "$LOG"; exit 1; }
  mkdir -p "$BIN"
  cp build/gpu-run/examples/strata_* build/gpu-run/benchmark/strata_bench_* "$BIN"/
  say "built in $(($(date +%s) - t0)) s"
fi
# The CUDA runtime and cuBLASLt come from the toolkit or from PyTorch's wheels, wherever this machine
# has them: add the folder of each library the binaries miss.
for b in "$BIN"/strata_*; do
  for lib in $(ldd "$b" 2>/dev/null | awk '/not found/ {print $1}'); do
    found=$(find /usr/local /opt /usr/lib /usr/lib64 -name "$lib*" 2>/dev/null | head -1)
    [ -n "$found" ] && export LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  done
done
for b in "$BIN"/strata_*; do
  ldd "$b" 2>/dev/null | grep 'not found' >>"$LOG" && say "WARNING: $(basename "$b") misses libraries (log.txt)"
done

# ---- 1. the gpu checks ------------------------------------------------------------------------------
if want checks; then
say ""
say "## Checks (benchmark/gpu/checks.txt)"
CHK=$(mktemp -d)  # one output per check; only log.txt and summary.md go to $OUT
run_check() {  # name binary args...
  local name=$1 bin=$2
  shift 2
  local t0 out rc
  t0=$(date +%s%N)
  out=$(timeout -s KILL 120 "$BIN/$bin" "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" >"$CHK/$name.txt"
  local last verdict
  last=$(printf '%s\n' "$out" | tail -1)
  if [ $rc -eq 0 ] && [ "$last" = "PASS" ]; then verdict=PASS; elif [ $rc -eq 137 ]; then verdict=TIMEOUT; else verdict="FAIL(rc=$rc)"; fi
  printf '%-22s %-12s %6.1fs  %s\n' "$name" "$verdict" "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{print (b-a)/1e9}')" \
    "$(printf '%s\n' "$out" | grep -m1 -i 'error' | cut -c1-100)"
}
export -f run_check
export BIN CHK
grep -E '^[a-z]' benchmark/gpu/checks.txt | awk -v re="$CHECKS" '$1 ~ re' | xargs -P 8 -L 1 bash -c 'run_check "$@"' _ | sort >"$CHK/table"
tee -a "$SUM" <"$CHK/table"
for f in "$CHK"/*.txt; do { echo "== $(basename "$f" .txt)"; tail -5 "$f"; } >>"$LOG"; done
failed=$(grep -vc ' PASS ' "$CHK/table")
[ "$failed" -eq 0 ] || status=1
say "checks failed: $failed"
fi

# ---- 2. GEMM against cuBLASLt ---------------------------------------------------------------------------
CHK=${CHK:-$(mktemp -d)}  # set by the checks step; --steps without it (e.g. "conv") needs its own
bench() {  # limit title command...
  local limit=$1 title=$2
  shift 2
  say ""
  say "## $title"
  local t0=$(date +%s)
  timeout -s KILL "$limit" "$@" >"$CHK/step" 2>&1
  local rc=$?
  cat "$CHK/step" >>"$LOG"
  grep -vE "^(Remark|$)" "$CHK/step" | head -60 | tee -a "$SUM"
  [ $rc -eq 137 ] && say "TIMED OUT after ${limit} s"
  [ $rc -ne 0 ] && { say "exit status $rc"; status=1; }
  say "($(($(date +%s) - t0)) s)"
}
if ! want gemm; then :
elif [ $QUICK -eq 1 ]; then
  bench 60 "GEMM bf16 vs cuBLASLt (quick)" "$BIN/strata_bench_gemm" --m 4096 --n 4096 --k 4096 --reps 10
  bench 60 "GEMM bf16, Hopper kernel (TMA + wgmma) vs cuBLASLt (quick)" "$BIN/strata_bench_gemm" --kernel sm90 --m 4096 --n 4096 --k 4096 --reps 10
else
  bench 90 "GEMM bf16 vs cuBLASLt, squares" "$BIN/strata_bench_gemm" --set square --reps 10
  bench 150 "GEMM bf16 vs cuBLASLt, LLM shapes" "$BIN/strata_bench_gemm" --set llm --reps 10
  bench 60 "GEMM bf16 vs cuBLASLt, grouped MoE" "$BIN/strata_bench_gemm" --set moe --reps 10
  bench 60 "GEMM f16 vs cuBLASLt, squares" "$BIN/strata_bench_gemm" --set square --dtype f16 --reps 10
  # The Hopper kernel (gemm::sm90_kernel, issue 36) on the same shapes: strata::gemm does not pick it yet.
  bench 90 "GEMM bf16, Hopper kernel (TMA + wgmma) vs cuBLASLt, squares" "$BIN/strata_bench_gemm" --kernel sm90 --set square --reps 10
  bench 150 "GEMM bf16, Hopper kernel (TMA + wgmma) vs cuBLASLt, LLM shapes" "$BIN/strata_bench_gemm" --kernel sm90 --set llm --reps 10
  bench 90 "GEMM bf16, Hopper kernel on 2 x 1 clusters (B multicast) vs cuBLASLt, squares" "$BIN/strata_bench_gemm" --kernel sm90c2 --set square --reps 10
fi

# ---- 2b. convolution against cuDNN -----------------------------------------------------------------------
# One table per (set, pass) so that each stays under the summary's 60 lines; the first call of each
# measures cuDNN's algorithms (FindEx), which takes a few seconds per layer.
if ! want conv; then :
elif [ ! -x "$BIN/strata_bench_conv" ]; then
  say ""
  say "## Convolution vs cuDNN: skipped (no strata_bench_conv: the build found no cuDNN)"
elif [ $QUICK -eq 1 ]; then
  bench 90 "Conv f16 vs cuDNN, ResNet-50 fprop, batch 32 (quick)" "$BIN/strata_bench_conv" --set resnet50 --pass fprop --n 32 --reps 10 --heuristic
else
  for pass in fprop dgrad wgrad; do
    bench 150 "Conv f16 vs cuDNN, ResNet-50 $pass, batch 32" "$BIN/strata_bench_conv" --set resnet50 --pass "$pass" --n 32 --reps 10
  done
  bench 240 "Conv f16 vs cuDNN, U-Net fprop/dgrad/wgrad, batch 8" "$BIN/strata_bench_conv" --set unet --pass all --n 8 --reps 10
  bench 150 "Conv bf16 vs cuDNN, ResNet-50 fprop, batch 32" "$BIN/strata_bench_conv" --set resnet50 --pass fprop --dtype bf16 --n 32 --reps 10
fi

# ---- 3. attention against PyTorch SDPA ----------------------------------------------------------------
attn_cfgs=("--dim 128" "--dim 128 --causal" "--dim 64" "--dim 64 --causal")
want attention || attn_cfgs=()
[ $QUICK -eq 1 ] && attn_cfgs=("--dim 128")
for c in ${attn_cfgs[@]+"${attn_cfgs[@]}"}; do
  # shellcheck disable=SC2086
  bench 60 "Attention bf16 B=4 H=16 S=4096 $c (strata, then PyTorch SDPA)" \
    python3 benchmark/torch_attention.py --batch 4 --heads 16 --seqlen 4096 $c --dtype bf16 --strata "$BIN/strata_bench_attention"
done
# The Hopper forward and backward (ops/attention/sm90_forward.hpp, sm90_backward.hpp: TMA + wgmma,
# warp-specialized; issue 37), each checked against the mma.sync entry on the same inputs (its "check ...
# PASS" lines), then timed ("fwd-sm90", "bwd-sm90"; the backward at d64 / d128). PyTorch's figures for
# the same shapes are in the lines above (d256: not compared there).
# The example's --check against the double reference first, on odd shapes (CUDA sm_90a builds only).
if want attention; then
  bench 60 "Check: attention Hopper kernel bf16 d128, GQA, causal, odd shapes" "$BIN/strata_example_attention" --batch 2 \
    --heads 4 --heads-k 2 --seqlen-q 333 --seqlen-k 517 --dim 128 --causal --dtype bf16 --kernel sm90 --check
  bench 60 "Check: attention Hopper kernel fp16 d64 and bf16 d256, windows" "$BIN/strata_example_attention" --batch 1 \
    --heads 3 --heads-k 1 --seqlen-q 200 --seqlen-k 300 --dim 64 --window 50,5 --dtype fp16 --kernel sm90 --check
  bench 60 "Check: attention Hopper kernel bf16 d256" "$BIN/strata_example_attention" --batch 1 --heads 2 --heads-k 2 \
    --seqlen-q 130 --seqlen-k 129 --dim 256 --dtype bf16 --kernel sm90 --check
  bench 60 "Check: attention Hopper backward bf16 d128, GQA, causal, odd shapes" "$BIN/strata_example_attention" --batch 2 \
    --heads 4 --heads-k 2 --seqlen-q 333 --seqlen-k 517 --dim 128 --causal --dtype bf16 --kernel sm90 --backward --check
  bench 60 "Check: attention Hopper backward fp16 d64, windows, deterministic dQ" "$BIN/strata_example_attention" --batch 1 \
    --heads 3 --heads-k 1 --seqlen-q 200 --seqlen-k 300 --dim 64 --window 50,5 --dtype fp16 --kernel sm90 --backward \
    --deterministic --check
fi
sm90_attn_cfgs=("--dim 128" "--dim 128 --causal" "--dim 64" "--dim 256")
want attention || sm90_attn_cfgs=()
[ $QUICK -eq 1 ] && want attention && sm90_attn_cfgs=("--dim 128")
for c in ${sm90_attn_cfgs[@]+"${sm90_attn_cfgs[@]}"}; do
  # shellcheck disable=SC2086
  bench 60 "Attention Hopper forward and backward bf16 B=4 H=16 S=4096 $c" \
    "$BIN/strata_bench_attention" --kernel sm90 --batch 4 --heads 16 --seqlen 4096 $c --dtype bf16 --reps 10
done
# fp8 e4m3 forward (sm90a target; PyTorch SDPA has no fp8 path to compare with), and head dim 512
# (forward only; PyTorch's flash backend stops at 256, so SDPA may have no kernel for it).
if want attention-extra && [ $QUICK -eq 0 ]; then
  # Correctness first (CUDA builds for sm_90a only, so not in checks.txt, which HIP builds run too):
  # fp8 through the example (its target is sm90a in a build for 90a), and head dim 512.
  bench 60 "Check: attention fp8 e4m3, odd shapes" "$BIN/strata_example_attention" --batch 2 --heads 4 --heads-k 2 \
    --seqlen-q 131 --seqlen-k 250 --dim 128 --causal --dtype e4m3 --check
  bench 60 "Check: attention fp8 e4m3 head dim 64, window" "$BIN/strata_example_attention" --batch 1 --heads 3 --heads-k 1 \
    --seqlen-q 77 --seqlen-k 301 --dim 64 --window 40,7 --dtype e4m3 --check
  bench 60 "Check: attention bf16 head dim 512" "$BIN/strata_example_attention" --batch 1 --heads 2 --heads-k 1 \
    --seqlen-q 70 --seqlen-k 133 --dim 512 --causal --dtype bf16 --check
  for c in "--dim 128" "--dim 128 --causal" "--dim 64"; do
    # shellcheck disable=SC2086
    bench 60 "Attention fp8 e4m3 forward B=4 H=16 S=4096 $c (strata only)" \
      "$BIN/strata_bench_attention" --batch 4 --heads 16 --seqlen 4096 $c --dtype e4m3
  done
  bench 90 "Attention bf16 B=4 H=16 S=4096 --dim 512 (strata forward, then PyTorch SDPA)" \
    python3 benchmark/torch_attention.py --batch 4 --heads 16 --seqlen 4096 --dim 512 --dtype bf16 --reps 5 --strata "$BIN/strata_bench_attention"
fi

# ---- 4. embedding bags against copy bandwidth and PyTorch ---------------------------------------------
emb_cfgs=("fp16 128" "fp32 128" "fp16 64" "fp32 64" "int8 128" "fp8 128")
want embedding || emb_cfgs=()
[ $QUICK -eq 1 ] && emb_cfgs=("fp16 128")
for c in ${emb_cfgs[@]+"${emb_cfgs[@]}"}; do
  set -- $c
  # --sweep: the default configuration, then every configuration of the sweep and the gather probe.
  sweep=--sweep
  [ $QUICK -eq 1 ] && sweep=
  bench 60 "Embedding bag $1 D=$2 T=32 R=1M B=8192 L=32 (strata)" "$BIN/strata_bench_embedding" --dtype "$1" --dim "$2" --tables 32 --rows 1000000 --batch 8192 --pooling-factor 32 $sweep
  if [ "$1" = fp16 ] || [ "$1" = fp32 ]; then
    bench 45 "Embedding bag $1 D=$2 (PyTorch, one call per table)" python3 benchmark/torch_embedding_bag.py --dtype "$1" --dim "$2" --tables 32 --rows 1000000 --batch 8192 --pooling-factor 32
  fi
done

# ---- 5. compute-sanitizer on small checks (out-of-bounds accesses, shared-memory races) --------------
if want sanitizer && command -v compute-sanitizer >/dev/null && [ $QUICK -eq 0 ]; then
  for t in "memcheck strata_example_gemm --m 100 --n 77 --k 129 --dtype bf16 --layout tn --check" \
           "memcheck strata_example_attention --batch 1 --heads 2 --heads-k 1 --seqlen-q 70 --seqlen-k 90 --dim 64 --causal --dtype bf16 --check" \
           "memcheck strata_example_embedding --tables 2 --rows 100 --dim 67 --batch 8 --pooling-factor 5 --dtype fp16 --check" \
           "racecheck strata_example_gemm --m 100 --n 77 --k 129 --dtype bf16 --layout tn --check" \
           "racecheck strata_example_attention --batch 1 --heads 1 --heads-k 1 --seqlen-q 70 --seqlen-k 90 --dim 64 --dtype bf16 --check"; do
    set -- $t
    tool=$1 bin=$2
    shift 2
    bench 60 "compute-sanitizer --tool $tool $bin $*" compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN/$bin" "$@"
  done
fi

say ""
say "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
