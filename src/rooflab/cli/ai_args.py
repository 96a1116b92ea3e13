"""The shared arguments of `rooflab ai OP` (cli/ai.py, cli/ai_hpc.py): the options every op
takes, the size parser, and the dtype each op assumes when --dtype is not given.
"""

from __future__ import annotations

import difflib
import math
from typing import Annotated

import typer
from typer.core import TyperCommand

from ..errors import InputError
from .options import on_option

# The dtype an op assumes without --dtype: fp16 for the ML ops (what GPU inference runs,
# and what the tensor ceilings are for), fp64 for the HPC ops (stencil, spmv, dot, axpy:
# HPC's precision, review 17a N10). The option's default is None so that the answer can say
# the dtype was assumed (seed 000 works its examples in fp32: a reader who leaves --dtype off
# must see that fp16 halved the bytes).
ML_DTYPE = "fp16"
HPC_DTYPE = "fp64"


def _dtype_given(ctx: typer.Context, param: typer.CallbackParam, value: str | None):
    """A dtype option given empty (`--dtype "$DT"`, DT unset) is refused: every op read ''
    as not given and counted its default dtype without a word (s38 G)."""
    if value is not None and not value.strip() and not ctx.resilient_parsing:
        opt = param.opts[0]
        raise InputError(f"{opt} '': the dtype is empty (an unset variable?); give one such "
                         f"as fp16 or fp32, or leave {opt} out")
    return value


DTYPE = typer.Option(None, "--dtype", "-d", show_default=False, callback=_dtype_given,
                     help="fp64 fp32 tf32 fp16 bf16 fp8 fp4 int8 int4 ... (default fp16)")
DTYPE64 = typer.Option(None, "--dtype", "-d", show_default=False, callback=_dtype_given,
                       help="fp64 fp32 fp16 bf16 ... (default fp64, HPC's precision)")
# ai's --on is optional: it adds the verdict on that roof to the counts
OnAi = Annotated[str | None, on_option("adds attainable FLOP/s, bound, time floor")]
JSON = typer.Option(False, "--json", help="print JSON (the rooflab vocabulary) instead")


TILE = typer.Option(None, "--tile", metavar="BMxBN[xBK]",
                    help="output tile, e.g. 128x128: DRAM bytes with A read ceil(n/BN) "
                    "times and B ceil(m/BM) times (no L2 reuse between tiles: an upper "
                    "bound), printed beside the compulsory AI; also the tiles' quantization "
                    "(edge tiles, and with --on a GPU its waves and whether BK-deep stages "
                    "fit in shared memory; BK default 32)")
STAGES = typer.Option(None, "--stages", metavar="S", show_default=False,
                      help="with --tile: K-slices of A and B held in shared memory at once "
                      "(the mainloop's pipeline depth; default 3 on compute capability 8.0 "
                      "and later, 2 before, as CUTLASS's default GEMMs)")
TILES_PER_SM = typer.Option(None, "--tiles-per-sm", metavar="N", show_default=False,
                            help="with --tile and --on: the occupancy in tiles, i.e. thread "
                            "blocks (output tiles) resident on one SM at once; a wave is "
                            "SMs x N tiles (default 1, as for large tensor-core tiles)")
STRIDE = typer.Option(None, "--stride", metavar="S", show_default=False,
                      help="access every array at a stride of S elements (x\\[i*S]): DRAM "
                      "moves whole 32-byte sectors, so the bytes are the sectors touched x "
                      "32 and the answer says the access efficiency (default 1: coalesced)")
OUT_DTYPE = typer.Option(None, "--out-dtype", callback=_dtype_given, help="C's dtype when "
                         "it is not --dtype (an fp8 GEMM writing bf16)")
WEIGHTS = typer.Option(None, "--weights", callback=_dtype_given, help="B's stored dtype "
                       "(int4: W4A16, with group scales as rooflab llm counts them); math "
                       "and A stay at --dtype")
# The integer GEMMs that return int32 (`ai matmul`; review s33 F1: uint8 wrote C as
# uint8), each with the kernel the byte model names
INT32_OUT = {"int8": "torch._int_mm", "uint8": "the u8 tensor-core MMA",
             "int4": "CUTLASS's s4 tensor-core GEMM"}
GROUP = typer.Option(None, "--group", show_default=False,
                     help="int2-int8 --weights: weights per fp16 scale (default 128)")


def group_size(group: str | None, weights: str | None) -> int:
    """--group, checked: weights per scale of int2-int8 --weights (128 when not given).
    Given with no such weights it changed nothing and said nothing (review s28 R1 #3);
    whatif refuses the same case."""
    from ..units import GROUP_SCALED, canonical_dtype

    if group is None:
        return 128
    size = _n(group, "--group")
    if size < 1:
        raise InputError(f"--group must be a positive whole number (weights per scale, "
                         f"e.g. 128); got '{group}'")
    if weights is None or canonical_dtype(weights) not in GROUP_SCALED:
        which = "B without --weights" if weights is None else f"--weights {weights}"
        raise InputError(f"--group {group} goes with int2-int8 --weights (weights per "
                         f"scale); {which} has no group scales: add --weights int4, or "
                         f"drop --group")
    return size


def _tile3(text: str) -> tuple[int, int, int | None]:
    """--tile BMxBN[xBK] as (BM, BN, BK or None)."""
    from ..workloads.ops_common import MAX_SIZE, too_large

    parts = [p.strip() for p in str(text).lower().split("x")]
    if len(parts) not in (2, 3) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--tile must be BMxBN or BMxBNxBK, the output tile's rows x "
                         f"columns (x the K step staged per stage) as positive whole numbers "
                         f"such as 128x128 or 128x128x32; got '{text}'")
    for p, name in zip(parts, ("--tile BM", "--tile BN", "--tile BK")[:len(parts)],
                       strict=True):
        if int(p) > MAX_SIZE:
            raise InputError(too_large(name, int(p)))
    bk = int(parts[2]) if len(parts) == 3 else None
    return int(parts[0]), int(parts[1]), bk


def _n(text: str, name: str, minimum: int | None = None) -> int:
    """A size as typed: 4096, 4_096, 1e8. Whole and positive is checked by the op, whose
    message names its parameter; give `minimum` where the option's name differs from it
    (--points, not points), so that the message names the option."""
    from ..workloads.ops_common import MAX_SIZE, too_large

    try:
        value = float(str(text).replace("_", ""))
    except ValueError:
        raise InputError(f"{name} must be a whole number such as 4096 or 1e6; got '{text}'") \
            from None
    # 400 digits, or 1e400: a number, only past a float's range; `inf` typed is no size
    # (it was "m is beyond 1e308": s36 I), as `-inf` and `nan` are not
    if value == math.inf and any(c.isdigit() for c in str(text)):
        raise InputError(too_large(name, value, str(text)))
    if not math.isfinite(value) or value != int(value):
        raise InputError(f"{name} must be a whole number such as 4096 or 1e6; got '{text}'")
    if minimum is not None and value < minimum:
        need = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
        raise InputError(f"{name} must be {need}; got {text}")
    if value > MAX_SIZE:
        raise InputError(too_large(name, value, str(text)))
    return int(value)


def _ops():
    from ..workloads import ops

    return ops


# Positional sizes: let "-4" reach the size check ("must be positive") instead of being
# taken for an unknown option.
POSITIONAL = {"ignore_unknown_options": True}


class SizesCommand(TyperCommand):
    """An `ai OP` command: ignore_unknown_options (POSITIONAL) lets "-4" through to the
    size check, but it also let a misspelt `--tiles 64x64` through as two extra sizes
    ("unexpected extra argument", or "tokens must be a whole number; got '--tokens'").
    Refuse an unknown option before parsing, worded as every other verb's parser does."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        refuse_unknown_options(ctx, self.get_params(ctx), args)
        return super().parse_args(ctx, args)


# `@ai.command(NAME, **SIZES)`: the settings every op with positional sizes takes
SIZES = {"context_settings": POSITIONAL, "cls": SizesCommand}


def refuse_unknown_options(ctx, params, args: list[str]) -> None:
    """ctx.fail (a usage error, exit 2) at the first token that names no option: '--tiles',
    '--tile-size=4', '-x'; not a negative number ('-4', '-1e3'), which is a size."""
    names = [o for p in params for o in (*getattr(p, "opts", ()),
                                          *getattr(p, "secondary_opts", ()))
             if o.startswith("-")]
    shorts = [o for o in names if not o.startswith("--")]
    # options that take a value: the token after one is its value ('--tile -8x8' is the
    # tile's, for --tile's own message), not an option
    takes_value = {o for p in params if not getattr(p, "is_flag", True)
                   for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
    value_next = False
    for tok in args:
        if value_next:
            value_next = False
            continue
        if tok == "--":   # everything after it is a positional value
            return
        name = tok.split("=", 1)[0]
        value_next = tok in takes_value
        if not tok.startswith("-") or name in names or _is_number(tok):
            continue
        if not tok.startswith("--") and any(tok.startswith(s) for s in shorts):
            continue   # '-dbf16': a short option with its value attached
        close = difflib.get_close_matches(name, [o for o in names if o.startswith("--")])
        said = f" (Possible options: {', '.join(sorted(close))})" if close else ""
        ctx.fail(f"No such option: {name}{said}")


def _is_number(text: str) -> bool:
    try:
        float(text.replace("_", ""))
    except ValueError:
        return False
    return True


def dtype_assumed(dtype: str) -> dict:
    """The answer's fields for a dtype taken by default (the op's canonical dtype): where
    it came from, and one sentence saying so and how to count 4-byte elements instead."""
    why = ", HPC's precision" if dtype == HPC_DTYPE else ""
    return {"dtype_source": "default",
            "dtype_note": f"dtype {dtype} (default{why}; --dtype fp32 for 4-byte elements)"}


def checked_causal_align(text: str | None, causal: bool, q_len: int, kv_len: int) -> str:
    """--causal-align as given, checked (None: bottom-right, the default)."""
    if text is None:
        align = "bottom-right"
    else:
        align = text.strip().lower()
        if align not in _ops().CAUSAL_ALIGNS:
            raise InputError(f"--causal-align must be bottom-right (a decode step over a KV "
                             f"cache) or top-left (PyTorch's is_causal); got '{text}'")
        if not causal:
            raise InputError(f"--causal-align {align} places a causal mask, and there is "
                             f"none: add --causal (without it every (query, key) pair is "
                             f"counted)")
    if causal and align == "bottom-right" and q_len > kv_len:
        raise InputError(f"--q-len {q_len} > --kv-len {kv_len} with a bottom-right causal "
                         f"mask (the queries are the last q-len of kv-len positions): give "
                         f"--kv-len >= --q-len, or --causal-align top-left (PyTorch's "
                         f"is_causal, where queries past kv-len see every key)")
    return align


def conv_axes(text: str, name: str, minimum: int):
    """--stride/--padding/--dilation: one value for both axes, or HEIGHT,WIDTH (torch's
    tuples: --padding 0,1 pads the width only)."""
    parts = str(text).split(",")
    if len(parts) > 2:
        raise InputError(f"{name} takes one value or two, HEIGHT,WIDTH (e.g. {name} 0,1); "
                         f"got '{text}'")
    values = tuple(_n(v.strip(), name, minimum) for v in parts)
    return values if len(values) == 2 else values[0]


def conv1d_note(op, padding: str):
    """A conv1d written as --h 1 --r 1 with one --padding pads the height too (3 rows, 2
    of them zeros: 3x the FLOP): say it and how to pad the width only."""
    sh = op.shape
    if "," in str(padding) or sh["padding"] == 0 or not (sh["h"] == 1 and sh["r"] == 1):
        return None
    stride = sh["stride"]
    stride_h = stride[0] if isinstance(stride, (list, tuple)) else stride
    # output row i reads padded row i*stride_h - padding; only row 0 is the input's (H = 1),
    # so with --stride 2 --padding 1 both rows (-1 and +1) are zeros
    real = sum(1 for i in range(sh["p"]) if i * stride_h - sh["padding"] == 0)
    note = (f"--padding {sh['padding']} pads the height too: P = {sh['p']} rows, "
            f"{sh['p'] - real} of them zero padding, counted as work; for a conv1d "
            f"(--h 1 --r 1) pad the width only: --padding 0,{sh['padding']}")
    return lambda d: {"notes": [*d.get("notes", []), note]}
