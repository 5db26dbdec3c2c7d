"""`iron warmup` marks the forms by where their products run (the JIT latency report splits on
it): a 16-bit GEMM form carries `tensor cores`, an f32 one `f32 fragments` (CUDA cores), softmax
nothing, and the closing line counts one of each.
Usage: warmup_classes_test.py IRON_BINARY. Exits 77 (skipped) where NVRTC cannot be loaded."""
import os
import re
import subprocess
import sys
import tempfile

iron = sys.argv[1]
with tempfile.TemporaryDirectory() as cache:
    run = subprocess.run(
        [iron, "warmup", "--sm", "90", "-j", "2", "--filter", "^iron_(softmax|gemm_nk)$"],
        env={**os.environ, "IRON_CACHE_DIR": cache}, capture_output=True, text=True)
out = run.stdout + run.stderr
if run.returncode != 0 and "NVRTC" in out:
    print("skipped: " + out.strip())
    sys.exit(77)
assert run.returncode == 0, out
lines = {m.group(1): m.group(2) for m in re.finditer(r"^  (\S+)\s+compiled\s+[\d.]+ ms(.*)$", out, re.M)}
assert lines.get("iron_gemm_nk_bf16") == "  tensor cores", out
assert lines.get("iron_gemm_nk_f16") == "  tensor cores", out
assert lines.get("iron_gemm_nk_f32") == "  f32 fragments", out
for dtype in ("f32", "f16", "bf16"):
    assert lines.get("iron_softmax_" + dtype) == "", out
assert re.search(r"without products: 3 forms, .*; with f32 fragment products \(CUDA cores\): "
                 r"1 forms, .*; with tensor cores: 2 forms", out), out
print("ok")
