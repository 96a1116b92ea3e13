"""The roofs of the HTML chart as plotly traces, and their names: each slope named along
its line (an annotation, turned by SLOPE_SCRIPT on the page's real size), each flat roof
at the vertex html_ceiling_names.place_ceiling_names chooses."""

from __future__ import annotations

import html
import math
from dataclasses import replace

from ..model.ceiling import Roof
from ..model.dies import kind_words, label_kind
from ..units import fmt_rate, si
from .chart_layout_cost import _to_pt
from .chart_layout_roofs import group_label, label_groups
from .chart_marks import text_color
from .chart_parts import COMPUTE_COLOR, PLOTLY_DASH, Line, RooflineDisplay, level_color
from .chart_words import FLAGGED_MARK, REAL_TRAFFIC_LEGEND, REAL_TRAFFIC_STYLE, flagged
from .html_ceiling_names import CEILING_FONT_PX, Flat, place_ceiling_names
from .html_label_model import Axes, line_label_box
from .html_slope_names import Slope, place_slope_names
from .html_text import plotly_text

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


def roof_line_traces(go, display: RooflineDisplay) -> list:
    """The display's slopes and flat roofs as plotly traces: (trace, its Slope or Flat)
    pairs, None for a flat roof an equal one names (slopes are named by annotations, turned
    along the line; flat roofs by their trace's text, at a vertex html_labels.
    place_ceiling_names chooses: see _name_ceilings). A trace holds its line's vertices
    and, on the line, one more: hover and the name need a vertex inside the line."""
    roofs = dict(zip(display.roof_labels, display.roofs, strict=True))
    lines = [ln for ln in display.lines if ln.kind in ("memory", "compute")]
    # Each flat roof is named on the chart (all are one colour: without a name the reader
    # cannot tell fp16 tensor from fp32 vector); equal ones (fp32 vector = fp64 tensor)
    # and ones the PNG draws as one line share one name, in the PNG's words ("fp64 / fp32
    # scalar* 65.8 / 65.7 MFLOP/s", not two names on one line, review s34 C). A ceiling
    # its probe flagged carries the PNG's `*` here too (review 19c N4), explained under
    # the chart.
    groups = label_groups(lines, lambda x, y: _to_pt(x, y, display.xlim, display.ylim))
    traces = []
    for i, ln in enumerate(lines):
        roof, judge = roofs[ln.roof], ln.roof == display.roof_labels[0]
        c = ln.ceiling
        style = {"dash": _DASH[ln.style], "width": 2.5 if judge else 1.5}
        name = (f"{REAL_TRAFFIC_LEGEND} {si(c.value, 'B/s')}"
                + ("" if judge else f" ({kind_words(roof)})")
                if ln.style == REAL_TRAFFIC_STYLE
                else legend_name(c, roof, ln.label, len(display.roofs) > 1))
        common = {"name": plotly_text(name),
                  "hovertext": html.escape(ln.hover, quote=False), "hoverinfo": "text"}
        if ln.kind == "memory":
            traces.append(_slope_trace(go, ln, judge, roof, style, common))
            continue
        group = groups[i]
        # The judging roof's names are best at the right end, the others' at their left
        # end, so two roofs with close peaks start apart (place_ceiling_names moves them on
        # when something is there).
        text = (plotly_text(group_label([_named(lines[j]) for j in group])
                            + ("" if judge else f" ({kind_words(roof)})"))
                if group[0] == i else "")
        (x0, x1), (y, _) = ln.xs, ln.ys
        traces.append((go.Scatter(
            x=list(ln.xs), y=list(ln.ys), mode="lines+text", text=["", ""],
            textposition="top left" if judge else "top right",
            # the name in the line's hue, darker: 11-px text at 4.5:1 (chart_marks.text_color)
            textfont={"size": CEILING_FONT_PX, "color": text_color(COMPUTE_COLOR)},
            line={"color": COMPUTE_COLOR, **style}, **common),
            Flat(0, y, x0, x1, text, "right" if judge else "left") if text else None))
    return traces


def legend_name(c, roof: Roof, label: str, roofs: bool = False) -> str:
    """A ceiling's legend entry, led by its own provenance, as --json states it per ceiling
    (review s22 r4 F2: a CPU catalog roof's DRAM read "nominal DRAM 461 GB/s (derived)",
    the roof's kind and the ceiling's, two opposite words on one line; now "derived DRAM
    461 GB/s"). roofs: the chart draws more than one roof; a ceiling whose provenance is
    not its roof's then says whose it is ("nominal fp16 tensor 65 TFLOP/s (measured
    roof)"), or two roofs' entries could read the same."""
    kind = label_kind(roof)   # one die of a package: derived, as its ceilings (s34 J)
    own = c.provenance or kind
    return f"{own} {label}" + (f" ({kind} roof)" if roofs and own != kind else "")


def _named(ln: Line) -> str:
    """A compute line's name and value, "fp64 vector* 8.18 GFLOP/s", as group_label reads them."""
    return f"{_marked(ln.ceiling)} {fmt_rate(ln.ceiling.value, ln.ceiling.precision)}"


def _marked(c) -> str:
    """A ceiling's label with the chart's flag (chart_words.FLAGGED_MARK) where its probe
    flagged it."""
    return c.label + (FLAGGED_MARK if flagged(c) else "")


# The chart's line styles in plotly's words; the real-traffic DRAM ceiling's dash-dot-dot
# (chart_words.REAL_TRAFFIC_STYLE) as the PNG draws it, a pattern no other line has.
_DASH = {**PLOTLY_DASH, REAL_TRAFFIC_STYLE: "6px,2px,2px,2px,2px,2px"}


def _slope_trace(go, ln: Line, judge: bool, roof: Roof, style: dict, common: dict):
    """A slope with a vertex on it a third of the way up for the judging roof, two thirds
    for the other (where its name is best: html_labels), and its Slope."""
    (x0, x1), bw = ln.xs, ln.ceiling.value
    f = 0.35 if judge else 0.65
    x_mid = 10 ** (math.log10(x0) + f * (math.log10(x1) - math.log10(x0)))
    text = plotly_text(ln.label + ("" if judge else f" ({kind_words(roof)})"))
    return (go.Scatter(x=[x0, x_mid, x1], y=[ln.ys[0], bw * x_mid, ln.ys[1]], mode="lines",
                       line={"color": level_color(ln.level), **style}, **common),
            Slope(0, bw, x0, x1, text, prefer=f))


def name_ceilings(pairs, axes: Axes, obstacles: list, lines: list) -> None:
    """Write each flat roof's name at the vertex place_ceiling_names chose: the trace gets
    that vertex (on its line, so the line does not change) and the text there."""
    flats = [replace(f, key=i) for i, (_, f) in enumerate(pairs) if isinstance(f, Flat)]
    for key, at in place_ceiling_names(flats, axes, obstacles, lines).items():
        t, f = pairs[key][0], pairs[key][1]
        xs = sorted({*t.x, at.x})
        t.x, t.y = xs, [f.value] * len(xs)
        t.text = [(at.text or f.text) if x == at.x else "" for x in xs]
        t.textposition = at.position


def mixed_traces(go, display: RooflineDisplay) -> list:
    """Each mixed-precision kernel's weighted ceiling (the display's "mixed" lines): a thin
    dotted segment from its ridge to the right, in its level's colour (dotted, not the
    roofs' dashes, so it reads as its kernels' own roof, not one more ceiling)."""
    return [go.Scatter(x=list(ln.xs), y=list(ln.ys), mode="lines", name=plotly_text(ln.label),
                       line={"color": level_color(ln.level), "dash": "dot", "width": 1.2},
                       hovertext=html.escape(ln.hover, quote=False), hoverinfo="text")
            for ln in display.lines if ln.kind == "mixed"]


def line_label_boxes(roof_traces, axes: Axes) -> list:
    """Where the ceilings' and slopes' names are (the kernels' names keep clear of them)."""
    boxes = []
    for t in roof_traces:
        for x, y, text in zip(t.x, t.y, t.text or (), strict=False):
            if text:
                boxes.append(line_label_box(axes, x, y, text, t.textposition,
                                            t.textfont.size or 11))
    return boxes


def slope_annotations(pairs, axes: Axes, obstacles: list, lines: list) -> list[dict]:
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
        color = text_color(pairs[s.key][0].line.color)   # 4.5:1 on white
        out.append({
            "x": math.log10(at.x), "y": math.log10(at.y), "xref": "x", "yref": "y",
            "text": s.text, "showarrow": False, "xanchor": "center", "yanchor": "middle",
            "textangle": -math.degrees(at.angle), "font": {"size": s.font_px, "color": color},
            "xshift": -at.offset * math.sin(at.angle), "yshift": at.offset * math.cos(at.angle),
            "name": f"slope:{s.key}:{at.offset:.2f}"})
    return out
