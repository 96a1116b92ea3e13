"""Review s25 r2 F5, F7, F8: `@rooflab.measure` on an async function timed only the
coroutine's creation (3.5 us for a 0.2 s await): refused at decoration, pointing at a
`with` block around the await. A decorated function did not pickle (Pool.map,
ProcessPoolExecutor): pickled by reference now, as functools.lru_cache's wrapper is. A
forked child's calls start a fresh run list: its .kernel is not the parent's calls too."""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import sys
import time

import pytest

import rooflab
from rooflab.errors import InputError
from rooflab.measure_runs import Measurement


@Measurement(name="sq", flop=1.0, bytes=8.0)
def square(i):
    return i * i


def child_calls(i):
    """In a worker: one call, then how many runs this process's `square` holds."""
    square(i)
    return len(square.runs), square.kernel.calls


def test_an_async_function_is_refused_with_the_with_block_to_use():
    async def fetch():
        await asyncio.sleep(0.01)

    with pytest.raises(InputError) as got:
        rooflab.measure(name="fetch", flop=1.0, bytes=1.0)(fetch)
    said = str(got.value)
    assert "cannot time an async function ('fetch')" in said
    assert "only creates the coroutine" in said
    assert "`with rooflab.measure(name=..., flop=..., bytes=...): await ...`" in said


def test_an_async_generator_function_is_refused_too():
    async def stream():
        yield 1

    with pytest.raises(InputError, match="cannot time an async generator function"):
        Measurement(flop=1.0, bytes=1.0)(stream)


def test_the_with_block_it_points_at_times_the_await():
    async def main():
        with rooflab.measure(name="nap", flop=1.0, bytes=1.0) as m:
            await asyncio.sleep(0.05)
        return m.kernel.seconds

    assert asyncio.run(main()) >= 0.05


def test_a_decorated_function_pickles_by_reference():
    assert pickle.loads(pickle.dumps(square)) is square
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(square, protocol)) is square


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_a_fork_pool_maps_a_decorated_function_and_children_keep_their_own_runs():
    for i in range(3):
        square(i)
    before = len(square.runs)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(square, range(6)) == [0, 1, 4, 9, 16, 25]
    # one task per child: its run list holds its own call, not the parent's pre-fork ones
    with ctx.Pool(2, maxtasksperchild=1) as pool:
        assert pool.map(child_calls, range(4)) == [(1, 1)] * 4
    assert len(square.runs) == before   # the parent's list, untouched by the children


def test_a_forked_child_starts_a_fresh_run_list(monkeypatch):
    @Measurement(name="one", flop=1.0, bytes=1.0)
    def one():
        return time.perf_counter()

    one()
    one()
    parent_runs = one.runs
    import os

    monkeypatch.setattr(os, "getpid", lambda: -12345)   # as a forked child sees itself
    one()
    assert len(one.runs) == 1 and one.kernel.calls == 1
    assert len(parent_runs) == 2
