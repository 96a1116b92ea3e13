"""Every verb holds a kernel of several precisions to the same time-weighted peak as
`rooflab report` (ceiling.kernel_ceiling): choose's ranking, whatif --hardware and
whatif --precision.

A100 hand numbers (SI, catalog): fp16 tensor 312 TFLOP/s, fp32 vector 19.5 TFLOP/s, int8
tensor 624 TFLOP/s, DRAM 2039 GB/s, launch floor 5 µs.
9e9 fp16 tensor + 1e9 fp32: 9e9 / 312e12 = 28.846 µs + 1e9 / 19.5e12 = 51.282 µs
= 80.128 µs (10e9 / 80.128 µs = 124.8 TFLOP/s); the dominant precision's ceiling alone
would say 10e9 / 312e12 = 32.05 µs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel, analyze
from rooflab.model.choose import kernel_time, rank
from rooflab.model.kernel import converted_flop
from rooflab.model.whatif import change_precision, move_hardware

MIXED_S = 9e9 / 312e12 + 1e9 / 19.5e12          # 80.128 µs
OLD_RULE_S = 10e9 / 312e12                       # 32.05 µs


def _mixed(seconds=None):
    # tiny bytes: 1e4 B / 2039e9 B/s = 4.9 ns, so the compute side binds
    return Kernel("mixed", {"fp16": 9e9, "fp32": 1e9}, {"DRAM": 1e4}, seconds=seconds,
                  unit="tensor")


def _no_launch(roof):
    return replace(roof, overhead_s=None)


def test_choose_predicts_the_weighted_time():
    kt, note = kernel_time(lookup_roof("A100"), _mixed())
    assert MIXED_S == pytest.approx(80.128e-6, rel=1e-4)
    assert kt.seconds == pytest.approx(MIXED_S, rel=1e-12)
    assert kt.seconds != pytest.approx(OLD_RULE_S, rel=1e-3)
    assert kt.binding == "weighted fp16 tensor + fp32 vector"
    assert kt.missing is None and note == ""
    (c,) = rank([_mixed()], [("A100", lookup_roof("A100"), None)])
    assert c.seconds == pytest.approx(MIXED_S, rel=1e-12)


def test_choose_agrees_with_report():
    # the same kernel's work floor in `rooflab report` (analyze) and in choose
    roof = _no_launch(lookup_roof("A100"))
    (p,) = analyze(roof, [_mixed()], levels=("DRAM",)).points
    kt, _ = kernel_time(roof, _mixed())
    assert kt.seconds == pytest.approx(p.floor_s, rel=1e-12)


def test_choose_single_precision_unchanged():
    k = Kernel("gemm", {"fp16": 10e9}, {"DRAM": 1e4}, unit="tensor")
    kt, _ = kernel_time(lookup_roof("A100"), k)
    assert kt.seconds == pytest.approx(OLD_RULE_S, rel=1e-12)
    assert kt.binding == "fp16 tensor"


def test_whatif_hardware_from_a_twice_faster_roof_halves_the_mixed_kernel():
    a100 = _no_launch(lookup_roof("A100"))
    fast = replace(a100, name="A100x2",
                   compute=tuple(replace(c, value=2 * c.value) for c in a100.compute),
                   memory=tuple(replace(m, value=2 * m.value) for m in a100.memory))
    # measured at half its roof: 2 x 80.128 = 160.26 µs
    w = move_hardware(a100, [_mixed(seconds=2 * MIXED_S)], fast)
    ((old, new),) = w.moves
    assert new.seconds == pytest.approx(MIXED_S, rel=1e-9)            # 160.26 -> 80.13 µs
    ((fb, fa),) = w.floors
    assert fb == pytest.approx(MIXED_S, rel=1e-9)                     # 80.13 µs
    assert fa == pytest.approx(MIXED_S / 2, rel=1e-9)                 # 40.06 µs


def test_whatif_precision_moves_only_the_converted_part():
    # fp16 -> int8: the fp16 tensor part moves to int8 tensor (624 TFLOP/s), the fp32
    # epilogue stays: 9e9 / 624e12 = 14.423 µs + 51.282 µs = 65.705 µs (moving all of it
    # would say 10e9 / 624e12 = 16.03 µs)
    k = _mixed()
    assert converted_flop(k, "int8") == {"fp32": 1e9, "int8": 9e9}
    assert converted_flop(k, "fp32") == {"fp32": 1e10}          # one precision again
    assert converted_flop(Kernel("g", {"fp16": 4e9}, {"DRAM": 1.0}), "int8") == {"int8": 4e9}
    w = change_precision(_no_launch(lookup_roof("A100")), [k], "int8")
    ((fb, fa),) = w.floors
    assert fb == pytest.approx(MIXED_S, rel=1e-9)
    assert fa == pytest.approx(9e9 / 624e12 + 1e9 / 19.5e12, rel=1e-9)
    assert fa == pytest.approx(65.705e-6, rel=1e-4)
