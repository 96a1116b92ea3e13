"""Review s18 r5 F7: a trajectory chart had no legend entry for its step arrows (they ran
along the grey level joins), and two coincident steps' labels were joined by appending the
second step's name under the first's figures ("…\\n55% of roof\\noutput4": an orphan line)."""

from __future__ import annotations

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout_points import _merged_text

ROOF = Roof("gpu", "derived",
            compute=(Ceiling(156e9, precision="fp64", provenance="derived"),),
            memory=(Ceiling(256e9, level="DRAM", provenance="derived"),))


def test_a_step_without_figures_joins_the_name_line():
    first = "sigma_gpp_gpu (steps) · output\nAI 14.9 · 88.4 GFLOP/s\n55% of roof"
    assert _merged_text(first, "output4") == (
        "sigma_gpp_gpu (steps) · output, output4\nAI 14.9 · 88.4 GFLOP/s\n55% of roof")
    # two bare step names: one line, the second's figures after it (as before)
    assert _merged_text("output6", "output7\nAI 34.7") == "output6, output7\nAI 34.7"
    # both with figures: one block under the other
    assert _merged_text("a\nAI 1", "b\nAI 2") == "a\nAI 1\nb\nAI 2"


def _legend_texts(display) -> list[str]:
    leg = display.figure_.axes[0].get_legend()
    return [t.get_text() for t in leg.get_texts()]


def test_step_and_pair_arrows_have_legend_entries():
    import matplotlib
    matplotlib.use("Agg")
    from rooflab.report.chart import plot_roofline
    from rooflab.report.chart_legend import ARROW_LEGEND, STEPS_LEGEND

    steps = [Kernel("k", {"fp64": 1e9 * ai}, {"DRAM": 1e9}, seconds=ai / 80.0,
                    meta={"step_label": f"v{i}"}) for i, ai in enumerate((2.0, 8.0, 30.0))]
    d = plot_roofline([ROOF], steps, trajectory=True)
    assert STEPS_LEGEND in _legend_texts(d) and ARROW_LEGEND not in _legend_texts(d)
    before = Kernel("r", {"fp64": 1e9}, {"DRAM": 1e9}, seconds=0.1)
    after = Kernel("r", {"fp64": 1e9}, {"DRAM": 2.5e8}, seconds=0.02)
    d = plot_roofline([ROOF], [before, after], arrows=[(before, after)])
    assert ARROW_LEGEND in _legend_texts(d) and STEPS_LEGEND not in _legend_texts(d)
    # the data behind it: one trajectory arrow per step after the first
    assert [a.kind for a in roofline_data([ROOF], steps, trajectory=True).arrows] == \
        ["trajectory", "trajectory"]
