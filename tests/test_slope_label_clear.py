"""A slope's label sits beside its own line, not on it: the label was anchored on the line
with its baseline there, so at 7 pt the dashes ran through the letters' lower edge
(`plot ... --trajectory --level DRAM`: 'L1 4.98 TB/s' looked struck through)."""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof

pytest.importorskip("matplotlib")

ROOF = Roof("box", "nominal", compute=(Ceiling(156e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(4.98e12, level="L1"), Ceiling(1.66e12, level="L2"),
                    Ceiling(256e9, level="DRAM")))


def test_slope_labels_stand_off_their_lines():
    import math

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rooflab.report.chart import plot_roofline

    k = Kernel("k", flop={"fp64": 2.3e12}, bytes={"DRAM": 1.5e11}, seconds=26.3)
    display = plot_roofline([ROOF], [k])
    FigureCanvasAgg(display.figure_).draw()
    ax = display.ax_
    slopes = [t for t in ax.texts if t.get_text().strip().split(" ")[0] in ("L1", "L2", "DRAM")]
    assert len(slopes) == 3
    for t in slopes:
        # the line's direction on screen, and the label's anchor offset across it (points)
        (x, y), (dx, dy) = t.xy, t.xyann
        p0, p1 = ax.transData.transform([(x, y), (x * 10, y * 10)])
        ux, uy = (p1 - p0) / math.hypot(*(p1 - p0))
        across = -uy * dx + ux * dy            # > 0: above the line
        side = 1 if t.get_va() == "bottom" else -1
        assert across * side >= 2.5, (t.get_text(), across)
        assert math.isclose(t.get_rotation(), math.degrees(math.atan2(uy, ux)), abs_tol=1.0)
