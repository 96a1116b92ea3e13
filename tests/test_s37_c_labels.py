"""A chart of many kernels words the labels of the kernels that can keep one only (the n
longest and those above their roof), not every point's to blank all but n straight after
(report/chart_point_labels._worded; session 37, helper C: 20 000 kernels' wording and
copying was ~0.5 s of `rooflab plot`, now ~0.1 s). The labels, the points and the notes
are those of wording every one."""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.kernel import Kernel


def _kernels() -> list[Kernel]:
    """31 kernels of 1e8 fp32 FLOP over 1e8 DRAM bytes (AI 1) on a T4 (320 GB/s DRAM, 8.1
    TFLOP/s fp32): each reaches min(8.1e12, 320e9 x 1) = 3.2e11 FLOP/s, 0.3125 ms at its
    roof. k01..k30 take 1..30 ms (31.25 % .. 1.04 % of roof); k00 takes 0.2 ms: 1e8 / 2e-4
    = 5e11 FLOP/s, 156 % of its roof, drawn ringed above it."""
    ks = [Kernel(name=f"k{i:02d}", flop={"fp32": 1e8}, bytes={"DRAM": 1e8},
                 seconds=1e-3 * i) for i in range(1, 31)]
    return [Kernel(name="k00", flop={"fp32": 1e8}, bytes={"DRAM": 1e8}, seconds=2e-4), *ks]


def _words_every_label(monkeypatch):
    """The old way: every point's label worded (point_texts of them all), the kernels named
    read from those labels."""
    import rooflab.report.chart_point_labels as cpl
    from rooflab.report.chart_layout_texts import point_texts

    def every(points, to_draw, trajectory, n):
        full = point_texts(points, trajectory)
        return full, list(dict.fromkeys(p.kernel for p in full if p.text))

    monkeypatch.setattr(cpl, "_worded", every)


def test_only_the_five_longest_and_the_one_above_its_roof_are_worded(monkeypatch):
    """labels=5 of 31: the 5 longest are k26..k30 (26-30 ms) and k00 is above its roof
    (156 %), so those 6 kernels' labels are worded and no other's; the note counts 31 -
    5 - 1 = 25 drawn without a label."""
    import rooflab.report.chart_layout_texts as clt
    from rooflab.report.chart import roofline_data

    asked = []
    words = clt.point_texts

    def spy(points, trajectory, only=None):
        asked.append(only)
        return words(points, trajectory, only)

    monkeypatch.setattr(clt, "point_texts", spy)
    d = roofline_data([lookup_roof("T4")], _kernels(), labels=5, place_labels=False)
    assert asked == [{"k26", "k27", "k28", "k29", "k30", "k00"}]
    assert {p.kernel for p in d.points if p.text} == {"k26", "k27", "k28", "k29", "k30", "k00"}
    assert d.unlabelled == 25
    assert ("labelled the 5 longest of 31 kernels and 1 more above their roof; 25 drawn "
            "without a label") in " ".join(d.notes)
    # every point keeps its full label (the JSON's), worded or not: k01 at 31.25 % of roof
    k01 = next(p for p in d.points if p.kernel == "k01")
    assert k01.text == "" and k01.label.startswith("k01\nAI 1") and "31" in k01.label


@pytest.mark.parametrize("labels, place", [(5, False), (5, True), (0, True), (40, True),
                                          (1, True)])
def test_same_display_as_wording_every_label(monkeypatch, labels, place):
    """The display (points with their texts, lines, ridges, notes, the count unlabelled)
    is the one wording every label gives, placed or not, for labels 0 (every one), 1, 5
    and 40 (more than the 31 kernels)."""
    from rooflab.report.chart import roofline_data

    roof = lookup_roof("T4")
    now = roofline_data([roof], _kernels(), labels=labels, place_labels=place)
    _words_every_label(monkeypatch)
    old = roofline_data([roof], _kernels(), labels=labels, place_labels=place)
    assert now.points == old.points and now.notes == old.notes
    assert now.lines == old.lines and now.ridges == old.ridges
    assert now.unlabelled == old.unlabelled
