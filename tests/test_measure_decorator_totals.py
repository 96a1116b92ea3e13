"""Second fresh-user audit of rooflab.measure(): the decorator's aggregate adds up."""

from __future__ import annotations

import pytest

import rooflab


def test_decorator_ops_breakdown_sums_over_calls():
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 64)

    @rooflab.measure(name="step")
    def step(x):
        return torch.relu(x @ x)

    for _ in range(3):
        step(a)
    k = step.kernel
    # per call: mm 2*64^3 FLOP, reads x once (one distinct tensor) and writes 64x64 fp32;
    # relu 0 FLOP, reads and writes 64x64 fp32: 16384 B each way.
    mm_flop, tile = 2 * 64**3, 4 * 64 * 64
    # the first call, timed under the counter, is left out: the two later calls with the
    # same shapes reuse its counts, timed without it
    assert k.calls == 2 and k.meta["counted_runs_left_out"] == 1
    assert k.flop == {"fp32": 2 * mm_flop}
    assert k.bytes == {"DRAM": 2 * 4 * tile}
    ops = k.meta["ops"]
    assert ops["aten.mm"] == {"calls": 2, "flop": 2 * mm_flop, "bytes": 2 * 2 * tile}
    assert ops["aten.relu"] == {"calls": 2, "flop": 0, "bytes": 2 * 2 * tile}
    # the breakdown adds up to the totals (it used to repeat the first call's numbers)
    assert sum(r["flop"] for r in ops.values()) == k.flop["fp32"]
    assert sum(r["bytes"] for r in ops.values()) == k.bytes["DRAM"]
