"""The peer implementations of each Iron bench operation, by the operation name a bench gives in
`BenchSetup::peer(op, dims)`. CASES[op] = (make_inputs, peers): make_inputs(dims, dtype, gen)
returns the inputs as a tuple; peers(dims, dtype) returns {peer name: builder}, and each
builder returns a function of the inputs that computes the operation and returns its output.
The first peer listed is the reference the others are checked against."""
import torch
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except ImportError:  # Triton peers are skipped where Triton is absent
    triton = None


def triton_version():
    return triton.__version__ if triton else None


def uniform(shape, dtype, gen, lo=-1.0, hi=1.0):
    return (torch.rand(shape, device="cuda", generator=gen) * (hi - lo) + lo).to(dtype)


def ints(shape, hi, gen, lo=0):
    return torch.randint(lo, hi, shape, device="cuda", generator=gen, dtype=torch.int64)


def compiled(fn):
    """torch.compile of fn, built on first use so that --no-compile never compiles."""
    return lambda: torch.compile(fn, dynamic=False)


def d(dims, key):
    return int(dims[key])


# ── Triton kernels: the standard forms a Triton user writes ────────────────────────────────────

if triton:
    @triton.jit
    def _triton_scale(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, (x.to(tl.float32) * alpha).to(out_ptr.dtype.element_ty),
                 mask=mask)

    @triton.jit
    def _triton_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (a + b).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _triton_softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * n + offs, y.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _triton_rms_norm(x_ptr, w_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        r = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
        tl.store(out_ptr + row * n + offs, (x * r * w).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _triton_matmul(a_ptr, b_ptr, c_ptr, m, n, k, b_k_stride, b_n_stride,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
        # The tutorial's tile order: GROUP rows of tiles walk the columns together (L2 reuse).
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(m, BM), tl.cdiv(n, BN)
        first_m = pid // (GROUP * tiles_n) * GROUP
        rows_here = min(tiles_m - first_m, GROUP)
        tile_m = first_m + (pid % (GROUP * tiles_n)) % rows_here
        tile_n = (pid % (GROUP * tiles_n)) // rows_here
        rm = tile_m * BM + tl.arange(0, BM)
        rn = tile_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, k, BK):
            kk = k0 + rk
            a = tl.load(a_ptr + rm[:, None] * k + kk[None, :],
                        mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * b_k_stride + rn[None, :] * b_n_stride,
                        mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc.to(c_ptr.dtype.element_ty),
                 mask=(rm[:, None] < m) & (rn[None, :] < n))


    @triton.jit
    def _triton_attention(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale2, D: tl.constexpr,
                          CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
        # The fused-attention tutorial's method: one BM-row query tile per program, keys in BN
        # steps, an online softmax in exp2 units; [batch·heads, seq, D] contiguous.
        tile, bh = tl.program_id(0), tl.program_id(1)
        base = bh * seq * D
        rows = tile * BM + tl.arange(0, BM)
        cols = tl.arange(0, D)
        q = tl.load(q_ptr + base + rows[:, None] * D + cols[None, :], mask=rows[:, None] < seq,
                    other=0.0)
        m = tl.full((BM,), float("-inf"), tl.float32)
        l = tl.zeros((BM,), tl.float32)
        acc = tl.zeros((BM, D), tl.float32)
        end = tl.minimum((tile + 1) * BM, seq) if CAUSAL else seq
        for k0 in range(0, end, BN):
            keys = k0 + tl.arange(0, BN)
            kt = tl.load(k_ptr + base + keys[None, :] * D + cols[:, None],
                         mask=keys[None, :] < seq, other=0.0)
            s = tl.dot(q, kt) * scale2
            seen = keys[None, :] < seq
            if CAUSAL:
                seen = seen & (keys[None, :] <= rows[:, None])
            s = tl.where(seen, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            alpha = tl.math.exp2(m - m_new)
            p = tl.math.exp2(s - m_new[:, None])
            l = l * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + base + keys[:, None] * D + cols[None, :],
                        mask=keys[:, None] < seq, other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m = m_new
        tl.store(o_ptr + base + rows[:, None] * D + cols[None, :],
                 (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < seq)


def triton_attention(causal, scale):
    """Fused attention on [batch, heads, seq, D] tensors, 128-row tiles, 64-key steps."""
    def run(q, k, v):
        b, h, seq, dd = q.shape
        out = torch.empty_like(q)
        grid = (triton.cdiv(seq, 128), b * h)
        _triton_attention[grid](q, k, v, out, seq, scale * 1.4426950408889634, D=dd,
                                CAUSAL=causal, BM=128, BN=64, num_warps=8, num_stages=3)
        return out
    return run


def triton_matmul(b_rows):
    """a @ b for b [k, n] (b_rows) or a @ b.T for b [n, k], 128×128×64 tiles, 4 stages."""
    def run(a, b):
        m, k = a.shape
        n = b.shape[1] if b_rows else b.shape[0]
        out = torch.empty((m, n), dtype=a.dtype, device=a.device)
        strides = (b.stride(0), b.stride(1)) if b_rows else (b.stride(1), b.stride(0))
        grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
        _triton_matmul[grid](a, b, out, m, n, k, *strides, BM=128, BN=128, BK=64, GROUP=8,
                             num_warps=8, num_stages=4)
        return out
    return run


def triton_scale(alpha):
    def run(x):
        out = torch.empty_like(x)
        n = x.numel()
        _triton_scale[(triton.cdiv(n, 1024),)](x, out, alpha, n, BLOCK=1024)
        return out
    return run


def triton_add(a, b):
    out = torch.empty_like(a)
    n = a.numel()
    _triton_add[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
    return out


def triton_softmax(x):
    rows, n = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    _triton_softmax[(rows,)](x, out, n, BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return out


def triton_rms_norm(eps):
    def run(x, w):
        rows, n = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(n)
        _triton_rms_norm[(rows,)](x, w, out, n, eps, BLOCK=block,
                                  num_warps=8 if block >= 2048 else 4)
        return out
    return run


def with_triton(peers, **triton_peers):
    if triton:
        peers.update({name: (lambda f=f: f) for name, f in triton_peers.items()})
    return peers


# ── Streaming ──────────────────────────────────────────────────────────────────────────────────

def _one(dims, dtype, gen):
    return (uniform(d(dims, "n"), dtype, gen),)


def _two(dims, dtype, gen):
    return (uniform(d(dims, "n"), dtype, gen), uniform(d(dims, "n"), dtype, gen, 0.5, 1.5))


def _rows_and_row(dims, dtype, gen):
    return (uniform((d(dims, "rows"), d(dims, "n")), dtype, gen),
            uniform(d(dims, "n"), dtype, gen, 0.5, 1.5))


def _copy_peers(dims, dtype):
    return with_triton({"torch copy_": lambda: lambda x: torch.empty_like(x).copy_(x)})


def _scale_peers(dims, dtype):
    alpha = dims["alpha"]
    return with_triton({"torch.mul": lambda: lambda x: torch.mul(x, alpha),
                        "torch.compile": compiled(lambda x: x * alpha)},
                       triton=triton_scale(alpha))


def _binary(fn, triton_fn=None):
    def peers(dims, dtype):
        p = {f"torch.{fn.__name__}": lambda: fn}
        return with_triton(p, triton=triton_fn) if triton_fn else p
    return peers


def _unary(name, fn, compile_too=False):
    """A single PyTorch call; with compile_too also torch.compile of it, where compiling can
    fuse something (each compile costs seconds, so only where it may win)."""
    def peers(dims, dtype):
        p = {name: lambda: fn}
        if compile_too:
            p["torch.compile"] = compiled(fn)
        return p
    return peers


def _swiglu(a, b):
    return F.silu(a) * b


def _gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


# ── Rows ───────────────────────────────────────────────────────────────────────────────────────

def _rows(dims, dtype, gen):
    return (uniform((d(dims, "rows"), d(dims, "n")), dtype, gen, -4.0, 4.0),)


def _softmax_peers(dims, dtype):
    return with_triton({"torch.softmax": lambda: lambda x: torch.softmax(x, -1),
                        "torch.compile": compiled(lambda x: torch.softmax(x, -1))},
                       triton=triton_softmax)


def _norm_inputs(dims, dtype, gen):
    return (uniform((d(dims, "rows"), d(dims, "n")), dtype, gen),
            uniform(d(dims, "n"), dtype, gen, 0.5, 1.5))


def _rms_norm_peers(dims, dtype):
    eps = dims.get("eps", 1e-6)
    n = d(dims, "n")
    fn = lambda x, w: F.rms_norm(x, (n,), w, eps)  # noqa: E731
    return with_triton({"F.rms_norm": lambda: fn, "torch.compile": compiled(fn)},
                       triton=triton_rms_norm(eps))


def _layer_norm_inputs(dims, dtype, gen):
    n = d(dims, "n")
    return (uniform((d(dims, "rows"), n), dtype, gen), uniform(n, dtype, gen, 0.5, 1.5),
            uniform(n, dtype, gen))


def _layer_norm_peers(dims, dtype):
    eps = dims.get("eps", 1e-5)
    n = d(dims, "n")
    with_bias = bool(dims.get("bias", 0))
    fn = lambda x, w, b: F.layer_norm(x, (n,), w, b if with_bias else None, eps)  # noqa: E731
    return {"F.layer_norm": lambda: fn, "torch.compile": compiled(fn)}


def _add_rms_norm_inputs(dims, dtype, gen):
    rows, n = d(dims, "rows"), d(dims, "n")
    return (uniform((rows, n), dtype, gen), uniform((rows, n), dtype, gen),
            uniform(n, dtype, gen, 0.5, 1.5))


def _add_rms_norm_peers(dims, dtype):
    eps = dims.get("eps", 1e-6)
    n = d(dims, "n")

    def eager(x, residual, w):  # both outputs, as Iron writes both
        s = x + residual
        return F.rms_norm(s, (n,), w, eps), s
    return {"torch eager (add, rms_norm)": lambda: eager, "torch.compile": compiled(eager)}


def _embedding(dims, dtype, gen):
    return (uniform((d(dims, "vocab"), d(dims, "dim")), dtype, gen),
            ints((d(dims, "rows"),), d(dims, "vocab"), gen))


def _scatter_rows(dims, dtype, gen):
    rows, out_rows, dim = d(dims, "rows"), d(dims, "out_rows"), d(dims, "dim")
    idx = torch.randperm(out_rows, device="cuda", generator=gen)[:rows]
    return (uniform((rows, dim), dtype, gen), idx, torch.zeros((out_rows, dim), dtype=dtype,
                                                               device="cuda"))


def _transpose(dims, dtype, gen):
    return (uniform((d(dims, "rows"), d(dims, "cols")), dtype, gen),)


def _arange_peers(dims, dtype):
    n = d(dims, "n")
    return {"torch.arange": lambda: lambda: torch.arange(n, dtype=dtype, device="cuda")}


# ── Quantization ───────────────────────────────────────────────────────────────────────────────

def _dequant_affine_inputs(dims, dtype, gen):
    rows, cols, bits, group = (d(dims, k) for k in ("rows", "cols", "bits", "group"))
    words = torch.randint(-2**31, 2**31, (rows, cols * bits // 32), device="cuda",
                          generator=gen, dtype=torch.int64).to(torch.int32)
    return (words, uniform((rows, cols // group), dtype, gen, 0.01, 0.1),
            uniform((rows, cols // group), dtype, gen))


def _dequant_affine_peers(dims, dtype):
    rows, cols, bits, group = (d(dims, k) for k in ("rows", "cols", "bits", "group"))
    shifts = torch.arange(0, 32, bits, device="cuda", dtype=torch.int32)

    def eager(words, scales, biases):
        q = ((words[..., None] >> shifts) & (2**bits - 1)).view(rows, cols // group, group)
        return (q.to(dtype) * scales[..., None] + biases[..., None]).view(rows, cols)
    return {"torch eager unpack": lambda: eager}


def _dequant_mxfp4_inputs(dims, dtype, gen):
    rows, cols = d(dims, "rows"), d(dims, "cols")
    blocks = torch.randint(0, 256, (rows, cols // 2), device="cuda", generator=gen,
                           dtype=torch.int32).to(torch.uint8)
    scales = torch.randint(120, 135, (rows, cols // 32), device="cuda", generator=gen,
                           dtype=torch.int32).to(torch.uint8)
    return (blocks, scales)


def _dequant_mxfp4_peers(dims, dtype):
    rows, cols = d(dims, "rows"), d(dims, "cols")
    lut = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6],
                       device="cuda", dtype=torch.float32)

    def eager(blocks, scales):
        codes = torch.stack([blocks & 15, blocks >> 4], -1).view(rows, cols // 32, 32)
        scale = torch.exp2(scales.float() - 127)[..., None]
        return (lut[codes.long()] * scale).view(rows, cols).to(dtype)
    return {"torch eager LUT": lambda: eager}


def _hadamard_peers(dims, dtype):
    n = d(dims, "n")
    i = torch.arange(n, device="cuda")
    both = i[:, None] & i[None, :]
    parity = torch.zeros_like(both)
    for bit in range(n.bit_length()):
        parity ^= (both >> bit) & 1
    h = ((1 - 2 * parity).float() / n ** 0.5).to(dtype)  # H[i, j] = (-1)^popcount(i & j)
    return {"x @ H (cuBLAS)": lambda: lambda x: x @ h}


# ── Rotary embedding and the KV cache ────────────────────────────────────────────────────────

def _rope_inputs(dims, dtype, gen):
    tokens, heads, head_dim = d(dims, "tokens"), d(dims, "heads"), d(dims, "head_dim")
    rot = d(dims, "rot_dim")
    positions = torch.arange(tokens, device="cuda")
    inv_freq = 1.0 / (dims["base"] ** (torch.arange(0, rot, 2, device="cuda").float() / rot))
    freqs = positions.float()[:, None] * inv_freq[None, :]
    table = torch.cat((freqs.cos(), freqs.sin()), -1)  # [tokens, rot]: cos half, sin half
    return (uniform((tokens, heads, head_dim), dtype, gen), positions, table)


def _rope_qk_inputs(dims, dtype, gen):
    q, positions, table = _rope_inputs(dict(dims, heads=dims["heads_q"]), dtype, gen)
    k = uniform((d(dims, "tokens"), d(dims, "heads_kv"), d(dims, "head_dim")), dtype, gen)
    return (q, k, positions, table)


def _rope_qk_peers(interleaved):
    def peers(dims, dtype):
        """The queries and the keys rotated in place one after the other, as a layer does."""
        rope = _rope_peers(interleaved)(dict(dims, in_place=1), dtype)["torch eager composite"]()

        def eager(q, k, positions, table):
            rope(q, positions, table)
            rope(k, positions, table)
            return q, k
        return {"torch eager composite": lambda: eager, "torch.compile": compiled(eager)}
    return peers


def _rope_peers(interleaved):
    def peers(dims, dtype):
        rot = d(dims, "rot_dim")
        use_table, in_place = bool(dims.get("table", 0)), bool(dims.get("in_place", 0))

        def eager(x, positions, table):
            if use_table:
                c, s = table[positions, :rot // 2], table[positions, rot // 2:]
            else:
                inv_freq = 1.0 / (dims["base"] ** (
                    torch.arange(0, rot, 2, device="cuda", dtype=torch.float32) / rot))
                f = positions.float()[:, None] * inv_freq[None, :]
                c, s = f.cos(), f.sin()
            xr, xp = x[..., :rot], x[..., rot:]
            if interleaved:
                cos, sin = c.to(dtype)[:, None, :], s.to(dtype)[:, None, :]
                x1, x2 = xr[..., 0::2], xr[..., 1::2]
                rotated = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1).flatten(-2)
            else:
                cos = torch.cat((c, c), -1).to(dtype)[:, None, :]
                sin = torch.cat((s, s), -1).to(dtype)[:, None, :]
                x1, x2 = xr[..., :rot // 2], xr[..., rot // 2:]
                rotated = xr * cos + torch.cat((-x2, x1), -1) * sin
            out = torch.cat((rotated, xp), -1)
            return x.copy_(out) if in_place else out
        return {"torch eager composite": lambda: eager, "torch.compile": compiled(eager)}
    return peers


def _kv_append_inputs(dims, dtype, gen):
    tokens, heads, head_dim, max_seq = (d(dims, k) for k in
                                        ("new_tokens", "heads", "head_dim", "max_seq"))
    cache = lambda: torch.zeros((heads, max_seq, head_dim), dtype=dtype, device="cuda")  # noqa
    positions = torch.arange(d(dims, "start"), d(dims, "start") + tokens, device="cuda")
    return (uniform((tokens, heads, head_dim), dtype, gen),
            uniform((tokens, heads, head_dim), dtype, gen), positions, cache(), cache())


def _kv_append_peers(dims, dtype):
    def eager(k, v, positions, k_cache, v_cache):
        k_cache.index_copy_(1, positions, k.transpose(0, 1))
        v_cache.index_copy_(1, positions, v.transpose(0, 1))
        return k_cache
    return {"index_copy_ (two calls)": lambda: eager}


def _kv_append_paged_inputs(dims, dtype, gen):
    tokens, heads, head_dim, pages, page = (d(dims, k) for k in
                                            ("new_tokens", "heads_kv", "head_dim", "num_pages",
                                             "page_size"))
    pool = lambda: torch.zeros((pages, heads, page, head_dim), dtype=dtype, device="cuda")  # noqa
    order = torch.randperm(pages, device="cuda", generator=gen)
    positions = torch.arange(d(dims, "start"), d(dims, "start") + tokens, device="cuda")
    slots = order[positions // page] * page + positions % page
    return (uniform((tokens, heads, head_dim), dtype, gen),
            uniform((tokens, heads, head_dim), dtype, gen), slots, pool(), pool())


def _kv_append_paged_peers(dims, dtype):
    page = d(dims, "page_size")

    def eager(k, v, slots, k_pages, v_pages):
        """vLLM's slot mapping with advanced indexing: page slots // page, row slots % page."""
        k_pages[slots // page, :, slots % page] = k
        v_pages[slots // page, :, slots % page] = v
        return k_pages
    return {"index_put_ (two calls)": lambda: eager}


# ── Attention ────────────────────────────────────────────────────────────────────────────────

def _sdpa_decode_inputs(dims, dtype, gen):
    b, t, hq, hkv, seq, dd = (d(dims, k) for k in
                              ("batch", "q_tokens", "heads_q", "heads_kv", "seq", "head_dim"))
    return (uniform((b, hq, t, dd), dtype, gen), uniform((b, hkv, seq, dd), dtype, gen),
            uniform((b, hkv, seq, dd), dtype, gen))


def _sdpa_decode_peers(dims, dtype):
    """q_tokens new queries at the end of the cache: causal from the bottom right when several."""
    t, seq = d(dims, "q_tokens"), d(dims, "seq")
    mask = None
    if t > 1:
        mask = (torch.arange(seq, device="cuda")[None, :] <=
                torch.arange(seq - t, seq, device="cuda")[:, None])

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    return {"torch SDPA (enable_gqa)": lambda: sdpa}


def _sdpa_prefill_inputs(dims, dtype, gen):
    b, hq, hkv, seq, dd = (d(dims, k) for k in ("batch", "heads_q", "heads_kv", "seq", "head_dim"))
    return (uniform((b, hq, seq, dd), dtype, gen), uniform((b, hkv, seq, dd), dtype, gen),
            uniform((b, hkv, seq, dd), dtype, gen))


def _sdpa_prefill_peers(dims, dtype):
    """torch SDPA pinned to cuDNN and to FlashAttention-2, and the Triton fused attention."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    causal, scale = bool(dims["causal"]), float(dims["scale"])
    gqa = dims["heads_q"] != dims["heads_kv"]

    def pinned(backend):
        def run(q, k, v):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale,
                                                      enable_gqa=gqa)
        return run
    peers = {"torch SDPA (cuDNN)": lambda: pinned(SDPBackend.CUDNN_ATTENTION),
             "torch SDPA (FlashAttention-2)": lambda: pinned(SDPBackend.FLASH_ATTENTION)}
    return peers if gqa else with_triton(peers, triton=triton_attention(causal, scale))


def _varlen_lens(dims):
    return [d(dims, f"len{i}") for i in range(d(dims, "batch"))]


def _sdpa_prefill_varlen_inputs(dims, dtype, gen):
    """One [1, heads, len, D] q, k and v per sequence."""
    h, dd = d(dims, "heads"), d(dims, "head_dim")
    return tuple(tuple(uniform((1, h, n, dd), dtype, gen) for _ in range(3))
                 for n in _varlen_lens(dims))


def _sdpa_prefill_varlen_peers(dims, dtype):
    """What torch offers a batch of mixed lengths: one SDPA call per sequence."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    causal, scale = bool(dims["causal"]), float(dims["scale"])

    def pinned(backend):
        def run(*seqs):
            with sdpa_kernel(backend):
                return torch.cat([F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 scale=scale).flatten()
                                  for q, k, v in seqs])
        return run
    return {"torch SDPA per sequence (cuDNN)": lambda: pinned(SDPBackend.CUDNN_ATTENTION),
            "torch SDPA per sequence (FlashAttention-2)":
                lambda: pinned(SDPBackend.FLASH_ATTENTION)}


def _sdpa_decode_combine_inputs(dims, dtype, gen):
    rows, hq, dd, s = (d(dims, k) for k in ("rows", "heads_q", "head_dim", "splits"))
    return (uniform((rows, s, dd), torch.float32, gen),
            uniform((rows, s), torch.float32, gen, 2.0, 6.0),
            uniform((hq,), torch.float32, gen, 0.0, 4.0))


def _sdpa_decode_combine_peers(dims, dtype):
    hq = d(dims, "heads_q")

    def combine(partial_out, partial_lse, sinks):
        """Softmax over the splits' lse with the sink as one more (valueless) entry."""
        rows = partial_lse.shape[0]
        sink = sinks.repeat(rows // hq)[:, None]
        w = torch.softmax(torch.cat([partial_lse, sink], dim=1), dim=1)[:, :-1]
        return (w[:, :, None] * partial_out).sum(1).to(dtype)
    return {"torch eager (softmax, weighted sum)": lambda: combine,
            "torch.compile": compiled(combine)}


# ── Sampling ─────────────────────────────────────────────────────────────────────────────────

def _sample_inputs(dims, dtype, gen):
    rows, n, h = (d(dims, k) for k in ("rows", "n", "h"))
    full = lambda key: torch.full((rows,), dims[key], device="cuda")  # noqa
    return (uniform((rows, n), dtype, gen, -8.0, 8.0), full("temperature"), full("top_p"),
            full("min_p"), full("repetition"), full("frequency"), full("presence"),
            ints((rows, h), n, gen), ints((rows, h), 4, gen, lo=1))


def _sample_peers(dims, dtype):
    k = d(dims, "top_k")

    def composite(logits, temperature, top_p, min_p, repetition, frequency, presence, history,
                  counts):
        """Penalties from the history, temperature, top-k, min-p and top-p, then one draw."""
        x = logits.float()
        count = torch.zeros_like(x).scatter_add_(1, history, counts.float())
        scaled = torch.where(x > 0, x / repetition[:, None], x * repetition[:, None])
        penalized = scaled - frequency[:, None] * count - presence[:, None]
        x = torch.where(count > 0, penalized, x) / temperature[:, None]
        kth = torch.topk(x, k, dim=-1).values[:, -1:]
        x = x.masked_fill(x < kth, float("-inf"))
        probs = torch.softmax(x, dim=-1)
        x = x.masked_fill(probs < min_p[:, None] * probs.amax(-1, keepdim=True), float("-inf"))
        ordered, order = torch.sort(x, dim=-1, descending=True)
        mass = torch.softmax(ordered, dim=-1)
        ordered = ordered.masked_fill(mass.cumsum(-1) - mass >= top_p[:, None], float("-inf"))
        x = torch.full_like(x, float("-inf")).scatter(1, order, ordered)
        probs = torch.softmax(x, dim=-1)
        return probs, torch.multinomial(probs, 1)

    return {"torch eager (softmax, topk, sort, multinomial)": lambda: composite,
            "torch.compile": compiled(composite)}


# ── Mixture of experts ───────────────────────────────────────────────────────────────────────

def _moe_router_inputs(dims, dtype, gen):
    return (uniform((d(dims, "tokens"), d(dims, "experts")), dtype, gen, -4.0, 4.0),
            uniform(d(dims, "experts"), torch.float32, gen, -0.5, 0.5))


def _moe_router_peers(dims, dtype):
    top_k, sigmoid = d(dims, "top_k"), d(dims, "scoring") == 1
    renormalize, use_bias = d(dims, "renormalize") == 1, d(dims, "use_bias") == 1

    def composite(logits, bias):
        """Scores, the top-k of the (biased) keys, the unbiased scores of the chosen."""
        x = logits.float()
        scores = torch.sigmoid(x) if sigmoid else torch.softmax(x, dim=-1)
        keys = scores + bias if use_bias else scores
        ids = torch.topk(keys, top_k, dim=-1).indices
        weights = scores.gather(1, ids)
        if renormalize:
            weights = weights / weights.sum(-1, keepdim=True)
        return weights, ids.to(torch.int32)

    return {"torch eager (softmax/sigmoid, topk, gather)": lambda: composite,
            "torch.compile": compiled(composite)}


def _routing(dims, gen):
    """Each token's top_k distinct experts, at random: topk_ids [tokens, top_k]."""
    tokens, experts, top_k = d(dims, "tokens"), d(dims, "experts"), d(dims, "top_k")
    return torch.rand((tokens, experts), device="cuda", generator=gen).topk(top_k, -1).indices


def _sorted_rows(ids):
    """The row of each assignment in expert order, by token within an expert, and its inverse."""
    sources = torch.argsort(ids.flatten(), stable=True)
    rows = torch.empty_like(sources)
    rows[sources] = torch.arange(sources.numel(), device="cuda")
    return rows.view(ids.shape), sources


def _moe_sort_peers(dims, dtype):
    experts = d(dims, "experts")

    def eager(ids):
        flat = ids.flatten()
        counts = torch.bincount(flat, minlength=experts)
        rows, sources = _sorted_rows(ids)
        return counts, torch.cumsum(counts, 0), rows, sources

    return {"torch eager (bincount, cumsum, stable argsort)": lambda: eager}


def _moe_permute_inputs(dims, dtype, gen):
    _, sources = _sorted_rows(_routing(dims, gen))
    return (uniform((d(dims, "tokens"), d(dims, "hidden")), dtype, gen), sources)


def _moe_permute_peers(dims, dtype):
    top_k = d(dims, "top_k")
    return {"torch index_select": lambda: lambda x, sources: x.index_select(0, sources // top_k)}


def _moe_combine_inputs(dims, dtype, gen):
    rows, _ = _sorted_rows(_routing(dims, gen))
    n = rows.numel()
    return (uniform((n, d(dims, "hidden")), dtype, gen), rows,
            uniform(rows.shape, torch.float32, gen, 0.0, 1.0))


def _moe_gemm_inputs(dims, dtype, gen):
    """x_sorted [rows, k] and w [experts, n, k] random, the offsets of a uniform routing."""
    experts, n, k = d(dims, "experts"), d(dims, "n"), d(dims, "k")
    ids = _routing(dims, gen)
    counts = torch.bincount(ids.flatten(), minlength=experts)
    offsets = torch.zeros(experts + 1, device="cuda", dtype=torch.int64)
    offsets[1:] = torch.cumsum(counts, 0)
    return (uniform((ids.numel(), k), dtype, gen), uniform((experts, n, k), dtype, gen), offsets)


def _moe_gemm_peers(dims, dtype):
    experts = d(dims, "experts")

    def loop(x, w, offsets):
        """A PyTorch loop over the experts, one cuBLAS product each."""
        out = torch.empty((x.shape[0], w.shape[1]), device="cuda", dtype=x.dtype)
        bounds = offsets.tolist()
        for e in range(experts):
            lo, hi = bounds[e], bounds[e + 1]
            if hi > lo:
                torch.matmul(x[lo:hi], w[e].t(), out=out[lo:hi])
        return out

    peers = {"torch loop over experts": lambda: loop}
    grouped_mm = getattr(torch, "_grouped_mm", None)
    if grouped_mm is not None and dtype == torch.bfloat16:
        peers["torch._grouped_mm"] = lambda: lambda x, w, offsets: grouped_mm(
            x, w.transpose(1, 2), offs=offsets[1:].to(torch.int32))
    # Not the same function: one product of the whole size with expert 0's weight.
    peers["one cuBLAS GEMM of the same size (ceiling)"] = lambda: lambda x, w, offsets: x @ w[0].t()
    return peers


def _moe_combine_peers(dims, dtype):
    def eager(y_sorted, rows, weights):
        """Each token's rows gathered, weighted in f32 and summed."""
        y = y_sorted[rows].float()
        return (y * weights[..., None]).sum(1).to(y_sorted.dtype)

    return {"torch eager (index, mul, sum)": lambda: eager, "torch.compile": compiled(eager)}


# ── Matrix products ───────────────────────────────────────────────────────────────────────────

def _gemm_inputs(b_rows):
    def inputs(dims, dtype, gen):
        m, n, k = (d(dims, key) for key in ("m", "n", "k"))
        return (uniform((m, k), dtype, gen), uniform((k, n) if b_rows else (n, k), dtype, gen))
    return inputs


def _gemm_peers(b_rows):
    def peers(dims, dtype):
        eager = (lambda a, b: a @ b) if b_rows else (lambda a, b: a @ b.t())
        return with_triton({"torch matmul (cuBLAS)": lambda: eager},
                           triton=triton_matmul(b_rows))
    return peers


def _fp8_format(dims):
    return torch.float8_e5m2 if d(dims, "e5m2") else torch.float8_e4m3fn


def _gemm_fp8_inputs(dims, dtype, gen):
    m, n, k = (d(dims, key) for key in ("m", "n", "k"))
    scales = [torch.ones((), device="cuda") * s for s in (0.75, 0.625)]
    return (uniform((m, k), torch.float32, gen).to(_fp8_format(dims)),
            uniform((n, k), torch.float32, gen).to(_fp8_format(dims)), *scales)


def _gemm_fp8_peers(dims, dtype):
    # cuBLASLt's fp8 product (mat2 column-major: b.t() of the row-major [n, k] weight; it takes no
    # e5m2 · e5m2), and the composite a user without it writes: dequantize, then cuBLAS.
    def scaled_mm(a, b, scale_a, scale_b):
        return torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=dtype)

    def dequantized(a, b, scale_a, scale_b):
        return ((a.to(dtype) @ b.to(dtype).t()) * (scale_a * scale_b)).to(dtype)
    peers = {} if d(dims, "e5m2") else {"torch._scaled_mm (cuBLASLt fp8)": lambda: scaled_mm}
    peers["dequantize + torch matmul"] = lambda: dequantized
    return peers


def _quantize_fp8_weight_inputs(dims, dtype, gen):
    return (uniform((d(dims, "rows"), d(dims, "cols")), dtype, gen, -4.0, 4.0),)


def _quantize_fp8_weight_peers(dims, dtype):
    def quantize(w):
        rows, cols = w.shape
        blocks = w.float().view(rows // 128, 128, cols // 128, 128)
        amax = blocks.abs().amax(dim=(1, 3), keepdim=True)
        scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
        return (blocks / scale).to(torch.float8_e4m3fn).view(rows, cols), scale.view(-1)
    return {"torch eager": lambda: quantize, "torch.compile": compiled(quantize)}


def _gemm_fp8_rowwise_inputs(dims, dtype, gen):
    m, n, k = (d(dims, key) for key in ("m", "n", "k"))
    return (uniform((m, k), torch.float32, gen).to(torch.float8_e4m3fn),
            uniform((n, k), torch.float32, gen).to(torch.float8_e4m3fn),
            uniform((m,), torch.float32, gen, 0.01, 1.0),
            uniform((n,), torch.float32, gen, 0.01, 1.0))


def _gemm_fp8_rowwise_peers(dims, dtype):
    # cuBLASLt's rowwise-scaled fp8 product (scale_a [m, 1], scale_b [1, n]), and the composite.
    def scaled_mm(a, b, scale_a, scale_b):
        return torch._scaled_mm(a, b.t(), scale_a=scale_a[:, None], scale_b=scale_b[None, :],
                                out_dtype=dtype)

    def dequantized(a, b, scale_a, scale_b):
        return ((a.to(dtype) @ b.to(dtype).t()) * scale_a[:, None] * scale_b[None, :]).to(dtype)
    return {"torch._scaled_mm rowwise (cuBLASLt fp8)": lambda: scaled_mm,
            "dequantize + torch matmul": lambda: dequantized}


def _gemm_fp8_blockwise_inputs(dims, dtype, gen):
    m, n, k = (d(dims, key) for key in ("m", "n", "k"))
    blocks_k, blocks_n = -(-k // 128), -(-n // 128)
    return (uniform((m, k), torch.float32, gen).to(torch.float8_e4m3fn),
            uniform((n, k), torch.float32, gen).to(torch.float8_e4m3fn),
            uniform((m, blocks_k), torch.float32, gen, 0.01, 1.0),
            uniform((blocks_n, blocks_k), torch.float32, gen, 0.01, 1.0))


def _gemm_fp8_blockwise_peers(dims, dtype):
    # What a user without a block-scaled kernel writes: dequantize both operands, then cuBLAS.
    def dequantized(a, b, scale_a, scale_b):
        k = a.shape[1]
        wa = a.float() * scale_a.repeat_interleave(128, dim=1)[:, :k]
        wb = (b.float() * scale_b.repeat_interleave(128, dim=0)[:b.shape[0]]
              .repeat_interleave(128, dim=1)[:, :k])
        return wa.to(dtype) @ wb.to(dtype).t()
    return {"dequantize + torch matmul": lambda: dequantized}


def _quantize_fp8_inputs(dims, dtype, gen):
    return (uniform((d(dims, "blocks"), 128), dtype, gen, -4.0, 4.0),)


def _quantize_fp8_peers(dims, dtype):
    def quantize(x):
        amax = x.float().abs().amax(dim=1, keepdim=True)
        scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
        return (x.float() / scale).to(torch.float8_e4m3fn), scale.squeeze(1)
    return {"torch eager": lambda: quantize, "torch.compile": compiled(quantize)}


def _gemm_epilogue_inputs(dims, dtype, gen):
    m, n, k, b_rows = (d(dims, key) for key in ("m", "n", "k", "b_rows"))
    b_shape = (k, n) if b_rows else (n, k)
    extra = (n,) if d(dims, "epilogue") < 3 else (m, n)
    return (uniform((m, k), dtype, gen), uniform(b_shape, dtype, gen), uniform(extra, dtype, gen))


def _gemm_epilogue_peers(dims, dtype):
    b_rows, epilogue = d(dims, "b_rows"), d(dims, "epilogue")
    activation = [lambda y: y, F.silu, _gelu_tanh, lambda y: y, lambda y: y][epilogue]

    def eager(a, b, extra):
        y = a @ b if b_rows else a @ b.t()
        if epilogue == 4:
            return y + 0.5 * extra  # beta · c
        return activation(y + extra)
    return {"torch eager": lambda: eager, "torch.compile": compiled(eager)}


def _gemm_batched_inputs(dims, dtype, gen):
    batch, m, n, k, b_rows = (d(dims, key) for key in ("batch", "m", "n", "k", "b_rows"))
    b_shape = (batch, k, n) if b_rows else (batch, n, k)
    return (uniform((batch, m, k), dtype, gen), uniform(b_shape, dtype, gen))


def _gemm_batched_peers(dims, dtype):
    b_rows = d(dims, "b_rows")
    eager = (lambda a, b: torch.bmm(a, b)) if b_rows else (lambda a, b: torch.bmm(a, b.transpose(1, 2)))
    return {"torch.bmm (cuBLAS)": lambda: eager}


def _gemv_affine_inputs(dims, dtype, gen):
    m, n, k, bits, group = (d(dims, key) for key in ("m", "n", "k", "bits", "group"))
    words = torch.randint(-2**31, 2**31, (n, k * bits // 32), device="cuda",
                          generator=gen, dtype=torch.int64).to(torch.int32)
    return (uniform((m, k), dtype, gen), words, uniform((n, k // group), dtype, gen, 0.001, 0.01),
            uniform((n, k // group), dtype, gen))


def _gemv_affine_peers(dims, dtype):
    n, k, bits, group = (d(dims, key) for key in ("n", "k", "bits", "group"))
    shifts = torch.arange(0, 32, bits, device="cuda", dtype=torch.int32)

    def eager(x, words, scales, biases):
        q = ((words[..., None] >> shifts) & (2**bits - 1)).view(n, k // group, group)
        w = (q.to(dtype) * scales[..., None] + biases[..., None]).view(n, k)
        return x @ w.t()
    return {"torch eager dequant + matmul": lambda: eager,
            "torch.compile": compiled(eager)}


def _gemv_mxfp4_inputs(dims, dtype, gen):
    m, n, k = (d(dims, key) for key in ("m", "n", "k"))
    blocks = torch.randint(0, 256, (n, k // 2), device="cuda", generator=gen,
                           dtype=torch.int32).to(torch.uint8)
    scales = torch.randint(118, 122, (n, k // 32), device="cuda", generator=gen,
                           dtype=torch.int32).to(torch.uint8)
    return (uniform((m, k), dtype, gen), blocks, scales)


def _gemv_mxfp4_peers(dims, dtype):
    n, k = d(dims, "n"), d(dims, "k")
    lut = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6],
                       device="cuda", dtype=torch.float32)

    def eager(x, blocks, scales):
        codes = torch.stack([blocks & 15, blocks >> 4], -1).view(n, k // 32, 32)
        w = (lut[codes.long()] * torch.exp2(scales.float() - 127)[..., None]).view(n, k)
        return x @ w.to(dtype).t()
    return {"torch eager LUT + matmul": lambda: eager, "torch.compile": compiled(eager)}


# ── State-space models ───────────────────────────────────────────────────────────────────────

def _ssm_conv1d_inputs(dims, dtype, gen):
    b, seq, ch, w = (d(dims, key) for key in ("batch", "seqlen", "channels", "width"))
    return (uniform((b, seq, ch), dtype, gen), uniform((ch, w), dtype, gen, -0.5, 0.5),
            uniform(ch, dtype, gen))


def _ssm_conv1d_peers(dims, dtype):
    seq, w = d(dims, "seqlen"), d(dims, "width")

    def eager(x, weight, bias):
        """Channels-last in and out, as Iron: F.conv1d over [batch, channels, seqlen] padded by
        width − 1 and cut to seqlen, silu; the conv state is the last width − 1 inputs."""
        xt = x.transpose(1, 2)
        y = F.conv1d(xt, weight[:, None, :], bias, padding=w - 1, groups=x.shape[2])[..., :seq]
        state = F.pad(xt[..., max(seq - (w - 1), 0):], (max(w - 1 - seq, 0), 0))
        return F.silu(y).transpose(1, 2).contiguous(), state.contiguous()

    return {"F.conv1d (cuDNN, groups=channels) + silu": lambda: eager,
            "torch.compile": compiled(eager)}


def _ssm_conv1d_update_inputs(dims, dtype, gen):
    b, ch, w = (d(dims, key) for key in ("batch", "channels", "width"))
    return (uniform((b, ch), dtype, gen), uniform((ch, w), dtype, gen, -0.5, 0.5),
            uniform(ch, dtype, gen), uniform((b, ch, w - 1), dtype, gen))


def _ssm_conv1d_update_peers(dims, dtype):
    def composite(x, weight, bias, conv_state):
        """The window is the state then x; its weighted sum through silu; the state rolls."""
        window = torch.cat([conv_state, x[..., None]], -1)
        y = F.silu((window.float() * weight.float()).sum(-1) + bias.float())
        conv_state.copy_(window[..., 1:])
        return y.to(x.dtype)

    return {"torch eager (cat, mul, sum, silu)": lambda: composite,
            "torch.compile": compiled(composite)}


def _ssm_scan_inputs(dims, dtype, gen):
    """u, delta, delta_bias, A, B, C, D, z in Iron's layouts (channels-last)."""
    b, seq, dim, n = (d(dims, key) for key in ("batch", "seqlen", "dim", "states"))
    return (uniform((b, seq, dim), dtype, gen), uniform((b, seq, dim), dtype, gen),
            uniform(dim, torch.float32, gen, -6.0, -2.0),
            uniform((dim, n), torch.float32, gen, -16.0, -1.0),
            uniform((b, seq, n), dtype, gen), uniform((b, seq, n), dtype, gen),
            uniform(dim, torch.float32, gen, 0.5, 1.5), uniform((b, seq, dim), dtype, gen))


def _ssm_scan_prepare(u, delta, delta_bias, A, B):
    """Every token's decay exp(dt·A) and input dt·u·B at once, as Mamba's selective_scan_ref."""
    dt = F.softplus(delta.float() + delta_bias)
    return torch.exp(dt[..., None] * A), (dt * u.float())[..., None] * B.float()[:, :, None, :]


def _ssm_scan_step(h, decay, inp, c):
    h = decay * h + inp
    return h, (h * c[:, None, :]).sum(-1)


def _ssm_scan(prepare, step):
    def run(u, delta, delta_bias, A, B, C, D, z):
        """The sequential scan: one step a token over the [batch, dim, states] state."""
        decay, inp = prepare(u, delta, delta_bias, A, B)
        h = torch.zeros((u.shape[0], u.shape[2], A.shape[1]), device="cuda", dtype=torch.float32)
        ys = []
        for t in range(u.shape[1]):
            h, y = step(h, decay[:, t], inp[:, t], C[:, t].float())
            ys.append(y)
        y = (torch.stack(ys, 1) + D * u.float()) * F.silu(z.float())
        return y.to(u.dtype), h
    return run


def _ssm_scan_peers(dims, dtype):
    # torch.compile of the whole loop would unroll seqlen steps: compile the two parts instead.
    return {"torch eager (sequential scan)": lambda: _ssm_scan(_ssm_scan_prepare, _ssm_scan_step),
            "torch.compile (prepare and step)": lambda: _ssm_scan(
                torch.compile(_ssm_scan_prepare, dynamic=False),
                torch.compile(_ssm_scan_step, dynamic=False))}


def _ssm_scan_update_inputs(dims, dtype, gen):
    """state, x, dt, dt_bias, A, B, C, D, z in Iron's layouts."""
    b, dim, n = (d(dims, key) for key in ("batch", "dim", "states"))
    return (uniform((b, dim, n), torch.float32, gen), uniform((b, dim), dtype, gen),
            uniform((b, dim), dtype, gen), uniform(dim, torch.float32, gen, -6.0, -2.0),
            uniform((dim, n), torch.float32, gen, -16.0, -1.0), uniform((b, n), dtype, gen),
            uniform((b, n), dtype, gen), uniform(dim, torch.float32, gen, 0.5, 1.5),
            uniform((b, dim), dtype, gen))


def _ssm_scan_update_peers(dims, dtype):
    def composite(state, x, dt, dt_bias, A, B, C, D, z):
        """Mamba's selective_state_update_ref, the state updated in place."""
        step = F.softplus(dt.float() + dt_bias)
        xf = x.float()
        state.copy_(state * torch.exp(step[..., None] * A)
                    + (step * xf)[..., None] * B.float()[:, None, :])
        y = (state * C.float()[:, None, :]).sum(-1) + D * xf
        return (y * F.silu(z.float())).to(x.dtype)

    return {"torch eager (selective_state_update_ref)": lambda: composite,
            "torch.compile": compiled(composite)}


def _ssm_ssd_inputs(dims, dtype, gen):
    """x, dt, dt_bias, A, B, C, D, z in Iron's layouts (channels-last)."""
    b, seq, heads, p, g, n = (d(dims, key) for key in
                              ("batch", "seqlen", "heads", "head_dim", "ngroups", "states"))
    return (uniform((b, seq, heads, p), dtype, gen), uniform((b, seq, heads), dtype, gen),
            uniform(heads, torch.float32, gen, -6.0, -2.0),
            uniform(heads, torch.float32, gen, -16.0, -1.0),
            uniform((b, seq, g, n), dtype, gen), uniform((b, seq, g, n), dtype, gen),
            uniform(heads, torch.float32, gen, 0.5, 1.5), uniform((b, seq, heads, p), dtype, gen))


def _ssm_ssd_step(s, decay, x_dt, b, c):
    """One token of every head: s [batch, heads, head_dim, states], b and c [batch, heads, states]."""
    s = decay[..., None, None] * s + x_dt[..., None] * b[:, :, None, :]
    return s, (s * c[:, :, None, :]).sum(-1)


def _ssm_ssd(step):
    def run(x, dt, dt_bias, A, B, C, D, z):
        """The sequential scan of Mamba-2's SSD layer, one step a token."""
        heads, rep = x.shape[2], x.shape[2] // B.shape[2]
        dt = F.softplus(dt.float() + dt_bias)
        decay, x_dt = torch.exp(dt * A), x.float() * dt[..., None]
        bh, ch = B.float().repeat_interleave(rep, 2), C.float().repeat_interleave(rep, 2)
        s = torch.zeros((x.shape[0], heads, x.shape[3], B.shape[3]), device="cuda",
                        dtype=torch.float32)
        ys = []
        for t in range(x.shape[1]):
            s, y = step(s, decay[:, t], x_dt[:, t], bh[:, t], ch[:, t])
            ys.append(y)
        y = (torch.stack(ys, 1) + D[:, None] * x.float()) * F.silu(z.float())
        return y.to(x.dtype), s
    return run


def _ssm_ssd_peers(dims, dtype):
    return {"torch eager (sequential scan)": lambda: _ssm_ssd(_ssm_ssd_step),
            "torch.compile (each step)": lambda: _ssm_ssd(
                torch.compile(_ssm_ssd_step, dynamic=False))}


def _ssm_ssd_update_inputs(dims, dtype, gen):
    """state, x, dt, dt_bias, A, B, C, D, z in Iron's layouts."""
    b, heads, p, g, n = (d(dims, key) for key in ("batch", "heads", "head_dim", "ngroups", "states"))
    return (uniform((b, heads, p, n), torch.float32, gen), uniform((b, heads, p), dtype, gen),
            uniform((b, heads), dtype, gen), uniform(heads, torch.float32, gen, -6.0, -2.0),
            uniform(heads, torch.float32, gen, -16.0, -1.0), uniform((b, g, n), dtype, gen),
            uniform((b, g, n), dtype, gen), uniform(heads, torch.float32, gen, 0.5, 1.5),
            uniform((b, heads, p), dtype, gen))


def _ssm_ssd_update_peers(dims, dtype):
    rep = d(dims, "heads") // d(dims, "ngroups")

    def composite(state, x, dt, dt_bias, A, B, C, D, z):
        """Mamba-2's selective_state_update_ref for one token, the state updated in place."""
        step = F.softplus(dt.float() + dt_bias)
        bh, ch = B.float().repeat_interleave(rep, 1), C.float().repeat_interleave(rep, 1)
        xf = x.float()
        state.copy_(torch.exp(step * A)[..., None, None] * state
                    + (xf * step[..., None])[..., None] * bh[:, :, None, :])
        y = (state * ch[:, :, None, :]).sum(-1) + D[:, None] * xf
        return (y * F.silu(z.float())).to(x.dtype)

    return {"torch eager (selective_state_update_ref)": lambda: composite,
            "torch.compile": compiled(composite)}


# ── Vision ───────────────────────────────────────────────────────────────────────────────────

def _vision_resize_inputs(dims, dtype, gen):
    """A batch of HWC u8 RGB images and CLIP's mean and std."""
    b, h, w = (d(dims, key) for key in ("batch", "height", "width"))
    image = torch.randint(0, 256, (b, h, w, 3), device="cuda", generator=gen,
                          dtype=torch.int32).to(torch.uint8)
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073], device="cuda")
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711], device="cuda")
    return (image, mean, std)


def _vision_resize_peers(dims, dtype):
    size = (d(dims, "out_h"), d(dims, "out_w"))
    mode = "bicubic" if d(dims, "bicubic") else "bilinear"
    antialias = bool(d(dims, "antialias"))
    channels_last = bool(d(dims, "channels_last"))

    def eager(image, mean, std):
        """The float path of a vision preprocessor: HWC u8 to CHW f32, resize, scale to [0, 1],
        normalize per channel, in the layout and dtype the encoder takes."""
        x = image.permute(0, 3, 1, 2).float()
        y = F.interpolate(x, size=size, mode=mode, align_corners=False, antialias=antialias)
        y = (y / 255 - mean[:, None, None]) / std[:, None, None]
        if channels_last:
            y = y.permute(0, 2, 3, 1)
        return y.to(dtype).contiguous()

    return {"F.interpolate + normalize (eager)": lambda: eager, "torch.compile": compiled(eager)}


def _vision_unfold_inputs(dims, dtype, gen):
    b, h, w = (d(dims, key) for key in ("batch", "height", "width"))
    return (uniform((b, 3, h, w), dtype, gen),)


def _vision_unfold_peers(dims, dtype):
    p = d(dims, "patch")

    def eager(image):
        """The patches as rows in a conv weight's order: F.unfold gives [batch, 3·p·p, N]."""
        cols = F.unfold(image, kernel_size=p, stride=p)
        return cols.transpose(1, 2).reshape(-1, cols.shape[1])

    return {"F.unfold + transpose (eager)": lambda: eager, "torch.compile": compiled(eager)}



# ── Audio ────────────────────────────────────────────────────────────────────────────────────

def _slaney_mel_filters(n_fft, n_mels, sample_rate=16000.0):
    """librosa.filters.mel(sr, n_fft, n_mels) (Slaney scale and norm), as Whisper ships it."""
    f_sp, min_log_hz, logstep = 200.0 / 3, 1000.0, torch.log(torch.tensor(6.4)).item() / 27

    def to_mel(hz):
        return torch.where(hz < min_log_hz, hz / f_sp,
                           min_log_hz / f_sp + torch.log(hz / min_log_hz) / logstep)

    def to_hz(mel):
        return torch.where(mel < min_log_hz / f_sp, mel * f_sp,
                           min_log_hz * torch.exp(logstep * (mel - min_log_hz / f_sp)))

    top = to_mel(torch.tensor(sample_rate / 2, dtype=torch.float64))
    points = to_hz(torch.linspace(0, 1, n_mels + 2, dtype=torch.float64) * top)
    hz = torch.linspace(0, sample_rate / 2, n_fft // 2 + 1, dtype=torch.float64)
    rising = (hz[None, :] - points[:-2, None]) / (points[1:-1] - points[:-2])[:, None]
    falling = (points[2:, None] - hz[None, :]) / (points[2:] - points[1:-1])[:, None]
    weights = torch.clamp(torch.minimum(rising, falling), min=0)
    return (weights * (2 / (points[2:] - points[:-2]))[:, None]).float().cuda()


def _audio_log_mel_inputs(dims, dtype, gen):
    """Clips of samples in [-1, 1) and the mel filters [n_mels, n_fft / 2 + 1] in f32."""
    return (uniform((d(dims, "batch"), d(dims, "samples")), dtype, gen),
            _slaney_mel_filters(d(dims, "n_fft"), d(dims, "n_mels")))


def _audio_log_mel_peers(dims, dtype):
    n_fft, hop = d(dims, "n_fft"), d(dims, "hop")

    def eager(audio, filters):
        """Whisper's log_mel_spectrogram up to its normalization: torch.stft (cuFFT), |X|² of
        every frame but the last, the mel product, log10 of the value floored at 1e-10."""
        window = torch.hann_window(n_fft, device=audio.device)
        stft = torch.stft(audio.float(), n_fft, hop, window=window, return_complex=True)
        magnitudes = stft[..., :-1].abs() ** 2
        return torch.clamp(filters @ magnitudes, min=1e-10).log10()

    return {"torch.stft (cuFFT) + mel matmul + log10 (eager)": lambda: eager,
            "torch.compile": compiled(eager)}


def _audio_log_mel_normalize_inputs(dims, dtype, gen):
    b, m, t = (d(dims, key) for key in ("batch", "n_mels", "frames"))
    return (uniform((b, m, t), torch.float32, gen, -10.0, 2.5),)


def _audio_log_mel_normalize_peers(dims, dtype):
    def eager(log_spec):
        """Whisper's normalization, each clip by its own maximum."""
        top = log_spec.amax(dim=(-2, -1), keepdim=True)
        return ((torch.maximum(log_spec, top - 8.0) + 4.0) / 4.0).to(dtype)

    return {"torch eager (amax, maximum, add, div)": lambda: eager,
            "torch.compile": compiled(eager)}


# ── Convolution ──────────────────────────────────────────────────────────────────────────────

def _conv2d_inputs(dims, dtype, gen):
    """x [batch, c_in, h, w] and weight [c_out, c_in / groups, kh, kw], both channels_last (NHWC
    and [c_out, kh, kw, c_in / groups] in memory, as the Iron kernels take them)."""
    b, c_in, c_out, g = (d(dims, key) for key in ("batch", "c_in", "c_out", "groups"))
    h, w, kh, kw = (d(dims, key) for key in ("h", "w", "kh", "kw"))
    x = uniform((b, c_in, h, w), dtype, gen).to(memory_format=torch.channels_last)
    weight = uniform((c_out, c_in // g, kh, kw), dtype, gen).to(memory_format=torch.channels_last)
    return x, weight


def _conv2d_peers(dims, dtype):
    s, p, dil, g = (d(dims, key) for key in ("stride", "pad", "dil", "groups"))

    def eager(x, weight):
        return F.conv2d(x, weight, stride=s, padding=p, dilation=dil, groups=g)

    return {"F.conv2d channels_last (cuDNN)": lambda: eager}


def _conv2d_bias_inputs(dims, dtype, gen):
    return (*_conv2d_inputs(dims, dtype, gen), uniform((d(dims, "c_out"),), dtype, gen))


def _conv2d_bias_peers(dims, dtype):
    """cuDNN's conv with its bias, then the activation (act 0 none, 1 ReLU, 2 SiLU)."""
    s, p, dil, g = (d(dims, key) for key in ("stride", "pad", "dil", "groups"))
    act = [lambda y: y, F.relu, F.silu][d(dims, "act")]

    def eager(x, weight, bias):
        return act(F.conv2d(x, weight, bias, stride=s, padding=p, dilation=dil, groups=g))

    return {"F.conv2d + bias + activation, channels_last (cuDNN)": lambda: eager,
            "torch.compile": compiled(eager)}


def _conv1d_inputs(dims, dtype, gen):
    """x as a [batch, c_in, length] view of an NLC tensor, weight [c_out, c_in / groups, kernel]."""
    b, length, c_in, c_out, g, k = (d(dims, key) for key in ("batch", "w", "c_in", "c_out",
                                                              "groups", "kw"))
    x = uniform((b, length, c_in), dtype, gen).transpose(1, 2)
    return x, uniform((c_out, c_in // g, k), dtype, gen)


def _conv1d_peers(dims, dtype):
    s, p, dil, g = (d(dims, key) for key in ("stride", "pad", "dil", "groups"))

    def eager(x, weight):
        return F.conv1d(x, weight, stride=s, padding=p, dilation=dil, groups=g)

    def as_conv2d(x, weight):
        """The sequence as an image one row high, channels_last: cuDNN's NHWC path."""
        image = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
        out = F.conv2d(image, weight.unsqueeze(2), stride=(1, s), padding=(0, p),
                       dilation=(1, dil), groups=g)
        return out.squeeze(2)

    return {"F.conv1d on the NLC view (cuDNN)": lambda: eager,
            "F.conv2d one row high, channels_last (cuDNN)": lambda: as_conv2d}


CASES = {
    "copy": (_one, _copy_peers),
    "arange": (lambda dims, dtype, gen: (), _arange_peers),
    "scale": (_one, _scale_peers),
    "add": (_two, _binary(torch.add, triton_add if triton else None)),
    "sub": (_two, _binary(torch.sub)),
    "mul": (_two, _binary(torch.mul)),
    "div": (_two, _binary(torch.div)),
    "add_row": (_rows_and_row, _binary(torch.add)),
    "sub_row": (_rows_and_row, _binary(torch.sub)),
    "mul_row": (_rows_and_row, _binary(torch.mul)),
    "div_row": (_rows_and_row, _binary(torch.div)),
    "exp": (_one, _unary("torch.exp", torch.exp)),
    "silu": (_one, _unary("F.silu", F.silu)),
    "gelu_tanh": (_one, _unary("F.gelu(tanh)", _gelu_tanh, True)),
    "gelu_erf": (_one, _unary("F.gelu", F.gelu)),
    "relu": (_one, _unary("F.relu", F.relu)),
    "swiglu": (_two, _unary("torch eager silu(a)*b", _swiglu, True)),
    "softmax": (_rows, _softmax_peers),
    "log_softmax": (_rows, _unary("F.log_softmax", lambda x: F.log_softmax(x, -1), True)),
    "row_sum": (_rows, _unary("torch.sum", lambda x: x.sum(-1))),
    "row_max": (_rows, _unary("torch.amax", lambda x: x.amax(-1))),
    "row_min": (_rows, _unary("torch.amin", lambda x: x.amin(-1))),
    "argmax": (_rows, _unary("torch.max(dim)", lambda x: torch.max(x, -1))),
    "cumsum": (_rows, _unary("torch.cumsum", lambda x: torch.cumsum(x, -1))),
    "embedding": (_embedding, _unary("F.embedding", lambda table, idx: F.embedding(idx, table))),
    "scatter_rows": (_scatter_rows,
                     _unary("index_copy_", lambda src, idx, out: out.index_copy_(0, idx, src))),
    "transpose": (_transpose, _unary("t().contiguous()", lambda x: x.t().contiguous())),
    "dequant_affine": (_dequant_affine_inputs, _dequant_affine_peers),
    "dequant_mxfp4": (_dequant_mxfp4_inputs, _dequant_mxfp4_peers),
    "hadamard": (_rows, _hadamard_peers),
    "rope_neox": (_rope_inputs, _rope_peers(False)),
    "rope_gptj": (_rope_inputs, _rope_peers(True)),
    "rope_qk_neox": (_rope_qk_inputs, _rope_qk_peers(False)),
    "rope_qk_gptj": (_rope_qk_inputs, _rope_qk_peers(True)),
    "kv_append": (_kv_append_inputs, _kv_append_peers),
    "kv_append_paged": (_kv_append_paged_inputs, _kv_append_paged_peers),
    "sdpa_prefill": (_sdpa_prefill_inputs, _sdpa_prefill_peers),
    "sdpa_prefill_varlen": (_sdpa_prefill_varlen_inputs, _sdpa_prefill_varlen_peers),
    "sdpa_decode": (_sdpa_decode_inputs, _sdpa_decode_peers),
    "sdpa_decode_combine": (_sdpa_decode_combine_inputs, _sdpa_decode_combine_peers),
    "sample": (_sample_inputs, _sample_peers),
    "moe_router": (_moe_router_inputs, _moe_router_peers),
    "moe_sort": (lambda dims, dtype, gen: (_routing(dims, gen),), _moe_sort_peers),
    "moe_permute": (_moe_permute_inputs, _moe_permute_peers),
    "moe_combine": (_moe_combine_inputs, _moe_combine_peers),
    "moe_gemm": (_moe_gemm_inputs, _moe_gemm_peers),
    "rms_norm": (_norm_inputs, _rms_norm_peers),
    "layer_norm": (_layer_norm_inputs, _layer_norm_peers),
    "add_rms_norm": (_add_rms_norm_inputs, _add_rms_norm_peers),
    "gemm_kn": (_gemm_inputs(True), _gemm_peers(True)),
    "gemm_nk": (_gemm_inputs(False), _gemm_peers(False)),
    "gemm_epilogue": (_gemm_epilogue_inputs, _gemm_epilogue_peers),
    "gemm_fp8_nk": (_gemm_fp8_inputs, _gemm_fp8_peers),
    "gemm_fp8_rowwise_nk": (_gemm_fp8_rowwise_inputs, _gemm_fp8_rowwise_peers),
    "gemm_fp8_blockwise_nk": (_gemm_fp8_blockwise_inputs, _gemm_fp8_blockwise_peers),
    "quantize_fp8_g128": (_quantize_fp8_inputs, _quantize_fp8_peers),
    "quantize_fp8_b128x128": (_quantize_fp8_weight_inputs, _quantize_fp8_weight_peers),
    "gemm_batched": (_gemm_batched_inputs, _gemm_batched_peers),
    "gemv_affine": (_gemv_affine_inputs, _gemv_affine_peers),
    "gemv_mxfp4": (_gemv_mxfp4_inputs, _gemv_mxfp4_peers),
    # The quantized GEMM takes gemv's inputs at any m: the same dequantize-then-matmul composites.
    "gemm_affine": (_gemv_affine_inputs, _gemv_affine_peers),
    "gemm_mxfp4": (_gemv_mxfp4_inputs, _gemv_mxfp4_peers),
    "ssm_conv1d": (_ssm_conv1d_inputs, _ssm_conv1d_peers),
    "ssm_conv1d_update": (_ssm_conv1d_update_inputs, _ssm_conv1d_update_peers),
    "ssm_selective_scan": (_ssm_scan_inputs, _ssm_scan_peers),
    "ssm_selective_scan_update": (_ssm_scan_update_inputs, _ssm_scan_update_peers),
    "ssm_ssd_scan": (_ssm_ssd_inputs, _ssm_ssd_peers),
    "ssm_ssd_update": (_ssm_ssd_update_inputs, _ssm_ssd_update_peers),
    "vision_resize_normalize": (_vision_resize_inputs, _vision_resize_peers),
    "vision_unfold_patches": (_vision_unfold_inputs, _vision_unfold_peers),
    "conv2d": (_conv2d_inputs, _conv2d_peers),
    "conv1d": (_conv1d_inputs, _conv1d_peers),
    "conv2d_bias_act": (_conv2d_bias_inputs, _conv2d_bias_peers),
    "audio_log_mel": (_audio_log_mel_inputs, _audio_log_mel_peers),
    "audio_log_mel_normalize": (_audio_log_mel_normalize_inputs, _audio_log_mel_normalize_peers),
}
