"""The Mann-Whitney U test on two sets of timing samples: is a change outside the noise?

Google benchmark's tools/compare.py (report.py calc_utest) runs this test, two-sided, on
the repetitions of the two runs and calls a difference significant at p < 0.05; it needs
at least 2 repetitions and warns below 9. rooflab has no scipy at run time (not a
dependency), so the test is here: exact (the U distribution counted) when the samples
have no ties and the sets are small, else the normal approximation with the tie
correction and the continuity correction, as scipy.stats.mannwhitneyu's 'asymptotic'
method computes it. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Google benchmark compare.py's default significance level ("--alpha", 0.05).
ALPHA = 0.05
# The exact distribution is counted while the smaller set has at most _EXACT_MAX samples
# and the product of the sizes is at most _EXACT_CELLS (cost: smaller x smaller x larger
# integer additions, 40 000 at most); beyond, the normal approximation is within a few
# thousandths of it.
_EXACT_MAX = 20
_EXACT_CELLS = 2000


@dataclass(frozen=True)
class UTest:
    """One two-sided Mann-Whitney U test. `u` is the smaller of U1 and U2."""

    u: float
    p_value: float
    n_before: int
    n_after: int
    method: str             # "exact" or "normal"

    @property
    def resolvable(self) -> bool:
        """Whether any outcome of these sample counts could reach ALPHA: with 3 samples a
        side the smallest two-sided p is 2 / C(6, 3) = 0.1, so a U test of them calls every
        change noise; such a test decides nothing."""
        return smallest_p(self.n_before, self.n_after) < ALPHA

    @property
    def significant(self) -> bool:
        return self.resolvable and self.p_value < ALPHA


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p two untied sets of m and n samples can give: 2 / C(m+n, m)
    (one set entirely below the other)."""
    if m < 1 or n < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(m + n, m))


def u_test(before: Sequence[float], after: Sequence[float]) -> UTest:
    """Two-sided Mann-Whitney U test of two samples (ValueError if either is empty)."""
    x, y = [float(v) for v in before], [float(v) for v in after]
    m, n = len(x), len(y)
    if not m or not n:
        raise ValueError("u_test needs at least one sample on each side")
    ranks, ties = _ranks(x + y)
    u1 = sum(ranks[:m]) - m * (m + 1) / 2.0
    u = min(u1, m * n - u1)
    if not ties and min(m, n) <= _EXACT_MAX and m * n <= _EXACT_CELLS:
        return UTest(u, _exact_p(int(round(u)), m, n), m, n, "exact")
    return UTest(u, _normal_p(u, m, n, ties), m, n, "normal")


def _ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based; tied values share their mean rank) and the sizes of tie groups."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def u_counts(m: int, n: int) -> list[int]:
    """How many of the C(m+n, m) orderings of m and n untied samples give U = 0 .. m*n: the
    coefficients of the Gaussian binomial [m+n choose m](q) = prod_{i=1..m} (1 - q^(n+i)) /
    (1 - q^i), built one factor at a time (each partial product is a polynomial)."""
    size = m * n + 1
    c = [0] * size
    c[0] = 1
    for i in range(1, m + 1):
        k = n + i
        for u in range(size - 1, k - 1, -1):   # x (1 - q^k); terms above m*n never count
            c[u] -= c[u - k]
        for u in range(i, size):               # / (1 - q^i) as a power series
            c[u] += c[u - i]
    return c


def _exact_p(u: int, m: int, n: int) -> float:
    counts = u_counts(min(m, n), max(m, n))
    return min(1.0, 2.0 * sum(counts[:u + 1]) / math.comb(m + n, m))


def _normal_p(u: float, m: int, n: int, ties: Sequence[int]) -> float:
    total = m + n
    tie_term = sum(t ** 3 - t for t in ties) / (total * (total - 1)) if total > 1 else 0.0
    var = m * n / 12.0 * ((total + 1) - tie_term)
    if var <= 0:
        return 1.0        # every sample equal: nothing tells the sets apart
    z = (m * n / 2.0 - u - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))
