#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, PyTorch and Triton: build Iron, time every registered bench
# (`iron bench`), time the same cases with the peers (bench/peers.py), and write the merged
# report (bench/report.py): <device>-<date>.json, .md and .svg in OUT_DIR.
# Usage: scripts/gpu_bench.sh [OUT_DIR] [iron bench options...]   (default OUT_DIR: bench/results)
# The commit comes from git, or from $IRON_COMMIT where the tree has no .git.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out_dir=${1:-bench/results}
shift || true
mkdir -p "$out_dir"
IRON_COMMIT=${IRON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export IRON_COMMIT

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target iron >/dev/null

work=$(mktemp -d)
status=0
build/iron bench --json "$work/iron.json" "$@" || status=$?  # failures are in the report too
python3 bench/peers.py "$work/iron.json" -o "$work/peers.json"
python3 bench/report.py "$work/iron.json" "$work/peers.json" --out-dir "$out_dir"
exit "$status"
