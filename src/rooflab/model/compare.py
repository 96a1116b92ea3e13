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
from dataclasses import dataclass, replace
from functools import cached_property

from ..errors import InputError
from .compare_gate import (
    exceeds,
    gate_notes,
    noise_reason,
    run_change_pct,
    run_regressed,
    total_caveat,
)
from .compare_merge import ai as _ai
from .compare_merge import merge_by_name, untestable
from .compare_notes import (
    bimodal_note,
    calls_note,
    grouped_notes,
    precision_note,
    predicted,
    predicted_notes,
    seconds_range,
    split_reason,
    summed_notes,
    untimed_notes,
    work_note,
)
from .compare_trust import cannot_tell, judged
from .display import pretty
from .display_results import comparison_text
from .kernel import Kernel
from .mann_whitney import UTest, u_test


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
        installed, rooflab's count to the same p where not (mann_whitney.u_test). None too
        where a side's samples do not describe its total (compare_merge.untestable)."""
        b, a = self.before, self.after
        if (self.speedup is None or not b.samples or not a.samples or untestable(b)
                or untestable(a)):
            return None
        return u_test([s * b.calls for s in b.samples], [s * a.calls for s in a.samples])

    @property
    def cannot_tell(self) -> str | None:
        """Why an 'outside noise' verdict cannot be trusted (compare_trust), or a 'within
        noise' one (a run's samples split into two groups: the U test compared mixtures,
        compare_notes.split_reason); else None."""
        return cannot_tell(self.noise, self.before, self.after) or (
            split_reason(self) if self.within_noise else None)

    @property
    def within_noise(self) -> bool | None:
        """True when the U test cannot tell the runs apart (p >= ALPHA), False when it can;
        None when there are no samples, or fewer than MIN_TRUSTED_SAMPLES a side (whatever
        their p: compare_trust.judged), or samples that do not describe the total."""
        t = self.noise
        if not judged(t):
            return None
        return not t.significant

    @property
    def predicted(self) -> bool:
        """Whether a side's time is a what-if prediction (derived), not measured."""
        return predicted(self.before) or predicted(self.after)

    @property
    def speedup_range(self) -> tuple[float, float] | None:
        """(low, high) speed-up where a side's time is a what-if range; None otherwise."""
        rb = seconds_range(self.before) or (self.before.seconds,) * 2
        ra = seconds_range(self.after) or (self.after.seconds,) * 2
        if self.speedup is None or (rb[0] == rb[1] and ra[0] == ra[1]):
            return None
        return rb[0] / ra[1], rb[1] / ra[0]


def _rate(k: Kernel) -> float | None:
    return k.total_flop / k.seconds if k.seconds and k.total_flop > 0 else None


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
    def apart(self) -> frozenset[int]:
        """ids of the kernels that are another phase's whole step on their side (an llm
        file's --ttft-ms prefill beside its decode kernels: choose.own_steps), left out of
        the totals: a 9 ms TPOT and a 120 ms TTFT are no 129 ms run (s35 E). Their rows
        stay."""
        from .choose import own_steps, split_whole_steps

        out: set[int] = set()
        for side in ([m.before for m in self.matches] + list(self.only_before),
                     [m.after for m in self.matches] + list(self.only_after)):
            out |= {id(k) for k in own_steps(*split_whole_steps(side))[1]}
        return frozenset(out)

    @property
    def totalled(self) -> tuple[Match, ...]:
        """The timed matches the totals add: `timed` less another phase's steps."""
        apart = self.apart
        return tuple(m for m in self.timed
                     if id(m.before) not in apart and id(m.after) not in apart)

    @property
    def total_before_s(self) -> float:
        return sum(m.before.seconds or 0.0 for m in self.totalled)

    @property
    def total_after_s(self) -> float:
        return sum(m.after.seconds or 0.0 for m in self.totalled)

    @property
    def speedup(self) -> float | None:
        """Over the matched kernels only."""
        return self.total_before_s / self.total_after_s if self.total_after_s else None

    def total_range(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """((before low, high), (after low, high)) of the matched totals where a side's
        times are what-if ranges (compare_notes.seconds_range); None otherwise."""
        if not any(m.speedup_range for m in self.totalled):
            return None
        ends = []
        for side in ("before", "after"):
            ks = [getattr(m, side) for m in self.totalled]
            ends.append((sum((seconds_range(k) or (k.seconds,) * 2)[0] for k in ks),
                         sum((seconds_range(k) or (k.seconds,) * 2)[1] for k in ks)))
        return ends[0], ends[1]

    @property
    def run_before_s(self) -> float:
        """The first run's whole time: every timed kernel, matched or not (review s19 r5
        F7: a kernel only in one run is outside the matched total, and can hide there)."""
        apart = self.apart
        return sum(k.seconds or 0.0 for k in [m.before for m in self.matches]
                   + list(self.only_before) if id(k) not in apart)

    @property
    def run_after_s(self) -> float:
        apart = self.apart
        return sum(k.seconds or 0.0 for k in [m.after for m in self.matches]
                   + list(self.only_after) if id(k) not in apart)

    def regressions(self, pct: float) -> tuple[Match, ...]:
        """Matched kernels whose time grew by more than `pct` percent, outside the noise:
        a change the U test finds within the noise is not one; a kernel whose noise could
        not be judged (no or too few samples) is gated on its change alone."""
        return tuple(m for m in self.matches
                     if exceeds(m.change_pct, pct)
                     and m.within_noise is not True and m.cannot_tell is None)

    def within_noise(self, pct: float) -> tuple[Match, ...]:
        """Matched kernels slower by more than `pct` percent whose change is within the
        noise: what the gate let pass."""
        return tuple(m for m in self.matches
                     if exceeds(m.change_pct, pct) and m.within_noise is True
                     and m.cannot_tell is None)


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
    _refuse_shared_targets(rename)
    notes = summed_notes(before, "first") + summed_notes(after, "second")
    if len(b) == 1 and len(a) == 1 and not rename and b[0].name != a[0].name:
        rename = {b[0].name: a[0].name}
        notes.append(f"one kernel in each run: matched '{b[0].name}' with '{a[0].name}'")
    if marked := _marked_pairs(b, a, rename):
        rename = {**rename, **marked}
        (old, new), more = next(iter(marked.items())), len(marked) - 1
        notes.append(f"matched by name and whatif's [old->new] mark: '{old}' with '{new}'"
                     f"{f' and {more} more' if more else ''}")
    # a --map target is taken by its OLD: the first run's kernel of that name (not itself
    # mapped) no longer matches it by name, or the second run's kernel was matched twice
    # (counted twice in total_after_s, its OLD's own kernel in neither; review s19 r2 F23)
    claimed = {new: old for old, new in rename.items() if new != old}
    matches, only_before, used = [], [], set()
    for k in b:
        name = rename.get(k.name, k.name)
        other = after_by.get(name)
        if k.name not in rename and name in claimed:
            notes.append(f"{k.name}: not matched by name: --map {claimed[name]}={name} "
                         f"pairs the second run's '{name}' with the first run's "
                         f"'{claimed[name]}'")
            other = None
        # no second first-run kernel reaches a name in `used`: both sides are merged by
        # name, _refuse_shared_targets keeps two --map sources off one target, and a
        # first-run kernel whose name is a --map target is unmatched just above
        if other is None:
            only_before.append(k)
            continue
        used.add(name)
        matches.append(Match(name, k, other))
        notes += (calls_note(matches[-1]) + precision_note(matches[-1])
                  + bimodal_note(matches[-1]))
    only_after = tuple(k for k in a if k.name not in used)
    notes += untimed_notes(matches)
    notes += [n for m in matches if (n := work_note(m))]
    notes += predicted_notes(matches)
    notes = grouped_notes(notes, {k.name for k in (*b, *a)} | {m.name for m in matches})
    c = Comparison(tuple(matches), tuple(only_before), only_after, tuple(notes))
    caveat = total_caveat(c)
    return replace(c, notes=(*notes, caveat)) if caveat else c


def _marked_pairs(b: Sequence[Kernel], a: Sequence[Kernel],
                  rename: Mapping[str, str]) -> dict[str, str]:
    """The first run's kernels whose name the second run has only with whatif's dtype mark
    ('copy_fp64' -> 'copy_fp64 [fp64->fp16]'), one marked kernel a name: `whatif -o` keeps
    each name and marks the dtype it changed, so `compare b.json w.json` (docs/json.md)
    matched nothing and asked for a --map per kernel (s37 A)."""
    from .dtype_names import split_mark

    names = {k.name for k in a}
    by_base: dict[str, list[str]] = {}
    for k in a:
        base, clauses = split_mark(k.name)
        if clauses and base not in names:
            by_base.setdefault(base, []).append(k.name)
    taken = set(rename.values())
    return {k.name: by_base[k.name][0] for k in b
            if k.name not in rename and k.name not in names
            and len(by_base.get(k.name, ())) == 1 and by_base[k.name][0] not in taken}


def _refuse_shared_targets(rename: Mapping[str, str]) -> None:
    """Two OLDs mapped onto one NEW would match one kernel of the second run twice."""
    olds: dict[str, list[str]] = {}
    for old, new in rename.items():
        olds.setdefault(new, []).append(old)
    shared = {new: o for new, o in olds.items() if len(o) > 1}
    if shared:
        new, o = next(iter(shared.items()))
        raise InputError(f"--map pairs {' and '.join(repr(x) for x in o)} with one kernel "
                         f"of the second run, '{new}'; a kernel is matched once: map one "
                         f"of them, or merge them under one name in the first run's file")


def _some(names: Iterable[str], limit: int = 10) -> str:
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _seconds_provenance(k: Kernel) -> str | None:
    return k.provenance.get("seconds", "measured") if k.seconds is not None else None


def _listed(pair) -> list[float] | None:
    return list(pair) if pair else None


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
                     "within_noise": m.within_noise, "cannot_tell": m.cannot_tell,
                     # a what-if document's times are predicted, not measured (r5 F3)
                     "before_s_provenance": _seconds_provenance(m.before),
                     "after_s_provenance": _seconds_provenance(m.after),
                     "before_s_range": _listed(seconds_range(m.before)),
                     "after_s_range": _listed(seconds_range(m.after)),
                     "speedup_range": _listed(m.speedup_range),
                     "precision_before": m.before.precision if m.before.total_flop else None,
                     "precision_after": m.after.precision if m.after.total_flop else None})
    from .schema import SCHEMA_VERSION

    span = c.total_range()
    d = {"schema_version": SCHEMA_VERSION, "matches": rows,
         "only_before": [k.name for k in c.only_before],
         "only_after": [k.name for k in c.only_after],
         # their times: outside the matched total, where a slower run could hide (r5 F7)
         "only_before_s": {k.name: k.seconds for k in c.only_before},
         "only_after_s": {k.name: k.seconds for k in c.only_after},
         # no kernel timed in both runs: no totals (0 s would read as a measured time)
         "total_before_s": c.total_before_s if c.timed else None,
         "total_after_s": c.total_after_s if c.timed else None,
         "total_before_s_range": _listed(span[0] if span else None),
         "total_after_s_range": _listed(span[1] if span else None),
         "speedup": c.speedup,
         "run_before_s": c.run_before_s if c.timed else None,
         "run_after_s": c.run_after_s if c.timed else None,
         # as the gate judges it: a match the noise test let pass at its first-run time
         "run_change_pct": run_change_pct(c),
         "notes": list(c.notes)}
    if fail_pct is not None:
        d["fail_if_slower_pct"] = fail_pct
        d["regressions"] = [m.name for m in c.regressions(fail_pct)]
        # the whole run slower by more than PCT (s21 r7 F3): exit 1 too
        d["run_regressed"] = run_regressed(c, fail_pct)
        d["within_noise"] = [m.name for m in c.within_noise(fail_pct)]
        d["notes"] += gate_notes(c, fail_pct)
    return d
