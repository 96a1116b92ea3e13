"""The HTML report's chart for a reader without JavaScript, and its words for one without
sight: a mail client, a wiki or attachment preview, a sandboxed viewer or a screen reader
met a 620-px blank where the plotly chart is (review 18c F2).

The fallback is the PNG chart's own drawing (chart.figure_bytes) of the same display, as
an SVG image inlined in a data: URI inside <noscript>, so the page stays one file; without
matplotlib it is a sentence. chart_summary is its alt text and the plotly chart's
aria-label: roof, kernels per side of the ridge, the ridge points, the top finding.
"""

from __future__ import annotations

import base64
import html
import importlib.util
from collections.abc import Sequence
from dataclasses import replace

from ..model.analysis import Analysis
from ..model.diagnose import Diagnosis
from ..model.dies import kind_words
from ..units import fmt_ai, fmt_share
from .chart_parts import RooflineDisplay
from .envelope_bound import envelope_header


def chart_summary(analysis: Analysis, display: RooflineDisplay,
                  diags: Sequence[Diagnosis]) -> str:
    """One paragraph saying what the chart shows, for alt text and aria-label: 'Roofline
    chart on A100 (nominal): 6 kernels, 4 memory-bound side, 2 compute-bound side; ridge
    AI*=4.42 (fp64 vector / DRAM); top kernel to work on: gemm (compute-bound, ...).'"""
    named = {p.kernel_index for p in display.points}
    sides = {}
    for p in display.points:
        if p.side:
            sides.setdefault(p.side, set()).add(p.kernel_index)
    # several roofs (--compare, measured with nominal): name each, and say whose each
    # ridge is (review s23 h2 F7: only the first roof was named, its ridges not told apart)
    many = len(display.roof_labels) > 1
    on = (" vs ".join(display.roof_labels) if many
          else f"{analysis.roof.name} ({kind_words(analysis.roof)})")
    parts = [f"Roofline chart on {on}: "
             f"{len(named)} kernel{'s' if len(named) != 1 else ''}"]
    parts[0] += "".join(f", {len(ks)} {side}-bound side" for side, ks in sorted(sides.items()))
    if display.ridges and many:
        whose: dict[str, list] = {}
        for r in display.ridges:
            whose.setdefault(r.roof, []).append(r)
        parts.extend(f"ridge{'s' if len(rs) > 1 else ''} of {roof or 'the chart'} "
                     + ", ".join(map(_ridge_words, rs)) for roof, rs in whose.items())
    elif display.ridges:
        parts.append("ridge " + ", ".join(_ridge_words(r) for r in display.ridges))
    if diags:
        d = diags[0]
        head = envelope_header(d.point, analysis.roof, d.bound)
        parts.append(f"top kernel to work on: {d.kernel} ({head}, {d.gain_words})")
    return "; ".join(parts) + "."


def _ridge_words(r) -> str:
    where = " / ".join(x for x in (r.compute, r.level) if x)
    return f"AI*={fmt_ai(r.ai)}" + (f" ({where})" if where else "")


# The static chart draws every kernel up to STATIC_ALL of them; above, the ceilings and
# the STATIC_SHOWN longest kernels (the labelled ones always), with a caption saying so.
# An SVG holds a path per marker: 20 000 kernels made a 5.5 MB image (7.3 MB in base64
# of a 27.5 MB page) and took 2.4 s to draw against 1.3 s for 200 (2026-11-30, 2 vCPUs),
# for a chart no one reads point by point; the interactive chart and the tables keep every
# kernel.
STATIC_ALL = 500
STATIC_SHOWN = 200


def bounded_display(display: RooflineDisplay) -> tuple[RooflineDisplay, str]:
    """The display the static chart draws and the caption saying what it leaves out:
    itself and '' up to STATIC_ALL kernels; above, only the STATIC_SHOWN longest (by
    measured time, untimed ones by FLOP after them) and every labelled one, their launch
    caps and level joins; the axes stay the interactive chart's."""
    drawn = list(dict.fromkeys(p.kernel_index for p in display.points if p.kernel_index >= 0))
    if len(drawn) <= STATIC_ALL:
        return display, ""
    kernels = display.kernels

    def weight(i: int) -> tuple[float, float]:
        return (kernels[i].seconds or 0.0, kernels[i].total_flop)

    keep = set(sorted(drawn, key=weight, reverse=True)[:STATIC_SHOWN])
    labelled = {p.kernel_index for p in display.points if p.text}
    keep |= labelled
    names = {kernels[i].name for i in keep}
    total = sum(kernels[i].seconds or 0.0 for i in drawn)
    shown = sum(kernels[i].seconds or 0.0 for i in keep)
    share = f", {fmt_share(shown / total)} of the time" if total > 0 else ""
    left = len(drawn) - len(keep)
    # the part before ';' is what the image says under its axis (chart_draw._short_dropped)
    note = (f"{left} of {len(drawn)} kernels not drawn (the {len(keep)} longest are"
            f"{share}; the interactive chart and the tables below have every one)")
    points = tuple(p for p in display.points if p.kernel_index < 0 or p.kernel_index in keep)
    return replace(display, points=points,
                   joins=tuple(j for j in display.joins if j.label in names),
                   caps=tuple(c for c in display.caps if c.kernel in names),
                   unlabelled=len(keep - labelled),
                   dropped=note + (f"; {display.dropped}" if display.dropped else ""),
                   figure_=None, ax_=None), note


def placed_labels(display: RooflineDisplay) -> RooflineDisplay:
    """The display with its names laid out as chart.roofline_data(place_labels=True) lays
    them out, among the points it holds: placing them among 20 000 markers of which the
    static chart draws 200 took seconds (review 18 leftovers), and the undrawn markers
    are no obstacle on the image. The report has no sweep."""
    from .chart_layout import layout_labels

    lines, ridges, points = layout_labels(list(display.lines), list(display.ridges),
                                          list(display.points), display.xlim, display.ylim,
                                          display.roof_labels, (), display.caps)
    return replace(display, lines=tuple(lines), ridges=tuple(ridges), points=tuple(points))


def static_chart(display: RooflineDisplay, summary: str, place: bool = False) -> str:
    """The <noscript> block standing in for the plotly chart: the display drawn as SVG,
    with the summary as alt text; a sentence when matplotlib is missing. Above STATIC_ALL
    kernels only the longest are drawn (bounded_display), said in a caption under the
    image and in the alt text. place: lay the labels out as the PNG does (a display from
    chart_display, whose names are not laid out), for the kernels drawn only."""
    display, left_out = bounded_display(display)
    if place:
        display = placed_labels(display)
    if left_out:
        summary = f"{summary} Static chart: {left_out}."
    alt = html.escape(summary)
    if importlib.util.find_spec("matplotlib") is None:
        return (f"<noscript><p class='muted' role='img' aria-label='{alt}'>The interactive "
                f"chart needs JavaScript, and the static one matplotlib (pip install "
                f"matplotlib); `rooflab plot` draws it as an image. {alt}</p>"
                f"</noscript>")
    from .chart import figure_bytes

    svg = figure_bytes(display, "svg", description=summary)   # no second diagnosis
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    caption = (f"<p class='muted'>Static chart: {html.escape(left_out)}.</p>" if left_out
               else "")
    return (f"<noscript><img class='static-chart' src='{uri}' alt='{alt}' "
            f">{caption}</noscript>")
