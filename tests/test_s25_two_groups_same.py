"""sample_groups.two_groups reads each split's gap and spread off the sorted list (it built
both halves at every split: O(n^2), 1.5 s of a decorated function's .kernel at 20k calls).
The same split as the old loop, kept here as the reference, on random sample sets."""

from __future__ import annotations

import math
import random

from rooflab.model.sample_groups import (
    GAP_OVER_SPREAD,
    MIN_GAP_REL,
    MIN_GROUP_SAMPLES,
    MIN_GROUP_SHARE,
    Groups,
    two_groups,
)


def _old_two_groups(samples):
    xs = sorted(x for x in samples if x > 0 and math.isfinite(x))
    n = len(xs)
    least = max(MIN_GROUP_SAMPLES, math.ceil(MIN_GROUP_SHARE * n))
    best = None
    for i in range(least, n - least + 1):
        g = Groups(tuple(xs[:i]), tuple(xs[i:]))
        if (g.gap > GAP_OVER_SPREAD * g.spread and g.gap >= MIN_GAP_REL * g.fast[-1]
                and (best is None or g.gap > best.gap)):
            best = g
    return best


def test_the_same_split_as_the_old_loop():
    rnd = random.Random(3)
    found = 0
    for _ in range(5000):
        n = rnd.randint(0, 40)
        levels = rnd.choice([(1.0,), (1.0, 2.0), (1.0, 1.3, 3.0)])
        xs = [rnd.choice(levels) * rnd.lognormvariate(0, rnd.choice([0.001, 0.01, 0.1]))
              for _ in range(n)]
        if rnd.random() < 0.2:
            xs = [round(x, 2) for x in xs]           # ties
        if rnd.random() < 0.1:
            xs += [0.0, math.nan, -1.0]              # not times: dropped by both
        assert two_groups(xs) == _old_two_groups(xs), xs
        found += two_groups(xs) is not None
    assert found > 500                               # the groups case is exercised (835)


def test_a_hand_made_split():
    g = two_groups([1.0, 1.01, 1.02, 2.0, 2.01, 2.02])
    assert g is not None and (g.fast, g.slow) == ((1.0, 1.01, 1.02), (2.0, 2.01, 2.02))
    assert two_groups([1.0, 1.01, 1.02, 1.03, 1.04, 1.05]) is None
