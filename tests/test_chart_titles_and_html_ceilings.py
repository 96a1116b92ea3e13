"""Fourth audit of the charts and the HTML report: what people look at.

Each test failed on the code before its fix (see the docstrings)."""

from __future__ import annotations

import json
import re

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.chart import roofline_data

# Seed 004's T4 (nominal, fp16 tensor 65 TFLOP/s, DRAM 320 GB/s) and an H100 SXM
# (fp16 tensor 990 TFLOP/s, DRAM 3.35 TB/s, the catalog's datasheet figures).
T4 = Roof("NVIDIA T4", "nominal",
          compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
          memory=(Ceiling(320e9, level="DRAM"),))
H100 = Roof("NVIDIA H100 SXM", "nominal",
            compute=(Ceiling(990e12, precision="fp16", unit="tensor"),),
            memory=(Ceiling(3.35e12, level="DRAM"),))
# matmul 4096 at 50 TFLOP/s on the T4 (seed 004), and the same kernel moved to the H100.
MATMUL_T4 = Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                   2 * 4096**3 / 50e12, unit="tensor")
MATMUL_H100 = Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                     2 * 4096**3 / 742e12, unit="tensor")
DECODE_T4 = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, 0.015)
DECODE_H100 = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, 0.00144)


def test_hardware_whatif_judges_the_before_points_by_their_own_roof():
    """`rooflab whatif t4.json --on T4 --hardware H100 -o w.png` labelled the T4 matmul
    (50 TFLOP/s) '5 % of roof' (of the H100's 990) and decode b=1 '4 % of roof'; on the T4
    they ran on they are at 50/65 = 77 % and 147 GFLOP/s / 320 GFLOP/s = 46 %."""
    d = roofline_data([H100, T4], [MATMUL_H100, DECODE_H100, MATMUL_T4, DECODE_T4],
                      arrows=[(MATMUL_T4, MATMUL_H100), (DECODE_T4, DECODE_H100)],
                      before_roof=T4)
    pct = {(p.kernel, round(p.flop_per_s / 1e9)): p.percent_of_roof for p in d.points}
    assert pct[("matmul 4096", 50000)] == pytest.approx(100 * 50 / 65)          # 76.9 %
    assert pct[("decode b=1", 147)] == pytest.approx(100 * (2.2e9 / 0.015) / 320e9)  # 45.8 %
    # the moved points stay judged by the new roof: 742 / 990 = 75 %
    assert pct[("matmul 4096", 742000)] == pytest.approx(100 * 742 / 990)
    labels = {p.text for p in d.points}
    assert any("77 % of roof" in t for t in labels)
    assert not any(re.search(r"\b[45]% of roof", t) for t in labels)
    # without before_roof (one roof, e.g. compare): all judged by the first roof, as before
    same = roofline_data([T4], [MATMUL_T4], arrows=[(MATMUL_T4, MATMUL_T4)])
    assert same.points[0].percent_of_roof == pytest.approx(100 * 50 / 65)


def _catch_charts(monkeypatch):
    """The displays the CLI hands to save_figure (imported inside the verbs at call time)."""
    import rooflab.report.chart as chart

    caught = []
    real = chart.save_figure

    def spy(display, path):
        caught.append(display)
        return real(display, path)

    monkeypatch.setattr(chart, "save_figure", spy)
    return caught


def test_whatif_cli_chart_on_other_hardware(tmp_path, monkeypatch):
    """`rooflab whatif k.json --on T4 --hardware H100 -o w.png` passes the T4 as the
    before roof: the T4 matmul reads 77 % of roof on the chart."""
    from rooflab.cli.main import main

    src = tmp_path / "k.json"
    src.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "matmul 4096", "flop": {"fp16": 2 * 4096**3}, "bytes": {"DRAM": 6 * 4096**2},
         "seconds": 2 * 4096**3 / 50e12, "unit": "tensor"}]}))
    caught = _catch_charts(monkeypatch)
    assert main(["whatif", str(src), "--on", "T4", "--hardware", "H100",
                 "-o", str(tmp_path / "w.png")]) == 0
    assert (tmp_path / "w.png").stat().st_size > 10_000
    before = [p for p in caught[0].points if p.flop_per_s == pytest.approx(50e12)]
    assert before and before[0].percent_of_roof == pytest.approx(100 * 50 / 65, rel=1e-3)


def test_chart_titles_say_on_which_machine(tmp_path, monkeypatch, capsys):
    """`rooflab bench --on me.json -o zoo.png` was titled 'reference kernels' and
    `rooflab compare a.json b.json --on T4 -o c.png` 'before -> after': neither said on
    which machine (probe's, plot's, llm's and whatif's charts do)."""
    from rooflab.cli.bench import write_output
    from rooflab.cli.main import main

    caught = _catch_charts(monkeypatch)
    write_output(str(tmp_path / "zoo.png"), (T4,), [MATMUL_T4], analyze(T4, [MATMUL_T4]))
    assert caught[-1].title == "reference kernels on NVIDIA T4 (nominal)"
    for name, s in (("a.json", 200e-6), ("b.json", 150e-6)):
        (tmp_path / name).write_text(json.dumps({"kernels": [
            {"name": "gate_up", "flop": {"fp16": 2e8}, "bytes": {"DRAM": 2e8}, "seconds": s}]}))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--on", "T4",
                 "-o", str(tmp_path / "c.png")]) == 0
    assert caught[-1].title == "before -> after on NVIDIA T4 (nominal)"


def test_labels_are_not_struck_through_by_other_lines():
    """`rooflab plot --on h100-sxm --on mi300x -o two.png`: the MI300X's 'fp16 tensor,
    bf16 tensor 1.31 PFLOP/s' and 'AI*=493' were drawn with the MI300X DRAM slope running
    through the letters (no free spot exists beside both roofs). Ceiling, ridge and point
    labels now sit on a light backing; a ceiling label's has no padding, so it does not
    cut into its own line 1 pt below."""
    from rooflab.hardware.catalog import lookup_roof

    d = roofline_data([lookup_roof("h100-sxm"), lookup_roof("mi300x")],
                      [MATMUL_T4, DECODE_T4]).plot()
    texts = [t for t in d.ax_.texts if t.get_text().strip()]
    ceilings = [t for t in texts if "FLOP/s" in t.get_text() and "AI " not in t.get_text()]
    ridges = [t for t in texts if t.get_text().startswith("AI*=")]
    points = [t for t in texts if t.get_text().startswith(("matmul", "decode"))]
    assert ceilings and ridges and len(points) == 2
    for t in ceilings + ridges + points:
        box = t.get_bbox_patch()
        assert box is not None, t.get_text()
        assert box.get_facecolor()[:3] == (1.0, 1.0, 1.0)
        assert box.get_edgecolor()[3] == 0 or box.get_linewidth() == 0
    assert all(t.get_bbox_patch().get_boxstyle().pad == 0 for t in ceilings)
    # drawn above the lines (zorder 2), so the backing fades the line, not the text
    assert all(t.get_zorder() > 2 for t in ceilings + ridges + points)


# Seed 004's T4 profile: measured 50 TFLOP/s fp16 tensor and 270 GB/s, nominal 65 and 320.
T4_MEASURED = Roof("NVIDIA T4", "measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                    provenance="measured"),),
                   memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
T4_FULL = Roof("NVIDIA T4", "nominal",
               compute=(Ceiling(65e12, precision="fp16", unit="tensor"),
                        Ceiling(8.1e12, precision="fp32", unit="vector"),
                        Ceiling(253e9, precision="fp64", unit="vector")),
               memory=(Ceiling(320e9, level="DRAM"),))


def _compute_traces(fig):
    return [t for t in fig.data if t.mode and t.mode.startswith("lines")
            and len(set(t.y)) == 1]


def test_html_chart_names_each_compute_ceiling():
    """`rooflab report t4.json --on T4 -o t4.html`: the six compute ceilings were six
    identical amber dashed lines; which one was fp16 tensor could only be found by
    hovering each. Each is now named on the chart, at the right end for the judging roof
    and at the left end (with its kind) for the other roof of a profile."""
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.hardware.profile import MachineProfile
    from rooflab.report.html import figure

    fig = figure(analyze(T4_FULL, [MATMUL_T4]))
    texts = {t.y[0]: [x for x in t.text if x] for t in _compute_traces(fig)}
    assert texts == {65e12: ["fp16 tensor 65 TFLOP/s"], 8.1e12: ["fp32 vector 8.1 TFLOP/s"],
                     253e9: ["fp64 vector 253 GFLOP/s"]}
    for t in _compute_traces(fig):     # the judging roof: at the right end of the line
        assert t.mode == "lines+text" and t.text[0] == "" and t.textposition == "top left"
    profile = MachineProfile(host={"name": "t4"}, nominal=T4_FULL, measured=T4_MEASURED)
    fig = figure(analyze(T4_MEASURED, [MATMUL_T4]), profile)
    named = {(t.y[0], next(x for x in t.text if x)) for t in _compute_traces(fig)}
    # in two rows: in one, the measured name covered a marker and crossed a line, the
    # nominal one covered the nominal ridge diamond (s19 f4)
    assert (50e12, "fp16 tensor<br>50 TFLOP/s") in named
    # the other roof's name goes where no slope crosses it: on the PNG's axes (session 9)
    # that is its line's right end, not the left one, which now crosses two slopes
    assert (65e12, "fp16 tensor<br>65 TFLOP/s (nominal)") in named


def test_html_equal_ceilings_share_one_name():
    """A100-like equal ceilings (fp32 vector = fp64 tensor = 19.5 TFLOP/s) would print two
    names on top of each other; the first carries both."""
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import figure

    roof = Roof("A100", "nominal",
                compute=(Ceiling(19.5e12, precision="fp32", unit="vector"),
                         Ceiling(19.5e12, precision="fp64", unit="tensor")),
                memory=(Ceiling(2.039e12, level="DRAM"),))
    fig = figure(analyze(roof, [MATMUL_T4]))
    names = [x for t in _compute_traces(fig) for x in t.text if x]
    assert names == ["fp32 vector, fp64 tensor 19.5 TFLOP/s"]


def test_html_hover_of_an_untimed_kernel_says_it_was_not_measured():
    """`rooflab report llm.json --on T4 -o r.html` (an `rooflab llm --json` file: counted
    kernels, no times): the hover read 'time: - over 22 call(s) (?)'."""
    from rooflab.report.html_hover import hover_text

    gemv = Kernel("q_proj", {"fp16": 185e6}, {"DRAM": 185e6}, calls=22)
    a = analyze(T4, [gemv])
    text = hover_text(a.points[0], a)
    assert "(?)" not in text and "- over" not in text
    assert "time: not measured (22 call(s)); drawn at its attainable FLOP/s" in text
    assert "attainable: 320 GFLOP/s" in text   # AI 1 x 320 GB/s


def test_a_point_far_below_its_roof_is_not_labelled_zero_percent():
    """`rooflab whatif t4.json --on T4 --hardware H100 -o w.png`: seed 004's rmsnorm (22
    launches, 180224 FLOP in 154 us = 1.17 GFLOP/s at AI 0.667, roof 213 GFLOP/s) was
    labelled '0 % of roof'; it is at 0.55 %."""
    rms = Kernel("rmsnorm", {"fp16": 180224}, {"DRAM": 270336}, 154e-6, calls=22)
    d = roofline_data([T4], [rms, MATMUL_T4])
    (p,) = [p for p in d.points if p.kernel == "rmsnorm"]
    expected = 100 * (180224 / 154e-6) / (180224 / 270336 * 320e9)
    assert p.percent_of_roof == pytest.approx(expected) and expected == pytest.approx(0.549,
                                                                                    rel=1e-3)
    assert "0.55 % of roof" in p.text and "\n0 % of roof" not in p.text
    many = roofline_data([T4], [rms] + [Kernel(f"k{i}", {"fp16": 1e9}, {"DRAM": 1e9}, 1e-2)
                                        for i in range(9)])
    assert [p.text for p in many.points if p.kernel == "rmsnorm"] == ["rmsnorm · 0.55 % of roof"]


def test_html_styles_each_ceiling_by_its_own_provenance():
    """A roof of STREAM-measured bandwidth and datasheet peaks (`kind: measured`, the
    fp16 tensor ceiling nominal): the PNG draws the slope solid and the flat roof dashed;
    the HTML drew both solid (by the roof's kind), a nominal peak passed off as measured."""
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    from rooflab.report.html import figure

    roof = Roof("T4 (STREAM + datasheet)", "measured",
                compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),   # nominal
                memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
    png = roofline_data([roof], [MATMUL_T4])
    assert {ln.kind: ln.style for ln in png.lines} == {"memory": "solid", "compute": "dashed"}
    fig = figure(analyze(roof, [MATMUL_T4]))
    by_y = {t.y[0]: t for t in _compute_traces(fig)}
    assert by_y[65e12].line.dash == "dash"
    assert by_y[65e12].name == "nominal fp16 tensor 65 TFLOP/s"
    (slope,) = [t for t in fig.data if t.name == "measured DRAM 270 GB/s"]
    assert slope.line.dash == "solid"


def test_roof_label_does_not_stack_parentheses():
    """`rooflab plot output*.csv --on output5.ncu-rep -o steps.png` was titled 'Roofline:
    NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks) (derived)'."""
    from rooflab.report.chart_parts import roof_label

    gpp = Roof("NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)", "derived",
               compute=(Ceiling(156e9, precision="fp64", provenance="derived"),),
               memory=(Ceiling(256e9, level="DRAM", provenance="derived"),))
    assert roof_label(gpp) == "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks, derived)"
    assert roof_label(T4) == "NVIDIA T4 (nominal)"
    d = roofline_data([gpp], [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, 0.02)])
    assert d.title == "Roofline: NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks, derived)"
    assert {ln.roof for ln in d.lines} == {d.roof_labels[0]}


def test_points_above_their_roof_are_called_out():
    """`rooflab plot rooflab-demo/kernels.json --on rooflab-demo/profile.json -o c.png` (a
    probe disturbed by other load) drew gemm_fp64_1024 at '263 % of roof' and said nothing;
    `rooflab report` calls the same point out above everything else. The chart's notes
    (printed as warnings, and in --json) now do too, at the report's 5 % tolerance."""
    fast = Kernel("gemm", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                  2 * 4096**3 / 80e12, unit="tensor")                    # 80 of 65 TFLOP/s
    at_roof = Kernel("near", {"fp16": 1e9}, {"DRAM": 1e9}, 1e9 / 330e9)   # 103 %: tolerated
    d = roofline_data([T4], [fast, at_roof, DECODE_T4])
    (note,) = [n for n in d.notes if "above the roof" in n]
    # named by the ceiling it exceeds (review 19c N9), AI 1365 far right of the ridge
    assert note.startswith("1 point(s) above the roof that judges them: gemm 123 % of fp16 "
                           "tensor 65 TFLOP/s (bytes at DRAM);")
    assert "near" not in note and "decode" not in note
    assert not any("above the roof" in n for n in roofline_data([T4], [DECODE_T4]).notes)


def test_plot_cli_warns_about_points_above_the_roof(tmp_path, capsys):
    from rooflab.cli.main import main

    src = tmp_path / "k.csv"
    src.write_text("name,flop,bytes,seconds,precision\nfast,1e9,1e9,0.001,fp16\n")
    assert main(["plot", str(src), "--on", "T4", "-o", str(tmp_path / "c.png")]) == 0
    err = capsys.readouterr().err
    # AI 1 on the T4: attainable 320 GFLOP/s; 1e9 FLOP in 1 ms = 1 TFLOP/s = 312 %
    assert ("1 point(s) above the roof that judges them: fast 312 % of DRAM 320 GB/s x AI 1;"
            in err)


def test_llm_chart_draws_the_compared_hardware(tmp_path, monkeypatch, capsys):
    """`rooflab llm tinyllama-1.1b --on T4 --compare H200,A100 -o chart.png` printed the
    comparison table but drew only the T4's roof; the chart now carries the compared roofs
    too (the kernels stay judged by the T4's)."""
    from rooflab.cli.main import main

    caught = _catch_charts(monkeypatch)
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase",
                 "decode", "--compare", "H200,A100", "-o", str(tmp_path / "c.png")]) == 0
    d = caught[-1]
    assert d.roof_labels == ("NVIDIA T4 (nominal)", "NVIDIA H200 SXM (nominal)",
                             "NVIDIA A100 80GB SXM (nominal)")
    slopes = {ln.roof: ln.ys[1] / ln.xs[1] for ln in d.lines if ln.kind == "memory"}
    assert slopes["NVIDIA H200 SXM (nominal)"] == pytest.approx(4.8e12)
    assert slopes["NVIDIA T4 (nominal)"] == pytest.approx(320e9)
    # judged by the T4: the linear layers at AI ~1 predicted at 320 GFLOP/s
    gate = [p for p in d.points if p.kernel == "gate_proj"]
    assert gate and gate[0].flop_per_s == pytest.approx(320e9, rel=0.01)
