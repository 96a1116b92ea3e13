"""A chart's kernels analysed together (chart_points._all_points): one analyze() of them
all gives each kernel's points, notes and bounds as analysing it alone does, where that
can be told (_batched); the joint analysis is kept for the verb printing the chart's notes
(chart_analysis)."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.analysis import Analysis, analyze
from ..model.ceiling import Roof
from ..model.kernel import Kernel
from ..model.level_carm import is_carm
from ..model.placement import Point
from .envelope_bound import level_words


def _alone(roof: Roof, kernel: Kernel, level: str | None, notes: list[str]
           ) -> tuple[tuple[Point, ...], dict[tuple[int, str], str]]:
    """One kernel analysed alone: its points and their bounds, its notes added to `notes`."""
    analysis = analyze(roof, [kernel], levels=[level] if level else None, carm=is_carm(level))
    notes.extend(analysis.notes)
    # Each point's bound as the tables word it, with every level in view (envelope_bound
    # .level_words): at `level` alone the binding DRAM point is never built, and the
    # reduction's L2 point at 3 % read "latency", not "not binding (DRAM binds)" (the
    # tables' words since review s18 r4 F2; the hover and --json said the old ones).
    # Only a "latency" point can read otherwise there (placement.binds_elsewhere): without
    # one the kernel is not analysed a second time (review s18 reread F1: an ncu import's
    # 20 000 kernels were each analysed twice under --level).
    # a CARM point is judged with every level's roof already: its bound stands as it is
    full = (analysis if level is None or is_carm(level) or len(kernel.bytes) < 2
            or not any(p.bound == "latency" for p in analysis.points)
            else analyze(roof, [kernel]))
    return analysis.points, level_words(full)


# A chart's points and notes, kernel by kernel, out of one analyze() (_batched)
_Batched = tuple[tuple[Point, ...], list[str], dict[tuple[int, str], str]]


def _batched(roof: Roof, kernels: Sequence[Kernel], level: str | None
             ) -> list[_Batched | None]:
    """Each kernel's points, notes and bounds (as _alone gives them) out of one analyze()
    of them all, None for a kernel that must be analysed alone. A point depends on its own
    kernel only but for its time share, which the chart takes from time_shares and not
    from the point; analysing 10 000 kernels one by one was a third of `rooflab plot`'s
    time (review s21 r5 F6). A kernel's notes cannot be told apart in the joint analysis'
    (deduplicated, the thread note said once): one that any joint note names ("k: ...")
    is analysed alone, as before; one no note names had none but the datasheet note, which
    its analysis alone gives (model/datasheet_note). With --level a kernel with a
    "latency" point is analysed alone too (its bound read with every level in view)."""
    from ..model.held_unit import VECTOR_KIND_NOTE, vector_kind_note
    from ..model.sanity_ceilings import THREADS_SAID

    asked = [k for k in kernels if level is None or level in k.bytes]
    # the report's own analysis where it is this very one (remember_analysis): a second
    # analyze() of 20 000 kernels was ~10 % of `report -o x.html` (session 36)
    joint = None
    if asked:
        joint = ((_held(roof, asked) if level is None else None)
                 or analyze(roof, asked, levels=[level] if level else None,
                            carm=is_carm(level)))
    if joint is not None and level is None:
        remember_analysis(roof, asked, joint)
    if joint is None or any(THREADS_SAID.search(n) for n in joint.notes):
        return [None] * len(kernels)
    # the vector-unit note names its kernels together ("a, b: no unit given ..."), which
    # _noted_names reads as one name "a, b": each kernel it is of gets it under its own
    # name below, as analysing it alone words it (s38 N: "b" had lost it)
    said = [n for n in joint.notes if not n.endswith(f": {VECTOR_KIND_NOTE}")]
    any_vector = len(said) < len(joint.notes)   # else no kernel asks (20 000 kinds read)
    named = _noted_names(said)
    mixes = _mix_notes(roof, kernels, said)
    bounds = level_words(joint)
    sheet_of = _sheet_notes(roof)
    out: list[_Batched | None] = []
    for k in kernels:
        points = joint.points_of(k) if level is None or level in k.bytes else ()
        mix = mixes.get(id(k))
        if ((k.name in named and mix is None)
                or (level is not None and not is_carm(level) and len(k.bytes) > 1
                    and any(p.bound == "latency" for p in points))):
            out.append(None)
            continue
        # the bounds by the kernel's index in the joint analysis, as its own points have it
        own = {key: bounds[key] for p in points if (key := (p.kernel_index, p.level)) in bounds}
        vector = (f"{k.name}: {VECTOR_KIND_NOTE}"
                  if any_vector and k.total_flop > 0 and vector_kind_note(roof, k)
                  else None)
        # alone, analyze() says a kernel's own notes before the datasheet note
        out.append((points, [n for n in (mix, vector, sheet_of(k)) if n], own))
    return out


def _mix_notes(roof: Roof, kernels: Sequence[Kernel], notes: Sequence[str]
               ) -> dict[int, str]:
    """By id: the weighted-ceiling note ("k: held to a weighted ...", analyze's
    weighted_words) of each mixed kernel that the joint `notes` (less the vector-unit
    note, which _batched words per kernel) name in that note only, under a name no other
    kernel has. Alone, such a kernel's notes are that one and the
    datasheet note, as _batched gives them: analysing 20 000 launches of one mixed GEMM
    one by one was ~6 s of `rooflab plot` (session 38). None where a name holds ': ' (a
    note's kernel is then not the text before its first ': '), nor on a roof with AMD's
    MAF figures, whose note (maf_note) a kernel's analysis alone adds after the datasheet
    note."""
    from collections import Counter

    from ..model.maf_note import MAF

    if (roof.name in MAF or not any(k.mixed for k in kernels)
            or any(": " in k.name for k in kernels)):
        return {}
    names = Counter(k.name for k in kernels)
    naming = Counter(name for n in notes for name in _noted_names([n]))
    mix = {who: n for n in notes
           if (who := n.partition(": ")[0]) and n.startswith(f"{who}: held to a weighted ")}
    out: dict[int, str] = {}
    for k in kernels:
        if k.mixed and names[k.name] == 1 and naming[k.name] == 1 and k.name in mix:
            out[id(k)] = mix[k.name]
    return out


def _sheet_notes(roof: Roof):
    """datasheet_note(roof, [k]) for one kernel k at a time, the same text, worded once per
    ceiling: the note is the roof's words and its ridge at the kernel's work ceiling (label
    and value), and wording it per kernel was ~1.3 s of 20 000 kernels' chart (session 36)."""
    from ..model.datasheet_note import datasheet_note, judged_on_datasheet, work_ceiling

    said: dict[tuple[str, float], str | None] = {}

    def sheet(k: Kernel) -> str | None:
        if not judged_on_datasheet(roof, [k]):
            return None
        top = work_ceiling(roof, [k])
        key = (top.label, top.value)
        if key not in said:
            said[key] = datasheet_note(roof, [k])
        return said[key]
    return sheet


def _noted_names(notes: Sequence[str]) -> set[str]:
    """Every name a note could be of: its text before each ': ' ("k: no L3 ceiling" -> k;
    a name holding ': ' itself is found too)."""
    out: set[str] = set()
    for n in notes:
        at = n.find(": ")
        while at >= 0:
            out.add(n[:at])
            at = n.find(": ", at + 1)
    return out


# The last joint analysis of a chart's kernels at every level (_batched), for the verb that
# prints the chart's notes (cli/plot.py: which are the analysis' own): analysing 100 000
# kernels again took as long as drawing them. One only, held by identity.
_LAST: list = []


def remember_analysis(roof: Roof, kernels: Sequence[Kernel], analysis: Analysis) -> None:
    """Keep `analysis`, which must be analyze(roof, kernels) itself (every level, no note
    added), for the chart of these kernels on this roof to reuse."""
    _LAST[:] = [roof, tuple(kernels), analysis]


def _held(roof: Roof, kernels: Sequence[Kernel]) -> Analysis | None:
    """The kept analysis where it is of these very kernels (the same objects, in order) on
    this very roof; None otherwise."""
    if _LAST:
        r, ks, got = _LAST
        if (r is roof and len(ks) == len(kernels)
                and all(a is b for a, b in zip(ks, kernels, strict=True))):
            return got
    return None


def chart_analysis(roof: Roof, kernels: Sequence[Kernel]) -> Analysis:
    """analyze(roof, kernels), reusing the chart's own where it analysed these very kernels
    (the same objects, in order) on this very roof at every level."""
    return _held(roof, kernels) or analyze(roof, list(kernels))
