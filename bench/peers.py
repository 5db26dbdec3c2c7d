#!/usr/bin/env python3
"""Times what a user would pick instead of each Iron bench: PyTorch eager, torch.compile where it
fuses something, cuBLAS through PyTorch, and Triton where a standard Triton kernel exists.

Reads the JSON of `iron bench --json` (each result names its peer case: an operation and its
dimensions), times every peer of that case on the same shapes and dtype, with the same method
(inputs rotated until the working set is at least four times the L2, a warm-up, CUDA events
around each run, the median), and writes the peer figures as JSON for bench/report.py.

Usage: python3 bench/peers.py IRON_JSON -o PEERS_JSON [--repeat N] [--no-compile]
                              [--compile-dtypes bf16 ...]
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import peer_ops

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def buffer_sets(working_set_bytes, l2_bytes):
    """As Iron does: enough copies of the inputs that a run never finds them in the L2."""
    if working_set_bytes >= 4 * l2_bytes:
        return 1
    sets = math.ceil(4 * l2_bytes / max(working_set_bytes, 1))
    while sets > 1 and sets * working_set_bytes > (8 << 30):
        sets -= 1
    return min(sets, 64)


def time_peer(fn, input_sets, warmup, repeat):
    """Median, min and max microseconds of fn(*inputs), one pair of events per run."""
    for i in range(warmup):
        fn(*input_sets[i % len(input_sets)])
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeat)]
    for i, (start, stop) in enumerate(events):
        inputs = input_sets[(warmup + i) % len(input_sets)]
        start.record()
        fn(*inputs)
        stop.record()
    torch.cuda.synchronize()
    us = sorted(start.elapsed_time(stop) * 1e3 for start, stop in events)
    return {"median_us": statistics.median(us), "min_us": us[0], "max_us": us[-1]}


# A peer named "… (ceiling)" times a reference operation of the same size, not the same function
# (one dense GEMM for a grouped one): its output is not compared.
CEILING = "(ceiling)"


def check_output(name, got, want):
    """The peers must compute the same function: compare two peers' outputs loosely."""
    if isinstance(got, tuple):  # (values, indices): compare the values
        got, want = got[0], want[0]
    got, want = got.float(), want.float()
    err = (got - want).norm() / max(want.norm().item(), 1e-30)
    if not torch.isfinite(err) or err > 2e-2:
        raise RuntimeError(f"{name} disagrees with the first peer (relative error {err:.3g})")


def run_case(result, l2_bytes, args):
    op = result["peer_op"]
    dims = result["peer_dims"]
    dtype = DTYPES[result["dtype"]]
    case = peer_ops.CASES.get(op)
    if case is None:
        return {"error": f"no peer is defined for operation '{op}'"}
    make_inputs, peers = case
    first = make_inputs(dims, dtype, torch.Generator(device="cuda").manual_seed(1))
    working_set = sum(t.numel() * t.element_size() for t in first if torch.is_tensor(t))
    sets = [first] + [tuple(t.clone() if torch.is_tensor(t) else t for t in first)
                      for _ in range(buffer_sets(working_set, l2_bytes) - 1)]
    timings = {}
    reference = None
    for name, build in peers(dims, dtype).items():
        if name.startswith("torch.compile") and (args.no_compile or
                                                 result["dtype"] not in args.compile_dtypes):
            continue
        try:
            fn = build()
            # Each peer's checked run gets inputs of its own: a peer that updates a state in
            # place must not see the state an earlier peer advanced.
            out = fn(*(t.clone() if torch.is_tensor(t) else t for t in first))
            torch.cuda.synchronize()
            if reference is None:
                reference = out
            elif out is not None and not name.endswith(CEILING):
                check_output(name, out, reference)
            timings[name] = time_peer(fn, sets, args.warmup, args.repeat)
        except Exception as e:  # a peer that cannot run is reported, not fatal
            timings[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
    del sets, first, reference
    torch.cuda.empty_cache()
    return {"peers": timings}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("iron_json")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true",
                        help="skip torch.compile peers (slow to compile)")
    parser.add_argument("--compile-dtypes", nargs="+", default=["bf16"],
                        help="dtypes whose cases also time torch.compile (default: bf16; each "
                             "compile takes seconds)")
    args = parser.parse_args()
    with open(args.iron_json) as f:
        iron = json.load(f)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = props.L2_cache_size
    cases = [r for r in iron["results"] if r.get("peer_op")]
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "triton": peer_ops.triton_version(), "repeat": args.repeat, "cases": []}
    started = time.time()
    for i, r in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {r['bench']} {r['dtype']} ({r['peer_op']})", end=" ",
              file=sys.stderr, flush=True)
        entry = {"bench": r["bench"], "dtype": r["dtype"], "peer_op": r["peer_op"]}
        try:
            entry.update(run_case(r, l2_bytes, args))
        except Exception as e:  # bad inputs for one case must not lose the others
            entry["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            torch.cuda.empty_cache()
        best = min((t["median_us"] for t in entry.get("peers", {}).values() if "median_us" in t),
                   default=None)
        print(f"best {best:.1f} us" if best else entry.get("error", "no peer ran"),
              file=sys.stderr, flush=True)
        out["cases"].append(entry)
    with open(args.output, "w") as f:
        json.dump(out, f, indent=2)
    print(f"wrote {args.output} ({len(cases)} cases, {time.time() - started:.0f} s)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
