"""Where the HTML chart's names go on a plot small enough to work out by hand, from their
modules after the split of html_labels (session 36, helper K): html_slope_names,
html_ceiling_names, html_label_model; html_labels keeps the kernels' names.

The plot: 300 x 300 px, both axes 10^0 .. 10^3, so 100 px per decade either way and a
slope (y = b x) runs at 45 degrees."""

from __future__ import annotations

import math

import pytest

from rooflab.report import html_labels
from rooflab.report.html_ceiling_names import Flat, place_ceiling_names
from rooflab.report.html_label_model import Axes, marker_box
from rooflab.report.html_slope_names import Slope, place_slope_names

AXES = Axes((0.0, 3.0), (0.0, 3.0), (300.0, 300.0))
# "DRAM" at 11 px: 0.58 * 11 * 4 + 2 = 27.52 px wide, 1.3 * 11 + 2 = 16.3 px high; its
# centre 16.3 / 2 + 2 = 10.15 px off the line
OFF = 10.15
D = OFF / math.sqrt(2)      # that offset along x and y at 45 degrees: 7.177 px


def _slope():
    return place_slope_names([Slope(0, 1.0, 1.0, 1000.0, "DRAM")], AXES)


def test_a_slope_name_at_its_preferred_spot_above_the_line():
    """y = x from (0, 0) to (300, 300) px, all visible; prefer 0.35 of the way: the line
    at (105, 105) px, x = 10^1.05 = 11.220; nothing there, so above it (+10.15 px) and
    turned 45 degrees."""
    at = _slope()[0]
    assert at.x == pytest.approx(10 ** 1.05, rel=1e-12) and at.y == pytest.approx(at.x)
    assert at.offset == pytest.approx(OFF, abs=1e-9)
    assert at.angle == pytest.approx(math.pi / 4, abs=1e-12)


def test_a_marker_on_the_name_sends_it_below_then_along_the_line():
    """A 6 px marker on the name's centre above (105 - 7.18, 105 + 7.18) px: below the line
    at the same spot (offset -10.15, centre (112.18, 97.82)). Markers on both: the next
    spot along it, 0.30 (0.30 and 0.40 are equally near 0.35: the left one first), line at
    (90, 90) px, x = 10^0.9 = 7.943, above. Its corners stay 21.2 px along the line from
    the first marker: 13.76 (half the name) + 4.24 (the marker's reach at 45 degrees) apart."""
    import rooflab.report.html_slope_names as hs

    above = marker_box((105 - D, 105 + D), 3.0)
    below = marker_box((105 + D, 105 - D), 3.0)
    one = hs.place_slope_names([Slope(0, 1.0, 1.0, 1000.0, "DRAM")], AXES, [above])[0]
    assert one.x == pytest.approx(10 ** 1.05, rel=1e-12)
    assert one.offset == pytest.approx(-OFF, abs=1e-9)
    two = hs.place_slope_names([Slope(0, 1.0, 1.0, 1000.0, "DRAM")], AXES, [above, below])[0]
    assert two.x == pytest.approx(10 ** 0.9, rel=1e-12)
    assert two.offset == pytest.approx(OFF, abs=1e-9)


def test_a_ceiling_name_at_its_right_end_else_at_its_left():
    """A flat roof at 100 (y = 200 px) across the plot, name "peak" (0.58 * 11 * 4 = 25.52
    px wide, 14.3 high), best at the right end: above it, right-aligned at x = 300 px, box
    (274.48, 200, 300, 214.3), its vertex the line's own end x1 = 1000. A marker at
    (290, 207) px there: the left end, which starts 8 px in (LEFT_INDENT_PX), box
    (8, 200, 33.52, 214.3), vertex x = 10^0.08 = 1.2023."""
    flat = Flat(0, 100.0, 1.0, 1000.0, "peak")
    free = place_ceiling_names([flat], AXES)[0]
    assert (free.x, free.position, free.text) == (1000.0, "top left", "peak")
    assert free.box == pytest.approx((274.48, 200.0, 300.0, 214.3), abs=1e-9)
    moved = place_ceiling_names([flat], AXES, [marker_box((290.0, 207.0), 3.0)])[0]
    assert moved.position == "top right"
    assert moved.x == pytest.approx(10 ** 0.08, rel=1e-12)
    assert moved.box == pytest.approx((8.0, 200.0, 33.52, 214.3), abs=1e-9)


def test_a_kernel_name_top_right_else_bottom_right():
    """A kernel at (10, 10): (100, 100) px. "gemm" at 12 px is 27.84 x 15.6 px; top right
    of an 11 px marker: box from (105.5, 105.5). A 6 px marker at (120, 113) px in that
    box: bottom right, box (105.5, 78.9, 133.34, 94.5), clear of it."""
    cand = [html_labels.Candidate(0, 10.0, 10.0, "gemm", 1.0)]
    assert html_labels.place_names(cand, AXES) == {0: "top right"}
    assert html_labels.place_names(cand, AXES, [marker_box((120.0, 113.0), 3.0)]) == {
        0: "bottom right"}


def test_each_placement_is_imported_from_its_own_module():
    """The repo keeps no re-exports (tests/test_moved_names.py): html_labels holds the
    kernels' names only, the slopes' and ceilings' placements live in their own modules."""
    import rooflab.report.html_ceiling_names as hc
    import rooflab.report.html_slope_names as hs

    assert not hasattr(html_labels, "place_slope_names")
    assert not hasattr(html_labels, "place_ceiling_names")
    assert hs.place_slope_names is place_slope_names
    assert hc.place_ceiling_names is place_ceiling_names


def test_the_charts_figures_are_the_same(monkeypatch):
    """The HTML chart's plotly figure (what the page embeds) for the demo's two EPYC roofs
    (L2 234 and L3 194 GB/s slopes 9 px apart, 235 / 236 GFLOP/s ceilings) and for H100
    with ten kernels: the same with the grid as with every name tested against every box
    (the reference in test_s36_k_label_grid), slope annotations and ceiling texts included."""
    pytest.importorskip("plotly")
    from test_html_slope_labels import _demo, _gpu_kernels
    from test_s36_k_label_grid import _all_pairs

    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model import analyze
    from rooflab.report.html import figure

    cases = [_demo(), (analyze(lookup_roof("H100"), _gpu_kernels()), None)]
    fast = [figure(*c).to_plotly_json() for c in cases]
    with _all_pairs(monkeypatch):
        slow = [figure(*c).to_plotly_json() for c in cases]
    assert fast == slow
    assert [sum(a.get("name", "").startswith("slope:") for a in f["layout"]["annotations"])
            for f in fast] == [4, 1]
