"""A multi-roof chart's description names every roof and says whose each ridge is
(review s23 h2 F7: 'Roofline chart on NVIDIA T4 (nominal): ...; ridge AI*=812 (...),
AI*=612 (...)' for a T4-vs-A100 chart)."""

from __future__ import annotations

from rooflab.hardware.catalog import lookup_roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_description import chart_description


def test_two_roofs_each_named_with_their_ridges():
    words = chart_description(roofline_data([lookup_roof("t4"), lookup_roof("a100")], []))
    # T4 int4 tensor 260 TOP/s / 320 GB/s = 812.5; A100 80GB 1248 TOP/s / 2039 GB/s = 612
    assert words == ("Roofline chart on NVIDIA T4 (nominal) vs NVIDIA A100 80GB SXM "
                     "(nominal): 0 kernels; ridge of NVIDIA T4 (nominal) AI*=812 "
                     "(int4 tensor / DRAM); ridge of NVIDIA A100 80GB SXM (nominal) "
                     "AI*=612 (int4 tensor / DRAM).")


def test_one_roof_unchanged():
    words = chart_description(roofline_data([lookup_roof("t4")], []))
    assert words == ("Roofline chart on NVIDIA T4 (nominal): 0 kernels; "
                     "ridge AI*=812 (int4 tensor / DRAM).")
