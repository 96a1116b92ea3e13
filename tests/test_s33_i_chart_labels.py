"""The demo chart (review s33 I): a CPU probe's fp32 and fp64 ceilings of one height
(vector 6.72 / 6.7 GFLOP/s, scalar 87.5 / 87.6 MFLOP/s under load, 2026-12-03) drew two
labels on one line each, and the legend, right of the axes, took half the PNG's width:
115-character roof names and the same clock row under each roof, one of them
'peaks at 2.25674 GHz'. Checked on the layout's data, not on pixels."""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data

NOMINAL_NAME = "Intel(R) Xeon(R) Processor (Sapphire/Emerald Rapids, 2 cores @ 2.26 GHz)"
PROBE = "rooflab probe (numba kernels, this machine), mode quick, 2026-12-03T17:08:06+00:00"


def _c(p, unit, v, prov="measured", method=""):
    return Ceiling(v, precision=p, unit=unit, provenance=prov, method=method)


def _roofs(scalar32=87.5e6, scalar64=87.6e6):
    # the demo's figures (rooflab demo, 2026-12-03 17:08 UTC, this 2-vCPU VM under load)
    measured = Roof("Intel(R) Xeon(R) Processor measured (2 threads)", "measured",
                    compute=(_c("fp64", "scalar", scalar64), _c("fp64", "vector", 6.7e9),
                             _c("fp32", "scalar", scalar32), _c("fp32", "vector", 6.72e9)),
                    memory=(Ceiling(5.9e9, level="DRAM", provenance="measured"),),
                    source=PROBE,
                    notes=("the nominal roof uses the other clock reading, 2.26 GHz",))
    # fp64 vector = 2 cores x 2.25674 GHz x 8 lanes x 2 FMA pipes x 2 = 144.4 GFLOP/s
    method = "2 cores x 2.25674 GHz x 8 lanes x 2 FMA pipes x 2 (Sapphire/Emerald Rapids)"
    nominal = Roof(NOMINAL_NAME, "nominal",
                   compute=(_c("fp64", "vector", 144.43e9, "nominal", method),
                            _c("fp32", "vector", 288.86e9, "nominal", method)),
                   source="derived; clock measured by the probe")
    return measured, nominal


def _kernels():
    return [Kernel("gemm_fp64_256", flop={"fp64": 33554432}, bytes={"DRAM": 1572864},
                   seconds=0.028),
            Kernel("softmax_fp32", flop={"fp32": 67108864}, bytes={"DRAM": 134217728},
                   seconds=0.133, unit="scalar"),
            Kernel("sum_fp64", flop={"fp64": 27.5e6}, bytes={"DRAM": 220e6}, seconds=0.0626,
                   unit="scalar")]


def test_ceilings_of_one_height_share_one_label():
    d = roofline_data(list(_roofs()), _kernels())
    measured = [ln for ln in d.lines if ln.kind == "compute" and ln.roof == d.roof_labels[0]]
    assert len(measured) == 4
    texts = [ln.text.strip() for ln in measured if ln.text.strip()]
    # 6.72 / 6.7 = 1.003 and 87.6 / 87.5 = 1.001: each pair prints as one line (far under
    # SAME_LINE_PT, 2 pt), so one label each; top line first
    assert sorted(texts) == ["fp32 / fp64 vector 6.72 / 6.7 GFLOP/s",
                             "fp64 / fp32 scalar 87.6 / 87.5 MFLOP/s"]


def test_equal_values_read_as_one():
    d = roofline_data(list(_roofs(scalar32=87.5e6, scalar64=87.5e6)), _kernels())
    texts = [ln.text.strip() for ln in d.lines if ln.kind == "compute" and ln.text.strip()
             and ln.roof == d.roof_labels[0]]
    assert "fp64 = fp32 scalar 87.5 MFLOP/s" in texts


@pytest.mark.parametrize("group, text", [
    (["fp32 scalar* 87.5 MFLOP/s", "fp64 scalar* 87.5 MFLOP/s"],
     "fp32 = fp64 scalar* 87.5 MFLOP/s"),
    (["fp32 vector* 6.72 GFLOP/s", "fp64 vector* 6.7 GFLOP/s"],
     "fp32 / fp64 vector* 6.72 / 6.7 GFLOP/s"),
    # different unit names: each named, as shared_label has them (A100)
    (["fp32 vector 19.5 TFLOP/s", "fp64 tensor 19.5 TFLOP/s"],
     "fp32 vector, fp64 tensor 19.5 TFLOP/s"),
])
def test_group_label(group, text):
    from rooflab.report.chart_layout_roofs import group_label

    assert group_label(group) == text


def test_the_legend_is_compact():
    from matplotlib.lines import Line2D

    from rooflab.report.chart_legend import LEGEND_WRAP, _clock_rows, legend_text

    d = roofline_data(list(_roofs()), _kernels())
    # both roofs peak at the probe's clock: one row, 3 figures (not 2.25674)
    rows = [t for _, t in _clock_rows(d, Line2D)]
    assert rows == ["both roofs: peaks at 2.26 GHz (the clock the probe measured)"]
    # the nominal roof's legend words (115 characters) fold onto lines of <= 64
    words = (f"{NOMINAL_NAME[:-1]}, nominal; peaks derived, not datasheet figures)")
    folded = legend_text(words)
    assert folded.replace("\n", " ") == words
    assert max(len(x) for x in folded.split("\n")) <= LEGEND_WRAP == 64
    assert len(folded.split("\n")) == 2
