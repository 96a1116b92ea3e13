"""Only a decorated function's first call in the process can be a warm-up (review r3 F1):
docs/python.md calls `step` 3 times, then twice inside `collect()`, and says the block
holds `('step', 2)`. The block's first call counted as a "first call", so on a loaded
machine (over 5x its one later call) it was dropped and the block printed `('step', 1)`:
a lost sample of an already-warm function. The times are a fake clock: no load matters."""

from __future__ import annotations

import pytest
from fake_clock_measure import on_fake_clock

from rooflab.measuring import collect


def _decorated(durations: list[float]):
    """A decorated function on a fake clock: call i lasts durations[i] seconds."""
    return on_fake_clock(durations, flop={"fp32": 2e6}, bytes={"DRAM": 4e6}, name="step")


def test_a_warm_functions_first_call_in_a_block_is_kept():
    # 3 calls before the block (the first a compile), then 60 ms and 10 ms inside it:
    # 60 ms > 5 x 10 ms, which left the block's first call out as a "warm-up"
    step = _decorated([1.0, 0.010, 0.010, 0.060, 0.010])
    for _ in range(3):
        step()
    with collect() as found:
        step()
        step()
    (k,) = found.kernels
    # both calls kept: 0.060 + 0.010 = 0.070 s, FLOP 2 x 2e6, bytes 2 x 4e6
    assert (k.name, k.calls) == ("step", 2)
    assert k.seconds == pytest.approx(0.070)
    assert dict(k.flop) == {"fp32": 4e6} and dict(k.bytes) == {"DRAM": 8e6}
    assert "first_calls_left_out" not in k.meta
    # still flagged as slow, and kept, as any later call that slow is
    assert k.meta["slow_runs"] == [1]
    assert "call 1 60 ms (kept)" in k.meta["slow_runs_note"]
    # the function's own kernel still leaves its real first call (the compile) out:
    # 0.010 + 0.010 + 0.060 + 0.010 = 0.090 s over 4 calls
    assert step.kernel.calls == 4 and step.kernel.seconds == pytest.approx(0.090)


def test_a_first_call_ever_inside_a_block_is_still_a_warm_up():
    step = _decorated([1.0, 0.010, 0.012])
    with collect() as found:
        for _ in range(3):
            step()
    (k,) = found.kernels
    assert k.calls == 2 and k.seconds == pytest.approx(0.022)
    assert k.meta["first_calls_left_out"] == 1


def test_one_warm_call_in_a_block_is_not_said_to_hold_a_compile():
    # a single call in the block, of a function that ran before: no "first call kept"
    # note (that note is for a first call ever, which may hold a JIT compile)
    step = _decorated([0.5, 0.010, 0.010])
    step()
    with collect() as found:
        step()
    (k,) = found.kernels
    assert k.calls == 1 and k.seconds == pytest.approx(0.010)
    assert "first_call_kept" not in k.meta
    with collect() as fresh:
        _decorated([0.5])()
    assert "first_call_kept" in fresh.kernels[0].meta
