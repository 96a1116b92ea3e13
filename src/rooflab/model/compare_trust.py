"""Whether compare's U test verdict can be trusted between two runs. Pure.

The Mann-Whitney U test sees the noise inside each run only: load that moved between two
runs (minutes apart on a shared machine) shifts every sample of one run, and the test
then calls an unchanged kernel a significant change (review r4 F2: the same numba matmul
re-run read 602 ms then 391 ms, 5 vs 5 samples without overlap, p = 2 / C(10, 5) =
0.0079). Below MIN_TRUSTED_SAMPLES a side the test is not used at all (`judged`): the
change is gated as measured, as without samples. An earlier rule called only p == the
smallest p 'cannot tell' and passed it, so no overlap (5 vs 5, +33 %) passed the gate
where one overlapping pair (p twice as large) failed it (review s19 r5 F1): a verdict
must never let stronger evidence pass where weaker fails. From MIN_TRUSTED_SAMPLES up a
significant test is 'cannot tell' where a run is noisy, unless the change is larger than
load moving between runs is taken to make (the rule at TINY_P).
"""

from __future__ import annotations

from ..units import fmt_fraction, fmt_times
from .compare_notes import split_what_to_do
from .kernel import Kernel
from .mann_whitney import UTest
from .sample_spread import NOISY_IQR, iqr_over_median

# Fewer samples a side than this and the U test's verdict is mostly "the sets overlap or
# not", which one shift of the whole run's load decides (review r4 F2 suggests 9: at 9 vs
# 9 no overlap is p = 2 / C(18, 9) = 4.1e-5); so below it the test judges nothing.
MIN_TRUSTED_SAMPLES = 9
# The rule for a significant U test (p < ALPHA, MIN_TRUSTED_SAMPLES or more a side) where
# a run is noisy (flagged_noisy: its timer's flag, its meta iqr_rel or its samples' IQR /
# median over NOISY_IQR, 5 %): the change is counted when the sample sets lie FAR_APART,
# or when the U test's p is at most TINY_P *and* the medians' ratio exceeds (1 + the
# noisier run's IQR / median) ** DRIFT_OVER_IQR (beyond_drift); else it is 'cannot
# tell'. TINY_P is below any p that two sets without overlap give up to 15 a side
# (2 / C(30, 15) = 1.3e-8), since no overlap is just what a whole-run shift gives.
# p alone cannot clear it: load that moves between two runs shifts a whole run,
# and the U test sees only the noise inside each run, so its p shrinks with the sample
# count whatever moved the run. Nor the size alone: back-to-back rooflab.measure runs of
# 3 unchanged kernels (numpy 300^2 matmul, 4M-element add, a Python loop) on a heavily
# shared 2-core machine (s20; 549 pairs of 9-13 samples, nearly all noisy) moved their
# medians over 3 IQRs in 10 % of pairs and over 10 in 1-2 % (a matmul 50x, its run
# spread 6x its median: hence the IQR compounded, not multiplied). On those null pairs
# the gate at 5 % failed 0.73 % (4; far apart 2, unflagged tight runs 2: the drift of
# review r4 F2), against 0.55 % under the old rule (flag by the old exclusive quartiles,
# 2x apart only) and 24 % for the U test alone; on 66 pairs of 30 samples 0 %, 0 % and
# 36 %; DRIFT_OVER_IQR 3 would have failed 0.91 % and 1.5 %. Without drift (review s20
# r2 s8.py: 9 vs 9, sd 4 %, 1000 null pairs) it stays 0.2 %. A +50 % change at IQR
# 5.4 %, 40 a side, p 1.4e-14 (review s20 r2 F2: 'cannot tell', exit 0 under
# --fail-if-slower 10) is counted. Noise is read from the samples as well as the meta,
# so a file saved by rooflab.measure (meta iqr_rel, no flags) or by hand gets the
# verdict a `rooflab bench` file of the same samples gets (review s20 r2 F2).
TINY_P = 1e-8
DRIFT_OVER_IQR = 5.0
# The sets' gap (the slower run's fastest sample over the faster run's slowest, each scaled
# by its calls) from which a change is counted even when a run is noisy: load moving
# between runs shifted an unchanged numba matmul 1.54x (review r4 F2, 602 -> 391 ms);
# twice is beyond that with room. The gap must also exceed each run's own max/min.
FAR_APART = 2.0
# The advice when the verdict cannot be trusted; where both runs already have
# MIN_TRUSTED_SAMPLES, re-running with that many is not it (review s20 r2 F2: told
# '--samples 9' with 40 a side).
WHAT_TO_DO = (f"re-run both with `rooflab bench --samples {MIN_TRUSTED_SAMPLES}` (or "
              f"rooflab.measure(..., samples={MIN_TRUSTED_SAMPLES})) on a quiet machine, or "
              f"time before and after interleaved in one process")
WHAT_TO_DO_SAMPLED = ("time before and after interleaved in one process, or on a quiet "
                      "machine (pinned threads, fixed clocks): load that moved between the "
                      "runs reads as a change however many samples each has")


def noise_of(k: Kernel) -> float:
    """A run's own timing noise, IQR / median: the larger of its samples' (from 4 up) and
    its meta iqr_rel (the timer's own figure; an older file's used other quartiles); 0.0
    when neither is known."""
    own = iqr_over_median(k.samples) if len(k.samples) >= 4 else 0.0
    meta = k.meta.get("iqr_rel")
    said = float(meta) if isinstance(meta, (int, float)) and not isinstance(meta, bool) \
        else 0.0
    return max(own, said if said == said else 0.0)


def flagged_noisy(k: Kernel) -> bool:
    """Whether a run is noisy: its timer's 'noisy' flag (bench/check.py), or IQR / median
    over NOISY_IQR (noise_of: the same test on the samples, whichever tool wrote them)."""
    flags = k.meta.get("flags")
    return (isinstance(flags, (list, tuple)) and "noisy" in flags) or noise_of(k) > NOISY_IQR


def beyond_drift(t: UTest, before: Kernel, after: Kernel) -> str | None:
    """Why a significant change between noisy runs is counted all the same, in words:
    p at most TINY_P and the medians' ratio beyond (1 + the noisier run's IQR / median)
    ** DRIFT_OVER_IQR (the IQR compounded, so a run spread over 6x its median does not
    let a 50x drift through as 8 IQRs); None otherwise."""
    noise = max(noise_of(before), noise_of(after))
    b, a = before.seconds, after.seconds
    if not (noise > 0 and b and a) or not t.p_value <= TINY_P:
        return None
    moved, allowed = max(a / b, b / a), (1 + noise) ** DRIFT_OVER_IQR
    if moved <= allowed:
        return None
    return (f"p {t.p_value:.2g} <= {TINY_P:g} and the medians {fmt_times(moved)} apart, beyond "
            f"the {fmt_times(allowed)} that load moving between runs is taken to make (the "
            f"noisier run's IQR / median, {fmt_fraction(noise, 1)}, compounded "
            f"{DRIFT_OVER_IQR:g} times)")


def _scaled(k: Kernel) -> list[float]:
    """A run's samples as the U test compares them: per call x its calls."""
    return [x * k.calls for x in k.samples if x > 0]


def far_apart(before: Kernel, after: Kernel) -> str | None:
    """Why the two runs' samples lie too far apart for load to explain (the gap between
    the sets at least FAR_APART and over each run's own max / min), in words; None when
    they do not (or a side has no samples)."""
    b, a = _scaled(before), _scaled(after)
    if not b or not a:
        return None
    fast, slow = (b, a) if max(b) < min(a) else (a, b) if max(a) < min(b) else (None, None)
    if fast is None:
        return None
    gap = min(slow) / max(fast)
    spread = max(max(b) / min(b), max(a) / min(a))
    if gap < FAR_APART or gap <= spread:
        return None
    return (f"the two runs' samples lie {fmt_times(gap)} apart (the slower run's fastest over the "
            f"faster run's slowest), beyond the {FAR_APART:g}x that load moving between "
            f"runs is taken to make and each run's own spread ({fmt_times(spread)} at most)")


def judged(t: UTest | None) -> bool:
    """Whether the U test may decide the gate: both runs have MIN_TRUSTED_SAMPLES or more
    (then it can also reach ALPHA). Below, whatever p it gives, the change is gated as
    measured: one rule for every p, so no outcome passes where a weaker one fails."""
    return (t is not None and t.resolvable
            and min(t.n_before, t.n_after) >= MIN_TRUSTED_SAMPLES)


def _unsure(before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test alone cannot be trusted (a run noisy), before the size of
    the change is looked at."""
    noisy = [(side, noise_of(k)) for side, k in (("first", before), ("second", after))
             if flagged_noisy(k)]
    if noisy:
        are = "runs are" if len(noisy) > 1 else "run is"
        iqr = " and ".join(fmt_fraction(v, 1) for _, v in noisy)
        return (f"the {' and '.join(side for side, _ in noisy)} {are} flagged noisy (IQR / "
                f"median {iqr}; other load moved its samples, and may have moved a whole "
                f"run); the U test sees only the noise within each run")
    return None


def _counted(t: UTest, before: Kernel, after: Kernel) -> str | None:
    """Why a change between noisy runs is counted all the same (far_apart, beyond_drift)."""
    return far_apart(before, after) or beyond_drift(t, before, after)


def cannot_tell(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test (p < ALPHA) cannot tell these runs apart; None when it can
    (or when it found no change: 'within noise' stands). The rule is at TINY_P: a change
    whose sample sets lie far apart (far_apart), or at a tiny p beyond the drift load
    makes (beyond_drift), is told whatever the runs' noise."""
    if not judged(t) or not t.significant:
        return None
    why = _unsure(before, after)
    if why is None or _counted(t, before, after):
        return None
    return why


def counted_anyway(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """For a change counted although a run is noisy (far_apart or beyond_drift overrode
    cannot_tell): what would have held it back and why it is counted; None otherwise."""
    if not judged(t) or not t.significant:
        return None
    why = _unsure(before, after)
    counted = _counted(t, before, after) if why else None
    return f"{why}; but {counted}" if counted else None


def trust_notes(matches) -> list[str]:
    """A note for each match whose 'outside noise' cannot be trusted (Match.cannot_tell):
    why, and what to do; and for each counted though a run is noisy (counted_anyway):
    why it is counted."""
    notes = []
    for m in matches:
        if m.cannot_tell:
            # a 'within noise' of two sample groups (compare_notes.split_reason): more
            # samples on a quiet machine would not help, timing the shapes apart does
            # and a noisy pair with MIN_TRUSTED_SAMPLES a side already: more samples
            # cannot clear a drift between runs (review s20 r2 F2 was told '--samples 9'
            # with 40 a side)
            sampled = min(len(m.before.samples), len(m.after.samples)) >= MIN_TRUSTED_SAMPLES
            what = (split_what_to_do(m) if m.within_noise
                    else WHAT_TO_DO_SAMPLED if sampled else WHAT_TO_DO)
            notes.append(f"{m.name}: {m.change_pct:+.1f} %, cannot tell from these samples "
                         f"({m.cannot_tell}): not counted as a change (nor by "
                         f"--fail-if-slower); {what}")
            continue
        anyway = counted_anyway(m.noise, m.before, m.after) if m.change_pct is not None \
            else None
        if anyway:
            notes.append(f"{m.name}: {m.change_pct:+.1f} %, counted as a change ({anyway})")
    return notes
