"""What the layer benches (bench/moe_layer.py, bench/llama_layer.py) share: timing a whole layer
with CUDA events, the commit a report names, and writing the report's JSON and Markdown."""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys

import torch

import iron_torch


def arguments(doc, script):
    """OUT_DIR and --repeat from the command line (doc's first line is the description); exits
    when there is no GPU both PyTorch and Iron can use."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    if not torch.cuda.is_available() or not iron_torch.cuda_available():
        sys.exit(f"{script}: needs a CUDA GPU that both PyTorch and Iron can use")
    return args


def median_us(fn, repeat, warmup=3):
    """The median of `repeat` runs of fn() in microseconds, CUDA events around each, after
    `warmup` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def commit():
    """$IRON_COMMIT, else git's short HEAD, else "unknown"."""
    if os.environ.get("IRON_COMMIT"):
        return os.environ["IRON_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def header(repeat):
    """The fields every report starts with: device, date, commit, torch, repeat."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"device": torch.cuda.get_device_name(), "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": commit(), "torch": torch.__version__, "repeat": repeat}


def write(report, markdown, out_dir, name):
    """Writes <device>-<date>-<name>.json and .md in out_dir."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = report["device"].lower().replace("nvidia ", "nvidia-").replace(" ", "-")
    stem = out / f"{device}-{report['date'][:10]}-{name}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    stem.with_suffix(".md").write_text(markdown)
    print(f"wrote {stem}.json and .md")
