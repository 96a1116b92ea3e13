"""Guard for conftest's per-file collect-and-freeze (session 35, suite speed).

Hand figures: an explicit gc.collect() walks every tracked object not frozen. By a worker's
~2000th test the earlier files had left ~300k objects alive, and one collect took 0.2-0.8 s
there (tests/test_[a-c]*.py run in one process: 437 ms after 20 files, 844 ms after 60);
the bench zoo collects after each of its kernels, measure() before each counted call, so
test_demo's fake-probe tests took 7.3/5.5/4.4 s in the full run against 1.8/1.0/1.0 s alone.
After each file's last test conftest collects (garbage still goes) and freezes the
survivors: the same collect then walks ~1k objects, ~1 ms."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from types import SimpleNamespace

import conftest


class _Node:
    pass


def _teardown(item, nextitem) -> None:
    """Drive conftest's teardown wrapper as pluggy does: up to its yield, then on."""
    step = conftest.pytest_runtest_teardown(item, nextitem)
    next(step)
    try:
        step.send(None)
    except StopIteration:
        return
    raise AssertionError("the wrapper yields once")


def test_a_files_last_test_collects_its_garbage_then_freezes_the_survivors():
    cycle = _Node()
    cycle.me = cycle                 # garbage only the cyclic collector frees
    dead = weakref.ref(cycle)
    del cycle
    kept = _Node()
    assert dead() is not None and gc.is_tracked(kept)
    frozen = gc.get_freeze_count()
    here = SimpleNamespace(path=Path("tests/test_a.py"))
    _teardown(here, SimpleNamespace(path=Path("tests/test_b.py")))
    assert dead() is None            # collected first: garbage is not frozen
    assert gc.get_freeze_count() > frozen   # `kept` (alive) went out of the collector's walk
    # the worker's last test (no next item) ends its file too
    before_last = gc.get_freeze_count()
    also_kept = _Node()
    _teardown(here, None)
    assert gc.get_freeze_count() > before_last and also_kept


def test_a_test_with_more_of_its_file_to_come_leaves_the_collector_alone():
    cycle = _Node()
    cycle.me = cycle
    dead = weakref.ref(cycle)
    del cycle
    frozen = gc.get_freeze_count()
    gc.disable()                     # no automatic collection in between
    try:
        here = SimpleNamespace(path=Path("tests/test_a.py"))
        _teardown(here, SimpleNamespace(path=Path("tests/test_a.py")))
        assert dead() is not None and gc.get_freeze_count() == frozen
    finally:
        gc.enable()
        gc.collect()
