"""compare's notes on what a matched speed-up is made of: the work, the calls, the
precision, the entries summed, and whether a run's times were measured at all. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..units import fmt_seconds, fmt_times
from .kernel import Kernel
from .provenance import DERIVED
from .sample_groups import Groups, causes, kernel_groups, one_call, what_to_do

if TYPE_CHECKING:
    from .compare import Match

# A matched kernel whose FLOP changed by more than this (percent) did different work: its
# speed-up is partly or wholly less (or more) work, not a faster kernel; a note says which.
WORK_NOTE_PCT = 5.0


def _ratio(after: float, before: float) -> float | None:
    return after / before if after and before else None


def mostly(flop: float, dram: float) -> str:
    """What a speed-up is mostly made of, from the FLOP and DRAM-byte ratios (after /
    before): compare's notes and `rooflab report`'s steps findings (report/steps.py)."""
    return ("less work (FLOP)" if abs(flop - 1) > abs(dram - 1) / 4 and flop < 1
            else "fewer DRAM bytes" if dram < 1 else "a faster kernel")


def _moved(b: Kernel, a: Kernel, per_call: bool) -> tuple[float, float, str]:
    """(FLOP ratio, DRAM ratio (1 without bytes), 'FLOP x0.42, DRAM bytes x0.32')."""
    cb, ca = (b.calls, a.calls) if per_call else (1, 1)
    flop = (a.total_flop / ca) / (b.total_flop / cb)
    db, da = b.bytes.get("DRAM"), a.bytes.get("DRAM")
    dram = (da / ca) / (db / cb) if da and db else 1.0
    return flop, dram, f"FLOP x{flop:.2f}" + (f", DRAM bytes x{dram:.2f}" if da and db
                                              else "")


def work_note(m: Match) -> str:
    """'k: 2.48x faster; FLOP x0.42, DRAM bytes x0.32: mostly less work (FLOP); achieved
    FLOP/s +4.4 %: the runs did different work ...' when the FLOP moved by more than
    WORK_NOTE_PCT ('' otherwise): the words and the rule of `rooflab report`'s steps
    findings (report/steps.py), for the before/after verb. When the call counts differ
    calls_note says it per call and per total in one note (this one would compare totals
    of different call counts beside a per-call speed-up: review s19 r5 F5)."""
    work = m.work_change_pct
    if (work is None or abs(work) <= WORK_NOTE_PCT or m.speedup is None
            or m.before.calls != m.after.calls):
        return ""
    flop, dram, moved = _moved(m.before, m.after, per_call=False)
    rate = m.rate_change_pct
    rate_words = f"; achieved FLOP/s {rate:+.1f} %" if rate is not None else ""
    speed = m.speedup
    if speed > 1:
        head = f"{fmt_times(speed)} faster; {moved}: mostly {mostly(flop, dram)}"
    else:
        head = f"{fmt_times(speed)} ({'slower' if speed < 1 else 'no faster'}); {moved}"
    return (f"{m.name}: {head}{rate_words}: the runs did different work (FLOP {work:+.1f} %), "
            f"so the speed-up is not the kernel's alone")


def calls_note(m: Match) -> list[str]:
    """Speed-ups compare totals; when the runs launched the kernel a different number of
    times (ncu --launch-count, more iterations profiled, a fused loop) the total alone
    misleads, so one note gives both views: per call (time and work of one call) and the
    totals the table, the work column and --fail-if-slower compare."""
    b, a = m.before, m.after
    if b.calls == a.calls or not b.seconds or not a.seconds:
        return []
    pb, pa = b.seconds / b.calls, a.seconds / a.calls
    per_call = f"per call {fmt_seconds(pb)} -> {fmt_seconds(pa)} ({fmt_times(pb / pa)})"
    total = (f"totals over {b.calls} and {a.calls} call(s) {fmt_seconds(b.seconds)} -> "
             f"{fmt_seconds(a.seconds)} ({fmt_times(b.seconds / a.seconds)})")
    if b.total_flop > 0 and a.total_flop > 0:
        flop, dram, moved = _moved(b, a, per_call=True)
        same = abs(flop - 1) * 100 <= WORK_NOTE_PCT
        level = abs(pb / pa - 1) * 100 <= WORK_NOTE_PCT
        per_call += (f", {moved} per call: "
                     + ("the same work per call" if same
                        else "about the same time per call for other work" if level
                        else f"mostly {mostly(flop, dram)}" if pb > pa
                        else "more time per call for other work"))
        total += f", FLOP x{a.total_flop / b.total_flop:.2f}"
    return [f"{m.name}: {b.calls} call(s) before, {a.calls} after: {per_call}; {total} "
            f"(the speed-up, the work column and --fail-if-slower compare these totals)"]


def precision_note(m: Match) -> list[str]:
    """A kernel whose FLOP moved to another precision is held to another compute roof
    (seed 000 §6.4: precision moves the ridge); the speed-up alone does not say how well
    it uses the new one."""
    b, a = m.before, m.after
    if not (b.total_flop > 0 and a.total_flop > 0) or b.precision == a.precision:
        return []
    return [f"{m.name}: precision {b.precision} -> {a.precision}: held to another compute "
            "roof, so the speed-up does not say how well it uses the new one (-o chart "
            "with --on shows each point's % of its roof)"]


def predicted(k: Kernel) -> bool:
    """A time rooflab derived (a what-if prediction), not one a clock measured."""
    return k.seconds is not None and k.provenance.get("seconds") == DERIVED


def seconds_range(k: Kernel) -> tuple[float, float] | None:
    """(low, high) of a what-if time that whatif gives as a range (the gap above the roof
    scaled with the work, or held: meta seconds_gap_held); None otherwise."""
    held = k.meta.get("seconds_gap_held")
    if not predicted(k) or not isinstance(held, (int, float)) or not k.seconds:
        return None
    return (min(k.seconds, held), max(k.seconds, held))


def predicted_notes(matches: Sequence[Match]) -> list[str]:
    """Say once per run that its times are a prediction (`rooflab whatif -o`), not a
    measurement, and which end of a range the table's first number is."""
    notes = []
    for side, attr in (("first", "before"), ("second", "after")):
        names = [m.name for m in matches if predicted(getattr(m, attr))]
        if not names:
            continue
        ranged = any(seconds_range(getattr(m, attr)) for m in matches)
        notes.append(f"the {side} run's times are a what-if prediction (provenance "
                     f"derived), not a measurement: its speed-ups are predicted"
                     + ("; where whatif gave a range (the gap above the roof scaled with "
                        "the work - held fixed) the table shows both ends" if ranged else "")
                     + "; --fail-if-slower refuses predicted times")
    return notes


def untimed_notes(matches: Sequence[Match]) -> list[str]:
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


def summed_notes(kernels: Sequence[Kernel], side: str) -> list[str]:
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


def _split(m: Match) -> list[tuple[str, Groups]]:
    """The runs whose samples split into two groups, a profiler's launch groups left out
    (sample_groups.kernel_groups: their samples are launches summed into the time, review
    s20 x1 F1)."""
    return [(side, g) for side, k in (("first", m.before), ("second", m.after))
            if (g := kernel_groups(k)) is not None]


def _one_shape(m: Match) -> bool:
    """Both runs time one call over and over (sample_groups.one_call): no two shapes."""
    return one_call(m.before) and one_call(m.after)


def split_what_to_do(m: Match) -> str:
    """What to do about a match's two sample groups: for one call, a quiet machine first."""
    return what_to_do(_one_shape(m))


def split_reason(m: Match) -> str | None:
    """Why a 'within noise' verdict cannot be trusted: a run's samples split into two
    groups (the same mixture of a 1 ms and a 2 ms shape reads p = 0.72 while its median
    moves +96 %); None when neither run's do."""
    sides = [side for side, _ in _split(m)]
    if not sides:
        return None
    are = "runs' samples split" if len(sides) > 1 else "run's samples split"
    return (f"the {' and '.join(sides)} {are} into two groups, so the U test compared "
            f"mixtures: its p says nothing of either group")


def bimodal_note(m: Match) -> list[str]:
    """A match whose samples split into two well-separated groups in a run (two shapes
    timed into one entry, a clock that changed mid-run, load that came and went:
    model.sample_groups): the U test then compares mixtures, and 'within noise' would read
    as 'no change' where one group may have moved and the other not; say so beside
    whatever the noise column says."""
    split = _split(m)
    if not split:
        return []
    where = "; ".join(f"in the {side} run {g.words()}" for side, g in split)
    verdict = ("its U test's 'within noise' is not 'no change' (the table says cannot "
               "tell)" if m.within_noise else "the U test compares mixtures, and the "
               "median (the time compared) mixes the groups")
    one = _one_shape(m)
    what = "two groups of calls" if one else "two different things"
    return [f"{m.name}: timing samples split into two groups ({where}): {what} timed into "
            f"one entry ({' or '.join(causes(one))}); {verdict}; {what_to_do(one)}"]


def grouped_notes(notes: list[str], names: set[str]) -> list[str]:
    """One line for notes that say the same of several kernels ("q_proj: precision bf16 ->
    fp32: ..." for each of 39 kernels of a train step; review s27 v3-F4): "q_proj, k_proj,
    v_proj and 36 more kernels: precision ...", at the place of the first. Notes that do
    not start with a kernel's name, or say something of one kernel only, stay as they are."""
    def split(n: str) -> tuple[str, str] | None:
        head, sep, rest = n.partition(": ")
        return (head, rest) if sep and head in names else None

    same: dict[str, list[str]] = {}
    for n in notes:
        if (hr := split(n)) is not None:
            same.setdefault(hr[1], []).append(hr[0])
    out: list[str] = []
    for n in notes:
        hr = split(n)
        heads = same.get(hr[1], []) if hr is not None else []
        if len(heads) < 2:
            out.append(n)
        elif hr[0] == heads[0]:   # the first of the group says it for all
            more = f" and {len(heads) - 3} more kernels" if len(heads) > 3 else ""
            out.append(f"{', '.join(heads[:3])}{more}: {hr[1]}")
    return out
