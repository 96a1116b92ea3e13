"""The HTML report's chart names its flat roofs clear of each other and inside the plot,
its kernels clear of the lines where it can, and its log axes with 2 and 5 between decades.

With a measured and a nominal roof, each flat roof's name sat at a fixed end of its line
(the judging roof's right, the others' left): "fp16 tensor 600 TFLOP/s" printed over
"tf32 tensor 494 TFLOP/s (nominal)", and "fp8 tensor, int8 tensor 1.98 PFLOP/s (nominal)"
ran past the plot's right edge, cut off. The kernels' names ignored the lines (a mixed
kernel's dotted ceiling through "hgemm_120"), and a one-kernel Nsight Compute chart's y
axis labelled every digit (9 8 7 6 5 4 3 2) between decades. These tests read the
geometry back from the figure the page embeds.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report import boxes
from rooflab.report.html_ceiling_names import LEFT_INDENT_PX, Flat, flat_spots, place_ceiling_names
from rooflab.report.html_label_model import PLOT_PX, line_label_box
from rooflab.report.html_labels import (
    POINT_LINE_MARGIN_PX,
    POSITIONS,
    Axes,
    Candidate,
    marker_box,
    overlap,
    place_names,
    text_box,
)

pytest.importorskip("plotly")

from test_html_slope_labels import (  # noqa: E402
    H100_MEASURED,
    _axes,
    _demo,
    _gpu_kernels,
    _lines,
    _markers,
    _point_names,
    _slope_names,
)

H100 = lookup_roof("H100")


def _two_roofs():
    from rooflab.report.html import figure

    profile = MachineProfile(host={"name": "h100"}, nominal=H100, measured=H100_MEASURED)
    return figure(analyze(H100_MEASURED, _gpu_kernels()), profile)


def _ceiling_names(fig, axes):
    """(trace index, text, box) of every flat roof's name."""
    return [(i, s, line_label_box(axes, x, y, s, t.textposition, t.textfont.size or 11))
            for i, t in enumerate(fig.data) if t.mode == "lines+text"
            for x, y, s in zip(t.x, t.y, t.text, strict=True) if s]


def _free_spot_on_line(t, text, axes, obstacles, step=2.0) -> bool:
    """Whether a name box on flat trace t (above or below it, every `step` pixels along
    its visible part, clear of the y axis) is free of the obstacles."""
    lo = max(axes.px(t.x[0], t.y[0])[0], LEFT_INDENT_PX)
    hi = axes.px(t.x[-1], t.y[-1])[0]
    y = axes.px(t.x[0], t.y[0])[1]
    box = line_label_box(axes, t.x[0], t.y[0], text, "top right", 11)
    w = box[2] - box[0]
    x = lo
    while x + w <= hi:
        for v in ("top", "bottom"):
            box = text_box((x, y), text, f"{v} right", 11.0, gap=0.0)
            if not any(overlap(box, o) for o in obstacles):
                return True
        x += step
    return False


def _assert_ceiling_names_clear(fig):
    axes = _axes(fig)
    names = _ceiling_names(fig, axes)
    flat = [i for i, t in enumerate(fig.data) if t.mode == "lines+text"]
    # every flat roof named (equal ones of a roof share one name) ...
    assert {i for i, _, _ in names} <= set(flat) and len(names) >= len(flat) // 2
    names_of_points = [box for _, _, box in _point_names(fig, axes)]
    markers = _markers(fig, axes)
    slopes = [poly for *_, poly, _ in _slope_names(fig, axes)]
    for k, (i, text, box) in enumerate(names):
        # ... inside the plot (plotly cuts a name off at its edge) ...
        assert 0 <= box[0] and box[2] <= PLOT_PX[0] + 0.5, text
        assert 0 <= box[1] and box[3] <= PLOT_PX[1] + 0.5, text
        # ... clear of the y axis' tick labels ...
        assert box[0] >= LEFT_INDENT_PX - 0.5, text
        # ... on its own line, which stays as drawn ...
        t = fig.data[i]
        assert len(set(t.y)) == 1 and list(t.x) == sorted(t.x), text
        # ... and clear of the other names, the markers and the slopes' names
        for _, other, obox in names[k + 1:]:
            assert not overlap(box, obox), f"{text!r} over {other!r}"
        for b in names_of_points:
            assert not overlap(box, b), f"{text!r} over the kernel name {b}"
        if any(overlap(box, m) for m in markers):
            # only where every spot along its line would be (a marker on a line barely
            # longer than the name: the nominal 67 TFLOP/s one)
            assert not _free_spot_on_line(t, text, axes, markers), f"{text!r} over a marker"
        for poly in slopes:
            assert not boxes.polygons_overlap(boxes.corners(box), poly, 0.5), text
    return [text for _, text, _ in names]


def test_two_roofs_ceiling_names_neither_overlap_nor_get_cut_off():
    fig = _two_roofs()
    texts = _assert_ceiling_names_clear(fig)
    assert "fp16 tensor 600 TFLOP/s" in texts
    # the ceilings the PNG draws (session 9: the HTML draws roofline_data's display, which
    # leaves out tf32 and int8 tensor and says so): the others are named
    assert "fp32 vector 67 TFLOP/s (nominal)" in texts
    assert "fp8 tensor 1.98 PFLOP/s (nominal)" in texts
    assert not any(t.startswith(("tf32", "int8")) for t in texts)
    # the legend and hovers keep their words
    names = [t.name for t in fig.data]
    assert "measured fp16 tensor 600 TFLOP/s" in names
    assert "nominal fp8 tensor 1.98 PFLOP/s" in names


def test_two_roofs_the_flat_lines_still_span_as_before():
    """A name's vertex lies on its line: each flat roof runs from its ridge on the fastest
    slope to the plot's right edge, one height, as before."""
    fig = _two_roofs()
    axes = _axes(fig)
    for t in fig.data:
        if t.mode != "lines+text":
            continue
        assert axes.px(t.x[-1], t.y[-1])[0] == pytest.approx(PLOT_PX[0])
        assert len(set(t.y)) == 1 and sum(1 for s in t.text if s) <= 1


def test_demo_ceiling_names_clear():
    analysis, profile = _demo()
    from rooflab.report.html import figure

    texts = _assert_ceiling_names_clear(figure(analysis, profile))
    assert "fp32 vector 236 GFLOP/s (nominal)" in texts


def _assert_point_names_least_crossed(fig):
    """Each kernel's name is at a spot as few lines cross as any other free spot of it
    (inside the plot, clear of the markers and of every other name)."""
    axes = _axes(fig)
    segments = [(a, b) for _, a, b in _lines(fig, axes)]
    named = _point_names(fig, axes)
    markers = _markers(fig, axes)
    ceilings = [box for *_, box in _ceiling_names(fig, axes)]
    crossed = []
    for text, anchor, box in named:
        own = marker_box(anchor)
        others = ([m for m in markers if m != own] + ceilings
                  + [b for s, _, b in named if s != text])
        n = boxes.lines_through(boxes.grown(box, POINT_LINE_MARGIN_PX), segments)
        for p in POSITIONS:
            alt = text_box(anchor, text, p)
            if boxes.inside(alt, axes.size) and not any(overlap(alt, o) for o in others):
                m = boxes.lines_through(boxes.grown(alt, POINT_LINE_MARGIN_PX), segments)
                assert n <= m, f"{text!r}: {n} lines through it, {m} at {p!r}"
        crossed.append((text, n))
    return crossed


def test_point_names_keep_off_the_lines_where_they_can():
    """A mixed kernel's dotted ceiling and the nominal roof's lines ran through kernels'
    names that had a free spot elsewhere."""
    crossed = _assert_point_names_least_crossed(_two_roofs())
    assert len(crossed) >= 5


def test_place_names_takes_a_spot_no_line_crosses():
    axes = Axes((0.0, 3.0), (0.0, 3.0))
    c = Candidate(0, 10.0, 10.0, "kernel", 1.0)
    at = axes.px(c.x, c.y)
    # a level line through the first choice ("top right") only
    top = text_box(at, c.text, "top right")
    y = (top[1] + top[3]) / 2
    line = [((at[0] + 10, y), (PLOT_PX[0], y))]
    assert place_names([c], axes) == {0: "top right"}
    assert place_names([c], axes, segments=line) == {0: "bottom right"}
    # with every spot crossed, still named (at the first, as before)
    everywhere = [((0.0, yy), (PLOT_PX[0], yy)) for yy in range(0, 441, 3)]
    assert place_names([c], axes, segments=everywhere) == {0: "top right"}


def test_close_flat_roofs_moved_along_their_lines():
    """Two flats 8 px apart, both best at the right end: the second moves (the other end,
    or below, or along), never onto the first; a long name on a line that starts right of
    the middle keeps inside the plot."""
    axes = Axes((-1.0, 4.0), (12.0, 16.0))
    y_px = 8.0 / PLOT_PX[1] * 4.0
    a = Flat(0, 1e14, 0.1, 1e4, "fp16 tensor 600 TFLOP/s")
    b = Flat(1, 1e14 * 10 ** y_px, 0.1, 1e4, "tf32 tensor 494 TFLOP/s (nominal)")
    long = Flat(2, 1e13, 300.0, 1e4, "fp8 tensor, int8 tensor 1.98 PFLOP/s (nominal)",
                prefer="left")
    placed = place_ceiling_names([a, b, long], axes)
    assert not overlap(placed[0].box, placed[1].box)
    assert placed[0].position == "top left"        # the first keeps its spot
    for p in placed.values():
        assert 0 <= p.box[0] and p.box[2] <= PLOT_PX[0] + 1e-9
    # the long one: at its left end it would run past the right edge
    left = text_box(axes.px(300.0, 1e13), long.text, "top right", 11.0, gap=0.0)
    assert left[2] > PLOT_PX[0]
    assert placed[2].x >= 300.0 * (1 - 1e-9)       # on its line


def test_flat_spots_order():
    # the preferred end, the other end, then between them from the preferred end
    spots = flat_spots(10.0, 500.0, 100.0, "left", steps=3)
    assert spots[:2] == [(10.0, "right"), (500.0, "left")]
    assert [x for x, _ in spots[2:]] == pytest.approx([107.5, 205.0, 302.5])
    assert flat_spots(10.0, 500.0, 100.0, "right", steps=1)[:2] == [(500.0, "left"),
                                                                      (10.0, "right")]
    # a line shorter than its name: its right end, the name running left
    assert flat_spots(400.0, 450.0, 100.0, "left") == [(450.0, "left")]


def _one_gpu_kernel(x_span_decades: float):
    # one fp64 kernel on a small roof: the y axis spans about two decades, as a
    # one-kernel Nsight Compute recording's
    roof = Roof("GPU (profiler peaks)", "derived",
                compute=(Ceiling(156e9, precision="fp64", unit="vector"),),
                memory=(Ceiling(256e9, level="DRAM"),))
    return analyze(roof, [Kernel("sigma", {"fp64": 6e9 * x_span_decades},
                                 {"DRAM": 1e9}, seconds=0.1)])


def test_log_axes_read_2_and_5_between_decades():
    from rooflab.report.html import figure
    from rooflab.report.html_marks import log_dtick

    fig = figure(_one_gpu_kernel(1.0))
    assert fig.layout.yaxis.range[1] - fig.layout.yaxis.range[0] < 3.5
    assert fig.layout.xaxis.dtick == "D2"
    # the FLOP/s axis ticks 2 and 5 too, with their unit (review 18c F15: bare "2", "5")
    y = fig.layout.yaxis
    assert y.tickmode == "array" and {"2 GFLOP/s", "5 GFLOP/s"} <= set(y.ticktext)
    # a long axis keeps plotly's own choice (decades)
    assert log_dtick((-4.0, 8.0), PLOT_PX[0]) is None
    assert log_dtick((9.0, 11.5), PLOT_PX[1]) == "D2"


def test_the_gpp_recording_axis_and_names():
    from test_labels_chart import GPP

    if not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recording absent at {GPP}")
    from rooflab.cli.plot import load_inputs
    from rooflab.report.html import figure

    roofs, kernels = load_inputs([], [str(GPP / "output5.ncu-rep")])
    fig = figure(analyze(roofs[0], kernels))
    assert {"2 GFLOP/s", "5 GFLOP/s"} <= set(fig.layout.yaxis.ticktext)   # as "D2" did
    _assert_ceiling_names_clear(fig)
    _assert_point_names_least_crossed(fig)


def test_the_longest_ceiling_name_is_not_cut_off():
    """The nominal fp8 / int8 peak's name began at its line's left end and ran past the
    plot's right edge ("... 1.98 PF"): it is whole inside the plot."""
    fig = _two_roofs()
    axes = _axes(fig)
    (box,) = [b for _, s, b in _ceiling_names(fig, axes) if s.startswith("fp8 tensor")]
    assert box[2] <= PLOT_PX[0] + 1e-9 and box[3] <= PLOT_PX[1]
