"""A roofline chart's axis limits: margins round the data, or, asked for, a zoom that
hugs crowded points (chart.roofline_data).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..model.ceiling import Roof
from .chart_ceilings import MixedRoof
from .chart_parts import Ridge
from .chart_roofs import _positive_finite, _reference_level


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
