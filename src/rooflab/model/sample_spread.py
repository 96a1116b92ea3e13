"""The spread of timing or rate samples, as every measurement reports it. Pure."""

from __future__ import annotations

import statistics

# The timing and rate noise a measurement is flagged for, IQR / median (5 %): the probe's
# ceiling warning (probe.stats NOISY_SPREAD), `rooflab bench`'s and compare's noisy flag
# (sanity_timing NOISY_IQR), and the least gap between two sample groups that matters
# (sample_groups MIN_GAP_REL). One number: each reads "more than this is not noise".
NOISY_IQR = 0.05


def iqr_over_median(samples) -> float:
    """Interquartile range / median of samples: the spread every measurement reports (the
    full range under 4 samples, which spread_name then calls the range).

    The quartiles are statistics.quantiles' "inclusive" ones (numpy's default, the linear
    interpolation torch.utils.benchmark uses), not its default "exclusive": that puts Q3 at
    rank (n + 1) * 3/4, 4.5 of 5 samples, half-way into the largest, so one preempted call
    among 5 identical ones read as a 50 % IQR and a probe's one outlier rate as 752 %
    (review s20 r2 F1); inclusive reads both 0."""
    xs = sorted(float(v) for v in samples)
    med = statistics.median(xs)
    if len(xs) >= 4:
        q = statistics.quantiles(xs, n=4, method="inclusive")
        iqr = q[2] - q[0]
    else:
        iqr = xs[-1] - xs[0]
    return iqr / med if med else 0.0


def spread_name(n: int) -> str:
    """What iqr_over_median measured for n samples, in words: under 4 there are no
    quartiles and it is the full range (max - min)."""
    return "interquartile range" if n >= 4 else f"full range of the {n} samples"


def spread_short(n: int) -> str:
    """spread_name in a table's few letters: 'IQR', or 'range' under 4 samples; n = 0 (the
    count not recorded) reads 'IQR', the name a file's iqr_rel carries."""
    return "IQR" if n >= 4 or n == 0 else "range"
