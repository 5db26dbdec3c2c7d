#!/usr/bin/env python3
"""Merges `iron bench --json` with bench/peers.py's figures into one report: a JSON file, a
Markdown table (Iron against the ceilings and the best peer) and an SVG picture (a roofline of
every kernel that counts FLOPs, and each kernel's bandwidth against the copy ceiling).

Usage: python3 bench/report.py IRON_JSON PEERS_JSON --out-dir bench/results
Writes <device>-<date>.json, .md and .svg, named from the device and the run's date. Needs only
the Python standard library, so it runs wherever the JSON files are.
"""
import argparse
import html
import json
import math
import os
import re


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def best_peer(case):
    """The fastest peer that computes the same function (a "… (ceiling)" peer does not)."""
    timed = [(t["median_us"], name) for name, t in (case or {}).get("peers", {}).items()
             if "median_us" in t and not name.endswith("(ceiling)")]
    return min(timed) if timed else None


def merge(iron, peers):
    by_case = {(c["bench"], c["dtype"]): c for c in peers.get("cases", [])}
    rows = []
    for r in iron["results"]:
        peer = by_case.get((r["bench"], r["dtype"]))
        row = {k: r.get(k) for k in ("bench", "kernel", "dtype", "bytes", "flops", "peer_op",
                                     "peer_dims", "buffer_sets", "all_written", "error", "tuning")}
        row["iron"] = r.get("iron")
        row["reference"] = r.get("reference")
        row["library"] = r.get("library")
        row["peers"] = (peer or {}).get("peers", {})
        row["peer_error"] = (peer or {}).get("error")
        best = best_peer(peer)
        if best and r.get("iron"):
            row["best_peer"] = {"name": best[1], "median_us": best[0],
                                "gbps": r["bytes"] / (best[0] * 1e3) if r["bytes"] else 0.0}
            row["speedup_vs_best_peer"] = best[0] / r["iron"]["median_us"]
        rows.append(row)
    return {"device": iron["device"], "date": iron["date"], "commit": iron.get("commit", ""),
            "repeat": iron.get("repeat"), "ceilings": iron.get("ceilings"),
            "torch": peers.get("torch"), "triton": peers.get("triton"), "results": rows}


def reference_cell(ref):
    """A reference's median µs for the table: `-` when none, `n/a` when it could not run."""
    if not ref:
        return "-"
    if "unavailable" in ref:
        return "n/a"
    return f"{ref['timing']['median_us']:.1f}" if ref["matches"] else "mismatch"


def markdown(report):
    c = report.get("ceilings") or {}
    copy = c.get("copy_gbps") or 0.0
    gemm = c.get("gemm_tflops")
    lines = [f"# Iron benchmarks: {report['device']}, {report['date']}", "",
             f"Commit `{report['commit'] or 'unknown'}`; median of {report['repeat']} runs per "
             f"kernel, CUDA events, inputs rotated past the L2. PyTorch {report['torch']}, "
             f"Triton {report['triton']}.", "",
             f"Ceilings measured in the same run: device-to-device copy **{copy:.0f} GB/s**; "
             + (f"cuBLAS bf16 {c.get('gemm_n')}^3 **{gemm:.0f} TFLOP/s**" if gemm else
                f"no cuBLAS figure ({c.get('gemm_reason', 'not measured')})")
             + (f"; mma.sync.m16n8k16 bf16 alone **{c['mma_sync_tflops']:.0f} TFLOP/s** (the "
                "ceiling of the mma.sync fragment strategy)." if c.get("mma_sync_tflops") else "."),
             "",
             "`vs best peer` is the best peer's time over Iron's: above 1.00x Iron is faster. "
             "`reference µs` is the bench's hand-written CUDA reference, `library µs` its library "
             "call (cuBLAS), both timed by `iron bench` in the same process.", "",
             "| bench | dtype | Iron µs | GB/s | % copy | TFLOP/s | best peer | peer µs | "
             "vs best peer | reference µs | library µs |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for r in report["results"]:
        if r.get("error"):
            lines.append(f"| {r['bench']} | {r['dtype']} | failed: {r['error'][:80]} "
                         "| | | | | | | | |")
            continue
        it = r["iron"]
        bp = r.get("best_peer")
        ref_text, lib_text = reference_cell(r.get("reference")), reference_cell(r.get("library"))
        pct = f"{100 * it['gbps'] / copy:.0f}%" if copy and r["bytes"] else "-"
        tf = f"{it['tflops']:.2f}" if r["flops"] else "-"
        peer_text = bp["name"] if bp else (r.get("peer_error") or "none ran")
        lines.append(
            f"| {r['bench']} | {r['dtype']} | {it['median_us']:.1f} | {it['gbps']:.0f} | {pct} | "
            f"{tf} | {peer_text} | {bp['median_us']:.1f} | "
            f"{r['speedup_vs_best_peer']:.2f}x | {ref_text} | {lib_text} |" if bp else
            f"| {r['bench']} | {r['dtype']} | {it['median_us']:.1f} | {it['gbps']:.0f} | {pct} | "
            f"{tf} | {peer_text} | - | - | {ref_text} | {lib_text} |")
    lines += ["", "Every peer's time, per case:", ""]
    for r in report["results"]:
        timed = [f"{name} {t['median_us']:.1f} µs" if "median_us" in t
                 else f"{name}: {t['error']}" for name, t in r["peers"].items()]
        lib = r.get("library")
        if lib:
            timed.append(f"{lib['name']} in process: {lib['unavailable']}" if "unavailable" in lib
                         else f"{lib['name']} in process {lib['timing']['median_us']:.1f} µs")
        if r.get("tuning"):
            timed.append(f"Iron tuned: {r['tuning']}")
        if timed:
            lines.append(f"- {r['bench']} {r['dtype']}: {', '.join(timed)}")
    return "\n".join(lines) + "\n"



class Svg:
    """A tiny SVG writer: enough for two log-log panels with points, lines and labels."""

    def __init__(self, width, height):
        self.width, self.height, self.items = width, height, []

    def add(self, item):
        self.items.append(item)

    def text(self, x, y, s, size=11, anchor="start", color="#222", rotate=None):
        transform = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'fill="{color}" font-family="sans-serif"{transform}>{html.escape(s)}</text>')

    def line(self, x1, y1, x2, y2, color="#888", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                 f'stroke="{color}" stroke-width="{width}"{d}/>')

    def circle(self, x, y, r, color):
        self.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{color}" '
                 f'fill-opacity="0.8"/>')

    def rect(self, x, y, w, h, color):
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                 f'fill="{color}"/>')

    def dump(self):
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}">'
                f'<rect width="100%" height="100%" fill="white"/>' + "".join(self.items) +
                "</svg>\n")


COLORS = {"f32": "#1f77b4", "f16": "#2ca02c", "bf16": "#d62728"}


def log_axis(lo, hi, a, b):
    """Maps [lo, hi] on a log scale to pixels [a, b]."""
    return lambda v: a + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (b - a)


def roofline_panel(svg, report, x0, y0, w, h):
    c = report.get("ceilings") or {}
    copy_tbps = (c.get("copy_gbps") or 0.0) / 1e3
    gemm = c.get("gemm_tflops") or 0.0
    points = [r for r in report["results"] if r.get("iron") and r["flops"] and r["bytes"]]
    xlo, xhi, ylo, yhi = 0.01, 1000.0, 0.001, 2000.0
    X, Y = log_axis(xlo, xhi, x0, x0 + w), log_axis(ylo, yhi, y0 + h, y0)
    svg.text(x0 + w / 2, y0 - 12, "Roofline: kernels that count FLOPs", 14, "middle")
    for p in range(-2, 4):
        svg.line(X(10 ** p), y0, X(10 ** p), y0 + h, "#eee")
        svg.text(X(10 ** p), y0 + h + 14, f"{10 ** p:g}", 10, "middle")
    for p in range(-3, 4):
        svg.line(x0, Y(10 ** p), x0 + w, Y(10 ** p), "#eee")
        svg.text(x0 - 4, Y(10 ** p) + 3, f"{10 ** p:g}", 10, "end")
    svg.text(x0 + w / 2, y0 + h + 30, "arithmetic intensity (FLOP / byte)", 11, "middle")
    svg.text(x0 - 40, y0 + h / 2, "TFLOP/s", 11, "middle", rotate=-90)
    if copy_tbps and gemm:
        knee = gemm / copy_tbps
        svg.line(X(xlo), Y(max(copy_tbps * xlo, ylo)), X(knee), Y(gemm), "#444", 2)
        svg.line(X(knee), Y(gemm), X(xhi), Y(gemm), "#444", 2)
        svg.text(X(xlo) + 4, Y(copy_tbps * xlo) - 6,
                 f"copy {copy_tbps * 1e3:.0f} GB/s", 10, rotate=None)
        svg.text(X(xhi) - 4, Y(gemm) - 6, f"cuBLAS bf16 {gemm:.0f} TFLOP/s", 10, "end")
    labelled = set()
    for r in points:
        ai = r["flops"] / r["bytes"]
        x, y = X(min(max(ai, xlo), xhi)), Y(min(max(r["iron"]["tflops"], ylo), yhi))
        svg.circle(x, y, 4, COLORS.get(r["dtype"], "#555"))
        if r["kernel"] not in labelled:  # one label per kernel: its dtypes sit close together
            labelled.add(r["kernel"])
            svg.text(x + 6, y + 3, r["kernel"].removeprefix("iron_"), 8, color="#555")
    for i, (dtype, color) in enumerate(COLORS.items()):
        svg.circle(x0 + 12, y0 + 14 + 14 * i, 4, color)
        svg.text(x0 + 20, y0 + 18 + 14 * i, dtype, 10)


def bandwidth_panel(svg, report, x0, y0, w):
    c = report.get("ceilings") or {}
    copy = c.get("copy_gbps") or 1.0
    rows = [r for r in report["results"] if r.get("iron") and r["bytes"]]
    bar = 13
    svg.text(x0 + w / 2, y0 - 12, "Bandwidth: Iron (bar) and best peer (tick), % of copy", 14,
             "middle")
    for pct in (0, 25, 50, 75, 100):
        x = x0 + 220 + (w - 220) * pct / 110
        svg.line(x, y0, x, y0 + bar * len(rows), "#ddd" if pct < 100 else "#444")
        svg.text(x, y0 - 2, f"{pct}%", 9, "middle")
    for i, r in enumerate(rows):
        y = y0 + i * bar
        svg.text(x0 + 216, y + 10, f"{r['bench'].removeprefix('iron_')} {r['dtype']}", 9, "end")
        frac = r["iron"]["gbps"] / copy
        svg.rect(x0 + 220, y + 2, (w - 220) * min(frac, 1.1) / 1.1, bar - 4,
                 COLORS.get(r["dtype"], "#555"))
        bp = r.get("best_peer")
        if bp and bp["gbps"]:
            px = x0 + 220 + (w - 220) * min(bp["gbps"] / copy, 1.1) / 1.1
            svg.line(px, y + 1, px, y + bar - 1, "#000", 2)
    return bar * len(rows)


def picture(report):
    bandwidth_rows = sum(1 for r in report["results"] if r.get("iron") and r["bytes"])
    height = max(480, 120 + 13 * bandwidth_rows)
    svg = Svg(1300, height)
    svg.text(650, 22, f"Iron on {report['device']}, {report['date']} "
             f"(commit {report['commit'] or 'unknown'})", 15, "middle")
    roofline_panel(svg, report, 70, 70, 480, 340)
    bandwidth_panel(svg, report, 640, 70, 640)
    return svg.dump()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("iron_json")
    parser.add_argument("peers_json")
    parser.add_argument("--out-dir", default="bench/results")
    parser.add_argument("--suffix", default="",
                        help="appended to the file names (e.g. gemm: <device>-<date>-gemm.md), so "
                             "that a run of some benches does not replace the day's full report")
    args = parser.parse_args()
    with open(args.iron_json) as f:
        iron = json.load(f)
    with open(args.peers_json) as f:
        peers = json.load(f)
    report = merge(iron, peers)
    os.makedirs(args.out_dir, exist_ok=True)
    suffix = f"-{args.suffix}" if args.suffix else ""
    stem = os.path.join(args.out_dir, f"{slug(report['device'])}-{report['date'][:10]}{suffix}")
    with open(stem + ".json", "w") as f:
        json.dump(report, f, indent=2)
    with open(stem + ".md", "w") as f:
        f.write(markdown(report))
    with open(stem + ".svg", "w") as f:
        f.write(picture(report))
    print(f"wrote {stem}.json, .md and .svg")


if __name__ == "__main__":
    main()
