#!/usr/bin/env bash
# The first-call cost of Iron's kernels on this machine, written as a report with the device, the
# date and the commit: every library form compiled cold into an empty kernel cache one at a time
# (`iron warmup -j 1`), the same with every core (`-j` the CPU count), and the warm cost of each
# cached entry (`iron cache info --entries --warm`: read, check and cuModuleLoadData). The summary
# splits the forms as `iron warmup` marks them: the memory-bound library (no products), the f32
# forms of the fragment kernels (products on the CUDA cores), and the tensor-core forms (16-bit
# or 8-bit fragment products, warpgroup products: GEMM, attention prefill, convolutions, grouped
# expert products), and leaves out the probe kernels (iron_*_probe*), which are checks of the
# toolkit.
# Usage: scripts/jit_latency.sh [OUT_DIR] [--sm N]   (default OUT_DIR: bench/results)
# Needs NVRTC; the warm loads need a GPU. The commit comes from git, or from $IRON_COMMIT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out_dir=${1:-bench/results}
shift || true
mkdir -p "$out_dir"
commit=${IRON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
device=${device:-no GPU}
slug=$(echo "$device" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
report="$out_dir/jit-latency-${slug}-$(date -u +%Y-%m-%d).md"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target iron >/dev/null

export IRON_CACHE_DIR
IRON_CACHE_DIR=$(mktemp -d)
work=$(mktemp -d)

# "N forms, median M ms, max X ms" of the compile times in warmup log $1 of the forms that
# `iron warmup` marks with $2 ("tensor cores", "f32 fragments"; "" for unmarked ones).
summary() {
  awk -v mark="$2" \
    '$2 == "compiled" && $1 !~ /_probe/ {
       rest = $0; sub(/^ *[^ ]+ +compiled +[0-9.]+ ms */, "", rest); sub(/ *for .*$/, "", rest)
       if (rest == mark) print $3 }' \
    "$1" | sort -g |
    awk '{ v[++n] = $1 }
      END { if (n == 0) { print "none"; exit }
        m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        printf "%d forms, median %.1f ms, max %.1f ms\n", n, m, v[n] }'
}

build/iron warmup -j 1 "$@" >"$work/one.log"
build/iron cache info --entries --warm >"$work/warm.log"
build/iron cache clear >/dev/null
build/iron warmup -j "$(nproc)" "$@" >"$work/all.log"
rm -rf "$IRON_CACHE_DIR"

{
  echo "# Iron JIT latency"
  echo
  echo "device: $device; CPU cores: $(nproc); date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit: $commit"
  echo
  echo "Cold: each form traced, lowered and compiled by NVRTC into an empty kernel cache."
  echo "Warm: a cached entry read, checked and loaded with cuModuleLoadData."
  echo
  echo "| what | memory-bound library | f32 fragment forms (CUDA cores) | tensor-core forms |"
  echo "| --- | --- | --- | --- |"
  for run in one all; do
    [ "$run" = one ] && what="cold, one at a time" || what="cold, $(nproc) at a time"
    echo "| $what | $(summary "$work/$run.log" "") | $(summary "$work/$run.log" "f32 fragments") |" \
      "$(summary "$work/$run.log" "tensor cores") |"
  done
  echo
  echo '## iron cache info --entries --warm (after the one-at-a-time run)'
  echo
  echo '```'
  cat "$work/warm.log"
  echo '```'
  echo
  echo '## iron warmup -j 1'
  echo
  echo '```'
  cat "$work/one.log"
  echo '```'
  echo
  echo "## iron warmup -j $(nproc)"
  echo
  echo '```'
  cat "$work/all.log"
  echo '```'
} >"$report"
echo "wrote $report"
