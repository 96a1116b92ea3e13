"""The PNG/SVG chart's labels, measured where matplotlib draws them.

The layout (report/chart_layout.py) places labels in a model of the figure; these tests
render the chart with Agg and take each label's box from the renderer
(Text.get_window_extent), so a model that drifts from the drawing shows here. Checked: no
two labels overlap, no label covers another kernel's marker, and (the review's finding on
a 14-kernel chart) no leader line runs through another label: matplotlib started leaders
at the centre of their label, so a steep one left through the label's bottom edge and
crossed the labels stacked below it.
"""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from rooflab.model import Ceiling, Kernel, Roof

pytest.importorskip("matplotlib")

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
A100 = Roof("A100", "nominal", compute=(Ceiling(312e12, precision="fp16", unit="tensor"),
                                        Ceiling(78e12, precision="fp16", unit="vector")),
            memory=(Ceiling(2.039e12, level="DRAM"),))
# `rooflab llm tinyllama-1.1b --on A100 --json` (2026-11-29): the 14 kernels of a decode
# step with a point (the embedding has no FLOP), counted and not timed: (name, FLOP, bytes,
# calls, unit); seven of them at AI 0.5-1.
LLM_OPS = [("q_proj", 184549376, 184729600, 22, "tensor"),
           ("k_proj", 23068672, 23170048, 22, "tensor"),
           ("v_proj", 23068672, 23170048, 22, "tensor"),
           ("rope", 152064, 202752, 22, "vector"),
           ("attention", 103809024, 13156352, 22, "tensor"),
           ("o_proj", 184549376, 184729600, 22, "tensor"),
           ("residual_add", 90112, 540672, 44, "vector"),
           ("norm", 360448, 540672, 44, "vector"),
           ("gate_proj", 507510784, 507848704, 22, "tensor"),
           ("up_proj", 507510784, 507848704, 22, "tensor"),
           ("act_mul", 371712, 743424, 22, "vector"),
           ("down_proj", 507510784, 507848704, 22, "tensor"),
           ("final_norm", 8192, 12288, 1, "vector"),
           ("lm_head", 131072000, 131140096, 1, "tensor")]


def _rendered(display):
    """(text artists, renderer) of a drawn chart, laid out as savefig lays it out."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(display.figure_)
    canvas.draw()
    return [t for t in display.ax_.texts if t.get_text().strip()], canvas.get_renderer()


def _text_box(t, renderer):
    from matplotlib.text import Text

    # Text's own extent: an Annotation's would add its leader line to the box.
    return Text.get_window_extent(t, renderer)


def _assert_labels_apart(display):
    texts, renderer = _rendered(display)
    # Slope labels are rotated: their axis-aligned extent is a large box around a thin
    # line of text, so they are left to the layout's own test (test_chart.py).
    flat = [(t.get_text(), _text_box(t, renderer)) for t in texts if t.get_rotation() == 0]
    assert len(flat) >= 5
    for i, (a, box) in enumerate(flat):
        for b, other in flat[i + 1:]:
            assert not box.overlaps(other), f"labels {a!r} and {b!r} overlap: {box} {other}"
    ax = display.ax_
    r = 4 * display.figure_.dpi / 72   # markers are 8 pt across
    for p in display.points:
        x, y = ax.transData.transform((p.ai, p.flop_per_s))
        for text, box in flat:
            if p.text and text == p.text:
                continue   # its own label sits next to it
            inside = box.x0 < x + r and x - r < box.x1 and box.y0 < y + r and y - r < box.y1
            assert not inside, f"label {text!r} covers the marker of {p.kernel} [{p.level}]"
    return texts, renderer


def _leaders_through_labels(texts, renderer):
    """(leader's label, label struck) for every leader line passing through a label."""
    hits = []
    for t in texts:
        if getattr(t, "arrow_patch", None) is None:
            continue
        path = t.arrow_patch.get_path()   # display coordinates, once drawn
        (x0, y0), (x1, y1) = path.vertices[0], path.vertices[-1]
        for other in texts:
            if other is t or other.get_rotation() != 0:
                continue
            box = _text_box(other, renderer)
            steps = 50
            if any(box.x0 + 1 < x0 + (x1 - x0) * i / steps < box.x1 - 1
                   and box.y0 + 1 < y0 + (y1 - y0) * i / steps < box.y1 - 1
                   for i in range(1, steps)):
                hits.append((t.get_text(), other.get_text()))
    return hits


def test_fourteen_kernel_chart_labels_and_leaders_are_clear():
    from rooflab.report.chart import plot_roofline

    kernels = [Kernel(n, {"fp16": f}, {"DRAM": b}, calls=c, unit=u)
               for n, f, b, c, u in LLM_OPS]
    display = plot_roofline(A100, kernels)
    # every kernel named, each its own label (q_proj and o_proj, the three MLP
    # projections have the very same numbers: one spot, several labels)
    assert sorted(p.text for p in display.points) == sorted(f"{n} (predicted)"
                                                          for n, *_ in LLM_OPS)
    texts, renderer = _assert_labels_apart(display)
    assert any(getattr(t, "arrow_patch", None) is not None for t in texts)  # crowded: leaders
    assert _leaders_through_labels(texts, renderer) == []


def test_leaders_start_at_the_edge_facing_the_point():
    from rooflab.report.chart_draw import leader_start

    assert leader_start("left", "center") == (0.0, 0.5)
    assert leader_start("right", "bottom") == (1.0, 0.0)
    assert leader_start("center", "top") == (0.5, 1.0)


@pytest.fixture
def gpp():
    files = sorted(glob.glob(str(GPP / "output*.csv")))
    if not files or not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    return files, str(GPP / "output5.ncu-rep")


@pytest.mark.parametrize("level", [None, "DRAM"])
def test_gpp_trajectory_step_labels_do_not_overlap(gpp, level):
    """`rooflab plot output*.csv --on output5.ncu-rep --trajectory [--level DRAM]`: eight
    steps within AI 4.6-35 and 85-89 GFLOP/s, one trajectory."""
    from rooflab.cli.plot import load_inputs
    from rooflab.report.chart import plot_roofline

    files, rep = gpp
    roofs, kernels = load_inputs(files, [rep], trajectory=True)
    display = plot_roofline(roofs, kernels, trajectory=True, level=level)
    labels = [p.text for p in display.points if p.text]
    # steps on one spot share a label (output1 and output2 have the same numbers; output3
    # is 1 % from them), so the cluster carries one label, not three crowding it
    assert "output1, output2, output3" in labels
    named = " ".join(labels)
    assert all(f"output{i}" in named for i in range(1, 8))
    assert len(labels) < 8
    # at DRAM, output and output4 at one spot share the name line (s18 r5 F7)
    assert ("· output, output4\n" if level == "DRAM" else "· output\n") in named
    _assert_labels_apart(display)


def test_gpp_steps_as_separate_kernels_do_not_overlap(gpp):
    """The same files without --trajectory: 8 kernels x 3 levels, 8 long labels."""
    from rooflab.cli.plot import load_inputs
    from rooflab.report.chart import plot_roofline

    files, rep = gpp
    roofs, kernels = load_inputs(files, [rep])
    _assert_labels_apart(plot_roofline(roofs, kernels))
