"""Review s18 r5 F6: the HTML chart names, with a leader line, a kernel or a ridge that
has no free spot beside its marker (the PNG names them; the HTML left them to hover).

(a) the one kernel of an Nsight Compute report (NERSC GPP: L1, L2 and DRAM markers side
by side at 85 GFLOP/s) was unnamed, the legend saying "0 of 1 kernels named"; (b) on an
H100 chart with fp32 and fp16-tensor kernels only AI*=20 was written: the fp16 tensor
ridge (295 FLOP/byte) and the fp8 one (591) were named on hover only.
"""

from __future__ import annotations

import math

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report import boxes
from rooflab.report.html_labels import Axes
from rooflab.report.html_leaders import LEADER_GAPS_PX, place_leader

pytest.importorskip("plotly")

# the RTX 4060 Laptop peaks the GPP report records (derived): fp64 48 dfma/clk
GPP_ROOF = Roof("RTX 4060 Laptop (profiler peaks)", "derived",
                compute=(Ceiling(156e9, precision="fp64", unit="vector", provenance="derived"),),
                memory=(Ceiling(4.98e12, level="L1", provenance="derived"),
                        Ceiling(1.66e12, level="L2", provenance="derived"),
                        Ceiling(256e9, level="DRAM", provenance="derived")))


def _gpp_kernel():
    # 85.2 GFLOP/s over 45.2 s of FLOP; AI 5.03 at DRAM, 4.05 at L2, 2.0 at L1 (r5's numbers)
    flop = 85.2e9 * 30.6
    return Kernel("sigma_gpp_gpu_34", {"fp64": flop},
                  {"DRAM": flop / 5.03, "L2": flop / 4.05, "L1": flop / 2.0}, seconds=30.6)


def _texts(fig) -> list[str]:
    out = [a.text for a in fig.layout.annotations or ()]
    for t in fig.data:
        if t.mode and "markers" in t.mode and t.text is not None:
            out += [s for s in t.text if s]
    return out


def test_the_only_kernel_of_an_ncu_report_is_named():
    from rooflab.report.html import figure

    fig = figure(analyze(GPP_ROOF, [_gpp_kernel()]))
    assert "sigma_gpp_gpu_34" in _texts(fig)
    assert "kernels named" not in fig.layout.legend.title.text


def test_every_ridge_of_an_h100_chart_is_written():
    from rooflab.report.html import figure

    h100 = lookup_roof("H100")
    ks = [Kernel(f"sgemm_{ai:g}", {"fp32": ai * 1e9}, {"DRAM": 1e9},
                 seconds=ai * 1e9 / min(60e12, ai * 3e12)) for ai in (0.5, 5, 40)]
    ks += [Kernel(f"hgemm_{ai:g}", {"fp16": ai * 1e9}, {"DRAM": 1e9}, unit="tensor",
                  seconds=ai * 1e9 / min(900e12, ai * 3e12)) for ai in (2, 100, 900)]
    fig = figure(analyze(h100, ks))
    written = {a.text for a in fig.layout.annotations
               if (a.name or "").startswith(("ridge:", "ridge-leader:"))}
    # 67 T / 3.35 TB/s = 20; 990 T / 3.35 = 295; 1979 T / 3.35 = 591
    assert {"AI*=20", "AI*=295", "AI*=591"} <= written
    axes = Axes(tuple(fig.layout.xaxis.range), tuple(fig.layout.yaxis.range))
    leads = [a for a in fig.layout.annotations
             if (a.name or "").startswith(("ridge:", "ridge-leader:")) and a.showarrow]
    # every ridge name now fits beside its diamond (s19 f4: two-row ceiling names), so
    # leaders may be absent; any drawn must not cross
    segs = []
    for a in leads:
        at = axes.px(10 ** a.x, 10 ** a.y)
        segs.append((at, (at[0] + a.ax, at[1] - a.ay)))
        # the text is written at least the first leader distance out
        assert (a.ax ** 2 + a.ay ** 2) ** 0.5 >= LEADER_GAPS_PX[0]
    # two leaders never cross (each would read as the other's)
    for i, (p, q) in enumerate(segs):
        for r, s in segs[i + 1:]:
            assert not boxes.crosses(p, q, r, s)


def test_place_leader_skips_a_spot_whose_line_crosses_another_marker():
    size = (600.0, 440.0)
    anchor = (300.0, 200.0)
    # every spot of the first ring but one blocked; the free one behind another marker
    first = place_leader(anchor, "k", size, taken=[])
    assert first is not None and first.dx > 0 and first.dy > 0      # "top right"
    other = (anchor[0] + 0.5 * first.dx - 4, anchor[1] + 0.5 * first.dy - 4,
             anchor[0] + 0.5 * first.dx + 4, anchor[1] + 0.5 * first.dy + 4)
    moved = place_leader(anchor, "k", size, taken=[], markers=[other])
    assert moved is not None and (moved.dx, moved.dy) != (first.dx, first.dy)
    assert boxes.hits(anchor, first.segment(anchor)[1], other)
    assert not boxes.hits(*moved.segment(anchor), other)


def test_place_names_writes_a_blocked_kernel_out_with_a_leader():
    from rooflab.report.html_labels import POSITIONS, Candidate, place_names, text_box

    axes = Axes((-2.0, 2.0), (9.0, 13.0))
    c = Candidate(0, 1.0, 1e11, "sigma_gpp_gpu_34", 30.0)
    at = axes.px(1.0, 1e11)
    # a 3 px box in the middle of each of its eight spots: none free beside the marker
    blocks = []
    for p in POSITIONS:
        b = text_box(at, c.text, p)
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        blocks.append((cx - 1.5, cy - 1.5, cx + 1.5, cy + 1.5))
    assert place_names([c], axes, blocks) == {}             # old: unnamed, hover only
    leads: dict = {}
    assert place_names([c], axes, blocks, leaders=leads) == {}
    lead = leads[0]
    assert math.hypot(lead.dx, lead.dy) >= LEADER_GAPS_PX[0]
    assert not any(boxes.overlaps(lead.box, b, 0.5) for b in blocks)
    assert not any(boxes.hits(*lead.segment(at), b) for b in blocks)
