"""The HTML chart hands plotly its points' and launch caps' traces as properties (a dict),
checked once by Figure.add_trace, where a go.Scatter was checked twice (built, then rebuilt
from its properties by add_trace): the same page, byte for byte (session 36, helper P)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from cli_inproc import run_cli

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def _kernels(n: int, roof) -> list[Kernel]:
    """benchmarks/scale_speed.spread_kernels' recipe (seeded, AI 0.01-1000 at 3-95 % of
    the roof), with every seventh kernel untimed (a hollow 'predicted' trace) and every
    fifth read at L2 too."""
    rng = random.Random(0)
    peak, bw = roof.find_compute("fp32").value, roof.bandwidth("DRAM").value
    out = []
    for i in range(n):
        ai = 10 ** rng.uniform(-2, 3)
        flop = 1e6 * 10 ** rng.uniform(0, 5)
        seconds = flop / (min(peak, ai * bw) * rng.uniform(0.03, 0.95))
        data = {"DRAM": flop / ai, **({"L2": 3 * flop / ai} if i % 5 == 0 else {})}
        out.append(Kernel(name=f"kernel_{i:05d}", flop={"fp32": flop}, bytes=data,
                          seconds=None if i % 7 == 0 else seconds))
    return out


def _as_scatter(props):
    import plotly.graph_objects as go

    return go.Scatter(**{k: v for k, v in props.items() if k != "type"})


@pytest.fixture
def scatter_objects(monkeypatch):
    """The page as before: each level's points and each launch cap a go.Scatter, built from
    the same properties (what html_figure and html_marks built before the change)."""
    import rooflab.report.html_figure as hf

    points, caps = hf._points_trace, hf.cap_traces

    def old():
        monkeypatch.setattr(hf, "_points_trace", lambda *a, **k: _as_scatter(points(*a, **k)))
        monkeypatch.setattr(hf, "cap_traces",
                            lambda *a, **k: [_as_scatter(t) for t in caps(*a, **k)])
    return old


@pytest.mark.parametrize("n,on", [(40, "T4"), (80, "H100")])
def test_page_same_as_with_scatter_objects(n, on, scatter_objects):
    """html_report of seeded kernels (measured and untimed, launch caps) is the same
    string with the traces as properties and as go.Scatter; the page has a cap trace and
    a predicted trace, so both changed paths are walked."""
    pytest.importorskip("plotly")
    from rooflab.report.html import html_report
    from rooflab.report.html_figure import figure

    roof = lookup_roof(on)
    a = analyze(roof, _kernels(n, roof))
    names = [t.name for t in figure(a).data]
    assert any(str(x).startswith("launch cap") for x in names), names
    assert any(str(x).startswith("predicted @ DRAM") for x in names), names
    now = html_report(a)
    scatter_objects()
    assert html_report(a) == now


@pytest.mark.parametrize("name,on", [("seed000_ncu.csv", "T4"), ("k.json", "H100")])
def test_fixture_pages_the_same(name, on, scatter_objects, tmp_path):
    """`rooflab report FIXTURE --on ON -o x.html` writes the same bytes both ways (the
    file's own name aside: the footer names the command)."""
    pytest.importorskip("plotly")
    path = SEEDS / name
    if not path.exists():
        pytest.skip(f"{path} not here")
    out = tmp_path / "x.html"
    assert run_cli("report", str(path), "--on", on, "-o", str(out)).returncode == 0
    now = out.read_bytes()
    out.unlink()
    scatter_objects()
    assert run_cli("report", str(path), "--on", on, "-o", str(out)).returncode == 0
    assert out.read_bytes() == now


def test_points_trace_is_its_properties():
    """_points_trace gives the scatter's properties: type 'scatter', one x, y, hover text
    and text position per point, the measured markers filled with a #222 edge. Three
    kernels on T4 (fp32 vector 8.1 TFLOP/s, DRAM 320 GB/s), drawn at given places."""
    from rooflab.report.html_figure import _key, _points_trace
    from rooflab.report.html_hover import hover_text

    roof = lookup_roof("T4")
    ks = [Kernel(name=f"k{i}", flop={"fp32": 1e9 * (i + 1)}, bytes={"DRAM": 1e8},
                 seconds=1e-3) for i in range(3)]
    a = analyze(roof, ks)
    pts = list(a.points)
    at = {_key(p): (float(i + 1), 1e9 * (i + 1)) for i, p in enumerate(pts)}
    got = _points_trace(pts, "DRAM", True, {_key(pts[1]): "top left"}, a, at)
    assert isinstance(got, dict) and got["type"] == "scatter"
    assert got["x"] == [1.0, 2.0, 3.0] and got["y"] == [1e9, 2e9, 3e9]
    assert got["text"] == ["", "k1", ""]
    assert got["textposition"][1] == "top left"
    assert got["hovertext"] == [hover_text(p, a) for p in pts]
    assert got["marker"]["line"] == {"width": 1, "color": "#222"}
    assert got["marker"]["size"] == 11
