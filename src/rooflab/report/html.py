"""A self-contained interactive HTML report (plotly.js inlined: no network needed to view it).

The chart draws what the PNG chart draws (chart.roofline_data's RooflineDisplay: the same
lines, the same selection of compute ceilings, the same points and launch caps), as plotly
traces: one legend entry per ceiling (each roof's slopes per memory level and flat roofs
per precision) and per memory level of points, so clicking the legend toggles them;
hovering a point shows every number of it with its provenance. Only the names' places are
its own (html_labels: plotly's page is zoomed and resized). The tables of the Markdown
report (record table, priorities, kernels, advice) follow the chart.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import replace

from ..errors import require
from ..hardware.profile import MachineProfile
from ..model.analysis import Analysis, Point
from ..model.ceiling import Roof
from ..model.diagnose import Diagnosis, diagnose, level_bound
from ..model.kernel import Kernel
from ..units import fmt_ai, fmt_factor, fmt_pct, fmt_rate, fmt_seconds, si
from .chart import (
    REAL_TRAFFIC_LEGEND,
    REAL_TRAFFIC_STYLE,
    memory_ops,
    roofline_data,
    size_legend,
)
from .chart_ceilings import MAX_CEILINGS
from .chart_parts import (
    CAP_LEGEND,
    CAP_SHOWN,
    COMPUTE_COLOR,
    JOIN_COLOR,
    JOIN_LEGEND,
    LEVEL_COLORS,  # noqa: F401 (re-exported: the level colours of html's traces)
    LEVEL_MARKERS,
    PLOTLY_DASH,
    SIZE_LEGEND,
    SIZE_MAX,
    SIZE_MIN,
    LaunchCap,
    Line,
    RooflineDisplay,
    level_color,
)
from .html_labels import (
    CEILING_FONT_PX,
    MARKER_RADIUS_PX,
    POINT_FONT_PX,
    POSITIONS,
    Axes,
    Candidate,
    Flat,
    Slope,
    line_label_box,
    marker_box,
    pixel_segments,
    place_ceiling_names,
    place_names,
    place_slope_names,
    text_box,
)
from .markdown import (
    ADVICE_HEADERS,
    KERNEL_HEADERS,
    PRIORITY_HEADERS,
    RANKED_BY,
    RECORD_HEADERS,
    STEP_HEADERS,
    UNPLACED_HEADERS,
    UNPLACED_TITLE,
    advice_rows,
    generator_footer,
    kernel_row_notes,
    kernel_rows,
    machine_for,
    machine_line,
    priority_rows,
    record_notes,
    record_rows,
    step_findings,
    step_kernels,
    step_rows,
    trust_warnings,
    unplaced_rows,
    unplaced_summary,
)

# The lines are coloured by memory level (chart_parts.LEVEL_COLORS, COMPUTE_COLOR for flat
# roofs); plotly's names for the PNG chart's LEVEL_MARKERS (matplotlib codes):
LEVEL_SYMBOLS = {"^": "triangle-up", "s": "square", "D": "diamond", "o": "circle",
                 "P": "cross", "X": "x", "*": "star", "h": "hexagon"}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.flag{color:#b00020;font-weight:bold}.finding{color:#8a4b00}.muted{color:#666}
"""


# The slopes' names were turned for html_labels' model of the plot area (PLOT_PX), but the
# page is as wide as the window and the reader zooms: after each redraw this turns them to
# the plot's real pixels per decade, and hides a name whose slope the legend hid (an
# annotation is no trace: the legend does not toggle it). Each changes only when off by
# half a degree or pixel, so its own relayout ends the loop.
SLOPE_SCRIPT = """
(function () {
  var gd = document.getElementById('{plot_id}');
  function fit() {
    var xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, update = {};
    var angle = Math.atan2(ya._length / (ya.range[1] - ya.range[0]),
                           xa._length / (xa.range[1] - xa.range[0]));
    (gd.layout.annotations || []).forEach(function (a, i) {
      var m = /^slope:(\\d+):(-?[0-9.]+)$/.exec(a.name || '');
      if (!m) return;
      var v = gd.data[+m[1]].visible, shown = v === undefined || v === true;
      var off = +m[2], want = {textangle: -angle * 180 / Math.PI,
                               xshift: -off * Math.sin(angle), yshift: off * Math.cos(angle)};
      for (var k in want)
        if (Math.abs((a[k] || 0) - want[k]) > 0.5) update['annotations[' + i + '].' + k] = want[k];
      if ((a.visible !== false) !== shown) update['annotations[' + i + '].visible'] = shown;
    });
    if (Object.keys(update).length) Plotly.relayout(gd, update);
  }
  gd.on('plotly_afterplot', fit);
  fit();
})();
"""


def chart_display(analysis: Analysis, profile: MachineProfile | None = None,
                  size_by: str = "time", min_share: float | None = None
                  ) -> RooflineDisplay:
    """What the report's chart shows, worked out as the PNG chart works it out
    (chart.roofline_data: its lines, its selection of ceilings, its points and launch
    caps, the markers' sizes and the lines joining a kernel's levels): the judging roof
    first, then the profile's other roofs, and every kernel (over min_share of the time:
    `rooflab report --min-share`)."""
    roofs = [analysis.roof]
    if profile is not None:
        roofs += [r for r in profile.roofs if r is not analysis.roof and r != analysis.roof]
    # the HTML names lines and points itself (html_labels): the PNG's places are not needed
    return roofline_data(roofs, analysis.kernels, place_labels=False, size_by=size_by,
                         min_share=min_share)


def _roof_traces(go, display: RooflineDisplay) -> list:
    """The display's slopes and flat roofs as plotly traces: (trace, its Slope or Flat)
    pairs, None for a flat roof an equal one names (slopes are named by annotations, turned
    along the line; flat roofs by their trace's text, at a vertex html_labels.
    place_ceiling_names chooses: see _name_ceilings). A trace holds its line's vertices
    and, on the line, one more: hover and the name need a vertex inside the line."""
    roofs = dict(zip(display.roof_labels, display.roofs, strict=True))
    lines = [ln for ln in display.lines if ln.kind in ("memory", "compute")]
    # Each flat roof is named on the chart (all are one colour: without a name the reader
    # cannot tell fp16 tensor from fp32 vector); equal ones (fp32 vector = fp64 tensor)
    # share one name.
    same: dict[tuple[str, float], list[str]] = {}
    for ln in lines:
        if ln.kind == "compute":
            same.setdefault((ln.roof, ln.ys[0]), []).append(ln.ceiling.label)
    traces = []
    for ln in lines:
        roof, judge = roofs[ln.roof], ln.roof == display.roof_labels[0]
        c = ln.ceiling
        own = f" ({c.provenance})" if c.provenance != roof.kind else ""
        style = {"dash": _DASH[ln.style], "width": 2.5 if judge else 1.5}
        name = (f"{REAL_TRAFFIC_LEGEND} {si(c.value, 'B/s')}"
                + ("" if judge else f" ({roof.kind})")
                if ln.style == REAL_TRAFFIC_STYLE else f"{roof.kind} {ln.label}{own}")
        common = {"name": name,
                  "hovertext": html.escape(ln.hover, quote=False), "hoverinfo": "text"}
        if ln.kind == "memory":
            traces.append(_slope_trace(go, ln, judge, roof, style, common))
            continue
        names = same[(ln.roof, ln.ys[0])]
        # The judging roof's names are best at the right end, the others' at their left
        # end, so two roofs with close peaks start apart (place_ceiling_names moves them on
        # when something is there).
        text = (f"{', '.join(names)} {fmt_rate(c.value, c.precision)}"
                + ("" if judge else f" ({roof.kind})")) if names[0] == c.label else ""
        (x0, x1), (y, _) = ln.xs, ln.ys
        traces.append((go.Scatter(
            x=list(ln.xs), y=list(ln.ys), mode="lines+text", text=["", ""],
            textposition="top left" if judge else "top right",
            textfont={"size": CEILING_FONT_PX, "color": COMPUTE_COLOR},
            line={"color": COMPUTE_COLOR, **style}, **common),
            Flat(0, y, x0, x1, text, "right" if judge else "left") if text else None))
    return traces


# The chart's line styles in plotly's words; the real-traffic DRAM ceiling's dash-dot-dot
# (chart.REAL_TRAFFIC_STYLE) as the PNG draws it, a pattern no other line has.
_DASH = {**PLOTLY_DASH, REAL_TRAFFIC_STYLE: "6px,2px,2px,2px,2px,2px"}


def _slope_trace(go, ln: Line, judge: bool, roof: Roof, style: dict, common: dict):
    """A slope with a vertex on it a third of the way up for the judging roof, two thirds
    for the other (where its name is best: html_labels), and its Slope."""
    (x0, x1), bw = ln.xs, ln.ceiling.value
    f = 0.35 if judge else 0.65
    x_mid = 10 ** (math.log10(x0) + f * (math.log10(x1) - math.log10(x0)))
    text = ln.label + ("" if judge else f" ({roof.kind})")
    return (go.Scatter(x=[x0, x_mid, x1], y=[ln.ys[0], bw * x_mid, ln.ys[1]], mode="lines",
                       line={"color": level_color(ln.level), **style}, **common),
            Slope(0, bw, x0, x1, text, prefer=f))


def _name_ceilings(pairs, axes: Axes, obstacles: list, lines: list) -> None:
    """Write each flat roof's name at the vertex place_ceiling_names chose: the trace gets
    that vertex (on its line, so the line does not change) and the text there."""
    flats = [replace(f, key=i) for i, (_, f) in enumerate(pairs) if isinstance(f, Flat)]
    for key, at in place_ceiling_names(flats, axes, obstacles, lines).items():
        t, f = pairs[key][0], pairs[key][1]
        xs = sorted({*t.x, at.x})
        t.x, t.y = xs, [f.value] * len(xs)
        t.text = [f.text if x == at.x else "" for x in xs]
        t.textposition = at.position


def _mixed_traces(go, display: RooflineDisplay) -> list:
    """Each mixed-precision kernel's weighted ceiling (the display's "mixed" lines): a thin
    dotted segment from its ridge to the right, in its level's colour (dotted, not the
    roofs' dashes, so it reads as its kernels' own roof, not one more ceiling)."""
    return [go.Scatter(x=list(ln.xs), y=list(ln.ys), mode="lines", name=ln.label,
                       line={"color": level_color(ln.level), "dash": "dot", "width": 1.2},
                       hovertext=html.escape(ln.hover, quote=False), hoverinfo="text")
            for ln in display.lines if ln.kind == "mixed"]


# A launch cap's ticks, down from each end of its dash (pixels of the model plot).
CAP_TICK_PX = 4.0


def _launch_caps(display: RooflineDisplay) -> list[LaunchCap]:
    """The display's launch caps (chart_parts.launch_cap: over each kernel's named point,
    where the cap is at most CAP_SHOWN x the roof there), in their level's colour."""
    return [replace(c, color=level_color(c.level)) for c in display.caps]


def _cap_geometry(cap: LaunchCap, axes: Axes) -> tuple[list[float], list[float]]:
    """The dash's vertices (data units): down-tick, dash, down-tick."""
    span = axes.y_range[1] - axes.y_range[0]
    drop = 10 ** (-CAP_TICK_PX / axes.size[1] * span)
    (x0, x1), y = cap.xs, cap.flop_per_s
    return [x0, x0, x1, x1], [y * drop, y, y, y * drop]


def _cap_box(cap: LaunchCap, axes: Axes):
    """The dash's box in pixels (its ticks included): the names keep clear of it."""
    (x0, y), (x1, _) = axes.px(cap.xs[0], cap.flop_per_s), axes.px(cap.xs[1], cap.flop_per_s)
    return (x0 - 0.5, y - CAP_TICK_PX - 0.5, x1 + 0.5, y + 1.0)


def _cap_traces(go, caps: Sequence[LaunchCap], axes: Axes, roof: Roof) -> list:
    """One trace per launch cap, one legend entry for all (clicking it toggles them);
    hover gives the numbers: 'launch cap 100 GFLOP/s = 1 MFLOP / (10 calls × 1 us)'."""
    why = f" ({html.escape(roof.overhead_source)})" if roof.overhead_source else ""
    traces = []
    for i, c in enumerate(caps):
        xs, ys = _cap_geometry(c, axes)
        text = (f"<b>{html.escape(c.kernel)}</b> @ {c.level}: {c.words()}<br>"
                f"{c.calls} launch(es) take at least {fmt_seconds(c.calls * c.overhead_s)}"
                f" (launch floor {fmt_seconds(c.overhead_s)} per call{why}), whatever the AI;"
                f"<br>drawn where the cap is at most {CAP_SHOWN:g}x the roof at this AI")
        traces.append(go.Scatter(
            x=xs, y=ys, mode="lines", name=CAP_LEGEND, legendgroup="launch-cap",
            showlegend=i == 0, line={"color": c.color, "width": 1.6},
            hovertext=text, hoverinfo="text"))
    return traces


def _bound(p: Point, analysis: Analysis, k: Kernel | None) -> str:
    """The point's bound as the tables print it (diagnose.level_bound: "not binding (DRAM
    binds)" for a level under another level's binding roof)."""
    pts = analysis.points_of(k) if k is not None else ()
    return level_bound(p, min(pts, key=lambda q: q.attainable_flop_per_s) if pts else None)


def hover_text(p: Point, analysis: Analysis) -> str:
    """Every number of a point, with the provenance of its kernel's numbers."""
    k = analysis.kernel_of(p)
    prov = dict(k.provenance) if k is not None else {}
    rows = [
        f"<b>{html.escape(p.kernel)}</b> @ {p.level}",
        f"FLOP: {si(p.flop, 'FLOP')} ({p.precision}; {prov.get('flop', '?')})",
        f"bytes: {si(p.bytes, 'B')} ({p.level}; {prov.get('bytes', '?')})",
        (f"time: {fmt_seconds(p.seconds)} over {p.calls} call(s) ({prov.get('seconds', '?')})"
         if p.seconds else f"time: not measured ({p.calls} call(s)); drawn at its attainable "
                           f"FLOP/s (predicted)"),
        f"AI: {fmt_ai(p.ai)} FLOP/B (ridge {fmt_ai(p.ridge)})",
        f"achieved: {fmt_rate(p.achieved_flop_per_s, p.precision)}",
        f"attainable: {fmt_rate(p.attainable_flop_per_s, p.precision)} (binding: {p.binding})",
        f"% of roof: {fmt_pct(p.percent_of_roof, space=True)}",
        f"bound: {_bound(p, analysis, k)}; {floor_words(p)}",
        f"time share: {'-' if p.time_share is None else f'{100 * p.time_share:.1f} %'}",
        f"roof: {html.escape(analysis.roof.name)} ({analysis.roof.kind})",
    ]
    if p.note:
        rows.append(html.escape(p.note))
    return "<br>".join(rows)


def floor_words(p: Point) -> str:
    """The point's time floor as `rooflab ai` names it (review 13v F-H): where calls x the
    launch floor is above the work floor, both, the launch one first ("time floor 5 us
    (launch); work floor 155 ns"): "overhead; floor 155 ns" named the floor that does not
    bind."""
    launch = p.overhead_floor_s
    if launch is not None and launch > p.floor_s:
        return (f"time floor {fmt_seconds(launch)} (launch); work floor "
                f"{fmt_seconds(p.floor_s)}")
    return f"floor {fmt_seconds(p.floor_s)}"


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


def _points_trace(go, pts: Sequence[Point], level: str, measured: bool,
                  names: dict[Key, str], analysis: Analysis, at: At,
                  sizes: dict[Key, float] | None = None):
    """Kernels at one level: filled at their achieved performance, or hollow at their
    attainable one when no time was measured. names: (kernel index, level) ->
    textposition of the points named beside their marker (html_labels); the others are
    named on hover. sizes: each marker's diameter (px), the display's DrawnPoint.size, as
    the PNG draws it in points (area proportional to the time share); default 11 each."""
    symbol = LEVEL_SYMBOLS.get(LEVEL_MARKERS.get(level, "o"), "circle")
    keys = [_key(p) for p in pts]
    size = [sizes[k] for k in keys] if sizes else 11
    return go.Scatter(
        x=[at[k][0] for k in keys], y=[at[k][1] for k in keys],
        mode="markers+text", name=f"kernels @ {level}" if measured else
        f"predicted @ {level} (no measured time)",
        text=[p.kernel if k in names else "" for p, k in zip(pts, keys, strict=True)],
        textposition=[names.get(k, POSITIONS[0]) for k in keys],
        marker=({"size": size, "symbol": symbol, "color": level_color(level),
                 "line": {"width": 1, "color": "#222"}} if measured
                else {"size": size, "symbol": f"{symbol}-open", "color": level_color(level),
                      "line": {"width": 2}}),
        hovertext=[hover_text(p, analysis) for p in pts], hoverinfo="text")


def figure(analysis: Analysis, profile: MachineProfile | None = None, title: str = "",
           display: RooflineDisplay | None = None):
    """The plotly Figure of the chart_display (given, or worked out here): its roofs'
    lines (judging roof first, others thinner), weighted roofs, points and launch caps,
    each hoverable, named where html_labels finds room."""
    go = require("plotly.graph_objects", "html", "the interactive HTML report")
    display = display if display is not None else chart_display(analysis, profile)
    fig = go.Figure()
    pairs = _roof_traces(go, display)
    pairs += [(t, None) for t in _mixed_traces(go, display)]
    roof_traces = [t for t, _ in pairs]
    drawn_points = _drawn(analysis, display)
    at = {k: (d.ai, d.flop_per_s) for k, d in drawn_points.items()}
    # the PNG's sizes (area proportional to the time share) where it sizes them; else
    # the report's usual 11 px for every marker
    sizes = ({k: d.size for k, d in drawn_points.items()} if display.sized else None)
    # Kernels without a measured time sit at their attainable performance, hollow, as
    # the PNG chart draws them: a prediction, not a measurement.
    drawn = [p for p in analysis.points if _key(p) in at and p.achieved_flop_per_s is not None]
    predicted = [p for p in analysis.points if _key(p) in at
                 and p.achieved_flop_per_s is None]
    caps = _launch_caps(display)
    axes = Axes(tuple(math.log10(x) for x in display.xlim),
                tuple(math.log10(y) for y in display.ylim))
    cap_boxes = [_cap_box(c, axes) for c in caps]
    steps = _steps_trace(go, analysis, drawn)
    # Every line drawn, for the names to keep clear of: the roofs', the mixed kernels' and
    # the optimisation steps' (a flat roof's name vertex, added below, lies on its line).
    lines = [(i, list(zip(t.x, t.y, strict=True)))
             for i, t in enumerate([*roof_traces, *([steps] if steps else [])])]
    # a marker drawn larger for its time share is a larger obstacle (never a smaller one)
    radius = {k: max(MARKER_RADIUS_PX, d.size / 2) for k, d in drawn_points.items()}
    markers = [marker_box(axes.px(*at[_key(p)]), radius[_key(p)])
               for p in drawn + predicted] + cap_boxes
    # The ceilings are named first (every one is: they are all one colour), then the
    # kernels where they stay readable (the longest first, each clear of the others and
    # of the lines where it can be; hover always has them), then the slopes.
    _name_ceilings(pairs, axes, markers, lines)
    for t in roof_traces:       # added named: the figure keeps copies
        fig.add_trace(t)
    ceiling_names = _line_label_boxes(roof_traces, axes)
    segments = [(a, b) for _, a, b in pixel_segments(axes, lines)]
    names = _point_names(analysis, drawn + predicted, axes, [*ceiling_names, *cap_boxes],
                         segments, at, radius)
    joins = _joins_trace(go, display)
    if joins is not None:      # under the markers (short, flat: no obstacle to the names)
        fig.add_trace(joins)
    for pts, measured in ((drawn, True), (predicted, False)):
        for level in dict.fromkeys(p.level for p in pts):
            fig.add_trace(_points_trace(go, [p for p in pts if p.level == level], level,
                                        measured, names, analysis, at, sizes))
    if steps:
        fig.add_trace(steps)
    size_words = size_legend(display) if drawn else ""   # the PNG legend's words
    if size_words:
        fig.add_trace(_size_legend(go, size_words))
    for t in _cap_traces(go, caps, axes, analysis.roof):
        fig.add_trace(t)
    fig.update_layout(annotations=_slope_annotations(
        pairs, axes, [*ceiling_names, *_name_boxes(drawn + predicted, names, axes, at,
                                                     radius),
                      *cap_boxes],
        [(i, list(zip(t.x, t.y, strict=True))) for i, t in enumerate(fig.data)
         if t.mode and "lines" in t.mode and t.name != JOIN_LEGEND]))
    fig.update_layout(
        title=title or f"Roofline: {analysis.roof.name}", template="plotly_white",
        # Ranges given, not autoranged: the names were placed in these axes.
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte)",
               "range": list(axes.x_range), "dtick": log_dtick(axes.x_range, axes.size[0])},
        yaxis={"type": "log", "title": "performance (FLOP/s)", "exponentformat": "SI",
               "range": list(axes.y_range), "dtick": log_dtick(axes.y_range, axes.size[1])},
        legend={"title": _legend_title(len(names),
                                       len({p.kernel_index for p in drawn + predicted}))},
        height=620)
    return fig


def _joins_trace(go, display: RooflineDisplay):
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


def _steps_trace(go, analysis: Analysis, drawn: Sequence[Point]):
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


def log_dtick(log_range: tuple[float, float], px: float) -> str | None:
    """plotly's dtick for a log axis of this range (log10) and length: "D2" (2 and 5 between
    the decades) when there is room, else None (plotly's own: decades)."""
    decades = max(abs(log_range[1] - log_range[0]), 1e-9)
    return "D2" if px / decades >= D2_MIN_PX_PER_DECADE else None


def _legend_title(named: int, kernels: int) -> str:
    if named >= kernels:
        return "click to toggle"
    return (f"click to toggle<br><sub>{named} of {kernels} kernels named (the longest);"
            f"<br>hover a point for the others</sub>")


def _size_legend(go, words: str = SIZE_LEGEND):
    """The legend entry saying what a marker's size means (chart.size_legend's words, as
    the PNG's): a trace with no points (it draws nothing; plotly lists it in the legend
    all the same)."""
    name = (f"{SIZE_LEGEND} (area: {SIZE_MIN:g} px under 4 %, {SIZE_MAX:g} px at 100 %)"
            if words == SIZE_LEGEND else words)
    return go.Scatter(x=[], y=[], text=[], mode="markers", hoverinfo="skip", name=name,
                      marker={"size": 12, "symbol": "circle-open", "color": "#555"})


def _line_label_boxes(roof_traces, axes: Axes) -> list:
    """Where the ceilings' and slopes' names are (the kernels' names keep clear of them)."""
    boxes = []
    for t in roof_traces:
        for x, y, text in zip(t.x, t.y, t.text or (), strict=False):
            if text:
                boxes.append(line_label_box(axes, x, y, text, t.textposition,
                                            t.textfont.size or 11))
    return boxes


def _name_boxes(pts: Sequence[Point], names: dict[Key, str], axes: Axes, at: At,
                radius: dict[Key, float] | None = None) -> list:
    """Every marker's box and every kernel name's (the slopes' names keep clear of them)."""
    out = []
    for p in pts:
        xy = axes.px(*at[_key(p)])
        out.append(marker_box(xy, (radius or {}).get(_key(p), MARKER_RADIUS_PX)))
        if _key(p) in names:
            out.append(text_box(xy, p.kernel, names[_key(p)], POINT_FONT_PX))
    return out


def _slope_annotations(pairs, axes: Axes, obstacles: list, lines: list) -> list[dict]:
    """Each slope's name, turned along its line, clear of the other lines, the markers and
    the names (html_labels). lines: (trace index, its vertices) of every trace drawn.
    Each annotation's `name` says which trace it names and how far off its line it sits,
    for the page's script (SLOPE_SCRIPT) to turn it on the plot's real size."""
    slopes = [Slope(i, s.bandwidth, s.x0, s.x1, s.text, s.prefer, s.font_px)
              for i, (_, s) in enumerate(pairs) if isinstance(s, Slope)]
    placed = place_slope_names(slopes, axes, obstacles, lines)
    out = []
    for s in slopes:
        at = placed.get(s.key)
        if at is None:
            continue
        color = pairs[s.key][0].line.color
        out.append({
            "x": math.log10(at.x), "y": math.log10(at.y), "xref": "x", "yref": "y",
            "text": s.text, "showarrow": False, "xanchor": "center", "yanchor": "middle",
            "textangle": -math.degrees(at.angle), "font": {"size": s.font_px, "color": color},
            "xshift": -at.offset * math.sin(at.angle), "yshift": at.offset * math.cos(at.angle),
            "name": f"slope:{s.key}:{at.offset:.2f}"})
    return out


def _point_names(analysis: Analysis, pts: Sequence[Point], axes: Axes,
                 obstacles: list, segments: Sequence, at: At,
                 radius: dict[Key, float] | None = None) -> dict[Key, str]:
    """(kernel index, level) -> textposition: each kernel named once, at its primary level
    (the one that binds it), the longest-running first (the predicted by their floor)."""
    primary = {_key(p) for p in analysis.primary()}
    shown = [p for p in pts if _key(p) in primary]
    cands = [Candidate(i, *at[_key(p)], p.kernel, p.seconds or p.floor_s or 0.0)
             for i, p in enumerate(shown)]
    # the other levels' markers are in the way too (the candidates' own are added there)
    others = [marker_box(axes.px(*at[_key(p)]), (radius or {}).get(_key(p), MARKER_RADIUS_PX))
              for p in pts if _key(p) not in primary]
    placed = place_names(cands, axes, [*obstacles, *others], segments=segments)
    return {_key(shown[i]): pos for i, pos in placed.items()}


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


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _diagnosis_html(d: Diagnosis) -> str:
    e = html.escape
    parts = [f"<h3 id='k{d.rank}'>{d.rank}. {e(d.kernel)} — {e(d.bound)}-bound</h3>",
             f"<p><b>Position</b>: {e(d.evidence)}</p>",
             f"<p><b>Gain</b>: {e(d.gain_words)}"
             + (" <span class='flag'>more than 2x below its roof</span>" if d.flagged else "")
             + "</p>"]
    parts += [f"<p><b>Kernel note</b>: {e(n)}</p>" for n in d.notes]
    parts.append("<ol>")
    for x in d.distances:
        f = fmt_factor(x.factor)
        parts.append(f"<li><b>{e(x.name)}</b> ({f}): {e(x.words)}</li>")
    parts.append("</ol>")
    for f in d.findings:
        causes = "".join(f"<li>{e(c)}</li>" for c in f.causes)
        parts.append(f"<div class='finding'><b>{e(f.check)}</b> ({e(f.severity)}): "
                     f"{e(f.message)}<ul>{causes}<li>check: {e(f.fix)}</li></ul></div>")
    if d.advice:
        parts.append(_html_table(ADVICE_HEADERS, advice_rows(d)))
    return "\n".join(parts)


def html_report(analysis: Analysis, profile: MachineProfile | None = None, title: str = "",
                top: int = 10, size_by: str = "time", min_share: float | None = None
                ) -> str:
    """One self-contained HTML page: chart (plotly.js inlined) and the report's tables.
    size_by, min_share: the chart's markers and kernels (chart.roofline_data); the
    tables keep every kernel."""
    display = chart_display(analysis, profile, size_by, min_share)
    fig = figure(analysis, profile, title, display)
    chart = fig.to_html(full_html=False, include_plotlyjs=True, div_id="roofline",
                        config={"displaylogo": False, "responsive": True,
                                "showSendToCloud": False}, post_script=SLOPE_SCRIPT)
    machine = machine_for(analysis, profile)
    diags = diagnose(analysis, machine)
    e = html.escape
    heading = title or f"Roofline report: {analysis.roof.name}"
    body = [f"<h1>{e(heading)}</h1>",
            f"<p class='muted'>Roof: {e(analysis.roof.name)} ({e(analysis.roof.kind)})"
            + (f"; source: {e(analysis.roof.source)}" if analysis.roof.source else "")
            + ". Hover a point for its numbers and their provenance; click the legend to "
              "toggle ceilings and levels. Measured roofs are solid, nominal dashed"
            + (f"; {e(REAL_TRAFFIC_LEGEND)}: dash-dot-dot"
               if any(ln.style == REAL_TRAFFIC_STYLE for ln in display.lines) else "")
            + ".</p>",
            f"<p class='muted'>{e(machine_line(machine))}</p>"]
    body += [f"<p class='flag'>Read with care: {e(w)}</p>"
             for w in trust_warnings(diags, profile, analysis.notes, analysis.kernels)]
    body.append(chart)
    left_out = chart_left_out(display)
    if left_out:
        body.append(f"<p class='muted'>{e(left_out)}</p>")
    ops = memory_ops(display)   # ops without FLOP have no point: named as the PNG does
    if ops:
        body.append(f"<p class='muted'>Chart: {e(ops)}.</p>")
    if display.dropped:   # --min-share: the tables below still list them
        body.append(f"<p class='muted'>Chart: {e(display.dropped)}; the tables list every "
                    f"kernel.</p>")
    if profile is not None:
        body += ["<h2>Record table (nominal vs measured)</h2>",
                 _html_table(RECORD_HEADERS, record_rows(analysis, profile))]
        notes = record_notes(profile)
        if notes:
            body.append("<ul class='muted'>" + "".join(f"<li>{e(n)}</li>" for n in notes)
                        + "</ul>")
    steps = step_rows(analysis)
    if steps:
        body += ["<h2>Optimisation steps</h2>", _html_table(STEP_HEADERS, steps),
                 "<ul>" + "".join(f"<li>{e(s)}</li>" for s in step_findings(analysis))
                 + "</ul>"]
    body += ["<h2>Top kernels to work on</h2>",
             f"<p>{RANKED_BY}</p>",
             _html_table(PRIORITY_HEADERS, priority_rows(diags[:top])),
             "<h2>Kernels on the roof</h2>", _html_table(KERNEL_HEADERS, kernel_rows(analysis))]
    bandwidth = kernel_row_notes(analysis)
    if bandwidth:
        body.append("<ul class='muted'>" + "".join(f"<li>{e(n)}</li>" for n in bandwidth)
                    + "</ul>")
    if analysis.unplaced:
        body += [f"<h2 id='not-placed'>{UNPLACED_TITLE}</h2>",
                 f"<p>{e(unplaced_summary(analysis))}</p>",
                 _html_table(UNPLACED_HEADERS, unplaced_rows(analysis))]
    body.append("<h2>Diagnosis per kernel</h2>")
    body += [_diagnosis_html(d) for d in diags[:top]]
    if analysis.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in analysis.notes)
                    + "</ul>")
    footer = generator_footer()
    if footer:
        body.append(f"<hr><p class='muted'>{e(footer)}</p>")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(heading)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
