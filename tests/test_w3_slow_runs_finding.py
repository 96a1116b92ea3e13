"""A first call left out as a warm-up (or a later call kept though far slower) is said in
the report, not only in meta (rooflab.measure's decorator, measure_runs._left_out_meta):
an info-level `slow_runs` finding with the note's times."""

from __future__ import annotations

from fake_clock_measure import on_fake_clock

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.sanity_timing import check_timing
from rooflab.report.markdown import markdown_report

ROOF = Roof(name="test-cpu", compute=(Ceiling(1e11, "fp64", "vector"),),
            memory=(Ceiling(5e10, level="DRAM"),))


def _kernel(durations: list[float]):
    """A decorated function on a fake clock: call i lasts durations[i] seconds."""
    fn = on_fake_clock(durations, flop={"fp64": 2e7}, bytes={"DRAM": 1.6e8}, name="reduce")
    for _ in durations:
        fn()
    return fn.kernel


def test_the_report_says_a_left_out_warm_up():
    # review r4 F6's numbers: 1.106 s (the compile) > 5 x median(12.0, 12.3 ms)
    k = _kernel([1.106, 0.0120, 0.0123])
    md = markdown_report(analyze(ROOF, [k]))
    assert "**slow_runs** (info): 1 first call left out of the time" in md
    assert "call 1 1.11 s (the first call: a warm-up, left out)" in md


def test_a_left_out_warm_up_is_an_info_finding():
    from rooflab.model.sanity_timing import slow_runs_finding

    k = _kernel([1.106, 0.0120, 0.0123])
    f = slow_runs_finding(k)
    assert f is not None and f.check == "slow_runs" and f.severity == "info"
    assert f.message.startswith("1 first call left out of the time: ")
    assert "call 1 1.11 s (the first call: a warm-up, left out)" in f.message
    assert [x.check for x in check_timing(k)].count("slow_runs") == 1


def test_a_slow_later_call_kept_is_named():
    from rooflab.model.sanity_timing import slow_runs_finding

    # call 3: 0.2 s > 5 x 0.01 s: kept, flagged
    f = slow_runs_finding(_kernel([0.010, 0.010, 0.200, 0.010]))
    assert f is not None and f.message.startswith("call 3 kept though far slower: ")
    assert "call 3 200 ms (kept)" in f.message


def test_steady_calls_raise_nothing():
    from rooflab.model.sanity_timing import slow_runs_finding

    assert slow_runs_finding(_kernel([0.010, 0.011, 0.010])) is None
