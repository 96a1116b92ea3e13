"""What compare's --fail-if-slower PCT judged, and how: the threshold test, why a match's
noise was not judged, and the notes beside the gate. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import fmt_seconds
from .compare_merge import untestable
from .compare_trust import MIN_TRUSTED_SAMPLES, trust_notes
from .mann_whitney import ALPHA, smallest_p

if TYPE_CHECKING:
    from .compare import Comparison, Match

# Percent. 100 us -> 110 us is 10.000000000000009 % in floats: "+10.0 %" failed
# --fail-if-slower 10, documented as "more than PCT" (review s19 r5 F4); a change counts
# as over PCT only beyond this (far below the 0.1 % the table shows).
PCT_EPSILON = 1e-6


def exceeds(change_pct: float | None, pct: float) -> bool:
    """Whether a change is slower by more than `pct` percent (float rounding aside)."""
    return change_pct is not None and change_pct > pct + PCT_EPSILON


def gate_notes(c: Comparison, pct: float) -> list[str]:
    """What --fail-if-slower PCT could and could not judge: the slower kernels it let pass
    as noise, and the timed kernels it gated on their change alone (no samples in a run,
    too few for the U test, or samples that do not describe the total)."""
    notes = [f"{m.name}: {m.change_pct:+.1f} % is within the noise (U test p = "
             f"{m.noise.p_value:.2g} >= {ALPHA:g}, {m.noise.n_before} and "
             f"{m.noise.n_after} samples): not counted as slower"
             for m in c.within_noise(pct)]
    notes += trust_notes(c.matches)   # not counted as slower (regressions)
    unjudged = [m for m in c.timed if m.within_noise is None]
    if not unjudged:
        return notes
    bare = [m for m in unjudged if not m.before.samples and not m.after.samples
            and not _untestable(m)]
    if len(bare) == len(c.timed):
        return notes + ["no timing samples in both runs: --fail-if-slower could not judge "
                        "noise and gates each change as measured (time with rooflab.measure"
                        " or `rooflab bench`, which keep the samples)"]
    for m in unjudged:
        notes.append(f"{m.name}: {why_unjudged(m)}: noise not judged; gated on the change "
                     f"as measured")
    return notes


def noise_reason(m: Match) -> str | None:
    """Why the U test did not judge a timed match's noise (no samples, too few, not
    testable); None when it did, or when the match has no time on a side."""
    if m.within_noise is not None or m.change_pct is None:
        return None
    return why_unjudged(m)


def _untestable(m: Match) -> str | None:
    for side, k in (("first", m.before), ("second", m.after)):
        if (why := untestable(k)) is not None:
            return f"not testable: in the {side} run {why}"
    return None


def why_unjudged(m: Match) -> str:
    if (why := _untestable(m)) is not None:
        return why
    nb, na = len(m.before.samples), len(m.after.samples)
    if not nb or not na:
        side = ("either run" if not (nb or na) else "the first run" if not nb
                else "the second run")
        return f"no timing samples in {side}"
    if smallest_p(nb, na) >= ALPHA:
        return (f"{nb} and {na} samples (the U test's smallest p with so few is "
                f"{smallest_p(nb, na):.2g}, not below {ALPHA:g})")
    return (f"{nb} and {na} samples, fewer than {MIN_TRUSTED_SAMPLES} a side (p "
            f"{m.noise.p_value:.2g}): too few to tell a change from load moving between "
            f"runs; re-run both with `rooflab bench --samples {MIN_TRUSTED_SAMPLES}` (or "
            f"rooflab.measure(..., samples={MIN_TRUSTED_SAMPLES}))")


def total_caveat(c: Comparison) -> str | None:
    """A note when most of the matched total's change comes from matches the table calls
    within noise or cannot tell (review s19 r5 F8: a re-run of identical code read 1.52x,
    2.91x of it from a 'cannot tell' kernel); None otherwise."""
    moved = c.total_before_s - c.total_after_s
    if len(c.timed) < 2 or moved == 0:     # one match: its own noise note says it
        return None
    doubtful = [m for m in c.timed if m.within_noise is True or m.cannot_tell]
    part = sum(m.before.seconds - m.after.seconds for m in doubtful)
    if not doubtful or abs(part) * 2 <= abs(moved):
        return None
    names = ", ".join(m.name for m in doubtful[:3]) + (", ..." if len(doubtful) > 3 else "")
    return (f"the matched total moved {fmt_seconds(abs(moved))}, and {fmt_seconds(abs(part))}"
            f" of change is in matches within the noise or that cannot be told apart "
            f"({names}): the total speed-up is mostly not a change these samples tell")


# The whole run under --fail-if-slower (s21 r7 F3): a kernel gated only where matched by
# name let a run 113x slower pass when its time moved into a new, renamed or split kernel,
# or into one that lost its time. The gate also compares the runs' whole times.

def _let_pass(m: Match) -> bool:
    """A timed match whose change the noise test let pass (within noise, cannot tell)."""
    return m.speedup is not None and (m.within_noise is True or m.cannot_tell is not None)


def gate_run_s(c: Comparison) -> tuple[float, float]:
    """(before, after) seconds of the whole run as the gate judges it: the kernels timed in
    both runs plus those in one run only (new, gone, renamed, split), a matched kernel
    whose change the noise test let pass counted at its first-run time in both. A matched
    kernel timed in one run only is left out of both sides (its other time is unknown,
    not 0 s)."""
    before = c.total_before_s + sum(k.seconds or 0.0 for k in c.only_before)
    after = (c.total_after_s + sum(k.seconds or 0.0 for k in c.only_after)
             - sum(m.after.seconds - m.before.seconds for m in c.timed if _let_pass(m)))
    return before, after


def run_change_pct(c: Comparison) -> float | None:
    """The whole run's time change in percent (+10: 10 % slower), of gate_run_s; None
    where no matched kernel has a time in both runs."""
    if not c.timed:
        return None
    before, after = gate_run_s(c)
    return 100.0 * (after / before - 1.0) if before > 0 else None


def run_regressed(c: Comparison, pct: float) -> bool:
    """Whether the whole run got slower by more than `pct` percent (run_change_pct)."""
    return exceeds(run_change_pct(c), pct)


def run_words(c: Comparison) -> str:
    """'8 ms -> 908 ms (+11250.0 %; only in the second run: k4_new (900 ms))': the whole
    run's move as the gate judged it, and the kernels outside the matched ones."""
    before, after = gate_run_s(c)
    change = run_change_pct(c)
    who = "".join(f"; {w}" for w in membership(c))
    return (f"{fmt_seconds(before)} -> {fmt_seconds(after)} ("
            + (f"{change:+.1f} %" if change is not None else "no change") + f"{who})")


def membership(c: Comparison) -> list[str]:
    """The kernels the matched-kernel gate does not see: in one run only (new, gone,
    renamed, split), or matched but timed in one run only."""
    out = []
    for side, ks in (("first", c.only_before), ("second", c.only_after)):
        if ks:
            out.append(f"only in the {side} run: " + _listed(
                [f"{k.name} ({fmt_seconds(k.seconds)})" if k.seconds else f"{k.name} "
                 f"(no time)" for k in ks]))
    lost = [m for m in c.matches if m.speedup is None and (m.before.seconds
                                                           or m.after.seconds)]
    if lost:
        out.append("timed in one run only: " + _listed(
            [f"{m.name} ({'second' if m.before.seconds else 'first'} run untimed)"
             for m in lost]))
    return out


def membership_warning(c: Comparison, pct: float) -> str | None:
    """The `warning:` of a gate with kernels it cannot compare one to one (None without)."""
    who = membership(c)
    if not who:
        return None
    change = run_change_pct(c)
    how = []
    if c.only_before or c.only_after:
        how.append("a kernel in one run only counts in the whole-run total, which the gate "
                   "also judges" + ("" if change is None else f" (it moved {change:+.1f} %)"))
    if len(who) > bool(c.only_before) + bool(c.only_after):
        how.append("a kernel timed in one run only is left out of the gate")
    renamed = ("; pair a renamed kernel with --map OLD=NEW"
               if c.only_before and c.only_after else "")
    return (f"--fail-if-slower {pct:g}: not compared kernel by kernel ({'; '.join(who)}): "
            + "; ".join(how) + renamed)


def _listed(items: list[str], limit: int = 5) -> str:
    more = f", ... ({len(items)} in all)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
