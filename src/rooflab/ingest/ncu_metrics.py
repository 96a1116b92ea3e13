"""Nsight Compute metrics -> FLOP per precision, bytes per level, seconds, recorded peaks.

Pure functions over one launch's metrics ({metric name: value in SI units}). The formulas
are those of NVIDIA's SpeedOfLight roofline section files and the NERSC roofline scripts
(see ../shared/design/FACTS.md, "Nsight Compute metrics"):

    fp64   = dadd + dmul + 2 x dfma
    fp32   = fadd + fmul + 2 x ffma
    fp16   = 2 x hadd + 2 x hmul + 4 x hfma    (NVIDIA's section: HADD2/HMUL2/HFMA2 are
                                                packed half2, two lanes per thread; the NERSC
                                                scripts count half of this)
    tensor = sum of sm__ops_path_tensor_*.sum  (newer section files), else
             sm__inst_executed_pipe_tensor.sum x a per-architecture factor (TENSOR_FACTOR)

where dadd = sm__sass_thread_inst_executed_op_dadd_pred_on.sum (or the smsp__ spelling).
Bytes: DRAM dram__bytes.sum (or read + write), L2 lts__t_bytes.sum, L1 l1tex__t_bytes.sum.
Time: gpu__time_duration.sum, else sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second.
Peaks: <metric>.peak_sustained x <unit>__cycles_elapsed.avg.per_second; a precision with no
peak of its own gets one from device__attribute_single_to_double_precision_perf_ratio x the
other's (derived_peaks).

The FLOP counts are in ingest/ncu_flop.py, the launch's occupancy and pipes in
ingest/ncu_launch.py, numbers and units in ingest/ncu_numbers.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .ncu_flop import (
    _INST,
    _INST_PLAN,
    _TENSOR_PRECISION,
    _TENSOR_UNCOUNTED,
    FP_OPS,
    FP_WEIGHTS,
    _tensor_key,
    flop_counts,
    fma_instructions,
)
from .ncu_launch import _PIPE, LAUNCH_USED
from .ncu_numbers import _get

# --- which metrics rooflab uses ------------------------------------------------------
# (the FLOP metrics' names are in ncu_flop.py, the launch details' in ncu_launch.py)

DRAM = ("dram__bytes.sum",)
DRAM_RW = ("dram__bytes_read.sum", "dram__bytes_write.sum")
# Level -> metrics in order of preference. The derived__* ones are what full-set reports
# (HierarchicalRooflineChart sections) hold: L2->crossbar and L1 writeback bytes.
LEVEL_METRICS = {
    "L2": ("lts__t_bytes.sum", "derived__lts__lts2xbar_bytes.sum"),
    "L1": ("l1tex__t_bytes.sum", "derived__l1tex__lsu_writeback_bytes_mem_lg.sum"),
}
# Sector counts, the nvprof-era spelling (NVIDIA's nvprof-to-ncu table maps
# dram_read_transactions to dram__sectors_read.sum, l2_transactions to lts__t_sectors.sum):
# a sector is an aligned 32-byte chunk (Nsight Compute Kernel Profiling Guide, "Memory").
# Used only when the byte metrics of a level are absent; not for peaks (those are bytes).
SECTOR_BYTES = 32.0
SECTORS = {"DRAM": (("dram__sectors.sum",), ("dram__sectors_read.sum", "dram__sectors_write.sum")),
           "L2": (("lts__t_sectors.sum",),), "L1": (("l1tex__t_sectors.sum",),)}
TIME = "gpu__time_duration.sum"
CYCLES, CLOCK = "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"
NO_TIME_NOTE = (f"no time metric collected: placed by FLOP and bytes only (AI); "
                f"add {TIME} to --metrics for the achieved FLOP/s")

USED = re.compile(
    r"^(?:(?:sm|smsp)__sass_thread_inst_executed_op_[dfh](?:add|mul|fma)_pred_on\.sum"
    r"|sm__ops_path_tensor_\w+\.sum|sm__inst_executed_pipe_tensor\.sum"
    r"|dram__bytes(?:_read|_write)?\.sum|lts__t_bytes\.sum|l1tex__t_bytes\.sum"
    r"|dram__sectors(?:_read|_write)?\.sum|lts__t_sectors\.sum|l1tex__t_sectors\.sum"
    r"|derived__lts__lts2xbar_bytes\.sum|derived__l1tex__lsu_writeback_bytes_mem_lg\.sum"
    r"|gpu__time_duration\.sum|\w+__cycles_elapsed\.avg(?:\.per_second)?)"
    r"(?:\.peak_sustained|\.per_cycle_elapsed|\.per_second)?$")
DEVICE_NAME = "device__attribute_display_name"
CC_MAJOR = "device__attribute_compute_capability_major"
CC_MINOR = "device__attribute_compute_capability_minor"
# fp32 / fp64 throughput of the device (64 on the RTX 4060 Laptop GPU, 2 on an A100): full-set
# reports hold it, but their roofline section collects the fp64 FMA peak only
FP_RATIO = "device__attribute_single_to_double_precision_perf_ratio"


def is_used(metric: str) -> bool:
    """Whether rooflab reads this metric (everything else is ignored)."""
    return (metric == FP_RATIO or USED.match(metric) is not None
            or LAUNCH_USED.match(metric) is not None
            or _PIPE.match(metric) is not None)


# --- one launch ----------------------------------------------------------------------

@dataclass(frozen=True)
class Counts:
    """What one launch did: FLOP by precision, bytes by level, seconds, how they were got."""

    flop: Mapping[str, float]
    bytes: Mapping[str, float]
    seconds: float | None
    notes: tuple[str, ...] = ()
    problem: str = ""            # non-empty: this launch cannot be placed (and why)
    tensor_flop: float = 0.0     # the part of `flop` done on tensor cores
    # {precision: (add + mul, fma) instructions}: summed over a kernel's launches into its
    # meta fma_share, the no-FMA ceiling of its mix (model/fma_ceiling.py)
    fma: Mapping[str, tuple[float, float]] = field(default_factory=dict)


def byte_counts(m: Mapping[str, float]) -> tuple[dict[str, float], list[str]]:
    """Bytes by level (DRAM, L2, L1) and notes on which metric gave them."""
    out: dict[str, float] = {}
    notes: list[str] = []
    get = m.get
    dram = get(DRAM[0])
    if dram is None or dram != dram:
        r, w = (_get(m, n) for n in DRAM_RW)
        dram = (r or 0.0) + (w or 0.0) if r is not None or w is not None else None
        if (r is None) != (w is None):
            # one direction alone is what the file holds: say so, as a partial FLOP count
            # is said (review 12b K: a read-only DRAM read as the kernel's whole traffic)
            have, lack = DRAM_RW if w is None else DRAM_RW[::-1]
            notes.append(f"DRAM = {'reads' if w is None else 'writes'} only: {have} "
                         f"without {lack} (add it to --metrics, or DRAM bytes may read low)")
    if dram is not None:
        out["DRAM"] = dram
    for level, names in LEVEL_METRICS.items():
        for name in names:
            v = get(name)
            if v is not None and v == v:
                out[level] = v
                if name is not names[0]:
                    notes.append(f"{level} bytes from {name}")
                break
    for level, spellings in SECTORS.items():
        if level in out:
            continue
        for names in spellings:
            values = [_get(m, n) for n in names]
            if any(v is not None for v in values):
                out[level] = SECTOR_BYTES * sum(v or 0.0 for v in values)
                counted = names[0] if len(names) == 1 else f"({' + '.join(names)})"
                notes.append(f"{level} bytes = 32 x {counted} (32-byte sectors)")
                break
    notes += _not_a_number_notes(m, out)
    return out, notes


def _not_a_number_notes(m: Mapping[str, float], out: Mapping[str, float]) -> list[str]:
    """A level with no bytes whose metrics are in the launch but not numbers (ncu writes
    `n/a`): it gets no point, and the note says why rather than drop it in silence."""
    notes = []
    for level in ("DRAM", "L2", "L1"):
        if level in out:
            continue
        names = ((DRAM + DRAM_RW) if level == "DRAM" else LEVEL_METRICS[level]) + tuple(
            n for spelling in SECTORS[level] for n in spelling)
        nan = [n for n in names if n in m and m[n] != m[n]]
        if nan:
            notes.append(f"{', '.join(nan)} {'is' if len(nan) == 1 else 'are'} not a number "
                         f"(n/a) in the file: no {level} point")
    return notes


def seconds_of(m: Mapping[str, float]) -> float | None:
    """gpu__time_duration.sum, else sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second."""
    t = _get(m, TIME)
    if t is not None:
        return t
    cycles, clock = _get(m, CYCLES), _get(m, CLOCK)
    if cycles is not None and clock:
        return cycles / clock
    return None


def rates_to_totals(m: Mapping[str, float]) -> dict[str, float]:
    """Fill in totals from the rates full-set reports hold instead (`.per_cycle_elapsed`,
    `.per_second`): total = rate x <unit>__cycles_elapsed.avg.per_second x seconds, or
    rate x seconds. Existing totals are kept as they are."""
    out = dict(m)
    seconds = seconds_of(m)
    if not seconds:
        return out
    for name, value in m.items():
        if value != value:
            continue
        if name.endswith(".per_cycle_elapsed"):
            base = name[: -len(".per_cycle_elapsed")]
            unit = base.split("__", 1)[0]
            clock = _get(m, f"{unit}__cycles_elapsed.avg.per_second")
            if clock and base not in out:
                out[base] = value * clock * seconds
        elif name.endswith(".per_second") and not name.endswith("cycles_elapsed.avg.per_second"):
            base = name[: -len(".per_second")]
            if base not in out:
                out[base] = value * seconds
    return out


def launch_counts(m: Mapping[str, float], cc: tuple[int, int] | None = None) -> Counts:
    """Everything rooflab needs from one launch, or a `problem` saying why it is unusable."""
    seconds = seconds_of(m)
    flop, fnotes, fbad, tensor, collected = flop_counts(m, cc)
    nbytes, bnotes = byte_counts(m)
    notes = tuple(fnotes + bnotes)
    # (a device attribute is a number even for a failed launch: not one of its metrics)
    measured = [v for name, v in m.items() if name != FP_RATIO]
    if measured and all(v != v for v in measured):
        return Counts({}, {}, None, notes, "every metric is nan (a failed launch)")
    if seconds is None:
        if TIME not in m and CYCLES not in m and nbytes and collected and not fbad:
            # Seed 000 §4.1's own command collects FLOP and DRAM bytes only: that places
            # the kernel by AI (at its attainable height), with no achieved point.
            return Counts(flop, nbytes, None, notes + (NO_TIME_NOTE,),
                          fma=fma_pairs(m, flop, tensor))
        return Counts(flop, nbytes, None, notes,
                      f"no time: needs {TIME} or {CYCLES} with {CLOCK} (missing or nan)")
    if seconds <= 0:
        return Counts(flop, nbytes, None, notes, "zero time")
    if not nbytes:
        nan = [n for n in bnotes if " not a number (n/a) in the file" in n]
        return Counts(flop, nbytes, seconds, notes,
                      "no bytes: " + ("; ".join(nan) if nan else "needs dram__bytes.sum, "
                                      "lts__t_bytes.sum or l1tex__t_bytes.sum"))
    if not flop and fbad:
        return Counts(flop, nbytes, seconds, notes,
                      f"FLOP metrics are nan ({', '.join(fbad)})")
    if not collected:
        return Counts(flop, nbytes, seconds, notes,
                      "no FLOP metrics: collect sm__sass_thread_inst_executed_op_*_pred_on.sum")
    return Counts(flop, nbytes, seconds, notes, tensor_flop=tensor,
                  fma=fma_pairs(m, flop, tensor))


def fma_pairs(m: Mapping[str, float], flop: Mapping[str, float], tensor: float
              ) -> dict[str, tuple[float, float]]:
    """ncu_flop.fma_instructions(m), from flop_counts' FLOP and the fma counts alone where
    no tensor FLOP are in them: FLOP = w x (add + mul) + 2w x fma (w = 1, fp16's packed 2),
    so add + mul = (FLOP - 2w x fma) / w, exact for integer counts. Once per launch: the
    9 gets and lists of fma_instructions took launch_counts from 1.8 to 2.5-3.0 s per
    100,000 launches (benchmarks/ncu_parse.py's 5 s target); this is 3 gets."""
    if tensor:    # tensor ops sit in some precision's FLOP: count the instructions
        return fma_instructions(m)
    out = {}
    get = m.get
    for precision, (w, _, w2), (_, _, (c, c2)) in _INST_PLAN:
        total = flop.get(precision)
        if not total:
            continue
        fma = get(c)
        if fma is None or fma != fma:
            fma = get(c2)
            if fma is None or fma != fma:
                fma = 0.0
        out[precision] = ((total - w2 * fma) / w, fma)
    return out


# --- peaks ncu recorded --------------------------------------------------------------

def recorded_peaks(m: Mapping[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """(compute FLOP/s by precision, bytes/s by level) from `.peak_sustained` metrics.

    peak = <metric>.peak_sustained (per cycle) x <unit>__cycles_elapsed.avg.per_second, with
    the same FLOP weights as the counts (FACTS.md). These are at the clock ncu ran at (base
    clock unless --clock-control none), so they sit below boost datasheet values.
    """
    compute: dict[str, float] = {}
    memory: dict[str, float] = {}
    for precision, ops in FP_OPS.items():
        fma, weight = ops[2], FP_WEIGHTS[precision][2]
        for unit in ("sm", "smsp"):
            per_cycle = _get(m, f"{unit}__{_INST.format(fma)}.peak_sustained")
            clock = _get(m, f"{unit}__cycles_elapsed.avg.per_second")
            if per_cycle and clock:
                compute[precision] = weight * per_cycle * clock
                break
    clock = _get(m, "sm__cycles_elapsed.avg.per_second")
    # the dense peak: a _sparsity_on peak is twice what dense MMAs reach, and a plain
    # metric's peak may be the sparse one too, so a _sparsity_off peak wins where collected
    dense: dict[str, float] = {}
    plain: dict[str, float] = {}
    for name, value in m.items():
        if name.endswith(".peak_sustained") and value and clock:
            k = _tensor_key(name[: -len(".peak_sustained")])
            if k and k[0] not in _TENSOR_UNCOUNTED and k[2] != "on":
                key = f"{_TENSOR_PRECISION.get(k[0], k[0])}:tensor"
                into = dense if k[2] == "off" else plain
                into[key] = max(into.get(key, 0.0), value * clock)
    compute.update({**plain, **dense})
    levels = {"DRAM": DRAM, **LEVEL_METRICS}
    for level, names in levels.items():
        for name in names:
            unit = name.removeprefix("derived__").split("__", 1)[0]
            per_cycle = _get(m, f"{name}.peak_sustained")
            clock = _get(m, f"{unit}__cycles_elapsed.avg.per_second")
            if per_cycle and clock:
                memory[level] = per_cycle * clock
                break
    return compute, memory


def derived_peaks(m: Mapping[str, float], compute: Mapping[str, float]
                  ) -> dict[str, tuple[float, str]]:
    """{precision: (FLOP/s, method)} of fp32 or fp64 where the launch recorded the other's
    peak and the device's single/double ratio but not this one's own peak: fp32 = ratio x
    the fp64 peak (the clock is the same). Without it a mixed fp64/fp32 kernel held its
    fp32 part to the fp64 ceiling, "only indicative" (review s18 r4 F5: 57 % for 55.5 %)."""
    ratio = _get(m, FP_RATIO)
    if not ratio or ratio <= 0:
        return {}
    said = f"{ratio:g}"
    if "fp64" in compute and "fp32" not in compute:
        return {"fp32": (ratio * compute["fp64"],
                         f"derived: fp64 peak x single/double ratio {said} (ncu)")}
    if "fp32" in compute and "fp64" not in compute:
        return {"fp64": (compute["fp32"] / ratio,
                         f"derived: fp32 peak / single/double ratio {said} (ncu)")}
    return {}


def compute_capability(text: str) -> tuple[int, int] | None:
    """'8.9' -> (8, 9); anything else -> None."""
    try:
        major, _, minor = text.strip().partition(".")
        return int(major), int(minor or 0)
    except ValueError:
        return None
