"""Review s24 r3 F7: a decorated function's kernel sums FLOP, bytes, meta["ops"] and
meta["fused_bytes"] over its calls, but meta["flop_by_unit"], the shares of
meta["unit_note"], meta["flop_unit"] and the Kernel's unit were the first kept call's, so a
loop cell re-run with a new shape described only the first shape. Hand counts: 2 FLOP per
multiply-add, (m x k) @ (k x n) = 2mkn; an add, 1 FLOP per output element."""

from __future__ import annotations

import re
import warnings

import pytest

import rooflab
from rooflab.measure_aggregate import aggregate
from rooflab.measuring import collect
from rooflab.model.kernel import Kernel

torch = pytest.importorskip("torch")


def _quietly(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # single-run and counting warnings: not the point
        return fn(*args)


def test_fp32_matmuls_of_two_shapes_sum_their_flop_by_unit():
    @rooflab.measure(name="mm")
    def mm(a, b):
        return a @ b

    for n in (64, 128):   # one call each: both counted, both kept
        _quietly(mm, torch.ones(n, n), torch.ones(n, n))
    k = mm.kernel
    flop = 2 * 64**3 + 2 * 128**3            # 524 288 + 4 194 304 = 4 718 592
    nbytes = 3 * 4 * (64**2 + 128**2)        # a, b read, c written, fp32: 245 760 B
    assert k.calls == 2 and k.flop == {"fp32": flop} and k.bytes == {"DRAM": nbytes}
    # fp32 has no tensor unit: the matmul's FLOP may use any fp32 ceiling ("any")
    assert k.meta["flop_by_unit"] == {"any": 4_718_592}   # was {"any": 524288}: call 1's
    assert k.meta["ops"]["aten.mm"]["flop"] == flop
    assert k.meta["fused_bytes"] == nbytes
    assert k.unit is None and "flop_unit" not in k.meta and "unit_note" not in k.meta


def _mixed():
    """bf16 x @ w (tensor unit) + c (vector unit, broadcast to c's shape)."""
    @rooflab.measure(name="step")
    def step(x, w, c):
        return x @ w + c

    return step


def _bf16(*shape):
    return torch.ones(*shape, dtype=torch.bfloat16)


def _shares(note: str) -> dict[str, float]:
    return {u: float(v) for v, u in re.findall(r"([\d.]+) % (\w+)", note)}


def test_the_unit_and_its_shares_are_those_of_the_summed_calls():
    step = _mixed()
    # call 1: (64x1)@(1x64) = 2*64*1*64 = 8192 tensor FLOP; + c (4x64x64): 16384 vector
    _quietly(step, _bf16(64, 1), _bf16(1, 64), _bf16(4, 64, 64))
    one = step.kernel
    assert one.unit == "vector" and one.meta["flop_by_unit"] == {"tensor": 8192,
                                                                 "vector": 16384}
    # call 2: (128x128)@(128x128) = 2*128^3 = 4 194 304 tensor; + c (128x128): 16384 vector
    _quietly(step, _bf16(128, 128), _bf16(128, 128), _bf16(128, 128))
    k = step.kernel
    tensor, vector = 8192 + 4_194_304, 16384 + 16384      # 4 202 496 and 32 768
    assert k.flop == {"bf16": tensor + vector}
    assert k.meta["flop_by_unit"] == {"tensor": tensor, "vector": vector}
    assert sum(k.meta["flop_by_unit"].values()) == k.flop["bf16"]
    # 4 202 496 / 4 235 264 = 99.2 %, 32 768 / 4 235 264 = 0.774 %: the tensor unit now
    # (printed as every share is, units.fmt_share: one decimal, two figures under 1 %)
    assert k.unit == "tensor" and k.meta["flop_unit"] == "tensor"
    note = k.meta["unit_note"]
    assert _shares(note) == {"tensor": 99.2, "vector": 0.77}
    # they add up to 100 % (within the 3 digits each is printed to: 99.2 holds +-0.05)
    assert sum(_shares(note).values()) == pytest.approx(100, abs=0.06)
    assert "held to the tensor unit" in note
    # collect() aggregates a decorated function's calls the same way
    with collect() as found:
        _quietly(step, _bf16(64, 1), _bf16(1, 64), _bf16(4, 64, 64))
        _quietly(step, _bf16(128, 128), _bf16(128, 128), _bf16(128, 128))
    (c,) = found.kernels
    assert c.unit == "tensor" and c.meta["flop_by_unit"] == {"tensor": tensor,
                                                             "vector": vector}


def test_a_loop_cell_rerun_with_a_new_shape_sums_the_kept_calls():
    # the review's notebook: two calls of one shape, then two of another. Each shape's
    # counted first call is left out; the two kept calls reused those counts
    step = _mixed()
    for shape in ((64, 1, 4), (64, 1, 4), (128, 128, 1), (128, 128, 1)):
        m, kk, b = shape
        _quietly(step, _bf16(m, kk), _bf16(kk, m), _bf16(b, m, m))
    k = step.kernel
    assert k.calls == 2 and k.meta["counted_runs_left_out"] == 2
    assert k.meta["flop_by_unit"] == {"tensor": 4_202_496, "vector": 32_768}
    assert k.unit == "tensor"
    assert k.meta["counts_reused"].startswith("all 2 calls summed were timed without")


def _run(meta: dict, unit=None, flop_prov="derived") -> Kernel:
    return Kernel("k", flop={"bf16": sum(meta.get("flop_by_unit", {}).values()) or 1.0},
                  bytes={"DRAM": 100.0}, seconds=1e-3, unit=unit, samples=(1e-3,),
                  provenance={"flop": flop_prov, "bytes": "derived", "seconds": "measured"},
                  meta={"timing_includes_counting": True, **meta})


def test_no_stale_first_call_figures_when_a_later_call_lacks_them():
    # call 1 split over two units with fused bytes and a TF32 note; call 2 (another
    # shape) vector work only, no fused bytes known: no per-call figure of call 1 alone
    first = _run({"flop_by_unit": {"tensor": 300.0, "vector": 100.0}, "fused_bytes": 50.0,
                  "flop_unit": "tensor", "unit_note": "75 % tensor, 25 % vector"},
                 unit="tensor")
    second = _run({"flop_by_unit": {"vector": 600.0}, "tf32_note": "tf32"},
                  unit="vector")
    k = aggregate([first, second])
    assert k.meta["flop_by_unit"] == {"tensor": 300.0, "vector": 700.0}
    assert k.unit == "vector" and k.meta["flop_unit"] == "vector"
    assert _shares(k.meta["unit_note"]) == {"tensor": 30.0, "vector": 70.0}
    assert "fused_bytes" not in k.meta          # was call 1's 50 B: a part read as the whole
    assert k.meta["tf32_note"] == "tf32"
    # flop= given: the counted split is kept, but given FLOP carry no unit
    given = aggregate([_run({"flop_by_unit": {"tensor": 5.0}}, flop_prov="given"),
                       _run({"flop_by_unit": {"vector": 9.0}}, flop_prov="given")])
    assert given.unit is None and "flop_unit" not in given.meta
