"""The sweep chart's plateau names stay off the data lines (review s23 h2 F8: the L1
name, 16 pt under the axes' top, sat on the best-sample line: the highest plateau is the
chart's top)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_specs_sweep import cpu_profile

pytest.importorskip("matplotlib")

KiB, MiB = 2**10, 2**20


def _steep_table():
    """L1 1 TB/s, DRAM 20 GB/s: the DRAM line 2 % above the axes' foot."""
    from rooflab.report.sweep_chart import SweepRow, SweepTable, Window

    rows = tuple(SweepRow(ws_bytes=ws, ws_bytes_total=ws, best=b, median=b, spread=None,
                          level=lv, chosen=False, samples=2, calibrated=True)
                 for ws, b, lv in ((4 * KiB, 1000e9, "L1"), (8 * KiB, 1000e9, "L1"),
                                   (64 * MiB, 20e9, "DRAM"), (128 * MiB, 20e9, "DRAM")))
    return SweepTable(source="extras.bandwidth_sweep", axis="per thread", kernel="triad",
                      threads=1, rows=rows, windows=(Window("L1", 4 * KiB, 8 * KiB, 1000e9),
                                                     Window("DRAM", 64 * MiB, 128 * MiB, 20e9)),
                      markers=(), machine="box")


def _crossings(table):
    from rooflab.report.chart_layout_size import figure_renderer
    from rooflab.report.sweep_chart import plot_sweep

    d = plot_sweep(table)
    renderer = figure_renderer(d.figure_)
    names = [t for t in d.ax_.texts if (t.get_gid() or "").startswith("plateau-name:")]
    hits = []
    for t in names:
        box = t.get_window_extent(renderer)
        for key in ("best", "median"):
            at = d.ax_.transData.transform(d.lines_[key].get_xydata())
            # the drawn segments are straight in display space: sample them across the name
            xs = np.linspace(box.x0, box.x1, 25)
            ys = np.interp(xs, at[:, 0], at[:, 1])
            if ((ys >= box.y0 - 1) & (ys <= box.y1 + 1)).any():
                hits.append((t.get_text(), key))
    return sorted(t.get_text() for t in names), hits


def test_plateau_names_clear_the_best_and_median_lines():
    from rooflab.report.sweep_chart import sweep_table

    # old: [("L1", "best")]: the L1 name on the best-sample line
    assert _crossings(sweep_table(cpu_profile())) == (["DRAM", "L1", "L2"], [])


def test_a_low_plateau_keeps_its_name_at_the_top():
    assert _crossings(_steep_table()) == (["DRAM", "L1"], [])
