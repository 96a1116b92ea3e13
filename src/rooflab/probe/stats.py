"""Statistics of raw samples: kept apart from the measurement loop (as pyperf does)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..model.ceiling import iqr_over_median

# A ceiling whose samples spread more than this carries a warning (issue: 5 %).
NOISY_SPREAD = 0.05


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


def noise_warning(label: str, stats: Stats, threshold: float = NOISY_SPREAD) -> str | None:
    if stats.spread > threshold:
        return (f"{label}: samples spread {stats.spread:.0%} (> {threshold:.0%}); "
                f"other load on the machine or clock changes; rerun or use --full")
    return None


def rates_warning(label: str, rates: Sequence[float], limit: float = NOISY_SPREAD
                  ) -> str | None:
    """A warning when rate samples (higher is better; the best one is reported) disagree:
    interquartile range above `limit` of the median, or the median more than `limit`
    below the best. (max - min) / median is not the test: among many samples on a shared
    machine one disturbed sample makes it large."""
    st = summarize(rates)
    gap = 1 - st.median / st.maximum if st.maximum else 0.0
    if st.iqr_rel <= limit and gap <= limit:
        return None
    return (f"{label}: samples vary (interquartile range {st.iqr_rel:.1%} of the median, "
            f"median {gap:.1%} below the best); other load on the machine or clock "
            f"changes; rerun on a quiet machine or use --full")
