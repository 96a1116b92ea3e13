"""Samples that sped up while measure() took them: a warm-up longer than the plan's.

measure() warms up for a fixed time (the plan's warmup_s, 20 ms by default), then samples.
A kernel whose first calls run slow for longer (a CPU governor ramping its clock, a GPU
boosting from idle, first touches of a large output) then gives samples that fall during
the run, and their median lands on the cold state or between the two (review s20 r2 F5:
2 ms calls for 150 calls, then 1 ms, read 2.0 ms; after 100 slow calls, 1.56 ms). The
spread test (times_warning) sees a set, not an order, and blamed other load.

The order test is the probe's (probe.stats.slowdown: the last third more than 5 % below
the first and the first third above the last, one-sided Mann-Whitney U, p <= 1 %, from 15
samples), given the times: a time falling during the run is calls speeding up, as a rate
falling is a clock coming down. Below 15 samples it cannot judge, so a run that may have
sped up (may_have_sped_up: a cheap look, no test) is sampled on to 15 first. A run that
sped up is left out as warm-up and timed again; a second that sped up too is cut to its
last third, the steady state so far, topped up with samples taken after it to the plan's
least (a `--samples 9` asked for 9 a side of compare's U test; the cut alone left 5, CI
at 934258a), and says so in a TimingWarning.

The other way round is no warm-up (s21 d1): the last samples slower than every one before
(late_slowdown) is load that started during the run or a clock that came down. Timing
again would not give the kernel's time back, and the median, of mostly earlier samples,
still stands; a warning says what changed, so the number is not trusted blind.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from .probe.stats import MIN_SLOWDOWN_SAMPLES, SLOWDOWN, Slowdown, slowdown, summarize
from .probe.timer import Timing
from .units import fmt_fraction, fmt_seconds

# more(n): n more samples of the same call and calls per sample (None: a fresh run of the
# plan's samples), in the order taken
More = Callable[[int | None], Timing]


def may_have_sped_up(samples: tuple[float, ...]) -> bool:
    """The cheap look (module doc), any of: the last third's median more than SLOWDOWN
    below the first third's fastest sample (a step); the last sample more than SLOWDOWN
    below every other (a step at the end); the last third all below the first third's
    fastest, its median more than SLOWDOWN / 2 below the first third's (a ramp: 2 ms
    falling 0.8 % a sample, 6.5 % over 9, reaches the order test's 5 % only in 15).

    Why this look (review s20 x1 F2; simulated, 3000 runs each; tests/test_s20_n1_trend.py
    re-runs 1000): the earlier one (the fastest sample in the last third, SLOWDOWN below
    the first third's median) fired on 22-33 % of steady runs of 9-12 i.i.d. samples
    (lognormal 5 and 20 %, 1 + exponential 10 and 30 %), each then sampled on to 15, and
    missed a clean 2 ms -> 1 ms step after 5 of 9 samples 23 % of the time (the fast
    samples' fastest fell in the middle third; review r2 F5's case). This one fires on
    7 / 19 / 7 / 14 % of 9-sample and 3 / 12 / 2 / 6 % of 12-sample steady runs (the same
    four noises), and the reported median is the fast one after a step at every place in
    9 samples (2 to 8 slow); in 12 it misses only a step at the last sample (63 %: the
    order test on 15 cannot tell one fast sample among the slow from an outlier)."""
    k = len(samples) // 3
    if k < 1:
        return False
    first, last = samples[:k], samples[-k:]
    fast = 1 - SLOWDOWN
    return (statistics.median(last) < fast * min(first)
            or samples[-1] < fast * min(samples[:-1])
            or (max(last) < min(first)
                and statistics.median(last) < (1 - SLOWDOWN / 2) * statistics.median(first)))


# late_slowdown: at most this many last samples (2 or 3: one slow last sample is one
# held-up call, which times_warning leaves alone too), each more than LATE_STEP above every
# earlier sample. Steady i.i.d. runs (3000 each; lognormal 5 and 20 %, 1 + exponential 10
# and 30 %) fire 0 / 0.4 / 0 / 0.4 % at 9 samples, 0 / 0 / 0 / 0.1 % at 12 and 15
LATE_MOST, LATE_STEP = 3, 0.20


def late_slowdown(samples: tuple[float, ...]) -> tuple[int, float, float] | None:
    """(k, the earlier samples' median, the last k's median) where the last k samples
    (2 <= k <= LATE_MOST, at most a third) each took more than LATE_STEP longer than every
    earlier one: the run slowed at its end (module doc). None otherwise."""
    for k in range(2, LATE_MOST + 1):
        rest, last = samples[:-k], samples[-k:]
        if len(rest) < max(6, 2 * k):
            break
        if min(last) > (1 + LATE_STEP) * max(rest):
            return k, statistics.median(rest), statistics.median(last)
    return None


def late_words(name: str, samples: tuple[float, ...]) -> str | None:
    """The warning of a run that slowed at its end (late_slowdown), None for none."""
    got = late_slowdown(samples)
    if got is None:
        return None
    k, before, after = got
    return (f"{name}: the last {k} of {len(samples)} timing samples are "
            f"{fmt_fraction(after / before - 1)} slower than the ones before "
            f"({fmt_seconds(before)} -> {fmt_seconds(after)}): load changed during the run (other "
            f"work started, a clock came down), not warm-up; the time is the median of all "
            f"{len(samples)}, the earlier state's; rerun on a quiet machine")


def _judged(t: Timing, more: More) -> tuple[Timing, Slowdown | None]:
    """t, sampled on to MIN_SLOWDOWN_SAMPLES where it may have sped up, and the order
    test's verdict on it (a Slowdown of its times: the calls sped up)."""
    if len(t.samples) < MIN_SLOWDOWN_SAMPLES and may_have_sped_up(t.samples):
        extra = more(MIN_SLOWDOWN_SAMPLES - len(t.samples)).samples
        xs = t.samples + extra
        t = Timing(samples=xs, inner=t.inner, stats=summarize(xs))
    return t, slowdown(t.samples)


def steady_timing(name: str, first: Timing, more: More, least: int = 0
                  ) -> tuple[Timing, dict[str, Any], str | None]:
    """The timing to report, the meta saying what was left out, and a warning when the
    samples were still speeding up after a second run (module doc); `least`: the fewest
    samples to report (the plan's min_samples)."""
    t, s = _judged(first, more)
    if s is None:
        return t, {}, late_words(name, t.samples)
    again, s2 = _judged(more(None), more)
    left = len(t.samples)
    said = (f"the first {left} timing samples sped up (the last third's calls took "
            f"{fmt_fraction(s.drop)} less time than the first's: {fmt_seconds(s.first)} -> "
            f"{fmt_seconds(s.last)}): the warm-up ran past the plan's, so they were left out")
    meta: dict[str, Any] = {"warmup_samples_left_out": left}
    if s2 is None:
        return (again, {**meta, "slow_runs_note": f"{said} and the kernel timed again"},
                late_words(name, again.samples))
    kept = again.samples[-s2.n:]
    topped = more(least - len(kept)).samples if len(kept) < least else ()
    meta["raw_samples"] = list(t.samples + again.samples + topped)
    # every sample before the first kept one is warm-up: the recipe's warm-up calls count
    # them (calls made = warmup_calls + samples_n x calls_per_sample)
    meta["warmup_samples_left_out"] = left + len(again.samples) - len(kept)
    last = (f"last {len(kept)} samples' median" if not topped else
            f"median of the last {len(kept)} samples and {len(topped)} taken after them "
            f"(the {least} asked for)")
    kept += topped
    warning = (f"{name}: {said}, and the {len(again.samples)} taken again sped up too "
               f"({fmt_seconds(s2.first)} -> {fmt_seconds(s2.last)}): warm-up still running "
               f"(a CPU clock ramp, a GPU boosting from idle, first touches of a large "
               f"output); the time is the {last}, the steady "
               f"state so far; call it more first or time with plan='full' (100 ms warm-up)")
    meta["slow_runs_note"] = warning.split(": ", 1)[1]
    return Timing(samples=kept, inner=again.inner, stats=summarize(kept)), meta, warning
