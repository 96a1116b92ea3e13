"""rooflab ai — arithmetic intensity of one op: FLOP, bytes (with the byte model), AI.

With --on HARDWARE|PROFILE also the attainable FLOP/s, the bound, the time floor and the
ridge on that roof. Kept light: no matplotlib, torch or numba on this path.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Annotated

import typer

from ..errors import InputError
from .options import on_option

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

DTYPE = typer.Option("fp16", "--dtype", "-d", help="fp64 fp32 tf32 fp16 bf16 fp8 int8 int4 ...")
# The HPC ops (stencil, spmv, dot, axpy) default to fp64, HPC's precision (review 17a N10).
DTYPE64 = typer.Option("fp64", "--dtype", "-d", help="fp64 fp32 fp16 bf16 ... (fp64 for the "
                       "HPC ops, HPC's precision)")
# ai's --on is optional: it adds the verdict on that roof to the counts
OnAi = Annotated[str | None, on_option("adds attainable FLOP/s, bound, time floor")]
JSON = typer.Option(False, "--json", help="print JSON (the rooflab vocabulary) instead")


TILE = typer.Option(None, "--tile", metavar="BMxBN",
                    help="output tile, e.g. 128x128: DRAM bytes with A read ceil(n/BN) "
                    "times and B ceil(m/BM) times (no L2 reuse between tiles: an upper "
                    "bound), printed beside the compulsory AI")
OUT_DTYPE = typer.Option(None, "--out-dtype", help="C's dtype when it is not --dtype (an "
                         "fp8 GEMM writing bf16)")
WEIGHTS = typer.Option(None, "--weights", help="B's stored dtype (int4: W4A16, with group "
                       "scales as rooflab llm counts them); math and A stay at --dtype")
GROUP = typer.Option("128", "--group", help="int4/int8 --weights: weights per fp16 scale")


def _tile(text: str) -> tuple[int, int]:
    """--tile BMxBN (128x128, 256X128) as (BM, BN)."""
    parts = [p.strip() for p in str(text).lower().split("x")]
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--tile must be BMxBN, the output tile's rows x columns as two "
                         f"positive whole numbers such as 128x128; got '{text}'")
    return int(parts[0]), int(parts[1])


def _n(text: str, name: str, minimum: int | None = None) -> int:
    """A size as typed: 4096, 4_096, 1e8. Whole and positive is checked by the op, whose
    message names its parameter; give `minimum` where the option's name differs from it
    (--points, not points), so that the message names the option."""
    try:
        value = float(str(text).replace("_", ""))
    except ValueError:
        raise InputError(f"{name} must be a whole number such as 4096 or 1e6; got '{text}'") \
            from None
    if not math.isfinite(value) or value != int(value):
        raise InputError(f"{name} must be a whole number such as 4096 or 1e6; got '{text}'")
    if minimum is not None and value < minimum:
        need = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
        raise InputError(f"{name} must be {need}; got {text}")
    return int(value)


# Seed 000/004 name no fp4 rate and the catalog holds none, so units.flop_precision counts
# fp4 math under fp8: say so, or a B200 floor reads 2x too high without a word (its
# datasheet's dense fp4 rate is 2x its fp8 rate; review 12d F).
def fp4_note(ceiling: str | None = None) -> str:
    held = f"held to {ceiling}" if ceiling else "counted as fp8 math"
    return (f"no fp4 ceiling in rooflab; {held} (B200's datasheet fp4 rate is 2x fp8, so "
            f"there the compute floor is up to 2x high)")


NO_FLOP = "no FLOP: memory and launch only"


def result_dict(op, roof=None, nominal=None) -> dict:
    """The JSON answer: top-level flop/bytes/ai, the kernel, and the roof's verdict.
    nominal: the datasheet roof of a profile whose measured roof is `roof`, for the
    ridge-band note `rooflab report` gives (review 12a #7). A stencil's sweeps are one
    call each (a launch, or a parallel region, per sweep): the launch floor counts them."""
    from ..model.analysis import analyze, memory_ceiling
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict, point_to_dict, roof_to_dict

    kernel = op.kernel(calls=int(op.shape.get("sweeps", 1)) if op.op == "stencil" else 1)
    out = {"schema_version": SCHEMA_VERSION, "op": op.op, "name": op.name, "flop": op.flop,
           "bytes": op.bytes, "ai": op.ai if math.isfinite(op.ai) else None,
           "precision": op.precision, "unit": op.unit, "byte_model": op.byte_model,
           "bytes_split": dict(op.bytes_split), "shape": dict(op.shape),
           "kernels": [kernel_to_dict(kernel)]}
    fp4 = op.shape.get("dtype") == "fp4"
    if fp4:
        out["dtype"] = "fp4"
    if roof is None:
        if fp4:
            out["notes"] = [fp4_note()]
        return out
    for level in kernel.bytes:
        roof.bandwidth(level)    # InputError naming the levels the roof has
    analysis = analyze(roof, [kernel])
    (p,) = analysis.points
    # The ceiling actually used: a fallback (int4 on a roof without int4 math) is
    # another precision than the op's, and the text must name that one.
    ceiling, _ = roof.compute_for(kernel.precision, kernel.unit)
    notes = ([fp4_note(ceiling.label)] if fp4 else []) + list(analysis.notes)
    if nominal is not None:
        notes += _ridge_band(analysis, roof, nominal)
    # the memory ceiling that judged the bytes: DRAM (real traffic) for real-traffic counts
    # on a probed CPU roof (analysis.memory_ceiling), else the level's own
    judged, _ = memory_ceiling(roof, kernel, p.level)
    out.update({"roof": roof_to_dict(roof), "analysis": [point_to_dict(p)],
                "memory_ceiling": judged.level if judged is not None else p.level,
                "compute_ceiling": ceiling.label,
                "compute_ceiling_precision": ceiling.precision,
                "attainable_flop_per_s": p.attainable_flop_per_s, "bound": p.bound,
                "binding": p.binding, "ridge": p.ridge,
                **_floors(p, roof), "notes": notes})
    return out


def _floors(p, roof) -> dict:
    """The time floor as the bound judged it: max(work floor, calls x the roof's launch
    floor), each part named (review 12a #8, 12d E: "overhead" next to a 155 ns floor)."""
    work, launch = p.floor_s, p.overhead_floor_s
    launch_binds = launch is not None and launch > work
    return {"time_floor_s": launch if launch_binds else work, "work_floor_s": work,
            "launch_floor_s": launch, "calls": p.calls,
            "launch_floor_provenance": _launch_provenance(roof) if launch is not None else None,
            "floor_binding": "launch" if launch_binds else "work",
            # which side of the ridge the work is on, whatever the launches say (None:
            # an op without FLOP has no compute side)
            "roof_side": None if p.flop <= 0 else
            ("memory" if p.memory_bound_side else "compute")}


def _launch_provenance(roof) -> str:
    """nominal (the catalog's 5 us guess) or measured (a probe's), from the roof's
    overhead_source, else the roof's own kind."""
    source = (roof.overhead_source or "").lower()
    if "nominal" in source:
        return "nominal"
    if "measured" in source:
        return "measured"
    return roof.kind


def _ridge_band(analysis, roof, nominal) -> list[str]:
    """`rooflab report`'s near-ridge warning for a profile holding both roofs: the op's AI
    between the measured and the nominal ridge flips its side (seed 004:28, :344)."""
    from ..hardware.profile import MachineProfile
    from ..model.diagnose import diagnose
    from ..report.markdown import ridge_band_warnings

    if not analysis.points or analysis.points[0].flop <= 0:
        return []
    profile = MachineProfile(host={}, nominal=nominal, measured=roof)
    return [f"near ridge: {w}" for w in
            ridge_band_warnings(diagnose(analysis), profile, analysis.kernels)]


def format_result(d: dict) -> list[str]:
    """The answer as lines of text (only the CLI prints them)."""
    from ..units import fmt_ai, fmt_rate, si

    unit = f", {d['unit']}" if d["unit"] else ""
    shown = "fp4 held as fp8" if d.get("dtype") == "fp4" else d["precision"]
    split = ", ".join(f"{k} {si(v, 'B')}" for k, v in d["bytes_split"].items())
    lines = [f"{d['name']}  ({d['op']}, {shown}{unit})",
             f"  FLOP        {si(d['flop'], 'FLOP')}  ({d['flop']:.6g})",
             f"  bytes       {si(d['bytes'], 'B')}  ({d['bytes']:.6g}; {split})",
             f"  byte model  {d['byte_model']}",
             f"  AI          {fmt_ai(d['ai'])} FLOP/byte" + (
                 f"  ({d['ai']:.6g})" if d["ai"] is not None else "")]
    if "compulsory_ai" in d:     # ai matmul --tile: the bound the tiles fall short of
        lines.append(f"  compulsory  AI {fmt_ai(d['compulsory_ai'])} FLOP/byte, "
                     f"{si(d['compulsory_bytes'], 'B')} (each operand moved once; the "
                     f"tiles move {d['bytes'] / d['compulsory_bytes']:.3g}x that)")
    if "roof" not in d:
        return lines + [f"  note: {n}" for n in d.get("notes", [])]
    p = d["analysis"][0]
    # a fallback ceiling's rate in its own unit: int8 work on fp16 math is FLOP/s
    prec = d.get("compute_ceiling_precision") or p["precision"]
    memory = f"{d.get('memory_ceiling') or p['level']} {si(p['bytes_per_s'], 'B/s')}"
    lines.append(f"on {d['roof']['name']} ({d['roof']['kind']}):")
    if d["flop"] > 0:
        lines += [f"  ceilings    {d.get('compute_ceiling') or _compute_label(p)} "
                  f"{fmt_rate(p['peak_flop_per_s'], prec)}, {memory}",
                  f"  ridge       {fmt_ai(d['ridge'])} FLOP/byte",
                  f"  attainable  {fmt_rate(d['attainable_flop_per_s'], prec)}"
                  + _with_launch_rate(d, prec)]
    else:
        lines += [f"  ceilings    {memory} ({NO_FLOP}; no compute ceiling or ridge applies)"]
    lines += [f"  bound       {_bound_text(d, p)}", f"  time floor  {_floor_text(d)}"]
    lines += [f"  note: {n}" for n in d["notes"]]
    return lines


def _with_launch_rate(d: dict, prec: str) -> str:
    """Where the launch binds, the rate it leaves: FLOP / time floor (0.82 TFLOP/s for a
    decode attention on an H100, not the 26.4 of the roof alone)."""
    from ..units import fmt_rate

    if d["floor_binding"] != "launch":
        return ""
    return (f" on the roof; {fmt_rate(d['flop'] / d['time_floor_s'], prec)} with the "
            f"launch (FLOP / time floor)")


def _roof_reason(d: dict, p: dict) -> str:
    """Why the work alone sits where it does on the roof."""
    from ..units import fmt_ai

    if d["flop"] <= 0:
        return NO_FLOP
    side = "<" if d["roof_side"] == "memory" else ">="
    return f"AI {fmt_ai(p['ai'])} {side} ridge {fmt_ai(d['ridge'])}"


def _launches(d: dict) -> str:
    from ..units import fmt_seconds

    calls = d["calls"]
    what = "one launch" if calls == 1 else f"{calls} launches"
    return f"{what} ({fmt_seconds(d['launch_floor_s'])}, {d['launch_floor_provenance']})"


def _bound_text(d: dict, p: dict) -> str:
    from ..units import fmt_seconds

    reason = _roof_reason(d, p)
    if d["bound"] == "overhead" and d["floor_binding"] == "launch":
        on_roof = (f"on the roof it is {d['roof_side']}-bound ({reason})" if d["roof_side"]
                   else reason)
        return (f"overhead: {_launches(d)} > the {fmt_seconds(d['work_floor_s'])} work "
                f"floor; {on_roof}")
    return f"{d['bound']} ({reason}; binding ceiling: {d['binding']})"


def _floor_text(d: dict) -> str:
    from ..units import fmt_seconds

    work = "bytes/B" if d["flop"] <= 0 else "max(FLOP/P, bytes/B)"
    if d["floor_binding"] == "launch":
        return (f"{fmt_seconds(d['time_floor_s'])} (launch); work floor "
                f"{fmt_seconds(d['work_floor_s'])}  {work}")
    tail = ""
    if d.get("launch_floor_s") is not None:
        tail = f"; {_launches(d)} is below it"
    return f"{fmt_seconds(d['time_floor_s'])}  {work}{tail}"


def _compute_label(p: dict) -> str:
    return f"{p['precision']} {p['unit']}" if p["unit"] else p["precision"]


def _emit(op, on: str | None, json_out: bool, extra: dict | None = None) -> None:
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
    d.update(extra or {})
    if op.op == "stencil":
        _add_layer_condition(d, op, on, roof)
    if op.op == "conv2d":
        d.setdefault("notes", []).extend(_tf32_conv_note(op, roof))
    if json_out:
        emit_json(d)
    else:
        print("\n".join(format_result(d)))


def _ops():
    from ..workloads import ops

    return ops


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
# Positional sizes: let "-4" reach the size check ("must be positive") instead of being
# taken for an unknown option.
POSITIONAL = {"ignore_unknown_options": True}


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


def _register_matmul(ai: typer.Typer):
    """`rooflab ai matmul M N K`; returns the command, which gemm calls."""

    @ai.command("matmul", context_settings=POSITIONAL)
    def matmul(m: str = typer.Argument(..., help="rows of A and C (tokens, for a linear "
                                       "layer)"),
               n: str = typer.Argument(..., help="columns of B and C (output features)"),
               k: str = typer.Argument(..., help="the shared dimension (input features)"),
               dtype: str = DTYPE,
               batch: str = typer.Option("1", help="independent products (torch.bmm)"),
               on: OnAi = None, json_out: bool = JSON,
               tile: str | None = TILE, out_dtype: str | None = OUT_DTYPE,
               weights: str | None = WEIGHTS, group: str = GROUP) -> None:
        """C(m×n) = A(m×k) @ B(k×n): 2·batch·m·n·k FLOP.

            rooflab ai matmul 4096 4096 4096 --dtype bf16
            rooflab ai matmul 4096 4096 4096 --tile 128x128
            rooflab ai matmul 4096 4096 4096 --dtype fp8 --out-dtype bf16
            rooflab ai matmul 1 4096 4096 --weights int4 --on a100-80gb

        A linear layer on T tokens is m=T, n=out_features, k=in_features: Llama-2-7B's
        q_proj at decode batch 1 is `rooflab ai matmul 1 4096 4096`. --tile BMxBN counts
        the DRAM bytes of BM x BN output tiles (A read ceil(n/BN) times, B ceil(m/BM)
        times; no L2 reuse between tiles, an upper bound) beside the compulsory AI.
        --weights int4 is W4A16: B at 0.5 B plus group scales, math at --dtype."""
        sizes = (_n(m, "m"), _n(n, "n"), _n(k, "k"))
        kw = {"dtype": dtype, "batch": _n(batch, "batch"), "out_dtype": out_dtype,
              "weights": weights, "group_size": _n(group, "--group")}
        if kw["group_size"] < 1:
            raise InputError(f"--group must be a positive whole number (weights per scale, "
                             f"e.g. 128); got '{group}'")
        op = _ops().matmul(*sizes, **kw, tile=_tile(tile) if tile is not None else None)
        extra = None
        if tile is not None:
            ideal = _ops().matmul(*sizes, **kw)
            extra = {"tile": list(op.shape["tile"]), "compulsory_bytes": ideal.bytes,
                     "compulsory_ai": ideal.ai}
        _emit(op, on, json_out, extra)

    return matmul


def _register_gemm(ai: typer.Typer, matmul) -> None:
    """`rooflab ai gemm` (hidden): matmul under its BLAS name."""

    @ai.command("gemm", context_settings=POSITIONAL, hidden=True)
    def gemm(m: str, n: str, k: str, dtype: str = DTYPE, batch: str = typer.Option("1"),
             on: OnAi = None, json_out: bool = JSON, tile: str | None = TILE,
             out_dtype: str | None = OUT_DTYPE, weights: str | None = WEIGHTS,
             group: str = GROUP) -> None:
        """Same as matmul."""
        matmul(m, n, k, dtype, batch, on, json_out, tile, out_dtype, weights, group)


def _register_gemv(ai: typer.Typer) -> None:
    """`rooflab ai gemv`."""

    @ai.command("gemv", context_settings=POSITIONAL)
    def gemv(m: str, n: str, dtype: str = DTYPE, on: OnAi = None,
             json_out: bool = JSON) -> None:
        """y(m) = A(m×n) @ x(n) (a decode step's linear layer).

            rooflab ai gemv 2048 2048

        FLOP 2mn; bytes: A and x read, y written once, so the AI is about 2 / bytes per
        element: 1 FLOP/byte in fp16, bandwidth-bound on every GPU.
        """
        _emit(_ops().gemv(_n(m, "m"), _n(n, "n"), dtype), on, json_out)


def _register_elementwise(ai: typer.Typer) -> None:
    """`rooflab ai elementwise`."""

    @ai.command("elementwise", context_settings=POSITIONAL)
    def elementwise(n: str, dtype: str = DTYPE,
                    inputs: str = typer.Option("1", help="arrays read per element"),
                    outputs: str = typer.Option("1", help="arrays written per element"),
                    flop_per_element: float = typer.Option(1.0, help="FLOP per element"),
                    on: OnAi = None, json_out: bool = JSON) -> None:
        """n elements; y = x + 1 is the default, z = x + y is --inputs 2.

            rooflab ai elementwise 1e8 --dtype fp16 --inputs 2

        Scalars live in registers and move no bytes: fp16 y = x + 1 has AI 1/4, z = x + y
        1/6 (seed 004).
        """
        if not (math.isfinite(flop_per_element) and flop_per_element >= 0):
            # checked here to name the option (ops.elementwise would name a kernel field)
            raise InputError(f"--flop-per-element must be a finite number >= 0 (1 for y = "
                             f"x + 1, 2 for an FMA); got {flop_per_element!r}")
        _emit(_ops().elementwise(_n(n, "n"), dtype, inputs=_n(inputs, "inputs"),
                                 outputs=_n(outputs, "outputs"),
                                 flop_per_element=flop_per_element), on, json_out)


def _register_reduction(ai: typer.Typer) -> None:
    """`rooflab ai reduction`."""

    @ai.command("reduction", context_settings=POSITIONAL)
    def reduction(n: str, dtype: str = DTYPE, rows: str = typer.Option("1", help="rows"),
                  on: OnAi = None, json_out: bool = JSON) -> None:
        """Sum of n elements per row.

            rooflab ai reduction 1e6 --dtype fp32

        FLOP rows·(n-1); bytes: each element read once, one result per row written.
        """
        _emit(_ops().reduction(_n(n, "n"), dtype, rows=_n(rows, "rows")), on, json_out)


def _register_rows_cols(ai: typer.Typer, fn_name: str, doc: str) -> None:
    """`rooflab ai softmax|layernorm|rmsnorm ROWS COLS`: one op over each row."""

    @ai.command(fn_name, context_settings=POSITIONAL)
    def rows_cols(rows: str, cols: str, dtype: str = DTYPE,
                  on: OnAi = None, json_out: bool = JSON) -> None:
        _emit(getattr(_ops(), fn_name)(_n(rows, "rows"), _n(cols, "cols"), dtype), on,
              json_out)

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
               stride: str = typer.Option("1"), padding: str = typer.Option("0"),
               dilation: str = typer.Option("1", help="spacing of the filter taps "
                                            "(torch's dilation; 1: adjacent)"),
               groups: str = typer.Option("1"), dtype: str = DTYPE,
               on: OnAi = None, json_out: bool = JSON) -> None:
        """2-D convolution, output P = (H + 2·padding - dilation·(R - 1) - 1) / stride + 1
        (rounded down; Q likewise with W and S).

            rooflab ai conv2d --n 8 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 \\
                --padding 1
            rooflab ai conv2d --n 2 --c 16 --h 32 --w 32 --k 32 --padding 2 \\
                --dilation 2 --dtype fp32

        FLOP 2·N·K·P·Q·(C/groups)·R·S (dilation spreads the taps, it adds none); bytes:
        input, filters and output once each (no im2col copy).
        """
        o = _ops()
        _emit(o.conv2d(_n(n, "n"), _n(c, "c"), _n(h, "h"), _n(w, "w"), _n(k, "k"), _n(r, "r"),
                       _n(s, "s"), stride=_n(stride, "stride"), padding=_n(padding, "padding"),
                       dtype=dtype, groups=_n(groups, "groups"),
                       dilation=_n(dilation, "dilation")), on, json_out)


def _tf32_conv_note(op, roof) -> list[str]:
    """An fp32 conv on a roof with a tf32 ceiling (an NVIDIA GPU since Ampere): PyTorch runs
    it on TF32 by default (torch.backends.cudnn.conv.fp32_precision "tf32", the older
    cudnn.allow_tf32 True), so the fp32 vector ceiling is not what holds it (review 17b
    #12; bench/torch_count.tf32_enabled counts traced convs so)."""
    if roof is None or op.precision != "fp32":
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
                  naive: bool = typer.Option(False, help="materialise the score matrix"),
                  causal: bool = typer.Option(False, help="count unmasked scores only "
                                              "(where the mask sits: --causal-align)"),
                  causal_align: str | None = typer.Option(
                      None, "--causal-align", metavar="bottom-right|top-left",
                      help="with --causal and q-len != kv-len: bottom-right (default; query "
                      "i sees keys 0..i + kv-len - q-len: a decode step over a KV cache, "
                      "FlashAttention >= 2.1) or top-left (query i sees keys 0..i: "
                      "PyTorch's is_causal=True)"),
                  dtype: str = DTYPE, on: OnAi = None,
                  json_out: bool = JSON) -> None:
        """Attention (flash by default; --naive writes scores to memory).

            rooflab ai attention --heads 32 --kv-heads 4 --q-len 1 \\
                --kv-len 500 --head-dim 64
            rooflab ai attention --heads 4 --q-len 16 --kv-len 64 --head-dim 64 \\
                --causal --causal-align top-left --dtype fp32

        Flash: Q, K, V read and O written once; --naive also writes and reads back the
        heads x q-len x kv-len score matrix. --causal with q-len != kv-len: the byte model
        says which mask alignment was counted (PyTorch's SDPA is_causal is top-left).
        """
        lq, lkv = _n(q_len, "q_len"), _n(kv_len, "kv_len")
        align = _causal_align(causal_align, causal, lq, lkv)
        op = _ops().attention(_n(batch, "batch"), _n(heads, "heads"), lq, lkv,
                              _n(head_dim, "head_dim"),
                              kv_heads=None if kv_heads is None else _n(kv_heads, "kv_heads"),
                              dtype=dtype, flash=not naive, causal=causal, causal_align=align)
        if causal and lq != lkv:    # how to count the other alignment, in the CLI's words
            other = "top-left" if align == "bottom-right" else "bottom-right"
            op = replace(op, byte_model=f"{op.byte_model} (--causal-align {other})")
        _emit(op, on, json_out)


def _causal_align(text: str | None, causal: bool, q_len: int, kv_len: int) -> str:
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


def _register_embedding(ai: typer.Typer) -> None:
    """`rooflab ai embedding`."""

    @ai.command("embedding", context_settings=POSITIONAL)
    def embedding(tokens: str, hidden: str, dtype: str = DTYPE,
                  on: OnAi = None, json_out: bool = JSON) -> None:
        """Embedding lookup of TOKENS rows of HIDDEN (0 FLOP).

            rooflab ai embedding 8 2048

        Bytes: the looked-up rows and the token ids read, the output written; the rest of
        the table is never touched.
        """
        _emit(_ops().embedding(_n(tokens, "tokens"), _n(hidden, "hidden"), dtype), on,
              json_out)


# --- HPC kernels (review 16a D) --------------------------------------------------------

WRITE_ALLOCATE = typer.Option(False, "--write-allocate", help="add the read of each "
                              "written line a normal store causes (real traffic, what "
                              "hardware counters see; judged against a probed roof's DRAM "
                              "(real traffic) ceiling)")


def _layer_condition(op, on: str | None, roof) -> dict:
    """The stencil's layer condition: the bytes of its 2r + 1 neighbouring planes and, when
    the roof's machine gives cache sizes, whether they fit each level."""
    out = {"bytes": op.shape["layer_condition_bytes"], "fits": {}}
    if roof is None:
        return out
    from ..model.analysis import analyze
    from ..report.markdown import machine_for
    from .inputs import _profile_of

    machine = machine_for(analyze(roof, [op.kernel()]), _profile_of(on))
    out["fits"] = {lv: out["bytes"] <= size for lv, size in sorted(machine.caches.items())}
    out["cache_bytes"] = dict(sorted(machine.caches.items()))
    return out


def _add_layer_condition(d: dict, op, on: str | None, roof) -> None:
    """layer_condition in the answer, and with --on a note saying where the planes fit."""
    from ..units import si

    lc = d["layer_condition"] = _layer_condition(op, on, roof)
    if roof is None:
        return
    planes = (f"the layer condition's {2 * op.shape['radius'] + 1} planes "
              f"({si(lc['bytes'], 'B')} = {_binary(lc['bytes'])})")
    if not lc["fits"]:
        d["notes"].append(f"{planes} must stay in cache; {roof.name} gives no cache sizes: "
                          f"compare them with its L2/L3")
        return
    where = ", ".join(f"{'fit' if ok else 'do not fit'} {lv} ({_binary(lc['cache_bytes'][lv])})"
                      for lv, ok in lc["fits"].items())
    reads = 2 * op.shape["radius"] + 1
    d["notes"].append(f"{planes} {where}; where they fit in no cache, each point comes from "
                      f"DRAM up to {reads} times a sweep, not once: block the grid until "
                      f"they fit (threads on their own blocks each need theirs in a shared "
                      f"cache)")


def _binary(nbytes: float) -> str:
    """Cache sizes as datasheets give them: 1048576 -> '1 MiB'."""
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _register_stencil(ai: typer.Typer) -> None:
    """`rooflab ai stencil`."""

    @ai.command("stencil", context_settings=POSITIONAL)
    def stencil(grid: str = typer.Argument(..., help="grid sizes, outermost first: "
                                           "256x256x256, 4096x4096 or 1e6"),
                points: str = typer.Option(..., "--points", help="points of the stencil "
                                           "(7: the 3-D star of radius 1)"),
                dtype: str = DTYPE64,
                sweeps: str = typer.Option("1", "--sweeps", help="sweeps over the grid "
                                           "(time steps or iterations)"),
                write_allocate: bool = WRITE_ALLOCATE,
                flop_per_point: float | None = typer.Option(
                    None, "--flop-per-point", help="FLOP per updated point (default: "
                    "points - 1 adds + 2 muls, 8 for 7 points)"),
                box: bool = typer.Option(False, "--box", help="a box stencil, (2r+1)^dims "
                                         "points (27 in 3-D), not a star"),
                on: OnAi = None, json_out: bool = JSON) -> None:
        """A symmetric stencil sweep (Jacobi: reads u, writes a second array).

            rooflab ai stencil 256x256x256 --points 7 --dtype fp64 --sweeps 20
            rooflab ai stencil 256x256x256 --points 7 --dtype fp64 --write-allocate
            rooflab ai stencil 4096x4096 --points 9 --box --dtype fp32 --on me.json

        Updated points: the interior, (N - 2r) per dimension, times --sweeps. FLOP per
        point: points - 1 adds + 2 muls (u' = a·centre + b·Σ neighbours; 7 points: 8), or
        --flop-per-point. DRAM bytes: one read and one write per point (16 B in fp64),
        + 8 B with --write-allocate (24 B), assuming the layer condition: the 2r + 1
        neighbouring planes stay in cache (with --on, the text says where they fit).
        With --write-allocate the bytes are real traffic: the JSON kernel's meta says so
        (byte_count), and a probed CPU roof judges them against its DRAM (real traffic)
        ceiling, as it does perf's counts of the same loop. Default dtype fp64 (HPC's
        precision; the ML ops default to fp16).
        """
        if flop_per_point is not None and not (math.isfinite(flop_per_point)
                                               and flop_per_point >= 0):
            raise InputError(f"--flop-per-point must be a finite number >= 0 (8 for a "
                             f"7-point Jacobi); got {flop_per_point!r}")
        # 3: the fewest points of a symmetric stencil (1-D, radius 1)
        _emit(_ops().stencil(_grid_arg(grid), _n(points, "--points", minimum=3), dtype,
                             sweeps=_n(sweeps, "--sweeps", minimum=1),
                             write_allocate=write_allocate,
                             flop_per_point=flop_per_point, box=box), on, json_out)


def _grid_arg(text: str) -> tuple[int, ...]:
    """GRID as typed: sizes joined by x (256x256x256, 1e3x1e3)."""
    parts = str(text).lower().replace("×", "x").split("x")
    if not 1 <= len(parts) <= 3:
        raise InputError(f"GRID must be 1 to 3 sizes joined by x, outermost first, such as "
                         f"256x256x256 or 4096x4096; got '{text}'")
    return tuple(_n(p.strip(), "each GRID size") for p in parts)


def _register_spmv(ai: typer.Typer) -> None:
    """`rooflab ai spmv`."""

    @ai.command("spmv", context_settings=POSITIONAL)
    def spmv(rows: str = typer.Argument(..., help="rows of the square matrix (= length "
                                        "of x and y)"),
             nnz: str = typer.Argument(..., help="nonzeros of the matrix"),
             dtype: str = DTYPE64,
             index_bytes: str = typer.Option("4", "--index-bytes", help="bytes per "
                                             "column index and row pointer (4: int32, 8: "
                                             "int64)"),
             rhs: str = typer.Option("1", "--rhs", help="right-hand sides per matrix read "
                                     "(SpMM, block Krylov)"),
             x_reuse: str = typer.Option("perfect", "--x-reuse", help="perfect: x read "
                                         "once (it stays in cache); none: one x element "
                                         "per nonzero"),
             on: OnAi = None, json_out: bool = JSON) -> None:
        """y = A·x, A in CSR (compressed sparse row).

            rooflab ai spmv 2e6 54e6 --dtype fp64
            rooflab ai spmv 2e6 54e6 --dtype fp64 --rhs 8
            rooflab ai spmv 2e6 54e6 --dtype fp64 --x-reuse none --on me.json

        FLOP 2·nnz·rhs. Bytes: values nnz·s + column indices nnz·i + row pointers
        (rows + 1)·i, read once for all --rhs vectors; per vector x (rows·s, or nnz·s
        with --x-reuse none) and y written (rows·s). The JSON kernel's meta carries
        read_only_bytes (the matrix) and index_bytes, so the advice treats the matrix as
        read-only. Almost nothing is stored (y), so the count is real traffic: a probed CPU
        roof judges it against its DRAM (real traffic) ceiling. Default dtype fp64 (HPC's
        precision; the ML ops default to fp16).
        """
        reuse = x_reuse.strip().lower()
        if reuse not in _ops().SPMV_X_REUSE:
            raise InputError(f"--x-reuse must be perfect (x stays in cache) or none (one x "
                             f"element per nonzero); got '{x_reuse}'")
        _emit(_ops().spmv(_n(rows, "rows"), _n(nnz, "nnz"), dtype,
                          index_bytes=_n(index_bytes, "--index-bytes", minimum=1),
                          rhs=_n(rhs, "--rhs", minimum=1),
                          x_reuse=reuse), on, json_out)


def _register_dot(ai: typer.Typer) -> None:
    """`rooflab ai dot`."""

    @ai.command("dot", context_settings=POSITIONAL)
    def dot(n: str, dtype: str = DTYPE64, on: OnAi = None, json_out: bool = JSON) -> None:
        """s = x·y over n elements (BLAS dot).

            rooflab ai dot 1e8 --dtype fp64

        FLOP 2n (one FMA per element); bytes: x and y read once, 2n·s (16 B per element
        in fp64, AI 1/8); no stores, so write-allocate does not arise and the count is
        real traffic (a probed CPU roof's DRAM (real traffic) ceiling judges it). Default
        dtype fp64 (HPC's precision; the ML ops default to fp16).
        """
        _emit(_ops().dot(_n(n, "n"), dtype), on, json_out)


def _register_axpy(ai: typer.Typer) -> None:
    """`rooflab ai axpy`."""

    @ai.command("axpy", context_settings=POSITIONAL)
    def axpy(n: str, dtype: str = DTYPE64, write_allocate: bool = WRITE_ALLOCATE,
             out_of_place: bool = typer.Option(False, "--out-of-place", help="z = a·x + y "
                                               "into a third array (STREAM's triad)"),
             on: OnAi = None, json_out: bool = JSON) -> None:
        """y = a·x + y over n elements (BLAS axpy).

            rooflab ai axpy 1e8 --dtype fp64
            rooflab ai axpy 1e8 --dtype fp64 --out-of-place --write-allocate

        FLOP 2n; bytes 3n·s (x and y read, y written: 24 B per element in fp64, AI
        1/12). In place the store hits the line just read for y, so --write-allocate adds
        nothing and the count is real traffic; with --out-of-place it adds the read of z:
        4n·s (32 B). Real-traffic counts are judged against a probed CPU roof's DRAM (real
        traffic) ceiling (meta byte_count). Default dtype fp64 (HPC's precision; the ML
        ops default to fp16).
        """
        _emit(_ops().axpy(_n(n, "n"), dtype, write_allocate=write_allocate,
                          out_of_place=out_of_place), on, json_out)
