"""s38 N: the vector-unit note names its kernels together ("a, b: no unit given ..."), and
the chart's batched analysis (report/chart_batch._batched) read "a, b" as one kernel's
name: a kernel held to the vector unit by its kind, whose only other note was none (or
its weighted ceiling's), lost the note that analysing it alone gives.

Hand check: an fp16 elementwise pass on an A100 has no unit and is no matrix op, so it is
held to fp16 vector, 78 TFLOP/s (not fp16 tensor 312): ridge 78e12 / 2.039e12 = 38.3
FLOP/B; a softmax of 9 GFLOP fp16 + 1 GFLOP fp32 is held to a weighted
1 / (0.9 / 78e12 + 0.1 / 19.5e12) = 60 TFLOP/s of vector ceilings."""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.analysis import analyze
from rooflab.model.held_unit import VECTOR_KIND_NOTE
from rooflab.model.kernel import Kernel
from rooflab.report import chart_batch, chart_points
from rooflab.report.chart import roofline_data


def _vector_kernels(n: int) -> list[Kernel]:
    """n kernels cycling elementwise fp16, softmax fp16+fp32 (mixed), a mixed GEMM and an
    fp32 reduction, some with L2 bytes too; names unique but for a repeated one."""
    out = []
    for i in range(n):
        kind = ("elementwise_add", "softmax_fwd", "gemm_tn", "reduce_sum")[i % 4]
        flop = 1e9 * (1 + i % 7)
        f = ({"fp16": flop} if kind == "elementwise_add" else
             {"fp32": flop} if kind == "reduce_sum" else
             {"fp16": 0.9 * flop, "fp32": 0.1 * flop})
        nbytes = {"DRAM": flop / (0.5 + i % 5)}
        if i % 3 == 0:
            nbytes["L2"] = 2 * nbytes["DRAM"]
        name = f"{kind}_{i}" if i != n - 1 else f"{kind}_0"
        out.append(Kernel(name=name, flop=f, bytes=nbytes, seconds=1e-3 * (1 + i % 3)))
    return out


def test_each_vector_kernel_keeps_its_note_in_the_batched_path():
    roof = lookup_roof("A100")
    ks = [Kernel(name="softmax_a", flop={"fp16": 9e9, "fp32": 1e9}, bytes={"DRAM": 1e9},
                 seconds=1e-3),
          Kernel(name="elementwise_b", flop={"fp16": 1e9}, bytes={"DRAM": 1e9},
                 seconds=1e-3)]
    joint = analyze(roof, ks).notes
    assert f"softmax_a, elementwise_b: {VECTOR_KIND_NOTE}" in joint
    got = chart_batch._batched(roof, ks, None)
    for k, b in zip(ks, got, strict=True):
        assert b is not None   # neither needs a second analyze()
        assert b[1] == list(analyze(roof, [k]).notes), k.name
    assert got[1][1][0] == f"elementwise_b: {VECTOR_KIND_NOTE}"
    assert got[0][1][0].startswith("softmax_a: held to a weighted 60 TFLOP/s: 90.0 % fp16 "
                                   "vector (78 TFLOP/s)")
    assert "(fp16 vector / DRAM, 38.3 on the datasheet)" in got[1][1][1]


@pytest.mark.parametrize("roof_name,level", [("A100", None), ("H100", None),
                                             ("A100", "DRAM")])
def test_batched_chart_notes_are_the_one_by_one_notes(monkeypatch, roof_name, level):
    roof = lookup_roof(roof_name)
    kernels = _vector_kernels(60)
    joint = roofline_data([roof], kernels, level=level, place_labels=False)
    with monkeypatch.context() as m:
        m.setattr(chart_points, "_batched", lambda r, ks, lv: [None] * len(ks))
        alone = roofline_data([roof], kernels, level=level, place_labels=False)
    assert joint.points == alone.points
    assert joint.notes == alone.notes
    # every elementwise/softmax/reduce kernel is noted by its own name
    said = {n.partition(": ")[0] for n in joint.notes if n.endswith(VECTOR_KIND_NOTE)}
    assert {k.name for k in kernels if not k.name.startswith("gemm")} <= said
