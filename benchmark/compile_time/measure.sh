#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# benchmark/compile_time/measure.sh -- compile time and peak memory of single translation units for
# sm_90a (nvcc) and gfx940 (hipcc), measured with /usr/bin/time -v: gemm_attention_tu.cu (one GEMM
# configuration, and one attention configuration) and framework_op.cu (one call of strata::gemm and
# of strata::attention, header-only and with the precompiled entries; the typed strata::gemm<bf16>).
#
#   benchmark/compile_time/measure.sh [--runs N] [--out FILE] [--only REGEX] [--targets REGEX]
#
# --only keeps the rows whose translation-unit label matches (e.g. 'precompiled|typed'); --targets the
# targets (sm_90a, gfx940). The header-only framework file takes about 3 minutes for sm_90a and much
# longer for gfx940 (clang 15 compiles the whole HIP GEMM entry in about 11 minutes).
#
# Prints a markdown table (ready for docs/performance.md): per target and per TU variant, the best
# wall time of N runs (default 1), user+sys CPU seconds and the peak resident set size of the
# compiler's process tree's largest process. A compiler that is missing is reported as skipped; one
# that fails gets a "failed" row, its output on stderr, and the script exits 1 after the table.
# Environment: NVCC, HIPCC (default: found on PATH, /usr/local/cuda/bin, /opt/rocm/bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=1
out=
only=.
only_targets=.
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --targets) only_targets=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "measure.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x /usr/bin/time ]] || { echo "measure.sh: /usr/bin/time is missing (Debian: apt-get install time)" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)}
hipcc=${HIPCC:-$(command -v hipcc || ls /opt/rocm/bin/hipcc 2>/dev/null || true)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# label | source | define
variants=(
  "gemm (one configuration)|gemm_attention_tu.cu|-DSTRATA_BENCH_ATTENTION=0"
  "gemm + attention (one configuration each)|gemm_attention_tu.cu|-DSTRATA_BENCH_ATTENTION=1"
  "strata::gemm<bf16> (typed entry)|framework_op.cu|-DSTRATA_BENCH_TYPED=1"
  "strata::gemm + strata::attention, header-only|framework_op.cu|-DSTRATA_PRECOMPILED_ENTRIES=0"
  "strata::gemm + strata::attention, precompiled entries|framework_op.cu|-DSTRATA_PRECOMPILED_ENTRIES=1"
)

# target | descriptor | compiler kind
targets=("sm_90a|sm90a|nvcc" "gfx940|gfx942|hipcc")

rows=()
failed=0
for t in "${targets[@]}"; do
  IFS='|' read -r arch desc kind <<<"$t"
  [[ $arch =~ $only_targets ]] || continue
  if [[ $kind == nvcc ]]; then cc=$nvcc; else cc=$hipcc; fi
  if [[ -z $cc ]]; then
    rows+=("| $arch | - | skipped: no $kind | | | | |")
    continue
  fi
  if [[ $kind == nvcc ]]; then
    version=$("$cc" --version | sed -n 's/.*release \([0-9.]*\).*/nvcc \1/p')
    flags=(-std=c++20 -O3 -x cu -gencode "arch=compute_${arch#sm_},code=sm_${arch#sm_}")
  else
    # Always an explicit --offload-arch: without one hipcc asks rocm_agent_enumerator for the GPUs here.
    version="hipcc $("$cc" --offload-arch="$arch" --version 2>/dev/null | sed -n 's/.*clang version \([0-9.]*\).*/clang \1/p' | head -1)"
    flags=(-std=c++20 -O3 -x hip --offload-arch="$arch" -Wno-unused-command-line-argument)
  fi
  for v in "${variants[@]}"; do
    IFS='|' read -r label source define <<<"$v"
    [[ $label =~ $only ]] || continue
    best_wall= best_cpu= best_rss=
    for ((r = 0; r < runs; r++)); do
      log=$work/time.log
      if ! /usr/bin/time -v -o "$log" "$cc" "${flags[@]}" "-I$root/include" "-DSTRATA_COMPILE_TARGET=$desc" "$define" \
          -c "$here/$source" -o "$work/tu.o" >"$work/out.txt" 2>&1; then
        echo "measure.sh: $kind failed for $arch ($label):" >&2
        tail -30 "$work/out.txt" >&2
        failed=1
        best_wall=
        break
      fi
      wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log" |
             awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
      cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.1f", s }' "$log")
      rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
      if [[ -z $best_wall ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
        best_wall=$wall best_cpu=$cpu best_rss=$rss
      fi
    done
    if [[ -z $best_wall ]]; then
      rows+=("| $arch | $label | $version | failed (see stderr) | | | |")
      continue
    fi
    size=$(stat -c %s "$work/tu.o")
    rows+=("$(printf '| %s | %s | %s | %.1f | %s | %d |' "$arch" "$label" "$version" "$best_wall" "$best_cpu" $((best_rss / 1024)))")
    rows[-1]+=" $((size / 1024)) KiB |"
  done
done

table=$(
  echo "| target | translation unit | compiler | wall s | CPU s | peak RSS MiB | object |"
  echo "|---|---|---|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
)
echo "$table"
echo
echo "($(nproc) cores, $(uname -m), best of $runs run(s); peak RSS is the largest single process of the compiler's tree)"
if [[ -n $out ]]; then echo "$table" >"$out"; fi
exit $failed
