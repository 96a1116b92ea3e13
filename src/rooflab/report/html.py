"""A self-contained interactive HTML report (plotly.js inlined: no network needed to view it).

The chart has one legend entry per ceiling (each roof's slopes per memory level and flat
roofs per precision) and per memory level of points, so clicking the legend toggles them;
hovering a point shows every number of it with its provenance. The tables of the Markdown
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
from ..model.diagnose import Diagnosis, diagnose
from ..model.kernel import Kernel
from ..units import fmt_ai, fmt_factor, fmt_pct, fmt_rate, fmt_seconds, si
from .chart_ceilings import MIXED_SPAN, mixed_label, mixed_roofs
from .chart_parts import CAP_LEGEND, CAP_SHOWN, LEVEL_MARKERS, LaunchCap, launch_cap
from .html_labels import (
    CEILING_FONT_PX,
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

# Okabe-Ito colour-blind-safe colours (Okabe & Ito 2008, jfly.uni-koeln.de/color), as the
# PNG chart's; a level is also its marker shape (the PNG's LEVEL_MARKERS) and its slope is
# named on the line, so nothing rests on colour alone (docs/plot.md).
LEVEL_COLORS = {"L1": "#009E73", "L2": "#CC79A7", "L3": "#56B4E9", "DRAM": "#0072B2"}
COMPUTE_COLOR = "#D55E00"   # vermillion: darker than the orange, so its names read on white
# plotly's names for the PNG chart's LEVEL_MARKERS (matplotlib codes)
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


def _x_range(analysis: Analysis, roofs: Sequence[Roof]) -> tuple[float, float]:
    xs = [p.ai for p in analysis.points if p.ai > 0 and math.isfinite(p.ai)]
    for r in roofs:
        for c in r.compute:
            for m in r.memory:
                xs.append(c.value / m.value)
    lo = min(xs) / 10 if xs else 0.01
    hi = max(xs) * 10 if xs else 1e4
    return lo, hi


def _ridge_level(roof: Roof):
    """The memory ceiling ridges are read against: DRAM, else the fastest level (None
    for a roof without memory ceilings)."""
    return roof.find_memory("DRAM") or (max(roof.memory, key=lambda c: c.value)
                                        if roof.memory else None)


def _roof_traces(go, roof: Roof, judge: bool, xr: tuple[float, float]) -> list:
    """Slopes per memory level (up to the top peak) and flat roofs per compute ceiling:
    (trace, its Slope or Flat) pairs, None for a flat roof an equal one names
    (slopes are named by annotations, turned along the line; flat roofs by their trace's
    text, at a vertex html_labels.place_ceiling_names chooses: see _name_ceilings)."""
    traces = []
    top = roof.top_compute.value if roof.compute else None
    # Per ceiling, as the PNG draws them: a roof of measured bandwidth (STREAM) and
    # datasheet peaks has solid slopes and dashed flat roofs, never all one style.
    def dash(c):
        return "solid" if c.provenance == "measured" else "dash"

    def name(c, what):   # the legend entry; a ceiling of other provenance says its own
        own = f" ({c.provenance})" if c.provenance != roof.kind else ""
        return f"{roof.kind} {what}{own}"

    width = 2.5 if judge else 1.5
    for m in roof.memory:
        x_end = min(xr[1], top / m.value) if top else xr[1]
        # Each slope is named on the line (its colour is not needed to tell L1 from DRAM):
        # best a third of the way up for the judging roof, two thirds for the other.
        f = 0.35 if judge else 0.65
        x_mid = 10 ** (math.log10(xr[0]) + f * (math.log10(x_end) - math.log10(xr[0])))
        color = LEVEL_COLORS.get(m.level, "#555")
        text = f"{m.level} {si(m.value, 'B/s')}" + ("" if judge else f" ({roof.kind})")
        traces.append((go.Scatter(
            x=[xr[0], x_mid, x_end], y=[m.value * xr[0], m.value * x_mid, m.value * x_end],
            mode="lines", name=name(m, f"{m.level} {si(m.value, 'B/s')}"),
            line={"color": color, "dash": dash(m), "width": width},
            hovertext=f"{roof.name}: {m.level} {si(m.value, 'B/s')} ({m.provenance}"
                      f"{'; ' + m.source if m.source else ''})", hoverinfo="text"),
            Slope(0, m.value, xr[0], x_end, text, prefer=f)))
    fastest = max(roof.memory, key=lambda c: c.value) if roof.memory else None
    dram = _ridge_level(roof)
    # Each flat roof is named on the chart (all are one colour: without a name the reader
    # cannot tell fp16 tensor from fp32 vector); equal ones (fp32 vector = fp64 tensor)
    # share one name. The judging roof's are best at the right end, the others' at their
    # left end, so two roofs with close peaks start apart (place_ceiling_names moves them
    # on when something is there).
    same: dict[float, list[str]] = {}
    for c in roof.compute:
        same.setdefault(c.value, []).append(c.label)
    for c in roof.compute:
        # The flat roof starts where the fastest level's slope meets it.
        x0 = c.value / fastest.value if fastest else xr[0]
        names = same[c.value]
        text = (f"{', '.join(names)} {fmt_rate(c.value, c.precision)}"
                + ("" if judge else f" ({roof.kind})")) if names[0] == c.label else ""
        traces.append((go.Scatter(
            x=[x0, xr[1]], y=[c.value] * 2, mode="lines+text", text=["", ""],
            textposition="top left" if judge else "top right",
            textfont={"size": CEILING_FONT_PX, "color": COMPUTE_COLOR},
            name=name(c, f"{c.label} {fmt_rate(c.value, c.precision)}"),
            line={"color": COMPUTE_COLOR, "dash": dash(c), "width": width},
            hovertext=f"{roof.name}: {c.label} {fmt_rate(c.value, c.precision)} ({c.provenance}"
                      f"{'; ' + c.source if c.source else ''}); ridge vs "
                      f"{dram.level if dram else '-'} "
                      f"{fmt_ai(c.value / dram.value) if dram else '-'} FLOP/B",
            hoverinfo="text"),
            Flat(0, c.value, x0, xr[1], text, "right" if judge else "left") if text else None))
    return traces


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


def _mixed_traces(go, analysis: Analysis, xr: tuple[float, float]) -> list:
    """A mixed-precision kernel's weighted ceiling (ceiling.kernel_ceiling), which no roof
    ceiling is: a thin dotted segment from its ridge (against DRAM, as the flat roofs'
    hover, else the fastest level) to the right, in the colour of its kernel's points,
    one per value (kernels sharing it draw it once). Its ridge lies on the slope, which
    runs up to the roof's top ceiling, above every weighted one."""
    roof = analysis.roof
    mem = _ridge_level(roof)
    if mem is None:
        return []
    traces = []
    for m in mixed_roofs([(roof, k) for k in analysis.kernels]):
        names = [k.name for k in m.kernels]
        value, held = m.value, m.held
        ridge = value / mem.value
        pts = [p for p in analysis.points if p.kernel in names and p.ai > 0
               and math.isfinite(p.ai)]
        x_end = min(xr[1], max([ridge * MIXED_SPAN, *(2.0 * p.ai for p in pts)]))
        level = pts[0].level if pts else mem.level
        label = mixed_label(m)
        traces.append(go.Scatter(
            x=[ridge, x_end], y=[value, value], mode="lines", name=label,
            line={"color": LEVEL_COLORS.get(level, "#555"), "dash": "dot", "width": 1.2},
            hovertext=f"{html.escape(label)}: "
                      f"{html.escape(held.label)} {si(value, 'FLOP/s', 4)} (derived; "
                      f"{html.escape(held.ceiling.method)}); ridge vs {mem.level} "
                      f"{fmt_ai(ridge)} FLOP/B", hoverinfo="text"))
    return traces


# A launch cap's ticks, down from each end of its dash (pixels of the model plot).
CAP_TICK_PX = 4.0


def _launch_caps(analysis: Analysis, pts: Sequence[Point]) -> list[LaunchCap]:
    """The launch caps to draw (chart_parts.launch_cap): over each kernel's named point
    (its primary level), in that level's colour, where the cap is at most CAP_SHOWN x the
    roof there."""
    primary = {(p.kernel, p.level) for p in analysis.primary()}
    caps = [launch_cap(p.kernel, p.level, p.ai, p.flop, p.calls, analysis.roof.overhead_s,
                       p.attainable_flop_per_s, LEVEL_COLORS.get(p.level, "#555"), p.seconds)
            for p in pts if (p.kernel, p.level) in primary]
    return [c for c in caps if c is not None]


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


def hover_text(p: Point, analysis: Analysis, kernels: dict[str, Kernel] | None = None
               ) -> str:
    """Every number of a point, with the provenance of the kernel's numbers. kernels: the
    first kernel of each name (first_of_name), for many points: a scan of analysis.kernels
    per point made the HTML report quadratic."""
    k = (kernels or first_of_name(analysis)).get(p.kernel)
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
        f"bound: {p.bound}; {floor_words(p)}",
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


def first_of_name(analysis: Analysis) -> dict[str, Kernel]:
    """Each kernel name's first kernel, as a scan of analysis.kernels would find it."""
    out: dict[str, Kernel] = {}
    for k in analysis.kernels:
        out.setdefault(k.name, k)
    return out


def _height(p: Point) -> float:
    """Where a point is drawn: achieved FLOP/s, or attainable when no time was measured."""
    return p.achieved_flop_per_s or p.attainable_flop_per_s


def _points_trace(go, pts: Sequence[Point], level: str, measured: bool,
                  names: dict[tuple[str, str], str], analysis: Analysis):
    """Kernels at one level: filled at their achieved performance, or hollow at their
    attainable one when no time was measured. names: (kernel, level) -> textposition of
    the points named beside their marker (html_labels); the others are named on hover."""
    color = LEVEL_COLORS.get(level, "#555")
    symbol = LEVEL_SYMBOLS.get(LEVEL_MARKERS.get(level, "o"), "circle")
    keys = [(p.kernel, p.level) for p in pts]
    first = first_of_name(analysis)
    return go.Scatter(
        x=[p.ai for p in pts], y=[_height(p) for p in pts],
        mode="markers+text", name=f"kernels @ {level}" if measured else
        f"predicted @ {level} (no measured time)",
        text=[k[0] if k in names else "" for k in keys],
        textposition=[names.get(k, POSITIONS[0]) for k in keys],
        marker=({"size": 11, "symbol": symbol, "color": color,
                 "line": {"width": 1, "color": "#222"}} if measured
                else {"size": 11, "symbol": f"{symbol}-open", "color": color,
                      "line": {"width": 2}}),
        hovertext=[hover_text(p, analysis, first) for p in pts], hoverinfo="text")


def figure(analysis: Analysis, profile: MachineProfile | None = None, title: str = ""):
    """The plotly Figure: roofs (judging roof first, others dashed/thinner) and points."""
    go = require("plotly.graph_objects", "html", "the interactive HTML report")
    roofs = [analysis.roof]
    if profile is not None:
        roofs += [r for r in profile.roofs if r is not analysis.roof and r != analysis.roof]
    xr = _x_range(analysis, roofs)
    fig = go.Figure()
    pairs = [p for i, r in enumerate(roofs) for p in _roof_traces(go, r, i == 0, xr)]
    pairs += [(t, None) for t in _mixed_traces(go, analysis, xr)]
    roof_traces = [t for t, _ in pairs]
    drawn = [p for p in analysis.points if p.achieved_flop_per_s and p.ai > 0
             and math.isfinite(p.ai)]
    # Kernels without a measured time sit at their attainable performance, hollow, as
    # the PNG chart draws them: a prediction, not a measurement.
    predicted = [p for p in analysis.points if not p.achieved_flop_per_s
                 and p.attainable_flop_per_s and p.ai > 0 and math.isfinite(p.ai)]
    caps = _launch_caps(analysis, drawn + predicted)
    axes = _axes(roof_traces, drawn + predicted, xr, [c.flop_per_s for c in caps])
    cap_boxes = [_cap_box(c, axes) for c in caps]
    steps = _steps_trace(go, analysis, drawn)
    # Every line drawn, for the names to keep clear of: the roofs', the mixed kernels' and
    # the optimisation steps' (a flat roof's name vertex, added below, lies on its line).
    lines = [(i, list(zip(t.x, t.y, strict=True)))
             for i, t in enumerate([*roof_traces, *([steps] if steps else [])])]
    markers = [marker_box(axes.px(p.ai, _height(p))) for p in drawn + predicted] + cap_boxes
    # The ceilings are named first (every one is: they are all one colour), then the
    # kernels where they stay readable (the longest first, each clear of the others and
    # of the lines where it can be; hover always has them), then the slopes.
    _name_ceilings(pairs, axes, markers, lines)
    for t in roof_traces:       # added named: the figure keeps copies
        fig.add_trace(t)
    ceiling_names = _line_label_boxes(roof_traces, axes)
    segments = [(a, b) for _, a, b in pixel_segments(axes, lines)]
    names = _point_names(analysis, drawn + predicted, axes, [*ceiling_names, *cap_boxes],
                         segments)
    for pts, measured in ((drawn, True), (predicted, False)):
        for level in dict.fromkeys(p.level for p in pts):
            fig.add_trace(_points_trace(go, [p for p in pts if p.level == level], level,
                                        measured, names, analysis))
    if steps:
        fig.add_trace(steps)
    for t in _cap_traces(go, caps, axes, analysis.roof):
        fig.add_trace(t)
    fig.update_layout(annotations=_slope_annotations(
        pairs, axes, [*ceiling_names, *_name_boxes(drawn + predicted, names, axes),
                      *cap_boxes],
        [(i, list(zip(t.x, t.y, strict=True))) for i, t in enumerate(fig.data)
         if t.mode and "lines" in t.mode]))
    fig.update_layout(
        title=title or f"Roofline: {analysis.roof.name}", template="plotly_white",
        # Ranges given, not autoranged: the names were placed in these axes.
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte)",
               "range": list(axes.x_range), "dtick": log_dtick(axes.x_range, axes.size[0])},
        yaxis={"type": "log", "title": "performance (FLOP/s)", "exponentformat": "SI",
               "range": list(axes.y_range), "dtick": log_dtick(axes.y_range, axes.size[1])},
        legend={"title": _legend_title(len(names), len({p.kernel for p in drawn + predicted}))},
        height=620)
    return fig


def _steps_trace(go, analysis: Analysis, drawn: Sequence[Point]):
    """The optimisation steps' line (None with fewer than two steps): each step's longest
    kernel, as the steps table and the PNG trajectory (a step's other kernels, an OpenACC
    reduction, would zig-zag the line between unrelated points)."""
    level = "DRAM" if any(p.level == "DRAM" for p in drawn) else None
    points = {p.kernel: p for p in (analysis.at_level(level) if level else analysis.primary())
              if p.achieved_flop_per_s}
    steps = [points[k.name] for k in step_kernels(analysis) if k.name in points]
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


def _axes(roof_traces, pts: Sequence[Point], xr: tuple[float, float],
          extra_ys: Sequence[float] = ()) -> Axes:
    """The axes' ranges: every roof line and point (and extra_ys: the launch caps), with
    room above the top ceiling for its name."""
    ys = ([y for t in roof_traces for y in t.y if y and y > 0] + [_height(p) for p in pts]
          + list(extra_ys))
    lo, hi = (math.log10(min(ys)), math.log10(max(ys))) if ys else (9.0, 15.0)
    span = max(hi - lo, 1.0)
    return Axes((math.log10(xr[0]), math.log10(xr[1])), (lo - 0.03 * span, hi + 0.08 * span))


def _line_label_boxes(roof_traces, axes: Axes) -> list:
    """Where the ceilings' and slopes' names are (the kernels' names keep clear of them)."""
    boxes = []
    for t in roof_traces:
        for x, y, text in zip(t.x, t.y, t.text or (), strict=False):
            if text:
                boxes.append(line_label_box(axes, x, y, text, t.textposition,
                                            t.textfont.size or 11))
    return boxes


def _name_boxes(pts: Sequence[Point], names: dict[tuple[str, str], str], axes: Axes) -> list:
    """Every marker's box and every kernel name's (the slopes' names keep clear of them)."""
    out = []
    for p in pts:
        at = axes.px(p.ai, _height(p))
        out.append(marker_box(at))
        if (p.kernel, p.level) in names:
            out.append(text_box(at, p.kernel, names[(p.kernel, p.level)], POINT_FONT_PX))
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
                 obstacles: list, segments: Sequence = ()) -> dict[tuple[str, str], str]:
    """(kernel, level) -> textposition: each kernel named once, at its primary level (the
    one that binds it), the longest-running first (the predicted by their floor)."""
    primary = {(p.kernel, p.level) for p in analysis.primary()}
    shown = [p for p in pts if (p.kernel, p.level) in primary]
    cands = [Candidate(i, p.ai, _height(p), p.kernel, p.seconds or p.floor_s or 0.0)
             for i, p in enumerate(shown)]
    # the other levels' markers are in the way too (the candidates' own are added there)
    others = [marker_box(axes.px(p.ai, _height(p))) for p in pts
              if (p.kernel, p.level) not in primary]
    placed = place_names(cands, axes, [*obstacles, *others], segments=segments)
    return {(shown[i].kernel, shown[i].level): pos for i, pos in placed.items()}


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
                top: int = 10) -> str:
    """One self-contained HTML page: chart (plotly.js inlined) and the report's tables."""
    fig = figure(analysis, profile, title)
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
              "toggle ceilings and levels. Measured roofs are solid, nominal dashed.</p>",
            f"<p class='muted'>{e(machine_line(machine))}</p>"]
    body += [f"<p class='flag'>Read with care: {e(w)}</p>"
             for w in trust_warnings(diags, profile, analysis.notes, analysis.kernels)]
    body.append(chart)
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
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(heading)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
