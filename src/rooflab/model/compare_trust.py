"""Whether compare's U test verdict 'outside noise' can be trusted between two runs. Pure.

The Mann-Whitney U test sees the noise inside each run only: load that moved between two
runs (minutes apart on a shared machine) shifts every sample of one run, and the test
then calls an unchanged kernel a significant change (review r4 F2: the same numba matmul
re-run read 602 ms then 391 ms, 5 vs 5 samples without overlap, p = 2 / C(10, 5) =
0.0079, 'outside noise', and --fail-if-slower 5 failed it). So a verdict is 'cannot
tell' where the test had nothing more to say than 'no overlap' with few samples, or where
the timer flagged a run noisy; unless the two sample sets lie further apart than load
moving between runs is taken to make (FAR_APART) and than either run's own spread: a
tiled matmul 3.16x faster, 5 samples 48.6-62.0 ms before and 8 at 14.5-16.7 ms after, was
'cannot tell' for a noisy flag (review r6 F4).
"""

from __future__ import annotations

from .kernel import Kernel
from .mann_whitney import UTest, smallest_p

# Fewer samples a side than this, at the smallest p they allow, is only "the two sets do
# not overlap", which one shift of the whole run's load gives (review r4 F2 suggests 9:
# at 9 vs 9 no overlap is p = 2 / C(18, 9) = 4.1e-5).
MIN_TRUSTED_SAMPLES = 9
# The sets' gap (the slower run's fastest sample over the faster run's slowest, each scaled
# by its calls) from which a change is counted even when a run is noisy or small: load
# moving between runs shifted an unchanged numba matmul 1.54x (review r4 F2, 602 -> 391
# ms); twice is beyond that with room. The gap must also exceed each run's own max/min.
FAR_APART = 2.0
# The advice when the verdict cannot be trusted.
WHAT_TO_DO = ("re-run both with more samples (>= 9 each) on a quiet machine, or time "
              "before and after interleaved in one process")


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


def _unsure(t: UTest, before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test alone cannot be trusted (a noisy run, or no more than 'no
    overlap' from few samples), before the size of the change is looked at."""
    noisy = [side for side, k in (("first", before), ("second", after)) if flagged_noisy(k)]
    if noisy:
        are = "runs are" if len(noisy) > 1 else "run is"
        return (f"the {' and '.join(noisy)} {are} flagged noisy (other load moved its "
                f"samples); the U test sees only the noise within each run")
    few = min(t.n_before, t.n_after)
    if few < MIN_TRUSTED_SAMPLES and t.p_value <= smallest_p(t.n_before, t.n_after) * 1.001:
        return (f"p {t.p_value:.2g} is the smallest {t.n_before} and {t.n_after} samples "
                f"allow: the sets only do not overlap, which load shifting between runs "
                f"gives as well")
    return None


def cannot_tell(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test (p < ALPHA) cannot tell these runs apart; None when it can
    (or when it found no change: 'within noise' stands). A change whose sample sets lie
    far apart (far_apart) is told whatever the runs' noise flags and sample counts."""
    if t is None or not t.significant:
        return None
    why = _unsure(t, before, after)
    if why is None or far_apart(before, after):
        return None
    return why


def counted_anyway(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """For a change counted although a run is noisy or small (far_apart overrode
    cannot_tell): what would have held it back and why it is counted; None otherwise."""
    if t is None or not t.significant:
        return None
    why = _unsure(t, before, after)
    far = far_apart(before, after) if why else None
    return f"{why}; but {far}" if far else None


def trust_notes(matches) -> list[str]:
    """A note for each match whose 'outside noise' cannot be trusted (Match.cannot_tell):
    why, and what to do; and for each counted only because its runs lie far apart
    (counted_anyway): why it is counted though a run is noisy or small."""
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
