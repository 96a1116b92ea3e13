"""Review 19c, the chart's marks in the HTML report and the JSON: distinct names for
kernels told apart mid-name (N5), the PNG's F5 marks in the HTML (N4) and in `plot --json`
(N8), the ceiling an above-roof point exceeds (N9), "(launch-bound)" in whatif's labels
(N10), the table sorter's prefixes (N7), the docs' whatif title (N11)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.chart import roofline_data

pytest.importorskip("plotly")

# A100's fp32 vector (19.5 TFLOP/s) and DRAM (2.039 TB/s), nominal figures
A100 = Roof("A100", "nominal",
            compute=(Ceiling(19.5e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(2.039e12, level="DRAM"),))
# A probed CPU whose fp64 ceiling and DRAM the probe flagged (disturbed samples), as t.json
WARN = ("samples disturbed: spread 56%",)
FLAGGED = Roof("EPYC measured", "measured",
               compute=(Ceiling(4.94e9, precision="fp64", unit="vector", provenance="measured",
                                warnings=WARN),),
               memory=(Ceiling(6.33e9, level="DRAM", provenance="measured", warnings=WARN),))
# cutlass kernels told apart only mid-name (review 19c many.csv: gemm_3, _180, _291)
CUTLASS = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_{}_128x128_32x3_nn_align4>(Params)"


def _gemms() -> list[Kernel]:
    # AI 2e9 / 1e7 = 200 FLOP/B: right of the ridge 19.5e12 / 2.039e12 = 9.56
    return [Kernel(CUTLASS.format(n), {"fp32": 2e9}, {"DRAM": 1e7}, seconds=1e-3 * (i + 1))
            for i, n in enumerate((3, 180, 291))]


def _trace(fig, name):
    (t,) = [t for t in fig.data if t.name == name]
    return t


# --- N5: distinct names in the HTML chart ---------------------------------------------

def test_html_chart_keeps_cutlass_kernels_told_apart_mid_name_distinct():
    from rooflab.report.html import figure

    fig = figure(analyze(A100, _gemms()))
    named = [t for t in _trace(fig, "kernels @ DRAM").text if t]
    assert len(named) == 3                 # every one named: three points, room for each
    assert len(set(named)) == 3            # the old chart_name gave all three one label
    assert all(len(html.unescape(t)) <= 40 for t in named)   # shown length
    assert sorted(re.search(r"gemm_(\d+)_", t).group(1) for t in named) == ["180", "291", "3"]


# --- N4: the PNG's F5 marks in the HTML -----------------------------------------------

def _above_and_flagged():
    """gemm: 15.3 GFLOP/s at AI 100 on the 4.94 GFLOP/s roof = 310 % (t.json's
    gemm_fp64_1024); triad: 0.929 GFLOP/s at AI 0.0833 under 6.33 x 0.0833 = 0.527 GFLOP/s
    = 176 %."""
    gemm = Kernel("gemm_fp64_1024", {"fp64": 15.3e9}, {"DRAM": 15.3e7}, seconds=1.0)
    triad = Kernel("triad_fp64", {"fp64": 0.929e9}, {"DRAM": 0.929e9 / 0.08333}, seconds=1.0)
    return analyze(FLAGGED, [gemm, triad])


def test_html_rings_points_above_their_roof_as_the_png():
    from rooflab.report.chart_marks import ABOVE_COLOR
    from rooflab.report.html import figure

    fig = figure(_above_and_flagged())
    rings = [t for t in fig.data if t.legendgroup == "above-roof"]
    # black edge under, vermillion over, one legend entry for both
    assert [t.marker.line.color for t in rings] == ["black", ABOVE_COLOR]
    assert [t.showlegend for t in rings] == [False, True]
    assert rings[1].name == "above its roof: check the counts or the roof"
    assert sorted(rings[1].x) == pytest.approx([0.08333, 100.0], rel=1e-3)
    # ordinary points get none
    ok = analyze(A100, _gemms())
    assert not [t for t in figure(ok).data if t.legendgroup == "above-roof"]


def test_html_ceiling_names_carry_the_flag_and_the_page_says_what_it_means():
    from rooflab.report.html import figure, html_report

    fig = figure(_above_and_flagged())
    texts = [x for t in fig.data if t.mode == "lines+text" for x in (t.text or ()) if x]
    assert texts == ["fp64 vector* 4.94 GFLOP/s"]      # as the PNG and the legend write it
    page = html_report(_above_and_flagged())
    # the PNG's footnote, under the interactive chart (not only inside <noscript>)
    shown = page.replace(page[page.index("<noscript><img"):page.index("</noscript>")], "")
    assert ("* flagged by the probe (disturbed samples, calibration gave up, or far below "
            "nominal; `rooflab specs show` says why): DRAM, fp64 vector.") in shown


def test_html_launch_caps_take_their_points_side_colour():
    from rooflab.report.chart_parts import COMPUTE_BOUND_COLOR, MEMORY_BOUND_COLOR
    from rooflab.report.html_marks import launch_caps

    # 1000 calls of 1e6 FLOP at AI 100 (compute side of ridge 9.56) and AI 1 (memory
    # side), untimed: 1000 x 5 us = 5 ms of launches over 1e9 FLOP: cap 200 GFLOP/s
    roof = Roof("A100", "nominal", compute=A100.compute, memory=A100.memory, overhead_s=5e-6)
    ks = [Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e7}, calls=1000),
          Kernel("axpy", {"fp32": 1e9}, {"DRAM": 1e9}, calls=1000)]
    display = roofline_data([roof], ks, place_labels=False)
    caps = {c.kernel: c for c in launch_caps(display)}
    assert caps["gemm"].flop_per_s == pytest.approx(1e9 / 5e-3)
    assert caps["gemm"].color == COMPUTE_BOUND_COLOR        # was the DRAM level's blue
    assert caps["axpy"].color == MEMORY_BOUND_COLOR


# --- N8: the marks in `plot --json` ----------------------------------------------------

def test_plot_json_carries_the_footnote_the_flags_and_the_rings():
    from rooflab.cli.plot import chart_dict

    a = _above_and_flagged()
    drawn = chart_dict(roofline_data([FLAGGED], a.kernels, place_labels=False), None)["drawn"]
    assert drawn["caveats"] == (
        "* flagged by the probe (disturbed samples, calibration gave up, or far below "
        "nominal; `rooflab specs show` says why): DRAM, fp64 vector")
    assert {ln["label"] for ln in drawn["lines"] if ln["flagged"]} == {
        "DRAM* 6.33 GB/s", "fp64 vector* 4.94 GFLOP/s"}
    over = {p["kernel"]: round(p["percent_of_roof"]) for p in drawn["points"] if p["above_roof"]}
    assert over == {"gemm_fp64_1024": 310, "triad_fp64": 176}   # 15.3/4.94, 0.929/0.527
    # a catalog roof and points under it: nothing flagged, nothing ringed, no footnote
    ok = chart_dict(roofline_data([A100], _gemms(), place_labels=False), None)["drawn"]
    assert ok["caveats"] == "" and not any(ln["flagged"] for ln in ok["lines"])
    assert not any(p["above_roof"] for p in ok["points"])


# --- N9: the ceiling a point is above ---------------------------------------------------

def test_above_roof_note_names_the_ceiling_exceeded():
    # k11_elementwise of review 19c many.csv: fp64, AI 22, 23.96 TFLOP/s over A100's
    # 19.5 TFLOP/s fp64 tensor = 123 % (at AI 22 DRAM allows 45 TFLOP/s: not DRAM)
    a100 = Roof("A100", "nominal",
                compute=(Ceiling(19.5e12, precision="fp64", unit="tensor"),),
                memory=(Ceiling(2.039e12, level="DRAM"),))
    k11 = Kernel("k11_elementwise", {"fp64": 3.005e10}, {"DRAM": 3.005e10 / 22},
                 seconds=1.254e-3, unit="tensor")
    (note,) = [n for n in roofline_data([a100], [k11], place_labels=False).notes
               if "above the roof" in n]
    assert note.startswith("1 point(s) above the roof that judges them: k11_elementwise 123 % "
                           "of fp64 tensor 19.5 TFLOP/s (bytes at DRAM);")
    # left of the ridge the slope is what it exceeds: 0.929 / (6.33 x 0.0833) = 176 %
    notes = roofline_data([FLAGGED], _above_and_flagged().kernels, place_labels=False).notes
    (note,) = [n for n in notes if "above the roof" in n]
    assert "triad_fp64 176 % of DRAM 6.33 GB/s x AI 0.0833" in note
    assert "gemm_fp64_1024 310 % of fp64 vector 4.94 GFLOP/s (bytes at DRAM)" in note


# --- N10: launch-bound in the one-line labels ------------------------------------------

def test_one_line_labels_keep_launch_bound():
    # 9 untimed kernels (more than FULL_LABELS: one-line labels). k_proj: 1 GFLOP at AI 1
    # in 1000 launches of 5 us = 5 ms, over its 0.49 ms work floor (1e9 B / 2.039 TB/s):
    # drawn at 1e9 / 5e-3 = 200 GFLOP/s, 10x under the DRAM slope's 2.04 TFLOP/s
    roof = Roof("A100", "nominal", compute=A100.compute, memory=A100.memory, overhead_s=5e-6)
    ks = [Kernel("k_proj (before)", {"fp32": 1e9}, {"DRAM": 1e9}, calls=1000)]
    ks += [Kernel(f"big{i}", {"fp32": 1e12 * (i + 1)}, {"DRAM": 1e10}) for i in range(8)]
    d = roofline_data([roof], ks)
    (p,) = [p for p in d.points if p.kernel == "k_proj (before)"]
    assert p.flop_per_s == pytest.approx(200e9)
    assert p.text == "k_proj (before, predicted, launch-bound)"
    assert {q.text for q in d.points if q.kernel == "big0"} == {"big0 (predicted)"}


# --- N7: the HTML table sorter's prefixes ----------------------------------------------

def _sort_keys(cells: list[str]) -> list[float]:
    """The sorter's key of each cell, run by node where it is installed, else by Python's
    re (the script's regex and prefix table read alike in both)."""
    from rooflab.report.html_page import SORT_SCRIPT

    table = re.search(r"var P = (\{.*?\});", SORT_SCRIPT, re.S).group(1)
    regex = re.search(r"var NUM = /(.*)/;", SORT_SCRIPT).group(1)
    node = shutil.which("node")
    if node:
        js = (f"var P = {table}; var NUM = /{regex}/; var out = {json.dumps(cells)}.map("
              f"function (t) {{ var m = NUM.exec(t); return parseFloat(m[1]) * (P[m[2]] || 1);"
              f" }}); console.log(JSON.stringify(out));")
        return json.loads(subprocess.run([node, "-e", js], capture_output=True, text=True,
                                         check=True).stdout)
    prefixes = dict(re.findall(r"(\w+): ([\d.e-]+)", table))
    out = []
    for t in cells:
        m = re.match(regex, t)
        out.append(float(m.group(1)) * float(prefixes.get(m.group(2) or "", 1)))
    return out


def test_sorter_reads_si_and_binary_prefixes():
    keys = _sort_keys(["944 GOP/s", "472 GFLOP/s", "1 MiB", "2 KiB", "12.8 GB/s", "1.2 ms",
                       "800 us", "3 GiB", "4 TOP/s"])
    assert keys == pytest.approx([944e9, 472e9, 2**20, 2048, 12.8e9, 1.2e-3, 800e-6,
                                  3 * 2**30, 4e12])


# --- N13: the Markdown chart's alt text -------------------------------------------------

def test_markdown_chart_line_describes_the_chart_as_the_html_does():
    from rooflab.model.diagnose import diagnose
    from rooflab.report.html_static import chart_summary
    from rooflab.report.markdown import chart_image

    a = analyze(A100, [*_gemms(), Kernel("k [a]", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=1e-3)])
    d = roofline_data([A100], a.kernels, place_labels=False)
    diags = diagnose(a)
    line = chart_image(a, d, diags, "roofline.png")
    summary = chart_summary(a, d, diags)
    # 3 gemms at AI 200 right of the ridge 9.56, "k [a]" at AI 1 left of it
    assert summary.startswith("Roofline chart on A100 (nominal): 4 kernels, 3 compute-bound "
                              "side, 1 memory-bound side; ridge AI*=9.56 (fp32 vector / DRAM)")
    # the line is the summary escaped for Markdown (review s22: names as data, md_name), so
    # that rendered its alt text reads as the HTML's word for word: 'k [a]', 'AI*=9.56'
    assert line.startswith("![Roofline chart on A100 (nominal): ") and line.endswith(
        "](roofline.png)")
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").render(line)
    assert html.unescape(re.search(r'alt="([^"]*)"', rendered).group(1)) == summary


# --- N3: the small-text warning from the chart as drawn ----------------------------------

def test_small_text_warning_reckons_with_a_legend_outside():
    from types import SimpleNamespace

    from rooflab.cli.plot import _small_text

    # review 19c page.png: --size page (7 x 4.5 in), the design widened to 13.2 in by a
    # legend outside: scale 7 / 13.2 = 0.53, labels 7 x 0.53 = 3.7 pt, 7 x (6 x 0.53) =
    # 7 x 3.18 in. The old warning reckoned 7 x 0.75 = 5.25 pt (the asked size alone) and
    # said nothing.
    scale = 7 / 13.2
    widened = SimpleNamespace(scale_=scale, size_=(7.0, 6 * scale))
    said = _small_text("page", (7.0, 4.5), widened)
    assert "labels print at 3.7 pt (under 5 pt is hard to read)" in said
    assert "so it prints 7 x 3.18 in, not 4.5 in high" in said
    # the legend inside: the page preset's 7 x 4.5 in at 7 x 0.75 = 5.25 pt, legible
    inside = SimpleNamespace(scale_=0.75, size_=(7.0, 4.5))
    assert _small_text("page", (7.0, 4.5), inside) == ""
    # 3.5 x 2.6 in with the legend inside: 7 x 2.6 / 6 = 3.03 pt, and no word on height
    narrow = SimpleNamespace(scale_=2.6 / 6, size_=(3.5, 2.6))
    said = _small_text("3.5,2.6", (3.5, 2.6), narrow)
    assert "at 3.0 pt" in said and "high" not in said
    assert _small_text(None, None, narrow) == ""


# --- N6: no label printed over another ----------------------------------------------------

def _crowd(seed: int = 2, n: int = 300) -> list[Kernel]:
    """n kernels spread as review 19c's many.csv: 1e6-1e11 FLOP, AI 0.01-300, 1e-4 to 1 of
    their roof (a fixed seed: on it the old layout printed 8 pairs of labels over each
    other)."""
    import numpy as np

    r = np.random.default_rng(seed)
    out = []
    for i in range(n):
        flop, ai = 10 ** r.uniform(6, 11), 10 ** r.uniform(-2, 2.5)
        rate = min(19.5e12, 2.039e12 * ai) * 10 ** r.uniform(-4, 0)
        out.append(Kernel(f"k{i}_elementwise", {"fp32": flop}, {"DRAM": flop / ai},
                          seconds=flop / rate))
    return out


def test_no_label_prints_over_another_and_the_notes_say_which_went():
    from rooflab.report.boxes import overlap_area
    from rooflab.report.chart_layout_cost import _box, _to_pt

    d = roofline_data([A100], _crowd())
    boxes = [_box(_to_pt(p.ai, p.flop_per_s, d.xlim, d.ylim), p.label_offset, p.label_ha,
                  p.label_va, p.text) for p in d.points if p.text]
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                if overlap_area(a, b) > 0]
    (note,) = [n for n in d.notes if "left out where they would print over" in n]
    left = int(note.split()[0])
    assert left > 0 and len(boxes) == 20 - left          # LABELS_SHOWN = 20 were to be
    assert d.unlabelled == 300 - len(boxes)               # the footnote's count
