"""The Mann-Whitney U test on two sets of timing samples: is a change outside the noise?

Google benchmark's tools/compare.py (report.py calc_utest) runs this test, two-sided, on
the repetitions of the two runs and calls a difference significant at p < 0.05; it needs
at least 2 repetitions and warns below 9. The test itself is scipy's
(`scipy.stats.mannwhitneyu`, the `stats` extra, imported only when samples are compared):
exact (the U distribution counted) when the samples have no ties and the sets are small,
else the normal approximation with the tie and continuity corrections.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import require

# Google benchmark compare.py's default significance level ("--alpha", 0.05).
ALPHA = 0.05
# The exact distribution is asked for while the smaller set has at most _EXACT_MAX samples
# and the product of the sizes is at most _EXACT_CELLS; beyond, the normal approximation is
# within a few thousandths of it.
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
    """Two-sided Mann-Whitney U test of two samples (ValueError if either is empty;
    MissingDependency naming the `stats` extra when scipy is not installed)."""
    x, y = [float(v) for v in before], [float(v) for v in after]
    m, n = len(x), len(y)
    if not m or not n:
        raise ValueError("u_test needs at least one sample on each side")
    stats = require("scipy.stats", "stats", "the noise test of `rooflab compare`")
    untied = len(set(x + y)) == m + n
    method = "exact" if untied and min(m, n) <= _EXACT_MAX and m * n <= _EXACT_CELLS \
        else "asymptotic"
    r = stats.mannwhitneyu(x, y, alternative="two-sided", method=method)
    u1 = float(r.statistic)
    p = float(r.pvalue)
    return UTest(min(u1, m * n - u1), 1.0 if math.isnan(p) else min(1.0, p), m, n,
                 "exact" if method == "exact" else "normal")


def have_scipy() -> bool:
    """Whether the noise test can run (scipy, the `stats` extra, is installed)."""
    from importlib.util import find_spec

    return find_spec("scipy") is not None
