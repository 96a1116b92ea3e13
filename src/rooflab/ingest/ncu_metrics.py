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
Peaks: <metric>.peak_sustained x <unit>__cycles_elapsed.avg.per_second.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

# --- numbers and units --------------------------------------------------------------

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}
# Counted things whose SI base is the thing itself. ncu auto-scales with decimal prefixes
# (Kbyte = 1e3 byte; `--print-units base` turns scaling off).
_BASES = ("byte", "second", "cycle", "inst", "warp", "sector", "request", "thread", "block",
          "wavefront", "register", "op", "flop")
_UNIT_RE = re.compile(r"^([KkMGTPmunp]?)(" + "|".join(_BASES) + r")s?$")
_SHORT_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}


def unit_scale(unit: str) -> float | None:
    """The factor that turns a value in `unit` into SI base units; None when unknown.

    Handles 'byte', 'Kbyte', 'usecond', 'msecond', 'ns', 'hz', 'Ghz', 'Gcycle/second',
    'byte/cycle', 'inst/cycle', 'Tbyte/s', '%' and '' (plain count).
    """
    u = unit.strip()
    if u in ("", "%"):
        return 1.0
    if "/" in u:
        num, _, den = u.partition("/")
        a, b = unit_scale(num), unit_scale(den)
        return None if a is None or b is None else a / b
    if u in _SHORT_TIME:
        return _SHORT_TIME[u]
    low = u.lower()
    if low.endswith("hz"):
        return {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(low[:-2])
    m = _UNIT_RE.match(u)
    if m is None:
        return None
    return _PREFIX[m.group(1)]


_NAN_WORDS = frozenset(("nan", "n/a", "-nan", "inf", "-inf", ""))


def parse_number(text: str) -> float:
    """'1,619,726,202.90' -> 1619726202.9; 'nan', 'n/a' and '' -> nan; else ValueError."""
    s = text.strip()
    if s.lower() in _NAN_WORDS:
        return math.nan
    return float(s.replace(",", ""))


# --- which metrics rooflab uses ------------------------------------------------------

_INST = "sass_thread_inst_executed_op_{}_pred_on.sum"
FP_OPS = {"fp64": ("dadd", "dmul", "dfma"), "fp32": ("fadd", "fmul", "ffma"),
          "fp16": ("hadd", "hmul", "hfma")}
# FLOP per (add, mul, fma) thread instruction. fp16 instructions are packed half2 (NVIDIA's
# SpeedOfLight_HierarchicalHalfRooflineChart section multiplies by 2 per lane).
FP_WEIGHTS = {"fp64": (1, 1, 2), "fp32": (1, 1, 2), "fp16": (2, 2, 4)}

TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
# FLOP per warp-level tensor instruction, by compute capability. The NERSC roofline scripts
# (gitlab.com/NERSC/roofline-on-nvidia-gpus) use 512 for V100. Turing issues HMMA.1688
# (2*16*8*8 = 2048 FLOP per warp instruction) and
# Ampere/Ada HMMA.16816 (2*16*8*16 = 4096) for fp16; other shapes (tf32 HMMA.1684, int8 IMMA)
# differ, so this is an assumption and the note says so. Hopper's wgmma is not counted here.
TENSOR_FACTOR: dict[tuple[int, int], float] = {
    (7, 0): 512.0, (7, 2): 512.0, (7, 5): 2048.0,
    (8, 0): 4096.0, (8, 6): 4096.0, (8, 7): 4096.0, (8, 9): 4096.0,
}
# sm__ops_path_tensor_[op_<mma>_]src_<p>[_dst_<q>][_sparsity_<on|off>].sum: tensor-core ops
# by source (and destination) type. NVIDIA exposes both per-source totals (src_fp64,
# src_int8, src_int4, src_int1, src_fp8 on Ada) and per-destination splits (src_fp16_dst_fp32;
# Blackwell's src_fp4_fp6_dst_fp16); each may come with a _sparsity_on/off split. A total and
# its splits may all be collected together, so tensor_flop keeps one figure per source: the
# total where present, else the sum of its parts (see _tensor_total).
_TENSOR_OPS = re.compile(
    r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_([a-z0-9]+(?:_fp6)?)(?:_dst_([a-z0-9]+))?"
    r"(?:_sparsity_(on|off))?\.sum$")
_TENSOR_PRECISION = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64",
                     "fp8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "int8": "int8", "s8": "int8",
                     "u8": "int8", "int4": "int4", "s4": "int4", "fp4": "int4", "e2m1": "int4",
                     "fp4_fp6": "int4"}
# counted sources without a rooflab precision (binary MMA): said in a note, never a ceiling
_TENSOR_UNCOUNTED = frozenset({"int1", "b1"})

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


# What explains a kernel far under its roof (review 14d C), read into Kernel.meta and cited
# by the latency diagnosis: the launch's shape, the SM count, achieved and theoretical
# occupancy (NVIDIA's Occupancy section), the per-SM block limits (the smallest is the
# limiter) and how busy each pipe was (Compute Workload section).
ACHIEVED_OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCC = "sm__maximum_warps_per_active_cycle_pct"
SM_COUNT = "device__attribute_multiprocessor_count"
OCC_LIMIT = "launch__occupancy_limit_"
# what each launch__occupancy_limit_<x> limits, in words
LIMITERS = {"registers": "registers", "shared_mem": "shared memory",
            "warps": "warps per SM (block size)", "blocks": "blocks per SM",
            "barriers": "barriers"}
_PIPE = re.compile(r"^sm__(?:inst_executed_pipe_(\w+?)|pipe_(\w+?)_cycles_active)"
                   r"\.(?:avg|sum|max)\.pct_of_peak_sustained_active$")
LAUNCH_USED = re.compile(
    r"^(?:" + re.escape(ACHIEVED_OCC) + "|" + re.escape(THEORETICAL_OCC) + "|"
    + re.escape(SM_COUNT) + r"|launch__occupancy_limit_\w+|launch__(?:grid|block)_dim_[xyz])$")


def is_used(metric: str) -> bool:
    """Whether rooflab reads this metric (everything else is ignored)."""
    return (USED.match(metric) is not None or LAUNCH_USED.match(metric) is not None
            or _PIPE.match(metric) is not None)


def launch_details(m: Mapping[str, float]) -> dict:
    """What one launch recorded of its occupancy and pipes, for Kernel.meta (only the keys
    the file holds): occupancy_achieved / occupancy_theoretical (% of the SM's warp slots),
    occupancy_limiter (the launch__occupancy_limit_* with the fewest blocks per SM; ties all
    named), pipe_busy {pipe: % of peak}, sms (the device's SM count)."""
    out: dict = {}
    for key, name in (("occupancy_achieved", ACHIEVED_OCC),
                      ("occupancy_theoretical", THEORETICAL_OCC)):
        v = _get(m, name)
        if v is not None:
            out[key] = v
    limits = {n.removeprefix(OCC_LIMIT): v for n, v in m.items()
              if n.startswith(OCC_LIMIT) and v == v}
    if limits:
        least = min(limits.values())
        out["occupancy_limiter"] = ", ".join(LIMITERS.get(k, k) for k, v in limits.items()
                                             if v == least)
        out["occupancy_limit_blocks"] = least
    pipes = {}
    for n, v in m.items():
        hit = _PIPE.match(n) if "pipe_" in n else None
        if hit and v == v:
            pipe = hit.group(1) or hit.group(2)
            pipes[pipe] = max(pipes.get(pipe, 0.0), v)
    if pipes:
        out["pipe_busy"] = dict(sorted(pipes.items(), key=lambda kv: -kv[1]))
    sms = _get(m, SM_COUNT)
    if sms:
        out["sms"] = int(sms)
    return out


def dims(m: Mapping[str, float], what: str) -> str:
    """'(65535, 1, 1)' from launch__grid_dim_x/y/z (what='grid') as a report holds them,
    the spelling of the CSV's Grid Size column; '' when not recorded."""
    xyz = [_get(m, f"launch__{what}_dim_{c}") for c in "xyz"]
    if any(v is None for v in xyz):
        return ""
    return "(" + ", ".join(str(int(v)) for v in xyz) + ")"


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


def _get(m: Mapping[str, float], name: str) -> float | None:
    v = m.get(name)
    return None if v is None or v != v else v


# (sm__ name, smsp__ name) of each (add, mul, fma) instruction count, per precision.
_INST_NAMES = {p: tuple((f"sm__{_INST.format(op)}", f"smsp__{_INST.format(op)}") for op in ops)
               for p, ops in FP_OPS.items()}
# metric name -> (source, destination, sparsity) of a tensor ops metric, or None
_tensor_cache: dict[str, tuple[str, str, str] | None] = {}
_not_tensor: set[str] = set()   # names _tensor_key found not to be tensor metrics


def _tensor_key(name: str) -> tuple[str, str, str] | None:
    """(source, destination or "", sparsity or "") of an sm__ops_path_tensor_* metric name
    (cached), else None."""
    k = _tensor_cache.get(name, ())
    if k == ():
        hit = _TENSOR_OPS.match(name) if name.startswith("sm__ops_path_tensor_") else None
        k = _tensor_cache[name] = ((hit.group(1), hit.group(2) or "", hit.group(3) or "")
                                   if hit else None)
        if k is None:
            _not_tensor.add(name)
    return k


def _tensor_total(parts: Mapping[tuple[str, str, str], float]) -> dict[str, float]:
    """Ops per source from the collected variants of it: per destination, the plain metric
    where collected, else _sparsity_on + _sparsity_off; per source, the destination-free
    total where collected, else the sum over destinations. Summing every variant would count
    the same MMAs two or three times."""
    by_dst: dict[tuple[str, str], float] = {}
    for (src, dst, sparsity), v in parts.items():
        if sparsity and (src, dst, "") in parts:
            continue
        by_dst[(src, dst)] = by_dst.get((src, dst), 0.0) + v
    out: dict[str, float] = {}
    for (src, dst), v in by_dst.items():
        if dst and (src, "") in by_dst:
            continue
        out[src] = out.get(src, 0.0) + v
    return out


# (precision, its (add, mul, fma) weights, the (sm__, smsp__) names of each instruction)
_INST_PLAN = tuple((p, FP_WEIGHTS[p], _INST_NAMES[p]) for p in FP_OPS)


def _partial_note(precision: str, add, mul, fma) -> str:
    """A precision counted from some of its add/mul/fma metrics: the others were not
    collected, so its FLOP read low by whatever those instructions did."""
    ops = FP_OPS[precision]
    have = [op for op, v in zip(ops, (add, mul, fma), strict=True) if v is not None]
    lack = [op for op, v in zip(ops, (add, mul, fma), strict=True) if v is None]
    return (f"{precision} FLOP from {', '.join(have)} only: "
            f"{', '.join('sm__' + _INST.format(op) for op in lack)} not collected (add "
            f"{'it' if len(lack) == 1 else 'them'} to --metrics, or the FLOP may read low)")


def flop_counts(m: Mapping[str, float], cc: tuple[int, int] | None = None
                ) -> tuple[dict[str, float], list[str], list[str], float, bool]:
    """FLOP by precision, notes, the precisions whose metrics are nan, the tensor-core part,
    and whether any FLOP metric was collected at all."""
    flop: dict[str, float] = {}
    notes: list[str] = []
    bad: list[str] = []
    collected = False
    tensor_total = 0.0
    get = m.get
    # Runs once per launch (100,000 times in benchmarks/ncu_parse.py), hence spelled out:
    # each count is the sm__ metric, else the smsp__ one when the sm__ one is missing or nan.
    for precision, (w0, w1, w2), ((a, a2), (b, b2), (c, c2)) in _INST_PLAN:
        add = get(a)
        if add is None or add != add:
            add = get(a2)
            if add != add:
                add = None
        mul = get(b)
        if mul is None or mul != mul:
            mul = get(b2)
            if mul != mul:
                mul = None
        fma = get(c)
        if fma is None or fma != fma:
            fma = get(c2)
            if fma != fma:
                fma = None
        if add is None and mul is None and fma is None:
            if a in m or a2 in m or b in m or b2 in m or c in m or c2 in m:
                bad.append(precision)
            continue
        collected = True
        if add is None or mul is None or fma is None:
            notes.append(_partial_note(precision, add, mul, fma))
        total = w0 * (add or 0.0) + w1 * (mul or 0.0) + w2 * (fma or 0.0)
        if total > 0:
            flop[precision] = total
    parts: dict[tuple[str, str, str], float] = {}
    cache = _tensor_cache
    # (a subset test in C first: most launches hold no tensor metric, all names seen before)
    for name, value in (() if m.keys() <= _not_tensor else m.items()):
        k = cache.get(name, ())
        if k == ():
            k = _tensor_key(name)
        if k is not None:
            collected = True
            if value == value and value > 0:
                parts[k] = value
    tensor: dict[str, float] = {}
    for src, v in _tensor_total(parts).items():
        if src in _TENSOR_UNCOUNTED:
            notes.append(f"{v:.4g} {src} tensor ops (sm__ops_path_tensor_src_{src}) not "
                         f"counted: rooflab has no {src} ceiling")
            continue
        p = _TENSOR_PRECISION.get(src, src)
        tensor[p] = tensor.get(p, 0.0) + v
    if tensor:
        notes.append("tensor FLOP from sm__ops_path_tensor_* (counted)")
        for p, v in tensor.items():
            flop[p] = flop.get(p, 0.0) + v
        tensor_total = sum(tensor.values())
    elif parts:
        pass        # tensor ops were counted, all of an uncounted type: no stand-in factor
    else:
        inst = _get(m, TENSOR_INST)
        if inst is not None:
            collected = True
        if inst:
            factor = TENSOR_FACTOR.get(cc) if cc else None
            if factor is None:
                notes.append(f"{inst:.0f} tensor instructions not counted as FLOP: no factor "
                             f"for compute capability {cc}; collect sm__ops_path_tensor_*")
            else:
                flop["fp16"] = flop.get("fp16", 0.0) + inst * factor
                tensor_total = inst * factor
                notes.append(f"tensor FLOP = {TENSOR_INST} x {factor:.0f} (assumed fp16 "
                             f"HMMA shape for CC {cc[0]}.{cc[1]}); collect "
                             f"sm__ops_path_tensor_* for exact counts")
    return flop, notes, bad, tensor_total, collected


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
    if m and all(v != v for v in m.values()):
        return Counts({}, {}, None, notes, "every metric is nan (a failed launch)")
    if seconds is None:
        if TIME not in m and CYCLES not in m and nbytes and collected and not fbad:
            # Seed 000 §4.1's own command collects FLOP and DRAM bytes only: that places
            # the kernel by AI (at its attainable height), with no achieved point.
            return Counts(flop, nbytes, None, notes + (NO_TIME_NOTE,))
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
    return Counts(flop, nbytes, seconds, notes, tensor_flop=tensor)


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


def compute_capability(text: str) -> tuple[int, int] | None:
    """'8.9' -> (8, 9); anything else -> None."""
    try:
        major, _, minor = text.strip().partition(".")
        return int(major), int(minor or 0)
    except ValueError:
        return None
