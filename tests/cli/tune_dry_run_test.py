"""`iron tune --dry-run` without a GPU: the defaults and a 64×128 tile compile for sm_90a with
their grids, a 6-stage ring of 128×256 tiles is the defaults' code (the compiler cuts a ring to
the 4 stages that fit), persistent groups are one a tile where there are fewer tiles than
multiprocessors, `--bench` takes a bench case's shape (and, when timing, its inputs), and
mistakes on the command line are usage errors (exit 2) that name what is wrong; `iron run --config` launches the kernel traced and planned under a configuration.
Usage: tune_dry_run_test.py IRON_BINARY. Exits 77 (skipped) where NVRTC cannot be loaded."""
import os
import struct
import subprocess
import sys
import tempfile

iron = sys.argv[1]
kernel = "iron_gemm_warpgroup_nk"
shape = "m=256,n=512,k=128,alpha=1"


def run(*args):
    r = subprocess.run([iron, "tune", *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


code, out = run(kernel, "--list")
assert code == 0, out
assert "bn         256, 128, 64 (default 256)" in out, out
assert "bm         128, 64 (default 128)" in out, out
assert "720 configurations" in out, out
assert "resident   1, 2 (default 1)" in out, out
assert "persistent 0, 1 (default 0)" in out, out

code, out = run(kernel, "--dtype", "bf16", "--shape", shape, "--dry-run", "--config", "bm=64,bn=128",
                "--config", "bn=256,stages=6", "--config", "persistent=1",
                "--config", "bm=64,bn=128,persistent=1,resident=2")
if code != 0 and "NVRTC" in out:
    print("skipped: " + out.strip())
    sys.exit(77)
assert code == 0, out
lines = {l.split()[0]: l for l in out.splitlines() if l.startswith("  band=")}
assert len(lines) == 5, out
assert "grid 2x2x1" in lines["band=8,bm=128,bn=256,lag=1,persistent=0,resident=1,stages=4"], out
assert "grid 4x4x1" in lines["band=8,bm=64,bn=128,lag=1,persistent=0,resident=1,stages=4"], out
assert "registers" in lines["band=8,bm=64,bn=128,lag=1,persistent=0,resident=1,stages=4"], out
assert ("same code and grid as band=8,bm=128,bn=256,lag=1,persistent=0,resident=1,stages=4"
        in lines["band=8,bm=128,bn=256,lag=1,persistent=0,resident=1,stages=6"]), out
# persistent: a group a multiprocessor, at most one a tile (4 tiles here)
assert "grid 4x1x1" in lines["band=8,bm=128,bn=256,lag=1,persistent=1,resident=1,stages=4"], out
# two groups a multiprocessor (occupancy 2): 128 registers a thread, a group a tile of the 16
two = lines["band=8,bm=64,bn=128,lag=1,persistent=1,resident=2,stages=4"]
assert "grid 16x1x1" in two and "128 registers" in two, out

for args, says in [
    (["--dtype", "bf16", "--shape", "m=256,n=512", "--dry-run"], "needs constexpr k, alpha"),
    (["--dtype", "bf16", "--shape", shape + ",depth=2", "--dry-run"], "has no constexpr 'depth'"),
    (["--dtype", "bf16", "--shape", "m=256,,k=1", "--dry-run"], "NAME=VALUE pairs"),
    (["--dtype", "bf16", "--shape", shape, "--config", "tile=3", "--dry-run"], "no tuning knob 'tile'"),
    (["--dtype", "bf16", "--shape", shape, "--config", "bn=32", "--dry-run"], "takes 256, 128, 64, not 32"),
    (["--dtype", "bf16", "--shape", shape, "--dry-run", "--tuning", "t.txt"], "writes no --tuning"),
    (["--dtype", "bf16", "--dry-run"], "at least one --shape"),
]:
    code, out = run(kernel, *args)
    assert code == 2 and says in out, (args, code, out)
# A misspelt kernel is named before any missing option.
code, out = run("iron_gemm_warpgroup_nkk", "--dtype", "bf16")
assert code == 2 and "no kernel named 'iron_gemm_warpgroup_nkk'" in out, (code, out)
# A bench case's constexprs are the shape: the grouped expert products at DeepSeek-V3's shape.
moe = "iron_moe_gemm_fp8_blockwise_e4m3"
case = "tokens4096_experts256_top8_n2048_k7168"
code, out = run(moe, "--dtype", "bf16", "--bench", case, "--dry-run")
assert code == 0, out
assert "at experts=256,k=7168,n=2048,rows=32768" in out, out
assert "grid 16x768x1" in next(l for l in out.splitlines() if l.startswith("  bm=64 ")), out
assert "grid 16x512x1" in next(l for l in out.splitlines() if l.startswith("  bm=128 ")), out
for args, says in [
    (["--dtype", "bf16", "--bench", "nope", "--dry-run"], "has no bench case of that name"),
    (["--dtype", "f32", "--bench", case, "--dry-run"], "not benched in f32"),
]:
    code, out = run(moe, *args)
    assert code == 2 and says in out, (args, code, out)

code, out = run("iron_softmax", "--list")
assert code == 2 and "declares no tuning knobs" in out, out

# `iron run --config` runs the kernel traced under the configuration, on the grid its geometry plans
# under it: a 64×64-tile product of ones on the simulator sums k = 16 ones everywhere.

def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join(f"{d}, " for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}f", *values))


with tempfile.TemporaryDirectory() as d:
    a, b, out = (os.path.join(d, n) for n in ("a.npy", "b.npy", "out.npy"))
    write_npy(a, (70, 16), [1.0] * 70 * 16)
    write_npy(b, (130, 16), [1.0] * 130 * 16)
    r = subprocess.run([iron, "run", kernel, "--dtype", "bf16", "--backend", "sim", "--in",
                        f"a={a}", "--in", f"b={b}", "--out", f"out={out}", "--out-shape",
                        "out=70,130", "--const", "m=70", "--const", "n=130", "--const", "k=16",
                        "--const", "alpha=1", "--config", "bm=64,bn=64"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3,2 --tpg 256" in r.stdout + r.stderr, r.stdout + r.stderr
    with open(out, "rb") as f:
        data = f.read()
    values = struct.unpack(f"<{70 * 130}f", data[-70 * 130 * 4:])
    assert all(v == 16.0 for v in values), values[:8]
print("ok")
