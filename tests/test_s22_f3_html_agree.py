"""The HTML chart says what the other formats say (review s22 r4 F1, F2; r6 F3)."""

from __future__ import annotations

import pytest

from rooflab.ingest.profile_envelope import envelope_roof
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.axis_words import intensity_title
from rooflab.report.chart_parts import DrawnPoint

pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")

from rooflab.report.html_figure import figure  # noqa: E402
from rooflab.report.html_hover import hover_text  # noqa: E402


def test_hover_words_the_bound_on_the_envelope_roof_as_the_tables():
    """No --on: the roof is the kernels' best. 'best' sets both ceilings (100 %: no roof to
    judge by); 'slow' reaches 1/4 of the envelope's DRAM slope at AI 1 (left of the
    envelope's ridge 4e12/1e11 = 40): memory, relative. The hover said 'bound: memory'."""
    ks = [Kernel("best", {"fp32": 4e9}, {"DRAM": 1e8}, 1e-3),     # 4 TFLOP/s, 100 GB/s
          Kernel("slow", {"fp32": 1e8}, {"DRAM": 1e8}, 4e-3)]     # AI 1: 25 GFLOP/s
    roof = envelope_roof(ks)
    a = analyze(roof, ks)
    best, slow = a.points
    assert "bound: no roof (give --on);" in hover_text(best, a)
    assert slow.percent_of_roof == pytest.approx(25.0)
    assert "bound: memory (relative);" in hover_text(slow, a)
    # off the envelope the class is the model's, unchanged
    on = analyze(Roof("T", "nominal", compute=(Ceiling(8e12, precision="fp32"),),
                      memory=(Ceiling(2e11, level="DRAM"),)), ks)
    assert "bound: memory;" in hover_text(on.points[1], on)


def test_legend_leads_with_the_ceilings_own_provenance():
    """A CPU catalog roof: kind nominal, every ceiling derived (--json says so per
    ceiling). The legend read 'nominal DRAM 461 GB/s (derived)'."""
    from rooflab.hardware.resolve import load_roof

    roof = load_roof("EPYC 9654")
    fig = figure(analyze(roof, [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, 1e-3)]))
    names = [t.name for t in fig.data if t.mode and "lines" in t.mode]
    assert "derived DRAM 461 GB/s" in names
    assert not [n for n in names if "nominal" in n and "derived" in n], names
    # two roofs drawn: a ceiling not of its roof's kind says whose it is
    from rooflab.report.html_roofs import legend_name

    c = Ceiling(65e12, precision="fp16", unit="tensor")            # nominal
    measured = Roof("T4 (STREAM + datasheet)", "measured", compute=(c,))
    assert legend_name(c, measured, "fp16 tensor 65 TFLOP/s") == "nominal fp16 tensor 65 TFLOP/s"
    assert legend_name(c, measured, "fp16 tensor 65 TFLOP/s", roofs=True) == \
        "nominal fp16 tensor 65 TFLOP/s (measured roof)"


def _pt(level: str, i: int = 0) -> DrawnPoint:
    return DrawnPoint("k", level, 1.0, 1e9, "#000", kernel_index=i)


def test_x_axis_says_which_bytes_the_intensity_counts():
    counted = Kernel("c", {"fp32": 1e9}, {"DRAM": 1e8}, 1e-3,
                     provenance={"flop": "counted", "bytes": "counted"})
    zoo = Kernel("z", {"fp32": 1e9}, {"DRAM": 1e8}, 1e-3,
                 provenance={"flop": "derived", "bytes": "derived"})   # bench: compulsory
    assert intensity_title([_pt("DRAM")], [counted]) == \
        "arithmetic intensity (FLOP per DRAM byte)"
    assert intensity_title([_pt("L2")], [counted]) == "arithmetic intensity (FLOP per L2 byte)"
    assert intensity_title([_pt("DRAM")], [zoo]) == \
        "arithmetic intensity (FLOP per byte of minimum DRAM traffic)"
    assert intensity_title([_pt("DRAM", 0), _pt("DRAM", 1)], [zoo, counted]) == \
        "arithmetic intensity (FLOP per DRAM byte)"
    assert intensity_title([_pt("DRAM"), _pt("L2")], [counted]) == \
        "arithmetic intensity (FLOP per byte at each marker's level)"
    assert intensity_title([], []) == "arithmetic intensity (FLOP/byte)"
    # the HTML chart's axis: kernels with L2 bytes only say L2
    roof = Roof("T", "nominal", compute=(Ceiling(8e12, precision="fp32"),),
                memory=(Ceiling(2e11, level="DRAM"), Ceiling(1e12, level="L2")))
    fig = figure(analyze(roof, [Kernel("k", {"fp32": 1e9}, {"L2": 4e8}, 1e-3)]))
    assert fig.layout.xaxis.title.text == "arithmetic intensity (FLOP per L2 byte)"
