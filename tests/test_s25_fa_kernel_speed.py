"""Review s25 r2 F9: a decorated function's `.kernel` re-sorted the other calls' times for
each call (O(n^2 log n): 3.9 s at 4000 calls, 122 s at 20000) and was recomputed at every
read. One sort now, the same numbers (checked against the old code, copied below), and the
aggregate kept until a call adds a run."""

from __future__ import annotations

import random
import time

import pytest

from rooflab.measure_checks import SINGLE_RUN_MIN_S
from rooflab.measure_runs import Measurement
from rooflab.measure_warmup import SLOW_RUN_RATIO, _work, compiled_in, left_out
from rooflab.model.kernel import Kernel
from rooflab.model.provenance import GIVEN, MEASURED


def _old_too_slow(runs, i, others):
    if not others:
        return False
    xs = sorted(runs[j].seconds or 0.0 for j in others)
    n = len(xs)
    median = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    t = runs[i].seconds or 0.0
    return t > SLOW_RUN_RATIO * median and t - median >= SINGLE_RUN_MIN_S


def old_left_out(runs, first_call=True):
    """measure_warmup.left_out before review s25 r2 (HEAD 0480c59), word for word."""
    groups = {}
    for i, k in enumerate(runs):
        groups.setdefault(_work(k), []).append(i)
    out = {}
    slow = []
    for idx in groups.values():
        if any(not runs[i].meta.get("timing_includes_counting") for i in idx):
            out.update({i: "counted" for i in idx
                        if runs[i].meta.get("timing_includes_counting")})
        kept = [i for i in idx if i not in out]
        if any(not compiled_in(runs[i]) for i in kept):
            out.update({i: "compile" for i in kept if compiled_in(runs[i])})
            kept = [i for i in kept if i not in out]
        if first_call and kept and kept[0] == 0 and _old_too_slow(runs, 0, kept[1:]):
            out[0] = "first"
            kept = kept[1:]
        slow += [i for i in kept if _old_too_slow(runs, i, [j for j in kept if j != i])]
    return out, sorted(slow)


def kernel(seconds, flop=1.0, **meta):
    return Kernel(name="k", flop={"fp64": flop}, bytes={"DRAM": 8.0}, seconds=seconds,
                  calls=1, provenance={"flop": GIVEN, "bytes": GIVEN, "seconds": MEASURED},
                  samples=(seconds,), meta=meta)


def random_runs(rng):
    n = rng.randint(0, 25)
    # few distinct values: ties; spikes over the ratio; two works; counted and compiled
    pool = [rng.choice([1e-4, 2e-4, 5e-4, 1e-3, 5e-3, 0.02, 0.3]) for _ in range(4)]
    runs = []
    for _ in range(n):
        meta = {}
        if rng.random() < 0.1:
            meta["timing_includes_counting"] = True
        if rng.random() < 0.1:
            meta.update(numba_compiles=1, numba_compile_s=0.01)
        t = rng.choice(pool) if rng.random() < 0.7 else rng.uniform(0, 0.05)
        runs.append(kernel(t, flop=rng.choice([1.0, 1.0, 2.0]), **meta))
    return runs


def test_left_out_is_the_old_rule_exactly_on_random_runs():
    rng = random.Random(25)
    for _ in range(3000):
        runs = random_runs(rng)
        first = rng.random() < 0.8
        assert left_out(runs, first) == old_left_out(runs, first)


def test_the_leave_one_out_median_with_even_and_odd_counts():
    # others of the 9 ms call: [1, 1, 1, 2] ms, median 1 ms: 9x, 8 ms over: slow
    runs = [kernel(s) for s in (1e-3, 9e-3, 1e-3, 2e-3, 1e-3)]
    assert left_out(runs, False) == ({}, [1])
    # one 9 ms call among [1, 2] ms others: median 1.5 ms, 6x: slow; with 3 ms: 2 ms, 4.5x
    assert left_out([kernel(s) for s in (1e-3, 2e-3, 9e-3)], False) == ({}, [2])
    assert left_out([kernel(s) for s in (1e-3, 3e-3, 9e-3)], False) == ({}, [])


def test_kernel_of_8000_calls_is_quick_and_kept_until_the_next_call():
    @Measurement(name="handle", flop=1e3, bytes=1e3)
    def handle(i):
        return i + 1

    for i in range(8000):
        handle(i)
    t0 = time.perf_counter()
    first = left_out(handle.runs)
    took = time.perf_counter() - t0
    assert took < 3.0   # the old rule: ~17 s here (4.4 s at 4000 calls, quadratic)
    k = handle.kernel
    assert handle.kernel is k   # kept: no recomputation
    assert k.calls == 8000 - len(first[0])
    handle(1)
    k2 = handle.kernel
    assert k2 is not k and sum(k2.flop.values()) == pytest.approx(sum(k.flop.values()) + 1e3)
