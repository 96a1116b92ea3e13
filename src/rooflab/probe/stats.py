"""Statistics of raw samples: kept apart from the measurement loop (as pyperf does)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..model.mann_whitney import u_test
from ..model.sample_spread import NOISY_IQR, iqr_over_median
from ..model.spread_warnings import samples_vary
from ..units import fmt_fraction

# A ceiling whose samples spread more than this carries a warning (issue: 5 %); the one
# noise limit of every measurement (model.sample_spread NOISY_IQR).
NOISY_SPREAD = NOISY_IQR


@dataclass(frozen=True)
class Stats:
    """Summary of raw samples. spread = (max - min) / median; iqr_rel = IQR / median."""

    n: int
    minimum: float
    median: float
    maximum: float
    mean: float
    spread: float
    iqr_rel: float

    @property
    def noisy(self) -> bool:
        return self.spread > NOISY_SPREAD


def summarize(samples: Sequence[float]) -> Stats:
    if not samples:
        raise ValueError("no samples to summarize")
    xs = sorted(float(s) for s in samples)
    med = statistics.median(xs)
    return Stats(n=len(xs), minimum=xs[0], median=med, maximum=xs[-1],
                 mean=statistics.fmean(xs), spread=(xs[-1] - xs[0]) / med if med else 0.0,
                 iqr_rel=iqr_over_median(xs))


def rates(work: float, seconds: Sequence[float]) -> tuple[float, ...]:
    """Turn per-call times into rates (work per second), one per sample."""
    return tuple(work / s for s in seconds if s > 0)


def rates_warning(label: str, rates: Sequence[float], limit: float = NOISY_SPREAD
                  ) -> str | None:
    """A warning when rate samples (higher is better; the best one is reported) disagree:
    interquartile range above `limit` of the median, or the median more than `limit`
    below the best. (max - min) / median is not the test: among many samples on a shared
    machine one disturbed sample makes it large. The words are model.spread_warnings'
    (one text for the probe and for a stored profile's rebuilt warnings)."""
    return samples_vary(label, rates, limit=limit)


# Samples slowing during a run (seed 004: "T4 是 70 W 功耗墙的卡, 大 matmul 跑满几秒钟就会
# 降频"): the spread tests above look at the samples as a set, and a steady fall reads the
# same as random scatter there, while the best sample (the reported figure) is the burst
# before the clock came down. SLOWDOWN is the noise limit those tests use: a last third
# whose median is within 5 % of the first third's is within this probe's noise, and the
# throttling it is meant to catch is larger (seed 004 expects a T4's matmul at 70-90 % of
# its nominal 65 TFLOP/s, the clock falling under the 70 W cap among the causes).
SLOWDOWN = 0.05
# The order test: one-sided Mann-Whitney U, first third faster than the last, p <= 1 %.
# The warning names a cause, so it must be rarer than the spread warning: on independent
# Gaussian scatter (sd 2-20 % of the median, no fall) it tripped on 0-1.4 % of 1500 synthetic
# runs of 15-200 samples (5 % at p <= 0.05), and found a steady 15 % fall under 5 % scatter in
# 54 % of runs of 15 samples, 94 % of 30, all of 200. With 4 a third the least p is
# 1/C(8, 4) = 1.4 %, so at least 5 a third (1/C(10, 5) = 0.4 %): 15 samples.
SLOWDOWN_ALPHA = 0.01
MIN_SLOWDOWN_SAMPLES = 15


@dataclass(frozen=True)
class Slowdown:
    """Time-ordered rate samples whose last third ran slower than their first third."""

    first: float            # median rate of the first third of the samples
    last: float             # median rate of the last third: the sustained rate
    n: int                  # samples in each third
    p_value: float          # one-sided Mann-Whitney U: first third faster than the last

    @property
    def drop(self) -> float:
        """How much slower the last third is, as a fraction of the first (0.12 = 12 %)."""
        return 1 - self.last / self.first


def slowdown(rates: Sequence[float], limit: float = SLOWDOWN,
             alpha: float = SLOWDOWN_ALPHA) -> Slowdown | None:
    """A Slowdown when `rates` (work per second, in the order taken; higher is better) fell
    during the run, else None: at least MIN_SLOWDOWN_SAMPLES samples, the median of the last
    third more than `limit` below the median of the first third, and the first third
    faster than the last as a whole (one-sided Mann-Whitney U, p <= alpha). The order test
    is what tells a fall from other load: a disturbed sample or two at the end pull the
    last third's median down but leave most of it as fast as the start, and random
    scatter leaves the thirds interleaved. The test is model.mann_whitney's, compare's
    too: scipy's when installed, else counted there (exact up to 20 samples a third, the
    normal approximation with the tie correction beyond), so the probe needs no scipy."""
    xs = [float(r) for r in rates]
    k = len(xs) // 3
    if len(xs) < MIN_SLOWDOWN_SAMPLES:
        return None
    head, tail = xs[:k], xs[-k:]
    first, last = statistics.median(head), statistics.median(tail)
    # a NaN sample (a broken timer) orders against nothing: no verdict rather than an error
    if not first > 0 or 1 - last / first <= limit or any(v != v for v in head + tail):
        return None
    p = u_test(head, tail, alternative="greater").p_value
    if p > alpha:
        return None
    return Slowdown(first=first, last=last, n=k, p_value=p)


def slowdown_warning(label: str, rates: Sequence[float],
                     fmt: Callable[[float], str] | None = None, seen: str = "") -> str | None:
    """The warning for a ceiling whose samples slowed during the run (slowdown()), naming
    the sustained rate (the last third's median). `fmt` formats a rate (units.fmt_rate or
    si); `seen` is what else says so (a GPU's clocks read right after: "the SM clock read
    1110 of 1590 MHz"), named in the same line rather than in a second warning."""
    s = slowdown(rates)
    if s is None:
        return None
    rate = fmt(s.last) if fmt else f"{s.last:.4g}/s"
    cause = f"clock, power or thermal throttling{f' ({seen})' if seen else ''}"
    return (f"{label}: samples slowed during the run (last third {fmt_fraction(s.drop)} below the "
            f"first): {cause}, or other work that started meanwhile; the figure is the "
            f"best (burst) rate, the sustained one is {rate}")
