"""s26 fA items 3-5: which calls of a decorated function become runs, and how many stay.

3. A recursive decorated function summed its nested calls: an outer call of 40 ms
   holding calls of 30, 20 and 10 ms read 0.1 s (4 runs). Only the outermost call per
   thread is a run; the calls inside it are part of it.
4. A forked child's `fn.runs` showed the parent's list until its first call or `.kernel`
   read: it is empty from the fork on.
5. `.runs` kept every call (~1.5 kB each) in a long-running server: @measure(keep=N)
   keeps the last N, and the kernel's meta says so (keep_last, calls_dropped).
Times come from fake clocks (fake_clock_measure), so no load on the machine matters.
"""

from __future__ import annotations

import os
import threading
from collections import deque

import pytest
from fake_clock_measure import on_fake_clock

import rooflab
from rooflab.errors import InputError
from rooflab.measure_runs import Measurement
from rooflab.measuring import collect


def recursive(step_s: float = 0.010):
    """A decorated function on a fake clock: each level of r(n) takes step_s of its own
    and calls r(n - 1), so r(3) lasts 4 x step_s in all."""
    now = [0.0]

    @Measurement(name="r", flop=1e3, bytes=1e3, clock=lambda: now[0])
    def r(n):
        now[0] += step_s
        if n:
            r(n - 1)
        return n

    return r


def test_a_recursive_call_is_one_run_of_its_outermost_call():
    r = recursive()
    assert r(3) == 3
    # the old code: 4 runs of 10, 20, 30, 40 ms, kernel 0.1 s for a 40 ms call
    assert [round(k.seconds, 6) for k in r.runs] == [0.04]
    k = r.kernel
    assert k.calls == 1 and k.seconds == pytest.approx(0.04)
    assert k.flop == {"fp32": 1e3}   # one call's work, not four
    r(1)
    assert [round(k.seconds, 6) for k in r.runs] == [0.04, 0.02]


def test_a_nested_call_that_raised_leaves_the_next_call_timed():
    now = [0.0]

    @Measurement(name="f", flop=1.0, bytes=1.0, clock=lambda: now[0])
    def f(n, fail):
        now[0] += 0.001
        if n:
            f(n - 1, fail)
        elif fail:
            raise ValueError("bottom")

    with pytest.raises(ValueError):
        f(2, True)
    assert list(f.runs) == []   # a call that raised is no run
    f(2, False)   # timed again, as one run of 3 ms, its two nested calls inside it
    assert [round(k.seconds, 6) for k in f.runs] == [0.003]


def test_benchmarking_a_recursive_function_leaves_its_runs_alone():
    r = recursive()
    r(1)
    k = rooflab.measure(r, 2, plan="quick")   # each benchmarked call recurses twice
    assert k.flop == {"fp32": 1e3} and k.calls == 1
    assert r.bench(2, plan="quick").flop == {"fp32": 1e3}
    # the old code timed every nested call into .runs: hundreds of runs
    assert [round(k.seconds, 6) for k in r.runs] == [0.02]


def test_a_call_from_a_thread_started_inside_is_its_own_run():
    calls = []

    @Measurement(name="g", flop=1.0, bytes=1.0)
    def g(spawn):
        calls.append(threading.get_ident())
        if spawn:
            t = threading.Thread(target=g, args=(False,))
            t.start()
            t.join()

    g(True)
    # the other thread's call is not nested in this thread's: two runs, two threads
    assert len(g.runs) == 2
    assert len({k.meta["thread_ident"] for k in g.runs}) == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_sees_no_runs_before_any_call():
    @Measurement(name="one", flop=1.0, bytes=1.0)
    def one():
        return 1

    one()
    one()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report what it sees, before any call or .kernel read
        try:
            os.write(write, f"{len(one.runs)} {one._calls} {one!r}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        seen = got.read()
    os.waitpid(pid, 0)
    assert seen.startswith("0 0 <rooflab.measure'd function 'one': no calls timed yet>")
    assert len(one.runs) == 2   # the parent's, untouched


def test_keep_keeps_the_last_n_runs_and_says_so():
    # 7 calls of 1, 1, 1, 50, 1, 1, 1 ms, keep=4: the last four (50, 1, 1, 1 ms) stay
    step = on_fake_clock([0.001, 0.001, 0.001, 0.050, 0.001, 0.001, 0.001],
                         flop=2e6, bytes=4e6, name="step", keep=4)
    for _ in range(7):
        step()
    assert isinstance(step.runs, deque) and len(step.runs) == 4
    assert [round(k.seconds, 6) for k in step.runs] == [0.05, 0.001, 0.001, 0.001]
    k = step.kernel
    # the first kept call is not the function's first: no warm-up, kept (and flagged)
    assert k.calls == 4 and k.seconds == pytest.approx(0.053)
    assert k.flop == {"fp32": 8e6} and k.bytes == {"DRAM": 1.6e7}
    assert k.meta["keep_last"] == 4 and k.meta["calls_dropped"] == 3
    assert "first_calls_left_out" not in k.meta and k.meta["slow_runs"] == [1]
    assert repr(step).startswith("<rooflab.measure'd function 'step': 7 calls timed, "
                                 "the last 4 kept, 53 ms in them")


def test_keep_with_every_call_still_there_drops_none():
    step = on_fake_clock([0.002, 0.001], flop=1.0, bytes=1.0, name="s", keep=5)
    step()
    step()
    k = step.kernel
    assert k.calls == 2 and k.meta["keep_last"] == 5 and k.meta["calls_dropped"] == 0


def test_a_collect_block_keeps_the_same_last_n():
    step = on_fake_clock([0.001] * 5 + [0.002] * 3, flop=1.0, bytes=1.0, name="s", keep=3)
    step()
    with collect() as found:
        for _ in range(7):
            step()
    (k,) = found.kernels
    # the block saw 7 calls, kept the last 3 (2 ms each)
    assert k.calls == 3 and k.seconds == pytest.approx(0.006)
    assert k.meta["keep_last"] == 3 and k.meta["calls_dropped"] == 4


def test_keep_through_rooflab_measure_and_its_bad_values():
    @rooflab.measure(name="sq", flop=1.0, bytes=1.0, keep=2)
    def sq(x):
        return x * x

    for i in range(5):
        sq(i)
    assert len(sq.runs) == 2 and sq.kernel.meta["calls_dropped"] == 3
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(InputError, match="whole number of 1 or more"):
            rooflab.measure(name="x", keep=bad)
    with pytest.raises(InputError, match="drop keep="):
        rooflab.measure(sq._fn, 3, keep=2)
    with pytest.raises(InputError, match="a `with` block runs once"):
        with rooflab.measure(name="blk", flop=1.0, bytes=1.0, keep=2):
            pass


def test_measure_runs_stays_small():
    import rooflab.measure_runs as m

    with open(m.__file__, encoding="utf-8") as f:
        assert sum(1 for _ in f) <= 400
