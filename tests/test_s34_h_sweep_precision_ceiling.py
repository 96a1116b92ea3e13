"""s34 H3: plot_roofline's sweep_precision "marks the ridge they should bend at" (its
docstring; docs/plot.md: "its ceiling and ridge drawn"). On a roof with more than
MAX_CEILINGS compute ceilings the automatic choice keeps only the kernels' and the top
float one, so on a T4 with fp16 tensor kernels the fp64 ceiling was left out
(`display.hidden` listed it) and with it the ridge the sweep was said to mark: the
sweep_precision="fp64" chart had one ridge, fp16 tensor's. The sweep's precision is now
kept like a kernel's.

T4 (catalog): fp64 vector 253.1 GFLOP/s, DRAM 320 GB/s: ridge AI* = 253.1e9 / 320e9 =
0.791 FLOP/B; fp16 tensor 65 TFLOP/s: 65e12 / 320e9 = 203."""

from __future__ import annotations

from rooflab.hardware.resolve import load_roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import roofline_data

T4 = load_roof("T4")
GEMM = Kernel("gemm", flop={"fp16": 1e12}, bytes=1e9, seconds=0.05, unit="tensor")
SWEEP = [(0.5, 1.1e11), (2.0, 2.4e11)]


def test_the_sweep_precision_keeps_its_ceiling_and_ridge():
    d = roofline_data([T4], [GEMM], sweep=SWEEP, sweep_precision="fp64")
    assert not any("fp64" in h for h in d.hidden)      # old: 'NVIDIA T4 ...: fp64 vector ...'
    assert len(d.hidden) == 4                           # fp32/fp16 vector, int8/int4 tensor
    assert [r.label for r in d.ridges] == ["fp16 tensor / DRAM: AI* = 203",
                                           "fp64 vector / DRAM: AI* = 0.791"]
    assert d.ridges[1].ai == 253.1e9 / 320e9
    assert "fp64 vector 253 GFLOP/s" in [ln.label for ln in d.lines]
    assert any("drawn 2 of 6 compute ceilings (kernels' precisions, the intensity sweep's "
               "fp64 and the top float ceiling)" in n for n in d.notes)


def test_without_sweep_points_or_with_precisions_asked_nothing_is_added():
    # no points: nothing bends, so the choice is the kernels' alone, as before
    bare = roofline_data([T4], [GEMM], sweep_precision="fp64")
    assert any("fp64 vector" in h for h in bare.hidden)
    assert [r.label for r in bare.ridges] == ["fp16 tensor / DRAM: AI* = 203"]
    # precisions asked for win over the sweep's
    asked = roofline_data([T4], [GEMM], sweep=SWEEP, sweep_precision="fp64",
                          precisions=["fp16"])
    assert any("fp64 vector" in h for h in asked.hidden)
    # the same roof drawn with the sweep: its fp64 ridge (old: absent)
    swept = roofline_data([T4], [GEMM], sweep=SWEEP, sweep_precision="fp64")
    assert len(swept.ridges) == len(bare.ridges) + 1
