"""Profiled launches -> Kernels: launches of the same kernel summed (time, counts, calls).

A profiler reports every launch; the roofline wants one point per kernel (seed 000 §4.2:
one row per kernel, sorted by time, the top ones first). Template-heavy C++ names are
shortened for display (ingest/kernel_names.py); the full name is kept in
`meta["full_name"]`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import ParseError
from ..model.compare_merge import LAUNCH_MIX, SUMMED_SHAPES
from ..model.kernel import Kernel
from ..model.occupancy_words import occupancy_pct
from ..units import fmt_ai
from .kernel_names import short_name
from .ncu_launch import ACHIEVED_OCC, THEORETICAL_OCC, launch_details
from .ncu_metrics import (
    DRAM,
    DRAM_RW,
    FP_OPS,
    LEVEL_METRICS,
    SECTORS,
    Counts,
    flop_counts,
    launch_counts,
)
from .rocprof_dispatch import record_dispatch
from .skips import SkipLog


@dataclass(frozen=True)
class Launch:
    """One profiled kernel launch with its metrics in SI units."""

    path: str
    line: int | None           # first line of the launch in its file (1-based); None: binary
    id: str
    name: str                  # the name as the profiler printed it
    metrics: Mapping[str, float]
    key: str = ""              # identity for grouping (mangled name when known)
    device: str = ""
    cc: tuple[int, int] | None = None
    block: str = ""
    grid: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def identity(self) -> str:
        return self.key or self.name


@dataclass
class _Group:
    first: Launch
    flop: dict[str, float] = field(default_factory=dict)
    bytes: dict[str, float] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)
    tensor: float = 0.0
    # {precision: [add + mul, fma] instructions} summed over the launches (Counts.fma)
    fma: dict[str, list[float]] = field(default_factory=dict)
    launches: int = 0          # with untimed ones (a file without a time metric)
    notes: dict[str, None] = field(default_factory=dict)
    # ("bytes", level) or ("flop", precision) -> (its n/a metrics, the launches lacking it)
    unknown: dict[tuple[str, str], tuple[str, list[str]]] = field(default_factory=dict)
    # the (grid, block) shapes its launches had, and the lowest and highest AI one launch
    # reached at its first level (DRAM where counted): summed launches of one name may be
    # far apart (a templated GEMM at many shapes; review 14d I), which spread_note says
    shapes: dict[tuple[str, str], None] = field(default_factory=dict)
    ai: tuple[str, float, float] | None = None
    # the achieved and theoretical occupancy (% of warp slots) each launch recorded, where it
    # did: the kernel's meta holds its first launch's, which occupancy_note says when the
    # launches were not alike (a few dict reads a launch: a 100,000-launch file stays cheap);
    # a rocprof dispatch's wait for its GPU (rocprof_dispatch: record, then in %)
    occupancy: dict[str, list[float]] = field(default_factory=dict)

    def add_launch(self, launch: Launch, counts) -> None:
        self.add(counts)
        self.shapes[(launch.grid, launch.block)] = None
        for key, metric in (("achieved", ACHIEVED_OCC), ("theoretical", THEORETICAL_OCC)):
            v = launch.metrics.get(metric)
            if v is not None and v == v:
                self.occupancy.setdefault(key, []).append(v)
        record_dispatch(launch.metrics, self.occupancy)   # a rocprof dispatch's, in % later
        total = sum(counts.flop.values())
        level = self.ai[0] if self.ai else next(iter(counts.bytes), None)
        nbytes = counts.bytes.get(level) if level else None
        if nbytes and total > 0:
            ai = total / nbytes
            low, high = (ai, ai) if self.ai is None else self.ai[1:]
            self.ai = (level, min(low, ai), max(high, ai))

    def spread_note(self, shows: str = "--per-launch shows each") -> str:
        """'2 launches with grids (65535, 1, 1), (10, 1, 1) and AI 0.664-6.64 (DRAM) are
        summed into one point ...' when the launches' shapes differ or their AI differ by
        more than SPREAD_AI; '' when they are alike (then summing them is right)."""
        shapes = list(self.shapes)
        far = self.ai is not None and self.ai[2] > SPREAD_AI * self.ai[1]
        if self.launches < 2 or (len(shapes) < 2 and not far):
            return ""
        said = []
        if len(shapes) > 1:
            grids = list(dict.fromkeys(g for g, _ in shapes if g))
            blocks = list(dict.fromkeys(b for _, b in shapes if b))
            if len(grids) > 1:
                said.append(f"grids {', '.join(grids[:4])}{', ...' if len(grids) > 4 else ''}")
            if len(blocks) > 1:
                said.append(f"blocks {', '.join(blocks[:4])}"
                            f"{', ...' if len(blocks) > 4 else ''}")
        if self.ai is not None:
            level, low, high = self.ai
            # launches of other grids at one AI: 'AI 2 FLOP/B', not 'AI 2-2 FLOP/B'
            span = fmt_ai(low) if fmt_ai(low) == fmt_ai(high) else f"{fmt_ai(low)}-{fmt_ai(high)}"
            said.append(f"AI {span} FLOP/B ({level})")
        return (f"{self.launches} launches with {' and '.join(said)} are {SUMMED_SHAPES} "
                f"none of them ran at; {shows}")

    def occupancy_note(self, shows: str = "--per-launch shows each") -> str:
        """'occupancy differs between its 2 launches (achieved 16.5-41.7 %, theoretical
        50.0-100.0 %): its occupancy and limiter are launch 0's; --per-launch shows each' when
        the summed launches' theoretical occupancy differs, or their achieved by more than
        OCC_SPREAD points; '' when they are alike (then the first launch speaks for all)."""
        got = {key: (min(vs), max(vs)) for key, vs in self.occupancy.items()
               if len(vs) > 1 and key in ("achieved", "theoretical")}
        if not got:
            return ""
        low, high = got.get("achieved", (0.0, 0.0))
        apart = high - low > OCC_SPREAD
        if "theoretical" in got:
            apart = apart or got["theoretical"][1] > got["theoretical"][0] + 1e-9
        if not apart:
            return ""
        said = ", ".join(f"{key} {occupancy_pct(a, b)}" for key, (a, b) in got.items())
        return (f"occupancy differs between its {self.launches} launches ({said}): its "
                f"occupancy and limiter are launch {self.first.id}'s; {shows}")

    def add(self, counts) -> None:
        flop, nbytes = self.flop, self.bytes
        for k, v in counts.flop.items():
            flop[k] = flop.get(k, 0.0) + v
        for k, v in counts.bytes.items():
            nbytes[k] = nbytes.get(k, 0.0) + v
        self.launches += 1
        if counts.seconds is not None:
            self.samples.append(counts.seconds)
        self.tensor += counts.tensor_flop
        for k, (non_fma, fma) in counts.fma.items():
            pair = self.fma.setdefault(k, [0.0, 0.0])
            pair[0] += non_fma
            pair[1] += fma
        for n in counts.notes:
            self.notes[n] = None

    def drop_unknown(self) -> str:
        """Drop every byte level and FLOP precision some launch could not count (ncu `n/a`)
        while others could: the others' sum over the kernel's whole time would read low
        without a word (as rocprof_counters' _with_known_levels drops a level for every
        dispatch). A precision is dropped too, not kept partial: its FLOP from some launches
        over every launch's time gives an AI and a FLOP/s low by an unknown factor, where the
        kernel without it is exact for what is left and the note says what is missing. The
        reason the kernel cannot be placed when nothing is left ("" when it can), as one
        launch whose byte or FLOP metrics are all n/a is skipped (launch_counts)."""
        had_flop = bool(self.flop)
        lost: dict[str, list[str]] = {"bytes": [], "FLOP": []}
        for (kind, key), (metrics, ids) in self.unknown.items():
            counted = self.bytes if kind == "bytes" else self.flop
            if key not in counted:   # n/a in every launch: launch_counts' note says so
                continue
            del counted[key]
            self.notes[_partial_note(kind, key, metrics, ids, self.launches)] = None
            lost["bytes" if kind == "bytes" else "FLOP"].append(
                f"{metrics} n/a in launch {ids[0]} of this kernel")
        if not self.bytes and lost["bytes"]:
            return "no bytes: " + "; ".join(lost["bytes"])
        if had_flop and not self.flop and lost["FLOP"]:
            return "no FLOP: " + "; ".join(lost["FLOP"])
        return ""


# Launches of one name whose AI differ by more than this factor get a note (review 14d I).
SPREAD_AI = 2.0
# Summed launches whose achieved occupancy spans more than this many points of the SM's warp
# slots get a note: the first launch's figure, cited by the latency advice, is not theirs.
# Launches alike differ by far less (the NERSC GPP report's two sigma_gpp_gpu_34 launches:
# 41.6576 and 41.6575 %); a change of grid or block moves it by tens of points.
OCC_SPREAD = 5.0


def group_launches(launches: Iterable[Launch], log: SkipLog,
                   per_launch: bool = False) -> list[_Group]:
    """Group usable ncu launches by kernel identity (per_launch: each launch its own group);
    unusable ones go to the log."""
    return group_counts(_signed(launches), log, unknown=_unknown_counts,
                        per_launch=per_launch)


def _signed(launches: Iterable[Launch]) -> Iterable[tuple[Launch, Counts]]:
    """(launch, its counts), refusing a launch with a negative metric: every ncu metric
    rooflab reads is a count, a byte total, a time, a rate or a share, none below 0. A sum
    hid one: dadd -5 beside dfma 1e9 gave fp64 FLOP > 0, read with no word (rocprof refuses
    a negative count; s38 I), and a negative time was skipped as "zero time"."""
    for la in launches:
        m = la.metrics
        counts = launch_counts(m, la.cc)
        if any(v < 0 for v in m.values()):     # nan < 0 is False: n/a is read elsewhere
            _check_counts(la, counts)          # a negative count itself: said as before
            name, v = next((n, v) for n, v in m.items() if v < 0)
            raise ParseError(f"launch {la.id} of '{short_name(la.name)}': metric '{name}' "
                             f"= {v:g} is negative; a count, a byte total or a time is "
                             f">= 0: check the export (re-export the file, or leave the "
                             f"metric out)", path=la.path, line=la.line)
        yield la, counts


# The metrics behind each byte level and each vector FLOP precision, for naming an n/a one.
_LEVEL_NAMES = {lv: ((DRAM + DRAM_RW) if lv == "DRAM" else LEVEL_METRICS[lv])
                + tuple(n for spelling in SECTORS[lv] for n in spelling)
                for lv in ("DRAM", "L2", "L1")}
_FLOP_NAMES = {p: tuple(f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
                        for op in ops for unit in ("sm", "smsp"))
               for p, ops in FP_OPS.items()}


def _unknown_counts(launch: Launch, counts: Counts) -> dict[tuple[str, str], str]:
    """("bytes", level) or ("flop", precision) -> its n/a metrics, for each count this
    launch lacks because ncu wrote `n/a` (or nan) where another launch may hold a number."""
    m = launch.metrics
    nan = {n for n, v in m.items() if v != v}
    out = {}
    for lv, names in _LEVEL_NAMES.items():
        if lv not in counts.bytes and nan.intersection(names):
            out[("bytes", lv)] = ", ".join(n for n in names if n in nan)
    for p in flop_counts(m, launch.cc)[2]:     # every FLOP metric of p is nan
        out[("flop", p)] = ", ".join(n for n in _FLOP_NAMES[p] if n in nan)
    return out


def _has_nan(m: Mapping[str, float]) -> bool:
    """Whether a metric is nan: a sum in C is NaN then (benchmarks/ncu_parse.py reads
    100,000 launches, almost none with one); inf - inf also gives NaN, a harmless look."""
    try:
        total = sum(m.values())
    except TypeError:
        return any(v != v for v in m.values() if isinstance(v, float))
    return total != total


def _partial_note(kind: str, key: str, metrics: str, ids: list[str], launches: int) -> str:
    lost = f"no {key} point" if kind == "bytes" else f"no {key} FLOP counted"
    return (f"{metrics} not a number (n/a) in {len(ids)} of {launches} launches (first: "
            f"launch {ids[0]}): {lost} (the other launches' count over every launch's time "
            f"would read low)")


# the numbers in a launch's problem ("zero time (EndNs 150000 = BeginNs 150000)"): launches
# whose problems differ only in them are alike
_NUMBERS = re.compile(r"\d[\d.,e+-]*")


def group_counts(items: Iterable[tuple[Launch, Counts]], log: SkipLog,
                 unknown: Callable[[Launch, Counts], Mapping[tuple[str, str], str]] | None
                 = None, per_launch: bool = False) -> list[_Group]:
    """Group (launch, counts) pairs by kernel identity; a launch with a problem is logged.
    unknown: the counts a launch with a nan metric lacks (_unknown_counts), dropped for its
    whole kernel (_Group.drop_unknown); a kernel left with no bytes or no FLOP is logged."""
    groups: dict[str, _Group] = {}
    for launch, counts in items:
        if counts.problem:
            # one line per kernel and kind of problem, naming its first launch: a file whose
            # passes do not match skips every dispatch (12,500 lines: review r5 F6)
            log.add_grouped(launch.line, f"launch {launch.id} of '{short_name(launch.name)}' "
                                         f"skipped: {counts.problem}",
                            key=f"{launch.identity}\0{_NUMBERS.sub('#', counts.problem)}",
                            what="launches")
            continue
        _check_counts(launch, counts)
        key = f"{launch.identity}\0{launch.id}" if per_launch else launch.identity
        g = groups.get(key)
        if g is None:
            g = groups[key] = _Group(launch)
        g.add_launch(launch, counts)
        if unknown is not None and _has_nan(launch.metrics):
            for what, metrics in unknown(launch, counts).items():
                g.unknown.setdefault(what, (metrics, []))[1].append(launch.id)
    out = []
    for g in groups.values():
        problem = g.drop_unknown() if g.unknown else ""
        if problem:
            log.add(g.first.line, f"kernel '{short_name(g.first.name)}' skipped: {problem}")
        else:
            out.append(g)
    return out


def _check_counts(launch: Launch, counts: Counts) -> None:
    """A launch's FLOP, bytes and time must be >= 0 and finite: a counter exported as -149
    or 1e400 is refused here, naming the file, the line and the metric, where the Kernel's
    own check ("kernel 'x': bytes[DRAM] must be >= 0") could name neither."""
    ok = [*counts.flop.values(), *counts.bytes.values()]
    if counts.seconds is not None:
        ok.append(counts.seconds)
    if not ok or (min(ok) >= 0.0 and sum(ok) < math.inf):   # all fine (a nan sums to nan)
        return
    values = [(f"flop[{k}]", v) for k, v in counts.flop.items()] + \
             [(f"bytes[{k}]", v) for k, v in counts.bytes.items()] + \
             ([("seconds", counts.seconds)] if counts.seconds is not None else [])
    bad = [(what, v) for what, v in values if not 0 <= v < math.inf]
    if not bad:
        return
    what, value = bad[0]
    # the metrics behind it: every one the launch holds that no counter can read
    metrics = [f"'{m}' = {v:g}" for m, v in launch.metrics.items()
               if isinstance(v, float) and (v < 0 or v in (math.inf, -math.inf))]
    source = f"metric {', '.join(metrics)}" if metrics else "its metrics"
    raise ParseError(f"launch {launch.id} of '{short_name(launch.name)}': {source} gives "
                     f"{what} = {value:g}; a count or a time must be >= 0 and finite: check "
                     f"the export (re-export the file, or leave the metric out)",
                     path=launch.path, line=launch.line)


# where a tool's launches are seen one by one: ncu's --per-launch; `rooflab rocprof` has no
# such view, and its notes told the user to pass one it refuses
_SHOWS_EACH = {"rocprof": "each dispatch's counters are in the file (`rooflab rocprof` has "
                          "no per-launch view)"}


def group_kernel(g: _Group, name: str, step: str | None = None,
                 step_index: int | None = None, source: str = "ncu") -> Kernel:
    """The Kernel of one profiler group (its launches summed), named `name`."""
    total_flop = sum(g.flop.values())
    flop = {k: v for k, v in g.flop.items() if v > 0} or {"fp32": 0.0}
    f = g.first
    meta: dict = {"source": source, "full_name": f.name, "file": f.path, "line": f.line,
                  "launches": g.launches}
    if f.key and f.key != f.name:
        meta["key"] = f.key
    for k in ("device", "block", "grid"):
        if getattr(f, k):
            meta[k] = getattr(f, k)
    if f.cc:
        meta["cc"] = f"{f.cc[0]}.{f.cc[1]}"
    # occupancy, limiter, pipes and SM count of its first launch, where the file holds them
    # (a note says so when the summed launches' occupancy differs: g.occupancy_note)
    meta.update(launch_details(f.metrics))
    share = _fma_share(g)
    if share:
        meta["fma_share"] = share
    shows = _SHOWS_EACH.get(source, "--per-launch shows each")
    spread = g.spread_note(shows)
    if spread:   # compare's gate reads the flag: the launches' spread is no timing noise
        meta[LAUNCH_MIX] = True
    said = [n for n in (spread, g.occupancy_note(shows)) if n]
    if g.notes or said:
        meta["notes"] = list(g.notes) + said
    if step is not None:
        meta["step"] = step
        meta["step_index"] = step_index
    timed = len(g.samples) == g.launches   # one untimed launch: no total time to sum
    return Kernel(
        name=name, flop=flop, bytes=dict(g.bytes), seconds=sum(g.samples) if timed else None,
        calls=g.launches, samples=tuple(g.samples) if timed else (),
        provenance={"flop": "counted", "bytes": "counted",
                    **({"seconds": "measured"} if timed else {})},
        unit=_unit(total_flop, g.tensor),
        meta=meta,
    )


def _fma_share(g: _Group) -> dict[str, float]:
    """{precision: fma / (add + mul + fma)} of the launches' summed instructions, for the
    no-FMA ceiling (model/fma_ceiling.py): a share of the summed counts, not a mean of each
    launch's, so a short launch weighs as little as its instructions. Only precisions still
    counted (drop_unknown takes out one n/a in some launches: its share would be partial)."""
    return {k: fma / (non_fma + fma) for k, (non_fma, fma) in g.fma.items()
            if k in g.flop and non_fma + fma > 0}


def _unit(total_flop: float, tensor_flop: float) -> str | None:
    """The compute unit the counted FLOP ran on. Counts from vector-pipe instructions only
    (ncu dadd/dmul/dfma, rocprof SQ_INSTS_VALU_*) are held to the vector ceiling: left
    unset, an fp64 kernel on an H100 or MI300X was judged against the fp64 tensor/matrix
    peak, twice the vector one. A mix with a minority of tensor FLOP stays unset."""
    if not total_flop:
        return None
    if tensor_flop > 0.5 * total_flop:
        return "tensor"
    return "vector" if tensor_flop == 0 else None


def sort_by_time(kernels: Iterable[Kernel]) -> list[Kernel]:
    """Longest total time first (seed 000 §6.4: start with the top kernels by time)."""
    return sorted(kernels, key=lambda k: -(k.seconds or 0.0))
