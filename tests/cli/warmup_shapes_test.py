"""`iron warmup --shape` compiles the module a launch with those constexprs loads: two shapes
that bind a quantized GEMV's row-count specialization differently are two modules, a third that
binds like the first is compiled once, the plain warmup (the usual binding: few rows) then finds
its module cached, and a shape that lacks a constexpr or names an unknown one is a usage error.
Usage: warmup_shapes_test.py IRON_BINARY. Exits 77 (skipped) where NVRTC cannot be loaded."""
import os
import re
import subprocess
import sys
import tempfile

iron = sys.argv[1]
base = [iron, "warmup", "--sm", "90", "-j", "2", "--dtype", "bf16",
        "--filter", "^iron_gemv_affine_b4_g32$"]


def warm(cache, *shapes):
    args = list(base)
    for s in shapes:
        args += ["--shape", s]
    run = subprocess.run(args, env={**os.environ, "IRON_CACHE_DIR": cache},
                         capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


with tempfile.TemporaryDirectory() as cache:
    rc, out = warm(cache, "m=1,n=64,k=4096", "m=8,n=64,k=4096", "m=2,n=64,k=4096")
    if rc != 0 and "NVRTC" in out:
        print("skipped: " + out.strip())
        sys.exit(77)
    assert rc == 0, out
    compiled = re.findall(r"^  iron_gemv_affine_b4_g32_bf16\s+compiled .* for (\S+)$", out, re.M)
    assert compiled == ["m=1,n=64,k=4096", "m=8,n=64,k=4096"], out
    rc, out = warm(cache)
    assert rc == 0 and re.search(r"^  iron_gemv_affine_b4_g32_bf16\s+cached ", out, re.M), out
    rc, out = warm(cache, "m=3,n=64")
    assert rc == 2 and "needs constexpr 'k', which is not given" in out, out
    rc, out = warm(cache, "m=3,n=64,k=4096,q=1")
    assert rc == 2 and "names 'q', a constexpr of none of the selected kernels" in out, out
print("ok")
