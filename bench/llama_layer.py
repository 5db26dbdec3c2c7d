#!/usr/bin/env python3
"""Times one Llama-style decoder layer on the GPU, built only from Iron's library kernels
(through iron_torch), against the same layer in PyTorch, eager and `torch.compile`d: a prefill of
2048 tokens and a decode step at context 4096, bf16, Llama-3-8B's shapes.

The layer: RMSNorm → q, k, v projections → RoPE (NeoX) on q and k → KV-cache append → causal
attention (GQA, 32 query heads on 8 KV heads) → output projection → residual and RMSNorm → gate
and up projections → SwiGLU → down projection → residual. Iron's prefill runs iron_rms_norm,
iron_gemm_warpgroup_nk, iron_rope_qk_inplace_neox, iron_kv_append, iron_sdpa_prefill_d128,
iron_add_rms_norm, iron_swiglu and iron_add; its decode step runs iron_gemv for the projections
and iron_sdpa_decode with iron_sdpa_decode_combine for attention, launched one by one and
replayed as a CUDA graph.

Each form is checked first: Iron's output and PyTorch's (bf16) against the layer in f32 (the same
bf16 weights and inputs, upcast), the largest absolute error of each; Iron's must stay within
twice PyTorch's plus 1/64. Then every form is timed with CUDA events around the whole layer, the
median of --repeat runs after a warm-up.

Usage: PYTHONPATH=build/python python3 bench/llama_layer.py OUT_DIR [--repeat N]
Writes <device>-<date>-llama-layer.json and .md in OUT_DIR; the commit is $IRON_COMMIT, else
git's.
"""
import math

import torch
import torch.nn.functional as F

import iron_torch
import layer_report

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336
ROPE_BASE, EPS = 500000.0, 1e-5
PREFILL_TOKENS, CONTEXT = 2048, 4096
MAX_SEQ = 4096
BF16 = torch.bfloat16


def weights(gen):
    def rand(*shape, scale):
        return (torch.randn(shape, device="cuda", generator=gen) * scale).to(BF16)
    norm = lambda: (1.0 + 0.1 * torch.randn(HIDDEN, device="cuda", generator=gen)).to(BF16)
    return {"attn_norm": norm(), "ffn_norm": norm(),
            "q": rand(HEADS * HEAD_DIM, HIDDEN, scale=HIDDEN ** -0.5),
            "k": rand(KV_HEADS * HEAD_DIM, HIDDEN, scale=HIDDEN ** -0.5),
            "v": rand(KV_HEADS * HEAD_DIM, HIDDEN, scale=HIDDEN ** -0.5),
            "o": rand(HIDDEN, HEADS * HEAD_DIM, scale=HIDDEN ** -0.5),
            "gate": rand(FFN, HIDDEN, scale=HIDDEN ** -0.5),
            "up": rand(FFN, HIDDEN, scale=HIDDEN ** -0.5),
            "down": rand(HIDDEN, FFN, scale=FFN ** -0.5)}


# ── PyTorch: the layer as model code writes it ─────────────────────────────────────────────────

def rms_norm(x, weight):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()).to(x.dtype)


def rope(x, positions):
    """NeoX rotary embedding of x [tokens, heads, head_dim], angles in f32."""
    half = HEAD_DIM // 2
    inv_freq = ROPE_BASE ** (-torch.arange(0, half, device="cuda", dtype=torch.float32) / half)
    angle = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angle.cos()[:, None, :], angle.sin()[:, None, :]
    lo, hi = x[..., :half].float(), x[..., half:].float()
    return torch.cat([lo * cos - hi * sin, hi * cos + lo * sin], -1).to(x.dtype)


def torch_layer(x, w, k_cache, v_cache, positions, length):
    """x [tokens, hidden]; caches [kv_heads, max_seq, head_dim] updated at `positions`, the
    attention over their first `length` positions."""
    tokens = x.shape[0]
    h = rms_norm(x, w["attn_norm"])
    q = rope((h @ w["q"].t()).view(tokens, HEADS, HEAD_DIM), positions)
    k = rope((h @ w["k"].t()).view(tokens, KV_HEADS, HEAD_DIM), positions)
    v = (h @ w["v"].t()).view(tokens, KV_HEADS, HEAD_DIM)
    k_cache[:, positions] = k.transpose(0, 1)
    v_cache[:, positions] = v.transpose(0, 1)
    attn = F.scaled_dot_product_attention(
        q.transpose(0, 1)[None], k_cache[None, :, :length], v_cache[None, :, :length],
        is_causal=tokens > 1, enable_gqa=True)
    x2 = x + attn[0].transpose(0, 1).reshape(tokens, HIDDEN) @ w["o"].t()
    h2 = rms_norm(x2, w["ffn_norm"])
    return x2 + (F.silu(h2 @ w["gate"].t()) * (h2 @ w["up"].t())) @ w["down"].t()


# ── Iron: the layer on library kernels ──────────────────────────────────────────────────────────

def decode_splits(multiprocessors):
    """kernels/sdpa/decode_splits.hpp's choice for one sequence and one query token."""
    per_split = KV_HEADS * max(math.ceil(HEADS // KV_HEADS / 4), 1)
    target = 16 * multiprocessors
    return max(min(-(-target // per_split), max(MAX_SEQ // 256, 1), 64), 1)


class IronLayer:
    """The layer for `tokens` new tokens, its buffers allocated once."""

    def __init__(self, tokens):
        self.tokens = tokens

        def empty(*shape, dtype=BF16):
            return torch.empty(shape, device="cuda", dtype=dtype)
        self.h = empty(tokens, HIDDEN)
        self.q = empty(tokens, HEADS, HEAD_DIM)
        self.k = empty(tokens, KV_HEADS, HEAD_DIM)
        self.v = empty(tokens, KV_HEADS, HEAD_DIM)
        self.attn = empty(tokens, HEADS, HEAD_DIM)
        self.o = empty(tokens, HIDDEN)
        self.x2 = empty(tokens, HIDDEN)
        self.h2 = empty(tokens, HIDDEN)
        self.gate = empty(tokens, FFN)
        self.up = empty(tokens, FFN)
        self.act = empty(tokens, FFN)
        self.down = empty(tokens, HIDDEN)
        self.y = empty(tokens, HIDDEN)
        self.sinks = torch.full((HEADS,), -math.inf, device="cuda", dtype=torch.float32)
        self.cu_seqlens = torch.tensor([0, tokens], device="cuda", dtype=torch.uint32)
        self.splits = decode_splits(torch.cuda.get_device_properties(0).multi_processor_count)
        self.partial_out = empty(tokens, HEADS, self.splits, HEAD_DIM, dtype=torch.float32)
        self.partial_lse = empty(tokens, HEADS, self.splits, dtype=torch.float32)

    def project(self, x, w, out, n, k):
        if self.tokens == 1:
            iron_torch.run("iron_gemv", x, w, out, 1, n, k)
        else:
            iron_torch.run("iron_gemm_warpgroup_nk", x, w, out, self.tokens, n, k, 1.0)

    def __call__(self, x, w, k_cache, v_cache, positions, seq_len):
        t = self.tokens
        run = iron_torch.run
        run("iron_rms_norm", x, w["attn_norm"], self.h, HIDDEN, EPS)
        self.project(self.h, w["q"], self.q, HEADS * HEAD_DIM, HIDDEN)
        self.project(self.h, w["k"], self.k, KV_HEADS * HEAD_DIM, HIDDEN)
        self.project(self.h, w["v"], self.v, KV_HEADS * HEAD_DIM, HIDDEN)
        run("iron_rope_qk_inplace_neox", self.q, self.k, positions, t, HEADS, KV_HEADS, HEAD_DIM,
            HEAD_DIM, ROPE_BASE)
        run("iron_kv_append", self.k, self.v, positions, k_cache, v_cache, t, KV_HEADS, HEAD_DIM,
            MAX_SEQ)
        scale = HEAD_DIM ** -0.5
        if t == 1:
            run("iron_sdpa_decode", self.q, k_cache, v_cache, seq_len, self.partial_out,
                self.partial_lse, 1, 1, HEADS, KV_HEADS, HEAD_DIM, MAX_SEQ, self.splits, 0, scale)
            run("iron_sdpa_decode_combine", self.partial_out, self.partial_lse, self.sinks,
                self.attn, 1, 1, HEADS, HEAD_DIM, self.splits)
        else:
            run("iron_sdpa_prefill_d128", self.q, self.k, self.v, self.cu_seqlens, self.cu_seqlens,
                self.sinks, self.attn, 1, HEADS, KV_HEADS, t, t, t, 1, 0, scale)
        self.project(self.attn, w["o"], self.o, HIDDEN, HEADS * HEAD_DIM)
        run("iron_add_rms_norm", self.o, x, w["ffn_norm"], self.x2, self.h2, HIDDEN, EPS)
        self.project(self.h2, w["gate"], self.gate, FFN, HIDDEN)
        self.project(self.h2, w["up"], self.up, FFN, HIDDEN)
        run("iron_swiglu", self.gate, self.up, self.act, t * FFN)
        self.project(self.act, w["down"], self.down, HIDDEN, FFN)
        run("iron_add", self.x2, self.down, self.y, t * HIDDEN)
        return self.y


# ── Checking and timing ─────────────────────────────────────────────────────────────────────────



def run_form(name, tokens, w, repeat, gen):
    """One form (prefill: positions 0 … tokens − 1 of an empty cache; decode: position
    CONTEXT − 1 after CONTEXT − 1 cached keys): check, then time each implementation."""
    first = CONTEXT - tokens if tokens == 1 else 0
    positions = torch.arange(first, first + tokens, device="cuda", dtype=torch.int64)
    x = torch.randn((tokens, HIDDEN), device="cuda", generator=gen).to(BF16)
    caches = [torch.randn((KV_HEADS, MAX_SEQ, HEAD_DIM), device="cuda", generator=gen).to(BF16)
              for _ in range(2)]
    iron = IronLayer(tokens)
    iron_positions = positions.to(torch.uint32)
    seq_len = torch.tensor([first + tokens], device="cuda", dtype=torch.uint32)

    def iron_run():
        return iron(x, w, caches[0], caches[1], iron_positions, seq_len)

    length = first + tokens

    def torch_run(fn):
        return lambda: fn(x, w, caches[0], caches[1], positions, length)

    w32 = {key: value.float() for key, value in w.items()}
    want = torch_layer(x.float(), w32, caches[0].float(), caches[1].float(), positions, length)
    got = iron_run().float()
    eager = torch_layer(x, w, caches[0].clone(), caches[1].clone(), positions, length).float()
    iron_error = (got - want).abs().max().item()
    torch_error = (eager - want).abs().max().item()
    if not iron_error <= 2 * torch_error + 1 / 64:
        raise RuntimeError(f"{name}: Iron's largest error {iron_error:.3g} against the f32 layer, "
                           f"PyTorch's {torch_error:.3g}")
    times = {"Iron": layer_report.median_us(iron_run, repeat)}
    if tokens == 1:
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            iron_run()
            with torch.cuda.graph(graph, stream=stream):
                iron_run()
        torch.cuda.current_stream().wait_stream(stream)
        times["Iron, CUDA graph"] = layer_report.median_us(graph.replay, repeat)
    times["PyTorch eager"] = layer_report.median_us(torch_run(torch_layer), repeat)
    try:
        compiled = torch.compile(torch_layer)
        times["torch.compile"] = layer_report.median_us(torch_run(compiled), repeat)
    except Exception as error:  # reported, not fatal
        times["torch.compile"] = f"failed: {type(error).__name__}: {error}".splitlines()[0][:200]
    best_torch = min(t for key, t in times.items() if key.startswith(("PyTorch", "torch")) and
                     isinstance(t, float))
    best_iron = min(t for key, t in times.items() if key.startswith("Iron"))
    print(f"{name}: " + ", ".join(f"{k} {v:.1f} us" if isinstance(v, float) else f"{k} {v}"
                                  for k, v in times.items()) +
          f"; Iron's error {iron_error:.3g}, PyTorch's {torch_error:.3g}", flush=True)
    return {"form": name, "tokens": tokens, "context": first + tokens, "times_us": times,
            "iron_max_error": iron_error, "torch_max_error": torch_error,
            "speedup_vs_best_torch": best_torch / best_iron}




def markdown(report):
    lines = ["# Llama decoder layer: Iron's kernels end to end against PyTorch", "",
             f"{report['device']}, {report['date']}, commit `{report['commit']}`, PyTorch "
             f"{report['torch']}; bf16, hidden {HIDDEN}, {HEADS} heads on {KV_HEADS} KV heads of "
             f"{HEAD_DIM}, FFN {FFN}; median of {report['repeat']} runs, CUDA events around the "
             "whole layer (bench/llama_layer.py).", "",
             "| form | implementation | µs | largest error vs f32 |",
             "| --- | --- | ---: | ---: |"]
    for r in report["forms"]:
        for impl, t in r["times_us"].items():
            error = r["iron_max_error"] if impl.startswith("Iron") else r["torch_max_error"]
            shown = f"{t:.1f}" if isinstance(t, float) else t
            lines.append(f"| {r['form']} | {impl} | {shown} | {error:.3g} |")
    lines.append("")
    for r in report["forms"]:
        lines.append(f"- {r['form']}: Iron's best is {r['speedup_vs_best_torch']:.2f}x "
                     "PyTorch's best.")
    return "\n".join(lines) + "\n"


def main():
    args = layer_report.arguments(__doc__, "bench/llama_layer.py")
    gen = torch.Generator(device="cuda").manual_seed(1)
    w = weights(gen)
    report = layer_report.header(args.repeat)
    report["forms"] = [
        run_form(f"prefill of {PREFILL_TOKENS} tokens", PREFILL_TOKENS, w, args.repeat, gen),
        run_form(f"decode step at context {CONTEXT}", 1, w, args.repeat, gen)]
    layer_report.write(report, markdown(report), args.out_dir, "llama-layer")

if __name__ == "__main__":
    main()
