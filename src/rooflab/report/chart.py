"""Roofline charts: compute what to draw as plain data, then draw it with matplotlib.

The shape follows scikit-learn's Display objects (sklearn/inspection/_plot): a pure
function works out every line, ridge and point (`RooflineDisplay.lines/ridges/points`,
which the tests read), and `RooflineDisplay.plot(ax=None)` draws them, importing
matplotlib only then and returning the display with `figure_` and `ax_` set.

Conventions (ARCHITECTURE.md, seed 004): log-log axes; nominal ceilings dashed, measured
ceilings solid; memory-bound kernels indigo, compute-bound amber; a kernel without a
measured time is drawn hollow at its attainable height (predicted, not measured).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError
from ..files import write_atomic
from ..model.analysis import analyze
from ..model.ceiling import FLOAT_PRECISIONS, Ceiling, Roof
from ..model.kernel import Kernel
from ..units import fmt_ai, si

MEMORY_BOUND_COLOR = "#2b53d8"   # indigo: left of the ridge (seed 004's colour convention)
COMPUTE_BOUND_COLOR = "#b26a12"  # amber: right of the ridge
SWEEP_COLOR = "#9a9a9a"
# One colour per roof, in the order given: the first (the one kernels are judged by) darkest.
ROOF_COLORS = ("#333333", "#8c8c8c", "#1b8a6b", "#8e3fb0", "#c0392b", "#5f7f1f", "#0f6e8c")
LEVEL_MARKERS = {"L1": "^", "L2": "s", "L3": "D", "DRAM": "o", "PCIe": "P", "NVLink": "X",
                 "network": "*", "loopback": "h"}
SUFFIXES = (".png", ".svg")
# A roof with more compute ceilings than this is drawn with a selection by default (a
# catalog GPU has up to 9: fp64/fp32/tf32/fp16/bf16/fp8/int8/int4, vector and tensor).
MAX_CEILINGS = 5
# Point labels: the full three-line label up to this many labelled points, one line after.
FULL_LABELS = 8


@dataclass(frozen=True)
class Line:
    """A drawn line. style: solid (measured), dashed (nominal), or dotted (sweep)."""

    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    style: str
    kind: str              # compute | memory | sweep
    roof: str = ""
    color: str = ""
    # Where the label goes (laid out by roofline_data so labels do not collide): the text
    # ("" = unlabelled, e.g. a ceiling equal to another of its roof that carries both
    # names), its anchor in data coordinates, an offset in points, and its alignment.
    text: str = ""
    label_xy: tuple[float, float] | None = None
    label_offset: tuple[float, float] = (0.0, 0.0)
    label_ha: str = "left"
    label_va: str = "bottom"


@dataclass(frozen=True)
class Ridge:
    """A marked ridge point AI* = P / B."""

    label: str
    ai: float
    flop_per_s: float
    roof: str = ""
    compute: str = ""
    level: str = ""
    label_offset: tuple[float, float] = (4.0, -11.0)   # points, from the ridge
    label_ha: str = "left"
    label_va: str = "baseline"


@dataclass(frozen=True)
class DrawnPoint:
    """A kernel at one memory level; flop_per_s is achieved, or attainable when predicted."""

    kernel: str
    level: str
    ai: float
    flop_per_s: float
    color: str
    measured: bool = True
    marker: str = "o"
    label: str = ""
    bound: str = ""
    percent_of_roof: float | None = None
    text: str = ""                 # the label as drawn ("" = none; label keeps the full one)
    label_offset: tuple[float, float] = (7.0, -8.0)    # points, from the point
    label_ha: str = "left"
    label_va: str = "top"


@dataclass(frozen=True)
class Arrow:
    """From one point to another: a before -> after pair, or one step of a trajectory."""

    label: str
    start: tuple[float, float]
    end: tuple[float, float]
    kind: str = "arrow"    # arrow | trajectory


@dataclass
class RooflineDisplay:
    """Everything a roofline chart shows, as data; `plot()` draws it."""

    roofs: tuple[Roof, ...]
    lines: tuple[Line, ...]
    ridges: tuple[Ridge, ...]
    points: tuple[DrawnPoint, ...]
    arrows: tuple[Arrow, ...] = ()
    xlim: tuple[float, float] = (0.01, 1e4)
    ylim: tuple[float, float] = (1e9, 1e15)
    title: str = ""
    notes: tuple[str, ...] = ()
    roof_labels: tuple[str, ...] = ()
    kernels: tuple[Kernel, ...] = ()   # every kernel drawn, arrows' included, in order
    hidden: tuple[str, ...] = ()       # compute ceilings left out, as "roof: label"
    figure_: object = field(default=None, repr=False)
    ax_: object = field(default=None, repr=False)

    def plot(self, ax=None) -> RooflineDisplay:
        """Draw on `ax` (a new figure when None); returns self with figure_ and ax_ set."""
        from .chart_draw import draw  # matplotlib is imported only here

        self.figure_, self.ax_ = draw(self, ax)
        return self

    def _repr_png_(self) -> bytes:  # Jupyter shows the chart inline
        return figure_bytes(self, "png")


def roof_label(roof: Roof) -> str:
    return roof.name if roof.kind in roof.name else f"{roof.name} ({roof.kind})"


def _style(c: Ceiling) -> str:
    return "solid" if c.provenance == "measured" else "dashed"


def _reference_level(roof: Roof, level: str | None) -> str | None:
    """The level ridges are marked against: the chosen one, DRAM, else the slowest."""
    levels = roof.levels
    if level in levels:
        return level
    if "DRAM" in levels:
        return "DRAM"
    return min(roof.memory, key=lambda c: c.value).level if roof.memory else None


def _positive_finite(x: float | None) -> bool:
    return x is not None and 0 < x < math.inf


def _ridges(roofs: Sequence[Roof], kept: Sequence[tuple[Ceiling, ...]],
            kernels: Sequence[Kernel], level: str | None,
            sweep_precision: str | None = None) -> list[Ridge]:
    out: list[Ridge] = []
    for roof, drawn in zip(roofs, kept, strict=True):
        ref = _reference_level(roof, level)
        if ref is None or not drawn:
            continue
        mem = roof.bandwidth(ref)
        # The kernels' own ceilings first: the first ridge is the one that judges them; then
        # the top ceiling drawn. A ceiling left out of the chart gets no ridge.
        ceilings = [roof.compute_for(k.precision, k.unit)[0] for k in kernels]
        if sweep_precision and roof.find_compute(sweep_precision):   # the sweep's knee
            ceilings.append(roof.find_compute(sweep_precision))
        ceilings = [c for c in ceilings if c in drawn] + [max(drawn, key=lambda c: c.value)]
        seen: set[float] = set()
        for c in dict.fromkeys(ceilings):
            if c.value in seen:   # equal ceilings (A100 bf16 = fp16 tensor): one ridge
                continue
            seen.add(c.value)
            ai = c.value / mem.value
            label = f"{c.label} / {ref}: AI* = {fmt_ai(ai)}"
            out.append(Ridge(label=label, ai=ai, flop_per_s=c.value, roof=roof_label(roof),
                             compute=c.label, level=ref))
    return out


def _point_label(name: str, ai: float, y: float, pct: float | None, measured: bool) -> str:
    if not measured:
        return f"{name}\nAI {fmt_ai(ai)} · predicted {si(y, 'FLOP/s')}"
    pct_text = f"\n{pct:.0f}% of roof" if pct is not None else ""
    return f"{name}\nAI {fmt_ai(ai)} · {si(y, 'FLOP/s')}{pct_text}"


def kernel_points(roof: Roof, kernel: Kernel, level: str | None = None
                  ) -> tuple[list[DrawnPoint], list[str]]:
    """The points one kernel puts on the chart: one per memory level (or just `level`)."""
    notes: list[str] = []
    if level is not None and level not in kernel.bytes:
        return [], [f"{kernel.name}: no bytes at {level}; not drawn"]
    analysis = analyze(roof, [kernel], levels=[level] if level else None)
    notes.extend(analysis.notes)
    primary = {(p.kernel, p.level) for p in analysis.primary()}
    several = len(analysis.points) > 1
    out: list[DrawnPoint] = []
    for p in analysis.points:
        measured = p.achieved_flop_per_s is not None
        y = p.achieved_flop_per_s if measured else p.attainable_flop_per_s
        if not (_positive_finite(p.ai) and _positive_finite(y)):
            notes.append(f"{kernel.name} at {p.level}: AI {p.ai:g} cannot sit on log axes "
                         f"(zero FLOP or zero bytes); not drawn")
            continue
        if (p.kernel, p.level) in primary:
            name = f"{kernel.name} [{p.level}]" if several else kernel.name
            label = _point_label(name, p.ai, y, p.percent_of_roof, measured)
        else:
            label = p.level
        color = MEMORY_BOUND_COLOR if p.ai < p.ridge else COMPUTE_BOUND_COLOR
        out.append(DrawnPoint(kernel=kernel.name, level=p.level, ai=p.ai, flop_per_s=y,
                              color=color, measured=measured,
                              marker=LEVEL_MARKERS.get(p.level, "o"), label=label,
                              bound=p.bound, percent_of_roof=p.percent_of_roof))
    return out, notes


def _pick(points: list[DrawnPoint], level: str | None) -> DrawnPoint | None:
    """The point an arrow or a trajectory goes through: the chosen level, DRAM, else first."""
    for want in (level, "DRAM"):
        for p in points:
            if p.level == want:
                return p
    return points[0] if points else None


def _limits(roofs, ridge_ais, points, sweep):
    xs = [p.ai for p in points] + [x for x, _ in sweep] + ridge_ais
    ceilings = [c.value for r in roofs for c in r.compute]
    ys = [p.flop_per_s for p in points] + [y for _, y in sweep] + ceilings
    xs = [x for x in xs if _positive_finite(x)] or [0.1, 100.0]
    ys = [y for y in ys if _positive_finite(y)] or [1e9, 1e12]
    # Margins: a factor 4 beyond the data, and at least two decades of slope left of the
    # lowest ridge and one decade of flat roof right of the highest, so both parts show.
    ridges = [x for x in ridge_ais if _positive_finite(x)] or xs
    x_lo = min(min(xs) / 4, min(ridges) / 100)
    x_hi = max(max(xs) * 4, max(ridges) * 10)
    bws = [c.value for r in roofs for c in r.memory]
    slope_lo = [b * x_lo for b in bws]
    y_lo = min([min(ys) / 4, *slope_lo])   # the slopes start at the bottom-left corner
    y_hi = max(ys) * 4
    return (x_lo, x_hi), (y_lo, y_hi)


def _roof_lines(roof: Roof, color: str, xlim: tuple[float, float]) -> list[Line]:
    x_lo, x_hi = xlim
    label = roof_label(roof)
    lines = []
    fastest = max((c.value for c in roof.memory), default=None)
    top = roof.top_compute.value if roof.compute else None
    # Slopes run from the left edge to where they meet the top compute ceiling; compute
    # ceilings run from the fastest slope to the right edge, so every ceiling is visible.
    for m in roof.memory:
        x_end = top / m.value if top else x_hi
        lines.append(Line(label=f"{m.level} {si(m.value, 'B/s')}", xs=(x_lo, x_end),
                          ys=(m.value * x_lo, m.value * x_end), style=_style(m),
                          kind="memory", roof=label, color=color))
    for c in roof.compute:
        x_start = c.value / fastest if fastest else x_lo
        lines.append(Line(label=f"{c.label} {si(c.value, 'FLOP/s')}", xs=(x_start, x_hi),
                          ys=(c.value, c.value), style=_style(c), kind="compute",
                          roof=label, color=color))
    return lines


def roofline_data(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None) -> RooflineDisplay:
    """Work out the chart without drawing it (pure; matplotlib is not imported).

    sweep_precision: the precision the sweep's kernel computes in (the CPU probe's is
    fp64); its ridge is marked, since the sweep should bend there."""
    roofs = tuple(roofs)
    if not roofs:
        raise InputError("a roofline chart needs at least one roof; pass --on HARDWARE|PROFILE")
    judge = roofs[0]
    to_draw: list[Kernel] = []
    for k in list(kernels) + [k for pair in arrows for k in pair]:
        if not any(k is d for d in to_draw):
            to_draw.append(k)
    notes: list[str] = []
    per_kernel: list[list[DrawnPoint]] = []
    for k in to_draw:
        pts, kn = kernel_points(judge, k, level)
        per_kernel.append(pts)
        notes.extend(kn)
    points = [p for pts in per_kernel for p in pts]
    kept, hidden, sel_notes = select_ceilings(roofs, to_draw, precisions)
    notes.extend(sel_notes)
    shown = [replace(r, compute=c) for r, c in zip(roofs, kept, strict=True)]
    ridges = _ridges(roofs, kept, to_draw, level, sweep_precision)
    ridge_ais = [r.ai for r in ridges] + [c.value / m.value for r in shown for c in r.compute
                                          for m in r.memory]
    sweep = [(float(x), float(y)) for x, y in sweep]
    xlim, ylim = _limits(shown, ridge_ais, points, sweep)
    lines: list[Line] = []
    for i, roof in enumerate(shown):
        lines.extend(_roof_lines(roof, ROOF_COLORS[i % len(ROOF_COLORS)], xlim))
    good_sweep = [(x, y) for x, y in sweep if _positive_finite(x) and _positive_finite(y)]
    if good_sweep:
        what = f"intensity sweep {sweep_precision}" if sweep_precision else "intensity sweep"
        lines.append(Line(label=f"{what} (measured)", xs=tuple(x for x, _ in good_sweep),
                          ys=tuple(y for _, y in good_sweep), style="dotted", kind="sweep",
                          color=SWEEP_COLOR))
    drawn_arrows = _pair_arrows(arrows, level, to_draw, per_kernel)
    if trajectory:
        drawn_arrows += _trajectory_arrows(to_draw, per_kernel, level)
    if title is None:
        title = "Roofline: " + " vs ".join(roof_label(r) for r in roofs)
    labels = tuple(roof_label(r) for r in roofs)
    lines, ridges, points = layout_labels(lines, ridges, _point_texts(points, trajectory),
                                          xlim, ylim, labels, good_sweep)
    return RooflineDisplay(roofs=roofs, lines=tuple(lines), ridges=tuple(ridges),
                           points=tuple(points), arrows=tuple(drawn_arrows), xlim=xlim,
                           ylim=ylim, title=title, notes=tuple(dict.fromkeys(notes)),
                           roof_labels=labels, kernels=tuple(to_draw), hidden=tuple(hidden))


def _top_float(roof: Roof) -> Ceiling:
    floats = [c for c in roof.compute if c.precision in FLOAT_PRECISIONS]
    return max(floats or roof.compute, key=lambda c: c.value)


def _auto_ceilings(roof: Roof, kernels: Sequence[Kernel]) -> tuple[Ceiling, ...]:
    """The default selection for a roof with many ceilings: with kernels, the ceilings they
    are judged by plus the top float ceiling; without, the fastest unit of each precision."""
    if kernels:
        want = {roof.compute_for(k.precision, k.unit)[0] for k in kernels}
        top = _top_float(roof)
        if top.value > max(c.value for c in want):   # not a second name for the same height
            want.add(top)
    else:
        want = {roof.find_compute(p) for p in roof.precisions}
    return tuple(c for c in roof.compute if c in want)


def select_ceilings(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (),
                    precisions: Sequence[str] | str | None = None
                    ) -> tuple[list[tuple[Ceiling, ...]], list[str], list[str]]:
    """Which compute ceilings of each roof to draw: (kept per roof, hidden, notes).

    precisions: None picks automatically (every ceiling, unless a roof has more than
    MAX_CEILINGS); "all" draws every one; else precisions ("fp16") or ceiling labels
    ("fp16 tensor") to draw.
    """
    if isinstance(precisions, str):
        precisions = [precisions]
    wanted = [p.strip().lower() for p in precisions or () if p.strip()]
    every = not wanted and precisions is not None or "all" in wanted
    if wanted and not every:
        have = {c.precision.lower() for r in roofs for c in r.compute} | {
            c.label.lower() for r in roofs for c in r.compute}
        missing = [p for p in wanted if p not in have]
        if missing:
            names = ", ".join(sorted({c.precision for r in roofs for c in r.compute})) or "none"
            raise InputError(f"no roof has a '{missing[0]}' compute ceiling; the roofs have: "
                             f"{names} (or 'all')")
    kept, hidden, notes = [], [], []
    for roof in roofs:
        if every or (not wanted and len(roof.compute) <= MAX_CEILINGS):
            chosen = roof.compute
        elif wanted:
            chosen = tuple(c for c in roof.compute
                           if c.precision.lower() in wanted or c.label.lower() in wanted)
            if roof.compute and not chosen:
                notes.append(f"{roof_label(roof)} has none of the precisions asked "
                             f"({', '.join(wanted)}); its compute ceilings are not drawn")
        else:
            chosen = _auto_ceilings(roof, kernels)
        left_out = [c for c in roof.compute if c not in chosen]
        if left_out and not (wanted and not chosen):
            hidden += [f"{roof_label(roof)}: {c.label} {si(c.value, 'FLOP/s')}"
                       for c in left_out]
            why = "asked for" if wanted else ("kernels' precisions and the top float ceiling"
                                              if kernels else "fastest unit per precision")
            notes.append(f"{roof_label(roof)}: drawn {len(chosen)} of {len(roof.compute)} "
                         f"compute ceilings ({why}); left out "
                         f"{', '.join(c.label for c in left_out)}; show every one with "
                         f"--precision all (precisions='all')")
        kept.append(tuple(chosen))
    return kept, hidden, notes


# --- label layout --------------------------------------------------------------------
# Labels are placed in a model of the default 9 x 6 in figure (axes about 550 x 378 pt;
# 7 pt text is 3.7-4.5 pt per character, digits widest, and 8.6 pt per line, measured
# with matplotlib's Agg; 4.3 errs wide), so the layout is plain data the tests can check;
# on other axes sizes it is approximate.
AXES_PT = (550.0, 378.0)   # 550-557 wide, as the tick labels' width varies
CHAR_PT, LINE_PT = 4.3, 8.6


def _to_pt(x, y, xlim, ylim):
    return (AXES_PT[0] * math.log(x / xlim[0]) / math.log(xlim[1] / xlim[0]),
            AXES_PT[1] * math.log(y / ylim[0]) / math.log(ylim[1] / ylim[0]))


def _box(anchor, offset, ha, va, text):
    """The (left, bottom, right, top) box, in points, of a text placed like matplotlib."""
    rows = text.split("\n")
    w, h = CHAR_PT * max(len(r) for r in rows), LINE_PT * len(rows)
    x, y = anchor[0] + offset[0], anchor[1] + offset[1]
    left = x if ha == "left" else x - w if ha == "right" else x - w / 2
    bottom = y if va in ("bottom", "baseline") else y - h if va == "top" else y - h / 2
    return (left, bottom, left + w, bottom + h)


def _overlap(a, b) -> float:
    dx = min(a[2], b[2]) - max(a[0], b[0])
    dy = min(a[3], b[3]) - max(a[1], b[1])
    return dx * dy if dx > 0 and dy > 0 else 0.0


def _cost(box, placed, soft=()) -> float:
    inside = (max(box[0], 0), max(box[1], 0), min(box[2], AXES_PT[0]), min(box[3], AXES_PT[1]))
    area = (box[2] - box[0]) * (box[3] - box[1])
    outside = area - max(inside[2] - inside[0], 0) * max(inside[3] - inside[1], 0)
    # A line through a label is a lesser fault than two labels on top of each other.
    # Any overlap with a label or marker costs 200 on top of its area: a touch is a fault.
    hard = sum(200 + a for a in (_overlap(box, b) for b in placed) if a > 0)
    return 4 * outside + hard + 0.15 * sum(_overlap(box, b) for b in soft)


def _crosses(a, b, c, d) -> bool:
    """Whether segments ab and cd cross (strictly)."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _place(anchor, text, candidates, placed, soft=(), leaders=None):
    """The candidate (offset, ha, va, penalty) with the least cost: overlap with the labels
    and markers placed so far (and, less, with lines) plus the candidate's own penalty for
    straying from where the label belongs. Its box joins `placed`. Deterministic.
    leaders: the leader lines drawn so far, for labels placed away from their point; a
    leader that would cross one costs a little (less than any overlap)."""
    best = None
    for offset, ha, va, penalty in sorted(candidates, key=lambda c: c[3]):
        if best is not None and penalty >= best[0]:
            break   # costs never go below the penalty: no later candidate can win
        box = _box(anchor, offset, ha, va, text)
        cost = _cost(box, placed, soft) + penalty
        end = (anchor[0] + offset[0], anchor[1] + offset[1])
        if leaders is not None and max(abs(offset[0]), abs(offset[1])) > 12:
            cost += 20 * sum(_crosses(anchor, end, a, b) for a, b in leaders)
        if best is None or cost < best[0]:
            best = (cost, offset, ha, va, box, end)
    placed.append(best[4])
    if leaders is not None and max(abs(best[1][0]), abs(best[1][1])) > 12:
        leaders.append((anchor, best[5]))
    return best[1], best[2], best[3]


def _marker_box(xy, r=4.5):
    return (xy[0] - r, xy[1] - r, xy[0] + r, xy[1] + r)


def _line_boxes(lines, pt) -> list[tuple[float, float, float, float]]:
    """Thin boxes along the roof lines, so a label is not struck through by another line."""
    out = []
    for ln in lines:
        (x0, y0), (x1, y1) = pt(ln.xs[0], ln.ys[0]), pt(ln.xs[-1], ln.ys[-1])
        if ln.kind == "compute":
            out.append((x0, y0 - 0.6, x1, y0 + 0.6))
        elif ln.kind == "memory":
            n = max(int((x1 - x0) / 6), 1)
            out += [_marker_box((x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n), 1.0)
                    for i in range(n + 1)]
    return out


def _slope_boxes(anchor, text, angle):
    """A rotated label as a chain of small boxes along its baseline, just above the line."""
    u = (math.cos(angle), math.sin(angle))
    n = (-u[1], u[0])
    steps = max(int(CHAR_PT * len(text) / 7), 1)
    return [_marker_box((anchor[0] + u[0] * (7 * k + 3.5) + n[0] * 5,
                         anchor[1] + u[1] * (7 * k + 3.5) + n[1] * 5), 3.5)
            for k in range(steps)]


def _place_slope_label(ln, lines, roof_labels, pt, xlim, ylim, placed, soft):
    """A slope's label along its line: first where each roof and level has its own stretch
    (x 3, x 4 per roof, x 1.6 per level), else the least crowded spot along the slope."""
    angle = math.atan2(AXES_PT[1] / math.log10(ylim[1] / ylim[0]),
                       AXES_PT[0] / math.log10(xlim[1] / xlim[0]))
    text = " " + ln.label
    r = roof_labels.index(ln.roof) if ln.roof in roof_labels else 0
    mem = [m.label for m in lines if m.roof == ln.roof and m.kind == "memory"]
    first = 3.0 * 4.0 ** r * 1.6 ** (mem.index(ln.label) if ln.label in mem else 0)
    span = ln.xs[1] / ln.xs[0]
    shifts = [first] + [f for f in (1.5, 3.0, 6.0, 12.0, 25.0, 50.0, 100.0, 200.0, 400.0)
                        if f != first]
    best = None
    for j, f in enumerate(s for s in shifts if s < span / 2 or s == first):
        xy = (ln.xs[0] * f, ln.ys[0] * f)
        boxes = _slope_boxes(pt(*xy), text, angle)
        cost = sum(_cost(b, placed, soft) for b in boxes) + 2.0 * j
        if best is None or cost < best[0]:
            best = (cost, xy, boxes)
    placed.extend(best[2])
    return replace(ln, label_xy=best[1])


def layout_labels(lines, ridges, points, xlim, ylim, roof_labels, sweep=()):
    """Place ceiling, ridge and point labels so that none overlaps another or a marker:
    ceilings first (just above their line, else below it, else slid along it, else pushed
    away), then ridges, then points (around the point, further out with a leader line)."""
    pt = lambda x, y: _to_pt(x, y, xlim, ylim)  # noqa: E731
    placed = [_marker_box(pt(p.ai, p.flop_per_s)) for p in points]
    placed += [_marker_box(pt(r.ai, r.flop_per_s)) for r in ridges]
    placed += [_marker_box(pt(x, y), 2.5) for x, y in sweep]
    soft = _line_boxes(lines, pt)
    same: dict[tuple[str, float], list[str]] = {}
    for ln in lines:   # equal ceilings of one roof (A100: fp32 vector = fp64 tensor) share one
        if ln.kind == "compute":
            same.setdefault((ln.roof, ln.ys[0]), []).append(ln.label)
    out_lines = list(lines)
    # Lowest ceiling first, so a crowded stack grows upwards in order.
    for i in sorted(range(len(lines)), key=lambda i: (lines[i].kind != "compute", lines[i].ys[0])):
        ln = lines[i]
        group = same.get((ln.roof, ln.ys[0]), [])
        if ln.kind != "compute" or group[0] != ln.label:
            out_lines[i] = replace(ln, text=ln.label if ln.kind == "memory" else "")
            continue
        # "bf16 tensor, fp16 tensor 312 TFLOP/s": the names, then the one value.
        value = " ".join(group[0].split()[-2:])
        text = " " + ", ".join(g.rsplit(" ", 2)[0] for g in group) + f" {value} "
        first = roof_labels[:1] == (ln.roof,)
        # The judging roof labels its ceilings at the right edge, the others at their left
        # end, so two roofs with similar peaks do not print on top of each other.
        xy, ha = (((ln.xs[1], ln.ys[1]), "right") if first
                  else ((ln.xs[0] * 1.15, ln.ys[0]), "left"))
        anchor = pt(*xy)
        w = CHAR_PT * len(text) + 6
        along = -1 if first else 1
        room = abs(anchor[0] - pt(ln.xs[0 if first else 1], ln.ys[0])[0])
        slides = [along * w * k for k in (1, 2) if w * (k + 1) <= room]
        if not first:   # or right-aligned at the right edge, like the judging roof's
            slides.append(pt(ln.xs[1], ln.ys[1])[0] - anchor[0] - w + 6)
        cands = [((dx, dy), ha, va, 6.0 * j + (dy < 0))
                 for j, dx in enumerate([0.0, *slides])
                 for dy, va in ((1.0, "bottom"), (-1.0, "top"))]
        # Pushed off its line: the last resort (a label must stay by its line to be read).
        cands += [((0.0, s * (1.0 + k * LINE_PT)), ha, "bottom" if s > 0 else "top", 40.0 * k)
                  for k in (1, 2, 3, 4) for s in (1, -1)]
        offset, ha, va = _place(anchor, text, cands, placed, soft)
        out_lines[i] = replace(ln, text=text, label_xy=xy, label_offset=offset, label_ha=ha,
                               label_va=va)
    for i, ln in enumerate(out_lines):
        if ln.kind == "memory":
            out_lines[i] = _place_slope_label(ln, lines, roof_labels, pt, xlim, ylim, placed,
                                              soft)
    out_ridges = []
    for r in ridges:
        first = roof_labels[:1] == (r.roof,)
        offsets = [((4.0, -11.0), "left"), ((-4.0, 5.0), "right"), ((4.0, 5.0), "left"),
                   ((-4.0, -11.0), "right"), ((8.0, -20.0), "left"), ((-8.0, 14.0), "right")]
        if not first:
            offsets = offsets[1:2] + offsets[:1] + offsets[2:]
        cands = [(o, ha, "baseline", 3.0 * j) for j, (o, ha) in enumerate(offsets)]
        offset, ha, va = _place(pt(r.ai, r.flop_per_s), f"AI*={fmt_ai(r.ai)}", cands, placed,
                                soft)
        out_ridges.append(replace(r, label_offset=offset, label_ha=ha, label_va=va))
    out_points, leaders = [], []
    for p in points:
        if not p.text:
            out_points.append(p)
            continue
        cands = [((7.0, -8.0), "left", "top", 0.0), ((7.0, 6.0), "left", "bottom", 1.0),
                 ((-7.0, -8.0), "right", "top", 2.0), ((-7.0, 6.0), "right", "bottom", 3.0),
                 ((0.0, -10.0), "center", "top", 4.0), ((0.0, 8.0), "center", "bottom", 5.0)]
        # Then columns left and right of the point, each row a line further up or down: a
        # cluster of points at similar AI gets its labels stacked beside it.
        for j, dx in enumerate((16.0, 34.0, 60.0)):
            for k in range(-24, 25):
                for side, ha in ((1, "left"), (-1, "right")):
                    cands.append(((side * dx, k * (LINE_PT + 0.6) - 4.0), ha, "center",
                                  12.0 + 15.0 * j + 2.5 * abs(k) + (side < 0)))
        offset, ha, va = _place(pt(p.ai, p.flop_per_s), p.text, cands, placed, soft, leaders)
        out_points.append(replace(p, label_offset=offset, label_ha=ha, label_va=va))
    return out_lines, out_ridges, out_points


def _point_texts(points: list[DrawnPoint], trajectory: bool) -> list[DrawnPoint]:
    """The label each point shows: full (name, AI, FLOP/s, % of roof) for a few points, one
    line each when many; a trajectory's steps as "step i" with the name on the first and
    the figures on the first and last; extra memory levels by their level, few points only."""
    primary = {i for i, p in enumerate(points) if p.label != p.level or p.kernel == p.level}
    compact = len(points) > FULL_LABELS
    steps: dict[str, list[int]] = {}
    for i in sorted(primary):
        steps.setdefault(points[i].kernel, []).append(i)
    out = []
    for i, p in enumerate(points):
        if i not in primary:
            out.append(replace(p, text="" if compact else p.label))
            continue
        name = p.label.split("\n", 1)[0]
        idx = steps[p.kernel]
        if trajectory and len(idx) > 1:
            n = idx.index(i) + 1
            name = f"{name} · step {n}" if n == 1 else f"step {n}"
            if compact or 1 < n < len(idx):
                out.append(replace(p, text=name))
                continue
        if compact:
            pct = f" · {p.percent_of_roof:.0f}%" if p.percent_of_roof is not None else ""
            text = f"{name}{pct}" if p.measured else f"{name} (predicted)"
        else:
            text = "\n".join([name, *p.label.split("\n")[1:]])
        out.append(replace(p, text=text))
    return out


def _pair_arrows(arrows, level, to_draw, per_kernel) -> list[Arrow]:
    out = []
    for before, after in arrows:
        a = _pick(per_kernel[_index(to_draw, before)], level)
        b = _pick(per_kernel[_index(to_draw, after)], a.level if a else level)
        if a is None or b is None:
            continue
        label = before.name if before.name == after.name else f"{before.name} → {after.name}"
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


def plot_roofline(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None, ax=None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None) -> RooflineDisplay:
    """Draw roofs (the first judges the kernels) and kernels on log-log axes.

    level: draw only this memory level's points (default: every level a kernel has bytes
    for, one marker per level — the hierarchical roofline).
    sweep: measured (AI, FLOP/s) points of an intensity sweep, drawn as small grey dots;
    sweep_precision (e.g. "fp64") marks the ridge they should bend at.
    arrows: (before, after) kernel pairs, drawn as arrows (what-ifs, comparisons).
    trajectory: join kernels with the same name in the order given (optimisation steps).
    precisions: the compute ceilings to draw, by precision ("fp16") or label ("fp16
    tensor"), or "all"; None draws every ceiling, except that a roof with more than
    MAX_CEILINGS gets the kernels' ceilings plus its top float one (the notes say which
    were left out). Ridges follow the ceilings drawn.

    >>> display = plot_roofline([roof], kernels)   # doctest: +SKIP
    >>> save_figure(display, "chart.png")          # doctest: +SKIP
    """
    display = roofline_data(roofs, kernels, level=level, sweep=sweep, arrows=arrows,
                            trajectory=trajectory, title=title, precisions=precisions,
                            sweep_precision=sweep_precision)
    return display.plot(ax=ax)


def figure_bytes(display: RooflineDisplay, fmt: str) -> bytes:
    """The chart rendered as PNG or SVG bytes (drawn first if needed)."""
    if display.figure_ is None:
        display.plot()
    buf = io.BytesIO()
    # No date in SVG metadata, so the same chart gives the same file.
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    display.figure_.savefig(buf, format=fmt, dpi=150, metadata=metadata)
    return buf.getvalue()


def save_figure(display: RooflineDisplay, path: str | os.PathLike) -> Path:
    """Write the chart to .png or .svg (by suffix), atomically."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        got = suffix or "no suffix"
        raise InputError(f"chart file '{path}' must end in .png or .svg; got '{got}'")
    return write_atomic(path, figure_bytes(display, suffix[1:]))
