"""The Mann-Whitney U test on two sets of timing samples: is a change outside the noise?

rooflab's one U test, for both of its users: `compare`'s noise gate (two-sided, as Google
benchmark's tools/compare.py (report.py calc_utest) runs it on the repetitions of two runs,
significant at p < 0.05; it needs at least 2 repetitions and warns below 9) and the probe's
slowdown warning (probe/stats.py: one-sided, first third of the samples faster than the
last). The probe must run without scipy, so the test has two engines giving the same p:

- scipy's `scipy.stats.mannwhitneyu` (the `stats` extra) when it is installed;
- otherwise a counted one here (the standard library only).

Both are told the same method, chosen by one rule (`_method`): exact (the U distribution
counted) when no sample value occurs twice and the sets are small, else the normal
approximation with the tie correction (the variance less sum(t^3 - t) / (N (N - 1)) over
the groups of t equal values) and the continuity correction, as scipy's method
"asymptotic" computes it. The exact counts here are whole numbers (the coefficients of the
Gaussian binomial), so the two engines agree to rounding (tests/test_mann_whitney_engines.py
holds them to 1e-6 exact and 1e-3 approximate; they agree far closer).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

# Google benchmark compare.py's default significance level ("--alpha", 0.05).
ALPHA = 0.05
# The exact distribution is used while the smaller set has at most _EXACT_MAX samples
# and the product of the sizes is at most _EXACT_CELLS; beyond, the normal approximation is
# within a few thousandths of it. (Counting costs about min(m, n) x m x n additions.)
_EXACT_MAX = 20
_EXACT_CELLS = 2000
# scipy's names for the alternatives: "greater" is x stochastically greater than y (U1,
# the count of pairs with x > y, large), "less" the opposite.
ALTERNATIVES = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class UTest:
    """One Mann-Whitney U test of x (`n_before` samples) against y (`n_after`). `u` is the
    smaller of U1 and U2; `u1` counts the pairs with x > y (a tie counts 1/2)."""

    u: float
    p_value: float
    n_before: int
    n_after: int
    method: str             # "exact" or "normal"
    u1: float = math.nan
    alternative: str = "two-sided"

    @property
    def resolvable(self) -> bool:
        """Whether any outcome of these sample counts could reach ALPHA: with 3 samples a
        side the smallest two-sided p is 2 / C(6, 3) = 0.1, so a U test of them calls every
        change noise; such a test decides nothing."""
        return smallest_p(self.n_before, self.n_after, self.alternative) < ALPHA

    @property
    def significant(self) -> bool:
        return self.resolvable and self.p_value < ALPHA


def smallest_p(m: int, n: int, alternative: str = "two-sided") -> float:
    """The smallest p two untied sets of m and n samples can give: 2 / C(m+n, m) two-sided,
    1 / C(m+n, m) one-sided (one set entirely below the other)."""
    if m < 1 or n < 1:
        return 1.0
    return min(1.0, (2.0 if alternative == "two-sided" else 1.0) / math.comb(m + n, m))


def u_test(before: Sequence[float], after: Sequence[float],
           alternative: str = "two-sided") -> UTest:
    """Mann-Whitney U test of `before` (x) against `after` (y); `alternative` as scipy's:
    "two-sided", "greater" (x tends larger) or "less". scipy computes it when installed,
    the counted engine here otherwise (same method, same p). ValueError if either side is
    empty, holds a NaN, or `alternative` is none of ALTERNATIVES."""
    x, y = [float(v) for v in before], [float(v) for v in after]
    m, n = len(x), len(y)
    if not m or not n:
        raise ValueError("u_test needs at least one sample on each side")
    if any(math.isnan(v) for v in x + y):
        raise ValueError("u_test: a sample is NaN; drop it (or fix the timer) and rerun")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"u_test: alternative {alternative!r} is none of "
                         f"{', '.join(ALTERNATIVES)}")
    method = _method(x, y)
    stats = _scipy_stats()
    if stats is not None:
        r = stats.mannwhitneyu(x, y, alternative=alternative,
                               method="exact" if method == "exact" else "asymptotic")
        u1, p = float(r.statistic), float(r.pvalue)
    else:
        u1 = _u1(x, y)
        p = _p_counted(u1, x, y, alternative, method)
    p = 1.0 if math.isnan(p) else min(1.0, max(0.0, p))
    return UTest(min(u1, m * n - u1), p, m, n, method, u1, alternative)


def have_scipy() -> bool:
    """Whether scipy (the `stats` extra) is installed: u_test then runs scipy's test."""
    from importlib.util import find_spec

    return find_spec("scipy") is not None


def _scipy_stats():
    """scipy.stats, or None where it is not installed (or does not import): the counted
    engine then."""
    if not have_scipy():
        return None
    try:
        import scipy.stats as stats
    except ImportError:
        return None
    return stats


def _method(x: Sequence[float], y: Sequence[float]) -> str:
    """"exact" for untied samples, at most _EXACT_MAX on the smaller side and _EXACT_CELLS
    pairs; else "normal". (scipy's own "auto" counts only up to 8 a side; the counted
    distribution is exact and cheap well beyond that.)"""
    m, n = len(x), len(y)
    untied = len(set(x) | set(y)) == m + n
    return "exact" if untied and min(m, n) <= _EXACT_MAX and m * n <= _EXACT_CELLS \
        else "normal"


def _u1(x: Sequence[float], y: Sequence[float]) -> float:
    """U1 = R1 - m (m + 1) / 2, R1 the sum of x's ranks in the pooled samples (tied values
    share their mean rank): the pairs with x > y, a tie counting 1/2. N log N, not m x n."""
    pooled = sorted([(v, 0) for v in x] + [(v, 1) for v in y])
    r1, i = 0.0, 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        mean_rank = (i + 1 + j) / 2            # ranks i+1 .. j
        r1 += mean_rank * sum(1 for _, side in pooled[i:j] if side == 0)
        i = j
    m = len(x)
    return r1 - m * (m + 1) / 2


def _p_counted(u1: float, x: Sequence[float], y: Sequence[float], alternative: str,
               method: str) -> float:
    """scipy's p for U1, without scipy: the upper tail P(U >= u) of the statistic the
    alternative looks at (U1 for "greater", U2 for "less", the larger of them, doubled, for
    two-sided), exact or normal."""
    m, n = len(x), len(y)
    u2 = m * n - u1
    u, sides = {"greater": (u1, 1), "less": (u2, 1)}.get(alternative, (max(u1, u2), 2))
    if method == "exact":
        counts = _u_counts(min(m, n), max(m, n))
        # untied samples give a whole U; the tail includes U = u itself
        return sides * sum(counts[math.ceil(u):]) / math.comb(m + n, m)
    big_n = m + n
    ties = sum(t ** 3 - t for t in Counter(list(x) + list(y)).values())
    var = m * n / 12 * ((big_n + 1) - ties / (big_n * (big_n - 1)))
    if var <= 0:
        # every sample the same value: U = m n / 2, nothing to tell (scipy: z = -inf)
        return 1.0
    z = (u - m * n / 2 - 0.5) / math.sqrt(var)
    return sides * 0.5 * math.erfc(z / math.sqrt(2))


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of m x's and n y's give each U = 0 .. m n: the
    coefficients of the Gaussian binomial [m+n choose m] = prod over i = 1..m of
    (1 - q^(n+i)) / (1 - q^i), built one factor at a time (each partial product is
    [n+i choose i], a polynomial, so whole numbers throughout)."""
    top = m * n
    c = [1] + [0] * top
    for i in range(1, m + 1):
        step = n + i
        for v in range(top, step - 1, -1):       # times (1 - q^(n+i))
            c[v] -= c[v - step]
        for v in range(i, top + 1):             # divided by (1 - q^i)
            c[v] += c[v - i]
    return tuple(c)
