"""`iron inspect --usual`: the warpgroup GEMM's CUDA source for sm_90a with its specialization
(k % 8 == 0) bound true holds one product call site and the TMA path, the unbound source both
paths' product call sites; `--usual` on the traced IR is a usage error (exit 2).
Usage: inspect_usual_test.py IRON_BINARY."""
import subprocess
import sys

iron = sys.argv[1]
base = ["inspect", "iron_gemm_warpgroup_nk", "--dtype", "bf16", "--profile", "sm_90a"]
product = "iron_wgmma_bf16_n256<64, 0>("


def run(*args):
    r = subprocess.run([iron, *base, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


code, unbound, err = run("--target", "cuda")
assert code == 0, err
code, usual, err = run("--target", "cuda", "--usual")
assert code == 0, err
assert unbound.count(product) == 2, unbound.count(product)
assert usual.count(product) == 1, usual.count(product)
assert "iron_tensor_copy(" in usual
assert len(usual) < len(unbound)

code, _, err = run("--ir", "--usual")
assert code == 2, (code, err)
assert "--usual" in err, err
code, _, err = run("--usual")
assert code == 2, (code, err)
assert "--target, --pass or --resources" in err, err
print("ok")
