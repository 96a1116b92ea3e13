"""A perf stat run's FLOP by precision: Intel's per-precision fp_arith_inst_retired.* events
(and Sapphire Rapids' fp16 fp_arith_inst_retired2.*), the combined ones (.scalar, .4_flops,
.8_flops) that count two precisions at one FLOP weight, and AMD's one event that counts
every precision."""

from __future__ import annotations

from .flop_events import PERF_AMD_FLOPS as AMD_FLOPS
from .flop_events import every_precision_note, fp_arith
from .perf_dram import is_amd, is_intel
from .perf_lines import Counts

_F = "fp_arith_inst_retired."
# Intel's combined FP events (Broadwell on; Ice Lake-SP's and Sapphire Rapids' perf metrics
# use them): each counts the instructions of two per-precision events that move the same
# FLOP per instruction (intel/perfmon, FP_ARITH_INST_RETIRED.4_FLOPS: "128-bit packed
# single and 256-bit packed double ... Each count represents 2 or/and 4 computation
# operations"; .8_FLOPS: "256-bit packed single precision and 512-bit packed double";
# .SCALAR: "scalar single precision and double precision", 1 each; an FMA counts twice, as
# in the per-precision events). {event: (FLOP per count, (its fp64 part, its fp32 part))}
COMBINED = {
    f"{_F}scalar": (1.0, (f"{_F}scalar_double", f"{_F}scalar_single")),
    f"{_F}4_flops": (4.0, (f"{_F}256b_packed_double", f"{_F}128b_packed_single")),
    f"{_F}8_flops": (8.0, (f"{_F}512b_packed_double", f"{_F}256b_packed_single")),
}


# Sapphire Rapids' half-precision events (AVX512-FP16), per width as in flop_events'
# LIKWID_FP16, and two combined ones: .scalar (regular + complex scalar half, read for the
# part the file lacks) and .vector (packed half of every width, 8 to 32 FLOP a count: its
# FLOP are not known, so it is not read).
_F2 = "fp_arith_inst_retired2."
_FP16_SCALAR = f"{_F2}scalar"   # flop_events.FP16_SCALAR in perf's spelling
_FP16_SCALAR_PARTS = (f"{_F2}scalar_half", f"{_F2}complex_scalar_half")
_FP16_PACKED = tuple(f"{_F2}{w}b_packed_half" for w in (128, 256, 512))


def is_flop_event(event: str) -> bool:
    """Whether rooflab reads FLOP from this event."""
    return (event in (AMD_FLOPS, _FP16_SCALAR) or event in COMBINED
            or fp_arith(event) is not None)


def perf_flop(counts: Counts, precision: str | None, has_bytes: bool,
              notes: list[str]) -> dict[str, float]:
    """FLOP by precision: Intel's events say each one's, except where a combined event's
    parts are not in the file; AMD's one event counts every precision and is read as
    `precision` (fp64 when the user did not say)."""
    flop: dict[str, float] = {}
    for event, value in counts.values.items():
        hit = fp_arith(event)
        if hit:
            kind, weight = hit
            flop[kind] = flop.get(kind, 0.0) + weight * value
    combined: list[str] = []
    assumed = _combined(counts, precision, flop, combined)
    _fp16_combined(counts, flop, combined)
    if flop:
        notes.append("FLOP from fp_arith_inst_retired.* weighted by vector width (an FMA "
                     "counted twice by the hardware)")
        notes += combined
        if precision and not assumed:
            notes.append(f"--precision {precision} not applied: fp_arith_inst_retired.* say "
                         f"each FLOP's precision")
    elif AMD_FLOPS in counts.values:
        flop[precision or "fp64"] = counts.values[AMD_FLOPS]
        notes.append(every_precision_note(
            AMD_FLOPS, precision, "fp64 (code that computes in fp32: give --precision fp32)"))
    else:
        event = (AMD_FLOPS if is_amd(counts) else "fp_arith_inst_retired.*" if is_intel(counts)
                 else f"fp_arith_inst_retired.* on Intel, {AMD_FLOPS} on AMD")
        notes.append(f"no FP event ({event}): no FLOP counted"
                     + (", a bytes-only point" if has_bytes else ""))
    return flop


def _combined(counts: Counts, precision: str | None, flop: dict[str, float],
              notes: list[str]) -> bool:
    """Adds the combined events' FLOP to `flop`, less what their per-precision parts in the
    file count already (read above): both parts there, nothing left; one there, the rest
    is the other part's, whose precision is known; none, the precision is not known and
    `precision` (fp64 when None) is used. Returns whether a precision was assumed."""
    assumed: list[tuple[str, str, float]] = []      # (event, what it counts, FLOP each)
    for event, (weight, parts) in COMBINED.items():
        if event not in counts.values:
            continue
        have = [p for p in parts if p in counts.values]
        if len(have) == len(parts):
            notes.append(f"{event} left out: {' and '.join(parts)} in the file count its "
                         f"instructions already")
            continue
        # multiplexed counts may make the parts add up to a little more than the whole
        rest = max(counts.values[event] - sum(counts.values[p] for p in have), 0.0)
        if have:
            (other,) = [p for p in parts if p not in have]
            kind = fp_arith(other)[0]
            notes.append(f"{event} less {have[0]} read as {other} ({weight:g} FLOP each)")
        else:
            kind = precision or "fp64"
            assumed.append((event.removeprefix(_F), " or ".join(p.removeprefix(_F)
                                                                for p in parts), weight))
        flop[kind] = flop.get(kind, 0.0) + weight * rest
    if assumed:
        what = "; ".join(f"{e}: {parts}, {w:g} FLOP each" for e, parts, w in assumed)
        notes.append(f"{_F}{{{', '.join(e for e, _, _ in assumed)}}} count fp64 and fp32 "
                     f"instructions together ({what}): read as "
                     + (f"{precision} (--precision {precision})" if precision else
                        "fp64 (code that computes in fp32: give --precision fp32)")
                     + "; the _double/_single events would say each FLOP's precision")
    return bool(assumed)


def _fp16_combined(counts: Counts, flop: dict[str, float], notes: list[str]) -> None:
    """Adds .scalar's fp16 FLOP less what its parts in the file count already (the part
    missing at its own weight; neither there, 1 FLOP each as likwid's FLOPS_HP reads it),
    and says that .vector is not read."""
    if _FP16_SCALAR in counts.values:
        have = [p for p in _FP16_SCALAR_PARTS if p in counts.values]
        rest = max(counts.values[_FP16_SCALAR] - sum(counts.values[p] for p in have), 0.0)
        weight = 1.0
        if len(have) == 2:
            notes.append(f"{_FP16_SCALAR} left out: {' and '.join(have)} in the file count "
                         f"its instructions already")
            weight = 0.0
        elif have:
            (other,) = [p for p in _FP16_SCALAR_PARTS if p not in have]
            weight = fp_arith(other)[1]
            notes.append(f"{_FP16_SCALAR} less {have[0]} read as {other} ({weight:g} FLOP "
                         f"each)")
        else:
            notes.append(f"{_FP16_SCALAR} (regular and complex scalar half) read at 1 FLOP "
                         f"each, as likwid's FLOPS_HP reads it: a complex one does 2 (add "
                         f"{_FP16_SCALAR_PARTS[1]} to count them apart)")
        if weight:
            flop["fp16"] = flop.get("fp16", 0.0) + weight * rest
    if f"{_F2}vector" in counts.values and not any(p in counts.values for p in _FP16_PACKED):
        notes.append(f"{_F2}vector not read: it counts packed half instructions of every "
                     f"width (8 to 32 FLOP each); count {', '.join(_FP16_PACKED)} instead")
