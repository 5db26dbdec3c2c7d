"""Tests of bench/report.py on a small made-up run: the merge, the table and the picture."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

BENCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH_DIR)

import report  # noqa: E402

IRON = {
    "device": "Test GPU", "date": "2026-01-02T03:04:05Z", "commit": "abc1234", "repeat": 5,
    "ceilings": {"copy_gbps": 4000.0, "gemm_tflops": 800.0, "gemm_n": 8192},
    "results": [
        {"bench": "iron_copy.n64m", "kernel": "iron_copy", "dtype": "bf16", "bytes": 4000000,
         "flops": 0, "peer_op": "copy", "peer_dims": {"n": 1}, "buffer_sets": 1,
         "all_written": True,
         "iron": {"median_us": 1.0, "min_us": 0.9, "max_us": 1.2, "gbps": 4000.0,
                  "tflops": 0.0}},
        {"bench": "iron_softmax.r", "kernel": "iron_softmax", "dtype": "f32", "bytes": 2000000,
         "flops": 4000000, "peer_op": "softmax", "peer_dims": {}, "buffer_sets": 2,
         "all_written": True,
         "iron": {"median_us": 2.0, "min_us": 2.0, "max_us": 2.0, "gbps": 1000.0,
                  "tflops": 2.0},
         "reference": {"name": "hand", "matches": True, "max_abs_error": 0.0, "message": "",
                       "timing": {"median_us": 3.0, "min_us": 3.0, "max_us": 3.0, "gbps": 1.0,
                                  "tflops": 0.0}}},
        {"bench": "iron_hadamard_n64.x", "kernel": "iron_hadamard_n64", "dtype": "bf16",
         "bytes": 4000000, "flops": 0, "peer_op": "hadamard", "peer_dims": {}, "buffer_sets": 1,
         "all_written": True,
         "iron": {"median_us": 2.0, "min_us": 2.0, "max_us": 2.0, "gbps": 2000.0,
                  "tflops": 0.0},
         "library": {"name": "x @ H (cuBLAS)", "matches": True, "max_abs_error": 0.0,
                     "message": "", "timing": {"median_us": 4.5, "min_us": 4.4, "max_us": 4.6,
                                               "gbps": 1.0, "tflops": 0.0}}},
        {"bench": "iron_hadamard_n64.x", "kernel": "iron_hadamard_n64", "dtype": "f32",
         "bytes": 8000000, "flops": 0, "peer_op": "hadamard", "peer_dims": {}, "buffer_sets": 1,
         "all_written": True,
         "iron": {"median_us": 4.0, "min_us": 4.0, "max_us": 4.0, "gbps": 2000.0,
                  "tflops": 0.0},
         "library": {"name": "x @ H (cuBLAS)", "unavailable": "cuBLAS not found"}},
        {"bench": "iron_broken.x", "kernel": "iron_broken", "dtype": "f16", "bytes": 8,
         "flops": 0, "peer_op": "copy", "peer_dims": {}, "buffer_sets": 1,
         "all_written": False, "error": "output 'out': 3 of 8 elements were not written"},
    ],
}

PEERS = {
    "torch": "2.x", "triton": "3.x",
    "cases": [
        {"bench": "iron_copy.n64m", "dtype": "bf16", "peer_op": "copy",
         "peers": {"torch copy_": {"median_us": 1.5}, "triton": {"median_us": 2.0},
                   "torch.compile": {"error": "RuntimeError: no"}}},
        {"bench": "iron_softmax.r", "dtype": "f32", "peer_op": "softmax",
         "error": "no peer is defined for operation 'softmax'"},
    ],
}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.merged = report.merge(IRON, PEERS)

    def test_best_peer_and_speedup(self):
        copy = self.merged["results"][0]
        self.assertEqual(copy["best_peer"]["name"], "torch copy_")
        self.assertAlmostEqual(copy["speedup_vs_best_peer"], 1.5)
        self.assertAlmostEqual(copy["best_peer"]["gbps"], 4000000 / 1.5e3)

    def test_cases_without_peers_or_timing_keep_their_reason(self):
        softmax, broken = self.merged["results"][1], self.merged["results"][4]
        self.assertNotIn("best_peer", softmax)
        self.assertEqual(softmax["peer_error"], "no peer is defined for operation 'softmax'")
        self.assertIn("not written", broken["error"])

    def test_markdown_table(self):
        text = report.markdown(self.merged)
        self.assertIn("| iron_copy.n64m | bf16 | 1.0 | 4000 | 100% | - | torch copy_ | 1.5 | "
                      "1.50x | - |", text)
        self.assertIn("| iron_softmax.r | f32 | 2.0 | 1000 | 25% | 2.00 | no peer is defined",
                      text)
        self.assertIn("| 3.0 |", text)  # the reference's time
        self.assertIn("failed: output 'out': 3 of 8 elements were not written", text)
        self.assertIn("torch.compile: RuntimeError: no", text)
        self.assertIn("Commit `abc1234`", text)

    def test_library_call_beside_the_reference(self):
        self.assertEqual(self.merged["results"][2]["library"]["name"], "x @ H (cuBLAS)")
        text = report.markdown(self.merged)
        self.assertIn("| reference µs | library µs |", text)
        self.assertIn("| iron_hadamard_n64.x | bf16 | 2.0 | 2000 | 50% | - | none ran | - | - | "
                      "- | 4.5 |", text)
        self.assertIn("| iron_hadamard_n64.x | f32 | 4.0 | 2000 | 50% | - | none ran | - | - | "
                      "- | n/a |", text)
        self.assertIn("- iron_hadamard_n64.x bf16: x @ H (cuBLAS) in process 4.5 µs", text)
        self.assertIn("- iron_hadamard_n64.x f32: x @ H (cuBLAS) in process: cuBLAS not found",
                      text)
        self.assertIn("| iron_softmax.r | f32 | 2.0 | 1000 | 25% | 2.00 | no peer is defined "
                      "for operation 'softmax' | - | - | 3.0 | - |", text)

    def test_picture_is_well_formed_svg_with_both_panels(self):
        svg = report.picture(self.merged)
        root = ET.fromstring(svg)
        self.assertTrue(root.tag.endswith("svg"))
        self.assertIn("Roofline", svg)
        self.assertIn("Bandwidth", svg)
        self.assertIn("copy.n64m bf16", svg)  # a bandwidth bar's label
        self.assertIn(">softmax<", svg)  # a roofline point's label

    def test_command_writes_three_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            iron_path, peers_path = os.path.join(tmp, "i.json"), os.path.join(tmp, "p.json")
            with open(iron_path, "w") as f:
                json.dump(IRON, f)
            with open(peers_path, "w") as f:
                json.dump(PEERS, f)
            out = os.path.join(tmp, "out")
            subprocess.run([sys.executable, os.path.join(BENCH_DIR, "report.py"), iron_path,
                            peers_path, "--out-dir", out], check=True, capture_output=True)
            names = sorted(os.listdir(out))
            self.assertEqual(names, ["test-gpu-2026-01-02.json", "test-gpu-2026-01-02.md",
                                     "test-gpu-2026-01-02.svg"])


if __name__ == "__main__":
    unittest.main()
