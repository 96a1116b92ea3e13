"""The chart's choice of compute ceilings reads each kernel's op kind once per roof
(report/chart_ceilings._held_units), not three times (its held ceiling, the steps down
from fp64, then the note's words again): ~0.1 s of 20 000 kernels' chart (session 37,
helper C). The same ceilings, hidden lines and note."""

from __future__ import annotations

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.kernel import Kernel


def _kernels() -> list[Kernel]:
    return ([Kernel(name=f"gemm_{i}", flop={"fp16": 1e12}, bytes={"DRAM": 1e9}, seconds=1e-2)
             for i in range(3)]
            + [Kernel(name=f"softmax_{i}", flop={"fp16": 1e9}, bytes={"DRAM": 1e9},
                      seconds=1e-2) for i in range(2)]
            + [Kernel(name="stencil_fp64", flop={"fp64": 1e10}, bytes={"DRAM": 1e9},
                      seconds=1e-2)])


def test_op_kind_read_once_a_kernel_and_the_same_selection(monkeypatch):
    """H100 SXM has 10 compute ceilings (> MAX_CEILINGS 5), so the kernels' own are
    drawn: the gemms (no unit, a matrix kind) fp16 tensor 989.5 TFLOP/s, the softmaxes
    (no matrix op) fp16 vector 134, the stencil fp64 vector 34, fp32 vector 67 beside it
    (STEP_DRAWN) and the top float ceiling fp8 tensor 1979 (over 989.5): 5 of 10, in the
    roof's order. The op kind is read 6 times for the 6 kernels (it was 18: 3 each). A
    roof of 2 compute ceilings (fp64 and fp32 vector, as a CPU profile's), not over
    MAX_CEILINGS, is drawn whole, nothing hidden, no kernel's op kind read."""
    import rooflab.model.held_unit as hu
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.report.chart_ceilings import select_ceilings

    calls = []
    kind = hu.kernel_kind

    def counted(k):
        calls.append(k.name)
        return kind(k)

    monkeypatch.setattr(hu, "kernel_kind", counted)
    kept, hidden, notes = select_ceilings([lookup_roof("H100")], _kernels())
    assert len(calls) == 6
    assert [c.label for c in kept[0]] == ["fp64 vector", "fp32 vector", "fp16 vector",
                                          "fp16 tensor", "fp8 tensor"]
    assert [h.split(": ", 1)[1] for h in hidden] == [
        "fp64 tensor 67 TFLOP/s", "bf16 vector 134 TFLOP/s", "tf32 tensor 494 TFLOP/s",
        "bf16 tensor 990 TFLOP/s", "int8 tensor 1.98 POP/s"]
    assert notes == ["NVIDIA H100 SXM (nominal): drawn 5 of 10 compute ceilings (kernels' "
                     "precisions and fp32 beside fp64 and the top float ceiling); left out "
                     "fp64 tensor, bf16 vector, tf32 tensor, bf16 tensor, int8 tensor; show "
                     "every one with --precision all (in Python: precisions='all')"]

    calls.clear()
    roof = Roof(name="two", compute=(Ceiling(1e12, "fp64", "vector"),
                                     Ceiling(2e12, "fp32", "vector")),
                memory=(Ceiling(1e11, level="DRAM"),))
    kept, hidden, notes = select_ceilings([roof], _kernels())
    assert [c.label for c in kept[0]] == ["fp64 vector", "fp32 vector"]
    assert hidden == [] and notes == [] and calls == []
