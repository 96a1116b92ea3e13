"""A zoo run whose times are known in advance: a warm-up-free plan of 3 samples and a clock
that ticks 1 ms per reading, so every sample lasts exactly 1 ms (the floor ratios follow
from the kernels' counts alone)."""

from __future__ import annotations

from rooflab.probe.timer import TimingPlan

TINY = TimingPlan(warmup_s=0.0, sample_s=1e-4, budget_s=0.0, min_samples=3, max_samples=3)


class TickClock:
    def __init__(self, step: float = 1e-3):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now
