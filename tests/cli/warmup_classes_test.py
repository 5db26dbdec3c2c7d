"""`iron warmup` marks the forms with tensor-core products (the JIT latency report splits on it):
a GEMM form carries `tensor cores`, softmax does not, and the closing line counts one of each.
Usage: warmup_classes_test.py IRON_BINARY. Exits 77 (skipped) where NVRTC cannot be loaded."""
import os
import re
import subprocess
import sys
import tempfile

iron = sys.argv[1]
with tempfile.TemporaryDirectory() as cache:
    run = subprocess.run(
        [iron, "warmup", "--sm", "90", "-j", "2", "--dtype", "bf16",
         "--filter", "^iron_(softmax|gemm_nk)$"],
        env={**os.environ, "IRON_CACHE_DIR": cache}, capture_output=True, text=True)
out = run.stdout + run.stderr
if run.returncode != 0 and "NVRTC" in out:
    print("skipped: " + out.strip())
    sys.exit(77)
assert run.returncode == 0, out
lines = {m.group(1): m.group(2) for m in re.finditer(r"^  (\S+)\s+compiled\s+[\d.]+ ms(.*)$", out, re.M)}
assert lines.get("iron_gemm_nk_bf16") == "  tensor cores", out
assert lines.get("iron_softmax_bf16") == "", out
assert re.search(r"without tensor cores: 1 forms, .*; with tensor cores: 1 forms", out), out
print("ok")
