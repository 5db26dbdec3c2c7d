#!/usr/bin/env python3
"""Runs `iron run iron_softmax` on a random .npy input and compares the result with NumPy.

Usage: scripts/check_run_npy.py [--iron build/iron] [--backend auto] [--rows 64] [--n 1000]
Exits 1 when the largest error exceeds the tolerance. Needs numpy.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iron", default="build/iron")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((args.rows, args.n)) * 10).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(inp, x)
        cmd = [args.iron, "run", "iron_softmax", "--backend", args.backend, "--in", f"inp={inp}",
               "--out", f"out={out}", "--const", f"n={args.n}", "--grid", str(args.rows),
               "--tpg", "256"]
        print(" ".join(cmd))
        subprocess.run(cmd, check=True)
        y = np.load(out)
    shifted = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = shifted / shifted.sum(axis=1, keepdims=True)
    error = float(np.abs(y - want).max())
    print(f"iron_softmax {args.rows}x{args.n} f32 on {args.backend}: max |iron - numpy| = "
          f"{error:.3g} (tolerance {args.tolerance:g})")
    return 0 if error <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
