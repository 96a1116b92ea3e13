"""The HTML report's chart as a plotly Figure: the PNG chart's display (chart.roofline_data's
RooflineDisplay: the same lines, selection of ceilings, points, ridges and launch caps) as
plotly traces, one legend entry per ceiling and per memory level of points, so clicking
the legend toggles them; only the names' places are its own (html_labels: plotly's page
is zoomed and resized)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import require
from ..hardware.profile import MachineProfile
from ..model.analysis import Analysis, Point
from .axis_words import GENERIC, axis_title
from .chart import roofline_data
from .chart_ceilings import MAX_CEILINGS
from .chart_inputs import chart_subject, titled
from .chart_marks import ABOVE_COLOR, ABOVE_EDGE_COLOR, ABOVE_EDGE_PT, ABOVE_RING_MEW, ABOVE_RING_PT
from .chart_parts import JOIN_LEGEND, LEVEL_MARKERS, RooflineDisplay, level_color
from .chart_words import ABOVE_LEGEND, above_roof, size_legend
from .html_colors import PLOT_BG
from .html_hover import hover_text
from .html_label_model import MARKER_RADIUS_PX, POINT_FONT_PX, pixel_segments
from .html_labels import POSITIONS, Axes, Candidate, marker_box, place_names, text_box
from .html_leaders import leader_annotation
from .html_marks import (
    cap_box,
    cap_traces,
    joins_trace,
    launch_caps,
    log_dtick,
    rate_ticks,
    ridge_annotations,
    ridge_leader_annotations,
    ridge_leaders,
    ridge_marks,
    ridge_names_placed,
    ridge_trace,
    side_glyph_trace,
    side_key,
    size_legend_trace,
    steps_trace,
)
from .html_roofs import (
    line_label_boxes,
    mixed_traces,
    name_ceilings,
    roof_line_traces,
    slope_annotations,
)
from .html_text import plotly_text

# a kernel's name on the chart, as the PNG writes it (hover and the tables keep it whole;
# review 18c F15: html_labels found room for no 190-character name), distinct as the PNG
# keeps them (review 19c N5: chart_name alone gave three cutlass kernels one label)
from .label_names import chart_name, chart_names

# The lines are coloured by memory level (chart_parts.LEVEL_COLORS, COMPUTE_COLOR for flat
# roofs); plotly's names for the PNG chart's LEVEL_MARKERS (matplotlib codes):
LEVEL_SYMBOLS = {"^": "triangle-up", "s": "square", "D": "diamond", "o": "circle",
                 "P": "cross", "X": "x", "*": "star", "h": "hexagon"}

def chart_display(analysis: Analysis, profile: MachineProfile | None = None,
                  size_by: str = "time", min_share: float | None = None) -> RooflineDisplay:
    """What the report's chart shows, worked out as the PNG chart works it out
    (chart.roofline_data: its lines, its selection of ceilings, its points and launch
    caps, the markers' sizes and the lines joining a kernel's levels): the judging roof
    first, then the profile's other roofs, and every kernel (over min_share of the time:
    `rooflab report --min-share`). Its names are not laid out: the HTML names lines and
    points itself (html_labels), and the static chart lays out the few it draws
    (html_static.placed_labels)."""
    roofs = [analysis.roof]
    if profile is not None:
        roofs += [r for r in profile.roofs if r is not analysis.roof and r != analysis.roof]
    return roofline_data(roofs, analysis.kernels, place_labels=False,
                         size_by=size_by, min_share=min_share)


# A point of the analysis by its kernel's index and its level, and where the display draws
# it: (AI, FLOP/s: achieved, or attainable when no time was measured).
Key = tuple[int, str]
At = dict[Key, tuple[float, float]]


def _key(p: Point) -> Key:
    return (p.kernel_index, p.level)


def _drawn_at(analysis: Analysis, display: RooflineDisplay) -> At:
    """Where the display draws each point of the analysis (display.kernels are the
    analysis's, by identity; a point it does not draw, off the log axes or under
    --min-share, is absent)."""
    return {k: (d.ai, d.flop_per_s) for k, d in _drawn(analysis, display).items()}


def _drawn(analysis: Analysis, display: RooflineDisplay) -> dict:
    """The display's DrawnPoint of each point of the analysis, by Key."""
    index_of: dict[int, int] = {}
    for i, k in enumerate(analysis.kernels):
        index_of.setdefault(id(k), i)
    of = [index_of.get(id(k), -1) for k in display.kernels]
    return {(of[d.kernel_index], d.level): d for d in display.points
            if 0 <= d.kernel_index < len(of)}


def _points_trace(pts: Sequence[Point], level: str, measured: bool,
                  names: dict[Key, str], analysis: Analysis, at: At,
                  sizes: dict[Key, float] | None = None, colors: dict[Key, str] | None = None,
                  short: dict[str, str] | None = None):
    """Kernels at one level: filled at their achieved performance, or hollow at their
    attainable one when no time was measured. names: (kernel index, level) ->
    textposition of the points named beside their marker (html_labels); the others are
    named on hover. sizes: each marker's diameter (px), the display's DrawnPoint.size, as
    the PNG draws it in points (area proportional to the time share); default 11 each.
    colors: each marker's colour, the display's DrawnPoint.color: the side of its ridge, as
    the PNG colours it (review 18c F3: every kernel was DRAM-blue, compute-bound GEMMs
    included); the level stays in the symbol. Default: the level's colour. The trace's
    properties, not a go.Scatter: Figure.add_trace builds (and checks) a trace from them
    once, where from a go.Scatter it rebuilds and checks it again from its properties
    (0.2 s of a 20 000-kernel page, every list walked twice; benchmarks/RESULTS.md
    session 36 helper P)."""
    symbol = LEVEL_SYMBOLS.get(LEVEL_MARKERS.get(level, "o"), "circle")
    keys = [_key(p) for p in pts]
    size = [sizes[k] for k in keys] if sizes else 11
    color = [colors[k] for k in keys] if colors else level_color(level)
    return dict(
        type="scatter", x=[at[k][0] for k in keys], y=[at[k][1] for k in keys],
        mode="markers+text", name=plotly_text(f"kernels @ {level}" if measured else
                                              f"predicted @ {level} (no measured time)"),
        legendgroup=_group(level, measured),   # with its side glyphs (html_marks)
        text=[_short(p.kernel, short) if k in names else ""
              for p, k in zip(pts, keys, strict=True)],
        textposition=[names.get(k, POSITIONS[0]) for k in keys],
        marker=({"size": size, "symbol": symbol, "color": color,
                 "line": {"width": 1, "color": "#222"}} if measured
                else {"size": size, "symbol": f"{symbol}-open", "color": color,
                      "line": {"width": 2}}),
        hovertext=[hover_text(p, analysis) for p in pts], hoverinfo="text")


def _group(level: str, measured: bool) -> str:
    """The legend group of one level's markers and their side glyphs."""
    return f"{'kernels' if measured else 'predicted'} @ {level}"


def figure(analysis: Analysis, profile: MachineProfile | None = None, title: str = "",
           display: RooflineDisplay | None = None):
    """The plotly Figure of the chart_display (given, or worked out here): its roofs'
    lines (judging roof first, others thinner), weighted roofs, points and launch caps,
    each hoverable, named where html_labels finds room."""
    go = require("plotly.graph_objects", "html", "the interactive HTML report")
    display = display if display is not None else chart_display(analysis, profile)
    fig = go.Figure()
    pairs = roof_line_traces(go, display)
    pairs += [(t, None) for t in mixed_traces(go, display)]
    roof_traces = [t for t, _ in pairs]
    drawn_points = _drawn(analysis, display)
    at = _drawn_at(analysis, display)
    # Kernels without a measured time sit at their attainable performance, hollow, as
    # the PNG chart draws them: a prediction, not a measurement.
    drawn = [p for p in analysis.points if _key(p) in at and p.achieved_flop_per_s is not None]
    predicted = [p for p in analysis.points if _key(p) in at
                 and p.achieved_flop_per_s is None]
    caps = launch_caps(display)
    # every kernel's chart name, computed over all of them so that none share one
    short = chart_names(p.kernel for p in drawn + predicted)
    axes = Axes(tuple(math.log10(x) for x in display.xlim),
                tuple(math.log10(y) for y in display.ylim))
    cap_boxes = [cap_box(c, axes) for c in caps]
    steps = steps_trace(go, analysis, drawn)
    lines, radius, markers = _obstacles(display, axes, drawn_points, drawn + predicted, at,
                                        [*roof_traces, *([steps] if steps else [])], cap_boxes)
    # The ceilings are named first (every one is: they are all one colour), then the
    # kernels where they stay readable (the longest first, each clear of the others and
    # of the lines where it can be; hover always has them), then the slopes.
    name_ceilings(pairs, axes, markers, lines)
    for t in roof_traces:       # added named: the figure keeps copies
        fig.add_trace(t)
    ceiling_names = line_label_boxes(roof_traces, axes)
    segments = [(a, b) for _, a, b in pixel_segments(axes, lines)]
    leaders: dict = {}      # Key -> (name, Leader): names written out with a leader
    names = _point_names(analysis, drawn + predicted, axes,
                         [*ceiling_names, *cap_boxes, *ridge_marks(display, axes)],
                         segments, at, radius, _labelled(display, drawn_points), short,
                         leaders)
    # the ridges' AI where the kernels' names left room (a kernel's name matters more)
    named = _name_boxes(drawn + predicted, names, axes, at, radius, short)
    named += [lead.box for _, lead in leaders.values()]
    ridge_names = ridge_names_placed(display, axes, [*ceiling_names, *markers, *named])
    ridge_leads = ridge_leaders(display, axes, [*ceiling_names, *markers, *named], ridge_names,
                                segments)
    ridge_boxes = [*ridge_marks(display, axes), *(b for *_, b in ridge_names),
                   *(lead.box for _, lead in ridge_leads)]
    _add_point_traces(fig, go, display, analysis, drawn, predicted, names, at, drawn_points,
                      short)
    _add_marks(fig, go, display, analysis, drawn, steps, caps, axes)
    fig.update_layout(annotations=[
        *slope_annotations(pairs, axes, [*ceiling_names, *named, *cap_boxes, *ridge_boxes],
                           _line_vertices(fig)),
        *ridge_annotations(display, ridge_names),
        *ridge_leader_annotations(display, ridge_leads),
        *_leader_annotations(leaders, at, radius)])
    fig.update_layout(**_layout(axes, analysis, title, len(names) + len(leaders),
                                drawn_points, drawn + predicted, axis_title(display)))
    return fig


def _line_vertices(fig) -> list:
    """(trace index, vertices) of every line trace drawn but the levels' join lines: what
    a slope's name keeps clear of."""
    return [(i, list(zip(t.x, t.y, strict=True))) for i, t in enumerate(fig.data)
            if t.mode and "lines" in t.mode and t.name != JOIN_LEGEND]


def _leader_annotations(leaders: dict, at: At, radius: dict) -> list:
    """The kernels' names written out on a leader line (html_leaders), one annotation each."""
    return [leader_annotation(*at[k], text, lead, radius.get(k, MARKER_RADIUS_PX),
                              f"kernel:{k[0]}:{k[1]}") for k, (text, lead) in leaders.items()]


def _obstacles(display: RooflineDisplay, axes: Axes, drawn_points: dict,
               pts: Sequence[Point], at: At, traces: list, cap_boxes: list):
    """(lines, radius, markers) for the names to keep clear of: every line drawn (the
    traces': roofs', mixed kernels', optimisation steps'), each point's marker radius (px)
    by Key, and the boxes of the points' markers, the launch caps and the ridges."""
    # Every line drawn, for the names to keep clear of: the roofs', the mixed kernels' and
    # the optimisation steps' (a flat roof's name vertex, added below, lies on its line).
    lines = [(i, list(zip(t.x, t.y, strict=True))) for i, t in enumerate(traces)]
    # a marker drawn larger for its time share is a larger obstacle (never a smaller one)
    radius = {k: max(MARKER_RADIUS_PX, d.size / 2) for k, d in drawn_points.items()}
    markers = [marker_box(axes.px(*at[_key(p)]), radius[_key(p)])
               for p in pts] + cap_boxes + ridge_marks(display, axes)
    return lines, radius, markers


def _add_point_traces(fig, go, display: RooflineDisplay, analysis: Analysis,
                      drawn: list, predicted: list, names: dict[Key, str], at: At,
                      drawn_points: dict, short: dict[str, str]) -> None:
    """The lines joining each kernel's levels, its points (one trace per level, measured
    then predicted) and the rings round points above their roof, in that order."""
    # the PNG's sizes (area proportional to the time share) where it sizes them; else
    # the report's usual 11 px for every marker
    sizes = ({k: d.size for k, d in drawn_points.items()} if display.sized else None)
    colors = {k: d.color for k, d in drawn_points.items()}
    joins = joins_trace(go, display)
    if joins is not None:      # under the markers (short, flat: no obstacle to the names)
        fig.add_trace(joins)
    for pts, measured in ((drawn, True), (predicted, False)):
        for level in dict.fromkeys(p.level for p in pts):
            mine = [p for p in pts if p.level == level]
            fig.add_trace(_points_trace(mine, level, measured, names, analysis, at,
                                        sizes, colors, short))
            keys = [_key(p) for p in mine]
            glyphs = side_glyph_trace(
                go, [at[k] for k in keys], [drawn_points[k].side for k in keys],
                [colors[k] for k in keys], [(sizes or {}).get(k, 11.0) for k in keys],
                measured, _group(level, measured))
            if glyphs is not None:
                fig.add_trace(glyphs)
    for t in above_ring_traces(go, drawn_points, at):
        fig.add_trace(t)


def _add_marks(fig, go, display: RooflineDisplay, analysis: Analysis, drawn: list, steps,
               caps, axes: Axes) -> None:
    """The ridges' markers, the optimisation steps, the size legend's entry and the launch
    caps, in that order, over the points."""
    ridges = ridge_trace(go, display)
    if ridges is not None:
        fig.add_trace(ridges)
    if steps:
        fig.add_trace(steps)
    size_words = size_legend(display) if drawn else ""   # the PNG legend's words
    if size_words:
        fig.add_trace(size_legend_trace(go, size_words))
    for t in cap_traces(caps, axes, analysis.roof):
        fig.add_trace(t)


def _layout(axes: Axes, analysis: Analysis, title: str, named: int, drawn_points: dict,
            pts: Sequence[Point], axis: str = GENERIC) -> dict:
    """The figure's title, log axes over the ranges the names were placed in (axis: the x
    axis's title), and the legend's title (named: how many kernels have a name beside their
    marker)."""
    return dict(
        title=plotly_text(title or titled(chart_subject(analysis.kernels), analysis.roof.name)),
        template="plotly_white",
        # transparent over the page's white image (html_colors: legible under forced dark)
        paper_bgcolor=PLOT_BG, plot_bgcolor=PLOT_BG,
        # Ranges given, not autoranged: the names were placed in these axes.
        # which bytes the intensity counts (review s22 r6 F3): axis_words, as the PNG says
        xaxis={"type": "log", "title": plotly_text(axis),
               "range": list(axes.x_range), "dtick": log_dtick(axes.x_range, axes.size[0])},
        yaxis={"type": "log", "title": "performance (FLOP/s)", "range": list(axes.y_range),
               **rate_ticks(axes.y_range, axes.size[1])},
        legend={"title": _legend_title(
            named, len({p.kernel_index for p in pts}),
            side_key({drawn_points[_key(p)].side for p in pts}))},
        height=620)


def above_ring_traces(go, drawn_points: dict, at: At) -> list:
    """The PNG's ring round each point above its roof (chart_words.above_roof; chart_draw's
    above_ring_styles): vermillion over a wider black ring, ABOVE_RING_PT wider than the
    marker, one legend entry (ABOVE_LEGEND) toggling both. Review 19c N4: the HTML drew
    a 310 %-of-roof point like any other; only the banner above named it. [] when none."""
    over = [(k, d) for k, d in drawn_points.items() if above_roof(d) and k in at]
    if not over:
        return []
    xs, ys = [at[k][0] for k, _ in over], [at[k][1] for k, _ in over]
    size = [d.size + ABOVE_RING_PT for _, d in over]
    common = {"x": xs, "y": ys, "mode": "markers", "legendgroup": "above-roof",
              "name": ABOVE_LEGEND, "hoverinfo": "skip"}
    return [go.Scatter(**common, showlegend=False,
                       marker={"size": size, "symbol": "circle-open", "color": ABOVE_EDGE_COLOR,
                               "line": {"width": ABOVE_RING_MEW + ABOVE_EDGE_PT,
                                        "color": ABOVE_EDGE_COLOR}}),
            go.Scatter(**common, showlegend=True,
                       marker={"size": size, "symbol": "circle-open", "color": ABOVE_COLOR,
                               "line": {"width": ABOVE_RING_MEW, "color": ABOVE_COLOR}})]


def _legend_title(named: int, kernels: int, sides: str = "") -> str:
    """'click to toggle', how many kernels are named when not all are, and the colours of
    the sides of the ridge (side_key)."""
    out = "click to toggle"
    if named < kernels:
        out += (f"<br><sub>{named} of {kernels} kernels named (the longest);"
                f"<br>hover a point for the others</sub>")
    return out + (f"<br><sub>{sides}</sub>" if sides else "")


def _short(kernel: str, short: dict[str, str] | None) -> str:
    """The kernel's name on the chart: its entry in `short` (chart_names), else chart_name,
    as plotly text (html_text: the label, its box and its leader show the name as written,
    as the hover does; review s22 r1 F6)."""
    return plotly_text((short or {}).get(kernel) or chart_name(kernel))


def _name_boxes(pts: Sequence[Point], names: dict[Key, str], axes: Axes, at: At,
                radius: dict[Key, float] | None = None,
                short: dict[str, str] | None = None) -> list:
    """Every marker's box and every kernel name's (the slopes' names keep clear of them)."""
    out = []
    for p in pts:
        xy = axes.px(*at[_key(p)])
        out.append(marker_box(xy, (radius or {}).get(_key(p), MARKER_RADIUS_PX)))
        if _key(p) in names:
            out.append(text_box(xy, _short(p.kernel, short), names[_key(p)], POINT_FONT_PX))
    return out


def _point_names(analysis: Analysis, pts: Sequence[Point], axes: Axes,
                 obstacles: list, segments: Sequence, at: At,
                 radius: dict[Key, float] | None = None,
                 labelled: set[int] | None = None,
                 short: dict[str, str] | None = None,
                 leaders: dict | None = None) -> dict[Key, str]:
    """(kernel index, level) -> textposition: each kernel named once, at its primary level
    (the one that binds it), the longest-running first (the predicted by their floor).
    labelled: the kernels (indices) that may be named, None: every one."""
    primary = {_key(p) for p in analysis.primary()}
    shown = [p for p in pts if _key(p) in primary
             and (labelled is None or p.kernel_index in labelled)]
    cands = [Candidate(i, *at[_key(p)], _short(p.kernel, short),
                       p.seconds or p.floor_s or 0.0)
             for i, p in enumerate(shown)]
    # the other levels' markers are in the way too (the candidates' own are added there)
    others = [marker_box(axes.px(*at[_key(p)]), (radius or {}).get(_key(p), MARKER_RADIUS_PX))
              for p in pts if _key(p) not in primary]
    leads: dict | None = {} if leaders is not None else None
    placed = place_names(cands, axes, [*obstacles, *others], segments=segments, leaders=leads)
    if leaders is not None:
        # Key -> (name, Leader) for those written out with a leader (html_leaders)
        leaders.update({_key(shown[i]): (cands[i].text, lead) for i, lead in leads.items()})
    return {_key(shown[i]): pos for i, pos in placed.items()}


def _labelled(display: RooflineDisplay, drawn: dict) -> set[int] | None:
    """The kernels (analysis indices) the display labels where it labels only the longest
    (chart.LABELS_SHOWN of thousands), else None. The HTML names the longest too
    (MAX_NAMED of them), so only these are tried: trying each of 20 000 kernels against
    every marker took most of a big report's time (review 18 leftovers)."""
    if not display.unlabelled:
        return None
    return {k[0] for k, d in drawn.items() if d.text}


def chart_left_out(display: RooflineDisplay) -> str:
    """The sentence under the chart naming the compute ceilings it leaves out ('' when it
    draws every one): a roof with more than MAX_CEILINGS is drawn with the kernels' own
    ceilings and its top float one, as the PNG chart (chart_ceilings.select_ceilings)."""
    by_roof: dict[str, list[str]] = {}
    for h in display.hidden:            # "roof: label rate"
        roof, _, ceiling = h.rpartition(": ")
        by_roof.setdefault(roof, []).append(ceiling)
    if not by_roof:
        return ""
    left = "; ".join(f"{roof}: {', '.join(cs)}" for roof, cs in by_roof.items())
    return (f"Compute ceilings drawn: the kernels' own and the top float one of each roof "
            f"with more than {MAX_CEILINGS} (as `rooflab plot` draws them); left out: "
            f"{left}. `rooflab specs` lists every ceiling; `rooflab plot --precision all` "
            f"draws them.")
