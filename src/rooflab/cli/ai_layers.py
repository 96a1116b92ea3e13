"""`rooflab ai`'s neural-network layer ops (split from cli/ai.py): conv2d (with the note on
PyTorch's TF32 default for an fp32 conv), attention (flash or --naive, GQA, the causal mask's
alignment) and embedding. Each answer goes out through cli/ai.py's _emit."""

from __future__ import annotations

from dataclasses import replace

import typer

from ..errors import InputError
from ..units import canonical_dtype
from .ai_args import (
    DTYPE,
    JSON,
    ML_DTYPE,
    OUT_DTYPE,
    SIZES,
    OnAi,
    _n,
    _ops,
    checked_causal_align,
    conv1d_note,
    conv_axes,
)


def _emit(*args, **kw) -> None:
    from .ai import _emit as emit  # at call time: ai imports this module

    emit(*args, **kw)


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
                      None, "--causal-align", metavar="ALIGN",
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
