"""rooflab ai — arithmetic intensity of one op: FLOP, bytes (with the byte model), AI.

With --on HARDWARE|PROFILE also the attainable FLOP/s, the bound, the time floor and the
ridge on that roof. Kept light: no matplotlib, torch or numba on this path.
"""

from __future__ import annotations

import math
from dataclasses import replace

import typer

from ..errors import InputError
from ..units import canonical_dtype
from .ai_args import (
    DTYPE,
    GROUP,
    INT32_OUT,
    JSON,
    ML_DTYPE,
    OUT_DTYPE,
    SIZES,
    STAGES,
    STRIDE,
    TILE,
    TILES_PER_SM,
    WEIGHTS,
    OnAi,
    _n,
    _ops,
    _tile3,
    checked_causal_align,
    conv1d_note,
    conv_axes,
    dtype_assumed,
    group_size,
)
from .ai_cv import pad_note
from .ai_hpc import (
    _add_layer_condition,
    _register_axpy,
    _register_dot,
    _register_spmv,
    _register_stencil,
)
from .ai_result import format_result, result_dict

HELP = """Arithmetic intensity calculator: FLOP, bytes and AI of one op.

Sizes are whole numbers (1e8 and 4_096 are accepted). Bytes are compulsory
traffic (each input read once, each output written once) unless the op says
otherwise (attention --naive, embedding, matmul --tile).

  rooflab ai matmul 4096 4096 4096 --dtype fp16
  rooflab ai matmul 4096 4096 4096 --tile 128x128
  rooflab ai matmul 4096 4096 4096 --dtype fp16 --on h200 --json
  rooflab ai conv2d --n 8 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --padding 1
  rooflab ai attention --heads 32 --kv-heads 4 --q-len 1 \\
      --kv-len 500 --head-dim 64
  rooflab ai stencil 256x256x256 --points 7 --dtype fp64 --sweeps 20
  rooflab ai spmv 2e6 54e6 --dtype fp64
"""


def _emit(op, on: str | None, json_out: bool, extra=None, assumed: bool = False,
          roof_extra=None) -> None:
    """Print the answer; assumed: the op's dtype was the default, not --dtype (say so).
    extra: keys to add, or a function of the answer so far that returns them; roof_extra:
    a function of the answer and the roof --on names (None without), so --on is resolved
    once (ai_hpc's cache note)."""
    from .common import emit_json

    roof = nominal = None
    if on:
        from .inputs import resolve_on

        roofs = resolve_on(on)
        roof = roofs[0]
        # a profile holding both roofs (measured first): the nominal one for the band note
        if (len(roofs) > 1 and roof.kind == "measured" and roofs[1].kind == "nominal"
                and roofs[1].compute):
            nominal = roofs[1]
    d = result_dict(op, roof, nominal)
    d.update((extra(d) if callable(extra) else extra) or {})
    d.update((roof_extra(d, roof) if roof_extra else None) or {})
    # in the shape, beside the dtype it qualifies (the answer's top-level keys are fixed)
    d["shape"] = {**d["shape"], **(dtype_assumed(op.shape["dtype"]) if assumed
                                   else {"dtype_source": "given"})}
    if op.op == "stencil":
        _add_layer_condition(d, op, on, roof)
    if op.op == "conv2d":
        d.setdefault("notes", []).extend(_tf32_conv_note(op, roof) + pad_note(op))
    if json_out:
        emit_json(d)
    else:
        print("\n".join(format_result(d)))


# The ops over each row of ROWS x COLS, one subcommand each: (op, help text).
ROWS_COLS_OPS = (
    ("softmax", "Softmax over each of ROWS rows of COLS.\n\n"
                "    rooflab ai softmax 4096 4096\n\n"
                "4 FLOP per element; bytes: one read, one write (a fused, online softmax)."),
    ("layernorm", "LayerNorm over each row.\n\n    rooflab ai layernorm 2048 4096\n\n"
                  "7 FLOP per element; bytes: x read, y written, gamma and beta read once."),
    ("rmsnorm", "RMSNorm over each row.\n\n    rooflab ai rmsnorm 1 2048\n\n"
                "4 FLOP per element; bytes: x read, y written, gamma read once."),
)


def register(app) -> None:
    """Add `rooflab ai OP ...` (one subcommand per op, each added by its _register_<op>)."""
    ai = typer.Typer(help=HELP, no_args_is_help=True)
    app.add_typer(ai, name="ai")
    matmul = _register_matmul(ai)
    _register_gemm(ai, matmul)
    _register_gemv(ai)
    _register_elementwise(ai)
    _register_reduction(ai)
    for op, doc in ROWS_COLS_OPS:
        _register_rows_cols(ai, op, doc)
    _register_conv2d(ai)
    _register_attention(ai)
    _register_embedding(ai)
    _register_stencil(ai)
    _register_spmv(ai)
    _register_dot(ai)
    _register_axpy(ai)
    from .ai_cv import register as register_cv
    from .ai_occupancy import register as register_occupancy

    register_cv(ai)   # pool2d, batchnorm, groupnorm, upsample (review s28 R3 F9)
    register_occupancy(ai)


def _register_matmul(ai: typer.Typer):
    """`rooflab ai matmul M N K`; returns the command, which gemm calls."""

    @ai.command("matmul", **SIZES)
    def matmul(m: str = typer.Argument(..., help="rows of A and C (tokens, for a linear "
                                       "layer)"),
               n: str = typer.Argument(..., help="columns of B and C (output features)"),
               k: str = typer.Argument(..., help="the shared dimension (input features)"),
               dtype: str | None = DTYPE,
               batch: str = typer.Option("1", help="independent products (torch.bmm)"),
               on: OnAi = None, json_out: bool = JSON,
               tile: str | None = TILE, out_dtype: str | None = OUT_DTYPE,
               weights: str | None = WEIGHTS, group: str | None = GROUP,
               stages: str | None = STAGES, tiles_per_sm: str | None = TILES_PER_SM) -> None:
        """C(m×n) = A(m×k) @ B(k×n): 2·batch·m·n·k FLOP.

            rooflab ai matmul 4096 4096 4096 --dtype bf16
            rooflab ai matmul 4096 4096 4096 --tile 128x128
            rooflab ai matmul 1000 1000 1000 --tile 128x128x32 --on a100
            rooflab ai matmul 4096 4096 4096 --dtype fp8 --out-dtype bf16
            rooflab ai matmul 1 4096 4096 --weights int4 --on a100-80gb

        A linear layer on T tokens is m=T, n=out_features, k=in_features: Llama-2-7B's
        q_proj at decode batch 1 is `rooflab ai matmul 1 4096 4096`. --tile BMxBN counts
        the DRAM bytes of BM x BN output tiles (A read ceil(n/BN) times, B ceil(m/BM)
        times; no L2 reuse between tiles, an upper bound) beside the compulsory AI, and
        the tiles' quantization: the share of their area that is output (edge tiles), and
        with --on a GPU the waves over its SMs and whether --stages K-slices of BK fit in
        its shared memory, with the attainable FLOP/s both losses leave.
        --weights int4 is W4A16: B at 0.5 B plus group scales, math at --dtype."""
        sizes = (_n(m, "m"), _n(n, "n"), _n(k, "k"))
        int_in = canonical_dtype(dtype or ML_DTYPE)
        int8 = out_dtype is None and int_in in INT32_OUT
        # an int8 or int4 GEMM accumulates in int32 and returns it (torch._int_mm,
        # cuBLASLt; int4: the s4 tensor-core MMA, mma.sync ...s32.s4.s4.s32, and CUTLASS's
        # s4 GEMMs; uint8 likewise, ...s32.u8.u8.s32): C at 1 or 0.5 B would be a
        # requantizing epilogue, --out-dtype says so
        kw = {"dtype": dtype or ML_DTYPE, "batch": _n(batch, "batch"),
              "out_dtype": "int32" if int8 else out_dtype,
              "weights": weights, "group_size": group_size(group, weights)}
        tile3 = _tile3(tile) if tile is not None else None
        op = _ops().matmul(*sizes, **kw, tile=tile3[:2] if tile3 else None)
        extra = None
        if tile3 is not None:
            ideal = _ops().matmul(*sizes, **kw)
            from .ai_tile import tile_extra

            extra = tile_extra(op, ideal, tile3, stages, tiles_per_sm, on)
        elif stages is not None or tiles_per_sm is not None:
            raise InputError(f"{'--stages' if stages is not None else '--tiles-per-sm'} "
                             f"describes the tiles of --tile: add --tile BMxBN[xBK] "
                             f"(e.g. --tile 128x128x32)")
        if int8:
            how = INT32_OUT[int_in]
            op = replace(op, byte_model=f"{op.byte_model} ({int_in} GEMMs return int32, as "
                                        f"{how}; --out-dtype {int_in} for a "
                                        f"requantizing epilogue)")
        _emit(op, on, json_out, extra, assumed=dtype is None)

    return matmul


def _register_gemm(ai: typer.Typer, matmul) -> None:
    """`rooflab ai gemm` (hidden): matmul under its BLAS name."""

    @ai.command("gemm", **SIZES, hidden=True)
    def gemm(m: str, n: str, k: str, dtype: str | None = DTYPE, batch: str = typer.Option("1"),
             on: OnAi = None, json_out: bool = JSON, tile: str | None = TILE,
             out_dtype: str | None = OUT_DTYPE, weights: str | None = WEIGHTS,
             group: str | None = GROUP, stages: str | None = STAGES,
             tiles_per_sm: str | None = TILES_PER_SM) -> None:
        """Same as matmul."""
        matmul(m, n, k, dtype, batch, on, json_out, tile, out_dtype, weights, group, stages,
               tiles_per_sm)


def _register_gemv(ai: typer.Typer) -> None:
    """`rooflab ai gemv`."""

    @ai.command("gemv", **SIZES)
    def gemv(m: str, n: str, dtype: str | None = DTYPE, on: OnAi = None,
             json_out: bool = JSON) -> None:
        """y(m) = A(m×n) @ x(n) (a decode step's linear layer).

            rooflab ai gemv 2048 2048

        FLOP 2mn; bytes: A and x read, y written once, so the AI is about 2 / bytes per
        element: 1 FLOP/byte in fp16, bandwidth-bound on every GPU.
        """
        _emit(_ops().gemv(_n(m, "m"), _n(n, "n"), dtype or ML_DTYPE), on, json_out,
              assumed=dtype is None)


def _register_elementwise(ai: typer.Typer) -> None:
    """`rooflab ai elementwise`."""

    @ai.command("elementwise", **SIZES)
    def elementwise(n: str, dtype: str | None = DTYPE,
                    inputs: str = typer.Option("1", help="arrays read per element"),
                    outputs: str = typer.Option("1", help="arrays written per element"),
                    flop_per_element: float = typer.Option(1.0, help="FLOP per element"),
                    stride: str | None = STRIDE,
                    on: OnAi = None, json_out: bool = JSON) -> None:
        """n elements; y = x + 1 is the default, z = x + y is --inputs 2.

            rooflab ai elementwise 1e8 --dtype fp16 --inputs 2
            rooflab ai elementwise 1e8 --dtype fp32 --stride 2

        Scalars live in registers and move no bytes: fp16 y = x + 1 has AI 1/4, z = x + y
        1/6 (seed 004). --stride S: every array is accessed at x\\[i*S]; memory moves
        whole units, 32-byte sectors on a GPU (and without --on), 64-byte lines on a CPU
        --on, so the bytes are units x their size and the answer says the access
        efficiency (useful / fetched: GPU fp32 stride 2 is 50 %, stride 8 or more 12.5 %).
        """
        if not (math.isfinite(flop_per_element) and flop_per_element >= 0):
            # checked here to name the option (ops.elementwise would name a kernel field)
            raise InputError(f"--flop-per-element must be a finite number >= 0 (1 for y = "
                             f"x + 1, 2 for an FMA); got {flop_per_element!r}")
        op = _ops().elementwise(_n(n, "n"), dtype or ML_DTYPE, inputs=_n(inputs, "inputs"),
                                outputs=_n(outputs, "outputs"),
                                flop_per_element=flop_per_element)
        extra = None
        if stride is not None:
            from .ai_occupancy import strided_op
            from .inputs import resolve_on

            # the roof decides the unit moved: 32-byte sectors (GPU), 64-byte lines (CPU)
            roof = resolve_on(on)[0] if on else None
            op, extra = strided_op(op, _n(stride, "--stride", 1), roof)
        _emit(op, on, json_out, extra, assumed=dtype is None)


def _register_reduction(ai: typer.Typer) -> None:
    """`rooflab ai reduction`."""

    @ai.command("reduction", **SIZES)
    def reduction(n: str, dtype: str | None = DTYPE, rows: str = typer.Option("1", help="rows"),
                  on: OnAi = None, json_out: bool = JSON) -> None:
        """Sum of n elements per row.

            rooflab ai reduction 1e6 --dtype fp32

        FLOP rows·(n-1); bytes: each element read once, one result per row written.
        """
        _emit(_ops().reduction(_n(n, "n"), dtype or ML_DTYPE, rows=_n(rows, "rows")), on,
              json_out, assumed=dtype is None)


def _register_rows_cols(ai: typer.Typer, fn_name: str, doc: str) -> None:
    """`rooflab ai softmax|layernorm|rmsnorm ROWS COLS`: one op over each row."""

    @ai.command(fn_name, **SIZES)
    def rows_cols(rows: str, cols: str, dtype: str | None = DTYPE,
                  on: OnAi = None, json_out: bool = JSON) -> None:
        _emit(getattr(_ops(), fn_name)(_n(rows, "rows"), _n(cols, "cols"), dtype or ML_DTYPE),
              on, json_out, assumed=dtype is None)

    rows_cols.__doc__ = doc


def _register_conv2d(ai: typer.Typer) -> None:
    """`rooflab ai conv2d`."""

    @ai.command("conv2d")
    def conv2d(n: str = typer.Option(..., "--n", help="batch"),
               c: str = typer.Option(..., "--c", help="input channels"),
               h: str = typer.Option(..., "--h", help="input height"),
               w: str = typer.Option(..., "--w", help="input width"),
               k: str = typer.Option(..., "--k", help="output channels (filters)"),
               r: str = typer.Option("3", "--r", help="filter height"),
               s: str = typer.Option("3", "--s", help="filter width"),
               stride: str = typer.Option("1", help="S or SH,SW"),
               padding: str = typer.Option("0", help="P or PH,PW (0,1 pads the width "
                                           "only: a conv1d is --h 1 --r 1 --padding 0,P)"),
               dilation: str = typer.Option("1", help="spacing of the filter taps "
                                            "(torch's dilation; 1: adjacent; or DH,DW)"),
               groups: str = typer.Option("1"), dtype: str | None = DTYPE,
               out_dtype: str | None = OUT_DTYPE,
               on: OnAi = None, json_out: bool = JSON) -> None:
        """2-D convolution, output P = (H + 2·padding - dilation·(R - 1) - 1) / stride + 1
        (rounded down; Q likewise with W and S).

            rooflab ai conv2d --n 8 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 \\
                --padding 1
            rooflab ai conv2d --n 2 --c 16 --h 32 --w 32 --k 32 --padding 2 \\
                --dilation 2 --dtype fp32

        FLOP 2·N·K·P·Q·(C/groups)·R·S (dilation spreads the taps, it adds none); bytes:
        the input elements some output reads (a stride past the filter skips rows and
        columns), filters and output once each (no im2col copy); --out-dtype for an
        output of another dtype. Depthwise (--groups = --c) is held to the vector ceiling
        (cuDNN's depthwise kernels do not use tensor cores).
        """
        sizes = {nm: _n(v, f"--{nm}", 1) for nm, v in
                 (("n", n), ("c", c), ("h", h), ("w", w), ("k", k), ("r", r), ("s", s))}
        g = _n(groups, "--groups", 1)
        if sizes["c"] % g or sizes["k"] % g:
            raise InputError(f"--groups {g} must divide both --c {sizes['c']} and --k "
                             f"{sizes['k']}: give a common divisor (1 = a dense conv; "
                             f"depthwise: --groups = --c)")
        pad = conv_axes(padding, "--padding", 0)
        op = _ops().conv2d(**sizes, stride=conv_axes(stride, "--stride", 1), padding=pad,
                           dtype=dtype or ML_DTYPE, groups=g,
                           dilation=conv_axes(dilation, "--dilation", 1), out_dtype=out_dtype)
        _emit(op, on, json_out, conv1d_note(op, padding), assumed=dtype is None)


def _tf32_conv_note(op, roof) -> list[str]:
    """An fp32 conv on a roof with a tf32 ceiling (an NVIDIA GPU since Ampere): PyTorch runs
    it on TF32 by default (torch.backends.cudnn.conv.fp32_precision "tf32", the older
    cudnn.allow_tf32 True), so the fp32 vector ceiling is not what holds it (review 17b
    #12; bench/torch_count.tf32_enabled counts traced convs so). Not for a depthwise
    conv (C/groups = 1): cuDNN runs it fp32 FMA, no TF32 (review s28 R3 F6: the note said
    --dtype tf32, whose answer then fell back to the fp32 vector ceiling)."""
    shape = getattr(op, "shape", None) or {}
    if roof is None or op.precision != "fp32" or (
            shape.get("groups", 1) > 1 and shape.get("c") == shape.get("groups")):
        return []
    tf32 = next((c for c in roof.compute if c.precision == "tf32"), None)
    if tf32 is None:
        return []
    from ..units import fmt_rate

    return [f"PyTorch runs fp32 convs on TF32 by default on this GPU: --dtype tf32 for its "
            f"ceiling ({tf32.label} {fmt_rate(tf32.value, 'tf32')}); fp32 holds only with "
            f"torch.backends.cudnn.conv.fp32_precision = 'ieee' (or cudnn.allow_tf32 = "
            f"False)"]


def _register_attention(ai: typer.Typer) -> None:
    """`rooflab ai attention`."""

    @ai.command("attention")
    def attention(batch: str = typer.Option("1", help="sequences in the batch"),
                  heads: str = typer.Option(..., "--heads", help="query heads "
                                            "(num_attention_heads)"),
                  q_len: str = typer.Option(..., "--q-len", help="query tokens (1 = decode)"),
                  kv_len: str = typer.Option(..., "--kv-len", help="key/value tokens "
                                             "(the context in the KV cache)"),
                  head_dim: str = typer.Option(..., "--head-dim", help="per head: hidden / "
                                               "heads unless the config says (128 for "
                                               "Llama)"),
                  kv_heads: str | None = typer.Option(None, help="GQA K/V heads "
                                                      "(num_key_value_heads; default: "
                                                      "--heads)"),
                  naive: bool = typer.Option(False, help="eager, unfused: materialise "
                                             "the score matrix (its FLOP stay dense with "
                                             "--causal)"),
                  causal: bool = typer.Option(False, help="mask future keys: flash counts "
                                              "unmasked scores only, --naive all of them "
                                              "(where the mask sits: --causal-align)"),
                  causal_align: str | None = typer.Option(
                      None, "--causal-align", metavar="bottom-right|top-left",
                      help="with --causal and q-len != kv-len: bottom-right (default; query "
                      "i sees keys 0..i + kv-len - q-len: a decode step over a KV cache, "
                      "FlashAttention >= 2.1) or top-left (query i sees keys 0..i: "
                      "PyTorch's is_causal=True)"),
                  dtype: str | None = DTYPE,
                  out_dtype: str | None = typer.Option(
                      None, "--out-dtype", help="O's dtype when it is not --dtype "
                      "(default: bf16 for --dtype fp8, as FlashAttention-3 writes it)"),
                  on: OnAi = None, json_out: bool = JSON) -> None:
        """Attention (flash by default; --naive writes scores to memory).

            rooflab ai attention --heads 32 --kv-heads 4 --q-len 1 \\
                --kv-len 500 --head-dim 64
            rooflab ai attention --heads 4 --q-len 16 --kv-len 64 --head-dim 64 \\
                --causal --causal-align top-left --dtype fp32

        Flash: Q, K, V read and O written once; --naive also writes and reads back the
        heads x q-len x kv-len score matrix. --causal: flash skips the masked scores' FLOP,
        --naive computes the dense matrix and counts it all (as `rooflab llm --attn naive`).
        With q-len != kv-len the byte model says which mask alignment was counted
        (PyTorch's SDPA is_causal is top-left).
        """
        lq, lkv = _n(q_len, "--q-len", 1), _n(kv_len, "--kv-len", 1)
        nh = _n(heads, "--heads", 1)
        nkv = None if kv_heads is None else _n(kv_heads, "--kv-heads", 1)
        if nkv is not None and nh % nkv:
            raise InputError(f"--kv-heads {nkv} must divide --heads {nh} (each K/V head "
                             f"serves --heads / --kv-heads query heads): give a divisor of "
                             f"{nh} (1 = MQA, {nh} = MHA)")
        align = checked_causal_align(causal_align, causal, lq, lkv)
        d = dtype or ML_DTYPE
        # FlashAttention-3's fp8 forward returns O in bf16 (the byte model says so)
        out = out_dtype or ("bf16" if canonical_dtype(d) == "fp8" else None)
        op = _ops().attention(_n(batch, "--batch", 1), nh, lq, lkv,
                              _n(head_dim, "--head-dim", 1), kv_heads=nkv, dtype=d,
                              flash=not naive, causal=causal, causal_align=align,
                              out_dtype=out)
        if out_dtype is None and out is not None:
            op = replace(op, byte_model=f"{op.byte_model} (FlashAttention-3's fp8 forward "
                                        f"writes bf16; --out-dtype fp8 for fp8)")
        if causal and lq != lkv:    # how to count the other alignment, in the CLI's words
            other = "top-left" if align == "bottom-right" else "bottom-right"
            op = replace(op, byte_model=f"{op.byte_model} (--causal-align {other})")
        _emit(op, on, json_out, assumed=dtype is None)


def _register_embedding(ai: typer.Typer) -> None:
    """`rooflab ai embedding`."""

    @ai.command("embedding", **SIZES)
    def embedding(tokens: str, hidden: str, dtype: str | None = DTYPE,
                  on: OnAi = None, json_out: bool = JSON) -> None:
        """Embedding lookup of TOKENS rows of HIDDEN (0 FLOP).

            rooflab ai embedding 8 2048

        Bytes: the looked-up rows and the token ids read, the output written; the rest of
        the table is never touched.
        """
        _emit(_ops().embedding(_n(tokens, "tokens"), _n(hidden, "hidden"), dtype or ML_DTYPE),
              on, json_out, assumed=dtype is None)
