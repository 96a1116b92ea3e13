"""Kernels measured in threads a collect() block (or a `bench --run` script) starts.

A new thread starts with an empty contextvars context (Python < 3.14), so kernels that
rooflab.measure produced in a threading.Thread or a ThreadPoolExecutor worker were lost.
"""

from __future__ import annotations

import json
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from rooflab.bench.user_script import run_script
from rooflab.cli.main import main
from rooflab.measuring import Measurement, collect


def given(name, seconds=2e-4):
    """One run of a `with` block, timed by a fake clock (no real timing)."""
    with Measurement(name=name, flop={"fp64": 2e6}, bytes={"DRAM": 2.4e7},
                     clock=iter([0.0, seconds]).__next__) as m:
        pass
    return m.kernel


def test_a_thread_pool_inside_the_block_is_collected():
    with collect() as found:
        with ThreadPoolExecutor(max_workers=3) as pool:
            made = list(pool.map(given, [f"k{i}" for i in range(6)]))
    assert sorted(k.name for k in found.kernels) == [f"k{i}" for i in range(6)]
    assert {id(k) for k in found.kernels} == {id(k) for k in made}


def test_a_plain_thread_inside_nested_blocks_records_in_both():
    with collect() as outer:
        with collect() as inner:
            t = threading.Thread(target=given, args=("threaded",))
            t.start()
            t.join()
        given("after inner")
    assert [k.name for k in inner.kernels] == ["threaded"]
    assert [k.name for k in outer.kernels] == ["threaded", "after inner"]


def test_a_decorated_function_called_from_workers_is_one_kernel():
    step = Measurement(name="step", flop=1.0, bytes=1.0,
                       clock=iter([0.0, 1e-3] * 8).__next__)(lambda: None)
    lock = threading.Lock()

    def call():
        with lock:    # the fake clock is one iterator: its ticks must pair up per call
            step()

    with collect() as found:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for f in [pool.submit(call) for _ in range(8)]:
                f.result()
    (k,) = found.kernels
    assert k.name == "step" and k.calls == 8


def test_threads_that_were_running_before_the_block_do_not_record_into_it():
    go, done = threading.Event(), threading.Event()

    def early():
        go.wait(5)
        given("from an older thread")
        done.set()

    t = threading.Thread(target=early)
    t.start()
    with collect() as found:
        go.set()
        assert done.wait(5)
    t.join()
    assert found.kernels == ()


def test_nothing_is_recorded_after_the_block_from_any_thread():
    with collect() as found:
        pass
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(given, "late").result()
    given("late, here")
    assert found.kernels == ()


def test_a_block_of_a_thread_s_own_keeps_its_kernels_to_itself():
    results = {}

    def worker():
        with collect() as mine:
            given("worker's")
        results["mine"] = mine.kernels

    with collect() as outer:
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        given("main's")
    assert [k.name for k in results["mine"]] == ["worker's"]
    # the worker's context held its own block: it did not record into the main thread's
    assert [k.name for k in outer.kernels] == ["main's"]


SCRIPT = """
from concurrent.futures import ThreadPoolExecutor
from rooflab.measuring import Measurement

def triad(i):
    # flop 2e6, bytes 2.4e7 (a triad of 1e6 fp64 elements); the clock says 0.2 ms
    with Measurement(name=f"triad_{i}", flop={"fp64": 2e6}, bytes={"DRAM": 2.4e7},
                     clock=iter([0.0, 2e-4]).__next__):
        pass

with ThreadPoolExecutor(max_workers=2) as pool:
    list(pool.map(triad, range(3)))
"""


def test_bench_run_script_measuring_in_a_thread_pool(tmp_path, capsys):
    script = tmp_path / "pool.py"
    script.write_text(textwrap.dedent(SCRIPT))
    names = sorted(k.name for k in run_script(str(script)))
    assert names == ["triad_0", "triad_1", "triad_2"]
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(k["name"] for k in doc["kernels"]) == names
    # AI = 2e6 / 2.4e7 on EPYC 9654's 460.8 GB/s: 10 GFLOP/s achieved of 38.4 attainable
    assert all(p["percent_of_roof"] == pytest.approx(26.042, rel=1e-4)
               for p in doc["analysis"])
