"""Second fresh-user audit: a chart of three roofs keeps its title inside the figure."""

from __future__ import annotations

from rooflab.model import Ceiling, Roof
from rooflab.report.chart import plot_roofline


def _roof(name: str, kind: str) -> Roof:
    return Roof(name, kind, compute=(Ceiling(1e11, precision="fp64", unit="vector",
                                             provenance=kind),),
                memory=(Ceiling(5e10, level="DRAM", provenance=kind),))


def test_long_title_wraps_inside_the_figure():
    # `rooflab plot --on me.json --on "EPYC 9654"`: measured + nominal + catalog roof
    roofs = [_roof("AMD EPYC measured (2 threads)", "measured"),
             _roof("AMD EPYC (Zen 4, 2 cores @ 3.69 GHz)", "nominal"),
             _roof("AMD EPYC 9654", "nominal")]
    display = plot_roofline(roofs)
    fig = display.figure_
    title = fig.axes[0].title
    assert len(display.title) > 95 and "\n" in title.get_text()
    assert title.get_text().replace("\n", " ") == display.title
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    box = title.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1


def test_short_title_unchanged():
    display = plot_roofline([_roof("T4", "nominal")])
    assert display.figure_.axes[0].title.get_text() == display.title


def test_profiler_steps_are_labelled_by_their_files():
    # `rooflab ncu output4.csv output5.csv -o steps.png`: the table's rows say [output4],
    # [output5]; the chart said "step 1", "step 2"
    from rooflab.model import Kernel
    from rooflab.report.chart import roofline_data

    steps = [Kernel("gpp", {"fp64": 4e9}, {"DRAM": b}, s, meta={"step": stem})
             for b, s, stem in ((4e9, 8e-3, "output4"), (1e9, 2e-3, "output5"))]
    d = roofline_data([_roof("R", "nominal")], steps, trajectory=True)
    assert [p.text.split("\n")[0] for p in d.points] == ["gpp · output4", "output5"]
