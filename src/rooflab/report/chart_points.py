"""The kernels' points on a roofline chart, as plain data (chart.roofline_data): one per
memory level, coloured by side and sized by time share; which are above their roof,
which small ones are left out, and the arrows between them. Which are labelled is
chart_point_labels; the ceiling that judges each precision, chart_precisions (both
imported back here).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.analysis import analyze, share_totals
from ..model.ceiling import Roof
from ..model.dtype_names import move_label
from ..model.kernel import Kernel
from ..model.placement import Point, primary_points
from ..model.sanity_ceilings import applicable_launch_s
from ..name_list import cut, named
from ..units import fmt_ai, fmt_pct, fmt_rate, fmt_share, si
from .chart_batch import _alone, _Batched, _batched
from .chart_parts import (
    COMPUTE_BOUND_COLOR,
    JOIN_COLOR,
    LEVEL_MARKERS,
    MEMORY_BOUND_COLOR,
    Arrow,
    DrawnPoint,
    LaunchCap,
    Line,
    launch_cap,
)
from .chart_precisions import _precisions
from .chart_roofs import _pick, _positive_finite, is_envelope
from .marker_size import POINT_SIZE, share_size

# Kernels labelled on a crowded chart: the longest, as many as `rooflab ncu --top` lists
# by default. Every point is still drawn. An application's ncu export holds thousands of
# kernels: placing a label for each took minutes (500 kernels: 79 s) and stacked them in
# one column up through the title.
LABELS_SHOWN = 20
# the start of _above_roof_notes' note (compare's chart says it as a warning)
ABOVE_ROOF_NOTE = "point(s) above the roof that judges them:"


def time_shares(kernels: Sequence[Kernel]) -> dict[int, float]:
    """Each timed kernel's share of the time, by id, as analyze() takes it (model/analysis
    .share_totals): of the timed total; on a run of steps, of its own step's time (the
    shares ncu's and report's tables print)."""
    return {id(k): k.seconds / t for k, t in zip(kernels, share_totals(kernels), strict=True)
            if k.seconds and t > 0}


def one_kernel_per_file(kernels: Sequence[Kernel]) -> bool:
    """Kernels of two or more files (meta step_index) with one timed kernel in each: each
    holds 100 % of its own file's time, so a share says nothing of which took longer."""
    shares = time_shares(kernels)
    steps = {k.meta.get("step_index") for k in kernels}
    return len(steps) > 1 and bool(shares) and all(s == 1.0 for s in shares.values())


def _point_label(name: str, ai: float, y: float, pct: float | None, measured: bool,
                 precision: str | None = None, launch_bound: bool = False) -> str:
    """launch_bound: y is what an untimed point reaches with its launches (FLOP over
    calls x the launch floor), not its roof rate, and the label says why it is lower."""
    if not measured:
        why = " (launch-bound)" if launch_bound else ""
        return f"{name}\nAI {fmt_ai(ai)} · predicted {fmt_rate(y, precision)}{why}"
    pct_text = f"\n{fmt_pct(pct)} of roof" if pct is not None else ""
    return f"{name}\nAI {fmt_ai(ai)} · {fmt_rate(y, precision)}{pct_text}"


def launch_bound_rate(p: Point, launch: float | None = None) -> float | None:
    """Where the chart draws an untimed point whose launches take longer than its work at
    the roof: FLOP / (calls x the launch floor); None for any other point (drawn at its
    achieved or attainable rate). The HTML hover says the same (html_hover). launch:
    sanity_ceilings.applicable_launch_s(p), where the caller has it."""
    launch = applicable_launch_s(p) if launch is None else launch
    if p.achieved_flop_per_s is not None or p.flop <= 0 or launch <= p.floor_s:
        return None
    return p.flop / launch


def _kernel_points(roof: Roof, kernel: Kernel, level: str | None, index: int = -1,
                   share: float | None = None, size: float = POINT_SIZE,
                   precision_named: bool = False, batched: _Batched | None = None
                   ) -> tuple[list[DrawnPoint], list[str], list[LaunchCap]]:
    """The points one kernel puts on the chart, one per memory level (or just `level`),
    its notes, and its launch cap over its labelled point where it matters
    (chart_parts.launch_cap; none, or one). index: the kernel's place among those drawn;
    share, size: its share of the timed total and its markers' diameter; precision_named:
    its label names its precision ("k71 · fp16": the chart holds several). batched: this
    kernel's points, notes and bounds out of one analyze() of every kernel (_batched), the
    same as analysing it alone gives; None analyses it alone."""
    notes: list[str] = []
    caps: list[LaunchCap] = []
    if level is not None and level not in kernel.bytes:
        return [], [f"{kernel.name}: no bytes at {level}; not drawn"], caps
    if batched is not None:
        points, kernel_notes, bounds = batched
        notes.extend(kernel_notes)
    else:
        points, bounds = _alone(roof, kernel, level, notes)
    primary = {(p.kernel, p.level) for p in primary_points(points).values()}
    several = len(points) > 1
    out: list[DrawnPoint] = []
    for p in points:
        measured = p.achieved_flop_per_s is not None
        y = p.achieved_flop_per_s if measured else p.attainable_flop_per_s
        # An untimed point whose launches take longer than its work (review 12d E:
        # "predicted 26.4 TFLOP/s" over a 5 us launch that caps it at 0.82) reaches FLOP /
        # max(work, calls x launch floor), and is drawn there at every level (review 18c
        # F4: drawn at its roof rate, it sat 170x above the rate its own label gave).
        reach = launch_bound_rate(p) or y
        if p.flop <= 0 and p.bytes > 0:   # a memory op: named under the chart instead
            notes.append(f"{kernel.name}: no FLOP, so no AI to place on the log axes; not "
                         f"drawn: the chart names it under its axis with the bytes/s it "
                         f"moved")
            continue
        if not (_positive_finite(p.ai) and _positive_finite(y)):
            notes.append(f"{kernel.name} at {p.level}: AI {p.ai:g} cannot sit on log axes "
                         f"(zero FLOP or zero bytes); not drawn")
            continue
        pct = None if is_envelope(roof) else p.percent_of_roof
        side = "memory" if p.memory_bound_side else "compute"
        color = MEMORY_BOUND_COLOR if side == "memory" else COMPUTE_BOUND_COLOR
        if (p.kernel, p.level) in primary:
            name = f"{kernel.name} [{p.level}]" if several else kernel.name
            # (not where the name says it already: gemm_fp32_2048)
            if precision_named and kernel.precision not in kernel.name.lower():
                name += f" · {kernel.precision}"
            label = _point_label(name, p.ai, reach, pct, measured, p.precision,
                                 launch_bound=reach < y)
            # over the labelled point only: the cap is one height for every level, and
            # that point's roof is the kernel's lowest (its work floor the longest). It is
            # weighed against the point's own height, not its roof: a lid within
            # CAP_SHOWN x the marker sits on it; one decades above or below said nothing.
            cap = launch_cap(kernel.name, p.level, p.ai, p.flop, p.calls, roof.overhead_s,
                             reach, color, p.seconds, gpu_side=p.gpu_side)
            caps.extend([cap] if cap is not None else [])
        else:
            label = p.level
        out.append(DrawnPoint(kernel=kernel.name, level=p.level, ai=p.ai, flop_per_s=reach,
                              color=color, measured=measured,
                              marker=LEVEL_MARKERS.get(p.level, "o"), label=label,
                              bound=bounds.get((p.kernel_index, p.level), p.bound),
                              percent_of_roof=pct,
                              # a profiler step is named by its file ("output4"), so the
                              # chart's steps match the table's "[output4]" rows
                              step=str(kernel.meta.get("step_label")
                                       or kernel.meta.get("step") or ""),
                              side=side, kernel_index=index, size=size, share=share))
    return out, notes, caps


def _all_points(to_draw: Sequence[Kernel], judges: Sequence[Roof], level: str | None,
                shares: dict[int, float], sized: bool
                ) -> tuple[list[list[DrawnPoint]], list[str], list[LaunchCap]]:
    """Each kernel's points on the roof that judges it (one list per kernel, in order),
    with the notes and launch caps they bring; sized: markers by share_size, else
    POINT_SIZE."""
    per_kernel: list[list[DrawnPoint]] = []
    notes: list[str] = []
    caps: list[LaunchCap] = []
    # Kernels of several precisions sit under different flat roofs (fp16 dots above the
    # fp32 line, review 18c F7): each label then names its kernel's precision, and the
    # legend which ceiling judges each (precision_ceilings).
    named = len(_precisions(to_draw)) > 1
    batched: dict[int, _Batched | None] = {}
    for roof in {id(r): r for r in judges}.values():   # one analysis per judging roof
        mine = [k for k, on in zip(to_draw, judges, strict=True) if on is roof]
        batched.update(zip(map(id, mine), _batched(roof, mine, level), strict=True))
    for i, (k, on) in enumerate(zip(to_draw, judges, strict=True)):
        share = shares.get(id(k))
        pts, kn, kc = _kernel_points(on, k, level, i, share,
                                     share_size(share) if sized else POINT_SIZE, named,
                                     batched.get(id(k)))
        per_kernel.append(pts)
        notes.extend(kn)
        caps.extend(kc)
    return per_kernel, notes, caps


def _drop_small(kernels: list[Kernel], shares: dict[int, float], min_share: float | None,
                arrows: Sequence[tuple[Kernel, Kernel]]) -> tuple[list[Kernel], str]:
    """The kernels at or over min_share of the timed total (every one when None or 0), and
    the note saying how many were left out (Advisor's "show loops over X % of the time":
    the long tail of an application's thousands of kernels). An arrow's kernels are kept
    (the arrow needs both ends), and untimed ones (they have no share to judge)."""
    if not min_share:
        return kernels, ""
    pinned = {id(k) for pair in arrows for k in pair}
    small = {id(k) for k in kernels
             if id(k) not in pinned and id(k) in shares and shares[id(k)] < min_share}
    if not small:
        return kernels, ""
    gone = sum(shares[i] for i in small)
    pct = f"{100 * min_share:g}"
    n = len(small)
    return ([k for k in kernels if id(k) not in small],
            f"{n} kernel{'s' if n != 1 else ''} under {pct} % of the time not drawn "
            f"(together {_pct(gone)} of it; --min-share 0 draws every one)")


def _pct(share: float) -> str:
    """A share of the time as every share prints (units.fmt_share: '35.6 %', a speck
    above zero two figures, '0.035 %', not '0.0 %')."""
    return fmt_share(share)


def _level_joins(per_kernel: Sequence[Sequence[DrawnPoint]]) -> list[Line]:
    """A thin grey line through each kernel's points at its memory levels, in order of AI
    (a timed kernel's are at one height, FLOP / time: a flat run from its L1 to its DRAM
    point), so that on a crowded chart its triangle, square and circle read as one kernel.
    Nothing for a kernel drawn at one level."""
    out = []
    for pts in per_kernel:
        if len(pts) < 2:
            continue
        ordered = sorted(pts, key=lambda p: p.ai)
        out.append(Line(label=pts[0].kernel, xs=tuple(p.ai for p in ordered),
                        ys=tuple(p.flop_per_s for p in ordered), style="solid",
                        kind="levels", color=JOIN_COLOR))
    return out


def _above_roof_notes(points: Sequence[DrawnPoint], kernels: Sequence[Kernel] = (),
                      judges: Sequence[Roof] = ()) -> list[str]:
    """Points drawn above the roof that judges them: impossible on a correct roof with
    correct counts, so the chart says so rather than only printing '263% of roof'.
    kernels, judges: the drawn kernels and the roof judging each (by the points'
    kernel_index), to name the ceiling each point is above."""
    from .chart_words import above_roof  # chart's rule (the CLI and the HTML report read it)

    over = [p for p in points if above_roof(p)]
    if not over:
        return []
    found = _over_points(over, kernels, judges)
    if cut(len(over)):   # a long list is cut to the furthest above (review s23 r5 F4)
        over = sorted(over, key=lambda p: -(p.percent_of_roof or 0.0))
    names = named((f"{p.kernel} {fmt_pct(p.percent_of_roof)} of "
                   f"{_exceeded(p, kernels, judges, found)}" for p in over),
                  where="`rooflab report --json` lists them")
    return [f"{len(over)} {ABOVE_ROOF_NOTE} {names}; a roof too "
            f"low (a probe disturbed by other load), bytes served by a faster memory level "
            f"than the one they are counted at, or a counting error; `rooflab report` "
            f"checks each"]


def _over_points(over: Sequence[DrawnPoint], kernels: Sequence[Kernel],
                 judges: Sequence[Roof]) -> dict[tuple[int, str], Point]:
    """The analysis point of each drawn point above its roof, by (kernel_index, level): one
    analyze() per judging roof of the kernels above it (a point is its kernel's alone;
    720 kernels above a datasheet roof were 720 analyses)."""
    mine: dict[int, tuple[Roof, dict[int, Kernel]]] = {}
    for p in over:
        if 0 <= p.kernel_index < min(len(kernels), len(judges)):
            on = judges[p.kernel_index]
            mine.setdefault(id(on), (on, {}))[1][p.kernel_index] = kernels[p.kernel_index]
    out: dict[tuple[int, str], Point] = {}
    for on, by_index in mine.values():
        joint = analyze(on, list(by_index.values()))
        for i, k in by_index.items():
            out.update({(i, q.level): q for q in joint.points_of(k)})
    return out


def _exceeded(p: DrawnPoint, kernels: Sequence[Kernel], judges: Sequence[Roof],
              found: dict[tuple[int, str], Point] | None = None) -> str:
    """The ceiling a point above its roof exceeds, with its value: 'fp64 tensor 19.5
    TFLOP/s (bytes at DRAM)' right of its ridge, 'DRAM 6.33 GB/s x AI 0.0833' left of it.
    Review 19c N9: '[DRAM] 123%' read as DRAM judging a point held by fp64 tensor. found:
    _over_points' analysis of it, where made."""
    if not 0 <= p.kernel_index < min(len(kernels), len(judges)):
        return f"its roof [{p.level}]"
    q = (found or {}).get((p.kernel_index, p.level))
    if q is None:
        (q,) = analyze(judges[p.kernel_index], [kernels[p.kernel_index]],
                       levels=[p.level]).points
    if q.memory_bound_side:
        return f"{q.binding} {si(q.bytes_per_s, 'B/s')} x AI {fmt_ai(q.ai)}"
    return f"{q.binding} {fmt_rate(q.peak_flop_per_s, q.precision)} (bytes at {p.level})"


def _pair_arrows(arrows, level, to_draw, per_kernel) -> list[Arrow]:
    out = []
    for before, after in arrows:
        a = _pick(per_kernel[_index(to_draw, before)], level)
        b = _pick(per_kernel[_index(to_draw, after)], a.level if a else level)
        if a is None or b is None:
            continue
        # a name kept and marked for its new dtype is shown once (model/dtype_names)
        label = (after.name if move_label(before.name, after.name) == after.name
                 else f"{before.name} → {after.name}")
        out.append(Arrow(label=label, start=(a.ai, a.flop_per_s), end=(b.ai, b.flop_per_s)))
    return out


def _index(seq: list[Kernel], k: Kernel) -> int:
    return next(i for i, d in enumerate(seq) if d is k)


def _trajectory_arrows(to_draw, per_kernel, level) -> list[Arrow]:
    """Join the kernels that share a name, in the order given (e.g. optimisation steps)."""
    last: dict[str, DrawnPoint] = {}
    out = []
    for k, pts in zip(to_draw, per_kernel, strict=True):
        p = _pick(pts, last[k.name].level if k.name in last else level)
        if p is None:
            continue
        prev = last.get(k.name)
        if prev is not None:
            out.append(Arrow(label=k.name, start=(prev.ai, prev.flop_per_s),
                             end=(p.ai, p.flop_per_s), kind="trajectory"))
        last[k.name] = p
    return out
