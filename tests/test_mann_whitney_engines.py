"""One Mann-Whitney U test (model.mann_whitney.u_test) for compare's noise gate and the
probe's slowdown warning: scipy's when installed, else counted in rooflab, the same p.

The counted engine is held to scipy.stats.mannwhitneyu, told the same method, over sizes
5..40, the three alternatives, with and without ties: 1e-6 where the U distribution is
counted exactly, 1e-3 for the normal approximation (they agree to rounding). Hand values:
fully separated sets give 1 / C(m+n, m) one-sided; the tie-corrected variance
m n / 12 x ((N + 1) - sum(t^3 - t) / (N (N - 1))).
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

import rooflab.model.mann_whitney as mw
from rooflab.model.compare import compare_kernels
from rooflab.model.kernel import Kernel
from rooflab.probe import stats as probe_stats
from rooflab.probe.stats import slowdown

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.fixture
def counted(monkeypatch):
    """u_test with scipy out of its reach: the counted engine."""
    monkeypatch.setattr(mw, "have_scipy", lambda: False)


@pytest.fixture
def no_scipy(monkeypatch):
    """scipy not importable at all (find_spec None, import fails): as without the extra."""
    for name in [n for n in sys.modules if n == "scipy" or n.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)


def _cases():
    rng = random.Random(16)
    for m in (5, 6, 8, 9, 12, 15, 20, 21, 25, 33, 40):
        for n in (5, 7, 10, 19, 20, 30, 40):
            for tied in (False, True):
                x = [rng.gauss(0, 1) for _ in range(m)]
                y = [rng.gauss(0.4, 1) for _ in range(n)]
                if tied:          # timer resolution: values on a coarse grid, many ties
                    x, y = [round(2 * v) / 2 for v in x], [round(2 * v) / 2 for v in y]
                yield m, n, tied, x, y


CASES = list(_cases())


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_the_counted_engine_agrees_with_scipy(alternative, monkeypatch):
    worst = {"exact": 0.0, "normal": 0.0}
    seen = set()
    for m, n, tied, x, y in CASES:
        monkeypatch.setattr(mw, "have_scipy", lambda: False)
        ours = mw.u_test(x, y, alternative)
        monkeypatch.undo()
        via_scipy = mw.u_test(x, y, alternative)        # the scipy engine, same rule
        ref = scipy_stats.mannwhitneyu(x, y, alternative=alternative, method="exact"
                                       if ours.method == "exact" else "asymptotic")
        untied = len(set(x) | set(y)) == m + n
        assert ours.method == ("exact" if untied and min(m, n) <= 20 and m * n <= 2000
                               else "normal"), (m, n, tied)
        assert ours.u1 == float(ref.statistic) == via_scipy.u1
        assert ours.u == min(ours.u1, m * n - ours.u1)
        tol = 1e-6 if ours.method == "exact" else 1e-3
        assert ours.p_value == pytest.approx(float(ref.pvalue), abs=tol), (m, n, tied)
        assert via_scipy.p_value == pytest.approx(float(ref.pvalue), abs=1e-15)
        worst[ours.method] = max(worst[ours.method], abs(ours.p_value - float(ref.pvalue)))
        seen.add((ours.method, tied))
    assert seen == {("exact", False), ("normal", False), ("normal", True)}
    # far inside the tolerances: the same formulas, whole-number counts
    assert worst["exact"] < 1e-12 and worst["normal"] < 1e-12, worst


def test_counted_hand_values(counted):
    # U distribution of 2 x's and 2 y's over C(4, 2) = 6 orderings: U = 0, 1, 2, 2, 3, 4
    assert mw._u_counts(2, 2) == (1, 1, 2, 1, 1)
    t = mw.u_test([1.0, 3.0], [2.0, 4.0])
    assert (t.u, t.u1, t.method) == (1.0, 1.0, "exact")
    assert t.p_value == pytest.approx(4 / 6)                      # 2 x P(U <= 1)
    # fully separated: two-sided 2 / C(18, 9), one-sided 1 / C(10, 5) the right way round
    # and 1 (every ordering has U1 >= 0) the wrong way round
    quiet = [1.0 + 0.001 * i for i in range(9)]
    slow = [1.1 + 0.001 * i for i in range(9)]
    assert mw.u_test(quiet, slow).p_value == pytest.approx(2 / math.comb(18, 9), rel=1e-12)
    assert mw.u_test(quiet[:5], slow[:5], "less").p_value == pytest.approx(1 / 252, rel=1e-12)
    assert mw.u_test(quiet[:5], slow[:5], "greater").p_value == 1.0
    # Chromium pinpoint's MannWhitneyU([0]*5, [1]*5): normal, tie-corrected variance
    # 25/12 x (11 - (120 + 120) / 90) = 17.36, z = (25 - 12.5 - 0.5) / 4.167 = 2.880
    t = mw.u_test([0.0] * 5, [1.0] * 5)
    assert t.method == "normal"
    assert t.p_value == pytest.approx(0.0039767517097886512, rel=1e-9)
    # every sample equal: nothing to tell, p = 1 (scipy: z = -inf)
    assert mw.u_test([2.0] * 6, [2.0] * 7, "less").p_value == 1.0


def test_bad_input_says_what(counted):
    with pytest.raises(ValueError, match="at least one sample on each side"):
        mw.u_test([], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        mw.u_test([1.0, math.nan], [2.0])
    with pytest.raises(ValueError, match="alternative 'smaller' is none of two-sided"):
        mw.u_test([1.0], [2.0], "smaller")


def test_one_sided_smallest_p_and_resolvable():
    assert mw.smallest_p(5, 5) == pytest.approx(2 / 252)
    assert mw.smallest_p(5, 5, "greater") == pytest.approx(1 / 252)
    # 4 a side one-sided: 1 / C(8, 4) = 0.0143 < 0.05 resolves; two-sided 0.029 too;
    # 3 a side: 1/20 = 0.05 one-sided does not reach ALPHA
    assert mw.u_test([5, 6, 7, 8], [1, 2, 3, 4], "greater").resolvable
    assert not mw.u_test([5, 6, 7], [1, 2, 3], "greater").resolvable


# --- the probe: its slowdown warning runs this test, scipy or not ---------------------------

DECLINE = [1e9 * (100 - 15 * i / 29) for i in range(30)]
STEADY = [1e9 * (1 + 0.01 * ((i * 7) % 5 - 2)) for i in range(29)]


def test_the_probe_has_no_u_test_of_its_own():
    assert probe_stats.u_test is mw.u_test
    src = Path(probe_stats.__file__).read_text(encoding="utf-8")
    assert "_u_tail" not in src and "erfc" not in src


@pytest.mark.parametrize("engine", ["scipy", "counted", "no_scipy"])
def test_probe_verdicts_are_unchanged_with_either_engine(engine, request):
    if engine != "scipy":
        request.getfixturevalue(engine)
    # test_probe_drift's cases: 30 samples falling 15 %: thirds of 10 wholly apart, exact
    # one-sided p = 1 / C(20, 10) = 5.41e-6; 15 samples: 1 / C(10, 5)
    assert slowdown(DECLINE).p_value == pytest.approx(1 / math.comb(20, 10), rel=1e-9)
    fall15 = [1e9 * (1 - 0.3 * i / 14) for i in range(15)]
    assert slowdown(fall15).p_value == pytest.approx(1 / 252, rel=1e-9)
    for seed in range(20):
        xs = DECLINE[:]
        random.Random(seed).shuffle(xs)
        assert slowdown(xs) is None
    assert slowdown(STEADY + [0.5e9]) is None
    assert slowdown(STEADY[:28] + [0.5e9, 0.5e9]) is None
    assert slowdown(STEADY[:25] + [0.5e9] * 5) is None          # one-sided p 0.032 > 0.01
    assert slowdown(DECLINE[::-1]) is None
    # three flat steps: every sample of a third tied. U1 = 100 of 100; tie-corrected
    # variance 100/12 x (21 - 2 x (10^3 - 10) / 380) = 131.58, z = 49.5 / 11.471 = 4.315,
    # p = 7.97e-6 (the probe's own count left the ties out: 9.1e-5; same verdict)
    steps = [100e9] * 10 + [92.5e9] * 10 + [85e9] * 10
    assert slowdown(steps).p_value == pytest.approx(7.969e-6, rel=1e-3)


def test_probe_counts_thirds_up_to_twenty_exactly(counted):
    # 39 samples falling 30 %: thirds of 13 wholly apart. Exact: 1 / C(26, 13) = 9.6e-8
    # (the probe's own test used the normal approximation above 12 a third: 8.2e-6)
    fall = [1e9 * (1 - 0.3 * i / 38) for i in range(39)]
    assert slowdown(fall).p_value == pytest.approx(1 / math.comb(26, 13), rel=1e-9)


def test_probe_without_scipy_ignores_a_nan_sample(no_scipy):
    assert slowdown(DECLINE[:29] + [math.nan]) is None


# --- compare: its gate's verdicts on its existing cases, with the counted engine -----------

NOISY_BEFORE = [1.00, 1.30, 0.95, 1.60, 1.05, 1.10, 2.00, 0.98, 1.20]
NOISY_AFTER = [1.02, 1.80, 1.00, 1.75, 0.97, 1.78, 2.10, 1.15, 1.70]
QUIET_BEFORE = [1.00, 1.01, 0.99, 1.02, 1.005, 0.995, 1.015, 1.001, 1.021]
QUIET_AFTER = [1.10, 1.11, 1.09, 1.12, 1.105, 1.095, 1.115, 1.101, 1.121]
R4_BEFORE = [0.6519, 0.6137, 0.6022, 0.5761, 0.5926]
R4_BEFORE2 = [0.3824, 0.3737, 0.3936, 0.3911, 0.3925]


def _k(samples, flags=()):
    return Kernel("k", flop={"fp32": 1e6}, seconds=sorted(samples)[len(samples) // 2],
                  samples=tuple(samples), meta={"flags": list(flags)})


@pytest.mark.parametrize("engine", ["scipy", "counted"])
def test_compare_gate_verdicts_are_unchanged_with_either_engine(engine, request):
    if engine == "counted":
        request.getfixturevalue("counted")
    noisy = compare_kernels([_k(NOISY_BEFORE)], [_k(NOISY_AFTER)])
    (m,) = noisy.matches
    # one tie: normal, U = 28.5 of 81, p = 0.3096 (test_compare_mann_whitney_gate)
    assert (m.noise.u, m.noise.method) == (28.5, "normal")
    assert m.noise.p_value == pytest.approx(0.3096, abs=1e-4)
    assert m.within_noise is True and noisy.regressions(5) == ()
    quiet = compare_kernels([_k(QUIET_BEFORE)], [_k(QUIET_AFTER)])
    assert quiet.matches[0].noise.p_value == pytest.approx(2 / math.comb(18, 9), rel=1e-12)
    assert quiet.matches[0].within_noise is False and len(quiet.regressions(5)) == 1
    # review r4 F2: 5 vs 5 apart is the smallest p those counts allow; fewer than 9 a side
    # judge nothing since s19 r5 F1: the +54 % change is gated as measured
    r4 = compare_kernels([_k(R4_BEFORE2)], [_k(R4_BEFORE)])
    assert r4.matches[0].noise.p_value == pytest.approx(2 / 252, rel=1e-12)
    assert r4.matches[0].cannot_tell is None and r4.matches[0].within_noise is None
    assert len(r4.regressions(5)) == 1
    few = compare_kernels([_k([1.0, 1.01, 0.99])], [_k([2.0, 2.1, 1.9])])
    assert few.matches[0].within_noise is None and len(few.regressions(5)) == 1
