#!/usr/bin/env bash
# The first-call cost of Iron's kernels on this machine, written as a report with the device, the
# date and the commit: every library form compiled cold into an empty kernel cache one at a time
# (`iron warmup -j 1`), the same with every core (`-j` the CPU count), and the warm cost of each
# cached entry (`iron cache info --entries --warm`: read, check and cuModuleLoadData). The summary
# splits the tensor-core forms (those `iron warmup` marks: fragment or warpgroup products, so
# GEMM, attention prefill, convolutions, grouped expert products) from the memory-bound library,
# and leaves out the probe kernels (iron_*_probe*), which are checks of the toolkit.
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

# "N forms, median M ms, max X ms" of the compile times in warmup log $1 of the forms on tensor
# cores ($2 = yes) or not ($2 = no).
summary() {
  awk -v keep="$2" \
    '$2 == "compiled" && $1 !~ /_probe/ && (($0 ~ /tensor cores$/) == (keep == "yes")) { print $3 }' \
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
  echo "| what | memory-bound library | tensor-core forms (fragment or warpgroup products) |"
  echo "| --- | --- | --- |"
  echo "| cold, one at a time | $(summary "$work/one.log" no) | $(summary "$work/one.log" yes) |"
  echo "| cold, $(nproc) at a time | $(summary "$work/all.log" no) | $(summary "$work/all.log" yes) |"
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
