"""analyze(roof, kernels): where each kernel sits on the roof and what bounds it. Pure.

The parts live by what they do: placement (one kernel at one level: Point, its bound),
byte_convention (which DRAM ceiling judges a kernel's bytes), unplaced (a kernel without
a point). Import their names from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from ..errors import InputError
from ..name_list import named
from ..units import si
from .byte_convention import memory_ceiling
from .ceiling import KernelCeiling, Roof
from .datasheet_note import datasheet_note
from .display import analysis_text, pretty
from .held_unit import VECTOR_KIND_NOTE, held_ceiling, vector_kind_note
from .kernel import Kernel
from .level_carm import carm_memory, is_carm
from .level_names import checked_levels
from .maf_note import maf_note
from .meta_check import step_of
from .placement import Point, analyze_point, primary_points
from .threads_note import threads_note, threads_said_once
from .unplaced import Unplaced, unplaced_kernel


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
    """Kernels placed on one roof: what `analyze(roof, kernels)` returns (pure: the same
    inputs give the same Analysis). points: one per kernel and memory level the roof has a
    ceiling at (Point: AI, achieved and attainable FLOP/s, % of roof, bound, floor time,
    all SI); unplaced: kernels without a point, and why (Unplaced); notes: what the
    placing noticed, "kernel: text" or roof-wide (the datasheet note, model/datasheet_note).
    kernels keep the input order; kernel_of(point) finds a point's kernel."""

    roof: Roof
    kernels: tuple[Kernel, ...]
    points: tuple[Point, ...]
    notes: tuple[str, ...] = ()
    unplaced: tuple[Unplaced, ...] = ()   # kernels without a point (see Unplaced)

    # a notebook shows the longest points and each note once (model/display.py), not the
    # dataclass repr of every field: the roof's ceilings, each kernel's samples and meta
    _repr_pretty_ = pretty(analysis_text)

    def __post_init__(self) -> None:
        # analyze()'s "ran on 1 thread; judged by the 2-thread roof" gives way to the CLI's
        # input note where one is added (cli/report.py's replace(): that note names the
        # profile's rows too): the report says it once (review s18 r8 F5)
        object.__setattr__(self, "notes", threads_said_once(self.notes))

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

    def primary(self) -> tuple[Point, ...]:
        """One point per kernel: the level that binds hardest (the lowest attainable).
        Keyed by kernel index, so two kernels of one name keep one point each."""
        return self._primary

    @cached_property
    def _primary(self) -> tuple[Point, ...]:
        # once per analysis: whatif asked it once per kernel, n x n (s23 r5 F6)
        return tuple(primary_points(self.points).values())

    def primary_by_name(self) -> Mapping[str, Point]:
        """{kernel name: its binding point} (a later kernel of one name wins), read-only."""
        return self._primary_by_name

    @cached_property
    def _primary_by_name(self) -> Mapping[str, Point]:
        return MappingProxyType({p.kernel: p for p in self._primary})


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
    # an int or None (meta_check.step_of): a list step_index was used as a dict key
    step = [step_of(k.meta) for k in kernels]
    by_step: dict[object, float] = {}
    # meta "uncounted_s": a torch trace's time in ops with no FLOP formula (not kernels),
    # carried by each of its kernels; added once per file, so that a share is of all the
    # op time and the counted shares plus the uncounted note's make 100 % (review r2 F3)
    uncounted: dict[tuple, float] = {}
    for k, i in zip(kernels, step, strict=True):
        if k.seconds:
            by_step[i] = by_step.get(i, 0.0) + k.seconds
        u = k.meta.get("uncounted_s") if isinstance(k.meta, Mapping) else None
        if isinstance(u, (int, float)) and u > 0:
            file = k.meta.get("file")   # a dict key: text only (model/meta_check)
            uncounted[(i, file if isinstance(file, str) else None)] = float(u)
    for (i, _), u in uncounted.items():
        by_step[i] = by_step.get(i, 0.0) + u
    if len({i for i in step if i is not None}) < 2:
        whole = sum(by_step.values())
        return tuple(whole for _ in kernels)
    return tuple(by_step.get(i, 0.0) for i in step)


def analyze(roof: Roof, kernels: Iterable[Kernel], levels: Sequence[str] | None = None,
            carm: bool = False) -> Analysis:
    """Every kernel at every memory level it has bytes for (and the roof has a ceiling for).

    roof: a Roof (rooflab.load_roof("T4") or a profile .json); kernels: Kernels, or one.
    A kernel at a level the roof lacks gets no point there; `Analysis.notes` says why, and
    a kernel left with no point at all is in `Analysis.unplaced` (its time stays in the
    total the shares are taken of). Levels outside `levels` are the caller's choice: a
    kernel filtered out by them is not called unplaced. `levels` are read as in files
    ("dram", "HBM3" -> DRAM; one name given bare is a list of one); a name that is no
    memory level is an InputError. carm: a kernel's L1 bytes are read as CARM reads them
    (model/level_carm: held to the lowest roof of every level above its dot), not against
    the L1 ceiling alone; its other levels as before.
    """
    if not isinstance(roof, Roof):
        hint = ("a profile holds roofs: pass profile.roofs[0] (measured first)"
                if hasattr(roof, "roofs") else
                "load one with rooflab.load_roof('T4') (a catalog name or a profile .json)")
        raise InputError(f"analyze(): roof must be a Roof; got {type(roof).__name__} "
                         f"{roof!r:.60}; {hint}")
    if levels is not None:
        levels = checked_levels(levels, "analyze(): levels")
    kernels = _kernels_arg(kernels)
    totals = share_totals(kernels)
    points: list[Point] = []
    notes: list[str] = []
    unplaced: list[Unplaced] = []
    on_vector: list[str] = []   # held to vector by their kind (held_unit): one note
    for i, k in enumerate(kernels):
        held = held_ceiling(roof, k)
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
            memory, which = (carm_memory(roof, k, compute.value) if carm and is_carm(level)
                             else memory_ceiling(roof, k, level))
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
            unplaced.append(unplaced_kernel(roof, k, held, missing, asked, totals[i], i))
        notes += [f"{k.name}: {n}" for n in held.notes]
        if k.total_flop > 0 and vector_kind_note(roof, k):   # 0 FLOP: no ceiling binds
            on_vector.append(k.name)
        if held.weighted:
            notes.append(f"{k.name}: {weighted_words(held)}")
        # a 1-thread kernel on a 2-thread probe's roof: its % of roof counts the idle
        # thread; said here as `rooflab report` says it (review s18 r8 F5)
        threads = threads_note(k, roof)
        if threads:
            notes.append(threads)
    if on_vector:   # once per output, naming its kernels (notes_by_text reads them)
        notes.append(f"{named(on_vector, where='`--json` has every kernel')}: "
                     f"{VECTOR_KIND_NOTE}")
    steps = {step_of(k.meta) for k in kernels} - {None}
    if len(steps) > 1:   # said where the shares are read: ncu, report, plot (share_totals)
        notes.append(f"share is of each kernel's own file: the {len(steps)} files are "
                     f"separate profiling runs, so a share of their summed time would be a "
                     f"share of nothing real")
    datasheet = datasheet_note(roof, kernels)   # review 18a F8: the roof the seeds call wrong
    if datasheet:
        notes.append(datasheet)
        maf = maf_note(roof, kernels)       # AMD's matrix peak is further out of reach
        notes += [maf] if maf else []
    return Analysis(roof=roof, kernels=kernels, points=tuple(points),
                    notes=tuple(dict.fromkeys(notes)), unplaced=tuple(unplaced))



def weighted_words(held: KernelCeiling) -> str:
    """'held to a weighted 124.8 TFLOP/s: 90 % fp16 tensor (312 TFLOP/s) + 10 % fp32 vector
    (19.5 TFLOP/s)': the mix a kernel's peak is weighted by (four digits: the weighted
    value is no catalog figure, and 125 would hide that it is computed)."""
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
