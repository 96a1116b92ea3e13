"""s24 h1 F2/F3: the start-of-probe busy sample counted every CPU this process may use,
whatever --threads said (`--threads 1` on 8 CPUs with 7 busy was told to stop, then ran
unhindered and ended with no load note), and it slept its 0.25 s under -q, which drops
the warning. Fake /proc/stat text only: nothing is slept or measured."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import rooflab.cli.probe as verb
from rooflab.cli.common import set_quiet
from rooflab.probe.cpu import load

WINDOW = 0.25


def _stat(busy: dict[int, int], cpus: int) -> str:
    rows = [(busy.get(i, 0), 0, 0, 1000 - busy.get(i, 0), 0, 0, 0, 0, 0, 0)
            for i in range(cpus)]
    total = [sum(col) for col in zip(*rows, strict=True)]
    lines = [f"cpu  {' '.join(map(str, total))}"]
    lines += [f"cpu{i} {' '.join(map(str, r))}" for i, r in enumerate(rows)]
    return "\n".join(lines + ["intr 1 0", ""])


@pytest.fixture
def seven_of_eight_busy(monkeypatch):
    """8 CPUs (mask and pool), CPUs 0-6 kept 100 % busy by others over the sample; the
    threads each start_sample was asked for are recorded."""
    asked = []
    before = _stat({i: 100 for i in range(7)}, 8)
    after = _stat({i: 125 for i in range(7)}, 8)      # +25 ticks = 100 % of 0.25 s
    real = load.start_sample

    def fake(sources=None, threads=None, **kw):
        asked.append(threads)
        feed = [before, after]
        clock = [10.0, 10.0 + WINDOW]
        own = SimpleNamespace(user=1.0, system=0.2)
        src = load.LoadSources(read_stat=lambda: feed.pop(0), times=lambda: own,
                               loadavg=lambda: (7.0, 0.0, 0.0), clock=lambda: clock.pop(0),
                               ticks_per_s=100.0, affinity=lambda: frozenset(range(8)),
                               machine_cpus=8, platform="linux")
        return real(src, threads=threads, sleep=lambda s: None)

    monkeypatch.setattr(load, "start_sample", fake)
    monkeypatch.setattr("rooflab.probe.cpus.usable_cpus", lambda: 8)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setattr(verb, "_numba_pool", lambda: 8, raising=False)   # HEAD: none
    set_quiet(False)
    yield asked
    set_quiet(False)


def test_one_thread_is_not_warned_about_the_cpus_it_leaves_free(seven_of_eight_busy, capsys):
    verb.warn_if_busy(1)   # rooflab probe --threads 1
    assert seven_of_eight_busy == [1]
    assert capsys.readouterr().err == ""


def test_all_threads_are_warned(seven_of_eight_busy, capsys):
    verb.warn_if_busy()    # rooflab probe (and demo): 'all' = 8
    assert seven_of_eight_busy == [8]
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("warning: the machine is busy: other processes kept 7.0 of the 8 "
                          "CPUs this process may run on busy (/proc/stat over 0.25 s")


def test_the_largest_count_is_sampled(seven_of_eight_busy, capsys):
    # --threads 1,2: 2 threads leave 6 CPUs free; 7 busy is 1 CPU more, half of the 2
    # the threads use: under START_BUSY (75 %), left to the end-of-probe note
    verb.warn_if_busy((1, 2))
    assert seven_of_eight_busy == [2]
    assert capsys.readouterr().err == ""


def test_start_threads_resolves_all_as_the_probe_does(monkeypatch):
    monkeypatch.setattr("rooflab.probe.cpus.usable_cpus", lambda: 8)
    monkeypatch.setattr(verb, "_numba_pool", lambda: 3)   # NUMBA_NUM_THREADS=3
    assert verb.start_threads() == 3 and verb.start_threads("all") == 3
    assert verb.start_threads((1, "all")) == 3 and verb.start_threads(5) == 5
    monkeypatch.setattr(verb, "_numba_pool", lambda: None)   # numba not loaded, unset
    assert verb.start_threads((2, "all")) == 8


def test_numba_pool_without_importing_numba(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "numba", None)   # as if not imported yet
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert verb._numba_pool() == 1
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    assert verb._numba_pool() is None
    assert "numba" not in sys.modules


def test_quiet_samples_nothing(seven_of_eight_busy, capsys):
    set_quiet(True)        # rooflab probe -q / rooflab -q demo
    verb.warn_if_busy()
    assert seven_of_eight_busy == [] and capsys.readouterr().err == ""
