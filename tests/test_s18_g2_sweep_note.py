"""Review s18 r5 F8: a probe run under load fitted fp64 vector at 3.86 GFLOP/s while its own
intensity sweep, drawn beside it, reached 12.1 GFLOP/s (3.1x); the chart did not say that
the ceiling, not the kernel ringed above it, is off. It now says so under the axis and in
the notes."""

from __future__ import annotations

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_words import caveats

# the saved r5 profile's measured fp64 ceiling (flagged: disturbed samples) and DRAM slope
EPYC = Roof("AMD EPYC measured (2 threads)", "measured",
            compute=(Ceiling(3.86e9, precision="fp64", unit="vector", provenance="measured",
                             warnings=("samples disturbed",)),),
            memory=(Ceiling(4.68e9, level="DRAM", provenance="measured"),))
SWEEP = [(0.5, 2.2e9), (2.0, 9.4e9), (8.0, 12.1e9), (32.0, 12.1e9)]
GEMM = Kernel("gemm_fp64_1024", {"fp64": 6.71e9}, {"DRAM": 6.71e9 / 85.3}, seconds=1.0)


def test_a_sweep_above_its_ceiling_is_said_under_the_axis_and_in_the_notes():
    d = roofline_data([EPYC], [GEMM], sweep=SWEEP, sweep_precision="fp64")
    words = ("the intensity sweep reaches 12.1 GFLOP/s, 3.13x fp64 vector* 3.86 GFLOP/s: "
             "that ceiling reads low")
    assert words in caveats(d)
    assert any(words in n for n in d.notes)


def test_a_sweep_under_its_ceiling_says_nothing():
    low = [(x, min(y, 3.8e9)) for x, y in SWEEP]
    d = roofline_data([EPYC], [GEMM], sweep=low, sweep_precision="fp64")
    assert "intensity sweep" not in caveats(d)
    assert not any("intensity sweep reaches" in n for n in d.notes)
