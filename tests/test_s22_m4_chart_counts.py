"""Review s22 h2 F2, F5, F8 (mender m4): the chart's layout settled once, the labelled
note counted after the layout's drop, a measured probe roof's clock in the legend."""

from __future__ import annotations

import dataclasses

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.kernel import Kernel
from rooflab.report import chart_layout
from rooflab.report.chart import roofline_data
from rooflab.report.chart_clock import roof_clock


def _kernels() -> list[Kernel]:
    # five fp64 kernels at AI 10, 50 ms down to 10 ms (4-11 % of the EPYC 9654 roof): k0
    # is the longest
    return [Kernel(name=f"k{i}", flop={"fp64": 1e9 * (i + 1)}, bytes={"DRAM": 1e8 * (i + 1)},
                   seconds=1e-2 * (5 - i)) for i in range(5)]


def test_draw_settles_the_layout_once(monkeypatch):
    """draw() on a figure of its own ran the constrained layout twice before any line was
    drawn (chart_draw._settle_layout, then fit_axes_height's first pass); once now."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from rooflab.report.chart_draw import draw

    d = roofline_data([lookup_roof("EPYC 9654")], _kernels()[:1])
    calls = []
    real = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute",
                        lambda self, fig: (calls.append(1), real(self, fig))[1])
    draw(d, None)
    assert len(calls) == 1


def test_labelled_note_counts_after_the_layout_drop(monkeypatch):
    """--labels 2 on five kernels, and the layout leaves k0's label out: the note said
    "the 2 longest ... 3 drawn without a label" while the footnote under the axis said
    "the 1 longest ... 4 more"; both say 1 and 4 now."""
    real = chart_layout.layout_labels

    def drop_k0(*args):
        lines, ridges, points = real(*args)
        return lines, ridges, [dataclasses.replace(p, text="") if p.kernel == "k0" else p
                               for p in points]

    monkeypatch.setattr(chart_layout, "layout_labels", drop_k0)
    d = roofline_data([lookup_roof("EPYC 9654")], _kernels(), labels=2)
    assert d.unlabelled == 4
    said = [n for n in d.notes if n.startswith("labelled the")]
    assert said == ["labelled the 1 longest of 5 kernels; 4 drawn without a label "
                    "(`rooflab plot --labels N` sets how many, 0 labels every one)"]
    assert any(n.startswith("1 kernel label(s) left out") and "k0" in n for n in d.notes)
    from rooflab.report.chart_draw import _axis_words

    assert "labelled: the 1 longest kernels; 4 more drawn without a label" in _axis_words(d)


def _probe_roof(note: str):
    roof = lookup_roof("EPYC 9654")
    return dataclasses.replace(roof, name="AMD EPYC measured (2 threads)", kind="measured",
                               source="rooflab probe (numba kernels, this machine), mode "
                               "quick", notes=("L1: no clear plateau", note))


@pytest.mark.parametrize("note, ghz", [
    # the notes of /tmp/r6/s22/bench.json (rooflab probe under load, s22)
    ("the all-thread clock reading (100 Hz) failed (other load preempted it); the nominal "
     "roof uses the other clock reading, 3.23 GHz", "3.23"),
    ("far below nominal ('AMD EPYC (Zen 3, 2 cores @ 3.23 GHz)'): fp64 vector 3.73 "
     "GFLOP/s = 4 % of 104 GFLOP/s", "3.23"),
    ("with 2 threads each ran at 1.10 GHz effective vs 3.40 GHz alone: other load shared "
     "the cores during the probe", "3.4"),
])
def test_measured_probe_roof_states_its_clock(note, ghz):
    """r6 F4's clock row was missing on a measured bench roof: the probe's clock reading
    is only in the roof's notes (probe/cpu/assemble.clock_estimate)."""
    assert roof_clock(_probe_roof(note)) == f"peaks at {ghz} GHz (the clock the probe measured)"


def test_measured_roof_without_a_clock_note_states_none():
    assert roof_clock(_probe_roof("L2: no clear plateau")) == ""
