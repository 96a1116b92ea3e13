"""The HTML report's chart names its kernels without names on top of each other.

plotly puts a scatter's text where it is told: every kernel was named "top right" of its
marker, so a `rooflab llm --json` document's fourteen kernels (AI 0.2-8, seven of them
within a factor 1.5) printed their names over each other. Now the longest kernels are
named first, each at a free spot around its marker, the rest on hover; these tests check
the boxes of the names in the figure the page embeds.
"""

from __future__ import annotations

import glob
import json

import pytest

from rooflab.model import Kernel, analyze
from rooflab.report.html_label_model import PLOT_PX
from rooflab.report.html_labels import MAX_NAMED, Axes, marker_box, overlap, text_box

pytest.importorskip("plotly")

# the same roof and decode step as the PNG chart's tests
from test_labels_chart import A100, GPP, LLM_OPS  # noqa: E402


def _llm_kernels():
    return [Kernel(n, {"fp16": f}, {"DRAM": b}, calls=c, unit=u)
               for n, f, b, c, u in LLM_OPS]


def _named_boxes(fig):
    """(name, box, marker box) of every named point, in the figure's own axes."""
    layout = fig.layout
    axes = Axes(tuple(layout.xaxis.range), tuple(layout.yaxis.range))
    out = []
    for t in fig.data:
        if not t.mode or "markers" not in t.mode:
            continue
        positions = t.textposition if isinstance(t.textposition, tuple) else \
            [t.textposition] * len(t.x)
        for x, y, text, pos in zip(t.x, t.y, t.text, positions, strict=True):
            if text:
                out.append((text, text_box(axes.px(x, y), text, pos),
                            marker_box(axes.px(x, y))))
    return out, axes


def _markers(fig, axes):
    return [marker_box(axes.px(x, y)) for t in fig.data if t.mode and "markers" in t.mode
            for x, y in zip(t.x, t.y, strict=True)]


def _assert_clear(fig):
    named, axes = _named_boxes(fig)
    assert named, "no kernel named at all"
    for i, (a, box, _) in enumerate(named):
        assert 0 <= box[0] and box[2] <= PLOT_PX[0] and 0 <= box[1] and box[3] <= PLOT_PX[1]
        for b, other, _ in named[i + 1:]:
            assert not overlap(box, other), f"the names {a!r} and {b!r} overlap"
        own = next(m for n, _, m in named if n == a)
        for m in _markers(fig, axes):
            assert m == own or not overlap(box, m), f"the name {a!r} covers a marker"
    return [n for n, _, _ in named]


def test_fourteen_llm_kernels_named_without_overlap():
    from rooflab.report.html import figure

    analysis = analyze(A100, _llm_kernels())
    fig = figure(analysis)
    names = _assert_clear(fig)
    assert 3 <= len(names) <= MAX_NAMED
    # the longest (by time floor: the most bytes) come first
    assert {"gate_proj", "up_proj", "down_proj"} <= set(names) or len(names) < 3
    assert f"{len(names)} of 14 kernels named" in fig.layout.legend.title.text
    # The scene is crowded: all "top right", as before, names overlap.
    _, axes = _named_boxes(fig)
    old = [text_box(axes.px(p.ai, p.attainable_flop_per_s), p.kernel, "top right")
           for p in analysis.points]
    assert any(overlap(a, b) for i, a in enumerate(old) for b in old[i + 1:])


def test_a_few_kernels_are_all_named():
    from rooflab.report.html import figure

    ks = [Kernel("gemm", {"fp16": 1.4e11}, {"DRAM": 1e8}, seconds=2.7e-3),
          Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=1.5e-3)]
    fig = figure(analyze(A100, ks))
    assert sorted(_assert_clear(fig)) == ["decode", "gemm"]
    # every kernel named: the title says no count (only the sides' colours, review 18c F3)
    title = fig.layout.legend.title.text
    assert title.startswith("click to toggle") and "named" not in title


def test_the_page_embeds_the_laid_out_figure(tmp_path):
    """The page's own plotly JSON (what the reader sees) keeps the placed names."""
    from rooflab.report.html import html_report

    page = html_report(analyze(A100, _llm_kernels()))
    start = page.index("Plotly.newPlot(")
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(page, page.index("[", start))
    layout, _ = decoder.raw_decode(page, page.index("{", end))
    axes = Axes(tuple(layout["xaxis"]["range"]), tuple(layout["yaxis"]["range"]))
    boxes = [text_box(axes.px(x, y), s, pos) for t in data if "markers" in t.get("mode", "")
             for x, y, s, pos in zip(t["x"], t["y"], t["text"], t["textposition"],
                                     strict=True) if s]
    assert len(boxes) >= 3
    assert not any(overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_the_gpp_steps_named_without_overlap():
    files = sorted(glob.glob(str(GPP / "output*.csv")))
    if not files or not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    from rooflab.cli.plot import load_inputs
    from rooflab.report.html import figure

    roofs, kernels = load_inputs(files, [str(GPP / "output5.ncu-rep")])
    fig = figure(analyze(roofs[0], kernels))
    names = _assert_clear(fig)
    # the fp32 ceiling the reports' single/double ratio gives (s18 r4 F5) stretches the
    # axis: a name with no free spot beside its marker is written out on a leader
    leadered = [a.text for a in fig.layout.annotations if a.text.startswith("sigma_gpp")]
    assert len(names) + len(leadered) >= 2
    assert f"{len(names) + len(leadered)} of 8 kernels named" in fig.layout.legend.title.text
