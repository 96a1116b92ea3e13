"""A budgeted timing loop with an injectable clock (after triton.testing.do_bench and
torch.utils.benchmark): warm-up, calibration so each sample lasts `sample_s`, then samples
until the time budget is spent. Raw per-call times are kept; statistics come after.

The clock is a zero-argument callable returning seconds; tests pass a fake one.
`sync` is called before reading the clock (a device synchronize on GPUs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from .stats import Stats, summarize

Clock = Callable[[], float]


@dataclass(frozen=True)
class TimingPlan:
    """How long to warm up and measure. Times in seconds."""

    warmup_s: float = 0.02
    sample_s: float = 0.02      # target length of one sample (calls x inner loop)
    budget_s: float = 0.25      # total measuring time after warm-up
    min_samples: int = 5
    max_samples: int = 200
    max_inner: int = 1 << 24

    def scaled(self, factor: float) -> TimingPlan:
        return TimingPlan(self.warmup_s * factor, self.sample_s, self.budget_s * factor,
                          self.min_samples, self.max_samples, self.max_inner)

    def with_min_samples(self, n: int | None) -> TimingPlan:
        """This plan taking at least n samples (None: unchanged). The timing loop keeps
        sampling past budget_s until min_samples are taken, so the budget stays: a kernel
        whose samples fit in it costs nothing more, a slower one takes n samples' time.
        max_samples is raised to n where it is lower."""
        if n is None or n <= self.min_samples:
            return self
        return replace(self, min_samples=n, max_samples=max(self.max_samples, n))


QUICK = TimingPlan(warmup_s=0.01, sample_s=0.01, budget_s=0.08, min_samples=5)
DEFAULT = TimingPlan()
FULL = TimingPlan(warmup_s=0.1, sample_s=0.05, budget_s=1.5, min_samples=10, max_samples=500)


@dataclass(frozen=True)
class Timing:
    """Raw per-call times of one measurement (seconds) and how they were taken."""

    samples: tuple[float, ...]
    inner: int                  # calls per sample
    stats: Stats

    @property
    def best(self) -> float:
        return self.stats.minimum

    @property
    def median(self) -> float:
        return self.stats.median


def _run(fn: Callable[[], object], inner: int, clock: Clock, sync: Callable[[], object] | None
         ) -> float:
    if sync:
        sync()
    t0 = clock()
    for _ in range(inner):
        fn()
    if sync:
        sync()
    return clock() - t0


def calibrate(fn: Callable[[], object], plan: TimingPlan, clock: Clock,
              sync: Callable[[], object] | None = None) -> int:
    """Smallest power-of-two inner count whose sample lasts at least plan.sample_s."""
    inner = 1
    while inner < plan.max_inner:
        elapsed = _run(fn, inner, clock, sync)
        if elapsed >= plan.sample_s:
            break
        # Jump straight to the estimate when the time is measurable, else double.
        if elapsed > plan.sample_s / 50:
            need = int(inner * plan.sample_s / elapsed) + 1
            inner = 1 << max(need - 1, 0).bit_length()
            break
        inner *= 2
    return min(inner, plan.max_inner)


def bench(fn: Callable[[], object], plan: TimingPlan = DEFAULT, *, clock: Clock = time.perf_counter,
          sync: Callable[[], object] | None = None, inner: int | None = None) -> Timing:
    """Time `fn` (no arguments): warm-up, calibrate, then samples within the budget."""
    start = clock()
    while clock() - start < plan.warmup_s:
        _run(fn, 1, clock, sync)
    if inner is None:
        inner = calibrate(fn, plan, clock, sync)
    samples: list[float] = []
    start = clock()
    while len(samples) < plan.max_samples and (
            len(samples) < plan.min_samples or clock() - start < plan.budget_s):
        samples.append(_run(fn, inner, clock, sync) / inner)
    return Timing(samples=tuple(samples), inner=inner, stats=summarize(samples))


class FakeClock:
    """A deterministic clock for tests: each call of the timed function advances it.

    cost(i) gives the seconds the i-th call of the timed function takes; call `tick()`
    from inside the function under test.
    """

    def __init__(self, cost: Callable[[int], float] | float):
        self.now = 0.0
        self.calls = 0
        self._cost = cost if callable(cost) else (lambda _i, c=float(cost): c)

    def __call__(self) -> float:
        return self.now

    def tick(self) -> None:
        self.now += self._cost(self.calls)
        self.calls += 1
