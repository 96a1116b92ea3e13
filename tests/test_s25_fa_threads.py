"""Review s25 r2 F1-F3: a decorated function called from several threads at once, one
measure(...) object entered twice at once, and counted first calls racing other threads.

F1: calls that overlapped a call of another thread are said (meta overlapped_calls,
calling_threads, summed_call_s, wall_span_s, a TimingWarning) and the kernel's time is the
span they were busy, not the sum (45.5 s summed for a 6.6 s run, review). F2: each entry of
one Measurement times its own block. F3: a shape is counted once whatever the threads, and
a call that ran while another thread's call was counted is left out."""

from __future__ import annotations

import threading
import time
import warnings

import pytest
from thread_runs import in_threads

from rooflab.measure_aggregate import aggregate
from rooflab.measure_checks import TimingWarning
from rooflab.measure_runs import Measurement
from rooflab.model.kernel import Kernel
from rooflab.model.provenance import GIVEN, MEASURED

PROV = {"flop": GIVEN, "bytes": GIVEN, "seconds": MEASURED}


def run(seconds, start, thread, **meta):
    return Kernel(name="add", flop={"fp64": 1e6}, bytes={"DRAM": 24e6}, seconds=seconds,
                  calls=1, provenance=PROV, samples=(seconds,),
                  meta={"seconds_stat": "single run", "device": "cpu",
                        "clock": "perf_counter", "started_s": start, "thread_ident": thread,
                        **meta})


def test_calls_that_overlapped_another_threads_give_the_busy_span_not_the_sum():
    # thread 1 runs [0, 1] and later [2, 2.5]; thread 2 runs [0.5, 1.5] and [3, 3.2]:
    # the first two overlapped, busy from 0 to 1.5, then 0.5 s and 0.2 s alone
    runs = [run(1.0, 0.0, 1), run(1.0, 0.5, 2), run(0.5, 2.0, 1), run(0.2, 3.0, 2)]
    with pytest.warns(TimingWarning, match="2 of 4 calls ran at once in 2 threads"):
        k = aggregate(runs)
    assert k.seconds == pytest.approx(1.5 + 0.5 + 0.2)
    assert k.calls == 4 and k.flop["fp64"] == 4e6
    assert k.meta["overlapped_calls"] == 2
    assert k.meta["calling_threads"] == 2
    assert k.meta["summed_call_s"] == pytest.approx(2.7)
    assert k.meta["wall_span_s"] == pytest.approx(2.2)
    said = k.meta["warning"]
    assert "(2.2 s, not the summed 2.7 s)" in said
    assert "latencies under that contention" in said and "rooflab.measure(fn" in said
    assert k.samples == (1.0, 1.0, 0.5, 0.2)   # per-call latencies kept
    assert "started_s" not in k.meta and "thread_ident" not in k.meta


def test_a_recursive_call_in_the_same_thread_is_no_overlap():
    # the outer call [0, 3] holds the inner one [1, 2]: one thread, nothing said, sum kept
    runs = [run(1.0, 1.0, 7), run(3.0, 0.0, 7)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimingWarning)
        k = aggregate(runs)
    assert k.seconds == 4.0
    assert "overlapped_calls" not in k.meta and "warning" not in k.meta
    assert k.meta["seconds_stat"] == "sum of single runs"


def test_serial_calls_keep_their_sum_and_meta():
    @Measurement(name="add", flop=1e3, bytes=1e3)
    def add(x):
        return x + 1

    for i in range(5):
        add(i)
    assert all(r.meta["thread_ident"] == threading.get_ident() for r in add.runs)
    starts = [r.meta["started_s"] for r in add.runs]
    assert starts == sorted(starts)
    k = add.kernel
    assert k.seconds == sum(r.seconds for r in add.runs)
    assert not {"overlapped_calls", "started_s", "thread_ident", "wall_span_s"} & set(k.meta)


def test_calls_from_two_threads_at_once_read_the_wall_span():
    @Measurement(name="nap", flop=1e3, bytes=1e3)
    def nap():
        time.sleep(0.2)

    gate = threading.Barrier(2)

    def go():
        gate.wait()
        nap()

    in_threads(go, 2)
    with pytest.warns(TimingWarning, match="ran at once in 2 threads"):
        k = nap.kernel
    assert k.meta["overlapped_calls"] == 2 and k.meta["calling_threads"] == 2
    # both slept 0.2 s together: summed >= 0.4 s, busy about 0.2 s (loose: a loaded box)
    assert k.meta["summed_call_s"] >= 0.4
    assert 0.2 <= k.seconds < 0.75 * k.meta["summed_call_s"]
    assert k.seconds == k.meta["wall_span_s"]


def test_one_measurement_entered_from_two_threads_times_each_block():
    now = [0.0]
    m = Measurement(name="blk", flop=1e6, bytes=1e6, clock=lambda: now[0])
    a_in, a_go, b_in, b_go = (threading.Event() for _ in range(4))
    got = {}

    def block(tag, entered, go):
        with m:
            entered.set()
            go.wait()
        got[tag] = m.kernel.seconds

    a = threading.Thread(target=block, args=("a", a_in, a_go))
    b = threading.Thread(target=block, args=("b", b_in, b_go))
    a.start()
    a_in.wait()            # a entered at 0
    now[0] = 1.0
    b.start()
    b_in.wait()            # b entered at 1
    now[0] = 3.0
    b_go.set()
    b.join()               # b left at 3: 2 s
    now[0] = 10.0
    a_go.set()
    a.join()               # a left at 10: 10 s (the old shared start read 9 s)
    assert got == {"b": 2.0, "a": 10.0}
    assert m.kernel.seconds == 10.0   # the last block to finish


def test_one_measurement_nested_in_one_thread_times_each_block():
    now = [0.0]
    m = Measurement(name="blk", flop=1e6, bytes=1e6, clock=lambda: now[0])
    with m:
        now[0] += 0.3
        with m:
            now[0] += 0.1
        inner = m.kernel.seconds
    assert inner == pytest.approx(0.1)
    assert m.kernel.seconds == pytest.approx(0.4)   # the old code read 0.1


def test_a_block_that_raised_leaves_the_next_one_its_own_start():
    now = [0.0]
    m = Measurement(name="blk", flop=1e6, bytes=1e6, clock=lambda: now[0])
    with pytest.raises(ValueError), m:
        now[0] = 1.0
        raise ValueError
    with m:
        now[0] = 3.0
    assert m.kernel.seconds == 2.0


def test_a_call_while_another_thread_counted_is_left_out():
    # thread 1's counted call: counter set-up (its gc.collect) from -0.5, timed [0, 1],
    # done at 1.1; thread 2's calls at -0.4 (in the set-up) and 0.9 held up: left out
    counted = run(1.0, 0.0, 1, timing_includes_counting=True, counting_started_s=-0.5,
                  counting_ended_s=1.1)
    runs = [counted, run(0.1, -0.4, 2), run(0.15, 0.9, 2), run(0.001, 2.0, 2),
            run(0.001, 3.0, 2), run(0.001, 3.5, 1)]
    k = aggregate(runs)
    assert k.calls == 3
    assert k.seconds == pytest.approx(0.003)
    assert k.meta["counted_runs_left_out"] == 1
    assert k.meta["beside_count_runs_left_out"] == [2, 3]
    note = k.meta["slow_runs_note"]
    assert "ran while another thread's call was counted: call 2 100 ms (left out)" in note
    assert k.meta["raw_samples"] == (1.0, 0.1, 0.15, 0.001, 0.001, 0.001)
    assert "overlapped_calls" not in k.meta   # the kept ones ran one at a time


def test_a_shape_is_counted_once_whatever_the_threads():
    torch = pytest.importorskip("torch")

    @Measurement(name="dbl")
    def dbl(x):
        time.sleep(0.2)   # the first count is stored late: the others would race past it
        return x * 2.0

    x = torch.ones(64)
    gate = threading.Barrier(4)

    def go():
        gate.wait()
        dbl(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        in_threads(go, 4)
        k = dbl.kernel
    counted = [r for r in dbl.runs if r.meta.get("timing_includes_counting")]
    assert len(dbl.runs) == 4 and len(counted) == 1   # the old code counted all 4
    assert k.flop == {"fp32": 3 * 64.0}   # one x * 2.0 of 64 floats, three reused counts
    assert k.calls == 3 and k.meta["counted_runs_left_out"] == 1
