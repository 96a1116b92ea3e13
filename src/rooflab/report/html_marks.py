"""The HTML chart's marks besides roofs and kernels: ridge points and the sides' colours,
launch caps, the lines joining a kernel's levels, the optimisation steps, the size
legend, and the FLOP/s axis's ticks."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import replace

from ..model.analysis import Analysis, Point
from ..model.ceiling import Roof
from ..units import fmt_ai, fmt_seconds, si
from .boxes import box_distance, level_with_nearer
from .chart_draw import BATCH_GLYPH_MIN, BATCH_POINTS
from .chart_marks import GLYPH_FRACTION, glyph_color, text_color
from .chart_parts import (
    CAP_LEGEND,
    CAP_SHOWN,
    JOIN_COLOR,
    JOIN_LEGEND,
    ROOF_COLORS,
    LaunchCap,
    RooflineDisplay,
    level_color,
    side_color,
)
from .html_label_model import MARKER_RADIUS_PX, POINT_FONT_PX
from .html_labels import POSITIONS, Axes, marker_box, overlap, text_box
from .html_leaders import Leader, leader_annotation, place_leader
from .marker_size import SIZE_LEGEND, SIZE_MAX, SIZE_MIN
from .steps import step_kernels

# The sides' colours as the PNG's (chart_parts.side_color), said in the legend's title: a
# legend entry needs a trace with points, and the points' entries are per memory level.
SIDE_WORDS = {"memory": "memory-bound side (left of its ridge)",
              "compute": "compute-bound side (right of its ridge)"}


# The side of the ridge without colour (WCAG 1.4.1; review s23 r6 F8): the PNG's glyph
# inside each marker (chart_parts.SIDE_GLYPHS), a rising slash or a flat bar, as text.
SIDE_TEXT = {"memory": "/", "compute": "–"}
# the glyph's font size per pixel of marker diameter: the PNG's GLYPH_FRACTION of it across
GLYPH_FONT = GLYPH_FRACTION / 0.6


def side_key(sides: set[str]) -> str:
    """'● / memory-bound side (left of its ridge)  ● – compute-bound ...', each dot in its
    side's colour and the glyph its markers carry, for the sides the points fall on ('' for
    none)."""
    return "  ".join(f"<span style='color:{side_color(side)}'>●</span> {SIDE_TEXT[side]} "
                     f"{SIDE_WORDS[side]}"
                     for side in ("memory", "compute") if side in sides)


def side_glyph_trace(go, xy: Sequence[tuple[float, float]], sides: Sequence[str],
                     colors: Sequence[str], sizes: Sequence[float], measured: bool,
                     group: str):
    """Each marker's side glyph (SIDE_TEXT) centred on it, in chart_marks.glyph_color
    (black on a light fill, white on a dark one, the side's colour in a hollow marker),
    sized as the PNG's (GLYPH_FRACTION of the marker). In its points'
    legend group (toggled with them); no hover of its own. None when no marker has one.
    Past chart_draw.BATCH_POINTS markers, those under BATCH_GLYPH_MIN get none, as the
    PNG's batches (a cloud of tiny markers under slashes reads as noise)."""
    least = BATCH_GLYPH_MIN if len(sides) > BATCH_POINTS else 0.0
    keep = [i for i, s in enumerate(sides) if s in SIDE_TEXT and sizes[i] >= least]
    if not keep:
        return None
    return go.Scatter(
        x=[xy[i][0] for i in keep], y=[xy[i][1] for i in keep], mode="text",
        text=[SIDE_TEXT[sides[i]] for i in keep], textposition="middle center",
        textfont={"size": [round(GLYPH_FONT * sizes[i], 1) for i in keep],
                  "color": [glyph_color(colors[i], measured) for i in keep]},
        name="side glyphs", legendgroup=group, showlegend=False, hoverinfo="skip")


def _ridge_color(display: RooflineDisplay, roof: str) -> str:
    """The ridge's roof's colour, as the PNG colours its ridge diamonds."""
    labels = list(display.roof_labels)
    i = labels.index(roof) if roof in labels else 0
    return ROOF_COLORS[i % len(ROOF_COLORS)]


def ridge_trace(go, display: RooflineDisplay):
    """The ridge points AI* = P / B as diamonds (review 18c F3: the ridge, the one number a
    roofline reader looks for, was only in the hover of its lines), one legend entry for
    all; their AI is written beside them by _ridge_annotations. None without ridges."""
    if not display.ridges:
        return None
    rs = display.ridges
    return go.Scatter(
        x=[r.ai for r in rs], y=[r.flop_per_s for r in rs], mode="markers",
        text=[""] * len(rs), textposition=[POSITIONS[0]] * len(rs),
        marker={"symbol": "diamond", "size": 9,
                "color": [_ridge_color(display, r.roof) for r in rs]},
        name="ridge points (AI* = peak / bandwidth)",
        hovertext=[html.escape(r.label, quote=False) for r in rs], hoverinfo="text")


def ridge_marks(display: RooflineDisplay, axes: Axes) -> list:
    """The ridges' diamonds, for the names to keep clear of."""
    return [marker_box(axes.px(r.ai, r.flop_per_s), MARKER_RADIUS_PX) for r in display.ridges]


# Where a ridge's AI is written, beside its diamond, in this order: below right is under
# the flat roof and right of the slope, where the PNG writes it (chart_parts.Ridge).
RIDGE_POSITIONS = ("bottom right", "top left", "bottom left", "top right")
# How far from its diamond's centre (pixels, across and along) a ridge's name is written:
# beside the diamond, else a little further out where two close ridges leave no room
# beside either (the name still nearer its own diamond: _nearest_own).
RIDGE_GAPS_PX = (MARKER_RADIUS_PX, 2.5 * MARKER_RADIUS_PX)
_ANCHORS = {"right": ("left", 1.0), "left": ("right", -1.0),
            "top": ("bottom", 1.0), "bottom": ("top", -1.0)}


def ridge_names_placed(display: RooflineDisplay, axes: Axes, obstacles: list) -> list:
    """(ridge index, position, gap, box) of each ridge's 'AI*=4.42', at the first position
    of RIDGE_POSITIONS (at the first gap of RIDGE_GAPS_PX) inside the plot, clear of the
    obstacles and of the others, and nearer its own diamond than any other ridge's; a
    ridge with none such is left to ridge_leaders (written further out with a leader
    line; only where none fits, on hover).
    (Two close ridges, fp64 0.823 and fp32 0.551 on a probed EPYC: 'AI*=0.551' was
    written level with the 0.823 diamond and 'AI*=0.823' level with the 0.551 one, each
    read as the other's: review s18 r5 F2.)"""
    out, taken = [], list(obstacles)
    diamonds = [axes.px(r.ai, r.flop_per_s) for r in display.ridges]
    for i, r in enumerate(display.ridges):
        xy = diamonds[i]
        spots = [(pos, gap) for gap in RIDGE_GAPS_PX for pos in RIDGE_POSITIONS]
        for pos, gap in spots:
            box = text_box(xy, f"AI*={fmt_ai(r.ai)}", pos, POINT_FONT_PX, gap)
            inside = (box[0] >= 0 and box[1] >= 0 and box[2] <= axes.size[0]
                      and box[3] <= axes.size[1])
            if (inside and not any(overlap(box, o) for o in taken)
                    and _nearest_own(box, i, diamonds)):
                out.append((i, pos, gap, box))
                taken.append(box)
                break
    return out


# A name written level with a diamond this near (pixels, beside the box) reads as that
# diamond's, whatever it is written at the corner of: text is read along its line.
LEVEL_PX = 3 * POINT_FONT_PX


def _nearest_own(box, i: int, diamonds: list) -> bool:
    """Whether a name's box reads as diamond i's: its nearest edge nearer it than any
    other diamond (at a distinct spot), and level with no other diamond within LEVEL_PX
    of its side."""
    own = diamonds[i]
    others = [d for j, d in enumerate(diamonds) if j != i and math.dist(d, own) >= 1.0]
    mine = box_distance(box, own)
    return not (level_with_nearer(box, own, others, LEVEL_PX)
                or any(box_distance(box, d) <= mine for d in others))


def ridge_leaders(display: RooflineDisplay, axes: Axes, taken: list, names: list,
                  segments=()) -> list[tuple[int, Leader]]:
    """(ridge index, Leader) for each ridge ridge_names_placed left unnamed: its AI written
    further out with a line to its diamond (review s18 r5 F6: on an H100 chart the fp16
    (295) and fp8 (591) ridges, the fp16 kernels' own, were named on hover only)."""
    done = {i for i, *_ in names}
    diamonds = [marker_box(axes.px(r.ai, r.flop_per_s), MARKER_RADIUS_PX)
                for r in display.ridges]
    taken, out, drawn = [*taken, *(b for *_, b in names)], [], []
    for i, r in enumerate(display.ridges):
        if i in done:
            continue
        xy = axes.px(r.ai, r.flop_per_s)
        lead = place_leader(xy, f"AI*={fmt_ai(r.ai)}", axes.size,
                            [b for b in taken if b != diamonds[i]],
                            [d for j, d in enumerate(diamonds) if j != i], segments,
                            leaders=drawn)
        if lead is not None:
            taken.append(lead.box)
            drawn.append(lead.segment(xy))
            out.append((i, lead))
    return out


def ridge_leader_annotations(display: RooflineDisplay, leaders: list) -> list[dict]:
    """ridge_leaders' names as annotations with their leaders, in their roof's colour."""
    return [leader_annotation(display.ridges[i].ai, display.ridges[i].flop_per_s,
                              f"AI*={fmt_ai(display.ridges[i].ai)}", lead, MARKER_RADIUS_PX,
                              f"ridge-leader:{i}",
                              text_color(_ridge_color(display, display.ridges[i].roof)))
            for i, lead in leaders]


def ridge_annotations(display: RooflineDisplay, names: list) -> list[dict]:
    """Each placed ridge name as an annotation (a trace's text would read as a kernel's)."""
    out = []
    for i, pos, gap, _ in names:
        r = display.ridges[i]
        (va, dy), (ha, dx) = (_ANCHORS[w] for w in pos.split())
        out.append({"x": math.log10(r.ai), "y": math.log10(r.flop_per_s), "xref": "x",
                    "yref": "y", "text": f"AI*={fmt_ai(r.ai)}", "showarrow": False,
                    "xanchor": ha, "yanchor": va, "xshift": dx * gap,
                    "yshift": dy * gap, "name": f"ridge:{i}",
                    "font": {"size": POINT_FONT_PX,
                             "color": text_color(_ridge_color(display, r.roof))}})
    return out


# A launch cap's ticks, down from each end of its dash (pixels of the model plot).
CAP_TICK_PX = 4.0


def launch_caps(display: RooflineDisplay) -> list[LaunchCap]:
    """The display's launch caps (chart_parts.launch_cap: over each kernel's named point,
    where the cap is at most CAP_SHOWN x the roof there), in their point's colour, the side
    of its ridge, as the PNG draws them (review 19c N4: all were the DRAM level's blue);
    the level's colour for a cap that has none."""
    return [c if c.color else replace(c, color=level_color(c.level)) for c in display.caps]


def _cap_geometry(cap: LaunchCap, axes: Axes) -> tuple[list[float], list[float]]:
    """The dash's vertices (data units): down-tick, dash, down-tick."""
    span = axes.y_range[1] - axes.y_range[0]
    drop = 10 ** (-CAP_TICK_PX / axes.size[1] * span)
    (x0, x1), y = cap.xs, cap.flop_per_s
    return [x0, x0, x1, x1], [y * drop, y, y, y * drop]


def cap_box(cap: LaunchCap, axes: Axes):
    """The dash's box in pixels (its ticks included): the names keep clear of it."""
    (x0, y), (x1, _) = axes.px(cap.xs[0], cap.flop_per_s), axes.px(cap.xs[1], cap.flop_per_s)
    return (x0 - 0.5, y - CAP_TICK_PX - 0.5, x1 + 0.5, y + 1.0)


def cap_traces(caps: Sequence[LaunchCap], axes: Axes, roof: Roof) -> list[dict]:
    """One trace (its properties) per launch cap, one legend entry for all (clicking it
    toggles them); hover gives the numbers: 'launch cap 100 GFLOP/s = 1 MFLOP / (10
    calls × 1 us)'."""
    why = f" ({html.escape(roof.overhead_source)})" if roof.overhead_source else ""
    traces = []
    for i, c in enumerate(caps):
        xs, ys = _cap_geometry(c, axes)
        text = (f"<b>{html.escape(c.kernel)}</b> @ {html.escape(c.level)}: {c.words()}<br>"
                f"{c.calls} launch(es) take at least {fmt_seconds(c.calls * c.overhead_s)}"
                f" (launch floor {fmt_seconds(c.overhead_s)} per call{why}), whatever the AI;"
                f"<br>drawn where the cap is at most {CAP_SHOWN:g}x the roof at this AI")
        # the trace's properties: Figure.add_trace checks them once (a go.Scatter is
        # checked again there: html_figure._points_trace)
        traces.append(dict(
            type="scatter", x=xs, y=ys, mode="lines", name=CAP_LEGEND, legendgroup="launch-cap",
            showlegend=i == 0, line={"color": c.color, "width": 1.6},
            hovertext=text, hoverinfo="text"))
    return traces


def joins_trace(go, display: RooflineDisplay):
    """The display's lines through each kernel's per-level points, as one thin grey trace
    (gaps between kernels; one legend entry toggles them all), or None."""
    if not display.joins:
        return None
    xs: list[float | None] = []
    ys: list[float | None] = []
    for j in display.joins:
        xs += [*j.xs, None]
        ys += [*j.ys, None]
    return go.Scatter(x=xs, y=ys, mode="lines", name=JOIN_LEGEND, hoverinfo="skip",
                      line={"color": JOIN_COLOR, "width": 1}, connectgaps=False)


def steps_trace(go, analysis: Analysis, drawn: Sequence[Point]):
    """The optimisation steps' line (None with fewer than two steps): each step's longest
    kernel, as the steps table and the PNG trajectory (a step's other kernels, an OpenACC
    reduction, would zig-zag the line between unrelated points)."""
    level = "DRAM" if any(p.level == "DRAM" for p in drawn) else None
    steps = []
    for k in step_kernels(analysis):
        # its own points (by identity: steps may share a kernel name), at DRAM, else at
        # the level that binds it hardest
        own = [p for p in analysis.points_of(k) if level is None or p.level == level]
        p = min(own, key=lambda p: p.attainable_flop_per_s, default=None)
        if p is not None and p.achieved_flop_per_s:
            steps.append(p)
    if len(steps) < 2:
        return None
    return go.Scatter(
        x=[p.ai for p in steps], y=[p.achieved_flop_per_s for p in steps],
        mode="lines", name=f"optimisation steps, in order{' (' + level + ')' if level else ''}",
        line={"color": "#888", "dash": "dot", "width": 1}, hoverinfo="skip")


# Below about three decades on an axis plotly labels every digit between decades ("9 8 7
# 6 5 4 3 2", as on a one-kernel Nsight Compute chart): 2 and 5 read like the demo chart's.
# Under this many pixels per decade (model plot) plotly's own choice, decades, is kept.
D2_MIN_PX_PER_DECADE = 60.0


def rate_ticks(log_range: tuple[float, float], px: float) -> dict:
    """The FLOP/s axis's ticks as rooflab writes rates ("1 PFLOP/s", "200 GFLOP/s", as the
    PNG does): plotly's own SI labels stop at T, so an A100 chart read "10^15" above
    "100T", and its 2 and 5 between decades were bare digits (review 18c F15). 2 and 5
    are ticked where plotly ticked them (log_dtick), now with their unit."""
    lo, hi = sorted(log_range)
    steps = (1, 2, 5) if log_dtick(log_range, px) else (1,)
    vals = [m * 10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) for m in steps
            if lo - 1e-9 <= math.log10(m * 10.0 ** e) <= hi + 1e-9]
    return {"tickmode": "array", "tickvals": vals, "ticktext": [si(v, "FLOP/s") for v in vals]}


def log_dtick(log_range: tuple[float, float], px: float) -> str | None:
    """plotly's dtick for a log axis of this range (log10) and length: "D2" (2 and 5 between
    the decades) when there is room, else None (plotly's own: decades)."""
    decades = max(abs(log_range[1] - log_range[0]), 1e-9)
    return "D2" if px / decades >= D2_MIN_PX_PER_DECADE else None


def size_legend_trace(go, words: str = SIZE_LEGEND):
    """The legend entry saying what a marker's size means (chart_words.size_legend's words, as
    the PNG's): a trace with no points (it draws nothing; plotly lists it in the legend
    all the same)."""
    name = (f"{SIZE_LEGEND} (area: {SIZE_MIN:g} px under 4 %, {SIZE_MAX:g} px at 100 %)"
            if words == SIZE_LEGEND else words)
    return go.Scatter(x=[], y=[], text=[], mode="markers", hoverinfo="skip", name=name,
                      marker={"size": 12, "symbol": "circle-open", "color": "#555"})
