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
significant test is 'cannot tell' where the timer flagged a run noisy, unless the two
sample sets lie further apart than load moving between runs is taken to make (FAR_APART)
and than either run's own spread (review r6 F4).
"""

from __future__ import annotations

from .kernel import Kernel
from .mann_whitney import UTest

# Fewer samples a side than this and the U test's verdict is mostly "the sets overlap or
# not", which one shift of the whole run's load decides (review r4 F2 suggests 9: at 9 vs
# 9 no overlap is p = 2 / C(18, 9) = 4.1e-5); so below it the test judges nothing.
MIN_TRUSTED_SAMPLES = 9
# The sets' gap (the slower run's fastest sample over the faster run's slowest, each scaled
# by its calls) from which a change is counted even when a run is flagged noisy: load
# moving between runs shifted an unchanged numba matmul 1.54x (review r4 F2, 602 -> 391
# ms); twice is beyond that with room. The gap must also exceed each run's own max/min.
FAR_APART = 2.0
# The advice when the verdict cannot be trusted.
WHAT_TO_DO = (f"re-run both with `rooflab bench --samples {MIN_TRUSTED_SAMPLES}` (or "
              f"rooflab.measure(..., samples={MIN_TRUSTED_SAMPLES})) on a quiet machine, or "
              f"time before and after interleaved in one process")


def flagged_noisy(k: Kernel) -> bool:
    """The timer's own 'noisy' flag (bench/check.py: samples spread > 5 % IQR/median)."""
    flags = k.meta.get("flags")
    return isinstance(flags, (list, tuple)) and "noisy" in flags


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
    return (f"the two runs' samples lie {gap:.2f}x apart (the slower run's fastest over the "
            f"faster run's slowest), beyond the {FAR_APART:g}x that load moving between "
            f"runs is taken to make and each run's own spread ({spread:.2f}x at most)")


def judged(t: UTest | None) -> bool:
    """Whether the U test may decide the gate: both runs have MIN_TRUSTED_SAMPLES or more
    (then it can also reach ALPHA). Below, whatever p it gives, the change is gated as
    measured: one rule for every p, so no outcome passes where a weaker one fails."""
    return (t is not None and t.resolvable
            and min(t.n_before, t.n_after) >= MIN_TRUSTED_SAMPLES)


def _unsure(before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test alone cannot be trusted (a run flagged noisy), before the
    size of the change is looked at."""
    noisy = [side for side, k in (("first", before), ("second", after)) if flagged_noisy(k)]
    if noisy:
        are = "runs are" if len(noisy) > 1 else "run is"
        return (f"the {' and '.join(noisy)} {are} flagged noisy (other load moved its "
                f"samples); the U test sees only the noise within each run")
    return None


def cannot_tell(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test (p < ALPHA) cannot tell these runs apart; None when it can
    (or when it found no change: 'within noise' stands). A change whose sample sets lie
    far apart (far_apart) is told whatever the runs' noise flags."""
    if not judged(t) or not t.significant:
        return None
    why = _unsure(before, after)
    if why is None or far_apart(before, after):
        return None
    return why


def counted_anyway(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """For a change counted although a run is flagged noisy (far_apart overrode
    cannot_tell): what would have held it back and why it is counted; None otherwise."""
    if not judged(t) or not t.significant:
        return None
    why = _unsure(before, after)
    far = far_apart(before, after) if why else None
    return f"{why}; but {far}" if far else None


def trust_notes(matches) -> list[str]:
    """A note for each match whose 'outside noise' cannot be trusted (Match.cannot_tell):
    why, and what to do; and for each counted only because its runs lie far apart
    (counted_anyway): why it is counted though a run is flagged noisy."""
    notes = []
    for m in matches:
        if m.cannot_tell:
            notes.append(f"{m.name}: {m.change_pct:+.1f} %, cannot tell from these samples "
                         f"({m.cannot_tell}): not counted as a change (nor by "
                         f"--fail-if-slower); {WHAT_TO_DO}")
            continue
        anyway = counted_anyway(m.noise, m.before, m.after) if m.change_pct is not None \
            else None
        if anyway:
            notes.append(f"{m.name}: {m.change_pct:+.1f} %, counted as a change ({anyway})")
    return notes
