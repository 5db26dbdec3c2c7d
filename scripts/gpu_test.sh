#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: configure and build Iron (CMake, Ninja), run every kernel test
# on the CUDA backend twice (a cold module cache, then a warm one), then the default run (the
# simulator's sanitizer, then the GPU) and every backend compared, then the fragment kernels
# (probes and the gemm family) under each other CUDA strategy, compared with the simulator, then
# the SASS of the forms with warpgroup products (scripts/check_hopper_sass.sh, on a 9.0 device),
# then the unit tests that need a GPU, and write a log with the device, the date and the commit.
# Usage: scripts/gpu_test.sh [LOG_DIR]   (default: build/gpu-logs)
# The commit comes from git, or from $IRON_COMMIT where the tree has no .git.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log_dir=${1:-build/gpu-logs}
mkdir -p "$log_dir"
commit=${IRON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log="$log_dir/gpu-test-$(date -u +%Y%m%d-%H%M%S).log"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

# A private cache folder, emptied first, so the first run measures cold compiles.
export IRON_CACHE_DIR="build/gpu-test-cache"
rm -rf "$IRON_CACHE_DIR"

# Everything below goes to the terminal and to the log.
exec > >(tee "$log") 2>&1
status=0
echo "# Iron GPU test log"
echo "date:   $stamp"
echo "commit: $commit"
echo
build/iron device
echo
echo "## run 1: cold module cache"
build/iron test --backend cuda --verbose --seed 1 || status=1
echo
echo "## run 2: warm module cache (loaded from disk)"
build/iron test --backend cuda --verbose --seed 1 || status=1
echo
echo "## the default run: the simulator's sanitizer on every case, then the GPU"
build/iron test || status=1
echo
echo "## every test on every backend, outputs compared across backends"
build/iron test --backend all --seed 2 || status=1
echo
echo "## fragment kernels under the other CUDA strategies, compared with the simulator"
for strategy in software wmma mmasync; do
  echo "### IRON_CUDA_MMA=$strategy"
  IRON_CUDA_MMA=$strategy build/iron test --backend all --seed 1 \
    --filter 'iron_mma_probe|iron_fragment_|iron_swizzled_|iron_gemm|iron_wg_mma' || status=1
done
echo
echo "## the SASS of the kernels with warpgroup products (sm_90a: HGMMA or QGMMA, no HMMA)"
if build/iron device | grep -q 'sm_90a for kernels with warpgroup products'; then
  scripts/check_hopper_sass.sh build || status=1
else
  echo "no compute capability 9.0 device: skipped"
fi
echo
echo "## the unit tests that need a GPU (the device API, the CUDA backend and driver)"
build/tests/iron_unit_tests --gtest_brief=1 \
  --gtest_filter='DeviceApi*:CudaBackend*:CudaDriver*' || status=1
echo
echo "## module cache"
build/iron cache info
echo "log written to $log"
exit "$status"
