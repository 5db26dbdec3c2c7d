#!/usr/bin/env python3
"""Times a whole mixture-of-experts feed-forward layer on the GPU: Iron's kernels end to end
against the PyTorch loop over experts that model code runs (Mixtral's), on the same tokens and
weights, after checking that both compute the same layer.

Iron's layer, nine launches through iron_torch: the router's logits (iron_gemm_nk), the routing
(iron_moe_router: softmax, top-k, renormalized), the sort (iron_moe_sort), the gather
(iron_moe_permute), the gate and up products (iron_moe_gemm twice), SwiGLU (iron_swiglu), the down
product (iron_moe_gemm) and the weighted combine (iron_moe_combine). PyTorch's: the logits, softmax
and top-k, then for each expert its tokens' gate, up and down products and an index_add_.

Each layer is checked first: Iron's output against the PyTorch loop run with Iron's routing (the
same experts and weights; a tie between two logits may route differently otherwise), relative
Frobenius error under 2e-2. Then both are timed with CUDA events around the whole layer, the
median of --repeat runs after a warm-up.

Usage: PYTHONPATH=build/python python3 bench/moe_layer.py OUT_DIR [--repeat N]
Writes <device>-<date>-moe-layer.json and .md in OUT_DIR; the commit is $IRON_COMMIT, else git's.
"""

import torch
import torch.nn.functional as F

import iron_torch
import layer_report

LAYERS = [
    # name, tokens, experts, top_k, hidden, ffn
    ("mixtral: 8 experts, top-2, hidden 4096, ffn 14336", 4096, 8, 2, 4096, 14336),
    ("many experts: 128 experts, top-8, hidden 2048, ffn 768", 4096, 128, 8, 2048, 768),
]


def weights(experts, hidden, ffn, gen):
    """The layer's weights in bf16, scaled so activations stay near 1."""
    def rand(*shape, scale):
        return (torch.randn(shape, device="cuda", generator=gen) * scale).to(torch.bfloat16)
    return {"gate": rand(experts, hidden, scale=hidden ** -0.5),
            "w1": rand(experts, ffn, hidden, scale=hidden ** -0.5),
            "w3": rand(experts, ffn, hidden, scale=hidden ** -0.5),
            "w2": rand(experts, hidden, ffn, scale=ffn ** -0.5)}


class IronLayer:
    """The layer on Iron's kernels, with its buffers allocated once."""

    def __init__(self, tokens, experts, top_k, hidden, ffn):
        self.shape = (tokens, experts, top_k, hidden, ffn)
        rows = tokens * top_k

        def empty(*shape, dtype=torch.bfloat16):
            return torch.empty(shape, device="cuda", dtype=dtype)
        self.logits = empty(tokens, experts)
        self.no_bias = torch.zeros(experts, device="cuda", dtype=torch.float32)
        self.ids = empty(tokens, top_k, dtype=torch.uint32)
        self.route_weights = empty(tokens, top_k, dtype=torch.float32)
        self.counts = empty(experts, dtype=torch.uint32)
        self.offsets = empty(experts + 1, dtype=torch.uint32)
        self.rows = empty(tokens, top_k, dtype=torch.uint32)
        self.sources = empty(rows, dtype=torch.uint32)
        self.x_sorted = empty(rows, hidden)
        self.gate_out = empty(rows, ffn)
        self.up_out = empty(rows, ffn)
        self.act = empty(rows, ffn)
        self.y_sorted = empty(rows, hidden)
        self.y = empty(tokens, hidden)

    def route(self, x, w):
        tokens, experts, top_k, hidden, _ = self.shape
        iron_torch.run("iron_gemm_nk", x, w["gate"], self.logits, tokens, experts, hidden, 1.0)
        iron_torch.run("iron_moe_router", self.logits, self.no_bias, self.ids, self.route_weights,
                       tokens, experts, top_k, 0, 1, 0)

    def experts(self, x, w):
        tokens, experts, top_k, hidden, ffn = self.shape
        rows = tokens * top_k
        iron_torch.run("iron_moe_sort", self.ids, self.counts, self.offsets, self.rows,
                       self.sources, tokens, top_k, experts)
        iron_torch.run("iron_moe_permute", x, self.rows, self.offsets, self.x_sorted, tokens,
                       top_k, experts, hidden)
        iron_torch.run("iron_moe_gemm", self.x_sorted, w["w1"], self.offsets, self.gate_out,
                       rows, experts, ffn, hidden)
        iron_torch.run("iron_moe_gemm", self.x_sorted, w["w3"], self.offsets, self.up_out, rows,
                       experts, ffn, hidden)
        iron_torch.run("iron_swiglu", self.gate_out, self.up_out, self.act, rows * ffn)
        iron_torch.run("iron_moe_gemm", self.act, w["w2"], self.offsets, self.y_sorted, rows,
                       experts, hidden, ffn)
        iron_torch.run("iron_moe_combine", self.y_sorted, self.rows, self.route_weights, self.y,
                       tokens, top_k, hidden)
        return self.y

    def __call__(self, x, w):
        self.route(x, w)
        return self.experts(x, w)


def torch_experts(x, w, ids, route_weights):
    """Mixtral's loop: each expert's tokens through its SwiGLU FFN, added in with their weight."""
    y = torch.zeros_like(x)
    for e in range(w["w1"].shape[0]):
        token, slot = torch.where(ids == e)
        if token.numel() == 0:
            continue
        h = x[token]
        h = F.silu(h @ w["w1"][e].t()) * (h @ w["w3"][e].t())
        y.index_add_(0, token, (h @ w["w2"][e].t()) * route_weights[token, slot, None].to(x.dtype))
    return y


def torch_layer(x, w, top_k):
    """The layer as model code writes it: softmax routing, top-k renormalized, the loop."""
    probs = torch.softmax((x @ w["gate"].t()).float(), -1)
    route_weights, ids = probs.topk(top_k, -1)
    route_weights /= route_weights.sum(-1, keepdim=True)
    return torch_experts(x, w, ids, route_weights)




def run_layer(name, tokens, experts, top_k, hidden, ffn, repeat):
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn((tokens, hidden), device="cuda", generator=gen).to(torch.bfloat16)
    w = weights(experts, hidden, ffn, gen)
    layer = IronLayer(tokens, experts, top_k, hidden, ffn)
    got = layer(x, w).float()
    ids = layer.ids.to(torch.int64)
    want = torch_experts(x, w, ids, layer.route_weights).float()
    error = ((got - want).norm() / want.norm()).item()
    if not error < 2e-2:
        raise RuntimeError(f"{name}: Iron's layer differs from PyTorch's (relative error "
                           f"{error:.3g})")
    flops = 2 * tokens * top_k * 3 * hidden * ffn + 2 * tokens * hidden * experts
    iron_us = layer_report.median_us(lambda: layer(x, w), repeat)
    torch_us = layer_report.median_us(lambda: torch_layer(x, w, top_k), repeat)
    print(f"{name}: Iron {iron_us:.1f} us, PyTorch loop {torch_us:.1f} us "
          f"({torch_us / iron_us:.2f}x), relative error {error:.2e}", flush=True)
    return {"layer": name, "tokens": tokens, "experts": experts, "top_k": top_k,
            "hidden": hidden, "ffn": ffn, "relative_error": error, "iron_us": iron_us,
            "torch_loop_us": torch_us, "speedup": torch_us / iron_us,
            "iron_tflops": flops / iron_us / 1e6}




def markdown(report):
    lines = [f"# MoE layer: Iron's kernels end to end against the PyTorch loop over experts",
             "",
             f"{report['device']}, {report['date']}, commit `{report['commit']}`, PyTorch "
             f"{report['torch']}; bf16, median of {report['repeat']} runs, CUDA events around "
             "the whole layer (bench/moe_layer.py).",
             "",
             "| layer | tokens | Iron µs | PyTorch loop µs | speedup | Iron TFLOP/s | "
             "relative error |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in report["layers"]:
        lines.append(f"| {r['layer']} | {r['tokens']} | {r['iron_us']:.1f} | "
                     f"{r['torch_loop_us']:.1f} | {r['speedup']:.2f}x | {r['iron_tflops']:.1f} | "
                     f"{r['relative_error']:.2e} |")
    return "\n".join(lines) + "\n"


def main():
    args = layer_report.arguments(__doc__, "bench/moe_layer.py")
    report = layer_report.header(args.repeat)
    report["layers"] = [run_layer(*layer, args.repeat) for layer in LAYERS]
    layer_report.write(report, markdown(report), args.out_dir, "moe-layer")

if __name__ == "__main__":
    main()
