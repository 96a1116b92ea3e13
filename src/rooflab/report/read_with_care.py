"""The report's "Read with care" lines: what makes a whole report doubtful (a roof of another
device, kernels above their roof, miscounted AI, a loaded or disturbed probe, kernels between
the measured and the nominal ridge), and the probe's load note shortened to a pointer to them.

The Markdown, HTML and terminal reports say the same lines (markdown.trust_warnings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..hardware.profile import MachineProfile
from ..hardware.thread_rows import is_whole_chip
from ..model.above_roof_words import nominal_binding
from ..model.analysis import Point
from ..model.diagnose import Diagnosis
from ..model.kernel import Kernel
from ..model.placement import held_on
from ..model.sanity_finding import ABOVE_TOLERANCE
from ..name_list import cut, named
from ..sides import factor_text
from ..units import fmt_ai, fmt_fraction


def above_roof(d: Diagnosis) -> bool:
    """Faster than its roof allows (beyond the sanity tolerance)."""
    return d.headroom is not None and d.headroom < 1 / (1 + ABOVE_TOLERANCE)


def _above_line(above: Sequence[Diagnosis]) -> str:
    """The line on kernels above their roof. A datasheet (nominal) roof is not "too low"
    (nothing was measured): above a nominal bandwidth roof the counted bytes are cache
    reuse, above a nominal compute roof the unit or the FLOP are off (review s21 r3 F4)."""
    # a list cut to its first few: the furthest above first, the rest counted (s23 r5 F4)
    worst = sorted(above, key=lambda d: d.headroom) if cut(len(above)) else above
    said = (f"{len(above)} kernel(s) run faster than the roof allows: "
            # 3 figures (fmt_factor), kept off the 5 % tolerance: '5050x', not '5047.47x'
            + named(f"{d.kernel} ({factor_text(1 / d.headroom, 1 + ABOVE_TOLERANCE)} above)"
                    for d in worst) + ". ")
    if not all(nominal_binding(d.point) for d in above):
        return said + ("The roof is too low for them or their counts are wrong; their "
                       "ranking and advice mean little until that is fixed (see their "
                       "sanity checks).")
    memory = [d for d in above if d.point.memory_bound_side]
    why = []
    if memory:
        why.append("above a datasheet bandwidth roof, which is not too low, the counted "
                   "bytes are cache reuse (not all traffic at that level): check the byte "
                   "counts (ncu's dram__bytes.sum, or give L2 bytes)")
    if len(memory) < len(above):
        why.append("above a datasheet compute roof, the kernel ran on a faster unit or "
                   "precision than it is held to (tensor cores, TF32) or its FLOP are "
                   "miscounted: check the FLOP count and the unit")
    text = "; ".join(why)
    return said + text[0].upper() + text[1:] + ("; their ranking and advice mean little "
                                                 "until that is fixed (see their sanity "
                                                 "checks).")


def _floor(row) -> float:
    """The fraction of nominal under which a measured ceiling reads as a disturbed probe:
    the probe's own floors (probe/nominal.py: bandwidth 60 %, compute 50 %), so `report`
    and `probe` flag the same ceilings; ridges and the launch floor are not judged."""
    from ..probe.nominal import BANDWIDTH_FLOOR, COMPUTE_FLOOR

    return {"B/s": BANDWIDTH_FLOOR, "FLOP/s": COMPUTE_FLOOR,
            "OP/s": COMPUTE_FLOOR}.get(row.unit, 0.0)


# The notes `rooflab report` adds when --on names another device than the kernels ran on
# (ingest.profile_import.device_mismatch): the whole report is judged on the wrong roof.
DEVICE_MISMATCH = ("the kernels were profiled on a compute capability",
                   "the kernels ran on the CPU")


def trust_warnings(diags: Sequence[Diagnosis], profile: MachineProfile | None = None,
                   notes: Sequence[str] = (), kernels: Sequence[Kernel] = (),
                   every: bool = False) -> list[str]:
    """What makes the whole report doubtful: a roof of another device than the kernels ran
    on (from `notes`), kernels above their roof, measured ceilings far below nominal (a
    disturbed probe) or a compute peak at 50-70 % of it (the probe's quiet note). kernels:
    the analysis's (ridge_band_warnings). every: name every kernel of the ridge band (the
    --json lines, which the cut terminal and Markdown lines point to)."""
    out = [n for n in notes if n.startswith(DEVICE_MISMATCH)]
    # a write_allocate finding (sanity: counter bytes up to 4/3 over a STREAM-counted DRAM
    # roof) already says why such a kernel is above it: its counts are not wrong
    above = [d for d in diags if above_roof(d) and not d.write_allocate]
    if above:
        out.append(_above_line(above))
    out += ai_high_warnings(diags)
    if profile is not None:
        from .tables import profile_rows

        load = [f"{LOAD_SAID}{note}." for note in _load_notes(profile)]
        touched = loaded_advice(diags)
        if load and touched:
            load[-1] += (f" It makes the advice for {touched} kernel(s) uncertain (marked "
                         f"'{LOADED_PROBE}' there).")
        out += load
        out += _low_compute(profile, out)
        low = [f"{r.quantity} {fmt_fraction(r.ratio)}" for r in profile_rows(profile)
               if r.ratio is not None and r.ratio < _floor(r)
               and not _whole_chip(profile, r)]
        if low:
            from ..probe.nominal import healthy_range

            device = _device(profile)
            out.append(f"Measured ceilings far below nominal (a quiet probe reaches "
                       f"{healthy_range(device)} of a nominal compute peak): "
                       f"{', '.join(low)}. The probe was most likely disturbed by other "
                       f"load; every % of roof held by those ceilings is inflated by as much. "
                       f"Re-probe on a quiet machine, or judge by the nominal roof.")
        out += ridge_band_warnings(diags, profile, kernels, every)
    # The datasheet note (model/datasheet_note.py) is not among these: judging on a catalog
    # roof is rooflab's most common use, not a fault of this report, so it stays a plain
    # note under the tables (and in --json's notes) rather than a bold line on every report.
    return out


def _whole_chip(profile: MachineProfile, row) -> bool:
    """The record table's bandwidth row ("DRAM bandwidth") compares a thread row with the
    whole chip's nominal bandwidth (`--on p.json@1t`: hardware.thread_rows.nominal_at_threads
    keeps it whole, and is_whole_chip knows its own words): one thread's DRAM is no share
    of the chip's, so a row at 30 % of it says the thread count, not a disturbed probe."""
    level = row.quantity.removesuffix(" bandwidth")
    if row.unit != "B/s" or level == row.quantity or profile.nominal is None:
        return False
    ceiling = profile.nominal.find_memory(level)
    return ceiling is not None and is_whole_chip(ceiling)


def _load_notes(profile: MachineProfile) -> list[str]:
    """The probe's notes that it was disturbed (machine or device load while it ran)."""
    return [note for key in ("machine_load", "device_load")
            for note in ((profile.extras or {}).get(key) or {}).get("notes") or ()]


def reads_all_advice(profile: MachineProfile | None) -> bool:
    """Whether trust_warnings counts the advice of every kernel (loaded_advice: a probe
    that said it was disturbed), so a caller that details only the kernels it shows
    (diagnose(detail=N)) must detail them all."""
    return profile is not None and bool(_load_notes(profile))


def _device(profile: MachineProfile) -> str:
    """The device kind the probe's floors are read for (probe/nominal.py): "cpu" for a CPU
    host, else "gpu"."""
    return "cpu" if (profile.host or {}).get("kind") == "cpu" else "gpu"


def _low_compute(profile: MachineProfile, said: Sequence[str]) -> list[str]:
    """The probe's quiet note on a compute peak at 50-70 % of nominal (seed 000 §3.2), once:
    a probed profile carries it in its measured roof's notes, a hand-written one does not
    (probe/nominal.py profile_low_notes). said: the lines already there."""
    from ..probe.nominal import low_compute_notes

    if profile.measured is None or profile.nominal is None:
        return []
    device = _device(profile)
    return [n for n in low_compute_notes(profile.measured, profile.nominal, device)
            if n not in said]


def ai_high_warnings(diags: Sequence[Diagnosis]) -> list[str]:
    """The read-with-care line for kernels whose AI is too high for their op (sanity's
    ai_high: seed 000 §6.3, FLOP or bytes miscounted): like a point above its roof, their
    counts are wrong, so their bound, gain and advice are too (review 12a #3)."""
    flagged = [(d, f) for d in diags for f in d.findings if f.check == "ai_high"]
    if not flagged:
        return []
    # the first NAMED in rank order (most worth work first), the rest counted (s23 r5 F4)
    names = named(f"{d.kernel} (AI {fmt_ai(d.point.ai)})" if f.level == d.point.level
                  else d.kernel for d, f in flagged)
    return [f"{len(flagged)} kernel(s) have an AI too high for their op: {names}. Their FLOP "
            f"or bytes are most likely miscounted (writes left out, a multiply-add counted "
            f"twice); their bound, gain and advice mean little until the counts are fixed "
            f"(see their ai_high checks)."]


def _kernel_at(kernels: Sequence[Kernel], p: Point) -> Kernel | None:
    """The point's kernel in `kernels` (the analysis's: p.kernel_index indexes them);
    None for a point of no kernel there."""
    i = p.kernel_index
    return kernels[i] if 0 <= i < len(kernels) and kernels[i].name == p.kernel else None


def ridge_band_warnings(diags: Sequence[Diagnosis], profile: MachineProfile,
                        kernels: Sequence[Kernel] = (), every: bool = False) -> list[str]:
    """Kernels whose AI lies between the measured and the nominal ridge: the two roofs put
    them on opposite sides, so memory- vs compute-bound (and the advice) depends on which
    roof is believed. Seed 004: near the ridge only the measured lines decide (T4: measured
    185, nominal 203; AI 180-200 flips). kernels: the analysis's, so that a mixed-precision
    kernel's nominal ridge is its weighted one, as its ridge on this roof is."""
    nominal = profile.nominal
    if nominal is None or not nominal.compute:
        return []
    out, names = [], []
    for d in diags:
        p = d.point
        m = nominal.find_memory(p.level)
        if m is None or not p.ai or p.ai <= 0:
            continue
        held = held_on(nominal, p, _kernel_at(kernels, p))
        c, name = held.ceiling, held.label
        nominal_ridge = c.value / m.value
        if p.memory_bound_side == (p.ai < nominal_ridge):
            continue
        side = "memory" if p.memory_bound_side else "compute"
        other = "compute" if side == "memory" else "memory"
        names.append(f"{p.kernel} (AI {fmt_ai(p.ai)}: {side} here, {other} nominal)")
        out.append(f"{p.kernel}: AI {fmt_ai(p.ai)} lies between the ridges of the two roofs "
                   f"({fmt_ai(p.ridge)} on this one, {fmt_ai(nominal_ridge)} nominal, "
                   f"{name} / {p.level}): this roof calls it {side}-side, the nominal "
                   f"one {other}-side. Near the ridge only measured lines decide (seed 004); "
                   f"check that the probe measured this ceiling well before acting on it.")
    if len(out) > 3:   # one line, not a wall of them
        return [f"{len(names)} kernels lie between the measured and the nominal ridge, so "
                f"the two roofs put them on opposite sides: "
                f"{_band_names(names, every)}. Near the "
                f"ridge only measured lines decide (seed 004); check that the probe measured "
                f"those ceilings well before acting on their bound."]
    return out


def _band_names(names: Sequence[str], every: bool) -> str:
    """The ridge band's kernels, cut to ten outside --json. These kernels have no finding
    of their own, so the cut line points to the one place that lists them: --json's
    read_with_care, never cut (review s23 h2 F6: it pointed to sanity checks that do not
    exist, and the JSON was cut as well)."""
    if every:
        return "; ".join(names)
    return named(names, sep="; ", where="`rooflab report --json` lists every one")


# A loaded probe's note is one long sentence (probe/cpu/flags.py, ~170 characters) that
# model.advice appends to every lever of every kernel judged on that roof: a six-kernel
# report said it 15 times in the terminal and 20 in .md (review 18c F16), and the advice
# drowned. The reports say it once, in the read-with-care line (trust_warnings, with the
# count of kernels it touches), and each advice points there.
LOADED_PROBE = "uncertain (loaded probe, see top)"


_PAREN = r"\(((?:[^()]|\([^()]*\))*)\)"      # (...), one level of (...) inside


_SHARED = re.compile(r"the roof's probe shared the machine " + _PAREN)


_UNCERTAIN = re.compile(r"uncertain: the roof's probe shared the machine " + _PAREN)


_CAUSE = re.compile(r"\(the roof's probe: " + _PAREN[2:])    # sanity_timing's cause


LOAD_SAID = "When this profile was measured, "


def load_said(warnings: Sequence[str]) -> bool:
    """Whether the read-with-care lines (trust_warnings) say the probe's load note: only
    then may the advice point to the top for it."""
    return any(w.startswith(LOAD_SAID) for w in warnings)


def short_doubt(text: str, said: bool = True) -> str:
    """An advice's detail or assumption (or a finding's cause) with the probe's load note
    replaced by a pointer to the report's top, where it is said (said; else unchanged):
    "...; uncertain: the roof's probe shared the machine (60% other load: other processes
    used ...)" -> "...; uncertain (loaded probe, see top)"."""
    if not said:
        return text
    text = _CAUSE.sub("(the roof's probe was loaded: see top)", text)
    return _SHARED.sub(_shared_short, _UNCERTAIN.sub(LOADED_PROBE, text))


def _shared_short(m: re.Match) -> str:
    share, sep, _ = m.group(1).partition(" other load: ")
    return f"the roof's probe shared the machine ({share + ' other load; ' if sep else ''}see top)"


def loaded_advice(diags: Sequence[Diagnosis]) -> int:
    """How many of the kernels' advice rests on a loaded probe (short_doubt shortens it)."""
    return sum(any(_SHARED.search(a.detail) or _SHARED.search(a.assumption)
                   for a in d.advice) for d in diags)
