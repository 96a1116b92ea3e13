"""Review 18b D: `plot_roofline(..., ax=ax)` showed the chart twice in Jupyter (the display's
own PNG and pyplot's figure). Drawn into the caller's axes, the display has no image repr."""
import pytest

from rooflab import load_roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import plot_roofline

plt = pytest.importorskip("matplotlib.pyplot")


def _kernels():
    return [Kernel("gemm", {"fp16": 2 * 4096 ** 3}, {"DRAM": 3 * 4096 ** 2 * 2}, seconds=2e-3)]


def test_drawn_into_callers_axes_has_no_png_repr():
    fig, ax = plt.subplots()
    try:
        d = plot_roofline([load_roof("T4")], _kernels(), ax=ax)
        assert d.ax_ is ax
        assert d._repr_png_() is None
    finally:
        plt.close(fig)


def test_own_figure_still_shows_inline():
    png = plot_roofline([load_roof("T4")], _kernels())._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
