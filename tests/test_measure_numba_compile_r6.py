"""A decorated call during which numba compiled is a warm-up whatever its ratio to the
other calls (review r6 F1: a 222 ms compile call against ~50 ms later ones, 4.4x, stayed
under the 5x rule, was kept as a sample, inflated the time 1.87x and was read as "other
load on the machine"). numba announces each compile ("numba:compile" events); the
decorator listens while it times. Real numba functions, a fake clock for the times."""

from __future__ import annotations

import sys
import warnings

import pytest

numba = pytest.importorskip("numba")

from fake_clock_measure import on_fake_clock  # noqa: E402

from rooflab.measure_checks import TimingWarning  # noqa: E402
from rooflab.measure_runs import Measurement  # noqa: E402
from rooflab.model.sanity_timing import check_noisy, slow_runs_finding  # noqa: E402


def _fresh_jit():
    """A numba function no call has compiled yet (a new dispatcher per test)."""
    @numba.njit
    def twice(x):
        return x * 2
    return twice


def _decorated(durations, body):
    """`body` decorated on a fake clock: call i lasts durations[i] seconds."""
    return on_fake_clock(durations, body, flop={"fp64": 2e7}, bytes={"DRAM": 1.6e8}, name="nb")


def test_a_call_that_compiled_is_left_out_whatever_its_ratio():
    jit = _fresh_jit()
    # call 1 compiles for float, call 3 for int (a new signature): both left out though
    # 30 ms and 25 ms are far under 5 x the 20 ms median (the old rule kept all four)
    fn = _decorated([0.030, 0.020, 0.025, 0.020], jit)
    for x in (1.0, 2.0, 3, 4.0):
        fn(x)
    k = fn.kernel
    # kept: calls 2 and 4, 0.020 + 0.020 = 0.040 s; FLOP 2 x 2e7
    assert k.calls == 2 and k.seconds == pytest.approx(0.040)
    assert dict(k.flop) == {"fp64": 4e7}
    assert k.meta["compile_runs_left_out"] == [1, 3]
    assert k.meta["first_calls_left_out"] == 1
    assert k.meta["raw_samples"] == pytest.approx((0.030, 0.020, 0.025, 0.020))
    note = k.meta["slow_runs_note"]
    assert "call 1 30 ms (held a numba compile of" in note
    assert "call 3 25 ms (held a numba compile of" in note
    assert "numba_compile_s" not in k.meta   # no compile left in the time
    f = slow_runs_finding(k)
    assert f is not None and "calls 3" not in f.message
    assert "1 first call left out" in f.message and "call 3 left out" in f.message


def test_a_warm_numba_function_keeps_the_ratio_rule():
    jit = _fresh_jit()
    jit(0.5)   # compiled before timing: no call compiles
    fn = _decorated([0.030, 0.020, 0.020], jit)
    for x in (1.0, 2.0, 3.0):
        fn(x)
    # 30 ms < 5 x 20 ms: a warm first call, kept: 0.030 + 0.020 + 0.020 = 0.070 s
    assert fn.kernel.calls == 3 and fn.kernel.seconds == pytest.approx(0.070)
    assert "slow_runs_note" not in fn.kernel.meta
    assert all("numba_compiles" not in r.meta for r in fn.runs)


def test_compiles_kept_when_every_call_compiled_are_named_as_the_cause():
    jit = _fresh_jit()
    # each call a new signature: every call compiled, none is clean: all kept (60 ms is
    # 3x 20 ms, under the ratio rule too)
    fn = _decorated([0.060, 0.020], jit)
    fn(1.0)
    fn(2)
    k = fn.kernel
    assert k.calls == 2 and k.seconds == pytest.approx(0.080)
    assert k.meta["compile_runs_kept"] == [1, 2]
    assert k.meta["numba_compile_s"] > 0
    assert "(kept; it held a numba compile of" in k.meta["slow_runs_note"]
    noisy = check_noisy(k)
    # samples 0.06 and 0.02: spread (0.06 - 0.02) / 0.04 = 100 %; the compile is named
    # first, not "other load on the machine"
    assert noisy is not None and noisy.causes[0].startswith("a numba JIT compile of")
    assert "kept though numba compiled" in slow_runs_finding(k).message


def test_a_with_block_that_compiled_warns():
    jit = _fresh_jit()
    now = [0.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Measurement(flop={"fp64": 2.0}, bytes={"DRAM": 16.0}, name="blk",
                         clock=lambda: now[0]) as m:
            jit(1.0)
            now[0] += 0.3
    said = [str(w.message) for w in caught if issubclass(w.category, TimingWarning)]
    assert any("held a numba JIT compile of" in s for s in said)
    assert m.kernel.meta["numba_compiles"] == 1 and m.kernel.seconds == pytest.approx(0.3)
    assert "numba JIT compile" in m.kernel.meta["warning"]


def test_without_numba_imported_nothing_listens(monkeypatch):
    jit = _fresh_jit()
    monkeypatch.delitem(sys.modules, "numba")
    fn = _decorated([0.030, 0.020, 0.020], jit)
    for x in (1.0, 2.0, 3.0):
        fn(x)
    # the compile in call 1 is unseen: the ratio rule alone, 30 ms < 100 ms, kept
    assert fn.kernel.calls == 3 and fn.kernel.seconds == pytest.approx(0.070)
