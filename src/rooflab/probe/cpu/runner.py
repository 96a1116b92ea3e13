"""Run a kernel on a team of threads and time it: calibrate the repetition count so one
call lasts `plan.sample_s`, warm up, then keep per-sample rates (work per second).

Kernels get the repetition count as an argument (`call(reps)`) rather than being called
`reps` times from Python: an L1-resident pass takes tens of nanoseconds, far below the
cost of a Python call. The clock is injected (probe.timer.FakeClock in tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import ProbeError
from ..stats import NOISY_SPREAD, Stats, rates_warning, summarize
from ..timer import Clock, TimingPlan


@dataclass(frozen=True)
class Rate:
    """Per-sample rates of one measurement (work units per second, e.g. B/s or FLOP/s)."""

    samples: tuple[float, ...]
    reps: int                  # kernel repetitions per sample
    seconds: tuple[float, ...]  # wall time of each sample
    # False when calibration gave up: the call's time never followed its repetitions
    # (other load held every parallel region up), so the samples time mostly waiting.
    calibrated: bool = True

    @property
    def stats(self) -> Stats:
        return summarize(self.samples)

    @property
    def median(self) -> float:
        return self.stats.median

    @property
    def best(self) -> float:
        return self.stats.maximum

    def warning(self, label: str, limit: float = NOISY_SPREAD) -> str | None:
        """A warning when the samples disagree (issue 3: spread > 5 %): interquartile range
        above `limit` of the median, or the median more than `limit` below the best (the
        reported value). (max - min) / median, kept in the JSON as `spread`, is not used:
        among hundreds of samples on a shared machine one disturbed sample makes it large.
        A failed calibration comes first: its samples can agree and still read 100x low.
        """
        if not self.calibrated:
            return (f"{label}: calibration gave up (the kernel's time did not grow with its "
                    f"repetitions: other load held every call up), so each sample timed "
                    f"mostly waiting and the figure can read far low; rerun on a quiet "
                    f"machine")
        return rates_warning(label, self.samples, limit)


def _timed(call: Callable[[int], object], reps: int, clock: Clock) -> float:
    t0 = clock()
    call(reps)
    return clock() - t0


def _best_of(call: Callable[[int], object], reps: int, clock: Clock, n: int = 3) -> float:
    """The least of n timings: on a shared host a preempted call only ever runs longer, so
    one delayed calibration call cannot mislead the repetition count."""
    return min(_timed(call, reps, clock) for _ in range(n))


# Doubling the repetitions must about double the time once the fixed cost is taken off:
# outside these bounds one of the two timings was held up by other load (a thread of the
# parallel region waiting for its vCPU), and a slope from it is not the kernel's.
LINEAR = (1.6, 2.4)
# Calibration may take this share of the measurement's budget before it gives up growing
# (at least 20 sample lengths): under other load every call can wait ~1 ms for a vCPU,
# and 20 lengths of a 1 ms peak sample were spent before the repetitions had grown past
# the wait. A share of the budget keeps --quick quick on a loaded machine.
CALIBRATION_SHARE = 0.5


def calibrate_reps(call: Callable[[int], object], plan: TimingPlan, clock: Clock,
                   max_reps: int = 1 << 40) -> int:
    """calibrate()'s repetition count alone. (Used by tests as an oracle.)"""
    return calibrate(call, plan, clock, max_reps)[0]


def calibrate(call: Callable[[int], object], plan: TimingPlan, clock: Clock,
              max_reps: int = 1 << 40) -> tuple[int, bool]:
    """A repetition count whose call does about plan.sample_s of work (at least 1).

    The fixed cost of a call (starting a parallel region: tens of microseconds, ~1 ms when
    another process holds a vCPU) is timed with zero repetitions and subtracted, so it is
    not mistaken for work; it is timed again each round because other load comes and goes.
    Then the count grows by 8x until the work lasts an eighth of the target and doubling
    it about doubles the time (LINEAR: the call is work, not waiting), and r and 2r
    repetitions give the cost of one. Gives up growing after 20 target lengths (at least
    CALIBRATION_SHARE of the budget) of calibration (a call whose time does not follow its
    repetitions). The flag says whether the count can be trusted: False when calibration
    gave up while waiting dominated its last round (the empty call took as long as the
    work, or doubling the work did not nearly double the time); a last round that was
    merely noisy (a held-up longer call) still timed work.
    """
    start = clock()
    reps = 1
    waiting = True   # no round yet: nothing says the calls time work
    limit = max(20 * plan.sample_s, CALIBRATION_SHARE * plan.budget_s)
    while reps < max_reps and clock() - start < limit:
        fixed = _best_of(call, 0, clock)
        t1 = _best_of(call, reps, clock) - fixed
        if t1 < plan.sample_s / 8:
            waiting = fixed >= t1
            reps *= 8
            continue
        t2 = _best_of(call, 2 * reps, clock) - fixed
        if t2 < LINEAR[0] * t1:
            # Doubling the work did not nearly double the time: the call is still dominated
            # by waiting (a preempted thread holds up the parallel region), not by work.
            waiting = True
            reps *= 8
            continue
        waiting = False
        if t2 > LINEAR[1] * t1:
            reps *= 2   # the longer call was held up: a slope from it would be far too steep
            continue
        if t2 < plan.sample_s:
            # a short call is easily held up: a third point, 4r, must continue the line
            t4 = _best_of(call, 4 * reps, clock) - fixed
            if not LINEAR[0] * t2 <= t4 <= LINEAR[1] * t2:
                reps *= 2
                continue
        per_rep = (t2 - t1) / reps
        want = max(plan.sample_s - fixed, plan.sample_s / 2) / per_rep
        return max(1, min(max_reps, round(want))), True
    return min(reps, max_reps), reps >= max_reps or not waiting


def measure_rate(call: Callable[[int], object], work_per_rep: float, plan: TimingPlan, *,
                 clock: Clock = time.perf_counter, reps: int | None = None) -> Rate:
    """Warm up for plan.warmup_s, calibrate, then sample until plan.budget_s is spent."""
    start = clock()
    while True:
        _timed(call, 1, clock)
        if clock() - start >= plan.warmup_s:
            break
    calibrated = True
    if not reps:
        reps, calibrated = calibrate(call, plan, clock)
    seconds: list[float] = []
    start = clock()
    while len(seconds) < plan.max_samples and (
            len(seconds) < plan.min_samples or clock() - start < plan.budget_s):
        seconds.append(_timed(call, reps, clock))
    rates = tuple(work_per_rep * reps / s for s in seconds if s > 0)
    if not rates:
        raise ValueError("the clock did not advance while timing; cannot compute a rate")
    return Rate(samples=rates, reps=reps, seconds=tuple(seconds), calibrated=calibrated)


def check_threads(threads: int, limit: int) -> None:
    """numba's pool has NUMBA_NUM_THREADS threads (all CPUs unless the variable is set)."""
    if threads > limit:
        raise ProbeError(f"--threads {threads} is more than the {limit} threads numba can "
                         f"run here (NUMBA_NUM_THREADS); use at most {limit}")


class Team:
    """The threads the kernels run on: numba's parallel pool limited to `threads`.

    Every kernel call is one parallel region (kernels.par_run) with one row of work per
    thread. Use as a context manager; the previous thread count is restored on exit.
    """

    def __init__(self, threads: int):
        self.threads = max(1, int(threads))
        self._old: int | None = None

    def __enter__(self) -> Team:
        import numba

        check_threads(self.threads, numba.config.NUMBA_NUM_THREADS)
        self._old = numba.get_num_threads()
        numba.set_num_threads(self.threads)
        return self

    def __exit__(self, *exc) -> None:
        import numba

        if self._old is not None:
            numba.set_num_threads(self._old)
