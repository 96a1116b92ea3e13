"""Compare two runs (before/after an optimisation, or two machines): matched speed-ups.

Kernels are matched by name after an optional rename map (old name -> new name). Kernels
of the same name within one run (several launches) are added up first. When each run holds
exactly one kernel, the two are matched whatever their names (an optimisation step often
renames the kernel, as the NERSC GPP steps do). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..units import fmt_seconds
from .kernel import Kernel, sum_counts


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


def _ai(k: Kernel, level: str) -> float | None:
    b = k.bytes.get(level)
    return k.total_flop / b if b else None


@dataclass(frozen=True)
class Comparison:
    matches: tuple[Match, ...]
    only_before: tuple[Kernel, ...]
    only_after: tuple[Kernel, ...]
    notes: tuple[str, ...] = ()

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
        """Matched kernels whose time grew by more than `pct` percent."""
        return tuple(m for m in self.matches
                     if m.change_pct is not None and m.change_pct > pct)


def merge_by_name(kernels: Iterable[Kernel]) -> tuple[Kernel, ...]:
    """Kernels of the same name added up: FLOP, bytes, seconds, calls, samples."""
    out: dict[str, Kernel] = {}
    for k in kernels:
        cur = out.get(k.name)
        if cur is None:
            out[k.name] = k
            continue
        seconds = (cur.seconds + k.seconds) if cur.seconds and k.seconds else None
        out[k.name] = cur.with_(flop=sum_counts((cur.flop, k.flop)),
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
    return Comparison(tuple(matches), tuple(only_before), only_after, tuple(notes))


def _some(names: Iterable[str], limit: int = 10) -> str:
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


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
        counts[k.name] = counts.get(k.name, 0) + 1
        untimed[k.name] = untimed.get(k.name, 0) + (not k.seconds)
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
                     "ai_dram_before": ai_b, "ai_dram_after": ai_a})
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
    return d
