"""The answer of `rooflab ai OP`: result_dict (the JSON) and format_result (its text), split
out of cli/ai.py (which uses both). Kept light: no matplotlib, torch or numba here.
"""

from __future__ import annotations

import math

# fp4 is its own precision (Blackwell's fp4 tensor ceiling: B200 9 PFLOP/s dense, 2x fp8); a
# roof without one holds it to fp8 and Roof.compute_for's note says so. What the count
# leaves out is said here: the op's bytes are e2m1's 0.5 B per element, and the block
# scales NVFP4 and MXFP4 carry with them are not counted (review 12d F had the ceiling).
FP4_SCALES = ("fp4 bytes at 0.5 B per element, block scales not counted: NVFP4 adds an "
              "e4m3 scale per 16 elements (+0.0625 B, +12.5 %), MXFP4 an e8m0 scale per 32 "
              "(+0.03125 B, +6.25 %) on the fp4 operands")


def fp4_note() -> str:
    return FP4_SCALES


NO_FLOP = "no FLOP: memory and launch only"


def result_dict(op, roof=None, nominal=None) -> dict:
    """The JSON answer: top-level flop/bytes/ai, the kernel, and the roof's verdict.
    nominal: the datasheet roof of a profile whose measured roof is `roof`, for the
    ridge-band note `rooflab report` gives (review 12a #7). A stencil's sweeps are one
    call each (a launch, or a parallel region, per sweep): the launch floor counts them."""
    from ..model.analysis import analyze, memory_ceiling
    from ..model.held_unit import held_unit
    from ..model.roof_schema import roof_to_dict
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict, point_to_dict

    _check_counts(op)
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
        # always a list, as with --on (docs/json.md: `notes` of an ai document)
        out["notes"] = [fp4_note()] if fp4 else []
        return out
    for level in kernel.bytes:
        roof.bandwidth(level)    # InputError naming the levels the roof has
    analysis = analyze(roof, [kernel])
    (p,) = analysis.points
    # The ceiling actually used: a fallback (int4 on a roof without int4 math) is
    # another precision than the op's, and the text must name that one.
    ceiling, _ = roof.compute_for(kernel.precision, held_unit(roof, kernel))
    notes = ([fp4_note()] if fp4 else []) + list(analysis.notes)
    from ..model.dies import die_words

    # --on MI250X: one die judges; said as report says it (s36 F)
    notes += [w for w in (die_words(roof),) if w]
    if nominal is not None:
        notes += _ridge_band(analysis, roof, nominal)
    # the memory ceiling that judged the bytes: DRAM (real traffic) for real-traffic counts
    # on a probed CPU roof (analysis.memory_ceiling), else the level's own
    judged, _ = memory_ceiling(roof, kernel, p.level)
    # an op without FLOP (embedding, a 1-element sum) has no compute side: no ceiling and
    # no ridge apply, as the text says (review s19 r1 F3: the JSON gave fp16 tensor's)
    flops = p.flop > 0
    out.update({"roof": roof_to_dict(roof), "analysis": [point_to_dict(p)],
                "memory_ceiling": judged.level if judged is not None else p.level,
                "compute_ceiling": ceiling.label if flops else None,
                "compute_ceiling_precision": ceiling.precision if flops else None,
                "attainable_flop_per_s": p.attainable_flop_per_s, "bound": p.bound,
                "binding": p.binding, "ridge": p.ridge if flops else None,
                **_floors(p, roof), "notes": notes})
    return out


def _check_counts(op) -> None:
    """Sizes whose FLOP or bytes pass the range a Kernel takes (model/kernel.COUNT_RANGE,
    at most 1e30) are an error about the sizes: the Kernel's own message blamed the unit
    ("SI base units: FLOP, not GFLOP") of a count the user never typed (review s33 D)."""
    from ..errors import InputError
    from ..model.kernel import COUNT_RANGE
    from .ai_sizes import check_elements

    per = {"elementwise": " and --flop-per-element",
           "stencil": " and --flop-per-point"}.get(op.op, "")
    for what, unit in (("flop", "FLOP"), ("bytes", "bytes")):
        v = getattr(op, what)
        if not v <= COUNT_RANGE[1]:      # inf and nan too
            raise InputError(f"{op.op}: these sizes give {v:.3g} {unit}, more than the "
                             f"{COUNT_RANGE[1]:g} rooflab takes; no real op is that large: "
                             f"check the sizes (elements, such as 4096 or 1e6){per}")
    check_elements(op)      # counts within range, and yet a tensor no tensor can be


def _floors(p, roof) -> dict:
    """The time floor as the bound judged it: max(work floor, calls x the roof's launch
    floor), each part named (review 12a #8, 12d E: "overhead" next to a 155 ns floor)."""
    work, launch = p.floor_s, p.overhead_floor_s
    launch_binds = launch is not None and launch > work
    floor = launch if launch_binds else work
    # with_launches_s: the name every document gives max(work, launch) (docs/json.md
    # "Floor keys", review r1_json F1); time_floor_s stays for the scripts that read it
    return {"time_floor_s": floor, "with_launches_s": floor, "work_floor_s": work,
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
    from ..report.read_with_care import ridge_band_warnings

    if not analysis.points or analysis.points[0].flop <= 0:
        return []
    profile = MachineProfile(host={}, nominal=nominal, measured=roof)
    return [f"near ridge: {w}" for w in
            ridge_band_warnings(diagnose(analysis), profile, analysis.kernels)]


def format_result(d: dict) -> list[str]:
    """The answer as lines of text (only the CLI prints them)."""
    from ..units import fmt_ai, fmt_rate, fmt_times, si

    unit = f", {d['unit']}" if d["unit"] else ""
    shown = d["precision"]
    split = ", ".join(f"{k} {si(v, 'B')}" for k, v in d["bytes_split"].items())
    lines = [f"{d['name']}  ({d['op']}, {shown}{unit})"]
    if d["shape"].get("dtype_source") == "default":    # said once: no --dtype was given
        lines.append(f"  dtype       {d['shape']['dtype_note'].removeprefix('dtype ')}")
    # integer work on an integer ceiling is OP, as the ceiling prints it (review s19 r1 F4);
    # int8 held to fp16 math stays FLOP, that ceiling's unit
    op_word = _work_word(d)
    lines += [f"  {op_word:<12}{si(d['flop'], op_word)}  ({d['flop']:.6g})",
              f"  bytes       {si(d['bytes'], 'B')}  ({d['bytes']:.6g}; {split})",
              f"  byte model  {d['byte_model']}",
              f"  AI          {fmt_ai(d['ai'])} {op_word}/byte" + (
                  f"  ({d['ai']:.6g})" if d["ai"] is not None else "")]
    if "compulsory_ai" in d:     # ai matmul --tile: the bound the tiles fall short of
        lines.append(f"  compulsory  AI {fmt_ai(d['compulsory_ai'])} {op_word}/byte, "
                     f"{si(d['compulsory_bytes'], 'B')} (each operand moved once; the "
                     f"tiles move {fmt_times(d['bytes'] / d['compulsory_bytes'])} that)")
    if "tile_quantization" in d:   # --tile: edge tiles, waves, shared memory (ai_tile.py)
        from .ai_tile import tile_lines

        lines += tile_lines(d["tile_quantization"])
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
                  f"  ridge       {fmt_ai(d['ridge'])} {op_word}/byte",
                  f"  attainable  {fmt_rate(d['attainable_flop_per_s'], prec)}"
                  + _with_launch_rate(d, prec)]
        if "tile_quantization" in d:
            from .ai_tile import quantized_line

            lines += quantized_line(d["tile_quantization"], prec)
    else:
        lines += [f"  ceilings    {memory} ({NO_FLOP}; no compute ceiling or ridge applies)"]
    lines += [f"  bound       {_bound_text(d, p)}", f"  time floor  {_floor_text(d)}"]
    lines += [f"  note: {n}" for n in d["notes"]]
    return lines


def _work_word(d: dict) -> str:
    """OP for integer work held to an integer ceiling (or, without a roof, integer work),
    else FLOP: the ridge and AI in the unit of the ceiling's rate (int8 tensor POP/s)."""
    from ..units import is_float

    prec = d.get("compute_ceiling_precision") or d["precision"]
    return "FLOP" if is_float(prec) or is_float(d["precision"]) else "OP"


def _with_launch_rate(d: dict, prec: str) -> str:
    """Where the launch binds, the rate it leaves: FLOP / time floor (0.82 TFLOP/s for a
    decode attention on an H100, not the 26.4 of the roof alone)."""
    from ..units import fmt_rate

    if d["floor_binding"] != "launch":
        return ""
    return (f" on the roof; {fmt_rate(d['flop'] / d['time_floor_s'], prec)} with the "
            f"launch ({_work_word(d)} / time floor)")


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
    quantized = _quantized_floor(d)
    if d["floor_binding"] == "launch":
        return (f"{fmt_seconds(d['time_floor_s'])} (launch); work floor "
                f"{fmt_seconds(d['work_floor_s'])}  {work}{quantized}")
    tail = ""
    if d.get("launch_floor_s") is not None:
        below = "both" if quantized else "it"
        tail = f"; {_launches(d)} is below {below}"
    return f"{fmt_seconds(d['time_floor_s'])}  {work}{quantized}{tail}"


def _quantized_floor(d: dict) -> str:
    """`ai matmul --tile --on`: the work floor again at the quantized compute ceiling
    (cli/ai_tile.py), so the time says what the tiles and waves cost, not only the rate."""
    from ..units import fmt_seconds

    t = d.get("tile_quantization") or {}
    if "quantized_work_floor_s" not in t:
        return ""
    q = fmt_seconds(t["quantized_work_floor_s"])
    if t["quantized_binding"] == "memory":
        return "; the same at the quantized ceiling (the memory roof still binds), derived"
    launch = d.get("launch_floor_s")
    over = (", above the launch floor" if d["floor_binding"] == "launch"
            and t["quantized_work_floor_s"] > launch else "")
    return f"; {q} at the quantized ceiling: max(FLOP/P_q, bytes/B), derived{over}"


def _compute_label(p: dict) -> str:
    return f"{p['precision']} {p['unit']}" if p["unit"] else p["precision"]
