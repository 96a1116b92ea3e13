"""Run a kernel on a team of threads and time it: calibrate the repetition count so one
call lasts `plan.sample_s`, warm up, then keep per-sample rates (work per second).

Kernels get the repetition count as an argument (`call(reps)`) rather than being called
`reps` times from Python: an L1-resident pass takes tens of nanoseconds, far below the
cost of a Python call. The clock is injected (probe.timer.FakeClock in tests).
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import ProbeError, require
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


def calibrate_reps(call: Callable[[int], object], plan: TimingPlan, clock: Clock) -> int:
    """calibrate()'s repetition count alone. (Used by tests as an oracle.)"""
    return calibrate(call, plan, clock)[0]


# The most repetitions calibrate grows to: a plain cap (no caller asked for another; the
# parameter that took one was never passed, review s28 R1 #17). A real clock ends the
# loop long before it (2^40 repetitions are hours of work); a clock that does not move
# (a call timed at zero) ends there, after 14 rounds of x8.
MAX_REPS = 1 << 40


def calibrate(call: Callable[[int], object], plan: TimingPlan, clock: Clock
              ) -> tuple[int, bool]:
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
    while reps < MAX_REPS and clock() - start < limit:
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
        return max(1, min(MAX_REPS, round(want))), True
    return min(reps, MAX_REPS), reps >= MAX_REPS or not waiting


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


NUMBA_VAR = "NUMBA_NUM_THREADS"


def numba_pool() -> int:
    """The threads numba's pool has: NUMBA_NUM_THREADS where set, else the CPUs of this
    process's affinity mask when numba was first imported (numba.config)."""
    return int(require("numba", "cpu", "the CPU probe").config.NUMBA_NUM_THREADS)


def pool_variable(pool: int) -> str | None:
    """NUMBA_NUM_THREADS's text where it sized the pool, else None (unset, or a value numba
    ignored, such as 'abc')."""
    text = os.environ.get(NUMBA_VAR)
    try:
        return text.strip() if text is not None and int(text) == pool else None
    except ValueError:
        return None


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def pool_limit(pool: int) -> str:
    """What holds numba's pool at `pool` threads, in words: the variable where the user set
    it; else the CPU mask numba sized it by (taskset, a cpuset, a batch scheduler), which
    is not the variable (review s24 r2 F9: a taskset user was told NUMBA_NUM_THREADS)."""
    from .affinity import allowed_cpus, format_cpu_list

    var = pool_variable(pool)
    if var is not None:
        return f"the {_n(pool, 'thread')} numba may run here ({NUMBA_VAR}={var})"
    allowed, machine = allowed_cpus(), os.cpu_count()
    if allowed is not None and len(allowed) == pool:
        cpus = f"{'CPU' if pool == 1 else 'CPUs'} {format_cpu_list(allowed)}"
        if machine and pool < machine:
            return (f"the {_n(pool, 'CPU')} this process may run on ({cpus} of {machine}: "
                    f"its affinity mask, set by taskset, a cpuset or the batch scheduler)")
        return f"the {_n(pool, 'CPU')} of this machine ({cpus})"
    return (f"the {_n(pool, 'thread')} of numba's pool (sized by the CPUs this process "
            f"could use when numba was first imported)")


def check_threads(threads: int, limit: int | None = None) -> None:
    """More threads than numba's pool (`limit`, default numba_pool()) is refused, naming
    what sized the pool."""
    from .affinity import allowed_cpus

    limit = numba_pool() if limit is None else limit
    if threads > limit:
        cpus = allowed_cpus()
        # unsetting the variable helps only where it holds the pool under the CPUs
        more = pool_variable(limit) and cpus is not None and len(cpus) > limit
        raise ProbeError(f"--threads {threads} is more than {pool_limit(limit)}; use at "
                         f"most {limit}{f', or unset {NUMBA_VAR}' if more else ''}")


def all_threads(available: int) -> tuple[int, str | None]:
    """'all' threads: `available` (the CPUs the mask and a CPU quota leave) within numba's
    pool, and where the pool is the smaller, the note saying why the probe ran fewer
    (review s24 r2 F3: NUMBA_NUM_THREADS=1, set by many images and HPC modules, made a
    plain `rooflab probe` fail on a --threads never given)."""
    pool = numba_pool()
    if pool >= available:
        return available, None
    roofs = (f"the measured and nominal roofs are for {_n(pool, 'thread')}, not "
             f"{available}")
    var = pool_variable(pool)
    if var is not None:
        return pool, (f"{NUMBA_VAR}={var} limits numba, and so this probe, to "
                      f"{_n(pool, 'thread')} of the {available} CPUs this process may use: "
                      f"{roofs}; unset {NUMBA_VAR} to measure all {available}")
    return pool, (f"numba's pool has {_n(pool, 'thread')} (sized by the CPUs this process "
                  f"could use when numba was first imported) of the {available} it may use "
                  f"now: {roofs}; run in a new process to measure all {available}")


def release_frames(exc: BaseException) -> None:
    """Let go of what the frames an exception passed through hold (and the exceptions it
    chains): a traceback kept for a debugger (IPython's sys.last_traceback after Ctrl-C)
    held the probe's ~1 GB of arrays alive (review s24 r3 F2). Clearing a frame's locals
    is not enough: each frame also holds its function, and a closure's cells (a kernel's
    `call`, a list comprehension over the pool in 3.11) keep the arrays. So a Ctrl-C or a
    RooflabError, whose message is all a user needs, loses the frames below the caller;
    any other exception (a bug) keeps them for its report, locals cleared."""
    from ...errors import RooflabError

    drop = isinstance(exc, (KeyboardInterrupt, RooflabError))
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        if drop:
            exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


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
