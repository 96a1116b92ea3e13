"""Analytic FLOP and bytes of common ops, each as an OpCount under a stated byte model.

One multiply-add is 2 FLOP (FACTS.md). Bytes are compulsory traffic unless an op says
otherwise: each input read once and each output written once, ideal reuse in caches.
Sizes must be positive integers; dtypes go through units.canonical_dtype (fp64 ... int4).
Additions, subtractions, multiplications, divisions and exponentials count one FLOP each;
comparisons (max) count none, as profilers count FLOP (FADD/FMUL/FFMA, not FMNMX).
"""

from __future__ import annotations

import numbers

from ..errors import InputError
from ..units import GROUP_SCALED, canonical_dtype, dtype_bytes, stored_weight_bytes
from .count import COMPULSORY, OpCount
from .ops_common import _count, _dt, _matrix_unit, _size
from .ops_conv import axis_pair, conv_input_elements, conv_unit, per_axis_value

# The HPC kernels live in ops_hpc; docs/ai.md calls them as ops.stencil, ops.spmv, ...
from .ops_hpc import axpy, dot, spmv, stencil  # noqa: F401


def matmul(m: int, n: int, k: int, dtype: str = "fp16", batch: int = 1,
           name: str | None = None, tile: tuple[int, int] | None = None,
           out_dtype: str | None = None, weights: str | None = None,
           group_size: int = 128) -> OpCount:
    """C[m,n] = A[m,k] @ B[k,n], `batch` independent products (torch.bmm).

    FLOP 2·batch·m·n·k; bytes s·batch·(mk + kn + mn). Square N in fp16: AI = N/3.

    Optional, each off by default (then the count is the compulsory one above):
    tile=(BM, BN): DRAM bytes of a GEMM tiled into BM x BN output tiles, each reading its
    BM x k strip of A and k x BN strip of B: A is read ceil(n/BN) times, B ceil(m/BM)
    times, C written once; no L2 reuse between tiles, so an upper bound on DRAM bytes
    (seed 000 §2.2/§4.4: "compare tile sizes"). out_dtype: C's dtype (an fp8 GEMM writing
    bf16). weights: B's stored dtype, group scales included (units.stored_weight_bytes,
    as `rooflab llm` counts them; W4A16 is weights="int4" with dtype fp16): the math,
    A and (without out_dtype) C stay at `dtype`.
    """
    m, n, k, batch = (_size(v, nm) for v, nm in ((m, "m"), (n, "n"), (k, "k"), (batch, "batch")))
    d, s, _ = _dt(dtype)
    if tile is None and out_dtype is None and weights is None:
        read = s * batch * (m * k + k * n)
        write = s * batch * m * n
        label = f"matmul_{m}x{n}x{k}" + (f"_b{batch}" if batch > 1 else "") + f"_{d}"
        return _count(name or label, "matmul", 2.0 * batch * m * n * k, read, write, d,
                      _matrix_unit(d), {"m": m, "n": n, "k": k, "batch": batch})
    return _matmul_mixed(m, n, k, d, batch, name, tile, out_dtype, weights, group_size)


def _matmul_mixed(m, n, k, d, batch, name, tile, out_dtype, weights, group_size) -> OpCount:
    """matmul with a tile, an output dtype or a weight dtype: bytes split into a, b (or
    weights) and c, the shape naming what was given."""
    s_a = dtype_bytes(d)
    out = canonical_dtype(out_dtype) if out_dtype is not None else d
    shape = {"m": m, "n": n, "k": k, "batch": batch}
    if weights is not None:
        w, g = canonical_dtype(weights), _size(group_size, "group_size")
        # one scale per started group along k: a group that does not divide k (or exceeds
        # it) still stores a whole scale, ceil(k/g) per column, not the fraction k/g
        s_b = stored_weight_bytes(w, g)
        if w in GROUP_SCALED and k % g:
            # stored_weight_bytes' fp16 scale, 2 B, per started group
            s_b = dtype_bytes(w) + dtype_bytes("fp16") * -(-k // g) / k
        shape["weight_dtype"] = w
        if w in GROUP_SCALED:
            shape["group_size"] = int(group_size)
    else:
        w, s_b = None, s_a
    if out_dtype is not None:
        shape["out_dtype"] = out
    a_reads, b_reads, model, tiled = 1, 1, COMPULSORY, ""
    if tile is not None:
        bm, bn = _size(tile[0], "tile BM"), _size(tile[1], "tile BN")
        a_reads, b_reads = -(-n // bn), -(-m // bm)
        shape["tile"], tiled = [bm, bn], f"_tile{bm}x{bn}"
        model = (f"tiled {bm}x{bn}: each output tile reads its {bm} x k strip of A and k x "
                 f"{bn} strip of B from DRAM, so A is read ceil(n/BN) = {a_reads} times and "
                 f"B ceil(m/BM) = {b_reads} times, C written once; no L2 reuse between "
                 f"tiles: an upper bound on DRAM bytes")
    if w is not None or out != d:
        scales = " with its group scales" if w in GROUP_SCALED else ""
        model += f"; A {d}, B {w or d}{scales}, C {out}"
    split = {"a": batch * s_a * m * k * a_reads,
             "weights" if w is not None else "b": batch * s_b * k * n * b_reads,
             "c": batch * dtype_bytes(out) * m * n}
    label = (f"matmul_{m}x{n}x{k}" + (f"_b{batch}" if batch > 1 else "") + f"_{d}"
             + (f"_w{w}" if w is not None else "") + (f"_out{out}" if out_dtype else "")
             + tiled)
    read = split["a"] + split["weights" if w is not None else "b"]
    return _count(name or label, "matmul", 2.0 * batch * m * n * k, read, split["c"], d,
                  _matrix_unit(d), shape, model=model, split=split)


gemm = matmul


def gemv(m: int, n: int, dtype: str = "fp16", name: str | None = None) -> OpCount:
    """y[m] = A[m,n] @ x[n]: FLOP 2mn; bytes s·(mn + n + m). AI ≈ 2/s: 1 in fp16."""
    m, n = _size(m, "m"), _size(n, "n")
    d, s, _ = _dt(dtype)
    return _count(name or f"gemv_{m}x{n}_{d}", "gemv", 2.0 * m * n, s * (m * n + n), s * m,
                  d, "vector", {"m": m, "n": n})


def elementwise(n: int, dtype: str = "fp16", inputs: int = 1, outputs: int = 1,
                flop_per_element: float = 1, name: str | None = None) -> OpCount:
    """n elements, each reading `inputs` arrays and writing `outputs` arrays.

    Scalars (the 1 in y = x + 1) live in registers and move no bytes.
    fp16 y = x + 1 → AI 1/4; z = x + y → 1/6 (seed 004).
    """
    n = _size(n, "n")
    inputs, outputs = _size(inputs, "inputs", 0), _size(outputs, "outputs", 0)
    if inputs + outputs == 0:
        raise InputError("elementwise needs at least one input or output array")
    if not (isinstance(flop_per_element, numbers.Real) and flop_per_element >= 0):
        raise InputError(f"flop_per_element must be >= 0; got {flop_per_element!r}")
    d, s, _ = _dt(dtype)
    return _count(name or f"elementwise_{n}_{d}", "elementwise", float(flop_per_element) * n,
                  s * n * inputs, s * n * outputs, d, "vector",
                  {"n": n, "inputs": inputs, "outputs": outputs,
                   "flop_per_element": flop_per_element})


def reduction(n: int, dtype: str = "fp16", rows: int = 1, name: str | None = None) -> OpCount:
    """Sum of n elements (per row, `rows` rows): FLOP rows·(n-1); bytes s·rows·(n + 1)."""
    n, rows = _size(n, "n"), _size(rows, "rows")
    d, s, _ = _dt(dtype)
    label = f"reduction_{rows}x{n}_{d}" if rows > 1 else f"reduction_{n}_{d}"
    return _count(name or label, "reduction", float(rows * (n - 1)), s * rows * n, s * rows,
                  d, "vector", {"n": n, "rows": rows})


# Softmax per element: subtract the row max, exp, add to the row sum, divide = 4 FLOP
# (the max itself is comparisons). Seed 000's softmax row (5.6e6 FLOP, 1.1e7 B in fp32)
# is 4 FLOP per 8 bytes.
SOFTMAX_FLOP_PER_ELEMENT = 4
# LayerNorm per element: mean add 1, x - mean 1, (x-mean)^2 accumulated 2 (an FMA),
# times rstd 1, times gamma plus beta 2 (an FMA) = 7 with the affine weight and bias;
# without them (elementwise_affine=False) the last step is gone: 7 - 2 = 5.
# bench.torch_count counts a live native_layer_norm, and the torch-trace rules a recorded
# one (ingest/torch_ops.py, torch_ops_pool.py's group norm), with these two.
LAYERNORM_AFFINE_FLOP_PER_ELEMENT = 7
LAYERNORM_PLAIN_FLOP_PER_ELEMENT = 5
# RMSNorm, y = x·rsqrt(mean(x²) + eps)·γ: x² accumulated 2 per element (the mean's sum),
# times rstd 1, times γ 1 = 4 per element (3 without a weight); per row, + eps 1 and the
# rsqrt 1 = 2 (the mean's 1/N folds into the rsqrt's argument). This is what F.rms_norm's
# CPU decomposition (pow, mean, add, rsqrt, mul, mul) counts, so `ai rmsnorm`, `llm`, the
# torch-trace rule and the live counter (rmsnorm_flop, one function) give one number
# (review s18 r6 F3: `ai` said 4·E, the trace 4·E + 2·rows). Seed 004: RMSNorm over 2048
# ≈ 8 K FLOP, 12 KB (8,194).
RMSNORM_FLOP_PER_ELEMENT = 4
RMSNORM_FLOP_PER_ROW = 2


def rmsnorm_flop(elements: int, rows: int, has_weight: bool = True) -> float:
    """FLOP of one RMSNorm forward over `rows` rows of `elements` in all (the comment
    above): 4·E + 2·rows with a weight, 3·E + 2·rows without."""
    return float((RMSNORM_FLOP_PER_ELEMENT - (not has_weight)) * elements
                 + RMSNORM_FLOP_PER_ROW * rows)


def softmax(rows: int, cols: int, dtype: str = "fp16", name: str | None = None) -> OpCount:
    """Softmax over each row: FLOP 4·rows·cols; bytes s·2·rows·cols (one read, one write;
    the max and sum passes assumed to hit cache, as an online/fused softmax does)."""
    rows, cols = _size(rows, "rows"), _size(cols, "cols")
    d, s, _ = _dt(dtype)
    e = rows * cols
    return _count(name or f"softmax_{rows}x{cols}_{d}", "softmax",
                  SOFTMAX_FLOP_PER_ELEMENT * e, s * e, s * e, d, "vector",
                  {"rows": rows, "cols": cols})


def layernorm(rows: int, cols: int, dtype: str = "fp16", name: str | None = None) -> OpCount:
    """LayerNorm over each row (inference): FLOP 7·rows·cols; bytes s·(2·rows·cols + 2·cols)
    (x read, y written, gamma and beta read once)."""
    rows, cols = _size(rows, "rows"), _size(cols, "cols")
    d, s, _ = _dt(dtype)
    e = rows * cols
    return _count(name or f"layernorm_{rows}x{cols}_{d}", "layernorm",
                  LAYERNORM_AFFINE_FLOP_PER_ELEMENT * e, s * (e + 2 * cols), s * e, d, "vector",
                  {"rows": rows, "cols": cols})


def rmsnorm(rows: int, cols: int, dtype: str = "fp16", name: str | None = None) -> OpCount:
    """RMSNorm over each row: FLOP 4·rows·cols + 2·rows (rmsnorm_flop); bytes
    s·(2·rows·cols + cols) (x, y, gamma)."""
    rows, cols = _size(rows, "rows"), _size(cols, "cols")
    d, s, _ = _dt(dtype)
    e = rows * cols
    return _count(name or f"rmsnorm_{rows}x{cols}_{d}", "rmsnorm",
                  rmsnorm_flop(e, rows), s * (e + cols), s * e, d, "vector",
                  {"rows": rows, "cols": cols})


def conv_output_size(size: int, kernel: int, stride: int, padding: int,
                     dilation: int = 1) -> int:
    """floor((size + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1, torch.nn.Conv2d's
    output size (its docs); a dilated filter spans dilation·(kernel - 1) + 1 inputs."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d(n: int, c: int, h: int, w: int, k: int, r: int, s: int, stride: int = 1,
           padding: int = 0, dtype: str = "fp16", groups: int = 1,
           name: str | None = None, dilation: int = 1,
           out_dtype: str | None = None) -> OpCount:
    """Direct 2-D convolution, NCHW input, K filters of C/groups x R x S, output N x K x P x Q,
    P = conv_output_size(H, R, stride, padding, dilation) (Q likewise with W, S).

    FLOP 2·N·K·P·Q·(C/groups)·R·S (dilation spreads the R·S taps, it adds none; as
    torch.utils.flop_counter counts); compulsory bytes: the input elements some output
    reads (ops_conv.conv_input_elements: a stride wider than the filter skips rows and
    columns, which are not read) + filter + output (no im2col). out_dtype: the output's
    dtype when it is not `dtype` (an int8 or fp8 conv writing fp16/bf16). Depthwise
    (C/groups == 1) is vector work: each output channel reduces over one input channel,
    an N = 1 GEMM per group that tensor-core tiles cannot fill, and cuDNN's depthwise
    kernels run on the FMA pipes.
    """
    n, c, h, w, k, r = (_size(v, nm) for v, nm in
                        ((n, "n"), (c, "c"), (h, "h"), (w, "w"), (k, "k"), (r, "r")))
    s_, groups = _size(s, "s"), _size(groups, "groups")
    # one value for both axes, or (height, width) as torch's tuples take them
    (sh, sw), (ph, pw), (dh, dw) = (axis_pair(v, nm, lo) for v, nm, lo in
                                    ((stride, "stride", 1), (padding, "padding", 0),
                                     (dilation, "dilation", 1)))
    if c % groups or k % groups:
        raise InputError(f"groups {groups} must divide both c {c} and k {k} (each group "
                         f"convolves c/groups input channels into k/groups outputs; "
                         f"depthwise is groups = c)")
    p = conv_output_size(h, r, sh, ph, dh)
    q = conv_output_size(w, s_, sw, pw, dw)
    if p < 1 or q < 1:
        spread = "" if dh == dw == 1 else (
            f" (dilation {per_axis_value(dh, dw)} spreads it over "
            f"{dh * (r - 1) + 1}x"
            f"{dw * (s_ - 1) + 1} inputs)")
        raise InputError(f"the {r}x{s_} filter{spread} does not fit the {h}x{w} input with "
                         f"padding {per_axis_value(ph, pw)}; increase padding or use a "
                         f"smaller filter"
                         + ("" if dh == dw == 1 else " or dilation"))
    d, e, _ = _dt(dtype)
    out = canonical_dtype(out_dtype) if out_dtype is not None else d
    cg = c // groups
    flop = 2.0 * n * k * p * q * cg * r * s_
    touched = conv_input_elements(n, c, (h, w), (r, s_), (sh, sw), (ph, pw), (dh, dw), (p, q))
    split = {"input": e * touched, "filter": e * k * cg * r * s_,
             "output": dtype_bytes(out) * n * k * p * q}
    shape = {"n": n, "c": c, "h": h, "w": w, "k": k, "r": r, "s": s_,
             "stride": per_axis_value(sh, sw), "padding": per_axis_value(ph, pw),
             "dilation": per_axis_value(dh, dw), "groups": groups, "p": p, "q": q}
    model = COMPULSORY
    if touched < n * c * h * w:
        model += (f"; the stride skips input rows/columns no output reads: "
                  f"{touched // (n * c)} of each channel's {h * w} pixels are read (counted in "
                  f"elements, as NHWC moves them; NCHW moves whole sectors of each row read)")
    if out != d:
        shape["out_dtype"] = out
        model += f"; input and filter {d}, output {out}"
    unit = conv_unit(d, (k, cg), groups)
    if unit != _matrix_unit(d):
        model += ("; depthwise (C/groups = 1): held to the vector ceiling, since each output "
                  "channel reduces over one input channel (an N = 1 GEMM tensor-core tiles "
                  "cannot fill) and cuDNN's depthwise kernels run on the FMA pipes")
    dil = f"_dil{dh}" if dh == dw > 1 else f"_dil{dh}x{dw}" if dh != dw else ""
    # groups and stride in the name as dilation is: a depthwise, a dense and a stride-2
    # conv of one shape were one name, and whatif's rows read one AI (review s28 R3 F8)
    dil += (f"_s{sh}" if sh == sw > 1 else f"_s{sh}x{sw}" if sh != sw else "")
    dil += f"_g{groups}" if groups > 1 else ""
    return _count(name or f"conv2d_{r}x{s_}{dil}_n{n}c{c}k{k}_{h}x{w}_{d}"
                  + (f"_out{out}" if out != d else ""), "conv2d", flop,
                  split["input"] + split["filter"], split["output"], d, unit, shape,
                  model=model, split=split)


# Where a causal mask sits when q_len < kv_len. bottom-right: the queries are the last q_len
# positions (decode, a KV cache: query i sees kv_len - q_len + i + 1 keys), FlashAttention 2's
# convention. top-left: query i sees keys 0..i, what torch.nn.functional.
# scaled_dot_product_attention(is_causal=True) applies ("the upper left causal bias", its docs).
CAUSAL_ALIGNS = ("bottom-right", "top-left")
# What each alignment means, said in the byte model whenever q_len != kv_len (where they
# differ: 904 against 136 pairs a head for q 16, kv 64; review 16b #1).
CAUSAL_ALIGN_TEXT = {
    "bottom-right": "bottom-right causal mask: query i sees keys 0..i + Lkv - Lq (a decode "
                    "step over a KV cache, FlashAttention >= 2.1); PyTorch's is_causal is "
                    "top-left",
    "top-left": "top-left causal mask: query i sees keys 0..i (PyTorch's is_causal); a "
                "decode step over a KV cache is bottom-right",
}


def attention_scores(q_len: int, kv_len: int, causal: bool,
                     align: str = "bottom-right") -> int:
    """(query, key) pairs that are computed per head. Causal, bottom-right (the default):
    query i (the last q_len positions of kv_len) sees kv_len - q_len + i + 1 keys — exactly
    half-plus-diagonal when q_len == kv_len (prefill), all keys for one decode query.
    Causal, top-left (PyTorch's is_causal): query i sees keys 0..min(i, kv_len - 1)."""
    if align not in CAUSAL_ALIGNS:
        raise InputError(f"causal alignment must be one of {', '.join(CAUSAL_ALIGNS)}; "
                         f"got {align!r}")
    if not causal:
        return q_len * kv_len
    if align == "top-left":
        seen = min(q_len, kv_len)   # queries past kv_len see every key
        return seen * (seen + 1) // 2 + (q_len - seen) * kv_len
    past = kv_len - q_len
    return q_len * past + q_len * (q_len + 1) // 2


def attention_keys(q_len: int, kv_len: int, causal: bool,
                   align: str = "bottom-right") -> int:
    """Keys some query sees: the K and V rows a flash (tile-skipping) kernel loads. Every
    key, except under a top-left causal mask with q_len < kv_len, where keys q_len.. are
    masked for every query and never loaded. One rule for ops.attention, the torch trace
    rules and the live counter (workloads/torch_rules/traffic.sdpa_kv_bytes)."""
    return min(q_len, kv_len) if causal and align == "top-left" else kv_len


def attention(batch: int, heads: int, q_len: int, kv_len: int, head_dim: int,
              kv_heads: int | None = None, dtype: str = "fp16", flash: bool = True,
              causal: bool = False, name: str | None = None,
              causal_align: str = "bottom-right", out_dtype: str | None = None) -> OpCount:
    """Scaled dot-product attention, O = softmax(Q Kᵀ / √d) V, per batch and head.

    FLOP: the two matmuls, 4·B·H·d per computed score (softmax's ~4 per score is not
    counted, as in FlashAttention's FLOP count). causal=True with flash counts only the
    unmasked scores (≈ half for prefill): a lower bound on what a tile-skipping kernel
    computes, which also computes the masked half of each diagonal tile (+Bc/L); naive
    (eager) computes the dense masked Lq·Lkv scores, so its FLOP stay dense, like its score
    bytes and like `rooflab llm --attn naive` (llm/kernels.py attention). causal_align says
    where the mask sits when q_len != kv_len (CAUSAL_ALIGNS: bottom-right for a decode step
    over a KV cache, top-left for PyTorch's scaled_dot_product_attention(is_causal=True));
    shape["scores"] stays the unmasked pairs either way.
    Bytes: flash reads Q, K, V once and writes O; naive also writes the score matrix S,
    reads it into softmax, writes P and reads P into the second matmul (4 passes over
    B·H·Lq·Lkv elements, dense even when causal). GQA: K and V have kv_heads heads.
    Flash, causal, top-left with q_len < kv_len: keys past q_len are masked for every
    query and never loaded, so K and V count min(q_len, kv_len) keys (attention_keys).
    out_dtype: O's dtype when it is not `dtype` (FlashAttention-3's fp8 forward writes bf16);
    the name then ends in _out<dtype>, as matmul's and conv2d's do.
    """
    batch, heads = _size(batch, "batch"), _size(heads, "heads")
    q_len, kv_len, head_dim = _size(q_len, "q_len"), _size(kv_len, "kv_len"), _size(
        head_dim, "head_dim")
    kv_heads = heads if kv_heads is None else _size(kv_heads, "kv_heads")
    if heads % kv_heads:
        raise InputError(f"kv_heads={kv_heads} must divide heads={heads} (grouped-query "
                         f"attention shares each K/V head among heads/kv_heads query heads)")
    if causal and q_len > kv_len and causal_align == "bottom-right":
        raise InputError(f"bottom-right causal attention needs q_len <= kv_len (the queries "
                         f"are the last q_len of kv_len positions); got {q_len} > {kv_len}; "
                         f"causal_align='top-left' (PyTorch's is_causal) allows it")
    d, s, _ = _dt(dtype)
    out = canonical_dtype(out_dtype) if out_dtype is not None else d
    scores = attention_scores(q_len, kv_len, causal, causal_align)
    shape = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "q_len": q_len,
             "kv_len": kv_len, "head_dim": head_dim, "flash": flash, "causal": causal,
             "scores": scores}
    # an eager kernel multiplies every (query, key) pair and masks afterwards: dense FLOP
    computed = scores if flash else q_len * kv_len
    flop = 4.0 * batch * heads * computed * head_dim
    q_o = s * batch * heads * q_len * head_dim
    o = dtype_bytes(out) * batch * heads * q_len * head_dim
    # an eager kernel reads all of K and V (its masked scores are computed too)
    keys = attention_keys(q_len, kv_len, causal, causal_align) if flash else kv_len
    kv = 2.0 * s * batch * kv_heads * keys * head_dim
    split = {"q": q_o, "kv": kv, "o": o}
    kind = "flash" if flash else "naive"
    model = ("flash attention: Q, K, V read once, O written once; scores stay on chip"
             if flash else
             "naive attention: Q, K, V read once, O written once, plus the score matrix "
             "written, read by softmax, written as P and read back (4 x B·H·Lq·Lkv elements)")
    if causal:
        model += ("; FLOP count only the unmasked (query, key) pairs (a lower bound: a "
                  "tile-skipping kernel also computes the masked part of each diagonal "
                  "tile)" if flash else
                  f"; FLOP count all Lq·Lkv (query, key) pairs: a dense kernel computes the "
                  f"masked ones too ({scores} of {q_len * kv_len} pairs a head unmasked, "
                  f"what flash counts)")
        if keys < kv_len:
            model += (f"; K and V read for keys 0..{keys - 1} only, the keys some query "
                      f"sees (the other {kv_len - keys} are masked for every query)")
        if q_len != kv_len:
            model += "; " + CAUSAL_ALIGN_TEXT[causal_align]
    if out != d:
        shape["out_dtype"] = out
        model += f"; Q, K, V {d}, O {out}"
    if not flash:
        split["scores"] = 4.0 * s * batch * heads * q_len * kv_len
    read = q_o + kv + split.get("scores", 0.0) / 2
    write = o + split.get("scores", 0.0) / 2
    if causal and causal_align != "bottom-right":
        shape["causal_align"] = causal_align
    label = f"attention_{kind}{'_causal' if causal else ''}_b{batch}h{heads}q{q_len}kv{kv_len}"
    return _count(name or f"{label}d{head_dim}_{d}" + (f"_out{out}" if out != d else ""),
                  "attention", flop, read, write, d, _matrix_unit(d), shape, model=model,
                  split=split)


def embedding(tokens: int, hidden: int, dtype: str = "fp16", index_dtype: str = "int64",
              name: str | None = None) -> OpCount:
    """Embedding lookup: 0 FLOP; bytes: the gathered rows and the token ids read, the
    output written (tokens·hidden·s each way). The rest of the table is never touched."""
    tokens, hidden = _size(tokens, "tokens"), _size(hidden, "hidden")
    d, s, _ = _dt(dtype)
    ids = tokens * dtype_bytes(index_dtype)
    rows = s * tokens * hidden
    model = "gather: the looked-up rows and the token ids read once, the output written once"
    return _count(name or f"embedding_{tokens}x{hidden}_{d}", "embedding", 0.0, rows + ids,
                  rows, d, None, {"tokens": tokens, "hidden": hidden}, model=model,
                  split={"rows": rows, "ids": ids, "output": rows})
