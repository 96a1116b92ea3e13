"""Whether compare's U test verdict 'outside noise' can be trusted between two runs. Pure.

The Mann-Whitney U test sees the noise inside each run only: load that moved between two
runs (minutes apart on a shared machine) shifts every sample of one run, and the test
then calls an unchanged kernel a significant change (review r4 F2: the same numba matmul
re-run read 602 ms then 391 ms, 5 vs 5 samples without overlap, p = 2 / C(10, 5) =
0.0079, 'outside noise', and --fail-if-slower 5 failed it). So a verdict is 'cannot
tell' where the test had nothing more to say than 'no overlap' with few samples, or where
the timer flagged a run noisy.
"""

from __future__ import annotations

from .kernel import Kernel
from .mann_whitney import UTest, smallest_p

# Fewer samples a side than this, at the smallest p they allow, is only "the two sets do
# not overlap", which one shift of the whole run's load gives (review r4 F2 suggests 9:
# at 9 vs 9 no overlap is p = 2 / C(18, 9) = 4.1e-5).
MIN_TRUSTED_SAMPLES = 9
# The advice when the verdict cannot be trusted.
WHAT_TO_DO = ("re-run both with more samples (>= 9 each) on a quiet machine, or time "
              "before and after interleaved in one process")


def flagged_noisy(k: Kernel) -> bool:
    """The timer's own 'noisy' flag (bench/check.py: samples spread > 5 % IQR/median)."""
    flags = k.meta.get("flags")
    return isinstance(flags, (list, tuple)) and "noisy" in flags


def cannot_tell(t: UTest | None, before: Kernel, after: Kernel) -> str | None:
    """Why a significant U test (p < ALPHA) cannot tell these runs apart; None when it can
    (or when it found no change: 'within noise' stands)."""
    if t is None or not t.significant:
        return None
    noisy = [side for side, k in (("first", before), ("second", after)) if flagged_noisy(k)]
    if noisy:
        return (f"the {' and '.join(noisy)} run is flagged noisy (other load moved its "
                f"samples); the U test sees only the noise within each run")
    few = min(t.n_before, t.n_after)
    if few < MIN_TRUSTED_SAMPLES and t.p_value <= smallest_p(t.n_before, t.n_after) * 1.001:
        return (f"p {t.p_value:.2g} is the smallest {t.n_before} and {t.n_after} samples "
                f"allow: the sets only do not overlap, which load shifting between runs "
                f"gives as well")
    return None


def trust_notes(matches) -> list[str]:
    """A note for each match whose 'outside noise' cannot be trusted (Match.cannot_tell):
    why, and what to do."""
    return [f"{m.name}: {m.change_pct:+.1f} %, cannot tell from these samples "
            f"({m.cannot_tell}): not counted as a change (nor by --fail-if-slower); "
            f"{WHAT_TO_DO}" for m in matches if m.cannot_tell]
