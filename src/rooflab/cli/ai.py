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
from .ai_layers import (
    _register_attention,
    _register_conv2d,
    _register_embedding,
    _tf32_conv_note,
)
from .ai_result import format_result, result_dict
from .finite_options import as_typed

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
            got = as_typed("--flop-per-element", flop_per_element)
            raise InputError(f"--flop-per-element must be a finite number >= 0 (1 for y = "
                             f"x + 1, 2 for an FMA); got {got}")
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


