"""Review s27 v2 on rooflab's own timers used from threads:
F2: a counted call that waited more than 50 ms on its own helper pool was taken for a
    deadlock, so every waiting worker counted its own call (8 of 16 counted, 1 kept);
F6: in a busy pool, first calls no slower than later ones were left out as warm-ups;
F9: a function whose ops all ran in a pool was refused as "dispatched no PyTorch ops";
F10: a warning from a pool task asked the module's loader for its source at every call.
Timings here are loose bounds (a shared 2-core box); the rules use fake times."""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from rooflab.measure_aggregate import aggregate
from rooflab.measure_runs import COUNT_WAIT_S, Measurement
from rooflab.measure_threads import OWNER_WAITING_S, CountGate
from rooflab.model.kernel import Kernel


def _busy(seconds: float) -> int:
    """Computing in Python for `seconds` (a pool task whose result a count waits on)."""
    end, n = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        n += 1
    return n


def _holder(gate: CountGate, then, held: threading.Event) -> threading.Thread:
    """A thread that takes `gate` (a count in progress), runs `then`, and lets it go."""
    def run():
        assert gate.acquire(COUNT_WAIT_S)
        held.set()
        try:
            then()
        finally:
            gate.release()

    t = threading.Thread(target=run)
    t.start()
    return t


# --- F2: a count that waits on work that runs is waited for -------------------------------

def test_a_count_waiting_on_its_own_computing_pool_is_waited_for():
    gate, held = CountGate(), threading.Event()
    with ThreadPoolExecutor(max_workers=2) as pool:
        # the count's own pool computes for 0.4 s, 8x OWNER_WAITING_S, while it waits
        t = _holder(gate, lambda: [f.result() for f in
                                   [pool.submit(_busy, 0.4) for _ in range(2)]], held)
        assert held.wait(10)
        t0 = time.perf_counter()
        got = gate.acquire(COUNT_WAIT_S)
        waited = time.perf_counter() - t0
        if got:
            gate.release()
        t.join()
    # was False after about 50 ms: the waiting call counted its own, a second counted run
    assert got, f"gave up after {waited:.3f} s"
    assert waited > 4 * OWNER_WAITING_S


def test_a_counted_function_with_its_own_pool_is_counted_once():
    torch = pytest.importorskip("torch")
    from rooflab.bench.torch_count import warm_up

    warm_up()   # torch's first-count cost (seconds), not the wait under test
    inner = ThreadPoolExecutor(max_workers=2)

    @Measurement(name="par")
    def par(x):
        y = torch.relu(x)   # the count: relu of 64 fp32, 512 B
        for f in [inner.submit(_busy, 0.15) for _ in range(2)]:   # its helpers compute
            f.result()
        return y

    start = threading.Barrier(4, timeout=10)

    def call():
        start.wait()
        par(torch.ones(64))

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            threads = [threading.Thread(target=call) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            k = par.kernel
    finally:
        inner.shutdown()
    counted = [r for r in par.runs if r.meta.get("timing_includes_counting")]
    # was 4 counted (each waiting worker gave up after 50 ms) and 1 call kept
    assert len(par.runs) == 4 and len(counted) == 1
    assert k.calls == 3 and k.meta["counted_runs_left_out"] == 1
    assert "beside_count_runs_left_out" not in k.meta
    assert k.bytes == {"DRAM": 3 * 512.0}


def test_a_count_joining_the_waiting_thread_gives_up_promptly():
    gate, held = CountGate(), threading.Event()
    waited = {}

    def waiter():
        t0 = time.perf_counter()
        waited["got"] = gate.acquire(COUNT_WAIT_S)
        waited["s"] = time.perf_counter() - t0

    def count_then_join():      # the count runs the same shapes in a thread and joins it
        w = threading.Thread(target=waiter)
        w.start()
        w.join()

    _holder(gate, count_then_join, held).join()
    assert waited["got"] is False and waited["s"] < COUNT_WAIT_S / 4, waited


def test_a_count_meeting_the_waiting_thread_at_a_barrier_gives_up():
    # the Barrier names no thread: given up on once no other thread ran for IDLE_S (was
    # OWNER_WAITING_S, for any wait: F2)
    gate, held = CountGate(), threading.Event()
    meet = threading.Barrier(2, timeout=COUNT_WAIT_S * 2)
    t = _holder(gate, meet.wait, held)
    assert held.wait(10)
    t0 = time.perf_counter()
    got = gate.acquire(COUNT_WAIT_S)
    waited = time.perf_counter() - t0
    meet.wait()
    t.join()
    assert got is False and waited < COUNT_WAIT_S / 4, waited


# --- F6: a busy pool's first calls are judged by later calls ------------------------------

def _run(thread: int, start: float, seconds: float, first: bool) -> Kernel:
    return Kernel("mm", flop={"fp32": 33554432.0}, bytes={"DRAM": 786432.0},
                  seconds=seconds, calls=1, samples=(seconds,),
                  meta={"started_s": start, "thread_ident": thread, "first_in_thread": first})


def _pool(calls: dict[int, list[float]]) -> list[Kernel]:
    """Runs of threads that ran at once: each thread's calls back to back from t = 0."""
    runs = []
    for thread, times in calls.items():
        at = 0.0
        for i, s in enumerate(times):
            runs.append(_run(thread, at, s, i == 0))
            at += s
    return sorted(runs, key=lambda k: k.meta["started_s"])


def test_a_busy_pools_first_calls_as_slow_as_later_ones_are_kept():
    # 4 threads on fewer cores: each first call 15 ms (it waited for a core), a later call
    # of 16 ms in each thread the same wait; the steady calls 2 ms
    runs = _pool({t: [0.015, 0.002, 0.002, 0.016, 0.002] for t in range(4)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = aggregate(runs)
    # was 16 calls: the 4 first calls left out "(the first call in its thread: a warm-up)"
    assert k.calls == 20 and "first_calls_left_out" not in k.meta
    assert "warm-up" not in k.meta.get("slow_runs_note", "")
    # the busy span of all 20 calls: 37 ms, each thread's from 0; FLOP/s not read low
    assert k.seconds == pytest.approx(0.037)
    assert k.flop == {"fp32": 20 * 33554432.0}


def test_a_busy_pools_cold_first_calls_are_still_left_out():
    # each thread's first call 300 ms (its own workspace), slower than any later call
    runs = _pool({t: [0.3, 0.002, 0.002, 0.016, 0.002] for t in range(4)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = aggregate(runs)
    assert k.calls == 16 and k.meta["first_calls_left_out"] == 4
    assert "(the first call in its thread: a warm-up, left out)" in k.meta["slow_runs_note"]


def test_a_first_call_is_judged_by_its_own_threads_later_calls():
    # thread 0 runs 2 ms calls, thread 1 20 ms calls (a bigger share of a busy core): thread
    # 1's 30 ms first call is 1.5x its own later calls, no warm-up, though 15x the median
    runs = [_run(0, 0.0, 0.002, True), *(_run(0, 0.002 * i, 0.002, False) for i in range(1, 9)),
            _run(1, 1.0, 0.030, True), _run(1, 1.03, 0.020, False), _run(1, 1.05, 0.020, False)]
    kept = aggregate(runs)
    assert kept.calls == 12 and "first_calls_left_out" not in kept.meta
    # against its own 2 ms, thread 0's first call of 40 ms is a warm-up
    runs[0] = _run(0, -0.04, 0.040, True)
    assert aggregate(runs).meta["first_calls_left_out"] == 1


# --- F9: ops run in other threads are not counted: said so --------------------------------

def test_a_function_whose_ops_all_run_in_a_pool_is_refused_with_the_cause():
    torch = pytest.importorskip("torch")
    from rooflab.errors import InputError

    with ThreadPoolExecutor(max_workers=2) as pool:
        @Measurement(name="elsewhere")
        def elsewhere(x):
            return pool.submit(torch.relu, x).result()

        with pytest.raises(InputError) as err:
            elsewhere(torch.ones(64))
    text = str(err.value)
    # was "'elsewhere' dispatched no PyTorch ops, so nothing could be counted"
    assert "dispatched no PyTorch ops in the thread that called it" in text
    assert "threads it starts or in a pool are timed but not counted" in text
    assert "it called ThreadPoolExecutor.submit" in text
    assert "pass flop= and bytes=" in text


def _relu_here_and_in_a_thread(torch):
    @Measurement(name="half")
    def half(x):
        y = torch.relu(x)                                         # counted: 512 B
        t = threading.Thread(target=torch.relu, args=(x,))       # timed, not counted
        t.start()
        t.join()
        return y

    return half


def test_a_count_that_handed_work_to_a_thread_says_its_count_is_partial():
    torch = pytest.importorskip("torch")
    from rooflab.measure_counts import CountWarning

    half = _relu_here_and_in_a_thread(torch)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for _ in range(3):
            half(torch.ones(64)); line = _line()   # noqa: E702 - the call and its line
        k = half.kernel
    # was silent: 2 relus timed, 1 counted, so its bytes/s read half
    assert k.calls == 2 and k.bytes == {"DRAM": 2 * 512.0}
    note = k.meta["counted_in_calling_thread_only"]
    assert "'half' handed work to other threads or processes while it was counted " \
           "(threading.Thread.start)" in note
    assert "timed but not counted" in note and "pass flop= and bytes=" in note
    told = [w for w in said if issubclass(w.category, CountWarning)]
    assert len(told) == 1 and str(told[0].message) == note      # the counted call only
    assert (told[0].filename, told[0].lineno) == (__file__, line)
    # its benchmark form says so too
    with pytest.warns(CountWarning, match=r"\(threading.Thread.start\)"):
        bench = __import__("rooflab").measure(half.__wrapped__, torch.ones(64),
                                              plan="quick", name="half")
    assert "(threading.Thread.start)" in bench.meta["counted_in_calling_thread_only"]


def test_a_count_that_ran_all_in_its_thread_says_nothing_and_a_profiler_stays():
    torch = pytest.importorskip("torch")
    import sys

    @Measurement(name="here")
    def here(x):
        return torch.relu(x)

    here(torch.ones(64))
    assert "counted_in_calling_thread_only" not in here.kernel.meta

    def users_profiler(frame, event, arg):
        return None

    half = _relu_here_and_in_a_thread(torch)
    sys.setprofile(users_profiler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            half(torch.ones(64))
        assert sys.getprofile() is users_profiler   # the user's profiler left in charge
    finally:
        sys.setprofile(None)
    assert "counted_in_calling_thread_only" not in half.kernel.meta


def _line() -> int:
    import sys
    return sys._getframe(1).f_lineno


# --- F10: a pool task's warning is cheap, and works for any module --------------------------

def test_a_pool_tasks_warning_does_not_read_the_source_each_call(monkeypatch):
    import linecache

    @Measurement(name="tiny", flop=1.0, bytes=1.0)   # 1 µs calls: each one warns
    def tiny(x):
        return x

    asked = []

    class Loader:   # stands for a module loader whose get_source reads the whole file
        def get_source(self, name):
            asked.append(name)
            return None

    # the defining module's globals as warnings.warn_explicit would consult them
    fn_globals = tiny.__wrapped__.__globals__
    monkeypatch.setitem(fn_globals, "__loader__", Loader())
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("default")
        with ThreadPoolExecutor(max_workers=1) as pool:
            list(pool.map(tiny, range(50)))
    # was 50 calls of the loader's get_source, one per call (30-45 µs each on a real file)
    assert asked == []
    assert len(said) == 1 and said[0].filename == __file__
    assert linecache.getline(__file__, said[0].lineno).lstrip().startswith("@Measurement")


def test_a_pool_task_defined_in_a_module_without_source_still_runs():
    # a script read from stdin: its loader (BuiltinImporter) has no get_source and raised
    # ImportError out of the decorated call
    import importlib.machinery
    import types

    mod = types.ModuleType("from_stdin")
    mod.__loader__ = importlib.machinery.BuiltinImporter
    exec(compile("def work(x):\n    return x\n", "<stdin>", "exec"), mod.__dict__)
    tiny = Measurement(name="stdin", flop=1.0, bytes=1.0)(mod.work)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert list(pool.map(tiny, range(3))) == [0, 1, 2]
    assert said and {w.filename for w in said} == {"<stdin>"}
