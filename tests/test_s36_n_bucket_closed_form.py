"""model/train_comm.bucket_exposed_s in closed form (s36 N): k equal slices of w = W/k
compute and c = R/k link end the link at max(w + k c, k w + c) (the link's free time after
slice j, j w + (k - j + 1) c, is linear in j: its maximum is at j = 1 or k), so a tiny
--bucket-mb costs nothing where the loop built one slice per bucket (0.1 MiB: 11 s)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rooflab.model import parallel
from rooflab.model.train_comm import bucket_exposed_s


def _exact(t, w, b, last=0.0) -> float:
    """The schedule in exact arithmetic, slice by slice (overlapped_step_s's loop)."""
    last = min(max(0.0, last), t)
    k = max(1, b - (1 if last > 0 else 0))
    ws, cs = Fraction(w) / k, (Fraction(t) - Fraction(last)) / k
    now = free = Fraction(0)
    for _ in range(k):
        now += ws
        free = max(free, now) + cs
    return float(max(Fraction(0), max(now, free) - Fraction(w)) + Fraction(last))


def test_no_slice_is_built(monkeypatch):
    """The closed form calls no per-slice schedule: overlapped_step_s raising changes
    nothing. 506 DDP buckets of 44.9 ms under a 62.3 ms backward: c = 88.7 us < w = 123
    us, the link keeps up, k w + c - W = the last slice's 88.7 us. HEAD: it built 506
    slices for overlapped_step_s (fails here)."""
    def boom(*a, **k):
        raise AssertionError("built one slice per bucket")

    monkeypatch.setattr(parallel, "overlapped_step_s", boom)
    assert bucket_exposed_s(0.0449, 0.0623, 506) == pytest.approx(0.0449 / 506, rel=1e-12)


@pytest.mark.parametrize("t, w, b, last", [
    (1.0, 1.0, 4, 0.0),        # c = w = 0.25: w + k c - W = 0.25
    (3.0, 1.0, 3, 0.0),        # link-bound: w + R - W = 1/3 + 3 - 1 = 2.333
    (0.5, 2.0, 5, 0.0),        # compute-bound: c = 0.1
    (0.0449, 0.0623, 506, 0.000934),    # llama-2-7b --dp 4 on an H100, embedding apart
    (1e-3, 0.07, 12_851, 0.0),          # --bucket-mb 1: 12,851 buckets
])
def test_equals_the_slice_by_slice_schedule(t, w, b, last):
    """The closed form to 1e-15 of T + W of the exact slice-by-slice schedule."""
    assert bucket_exposed_s(t, w, b, last) == pytest.approx(_exact(t, w, b, last),
                                                            abs=1e-15 * (t + w))

