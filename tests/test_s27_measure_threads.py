"""rooflab's own timers used from threads (session 27, gaps the s26 reviews left):
1. a TimingWarning of a decorated function run as a thread's target named threading.py;
2. the first-call warm-up rule was per function: a pool worker's cold first call was kept;
3. one shared `with` timer's `.kernel` was whichever thread finished last;
4. a counted call that handed its shape to a pool waited the whole 10 s for its own count.
Times are fake clocks where the rule is what is tested (no load matters)."""

from __future__ import annotations

import linecache
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_clock_measure import on_fake_clock

from rooflab.measure_checks import TimingWarning
from rooflab.measure_runs import COUNT_WAIT_S, Measurement


def _ticking(step: float):
    """A fake clock whose readings pair up into runs of `step` seconds (start, end)."""
    now = [0.0]
    lock = threading.Lock()

    def clock():
        with lock:
            now[0] += step
            return now[0]

    return clock


def _timing_warnings(run) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        run()
    return [w for w in got if issubclass(w.category, TimingWarning)]


# --- 1. where a thread target's warning points -------------------------------------------

@Measurement(name="tiny", flop=1.0, bytes=1.0, clock=_ticking(1e-6))   # 1 µs a run
def tiny():
    return None


DEFINED_AT = tiny.__wrapped__.__code__.co_firstlineno   # the decorator's line


def test_a_thread_targets_short_run_warning_names_the_decorated_definition():
    def in_a_thread():
        t = threading.Thread(target=tiny)
        t.start()
        t.join()

    said = _timing_warnings(in_a_thread)
    assert said, "a 1 µs single run warns"
    # was threading.py's line that calls the target
    assert {(w.filename, w.lineno) for w in said} == {(__file__, DEFINED_AT)}
    assert "@Measurement(name=\"tiny\"" in linecache.getline(__file__, DEFINED_AT)


def test_a_pool_tasks_warning_names_the_decorated_definition_too():
    def in_a_pool():
        with ThreadPoolExecutor(max_workers=2) as pool:
            for f in [pool.submit(tiny) for _ in range(3)]:
                f.result()

    said = _timing_warnings(in_a_pool)
    # was concurrent/futures/thread.py
    assert said and {(w.filename, w.lineno) for w in said} == {(__file__, DEFINED_AT)}


def test_a_call_from_the_users_own_line_still_names_that_line():
    def called_here():
        tiny(); line = _line()   # noqa: E702 - the call and its line number on one line
        called_here.line = line

    said = _timing_warnings(called_here)
    assert {(w.filename, w.lineno) for w in said} == {(__file__, called_here.line)}


def _line() -> int:
    import sys
    return sys._getframe(1).f_lineno


# --- 2. the first-call warm-up rule is per function and thread ---------------------------

def _in_turn(fn, calls_per_thread: int, threads: int) -> None:
    """Threads one after another (the fake clock's calls stay in order), each calling fn."""
    for _ in range(threads):
        t = threading.Thread(target=lambda: [fn() for _ in range(calls_per_thread)])
        t.start()
        t.join()


def test_each_threads_cold_first_call_is_left_out():
    # two workers, each: a cold first call of 500 ms (its own workspace), then 3 of 10 ms
    step = on_fake_clock([0.5, 0.01, 0.01, 0.01] * 2, flop={"fp32": 2e6},
                         bytes={"DRAM": 4e6}, name="step")
    _in_turn(step, 4, 2)
    k = step.kernel
    # was 7 calls, 0.56 s: the second worker's 500 ms first call kept (and flagged slow)
    assert k.calls == 6 and k.seconds == pytest.approx(0.06)
    assert dict(k.flop) == {"fp32": 6 * 2e6} and dict(k.bytes) == {"DRAM": 6 * 4e6}
    assert k.meta["first_calls_left_out"] == 2 and "slow_runs" not in k.meta
    note = k.meta["slow_runs_note"]
    assert "call 1 500 ms (the first call: a warm-up, left out)" in note
    assert "call 5 500 ms (the first call in its thread: a warm-up, left out)" in note
    assert "first_in_thread" not in k.meta   # a run's mark, not the kernel's
    assert [r.meta["first_in_thread"] for r in step.runs] == [True, False, False, False] * 2


def test_a_compile_in_one_thread_leaves_only_that_call_out():
    # a JIT compile (1 s) in the first thread's first call; the other threads' first calls
    # are warm (10 ms): the per-function case, as before
    step = on_fake_clock([1.0, 0.01, 0.01, 0.01, 0.01], flop=1e6, bytes=1e6, name="jit")
    _in_turn(step, 1, 5)
    k = step.kernel
    assert k.calls == 4 and k.seconds == pytest.approx(0.04)
    assert k.meta["first_calls_left_out"] == 1


def test_one_cold_call_per_thread_is_all_kept():
    # every call is a thread's first: no warm call to judge them by, so none is left out
    step = on_fake_clock([0.5, 0.5, 0.5], flop=1e6, bytes=1e6, name="cold")
    _in_turn(step, 1, 3)
    assert step.kernel.calls == 3 and "first_calls_left_out" not in step.kernel.meta


def test_a_call_that_raised_leaves_the_next_one_first_in_its_thread():
    fail = [True]

    def body():
        if fail.pop() if fail else False:
            raise ValueError("first try fails")

    step = on_fake_clock([0.5, 0.01, 0.01], body=body, flop=1e6, bytes=1e6, name="retry")
    with pytest.raises(ValueError):
        step()
    step()
    step()
    assert [r.meta["first_in_thread"] for r in step.runs] == [True, False]


# --- 3. one `with` timer shared by threads: each reads its own block ---------------------

def test_a_shared_timer_gives_each_thread_its_own_last_block():
    lengths = {"a": 0.5, "b": 0.25}
    starts: dict[str, float] = {}

    def clock():   # each thread's block lasts its own length
        name = threading.current_thread().name
        if name not in starts:
            starts[name] = 10.0
            return 10.0
        return starts.pop(name) + lengths[name]

    m = Measurement(name="shared", flop=1e9, bytes=1e8, clock=clock)
    a_done, b_done = threading.Event(), threading.Event()
    read = {}

    def a():
        with m:
            pass
        a_done.set()
        assert b_done.wait(10)
        read["a"] = m.kernel            # b finished after a: was b's 0.25 s

    def b():
        assert a_done.wait(10)
        with m:
            pass
        read["b"] = m.kernel
        b_done.set()

    threads = [threading.Thread(target=a, name="a"), threading.Thread(target=b, name="b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert read["a"].seconds == pytest.approx(0.5)
    assert read["b"].seconds == pytest.approx(0.25)
    # a thread that ran no block reads the one finished last in any thread
    assert m.kernel.seconds == pytest.approx(0.25)


def test_an_open_block_reads_none_in_its_thread_only():
    m = Measurement(name="open", flop=1.0, bytes=1.0, clock=_ticking(0.5))
    with m:
        pass
    inside, other = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with m:
            seen["worker"] = m.kernel   # its block is open: none yet
            inside.set()
            assert other.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    seen["main"] = m.kernel             # main's own block, untouched by the open one
    other.set()
    t.join()
    assert seen["worker"] is None and seen["main"].seconds == pytest.approx(0.5)


# --- 4. a counted call's wait for another thread's count --------------------------------

def test_a_counted_call_handing_its_shape_to_a_pool_returns_promptly(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.bench.torch_count import warm_up
    from rooflab.measure_threads import CountGate

    warm_up()   # torch's first-count cost (seconds), not the wait under test
    handed = []
    waits = []   # (thread, acquired, seconds in the gate, the gate's timeout)
    acquire = CountGate.acquire

    def timed_acquire(gate, timeout):
        t0 = time.perf_counter()
        got = acquire(gate, timeout)
        waits.append((threading.current_thread().name, got, time.perf_counter() - t0, timeout))
        return got

    monkeypatch.setattr(CountGate, "acquire", timed_acquire)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker") as pool:
        @Measurement(name="relu")
        def relu(x):
            if not handed:   # the first call hands the same shapes to a worker, waits
                handed.append(1)
                return pool.submit(relu, x).result() * 2.0   # an op of its own to count
            return torch.relu(x)

        x = torch.ones(64)
        here = threading.current_thread().name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            relu(x)
    # The worker's wait in the gate, not the whole call: the call also counts torch ops,
    # 0.68 s on a quiet machine, 2.6 s in a fresh-clone CI beside pytest's other worker and
    # more under heavier load (it failed so), none of it the wait under test. The gate's
    # wait was its whole timeout, COUNT_WAIT_S (10 s: the worker waited for a count that
    # waited on the worker); now it gives up once it has seen the counting thread wait on
    # it for OWNER_WAITING_S (0.05 s, looked at every 0.01 s): half the timeout tells the
    # two apart with seconds to spare for a starved thread.
    (main, worker) = waits
    assert main[:2] == (here, True)   # the handing call holds the gate, counts
    name, acquired, seconds, timeout = worker
    assert name.startswith("worker") and not acquired   # gave up: counted its own call
    assert timeout == COUNT_WAIT_S and seconds < timeout / 2, f"{seconds:.2f} s in the gate"
    assert len(relu.runs) == 2
    assert all(r.meta["timing_includes_counting"] for r in relu.runs)   # each counted
    # relu (the worker's) and mul (the handing call's) of 64 fp32: 256 B read + 256 B
    # written each, each counted in its own thread
    assert [r.bytes for r in relu.runs] == [{"DRAM": 512.0}] * 2


def test_a_call_still_waits_for_a_count_in_progress():
    torch = pytest.importorskip("torch")
    from rooflab.bench.torch_count import warm_up

    warm_up()
    started = threading.Event()

    @Measurement(name="busy")
    def busy(x):
        started.set()
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:   # computing, not waiting: its count is coming
            y = torch.relu(x)
        return y

    x = torch.ones(64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = threading.Thread(target=busy, args=(x,))
        first.start()
        assert started.wait(10)
        busy(x)                            # same shapes: waits, then reuses the count
        first.join()
    counted = [r.meta["timing_includes_counting"] for r in busy.runs]
    assert sorted(counted) == [False, True]   # counted once, as before


def test_two_counts_waiting_on_each_other_give_up_promptly():
    # thread a counts one shape and needs the other's count, which thread b holds while it
    # needs a's: one sees the other waiting on the gate it holds and counts its own; the
    # other, then waiting on a thread at the Barrier, gives up once no thread has run for
    # IDLE_S (was 10 s each)
    from rooflab.measure_threads import CountGate

    gates = {"a": CountGate(), "b": CountGate()}
    both_hold = threading.Barrier(2, timeout=10)
    waited: dict[str, tuple[bool, float]] = {}

    def holder(mine: str, other: str) -> None:
        assert gates[mine].acquire(COUNT_WAIT_S)
        both_hold.wait()
        t0 = time.perf_counter()
        got = gates[other].acquire(COUNT_WAIT_S)
        waited[mine] = (got, time.perf_counter() - t0)
        both_hold.wait()     # neither lets go before both gave up
        gates[mine].release()

    threads = [threading.Thread(target=holder, args=pair) for pair in (("a", "b"), ("b", "a"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {k: got for k, (got, _) in waited.items()} == {"a": False, "b": False}
    assert max(s for _, s in waited.values()) < COUNT_WAIT_S / 4, waited
