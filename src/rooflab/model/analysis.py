"""analyze(roof, kernels): where each kernel sits on the roof and what bounds it. Pure."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..errors import InputError
from .ceiling import Ceiling, KernelCeiling, Roof, kernel_ceiling
from .kernel import Kernel

# A kernel is `latency`-bound when it reaches less than this fraction of its attainable
# roof and no launch/dispatch floor explains it (seed 000 §6.2, misreading two). A kernel
# with no FLOP (a copy, a sort) has no FLOP/s to compare: the fraction of the level's
# bandwidth it reaches stands in (a copy at 0.5 % of DRAM bandwidth is no "memory" bound).
LATENCY_FRACTION = 0.10
# A kernel is `overhead`-bound when the calls x dispatch floor is larger than its work
# floor and explains at least this fraction of the measured time (seed 004: RMSNorm). A
# time below calls x the floor does not contain it (a profiler's GPU-side duration, or
# overlapping launches: 1000 calls in 1 ms on a 5 us floor), so the floor is left out
# and the work floor alone decides (sanity.check_launch_floor says so).
OVERHEAD_SHARE = 0.5
# A point this close to its ridge (relative) is on it, and on the ridge compute binds (AI >=
# ridge). Without it, rounding decided the side: a kernel that set both ceilings of a
# lower-bound roof (peak = FLOP/t, bandwidth = bytes/t) read "memory" at DRAM and "compute"
# at L2 from one file.
RIDGE_TOLERANCE = 1e-9


def left_of_ridge(ai: float, ridge: float) -> bool:
    """Whether AI is left of the ridge (the memory-bound side), beyond rounding."""
    return ai < ridge * (1.0 - RIDGE_TOLERANCE)

BOUNDS = ("memory", "compute", "overhead", "latency")

# Which bytes: counted vs. real traffic (review 16a A, 17a N1/N2/N8). The CPU probe's DRAM
# ceiling is STREAM-counted (triad: 24 of the 32 B it moves; the store's write-allocate
# read is left out), the convention hand counts follow. Hardware counters (perf's IMC CAS
# counts, likwid-perfctr's MEM groups) see every byte at the memory controller, write-
# allocate reads included: against the counted ceiling a loop at the machine's real speed
# reads up to 32/24 = 133 % (copy/scale-shaped loops 24/16 = 150 %). So the probe writes a
# second DRAM ceiling in real-traffic units (probe/cpu/dram_ceiling.py), and memory_ceiling
# sends every DRAM byte figure that is real traffic to it: counter-measured bytes, and
# counts that are real traffic by construction (no stores to allocate, or the allocate
# read counted in).
REAL_TRAFFIC = "DRAM (real traffic)"
COUNTER_BYTES = "measured"
# meta["byte_count"] of a kernel whose count includes the write-allocate reads (`ai stencil
# --write-allocate`, `ai axpy`; a kernel file may set it, docs/json.md).
REAL_TRAFFIC_COUNT = "real traffic"
# Kinds that store nothing or almost nothing (a scalar, or a y vector 1/(n+1) of a GEMV's
# bytes, 2 % of an SpMV's): no write-allocate read to leave out, so their count is the
# real traffic (review 17a N2). Matched as opkind.kind_word; a plain 'sum' too.
READ_ONLY_KINDS = ("reduction", "dot", "gemv", "mul_mat_vec", "spmv")
# A read/write bytes_split whose write share is at most this is read-only: its uncounted
# write-allocate reads add at most this share, the tolerance above-roof tests allow.
READ_ONLY_WRITE_SHARE = 0.05


def counter_bytes(kernel: Kernel) -> bool:
    """Whether the kernel's bytes were measured by hardware counters (real traffic)."""
    return (kernel.provenance or {}).get("bytes") == COUNTER_BYTES


def _store_share(kernel: Kernel) -> float | None:
    """The write share of a read/write meta bytes_split ({"read": .., "write": ..}, as
    `rooflab ai` writes it); None without one."""
    split = kernel.meta.get("bytes_split") if isinstance(kernel.meta, Mapping) else None
    if not isinstance(split, Mapping) or "read" not in split:
        return None
    try:
        read, write = float(split["read"]), float(split.get("write") or 0.0)
    except (TypeError, ValueError):
        return None
    return write / (read + write) if read + write > 0 else None


def real_traffic_reason(kernel: Kernel) -> str:
    """Why the kernel's DRAM bytes are real traffic (memory_ceiling's table), '' when they
    are STREAM-counted."""
    from .opkind import kernel_kind, kind_word, normal_kind

    if counter_bytes(kernel):
        return ("DRAM bytes measured by hardware counters (real traffic, write-allocate "
                "reads included)")
    if str(kernel.meta.get("byte_count", "")).strip().lower() == REAL_TRAFFIC_COUNT:
        return (f'its count is real traffic (meta byte_count "{REAL_TRAFFIC_COUNT}": the '
                f"write-allocate reads are counted in, or its stores hit lines it read)")
    kind, _ = kernel_kind(kernel)
    if kind and (kind_word(kind) in READ_ONLY_KINDS or normal_kind(kind) == "sum"):
        return (f"a read-only kind ({kind}: it stores nothing or almost nothing, so no "
                f"write-allocate read is left out and its count is real traffic)")
    share = _store_share(kernel)
    if share is not None and share <= READ_ONLY_WRITE_SHARE:
        return (f"read-only by its bytes_split ({share:.0%} written: no write-allocate "
                f"read to leave out, so its count is real traffic)")
    return ""


def memory_ceiling(roof: Roof, kernel: Kernel, level: str) -> tuple[Ceiling | None, str]:
    """The ceiling a kernel's bytes at `level` are judged against, and a note saying which
    and why when it is the real-traffic one. One rule, by whether the DRAM byte figure
    is real traffic (every byte the memory controller moves) or STREAM-counted (explicit
    loads + stores, the write-allocate read of each stored line left out):

    | DRAM bytes of the kernel                          | are       | judged against     |
    |---------------------------------------------------|-----------|--------------------|
    | measured by counters (provenance bytes measured)  | real      | DRAM (real traffic)|
    | meta byte_count "real traffic" (ai stencil/axpy   | real      | DRAM (real traffic)|
    |   --write-allocate, in-place axpy, a user's file) |           |                    |
    | a read-only kind: reduction/sum, dot, gemv, spmv  | real      | DRAM (real traffic)|
    | bytes_split read/write with <= 5 % written        | real      | DRAM (real traffic)|
    | any other count (hand, ai, zoo, profilers' DRAM)  | counted   | DRAM               |

    A roof without the real-traffic ceiling (GPU, datasheet, older profiles) judges every
    figure against its DRAM ceiling; other levels against their own ceiling."""
    own = roof.find_memory(level)
    real = roof.find_memory(REAL_TRAFFIC) if level == "DRAM" and own is not None else None
    if real is None:
        return own, ""
    from ..units import si

    why = real_traffic_reason(kernel)
    if not why:
        # the default convention: no note (a trace of 20 000 kernels would print 20 000);
        # the point's binding ceiling says DRAM
        return own, ""
    return real, (f"{why}: judged against the {REAL_TRAFFIC} ceiling "
                  f"{si(real.value, 'B/s')} ({real.provenance}), not the STREAM-counted "
                  f"DRAM {si(own.value, 'B/s')}, which leaves the write-allocate read out")


def on_real_traffic(roof: Roof, kernel: Kernel) -> bool:
    """Whether the kernel's DRAM point is judged against the roof's REAL_TRAFFIC ceiling
    (memory_ceiling): what a chart asks before drawing that ceiling."""
    if "DRAM" not in kernel.bytes:
        return False
    c, _ = memory_ceiling(roof, kernel, "DRAM")
    return c is not None and c.level == REAL_TRAFFIC


@dataclass(frozen=True)
class Point:
    """One kernel at one memory level on one roof. kernel is the kernel's name (for
    people: two kernels may share one); kernel_index is its position in the
    Analysis.kernels it was placed for (-1: a point built outside analyze), the link
    Analysis.kernel_of and points_of follow."""

    kernel: str
    precision: str
    unit: str | None
    level: str
    flop: float
    bytes: float
    seconds: float | None
    calls: int
    ai: float
    peak_flop_per_s: float
    bytes_per_s: float
    ridge: float
    attainable_flop_per_s: float
    achieved_flop_per_s: float | None
    percent_of_roof: float | None
    binding: str                 # label of the ceiling that binds at this AI
    bound: str                   # memory | compute | overhead | latency
    floor_s: float               # max(FLOP/P, bytes/B), per all calls
    overhead_floor_s: float | None
    floor_ratio: float | None    # measured / floor
    time_share: float | None
    below_roof: float | None     # distance 1: attainable / achieved (overhead + efficiency)
    along_slope: float           # distance 2: ridge / AI when left of the ridge, else 1
    roof_headroom: float         # distance 3: best peak of its family (float/int) / this peak
    note: str = ""
    kernel_index: int = -1

    @property
    def memory_bound_side(self) -> bool:
        return left_of_ridge(self.ai, self.ridge)


@dataclass(frozen=True)
class Unplaced:
    """A kernel analyze() gave no point: why, and how to give it one. Its time stays in the
    total that every point's time_share is taken of, so the placed shares and these add up
    to 100 %. Without a memory level it still has a compute position: its achieved FLOP/s
    against the compute ceiling it is held to (no AI, so no attainable, no bound)."""

    kernel: str
    seconds: float | None
    calls: int
    time_share: float | None
    levels: tuple[str, ...]      # the memory levels it has bytes at (none usable here)
    reason: str                  # why there is no point
    fix: str                     # how to give it one
    flop: float
    compute: str                 # label of the compute ceiling it is held to
    peak_flop_per_s: float
    achieved_flop_per_s: float | None   # FLOP / seconds (None: untimed or no FLOP)
    kernel_index: int = -1       # its position in Analysis.kernels

    @property
    def percent_of_peak(self) -> float | None:
        if self.achieved_flop_per_s is None or self.peak_flop_per_s <= 0:
            return None
        return 100.0 * self.achieved_flop_per_s / self.peak_flop_per_s


@dataclass(frozen=True)
class LevelFigures:
    """A kernel's numbers at one memory level it has bytes at, whether the roof has a
    ceiling there (point) or not (the level still has an AI and the kernel an achieved
    FLOP/s; no % of roof, no bound): what a table of every level shows (the profiler
    verbs' CSV, read back by `rooflab report`)."""

    level: str
    bytes: float
    ai: float | None                    # FLOP / bytes (None: no bytes)
    achieved_flop_per_s: float | None   # FLOP / seconds (None: untimed)
    time_share: float | None            # the kernel's, as its points (or Unplaced) have it
    point: Point | None                 # its point at this level, if placed


@dataclass(frozen=True)
class Analysis:
    roof: Roof
    kernels: tuple[Kernel, ...]
    points: tuple[Point, ...]
    notes: tuple[str, ...] = ()
    unplaced: tuple[Unplaced, ...] = ()   # kernels without a point (see Unplaced)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        # IPython/Jupyter display: one line per point instead of repr()'s whole roof
        from ..units import fmt_ai, fmt_rate

        lines = [f"Analysis on '{self.roof.name}' ({self.roof.kind}): "
                 f"{len(self.kernels)} kernel(s), {len(self.points)} point(s)"]
        for p in self.points:
            pct = "-" if p.percent_of_roof is None else f"{p.percent_of_roof:.1f}% of roof"
            lines.append(f"  {p.kernel}  {p.level}  AI {fmt_ai(p.ai)}  "
                         f"{fmt_rate(p.achieved_flop_per_s, p.precision)} of "
                         f"{fmt_rate(p.attainable_flop_per_s, p.precision)}  {pct}  "
                         f"{p.bound}-bound "
                         f"({p.binding})")
        lines += [f"  not placed: {u.kernel} ({u.reason})" for u in self.unplaced]
        lines += [f"  note: {n}" for n in self.notes]
        printer.text("\n".join(lines))

    def for_kernel(self, name: str) -> tuple[Point, ...]:
        """Every point of every kernel of this name (two kernels may share one)."""
        return tuple(p for p in self.points if p.kernel == name)

    @cached_property
    def _by_index(self) -> tuple[tuple[Point, ...], ...]:
        # each kernel's points, by its index (built once: points_of per kernel of a
        # 20 000-kernel file stays linear)
        out: list[list[Point]] = [[] for _ in self.kernels]
        for p in self.points:
            if 0 <= p.kernel_index < len(out):
                out[p.kernel_index].append(p)
        return tuple(tuple(ps) for ps in out)

    @cached_property
    def _index_of(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for i, k in enumerate(self.kernels):
            out.setdefault(id(k), i)
        return out

    def kernel_of(self, point: Point) -> Kernel | None:
        """The kernel a point is of (its kernel_index); a point built outside analyze (no
        index) falls back to the first kernel of its name, None where there is none."""
        if 0 <= point.kernel_index < len(self.kernels):
            return self.kernels[point.kernel_index]
        return next((k for k in self.kernels if k.name == point.kernel), None)

    def points_of(self, kernel: Kernel) -> tuple[Point, ...]:
        """This kernel's points, by identity: two kernels of one name (a kernel CSV
        listing two launches) each keep their own. A kernel not in this analysis (an
        equal copy) is looked up by value."""
        i = self._index_of.get(id(kernel))
        if i is None:
            i = next((j for j, k in enumerate(self.kernels) if k == kernel), None)
        return () if i is None else self._by_index[i]

    def levels_of(self, kernel: Kernel) -> tuple[LevelFigures, ...]:
        """The kernel's figures at every level it has bytes at, in its order: the point
        where there is one; elsewhere AI and achieved as a point has them. Its time share
        is its points' (shares replaced on them stay), else its Unplaced's, else of the
        analysis's total time."""
        points = {p.level: p for p in self.points_of(kernel)}
        share = next((p.time_share for p in points.values()), None)
        if not points:
            gone = self._unplaced_of.get(self._index_of.get(id(kernel), -1))
            share = gone.time_share if gone is not None else self._share(kernel)
        flop, t = kernel.total_flop, kernel.seconds
        return tuple(LevelFigures(
            level=level, bytes=nbytes, ai=flop / nbytes if nbytes > 0 else None,
            achieved_flop_per_s=flop / t if t else None, time_share=share,
            point=points.get(level)) for level, nbytes in kernel.bytes.items())

    def _share(self, kernel: Kernel) -> float | None:
        i = self._index_of.get(id(kernel))
        total = (self._share_totals[i] if i is not None
                 else sum(k.seconds for k in self.kernels if k.seconds))
        return kernel.seconds / total if kernel.seconds and total > 0 else None

    @cached_property
    def _share_totals(self) -> tuple[float, ...]:
        return share_totals(self.kernels)

    @cached_property
    def _unplaced_of(self) -> dict[int, Unplaced]:
        return {u.kernel_index: u for u in self.unplaced if u.kernel_index >= 0}

    def at_level(self, level: str) -> tuple[Point, ...]:
        return tuple(p for p in self.points if p.level == level)

    def primary(self) -> tuple[Point, ...]:
        """One point per kernel: the level that binds hardest (the lowest attainable).
        Keyed by kernel index, so two kernels of one name keep one point each."""
        best: dict[int | str, Point] = {}
        for p in self.points:
            key: int | str = p.kernel_index if p.kernel_index >= 0 else p.kernel
            cur = best.get(key)
            if cur is None or p.attainable_flop_per_s < cur.attainable_flop_per_s:
                best[key] = p
        return tuple(best.values())


def classify(*, ai: float, ridge_ai: float, work_floor_s: float, seconds: float | None,
             overhead_floor_s: float | None, fraction_of_roof: float | None) -> str:
    """The bound class of one point; see LATENCY_FRACTION and OVERHEAD_SHARE.
    fraction_of_roof: achieved / attainable FLOP/s (for a kernel with no FLOP, achieved
    bytes/s over the level's bandwidth). The launch floor counts only where the measured
    time holds it (overhead_floor_s <= seconds); an untimed point is `overhead` where
    calls x the launch floor exceeds its work floor."""
    side = "memory" if left_of_ridge(ai, ridge_ai) else "compute"
    if seconds is None:
        # Untimed (counted FLOP and bytes: `rooflab llm`, `ai`): it takes max(work floor,
        # calls x launch floor), the "with launches" floor llm's launch-dominated list
        # uses, so the larger decides (rope in a decode step: 99 ns of work, 22 launches
        # of 5 us = 110 us; review 11b #6)
        if overhead_floor_s is not None and overhead_floor_s > work_floor_s:
            return "overhead"
        return side
    if (overhead_floor_s is not None and overhead_floor_s > work_floor_s
            and OVERHEAD_SHARE * seconds <= overhead_floor_s <= seconds):
        return "overhead"
    if fraction_of_roof is not None and fraction_of_roof < LATENCY_FRACTION:
        return "latency"
    return side


def analyze_point(roof: Roof, kernel: Kernel, level: str, compute: Ceiling, memory: Ceiling,
                  total_seconds: float, note: str = "", compute_label: str | None = None,
                  kernel_index: int = -1) -> Point:
    """Place one kernel at one memory level on the roof. compute_label names the compute
    ceiling where it binds (default compute.label; a mixed kernel's weighted ceiling says
    "weighted fp16 tensor + fp32 vector"). kernel_index: its position in the analysis."""
    flop = kernel.total_flop
    nbytes = float(kernel.bytes[level])
    peak, bw = compute.value, memory.value
    ai = flop / nbytes if nbytes > 0 else math.inf
    ridge_ai = peak / bw
    att = min(peak, bw * ai)
    work_floor = max(flop / peak, nbytes / bw)
    overhead_floor = roof.overhead_s * kernel.calls if roof.overhead_s is not None else None
    seconds = kernel.seconds
    achieved = flop / seconds if seconds else None
    frac = achieved / att if achieved is not None and att > 0 else None
    # no FLOP, no FLOP/s: the bandwidth fraction reached is how close to its roof it runs
    reached = (nbytes / seconds / bw if frac is None and flop <= 0 and seconds and bw > 0
               else frac)
    bound = classify(ai=ai, ridge_ai=ridge_ai, work_floor_s=work_floor, seconds=seconds,
                     overhead_floor_s=overhead_floor, fraction_of_roof=reached)
    binding = memory.label if left_of_ridge(ai, ridge_ai) else (compute_label or compute.label)
    return Point(
        kernel=kernel.name, precision=kernel.precision, unit=compute.unit, level=level,
        flop=flop, bytes=nbytes, seconds=seconds, calls=kernel.calls, ai=ai,
        peak_flop_per_s=peak, bytes_per_s=bw, ridge=ridge_ai, attainable_flop_per_s=att,
        achieved_flop_per_s=achieved,
        percent_of_roof=100.0 * frac if frac is not None else None,
        binding=binding, bound=bound, floor_s=work_floor, overhead_floor_s=overhead_floor,
        floor_ratio=seconds / work_floor if seconds and work_floor > 0 else None,
        time_share=seconds / total_seconds if seconds and total_seconds > 0 else None,
        below_roof=att / achieved if achieved else None,
        along_slope=ridge_ai / ai if left_of_ridge(ai, ridge_ai) and ai > 0 else 1.0,
        roof_headroom=roof.top_compute_for(kernel.precision).value / peak,
        note=note, kernel_index=kernel_index,
    )


def held_on(roof: Roof, point: Point, kernel: Kernel | None = None) -> KernelCeiling:
    """The compute ceiling `point`'s kernel is held to on another roof (the nominal one
    beside the measured roof that judged it): a kernel with FLOP in several precisions its
    weighted ceiling (kernel_ceiling, as on the judging roof: A100 9e9 fp16 tensor + 1e9
    fp32 is 124.8 TFLOP/s, not fp16 tensor's 312); one precision the unit the judging roof
    held it to. Without the kernel, the point's precision and unit."""
    if kernel is not None and kernel.mixed:
        return kernel_ceiling(roof, kernel.flop, kernel.unit, kernel.precision)
    found, note = roof.compute_for(point.precision, point.unit)
    return KernelCeiling(found, found.label, (note,) if note else ())


def point_on(roof: Roof, point: Point, kernel: Kernel) -> Point | None:
    """The same kernel at the same level placed on another roof (its attainable FLOP/s and
    time floor there: the nominal column of the report's record table), with its ceiling
    from held_on; None where that roof has no ceiling for the point's level. No time share:
    it is not part of that roof's analysis."""
    memory = roof.find_memory(point.level)
    if memory is None or kernel.bytes.get(point.level) is None:
        return None
    held = held_on(roof, point, kernel)
    return analyze_point(roof, kernel, point.level, held.ceiling, memory, 0.0,
                         compute_label=held.label, kernel_index=point.kernel_index)


def _kernels_arg(kernels: Any) -> tuple[Kernel, ...]:
    """analyze()'s kernels as a tuple of Kernels, or InputError naming the first that is
    not one (a dict once failed deep inside with AttributeError)."""
    if isinstance(kernels, Kernel):
        return (kernels,)
    if isinstance(kernels, (str, bytes, Mapping)) or not isinstance(kernels, Iterable):
        raise InputError(f"analyze(): kernels must be a Kernel or a list of Kernels; got "
                         f"{type(kernels).__name__} {kernels!r:.60}")
    kernels = tuple(kernels)
    for i, k in enumerate(kernels):
        if not isinstance(k, Kernel):
            hint = (" (a kernel file's entry: rooflab.Kernel(**entry) or rooflab.load_kernels)"
                    if isinstance(k, Mapping) else "")
            raise InputError(f"analyze(): kernels[{i}] must be a rooflab.Kernel; got "
                             f"{type(k).__name__} {k!r:.60}{hint}")
    return kernels


def share_totals(kernels: Sequence[Kernel]) -> tuple[float, ...]:
    """The time each kernel's time share is taken of, one per kernel: the summed time of
    every timed kernel; on a run of optimisation steps (kernels of two or more meta
    step_index values: several ncu, likwid or perf files) the time of the kernel's own
    step. Each file is a separate profiling run, so a share of their summed time is a
    share of no run that happened, and it shrinks as a later step gets faster (review 15v
    F-b: ncu said 100 % per file, report/plot 57.3 % / 42.7 % of the same saved file).
    ncu's table, report and the chart's marker sizes all take their shares from here."""
    step = [k.meta.get("step_index") if isinstance(k.meta, Mapping) else None
            for k in kernels]
    by_step: dict[object, float] = {}
    for k, i in zip(kernels, step, strict=True):
        if k.seconds:
            by_step[i] = by_step.get(i, 0.0) + k.seconds
    if len({i for i in step if i is not None}) < 2:
        whole = sum(by_step.values())
        return tuple(whole for _ in kernels)
    return tuple(by_step.get(i, 0.0) for i in step)


def analyze(roof: Roof, kernels: Iterable[Kernel], levels: Sequence[str] | None = None) -> Analysis:
    """Every kernel at every memory level it has bytes for (and the roof has a ceiling for).

    roof: a Roof (rooflab.load_roof("T4") or a profile .json); kernels: Kernels, or one.
    A kernel at a level the roof lacks gets no point there; `Analysis.notes` says why, and
    a kernel left with no point at all is in `Analysis.unplaced` (its time stays in the
    total the shares are taken of). Levels outside `levels` are the caller's choice: a
    kernel filtered out by them is not called unplaced.
    """
    if not isinstance(roof, Roof):
        hint = ("a profile holds roofs: pass profile.roofs[0] (measured first)"
                if hasattr(roof, "roofs") else
                "load one with rooflab.load_roof('T4') (a catalog name or a profile .json)")
        raise InputError(f"analyze(): roof must be a Roof; got {type(roof).__name__} "
                         f"{roof!r:.60}; {hint}")
    kernels = _kernels_arg(kernels)
    totals = share_totals(kernels)
    points: list[Point] = []
    notes: list[str] = []
    unplaced: list[Unplaced] = []
    for i, k in enumerate(kernels):
        held = kernel_ceiling(roof, k.flop, k.unit, k.precision)
        # the point's note: the stand-in notes only (model/sanity.py reads a note as a
        # precision fallback); a mix shows in the binding and in the analysis notes
        compute, note = held.ceiling, held.note
        if not k.bytes:
            # no intensity without bytes: say so rather than drop the kernel in silence
            notes.append(f"{k.name}: no bytes at any memory level, so no AI and no point; "
                         f"give them, e.g. \"bytes\": {{\"DRAM\": 1.0e8}}")
        placed, asked, missing = 0, 0, []
        for level in k.bytes:
            if levels is not None and level not in levels:
                continue
            asked += 1
            memory, which = memory_ceiling(roof, k, level)
            if which:
                notes.append(f"{k.name}: {which}")
            if memory is None:
                missing.append(level)
                # the point is left off the roof (table, chart), not out of the data:
                # the CSV/JSON exports still carry the level's bytes and AI
                notes.append(f"{k.name}: roof '{roof.name}' has no {level} ceiling, so no "
                             f"{level} point on the roof (the CSV/JSON keep its bytes)")
                continue
            if k.bytes[level] <= 0 and k.total_flop <= 0:
                continue
            points.append(analyze_point(roof, k, level, compute, memory, totals[i], note,
                                        held.label, i))
            placed += 1
        if k.bytes and k.total_flop <= 0 and all(b <= 0 for b in k.bytes.values()):
            notes.append(f"{k.name}: 0 FLOP and 0 bytes, so no AI and no point; give its "
                         f"counts (flop=..., bytes=...)")
        if not placed and (asked or not k.bytes):
            unplaced.append(_unplaced(roof, k, held, missing, asked, totals[i], i))
        notes += [f"{k.name}: {n}" for n in held.notes]
        if held.weighted:
            notes.append(f"{k.name}: {weighted_words(held)}")
    steps = {k.meta.get("step_index") for k in kernels if isinstance(k.meta, Mapping)} - {None}
    if len(steps) > 1:   # said where the shares are read: ncu, report, plot (share_totals)
        notes.append(f"share is of each kernel's own file: the {len(steps)} files are "
                     f"separate profiling runs, so a share of their summed time would be a "
                     f"share of nothing real")
    return Analysis(roof=roof, kernels=kernels, points=tuple(points),
                    notes=tuple(dict.fromkeys(notes)), unplaced=tuple(unplaced))


def _unplaced(roof: Roof, k: Kernel, held: KernelCeiling, missing: Sequence[str],
              asked: int, total: float, index: int = -1) -> Unplaced:
    """Why kernel k got no point (no bytes; bytes only at levels the roof lacks; nothing
    but zeros), how to give it one, and its compute position (FLOP/s against its ceiling)."""
    here = [c.level for c in roof.memory]
    have = ", ".join(here) or "none"
    if not k.bytes:
        reason = "no bytes at any memory level, so no arithmetic intensity"
        fix = 'give its bytes, e.g. "bytes": {"DRAM": 1.0e8}'
    elif len(missing) == asked and len(k.bytes) > asked:
        # levels= (--level) set the kernel's other levels aside: that is the reason, not
        # its data, so name them rather than tell the user to add bytes it already has
        where = " and ".join(missing)
        aside = [lv for lv in k.bytes if lv not in missing]
        reason = (f"--level {where}: roof '{roof.name}' has no {where} ceiling (it has: "
                  f"{have}); this kernel also has {', '.join(aside)} bytes, set aside by "
                  f"--level")
        usable = next((lv for lv in aside if roof.find_memory(lv) is not None), None)
        instead = f" (or use --level {usable})" if usable else ""
        fix = (f"drop --level{instead}, or give a roof with "
               f"a{'n' if where[0] in 'AEFHILMNORSX' else ''} {where} ceiling")
    elif len(missing) == asked:
        where = " and ".join(missing)
        reason = (f"its bytes are at {where} only, and roof '{roof.name}' has no {where} "
                  f"ceiling (it has: {have})")
        main = "DRAM" if "DRAM" in here else next(iter(here), None)
        other = f" or add {main} bytes" if main else ""
        fix = (f"give a roof with a{'n' if where[0] in 'AEFHILMNORSX' else ''} {where} "
               f"ceiling (a probed profile: `rooflab probe -o profile.json`, then --on "
               f"profile.json){other}")
    else:
        reason = "0 FLOP and 0 bytes, so no arithmetic intensity"
        fix = "give its counts (flop=..., bytes=...)"
    flop = k.total_flop
    achieved = flop / k.seconds if k.seconds and flop > 0 else None
    return Unplaced(kernel=k.name, seconds=k.seconds, calls=k.calls,
                    time_share=k.seconds / total if k.seconds and total > 0 else None,
                    levels=tuple(k.bytes), reason=reason, fix=fix, flop=flop,
                    compute=held.label, peak_flop_per_s=held.ceiling.value,
                    achieved_flop_per_s=achieved, kernel_index=index)


def weighted_words(held: KernelCeiling) -> str:
    """'held to a weighted 124.8 TFLOP/s: 90 % fp16 tensor (312 TFLOP/s) + 10 % fp32 vector
    (19.5 TFLOP/s)': the mix a kernel's peak is weighted by (four digits: the weighted
    value is no catalog figure, and 125 would hide that it is computed)."""
    from ..units import si

    c = held.ceiling
    return (f"held to a weighted {si(c.value, 'FLOP/s', 4)}: "
            f"{c.method.removeprefix('weighted: ')}")


def notes_by_text(notes: Iterable[str]) -> dict[str, list[str]]:
    """Analysis notes ("kernel: text") grouped by their text, in order, with the kernel of
    each mention ("" for a note that names none): the one grouping the note printers use."""
    out: dict[str, list[str]] = {}
    for note in notes:
        who, sep, text = note.partition(": ")
        if not sep:
            who, text = "", note
        out.setdefault(text, []).append(who)
    return out
