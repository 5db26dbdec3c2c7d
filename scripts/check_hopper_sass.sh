#!/usr/bin/env bash
# On a machine with the CUDA toolkit's cuobjdump: compiles every kernel form with warpgroup
# products for sm_90a and checks its SASS: Hopper's warpgroup products present (HGMMA for 16-bit
# operands, QGMMA for 8-bit floats), the mma.sync fallback's HMMA absent (docs/tensor-cores.md, "Warpgroup products"), and in the gemms (16-bit and fp8), whose
# pipelines load by tile copies, TMA loads (UTMALDG; "Tile copies"). Prints one line a form; exits 1 on a miss.
# Usage: scripts/check_hopper_sass.sh [BUILD_DIR]   (default build; `iron` must be built there)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
command -v cuobjdump >/dev/null || { echo "cuobjdump not found" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for dtype in f16 bf16; do
  "$build/iron" build --emit cubin --cuda-profile sm_90a --dtype "$dtype" \
    --filter '^(iron_gemm_warpgroup_(nk|kn)|iron_gemm_fp8_.*|iron_wg_mma_probe_.*)$' -o "$work/$dtype" >/dev/null || exit 1
  for cubin in "$work/$dtype"/cubin/*.cubin; do
    sass=$(cuobjdump -sass "$cubin")
    gmma=$(grep -cE '[HQ]GMMA' <<<"$sass")
    hmma=$(grep -c 'HMMA' <<<"$sass")
    tma=$(grep -c 'UTMALDG' <<<"$sass")
    verdict=ok
    if [ "$gmma" -eq 0 ] || [ "$hmma" -ne 0 ]; then verdict=MISS; status=1; fi
    case "$(basename "$cubin")" in
      iron_gemm_warpgroup_* | iron_gemm_fp8_*) if [ "$tma" -eq 0 ]; then verdict=MISS; status=1; fi ;;
    esac
    kinds=$(grep -oE '[HQ]GMMA' <<<"$sass" | sort -u | tr '\n' ' ')
    echo "$verdict $(basename "$cubin"): $gmma warpgroup products (${kinds% }), $hmma HMMA, $tma UTMALDG"
  done
done
exit "$status"
