#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, PyTorch and Triton: build Iron, time every registered bench
# (`iron bench`), time the same cases with the peers (bench/peers.py), and write the merged
# report (bench/report.py): <device>-<date>.json, .md and .svg in OUT_DIR, with the logs of both
# runs (iron-bench.log, peers.log).
# Usage: scripts/gpu_bench.sh [OUT_DIR] [iron bench options...]   (default OUT_DIR: bench/results)
# With $IRON_REPORT_SUFFIX set (say `gemm` for a run filtered to the gemm benches) the report is
# <device>-<date>-<suffix>.*, so that it does not replace the day's full report.
# The commit comes from git, or from $IRON_COMMIT where the tree has no .git.
set -uo pipefail
set -e
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
# The table and progress also go to a log beside the report; failures are in the report too.
build/iron bench --json "$work/iron.json" "$@" 2>&1 | tee "$out_dir/iron-bench.log" || status=1
python3 bench/peers.py "$work/iron.json" -o "$work/peers.json" 2>&1 | tee "$out_dir/peers.log"
python3 bench/report.py "$work/iron.json" "$work/peers.json" --out-dir "$out_dir" \
  ${IRON_REPORT_SUFFIX:+--suffix "$IRON_REPORT_SUFFIX"}
exit "$status"
