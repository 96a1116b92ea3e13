"""Roofline charts: compute what to draw as plain data, then draw it with matplotlib.

The shape follows scikit-learn's Display objects (sklearn/inspection/_plot): a pure
function works out every line, ridge and point (`RooflineDisplay.lines/ridges/points`,
which the tests read), and `RooflineDisplay.plot(ax=None)` draws them, importing
matplotlib only then and returning the display with `figure_` and `ax_` set.

Conventions (ARCHITECTURE.md, seed 004): log-log axes; nominal ceilings dashed, measured
ceilings solid; memory-bound kernels blue with a slope glyph, compute-bound orange with a
flat glyph (Okabe-Ito colours; each roof also has its own beads along its lines: see
docs/plot.md "Reading the chart in grey"); a kernel without a measured time is drawn
hollow at its attainable height (predicted, not measured).
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import InputError
from ..files import write_atomic
from ..hardware.resolve import per_thread_nominal
from ..model.analysis import REAL_TRAFFIC, analyze, on_real_traffic, share_totals
from ..model.ceiling import Ceiling, Roof
from ..model.diagnose import level_bound
from ..model.kernel import Kernel
from ..model.sanity import (
    ABOVE_TOLERANCE,  # the report's threshold, so the two agree
    applicable_launch_s,
)
from ..units import fmt_ai, fmt_pct, fmt_rate, si

# The chart's values and ceiling selection live in their own modules (chart_parts,
# chart_ceilings). Most of these names this module uses; the rest (CAP_LEGEND, CAP_SHOWN,
# MAX_CEILINGS, ROOF_MARKERS, SIDE_GLYPHS, SIZE_MAX, SIZE_MIN, relative_luminance,
# side_color) are re-exported only for outside users of their old `rooflab.report.chart`
# path. Inside the package import each from chart_parts or chart_ceilings.
from .chart_ceilings import (  # noqa: F401
    MAX_CEILINGS,
    MIXED_SPAN,
    MixedRoof,
    mixed_label,
    mixed_roofs,
    select_ceilings,
)
from .chart_parts import (  # noqa: F401
    CAP_LEGEND,
    CAP_SHOWN,
    COMPUTE_BOUND_COLOR,
    JOIN_COLOR,
    LEVEL_MARKERS,
    MEMORY_BOUND_COLOR,
    POINT_SIZE,
    ROOF_COLORS,
    ROOF_MARKERS,
    SIDE_GLYPHS,
    SIZE_BY,
    SIZE_LEGEND,
    SIZE_MAX,
    SIZE_MIN,
    SWEEP_COLOR,
    Arrow,
    DrawnPoint,
    LaunchCap,
    Line,
    Ridge,
    RooflineDisplay,
    ceiling_style,
    launch_cap,
    relative_luminance,
    roof_label,
    share_size,
    side_color,
)

SUFFIXES = (".png", ".svg")

# Kernels labelled on a crowded chart: the longest, as many as `rooflab ncu --top` lists
# by default. Every point is still drawn. An application's ncu export holds thousands of
# kernels: placing a label for each took minutes (500 kernels: 79 s) and stacked them in
# one column up through the title.
LABELS_SHOWN = 20



# What a marker's size says, in the PNG legend and the HTML one alike (size_legend). Sizes
# are shares of each kernel's own file's time (model/analysis.share_totals): where every
# file holds one timed kernel (before.ncu-rep after.ncu-rep, a --trajectory of steps) each
# is 100 % of its file, so all would be drawn the largest and the size would say nothing.
# They are drawn alike then (POINT_SIZE), and the legend says why, so that equal markers
# are not read as equal times. (Sizing them by time relative to the longest was the
# other choice: a ratio of two runs' times, which the labels and tables already give.)
SIZES_ALIKE = "size: alike (one timed kernel per file: each is 100 % of its file's time)"

# The CPU probe's second DRAM ceiling (probe/cpu/dram_ceiling.real_traffic): derived, in
# the bytes hardware counters see. It judges counter-measured kernels only, so the chart
# draws it only where a drawn kernel is judged against it, in a line style of its own
# (dash-dot-dot: not the dashes that mean nominal) and with its own legend words; every
# other chart would show a second DRAM slope nothing on it is read against.
REAL_TRAFFIC_STYLE = "dashdotdot"
# Its words follow model/analysis.real_traffic_reason: the kernels judged on it are those
# whose DRAM bytes are real traffic, counter-measured or counted so (read-only kinds, meta
# byte_count "real traffic"); "counters' bytes" was wrong on hand-counted charts (18c F8).
REAL_TRAFFIC_LEGEND = ("DRAM, real traffic (derived; judges counter-measured and "
                       "read-only kernels)")
REAL_TRAFFIC_HOVER = ("; judges the kernels whose DRAM bytes are real traffic: measured by "
                      "hardware counters, or counted so (read-only kinds, meta byte_count "
                      "\"real traffic\")")


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


def size_legend(display: RooflineDisplay) -> str:
    """The legend's words for the markers' sizes, one rule for the PNG and the HTML chart:
    SIZE_LEGEND where areas are shares of the time, SIZES_ALIKE where every file holds one
    timed kernel, "" where sizes say nothing to explain (no timed kernel, --size-by none
    on one run)."""
    if display.sized:
        return SIZE_LEGEND
    return SIZES_ALIKE if one_kernel_per_file(display.kernels) else ""


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


def _own_ceiling(roof: Roof, k: Kernel, mixed: Sequence[MixedRoof]
                 ) -> tuple[Ceiling, str, bool]:
    """(ceiling, its name, drawn anyway) a kernel's ridge is marked at on `roof`: its
    weighted ceiling where the chart draws one for it there, else its precision's."""
    m = next((m for m in mixed if m.holds(k) and roof_label(m.roof) == roof_label(roof)),
             None)
    if m is not None:
        return m.held.ceiling, m.held.label, True
    c = roof.compute_for(k.precision, k.unit)[0]
    return c, c.label, False


def _ridges(roofs: Sequence[Roof], kept: Sequence[tuple[Ceiling, ...]],
            kernels: Sequence[Kernel], level: str | None,
            sweep_precision: str | None = None,
            mixed: Sequence[MixedRoof] = ()) -> list[Ridge]:
    out: list[Ridge] = []
    for roof, drawn in zip(roofs, kept, strict=True):
        ref = _reference_level(roof, level)
        if ref is None or not drawn:
            continue
        mem = roof.bandwidth(ref)
        # The kernels' own ceilings first: the first ridge is the one that judges them
        # (a mixed kernel's weighted one, drawn as its own segment); then the top ceiling
        # drawn. A ceiling left out of the chart gets no ridge.
        ceilings = [_own_ceiling(roof, k, mixed) for k in kernels]
        if sweep_precision and roof.find_compute(sweep_precision):   # the sweep's knee
            c = roof.find_compute(sweep_precision)
            ceilings.append((c, c.label, False))
        top = max(drawn, key=lambda c: c.value)
        ceilings = [(c, name) for c, name, own in ceilings if own or c in drawn] + [
            (top, top.label)]
        seen: set[float] = set()
        for c, name in dict.fromkeys(ceilings):
            if c.value in seen:   # equal ceilings (A100 bf16 = fp16 tensor): one ridge
                continue
            seen.add(c.value)
            ai = c.value / mem.value
            label = f"{name} / {ref}: AI* = {fmt_ai(ai)}"
            out.append(Ridge(label=label, ai=ai, flop_per_s=c.value, roof=roof_label(roof),
                             compute=name, level=ref))
    return out



def _mixed_lines(mixed: Sequence[MixedRoof], shown: Sequence[Roof], level: str | None,
                 colors: dict[int, str], points: Sequence[DrawnPoint],
                 xlim: tuple[float, float]) -> list[Line]:
    """Each weighted ceiling as a thin dashed segment in its first kernel's colour, from
    its ridge (on the reference level's slope, as the drawn ridges) to the right; where the
    roof's drawn slope stops short of that ridge (its drawn ceilings all lower, or the roof
    not drawn at all: a before-roof), the slope up to the ridge too."""
    out = []
    tops = {roof_label(r): max((c.value for c in r.compute), default=None) for r in shown}
    for m in mixed:
        ref = _reference_level(m.roof, level)
        if ref is None:
            continue
        bw = m.roof.bandwidth(ref).value
        ridge = m.value / bw
        names = {k.name for k in m.kernels}
        far = [2.0 * p.ai for p in points if p.kernel in names and _positive_finite(p.ai)]
        x_end = min(xlim[1], max([ridge * MIXED_SPAN, *far]))
        xs, ys = (ridge, x_end), (m.value, m.value)
        label = roof_label(m.roof)
        if label not in tops:                       # its roof's slopes are not drawn
            xs, ys = (xlim[0], *xs), (bw * xlim[0], *ys)
        elif tops[label] is not None and tops[label] < m.value:   # slope ends at top / bw
            xs, ys = (tops[label] / bw, *xs), (tops[label], *ys)
        judge = roof_label(shown[0]) if shown else ""
        name = mixed_label(m, judge)
        out.append(Line(label=name, xs=xs, ys=ys, style="dashed",
                        kind="mixed", color=colors.get(id(m.kernels[0]), COMPUTE_BOUND_COLOR),
                        ceiling=m.held.ceiling, level=ref,
                        hover=f"{name}: {m.held.label} {si(m.value, 'FLOP/s', 4)} (derived; "
                              f"{m.held.ceiling.method}); ridge vs {ref} {fmt_ai(ridge)} "
                              f"FLOP/B"))
    return out


def _point_label(name: str, ai: float, y: float, pct: float | None, measured: bool,
                 precision: str | None = None, launch_bound: bool = False) -> str:
    """launch_bound: y is what an untimed point reaches with its launches (FLOP over
    calls x the launch floor), not its roof rate, and the label says why it is lower."""
    if not measured:
        why = " (launch-bound)" if launch_bound else ""
        return f"{name}\nAI {fmt_ai(ai)} · predicted {fmt_rate(y, precision)}{why}"
    pct_text = f"\n{fmt_pct(pct)} of roof" if pct is not None else ""
    return f"{name}\nAI {fmt_ai(ai)} · {fmt_rate(y, precision)}{pct_text}"


def kernel_points(roof: Roof, kernel: Kernel, level: str | None = None
                  ) -> tuple[list[DrawnPoint], list[str]]:
    """The points one kernel puts on the chart: one per memory level (or just `level`)."""
    points, notes, _ = _kernel_points(roof, kernel, level)
    return points, notes


def _kernel_points(roof: Roof, kernel: Kernel, level: str | None, index: int = -1,
                   share: float | None = None, size: float = POINT_SIZE,
                   precision_named: bool = False
                   ) -> tuple[list[DrawnPoint], list[str], list[LaunchCap]]:
    """kernel_points, and the kernel's launch cap over its labelled point where it matters
    (chart_parts.launch_cap; none, or one). index: the kernel's place among those drawn;
    share, size: its share of the timed total and its markers' diameter; precision_named:
    its label names its precision ("k71 · fp16": the chart holds several)."""
    notes: list[str] = []
    caps: list[LaunchCap] = []
    if level is not None and level not in kernel.bytes:
        return [], [f"{kernel.name}: no bytes at {level}; not drawn"], caps
    analysis = analyze(roof, [kernel], levels=[level] if level else None)
    notes.extend(analysis.notes)
    primary = {(p.kernel, p.level) for p in analysis.primary()}
    binding = min(analysis.points, key=lambda p: p.attainable_flop_per_s, default=None)
    several = len(analysis.points) > 1
    out: list[DrawnPoint] = []
    for p in analysis.points:
        measured = p.achieved_flop_per_s is not None
        y = p.achieved_flop_per_s if measured else p.attainable_flop_per_s
        # An untimed point whose launches take longer than its work (review 12d E:
        # "predicted 26.4 TFLOP/s" over a 5 us launch that caps it at 0.82) reaches FLOP /
        # max(work, calls x launch floor), and is drawn there at every level (review 18c
        # F4: drawn at its roof rate, it sat 170x above the rate its own label gave).
        launch = applicable_launch_s(p)
        reach = (p.flop / max(p.floor_s, launch)
                 if not measured and launch > p.floor_s and p.flop > 0 else y)
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
                             reach, color, p.seconds)
            caps.extend([cap] if cap is not None else [])
        else:
            label = p.level
        out.append(DrawnPoint(kernel=kernel.name, level=p.level, ai=p.ai, flop_per_s=reach,
                              color=color, measured=measured,
                              marker=LEVEL_MARKERS.get(p.level, "o"), label=label,
                              bound=level_bound(p, binding),
                              percent_of_roof=pct,
                              # a profiler step is named by its file ("output4"), so the
                              # chart's steps match the table's "[output4]" rows
                              step=str(kernel.meta.get("step_label")
                                       or kernel.meta.get("step") or ""),
                              side=side, kernel_index=index, size=size, share=share))
    return out, notes, caps


def _pick(points: list[DrawnPoint], level: str | None) -> DrawnPoint | None:
    """The point an arrow or a trajectory goes through: the chosen level, DRAM, else first."""
    for want in (level, "DRAM"):
        for p in points:
            if p.level == want:
                return p
    return points[0] if points else None


def _limits(roofs, ridge_ais, points, sweep, extra_ys=(), zoom=False):
    xs = [p.ai for p in points] + [x for x, _ in sweep] + ridge_ais
    ceilings = [c.value for r in roofs for c in r.compute] + list(extra_ys)
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
    xlim, ylim = (x_lo, x_hi), (y_lo, y_hi)
    drawn = [(p.ai, p.flop_per_s) for p in points
             if _positive_finite(p.ai) and _positive_finite(p.flop_per_s)]
    if zoom and _crowded(drawn, xlim, ylim):
        return _zoomed(xs, ys, ridge_ais)
    return xlim, ylim


# With zoom, a chart whose points fill under this share of the axes' decades on both axes
# is zoomed to them (review 18c F14: the 24 GPP step points, 85-89 GFLOP/s at AI 1.8-35,
# filled 23 % of the x decades and 0.5 % of the y ones; the rest was empty roof, and what
# moved between the steps was unreadable). Zoomed, the limits are the points, every ridge
# and every compute ceiling with ZOOM_MARGIN each side: each ceiling keeps its label and
# each slope at least its stretch below its ridge. Asked for, not automatic: the label
# layout of the GPP charts (tests/test_labels_chart.py, test_labels_polish.py) is tuned to
# the whole-roof limits, and zoomed, a leader strikes a label and the steps' column breaks.
ZOOM_BELOW = 0.25
ZOOM_MARGIN = 10 ** 0.5   # half a decade


def _decades(lo: float, hi: float) -> float:
    return math.log10(hi / lo)


def _crowded(drawn, xlim, ylim) -> bool:
    """Whether two or more points fill under ZOOM_BELOW of the axes' decades on both axes
    (one point alone keeps the whole roof around it)."""
    if len(set(drawn)) < 2:
        return False
    xs, ys = [x for x, _ in drawn], [y for _, y in drawn]
    return (_decades(min(xs), max(xs)) < ZOOM_BELOW * _decades(*xlim)
            and _decades(min(ys), max(ys)) < ZOOM_BELOW * _decades(*ylim))


def _zoomed(xs, ys, ridge_ais):
    """The limits hugging xs (points, sweep, ridges) and ys (points, sweep, ceilings, caps)
    with ZOOM_MARGIN: a slope reaches its ridge from below the bottom-left corner at most
    ZOOM_MARGIN left of the ridge, so every ceiling still shows."""
    xs = xs + [x for x in ridge_ais if _positive_finite(x)]
    return ((min(xs) / ZOOM_MARGIN, max(xs) * ZOOM_MARGIN),
            (min(ys) / ZOOM_MARGIN, max(ys) * ZOOM_MARGIN))


def _roof_lines(roof: Roof, color: str, xlim: tuple[float, float]) -> list[Line]:
    x_lo, x_hi = xlim
    label = roof_label(roof)
    lines = []
    fastest = max((c.value for c in roof.memory), default=None)
    top = roof.top_compute.value if roof.compute else None
    ref = _reference_level(roof, None)
    ref_bw = roof.bandwidth(ref).value if ref else None
    # Slopes run from the left edge to where they meet the top compute ceiling; compute
    # ceilings run from the fastest slope to the right edge, so every ceiling is visible.
    best = is_envelope(roof)
    for m in roof.memory:
        x_end = top / m.value if top else x_hi
        name = f"{m.level}{_flag(m)} {si(m.value, 'B/s')}"
        real = m.level == REAL_TRAFFIC
        lines.append(Line(label=name, xs=(x_lo, x_end),
                          ys=(m.value * x_lo, m.value * x_end),
                          style=REAL_TRAFFIC_STYLE if real else ENVELOPE_STYLE if best
                          else ceiling_style(m),
                          kind="memory", roof=label, color=color, ceiling=m, level=m.level,
                          hover=f"{roof.name}: {name} ({_provenance(m)})"
                                + (REAL_TRAFFIC_HOVER if real else "")))
    for c in roof.compute:
        x_start = c.value / fastest if fastest else x_lo
        name = f"{c.label}{_flag(c)} {fmt_rate(c.value, c.precision)}"
        ridge = (f"; ridge vs {ref} {fmt_ai(c.value / ref_bw)} FLOP/B" if ref_bw else "")
        lines.append(Line(label=name, xs=(x_start, x_hi),
                          ys=(c.value, c.value),
                          style=ENVELOPE_STYLE if best else ceiling_style(c), kind="compute",
                          roof=label, color=color, ceiling=c,
                          hover=f"{roof.name}: {name} ({_provenance(c)}){ridge}"))
    return lines


# The "best achieved" roof compare/plot/report build where no roof is given (ingest/
# profile_import._envelope): the fastest these kernels ran, a lower bound on the
# machine's. Drawn in a style of its own, dotted and light (review 18c F19: dashed, it
# read as a datasheet roof, "DRAM 13.4 GB/s" for a GPU), named for what it is, and its
# points carry no "% of roof" (100 % there means the fastest here, not a ceiling).
ENVELOPE_STYLE = "dotted"
ENVELOPE_LEGEND = "best achieved by these kernels, not a machine ceiling"


def is_envelope(roof: Roof) -> bool:
    from ..ingest.profile_import import ENVELOPE_SOURCE

    return roof.source == ENVELOPE_SOURCE


# A ceiling its probe flagged (review 18c F5): samples disturbed, calibration given up, a
# figure far below its nominal, an L1 slower than L2. The probe's own warnings
# (Ceiling.warnings) decide it; the chart marks its name with FLAGGED_MARK and says under
# the axis what the mark means (caveats), as the report's "Read with care" lines do.
FLAGGED_MARK = "*"
# A roof note that says the probe shared the machine (probe/cpu/flags.machine_load_notes)
LOAD_WORDS = ("read low", "(steal)")


def flagged(c: Ceiling) -> bool:
    """Whether the probe flagged this ceiling: a measured (or measured-derived) one with
    warnings; a catalog figure has none."""
    return c.provenance != "nominal" and bool(c.warnings)


def _flag(c: Ceiling) -> str:
    return FLAGGED_MARK if flagged(c) else ""


def _load_note(note: str) -> str:
    """'other processes used 82% of the CPUs while the probe ran' from the probe's note,
    less its load average aside and its advice."""
    head = note.split(":", 1)[0]
    return re.sub(r" \(and the load average[^)]*\)", "", head).strip()


def caveats(display: RooflineDisplay) -> str:
    """The footnote a chart of an unreliable roof carries (review 18c F5: the PNG is what
    gets pasted, and the warnings were on stderr only): 'measured under load: other
    processes used 82% of the CPUs while the probe ran; * flagged by the probe: fp64
    vector, L3 (...)'; '' for a roof nothing is said of."""
    load = [_load_note(n) for r in display.roofs for n in r.notes
            if any(w in n for w in LOAD_WORDS)]
    marked = list(dict.fromkeys(
        ln.ceiling.label for ln in display.lines
        if ln.kind in ("compute", "memory") and ln.ceiling is not None and flagged(ln.ceiling)))
    parts = [n.split("; ", 1)[-1] for r in display.roofs if is_envelope(r)
             for n in r.notes[:1]]
    if load:
        parts.append("measured under load: " + "; ".join(dict.fromkeys(load)))
    if marked:
        parts.append(f"{FLAGGED_MARK} flagged by the probe (disturbed samples, calibration "
                     f"gave up, or far below nominal; `rooflab specs show` says why): "
                     + ", ".join(marked))
    return "; ".join(parts)


def above_roof(p: DrawnPoint) -> bool:
    """A measured point over ABOVE_TOLERANCE above the roof that judges it (the report's
    threshold): impossible on a correct roof with correct counts."""
    return (p.measured and p.percent_of_roof is not None
            and p.percent_of_roof > 100 * (1 + ABOVE_TOLERANCE))


# The legend's words for the ring around such a point (chart_draw)
ABOVE_LEGEND = "above its roof: check the counts or the roof"


def _provenance(c: Ceiling) -> str:
    return c.provenance + (f"; {c.source}" if c.source else "")


def roofline_data(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None,
                  before_roof: Roof | None = None,
                  labels: int | None = None, place_labels: bool = True,
                  size_by: str = "time", min_share: float | None = None,
                  zoom: bool = False) -> RooflineDisplay:
    """Work out the chart without drawing it (pure; matplotlib is not imported).

    zoom: where the points fill under ZOOM_BELOW of the axes' decades on both axes, limits
    hugging the points, every ridge and every compute ceiling (half a decade each side)
    instead of the whole roof around them.

    labels: how many kernels get a label, the longest first (default LABELS_SHOWN; 0:
    every kernel); the others are drawn unlabelled and the notes say how many.
    place_labels: False leaves the labels where chart_parts puts them by default, for a
    drawer that places its own (the HTML report: html_labels); the lines and points are
    the same either way, and placing them is most of the time for thousands of kernels.

    sweep_precision: the precision the sweep's kernel computes in (the CPU probe's is
    fp64); its ridge is marked, since the sweep should bend there.
    before_roof: the roof the arrows' starting kernels ran on, when it is not the first
    (a move to other hardware): their colour and % of roof are judged by it.
    size_by: "time" (default) draws each timed kernel's markers with an area proportional
    to its share of the timed total (chart_parts.share_size: SIZE_MIN..SIZE_MAX points
    across), where any kernel is timed; "none" draws them all POINT_SIZE.
    min_share: leave out kernels under this fraction of the timed total (0.01: 1 %); the
    arrows' kernels and untimed ones are kept, and the notes say how many went.
    One Roof or one Kernel may be given bare (plot_roofline(roof, kernel))."""
    roofs, kernels = _checked(roofs, kernels, labels, size_by, min_share)
    # A thread row's nominal partner (`--on me.json@1t`) comes scaled per core from
    # hardware/resolve; roofs handed in directly are scaled the same way here (18c F17).
    roofs, scaled = per_thread_nominal(roofs)
    judge = roofs[0]
    # each kernel once, by identity (a set of ids: a scan of the list per kernel was
    # quadratic, seconds at 20 000 kernels)
    to_draw = list({id(k): k for k in (*kernels, *(k for pair in arrows for k in pair))}
                   .values())
    befores = [b for b, _ in arrows] if before_roof is not None else []
    shares = time_shares(to_draw)
    # (judged before --min-share: a file's 95 % kernel left alone by it is still 95 %)
    sized = size_by == "time" and bool(shares) and not one_kernel_per_file(to_draw)
    to_draw, dropped = _drop_small(to_draw, shares, min_share, arrows)
    # A "before" kernel measured on the old hardware: 50 TFLOP/s on a T4 is 77 % of its
    # roof, not 5 % of an H100's.
    judges = [before_roof if any(k is b for b in befores) else judge for k in to_draw]
    per_kernel, notes, caps = _all_points(to_draw, judges, level, shares, sized)
    notes[:0] = ([dropped] if dropped else []) + ([scaled] if scaled else [])
    points = [p for pts in per_kernel for p in pts]
    notes.extend(_above_roof_notes(points, to_draw, judges))
    kept, hidden, sel_notes = select_ceilings(roofs, to_draw, precisions)
    notes.extend(sel_notes)
    real = _real_traffic_roofs(judges, to_draw, level)
    # the GPU probe's triad ceiling, drawn only where a kernel is judged on it (19a N3)
    triad = any(TRIAD in k.bytes for k in to_draw)
    shown = [replace(r, compute=c, memory=_drawn_memory(r, real, triad))
             for r, c in zip(roofs, kept, strict=True)]
    # Mixed-precision kernels' weighted ceilings, on the roof that judges each
    mixed = mixed_roofs(list(zip(judges, to_draw, strict=True)))
    ridges = _ridges(roofs, kept, to_draw, level, sweep_precision, mixed)
    sweep = [(float(x), float(y)) for x, y in sweep]
    xlim, ylim = _limits(shown, _ridge_ais(ridges, shown, mixed, level), points, sweep,
                         [m.value for m in mixed] + [c.flop_per_s for c in caps], zoom)
    good_sweep = [(x, y) for x, y in sweep if _positive_finite(x) and _positive_finite(y)]
    lines = _chart_lines(shown, mixed, level, to_draw, per_kernel, xlim, good_sweep,
                         sweep_precision)
    drawn_arrows = _pair_arrows(arrows, level, to_draw, per_kernel)
    if trajectory:
        drawn_arrows += _trajectory_arrows(to_draw, per_kernel, level)
    if title is None:
        title = "Roofline: " + " vs ".join(provenance_label(r) for r in roofs)
    from .chart_layout import layout_labels, point_texts

    texts, unlabelled, note = _longest_labelled(point_texts(points, trajectory), to_draw,
                                                LABELS_SHOWN if labels is None else labels)
    notes.extend([note] if note else [])
    roof_names = tuple(roof_label(r) for r in roofs)
    if place_labels:
        lines, ridges, points = layout_labels(lines, ridges, texts, xlim, ylim, roof_names,
                                              good_sweep, caps)
        # labels the layout left out rather than print over another (review 19c N6)
        lost = {p.kernel for p in texts if p.text} - {p.kernel for p in points if p.text}
        if lost:
            unlabelled += len(lost)
            notes.append(f"{len(lost)} kernel label(s) left out where they would print over "
                         f"another: {', '.join(sorted(lost))} (the JSON and `rooflab "
                         f"report` have them)")
    else:
        points = texts
    return RooflineDisplay(roofs=roofs, lines=tuple(lines), ridges=tuple(ridges),
                           points=tuple(points), arrows=tuple(drawn_arrows), xlim=xlim,
                           ylim=ylim, title=title, notes=tuple(dict.fromkeys(notes)),
                           roof_labels=roof_names, kernels=tuple(to_draw),
                           hidden=tuple(hidden), caps=tuple(caps), unlabelled=unlabelled,
                           joins=tuple(_level_joins(per_kernel)), sized=sized,
                           dropped=dropped)


def _real_traffic_roofs(judges: Sequence[Roof], kernels: Sequence[Kernel],
                        level: str | None) -> set[str]:
    """The labels of the roofs whose REAL_TRAFFIC ceiling judges a drawn kernel's DRAM
    point (counter-measured bytes: analysis.on_real_traffic); none when the chart shows
    another level only."""
    if level not in (None, "DRAM"):
        return set()
    return {roof_label(r) for r, k in zip(judges, kernels, strict=True)
            if on_real_traffic(r, k)}


# The GPU probe's derived triad ceiling (probe/gpu/memory.py TRIAD): a kernel selects it
# by its bytes' level; the copy judges every other DRAM byte.
TRIAD = "DRAM (triad)"


def _drawn_memory(roof: Roof, real: set[str], triad: bool = False) -> tuple[Ceiling, ...]:
    """The roof's memory ceilings to draw: every one, less REAL_TRAFFIC where no drawn
    kernel is judged against it (_real_traffic_roofs), and less TRIAD where no drawn kernel
    has bytes at it (review 19a N3: a second solid slope under the copy judged nothing)."""
    drop = (set() if roof_label(roof) in real else {REAL_TRAFFIC}) | (set() if triad
                                                                      else {TRIAD})
    return tuple(c for c in roof.memory if c.level not in drop)


def _checked(roofs, kernels, labels, size_by: str, min_share
             ) -> tuple[tuple[Roof, ...], tuple[Kernel, ...]]:
    """roofline_data's roofs and kernels as tuples (one of each may be given bare), or a
    clear InputError for any argument of the wrong kind."""
    given = roofs
    roofs = (roofs,) if isinstance(roofs, Roof) or not hasattr(roofs, "__iter__") else \
        tuple(roofs)
    kernels = ((kernels,) if isinstance(kernels, Kernel) else kernels
               if isinstance(kernels, str) or not hasattr(kernels, "__iter__") else
               tuple(kernels))
    if isinstance(given, str) or not all(isinstance(r, Roof) for r in roofs):
        raise InputError(f"plot_roofline(): roofs must be Roofs (rooflab.load_roof('T4') "
                         f"or a profile .json); got {given!r:.80}")
    if not isinstance(kernels, tuple) or not all(isinstance(k, Kernel) for k in kernels):
        raise InputError(f"plot_roofline(): kernels must be Kernels (rooflab.Kernel(...), "
                         f"rooflab.measure(...) or rooflab.load_kernels(FILE)); got "
                         f"{kernels!r:.80}")
    if not roofs:
        raise InputError("a roofline chart needs at least one roof; pass --on HARDWARE|PROFILE")
    if labels is not None and (isinstance(labels, bool) or not isinstance(labels, int)
                               or labels < 0):
        raise InputError(f"plot_roofline(): labels must be a count of kernels to label, 0 "
                         f"for every one; got {labels!r:.40}")
    if size_by not in SIZE_BY:
        raise InputError(f"size_by {size_by!r:.40}: use one of {', '.join(SIZE_BY)}")
    if min_share is not None and (isinstance(min_share, bool)
                                  or not isinstance(min_share, int | float)
                                  or not 0 <= min_share < 1):
        raise InputError(f"plot_roofline(): min_share must be a fraction of the time in "
                         f"[0, 1) (0.01 for 1 %); got {min_share!r:.40}")
    return roofs, kernels


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
    for i, (k, on) in enumerate(zip(to_draw, judges, strict=True)):
        share = shares.get(id(k))
        pts, kn, kc = _kernel_points(on, k, level, i, share,
                                     share_size(share) if sized else POINT_SIZE, named)
        per_kernel.append(pts)
        notes.extend(kn)
        caps.extend(kc)
    return per_kernel, notes, caps


# A "nominal" roof whose every ceiling the profile calls derived (the CPU probe's: cores x
# its measured clock x FLOP/cycle, "derived, not a datasheet figure" in its table): the
# chart names it so, not "nominal" (review 18c F10: it read as a datasheet at 100 %).
DERIVED_WORDS = "derived, not a datasheet figure"


def provenance_label(roof: Roof) -> str:
    """The roof's name with its ceilings' provenance as the profile states it: roof_label,
    its kind replaced by DERIVED_WORDS where it is nominal and every ceiling derived."""
    if is_envelope(roof):
        return ENVELOPE_LEGEND
    provs = {c.provenance for c in (*roof.compute, *roof.memory)}
    if roof.kind == "nominal" and provs == {"derived"}:
        return roof_label(replace(roof, kind=DERIVED_WORDS))
    return roof_label(roof)


def _precisions(kernels: Sequence[Kernel]) -> list[str]:
    """The precisions of the kernels with FLOP (Kernel.precision: the one carrying most)."""
    return list(dict.fromkeys(k.precision for k in kernels if k.total_flop > 0))


def precision_ceilings(display: RooflineDisplay) -> list[str]:
    """'fp16 kernels: judged on fp16 tensor 312 TFLOP/s', one line per precision and
    ceiling where the chart's kernels have several precisions (the first roof judges
    them; a mixed kernel's weighted ceiling is named in the legend on its own); [] for
    one precision."""
    kernels = [k for k in display.kernels if k.total_flop > 0]
    if len(_precisions(kernels)) < 2 or not display.roofs or not display.roofs[0].compute:
        return []
    roof = display.roofs[0]
    out = []
    for k in kernels:
        c, _ = roof.compute_for(k.precision, k.unit)
        out.append(f"{k.precision} kernels: judged on {c.label} "
                   f"{fmt_rate(c.value, c.precision)}")
    return list(dict.fromkeys(out))


def _ridge_ais(ridges: Sequence[Ridge], shown: Sequence[Roof], mixed: Sequence[MixedRoof],
               level: str | None) -> list[float]:
    """The AIs the x axis must show: the marked ridges, every drawn ceiling's ridge on
    every level, and each weighted ceiling's (a before-roof's too: its roof is not
    drawn, so it has no Ridge)."""
    out = [r.ai for r in ridges] + [c.value / m.value for r in shown for c in r.compute
                                    for m in r.memory]
    for m in mixed:
        ref = _reference_level(m.roof, level)
        if ref is not None:
            out.append(m.value / m.roof.bandwidth(ref).value)
    return out


def _chart_lines(shown: Sequence[Roof], mixed: Sequence[MixedRoof], level: str | None,
                 to_draw: Sequence[Kernel], per_kernel: Sequence[Sequence[DrawnPoint]],
                 xlim: tuple[float, float], good_sweep: Sequence[tuple[float, float]],
                 sweep_precision: str | None) -> list[Line]:
    """Every line of the chart: each roof's slopes and ceilings in its colour, the mixed
    kernels' weighted ceilings in their kernel's colour, and the measured sweep."""
    lines: list[Line] = []
    for i, roof in enumerate(shown):
        lines.extend(_roof_lines(roof, ROOF_COLORS[i % len(ROOF_COLORS)], xlim))
    colors = {id(k): p.color for k, pts in zip(to_draw, per_kernel, strict=True)
              if (p := _pick(pts, level)) is not None}
    points = [p for pts in per_kernel for p in pts]
    lines.extend(_mixed_lines(mixed, shown, level, colors, points, xlim))
    if good_sweep:
        what = f"intensity sweep {sweep_precision}" if sweep_precision else "intensity sweep"
        lines.append(Line(label=f"{what} (measured)", xs=tuple(x for x, _ in good_sweep),
                          ys=tuple(y for _, y in good_sweep), style="dotted", kind="sweep",
                          color=SWEEP_COLOR))
    return lines


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


# Ops with bytes but no FLOP (embedding, cat, copy_) have no AI, so no point on a FLOP/s
# chart; the chart names the longest of them under its axis (PNG) or in its caption (HTML)
# with what they did reach: the bytes/s moved and its % of their level's bandwidth, as the
# tables give them (tables.bandwidth_of). `plot` left them out but for a count (review
# 17b N5). The longest MEMORY_OPS_SHOWN by time; the rest are counted.
MEMORY_OPS_SHOWN = 5


def memory_ops(display: RooflineDisplay) -> str:
    """'no FLOP, so not on the chart: aten::cat 66.1 MB/s = 0.002 % of DRAM; ... (DRAM
    3.35 TB/s)' for the display's kernels without FLOP, judged by its first roof; ''
    when there are none."""
    from .chart_layout_texts import with_word
    from .tables import bandwidth_of

    ops = [k for k in display.kernels if k.total_flop <= 0 and sum(k.bytes.values()) > 0]
    if not ops or not display.roofs:
        return ""
    ops.sort(key=lambda k: -(k.seconds or 0.0))
    words, levels = [], {}
    for k in ops[:MEMORY_OPS_SHOWN]:
        points = analyze(display.roofs[0], [k]).points
        # the level whose bandwidth holds it longest binds a memory op
        p = max(points, key=lambda q: q.floor_s, default=None)
        moved, pct = bandwidth_of(p) if p is not None else (None, None)
        if moved is None:
            words.append(with_word(k.name, "untimed"))   # 'embedding (before, untimed)'
            continue
        words.append(f"{k.name} {si(moved, 'B/s')} = {fmt_pct(pct, space=True)} of {p.level}")
        levels[p.level] = p.bytes_per_s
    more = len(ops) - MEMORY_OPS_SHOWN
    of = ", ".join(f"{lv} {si(bw, 'B/s')}" for lv, bw in levels.items())
    return ("no FLOP, so not on the chart: " + "; ".join(dict.fromkeys(words))
            + (f"; {more} more" if more > 0 else "") + (f" ({of})" if of else ""))


def _pct(share: float) -> str:
    """A share as a percent to one decimal; a speck above zero as '< 0.1 %', not 0.0 %."""
    return "< 0.1 %" if 0 < share < 0.0005 else f"{100 * share:.1f} %"


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


def _longest_labelled(points: list[DrawnPoint], kernels: Sequence[Kernel], n: int
                      ) -> tuple[list[DrawnPoint], int, str]:
    """Labels on the n longest kernels only (by measured time; untimed ones after, by
    FLOP), every point kept; with the number of kernels left unlabelled and the note that
    says so. A name stands for all its kernels (a trajectory's steps share one)."""
    named = list(dict.fromkeys(p.kernel for p in points if p.text))
    if n <= 0 or len(named) <= n:
        return points, 0, ""
    weight: dict[str, tuple[float, float]] = {}
    for k in kernels:
        w = (k.seconds or 0.0, k.total_flop)
        weight[k.name] = max(weight.get(k.name, w), w)
    keep = set(sorted(named, key=lambda name: weight.get(name, (0.0, 0.0)),
                      reverse=True)[:n])
    out = [p if p.kernel in keep else replace(p, text="") for p in points]
    left = len(named) - n
    return out, left, (f"labelled the {n} longest of {len(named)} kernels; {left} drawn "
                       f"without a label (`rooflab plot --labels N` sets how many, 0 "
                       f"labels every one)")


def _above_roof_notes(points: Sequence[DrawnPoint], kernels: Sequence[Kernel] = (),
                      judges: Sequence[Roof] = ()) -> list[str]:
    """Points drawn above the roof that judges them: impossible on a correct roof with
    correct counts, so the chart says so rather than only printing '263% of roof'.
    kernels, judges: the drawn kernels and the roof judging each (by the points'
    kernel_index), to name the ceiling each point is above."""
    over = [p for p in points if above_roof(p)]
    if not over:
        return []
    names = ", ".join(f"{p.kernel} {fmt_pct(p.percent_of_roof)} of "
                      f"{_exceeded(p, kernels, judges)}" for p in over)
    return [f"{len(over)} point(s) above the roof that judges them: {names}; a roof too "
            f"low (a probe disturbed by other load), bytes served by a faster memory level "
            f"than the one they are counted at, or a counting error; `rooflab report` "
            f"checks each"]


def _exceeded(p: DrawnPoint, kernels: Sequence[Kernel], judges: Sequence[Roof]) -> str:
    """The ceiling a point above its roof exceeds, with its value: 'fp64 tensor 19.5
    TFLOP/s (bytes at DRAM)' right of its ridge, 'DRAM 6.33 GB/s x AI 0.0833' left of it.
    Review 19c N9: '[DRAM] 123%' read as DRAM judging a point held by fp64 tensor."""
    if not 0 <= p.kernel_index < min(len(kernels), len(judges)):
        return f"its roof [{p.level}]"
    (q,) = analyze(judges[p.kernel_index], [kernels[p.kernel_index]], levels=[p.level]).points
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


def plot_roofline(roofs: Roof | Sequence[Roof], kernels: Kernel | Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None, ax=None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None,
                  before_roof: Roof | None = None,
                  labels: int | None = None, size_by: str = "time",
                  min_share: float | None = None,
                  size: tuple[float, float] | None = None,
                  zoom: bool = False) -> RooflineDisplay:
    """Draw roofs (the first judges the kernels) and kernels on log-log axes: a Roof or
    a list of them, a Kernel or a list (the README's `plot_roofline(roof, k)` type-checks:
    rooflab ships py.typed, review 19b N2).

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
    before_roof: the roof the arrows' starting kernels are judged by (default the first).
    labels: how many kernels get a label, the longest first (default LABELS_SHOWN, 20; 0:
    every one); every point is drawn.
    size_by: "time" (default: marker area proportional to the kernel's share of the timed
    total, SIZE_MIN..SIZE_MAX points across) or "none" (every marker POINT_SIZE).
    min_share: leave out kernels under this fraction of the timed total (0.01 = 1 %).
    size: (width, height) in inches of the written chart (default 9 x 6; chart_layout_size:
    a smaller one is scaled with its text, which stays at 5.25 pt or more).
    zoom: limits hugging crowded points (roofline_data).

    >>> display = plot_roofline([roof], kernels)   # doctest: +SKIP
    >>> save_figure(display, "chart.png")          # doctest: +SKIP
    """
    display = roofline_data(roofs, kernels, level=level, sweep=sweep, arrows=arrows,
                            trajectory=trajectory, title=title, precisions=precisions,
                            sweep_precision=sweep_precision, before_roof=before_roof,
                            labels=labels, size_by=size_by, min_share=min_share,
                            zoom=zoom)
    return display.plot(ax=ax, size=size)


def figure_bytes(display: RooflineDisplay, fmt: str, **savefig_kw) -> bytes:
    """The chart rendered as PNG or SVG bytes (drawn first if needed); savefig_kw go to
    matplotlib's Figure.savefig over the defaults (dpi 150, no date). A chart drawn at a
    size (plot(size=...)) is written at that size: dpi is pixels per inch of it."""
    if display.figure_ is None:
        display.plot()
    buf = io.BytesIO()
    # No date, and the chart's own title (not "Matplotlib v3.x") in the file's metadata,
    # so the same chart gives the same file and a viewer or screen reader names it.
    title = " ".join(getattr(display, "title", "").split())
    metadata = ({"Date": None, "Title": title} if fmt == "svg"
                else {"Software": None, "Title": title})
    kw = {"dpi": 150, "metadata": metadata, **savefig_kw, "format": fmt}
    # drawn at a design size and scaled to the size asked (chart_layout_size): a PNG of W
    # inches at D dpi is W x D pixels whatever the design's size
    kw["dpi"] = kw["dpi"] * getattr(display, "scale_", 1.0)
    import contextlib
    import warnings

    import matplotlib

    from .chart_layout_size import without_outlines

    # SVG text as <text> in the document's fonts, not one path per glyph: searchable,
    # editable, read by screen readers, and half the size (review 18c F13)
    plain = (without_outlines(display.figure_) if fmt == "svg"
             else contextlib.nullcontext())
    with warnings.catch_warnings(record=True) as caught, plain, \
            matplotlib.rc_context({"svg.fonttype": "none"}):
        warnings.simplefilter("always")
        display.figure_.savefig(buf, **kw)
    _layout_warnings(caught)
    data = buf.getvalue()
    size = getattr(display, "size_", None)   # a SweepDisplay has none
    if fmt == "svg" and size is not None:
        from .chart_layout_size import svg_at_size

        data = svg_at_size(data, size)
    return data


def _layout_warnings(caught) -> None:
    """matplotlib's warnings while writing, passed on; "constrained_layout not applied"
    (the texts left the axes no room: the chart is written without the layout) as
    rooflab's own words, the one sign that the figure came out squeezed."""
    import warnings

    for w in caught:
        text = str(w.message)
        if "constrained_layout not applied" in text:
            warnings.warn("rooflab: the chart's titles, axis labels or legend left no room "
                          "for the axes, so matplotlib drew it without its layout (texts "
                          "may overlap the axes); a shorter --title or a larger --size "
                          "helps", UserWarning, stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def save_figure(display: RooflineDisplay, path: str | os.PathLike, **savefig_kw) -> Path:
    """Write the chart to .png or .svg (by suffix), atomically; savefig_kw as figure_bytes."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        got = suffix or "no suffix"
        raise InputError(f"chart file '{path}' must end in .png or .svg; got '{got}'")
    return write_atomic(path, figure_bytes(display, suffix[1:], **savefig_kw))
