"""Review s18 final reread, mender m1: F1 (--level analyses a second time only where a
point reads "latency", the only class the other levels can change), F2 (the chart's
footnote counts the kernels labelled for being above their roof apart from the longest),
F5 (one launch-bound reach formula for the chart and the HTML hover).
"""

from __future__ import annotations

import json

from conftest import gpp_recording

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel
from rooflab.report.chart import roofline_data


def _counting(monkeypatch, module) -> list[int]:
    calls = [0]
    real = module.analyze

    def counted(*a, **k):
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(module, "analyze", counted)
    return calls


def test_f1_level_dram_of_output1_analyses_the_import_once(monkeypatch, capsys):
    import rooflab.cli.profiled as profiled
    from rooflab.cli.main import main

    rep = str(gpp_recording("output1.ncu-rep"))
    calls = _counting(monkeypatch, profiled)
    assert main(["ncu", rep, "--level", "DRAM", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["analysis"]
    # since s21 m1 (r3 F6) the reduction's 4 blocks on 24 SMs read "latency" at DRAM too
    # (fewer blocks than half the SMs), so the other levels are analysed to reword it: 2 calls
    assert calls[0] == 2
    assert [(p["kernel"], p["bound"], p.get("binding_level")) for p in pts] == [
        ("sigma_gpp_gpu_34", "compute", None), ("sigma_gpp_gpu_34_gpu__red", "latency", None)]
    # at L2 the reduction's point is "latency" at L2 alone: analysed with every level, it
    # still says DRAM binds (review s18 r4 F2), as the JSON and the table did before (L1
    # is the CARM reading since review s26 v2 F4, as in report and plot)
    calls[0] = 0
    assert main(["ncu", rep, "--level", "L2", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["analysis"]
    assert calls[0] == 2
    red = next(p for p in pts if p["kernel"] == "sigma_gpp_gpu_34_gpu__red")
    assert (red["bound"], red["binding_level"]) == ("not binding", "DRAM")


def test_f1_chart_at_one_level_analyses_a_memory_bound_kernel_once(monkeypatch):
    import rooflab.report.chart_batch as chart_batch
    import rooflab.report.chart_points as chart_points

    # T4: 320 GB/s DRAM. AI 1e9 / 4e9 = 0.25; 4e9 B in 20 ms = 200 GB/s (62 % of DRAM):
    # memory-bound at DRAM, no "latency" point to reword, so one analyze() (old: two),
    # in chart_points or in chart_batch (s21 h1: one joint analysis per roof)
    k = Kernel("copyish", {"fp32": 1e9}, {"DRAM": 4e9, "L2": 8e9}, seconds=0.02)
    calls = _counting(monkeypatch, chart_points)
    batch_calls = _counting(monkeypatch, chart_batch)
    d = roofline_data([lookup_roof("T4")], [k], level="DRAM")
    assert calls[0] + batch_calls[0] == 1
    (p,) = d.points
    assert p.bound == "memory" and abs(p.flop_per_s - 1e9 / 0.02) < 1


def _over_roof_chart(labels: int):
    # H100 fp32 vector 67 TFLOP/s: "fast" runs at 80 TFLOP/s (120 %), the shortest kernel
    ks = [Kernel(f"k{i}", {"fp32": 1e12}, {"DRAM": 1e10}, seconds=1.0 + i) for i in range(3)]
    ks.append(Kernel("fast", {"fp32": 80e12 * 1e-3}, {"DRAM": 80e12 * 1e-3 / 200},
                     seconds=1e-3))
    return roofline_data([lookup_roof("H100")], ks, labels=labels)


def test_f2_footnote_counts_the_ringed_kernel_apart_from_the_longest():
    from rooflab.report.chart_draw import _axis_words

    d = _over_roof_chart(2)
    words = _axis_words(d)
    # k2, k1 (the 2 longest) and fast (above its roof); k0 unlabelled. Old: "the 3 longest"
    assert ("labelled: the 2 longest kernels and 1 above their roof; 1 more drawn without "
            "a label") in words
    assert [n for n in d.notes if n.startswith("labelled")] == [
        "labelled the 2 longest of 4 kernels and 1 more above their roof; 1 drawn without "
        "a label (`rooflab plot --labels N` sets how many, 0 labels every one)"]


def test_f2_footnote_without_a_ringed_kernel_reads_as_before():
    from rooflab.report.chart_draw import _axis_words

    ks = [Kernel(f"k{i}", {"fp32": 1e12}, {"DRAM": 1e10}, seconds=1.0 + i) for i in range(4)]
    d = roofline_data([lookup_roof("H100")], ks, labels=3)
    assert "labelled: the 3 longest kernels; 1 more drawn without a label" in _axis_words(d)


def test_f5_chart_and_hover_draw_a_launch_bound_point_at_one_rate():
    from rooflab.model import analyze
    from rooflab.report.chart_points import launch_bound_rate
    from rooflab.report.html_hover import hover_text

    h100 = lookup_roof("H100")
    # untimed, 100 calls x 5 us launch floor = 500 us > its work at the roof: it reaches
    # 1e6 FLOP / 500 us = 2 GFLOP/s
    k = Kernel("rope", {"fp16": 1e6}, {"DRAM": 1e6}, calls=100)
    (p,) = analyze(h100, [k]).points
    assert launch_bound_rate(p) == 1e6 / (100 * 5e-6)
    (drawn,) = roofline_data([h100], [k]).points
    assert drawn.flop_per_s == launch_bound_rate(p)
    assert "= 2 GFLOP/s (predicted, launch-bound" in hover_text(p, analyze(h100, [k]))
    # a timed point is drawn where it was measured
    (timed,) = analyze(h100, [Kernel("rope", {"fp16": 1e6}, {"DRAM": 1e6}, calls=100,
                                     seconds=1e-3)]).points
    assert launch_bound_rate(timed) is None


def test_f9_one_box_distance_and_one_level_rule_for_png_labels_and_html_ridges():
    from rooflab.report.boxes import box_distance, level_with_nearer

    box = (0.0, 0.0, 10.0, 5.0)
    assert box_distance(box, (13.0, 9.0)) == 5.0      # 3-4-5 from the top-right corner
    assert box_distance(box, (4.0, 2.0)) == 0.0       # inside
    own = (-2.0, 2.5)                                 # 2 left of the box
    # level with a marker 1 right of the box (nearer than its own): reads as that one's
    assert level_with_nearer(box, own, [(11.0, 3.0)])
    # 3 right of it: its own is nearer; within 3 x 12 px of the HTML's ridge rule it is not
    assert not level_with_nearer(box, own, [(13.0, 3.0)])
    assert level_with_nearer(box, own, [(13.0, 3.0)], px=36.0)
    # not level (above the box's top): not this rule, however near
    assert not level_with_nearer(box, own, [(11.0, 6.0)], px=36.0)
