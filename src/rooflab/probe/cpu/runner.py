"""Run a kernel on a team of threads and time it: calibrate the repetition count so one
call lasts `plan.sample_s`, warm up, then keep per-sample rates (work per second).

Kernels get the repetition count as an argument (`call(reps)`) rather than being called
`reps` times from Python: an L1-resident pass takes tens of nanoseconds, far below the
cost of a Python call. The clock is injected (probe.timer.FakeClock in tests).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..stats import Stats, noise_warning, summarize
from ..timer import Clock, TimingPlan


@dataclass(frozen=True)
class Rate:
    """Per-sample rates of one measurement (work units per second, e.g. B/s or FLOP/s)."""

    samples: tuple[float, ...]
    reps: int                  # kernel repetitions per sample
    seconds: tuple[float, ...]  # wall time of each sample

    @property
    def stats(self) -> Stats:
        return summarize(self.samples)

    @property
    def median(self) -> float:
        return self.stats.median

    @property
    def best(self) -> float:
        return self.stats.maximum

    def warning(self, label: str) -> str | None:
        return noise_warning(label, self.stats)


def _timed(call: Callable[[int], object], reps: int, clock: Clock) -> float:
    """Seconds one call takes. A call that returns a float has timed itself (inside its
    worker threads, without the hand-off; see Team.run) and that time is used."""
    t0 = clock()
    inner = call(reps)
    outer = clock() - t0
    return inner if isinstance(inner, float) and inner > 0 else outer


def calibrate_reps(call: Callable[[int], object], plan: TimingPlan, clock: Clock,
                   max_reps: int = 1 << 40) -> int:
    """A repetition count whose call lasts about plan.sample_s (at least 1).

    Grows by 8x until a call lasts an eighth of the target, then scales linearly: a fixed
    per-call cost (thread hand-off, tens of microseconds) is then at most a few percent
    of a sample instead of being extrapolated as if it were work.
    """
    reps = 1
    while reps < max_reps:
        elapsed = _timed(call, reps, clock)
        if elapsed >= plan.sample_s / 8:
            return max(1, min(max_reps, round(reps * plan.sample_s / elapsed)))
        reps *= 8
    return max_reps


def measure_rate(call: Callable[[int], object], work_per_rep: float, plan: TimingPlan, *,
                 clock: Clock = time.perf_counter, reps: int | None = None) -> Rate:
    """Warm up for plan.warmup_s, calibrate, then sample until plan.budget_s is spent."""
    start = clock()
    while True:
        _timed(call, 1, clock)
        if clock() - start >= plan.warmup_s:
            break
    reps = reps or calibrate_reps(call, plan, clock)
    seconds: list[float] = []
    start = clock()
    while len(seconds) < plan.max_samples and (
            len(seconds) < plan.min_samples or clock() - start < plan.budget_s):
        seconds.append(_timed(call, reps, clock))
    rates = tuple(work_per_rep * reps / s for s in seconds if s > 0)
    if not rates:
        raise ValueError("the clock did not advance while timing; cannot compute a rate")
    return Rate(samples=rates, reps=reps, seconds=tuple(seconds))


class Team:
    """A fixed team of worker threads; `run(fns)` runs one callable per thread and returns
    the seconds from the first thread's start to the last thread's end.

    The threads start together at a barrier and read the clock themselves, so the ~20 us
    cost of handing work to the pool is not in the time (it would be 2 % of a 1 ms
    sample). The numba kernels release the GIL (nogil=True), so the threads run in
    parallel.
    """

    def __init__(self, threads: int, clock: Clock = time.perf_counter):
        self.threads = max(1, int(threads))
        self.clock = clock
        self._pool = ThreadPoolExecutor(max_workers=self.threads) if self.threads > 1 else None

    def run(self, fns: Sequence[Callable[[], object]]) -> float:
        clock = self.clock
        if self._pool is None or len(fns) == 1:
            t0 = clock()
            for fn in fns:
                fn()
            return clock() - t0
        barrier = threading.Barrier(len(fns))

        def timed(fn: Callable[[], object]) -> tuple[float, float]:
            barrier.wait()
            t0 = clock()
            fn()
            return t0, clock()

        spans = [f.result() for f in [self._pool.submit(timed, fn) for fn in fns]]
        return max(e for _s, e in spans) - min(s for s, _e in spans)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> Team:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
