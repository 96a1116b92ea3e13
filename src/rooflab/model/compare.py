"""Compare two runs (before/after an optimisation, or two machines): matched speed-ups.

Kernels are matched by name after an optional rename map (old name -> new name). Kernels
of the same name within one run (several launches) are added up first. When each run holds
exactly one kernel, the two are matched whatever their names (an optimisation step often
renames the kernel, as the NERSC GPP steps do). Pure: no I/O.

Noise: where both runs kept a kernel's timing samples, a two-sided Mann-Whitney U test
(model.mann_whitney; Google benchmark's compare.py runs the same test on its repetitions)
says whether its change is outside the noise; `regressions` counts only those, so a gate does
not fail on two noisy medians. Without enough samples the change is gated as measured
and `gate_notes` says noise could not be judged.

Floors: two untimed `rooflab llm --json` documents (fp16 vs int4, one device vs another)
carry no seconds but each kernel's roofline work floor; `floor_moves` compares those, so
the change the counts predict is shown rather than "no speed-up". They are floors, not
measurements: the gate never reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..errors import InputError
from ..units import fmt_seconds
from .compare_trust import cannot_tell, trust_notes
from .display import pretty
from .display_results import comparison_text
from .kernel import Kernel, sum_counts
from .mann_whitney import ALPHA, UTest, smallest_p, u_test


@dataclass(frozen=True)
class Match:
    name: str               # the name in the 'after' run
    before: Kernel
    after: Kernel

    @property
    def speedup(self) -> float | None:
        """before seconds / after seconds: > 1 is faster."""
        b, a = self.before.seconds, self.after.seconds
        return b / a if b and a else None

    @property
    def change_pct(self) -> float | None:
        """Time change in percent: +10 means 10 % slower."""
        b, a = self.before.seconds, self.after.seconds
        return 100.0 * (a / b - 1.0) if b and a else None

    def ai_move(self, level: str = "DRAM") -> tuple[float | None, float | None]:
        return _ai(self.before, level), _ai(self.after, level)

    @property
    def work_change_pct(self) -> float | None:
        """FLOP change in percent (-58 means 58 % less work); None without FLOP on a side.
        A speed-up from less work is not a better use of the machine (review 12b I)."""
        b, a = self.before.total_flop, self.after.total_flop
        return 100.0 * (a / b - 1.0) if b > 0 and a > 0 else None

    @property
    def rates(self) -> tuple[float | None, float | None]:
        """Achieved FLOP/s before and after (FLOP / seconds; None without either)."""
        return _rate(self.before), _rate(self.after)

    @property
    def rate_change_pct(self) -> float | None:
        """Achieved FLOP/s change in percent: what is left of the speed-up once the work
        change is taken out (speed-up = work ratio x rate ratio, inverted)."""
        b, a = self.rates
        return 100.0 * (a / b - 1.0) if b and a else None

    @cached_property
    def noise(self) -> UTest | None:
        """The U test of the two runs' samples, each scaled to the kernel's total (a sample
        is one call's seconds; x calls, so runs of different call counts compare as the
        change does); None when a side has no samples or no time. scipy's test where it is
        installed, rooflab's count to the same p where not (mann_whitney.u_test)."""
        b, a = self.before, self.after
        if self.speedup is None or not b.samples or not a.samples:
            return None
        return u_test([s * b.calls for s in b.samples], [s * a.calls for s in a.samples])

    @property
    def cannot_tell(self) -> str | None:
        """Why an 'outside noise' verdict cannot be trusted (compare_trust), else None."""
        return cannot_tell(self.noise, self.before, self.after)

    @property
    def within_noise(self) -> bool | None:
        """True when the U test cannot tell the runs apart (p >= ALPHA), False when it can;
        None when there are no samples, or too few for any outcome to reach ALPHA."""
        t = self.noise
        if t is None or not t.resolvable:
            return None
        return not t.significant


@dataclass(frozen=True)
class FloorMove:
    """One kernel's (or the whole step's) work floor in each run: derived, not measured."""

    name: str
    before_s: float
    after_s: float

    @property
    def speedup(self) -> float | None:
        """before floor / after floor: > 1 is a lower floor."""
        return self.before_s / self.after_s if self.before_s > 0 and self.after_s > 0 else None


def floor_moves(c: Comparison, before: Mapping[str, float], after: Mapping[str, float]
                ) -> tuple[FloorMove, ...]:
    """The matched kernels' work floors (seconds by kernel name in each run, as an untimed
    llm document's analysis[].floor_s gives them); kernels without a floor on a side are
    left out."""
    return tuple(FloorMove(m.name, before[m.before.name], after[m.name]) for m in c.matches
                 if m.before.name in before and m.name in after)


def _rate(k: Kernel) -> float | None:
    return k.total_flop / k.seconds if k.seconds and k.total_flop > 0 else None


def _ai(k: Kernel, level: str) -> float | None:
    b = k.bytes.get(level)
    return k.total_flop / b if b else None


@dataclass(frozen=True)
class Comparison:
    matches: tuple[Match, ...]
    only_before: tuple[Kernel, ...]
    only_after: tuple[Kernel, ...]
    notes: tuple[str, ...] = ()

    # a notebook shows the CLI's row, not every field (display_results)
    _repr_pretty_ = pretty(comparison_text)

    @property
    def timed(self) -> tuple[Match, ...]:
        """Matches with a time on both sides: the only ones the totals can compare (a kernel
        timed on one side only would count as 0 s on the other)."""
        return tuple(m for m in self.matches if m.speedup is not None)

    @property
    def total_before_s(self) -> float:
        return sum(m.before.seconds or 0.0 for m in self.timed)

    @property
    def total_after_s(self) -> float:
        return sum(m.after.seconds or 0.0 for m in self.timed)

    @property
    def speedup(self) -> float | None:
        """Over the matched kernels only."""
        return self.total_before_s / self.total_after_s if self.total_after_s else None

    def regressions(self, pct: float) -> tuple[Match, ...]:
        """Matched kernels whose time grew by more than `pct` percent, outside the noise:
        a change the U test finds within the noise is not one; a kernel whose noise could
        not be judged (no or too few samples) is gated on its change alone."""
        return tuple(m for m in self.matches
                     if m.change_pct is not None and m.change_pct > pct
                     and m.within_noise is not True and m.cannot_tell is None)

    def within_noise(self, pct: float) -> tuple[Match, ...]:
        """Matched kernels slower by more than `pct` percent whose change is within the
        noise: what the gate let pass."""
        return tuple(m for m in self.matches
                     if m.change_pct is not None and m.change_pct > pct
                     and m.within_noise is True)


def merge_by_name(kernels: Iterable[Kernel]) -> tuple[Kernel, ...]:
    """Kernels of the same name added up: FLOP, bytes, seconds, calls, samples. A kernel
    file's repeated rows, which the reader names 'conv #2' apart (meta renamed_from), count
    under their own name again: here they are launches of one kernel."""
    out: dict[str, Kernel] = {}
    for k in kernels:
        name = k.meta.get("renamed_from", k.name)
        cur = out.get(name)
        if cur is None:
            out[name] = k if name == k.name else k.with_(name=name)
            continue
        seconds = (cur.seconds + k.seconds) if cur.seconds and k.seconds else None
        out[name] = cur.with_(flop=sum_counts((cur.flop, k.flop)),
                                bytes=sum_counts((cur.bytes, k.bytes)), seconds=seconds,
                                calls=cur.calls + k.calls, samples=cur.samples + k.samples)
    return tuple(out.values())


def parse_rename(items: Sequence[str]) -> dict[str, str]:
    """['old=new', ...] -> {'old': 'new'}; a malformed item raises InputError."""
    out = {}
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise InputError(f"--map takes OLD=NEW (a kernel renamed between the runs); "
                             f"got '{item}'")
        out[old.strip()] = new.strip()
    return out


def compare_kernels(before: Iterable[Kernel], after: Iterable[Kernel],
                    rename: Mapping[str, str] | None = None) -> Comparison:
    """Match the runs' kernels by (renamed) name."""
    rename = dict(rename or {})
    before, after = tuple(before), tuple(after)
    b = merge_by_name(before)
    a = merge_by_name(after)
    after_by = {k.name: k for k in a}
    unknown = [old for old in rename if old not in {k.name for k in b}]
    if unknown:
        raise InputError(f"--map names {', '.join(repr(u) for u in unknown)}, not a kernel of "
                         f"the first run (it has: {', '.join(k.name for k in b)})")
    # a mistyped NEW left both kernels unmatched: the --fail-if-slower gate passed a
    # kernel it was told to watch, without a word
    unknown = [new for new in rename.values() if new not in after_by]
    if unknown:
        raise InputError(f"--map names {', '.join(repr(u) for u in unknown)}, not a kernel of "
                         f"the second run (it has: {_some(k.name for k in a)})")
    notes = _summed_notes(before, "first") + _summed_notes(after, "second")
    if len(b) == 1 and len(a) == 1 and not rename and b[0].name != a[0].name:
        rename = {b[0].name: a[0].name}
        notes.append(f"one kernel in each run: matched '{b[0].name}' with '{a[0].name}'")
    matches, only_before, used = [], [], set()
    for k in b:
        name = rename.get(k.name, k.name)
        other = after_by.get(name)
        if other is None:
            only_before.append(k)
            continue
        used.add(name)
        matches.append(Match(name, k, other))
        notes += _calls_note(matches[-1])
    only_after = tuple(k for k in a if k.name not in used)
    notes += _untimed_notes(matches)
    notes += [n for m in matches if (n := work_note(m))]
    return Comparison(tuple(matches), tuple(only_before), only_after, tuple(notes))


def _some(names: Iterable[str], limit: int = 10) -> str:
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


# A matched kernel whose FLOP changed by more than this (percent) did different work: its
# speed-up is partly or wholly less (or more) work, not a faster kernel; a note says which.
WORK_NOTE_PCT = 5.0


def work_note(m: Match) -> str:
    """'k: 2.48x faster; FLOP x0.42, DRAM bytes x0.32: mostly less work (FLOP); achieved
    FLOP/s +4.4 %: the runs did different work ...' when the FLOP moved by more than
    WORK_NOTE_PCT ('' otherwise): the words and the rule of `rooflab report`'s steps
    findings (report/steps.py), for the before/after verb."""
    work = m.work_change_pct
    if work is None or abs(work) <= WORK_NOTE_PCT or m.speedup is None:
        return ""
    flop = 1.0 + work / 100.0
    db, da = m.before.bytes.get("DRAM"), m.after.bytes.get("DRAM")
    dram = da / db if da and db else 1.0
    moved = f"FLOP x{flop:.2f}" + (f", DRAM bytes x{dram:.2f}" if da and db else "")
    rate = m.rate_change_pct
    rate_words = f"; achieved FLOP/s {rate:+.1f} %" if rate is not None else ""
    speed = m.speedup
    if speed > 1:
        why = ("less work (FLOP)" if abs(flop - 1) > abs(dram - 1) / 4 and flop < 1
               else "fewer DRAM bytes" if dram < 1 else "a faster kernel")
        head = f"{speed:.2f}x faster; {moved}: mostly {why}"
    else:
        head = f"{speed:.2f}x ({'slower' if speed < 1 else 'no faster'}); {moved}"
    return (f"{m.name}: {head}{rate_words}: the runs did different work (FLOP {work:+.1f} %), "
            f"so the speed-up is not the kernel's alone")


def _untimed_notes(matches: Sequence[Match]) -> list[str]:
    """A matched kernel without a time in one run has no speed-up, so the totals and the
    --fail-if-slower gate leave it out; say so, or a gate passes it without a word. When
    no match is timed at all the caller says that once (a note per kernel would be noise)."""
    if not any(m.speedup is not None for m in matches):
        return []
    notes = []
    for m in matches:
        if m.speedup is not None:
            continue
        where = ("either run" if not (m.before.seconds or m.after.seconds) else
                 "the first run" if not m.before.seconds else "the second run")
        notes.append(f"{m.name}: no time in {where}: no speed-up; left out of the totals "
                     f"and of --fail-if-slower")
    return notes


def _summed_notes(kernels: Sequence[Kernel], side: str) -> list[str]:
    """Name-matching adds up same-named entries of one run; say so, since two different
    kernels sharing a name (or one file listed twice) would otherwise pass silently."""
    counts: dict[str, int] = {}
    untimed: dict[str, int] = {}
    for k in kernels:
        name = k.meta.get("renamed_from", k.name)     # as merge_by_name groups them
        counts[name] = counts.get(name, 0) + 1
        untimed[name] = untimed.get(name, 0) + (not k.seconds)
    # merge_by_name keeps a time only when every entry has one
    return [f"{name}: {n} entries of this name in the {side} run, added up (FLOP, bytes, "
            f"seconds, calls)" + (f"; {untimed[name]} without a time, so the sum has none"
                                  if 0 < untimed[name] < n else "")
            for name, n in counts.items() if n > 1]


def _calls_note(m: Match) -> list[str]:
    """Speed-ups compare totals; when the runs launched the kernel a different number of
    times (ncu --launch-count, more iterations profiled, a fused loop) the total alone
    misleads, so the per-call times are said beside it."""
    b, a = m.before, m.after
    if b.calls == a.calls or not b.seconds or not a.seconds:
        return []
    pb, pa = b.seconds / b.calls, a.seconds / a.calls
    return [f"{m.name}: {b.calls} call(s) before, {a.calls} after: per call "
            f"{fmt_seconds(pb)} -> {fmt_seconds(pa)} ({pb / pa:.2f}x); the speed-up and "
            f"--fail-if-slower compare totals"]


def gate_notes(c: Comparison, pct: float) -> list[str]:
    """What --fail-if-slower PCT could and could not judge: the slower kernels it let pass
    as noise, and the timed kernels it gated on their change alone (no samples in a run,
    or too few for the U test to reach p < ALPHA)."""
    notes = [f"{m.name}: {m.change_pct:+.1f} % is within the noise (U test p = "
             f"{m.noise.p_value:.2g} >= {ALPHA:g}, {m.noise.n_before} and "
             f"{m.noise.n_after} samples): not counted as slower"
             for m in c.within_noise(pct)]
    notes += trust_notes(c.matches)   # not counted as slower (regressions)
    unjudged = [m for m in c.timed if m.within_noise is None]
    if not unjudged:
        return notes
    if len(unjudged) == len(c.timed) and all(m.noise is None for m in unjudged):
        return notes + ["no timing samples in both runs: --fail-if-slower could not judge "
                        "noise and gates each change as measured (time with rooflab.measure"
                        " or `rooflab bench`, which keep the samples)"]
    for m in unjudged:
        notes.append(f"{m.name}: {_why_unjudged(m)}: noise not judged; gated on the change "
                     f"as measured")
    return notes


def noise_reason(m: Match) -> str | None:
    """Why the U test did not judge a timed match's noise (no samples, too few); None when
    it did, or when the match has no time on a side (nothing to judge)."""
    if m.within_noise is not None or m.change_pct is None:
        return None
    return _why_unjudged(m)


def _why_unjudged(m: Match) -> str:
    nb, na = len(m.before.samples), len(m.after.samples)
    if not nb or not na:
        side = ("either run" if not (nb or na) else "the first run" if not nb
                else "the second run")
        return f"no timing samples in {side}"
    return (f"{nb} and {na} samples (the U test's smallest p with so few is "
            f"{smallest_p(nb, na):.2g}, not below {ALPHA:g})")


def floors_to_dict(moves: Sequence[FloorMove], step: FloorMove | None) -> dict:
    """The JSON's `floors` section: each matched kernel's work floor before and after, and
    the step's (its name says which: the TPOT or TTFT floor)."""
    def row(m: FloorMove) -> dict:
        return {"kernel": m.name, "before_floor_s": m.before_s, "after_floor_s": m.after_s,
                "speedup": m.speedup}

    return {"provenance": "derived", "kernels": [row(m) for m in moves],
            "step": row(step) if step is not None else None}


def comparison_to_dict(c: Comparison, fail_pct: float | None = None) -> dict:
    rows = []
    for m in c.matches:
        ai_b, ai_a = m.ai_move()
        # calls beside the totals: when the runs launched a kernel a different number of
        # times a dashboard needs them for the per-call time (the notes say it in words)
        rows.append({"kernel": m.name, "before_name": m.before.name,
                     "before_s": m.before.seconds, "after_s": m.after.seconds,
                     "before_calls": m.before.calls, "after_calls": m.after.calls,
                     "speedup": m.speedup, "change_pct": m.change_pct,
                     "ai_dram_before": ai_b, "ai_dram_after": ai_a,
                     # the work and the rate apart: a speed-up from fewer FLOP is not a
                     # faster kernel (speedup = (1 + rate change) / (1 + work change))
                     "flop_before": m.before.total_flop, "flop_after": m.after.total_flop,
                     "work_change_pct": m.work_change_pct,
                     "flop_per_s_before": m.rates[0], "flop_per_s_after": m.rates[1],
                     "rate_change_pct": m.rate_change_pct,
                     "samples_before": len(m.before.samples),
                     "samples_after": len(m.after.samples),
                     # a p-value no outcome of so few samples could push below ALPHA
                     # (1 vs 1: always 1.0) carries nothing: null, and the reason
                     "noise_p_value": m.noise.p_value if m.within_noise is not None
                     else None,
                     "noise_not_judged": noise_reason(m),
                     "within_noise": m.within_noise, "cannot_tell": m.cannot_tell})
    from .schema import SCHEMA_VERSION

    d = {"schema_version": SCHEMA_VERSION, "matches": rows,
         "only_before": [k.name for k in c.only_before],
         "only_after": [k.name for k in c.only_after],
         # no kernel timed in both runs: no totals (0 s would read as a measured time)
         "total_before_s": c.total_before_s if c.timed else None,
         "total_after_s": c.total_after_s if c.timed else None,
         "speedup": c.speedup, "notes": list(c.notes)}
    if fail_pct is not None:
        d["fail_if_slower_pct"] = fail_pct
        d["regressions"] = [m.name for m in c.regressions(fail_pct)]
        d["within_noise"] = [m.name for m in c.within_noise(fail_pct)]
        d["notes"] += gate_notes(c, fail_pct)
    return d
