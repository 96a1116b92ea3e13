"""A perf stat run's DRAM bytes from its memory-controller events: the first of the
vendors' sources (dram_events.DRAM_SOURCES) the file has, read + write, in perf's unit."""

from __future__ import annotations

import re

from ..errors import ParseError
from .dram_events import AMD_DRAM, DRAM_SOURCES, INTEL_DRAM, LINE_BYTES, SUB_CHANNELS, is_dram_event
from .perf_lines import UNITS, Counts


def _bytes(counts: Counts, event: str, path: str) -> float:
    unit = counts.units.get(event, "").lower()
    scale = UNITS.get(unit, -1.0)
    if scale == -1.0:
        raise ParseError(f"{event}: unit '{counts.units[event]}' is not a byte unit (B, KiB, "
                         f"MiB, GiB, MB, GB) or empty (a count of 64-B lines)",
                         path=path, line=counts.lines[event])
    return counts.values[event] * (LINE_BYTES if scale is None else scale)


def dram_bytes(counts: Counts, path: str) -> tuple[dict[str, float], list[str]]:
    """DRAM bytes from the first source of DRAM_SOURCES the file has, with notes."""
    found = []
    for what, *patterns in DRAM_SOURCES:
        got, events = _source(counts, path, patterns)
        if got:
            found.append((what, got, events))
    if not found:
        return {}, [_no_dram(counts)]
    (what, got, events), rest = found[0], found[1:]
    notes = [f"{other} events left out: they count the traffic the {what} events count"
             for other, _, _ in rest]
    if len(got) == 1:
        (kind,) = got
        other = "write" if kind == "read" else "read"
        return {"DRAM": got[kind]}, notes + [
            f"DRAM = {kind}s only (no {other} event in the file): DRAM bytes read low, AI "
            f"high"]
    notes.append(f"DRAM bytes from the memory controllers ({what} read + write events; "
                 f"counts the whole socket, other processes too)")
    notes += _sub_channels(events)
    if what == "AMD data fabric":
        channels = sorted({re.search(r"_cs(\d+)", e)[1] for e in events}, key=int)
        notes.append(f"64 B per data beat, channels cs{', cs'.join(channels)} (Linux perf's "
                     f"amdzen4 DRAM metrics add cs0-cs11: a channel left out of -e is not "
                     f"counted)")
    return {"DRAM": got["read"] + got["write"]}, notes


def _source(counts: Counts, path: str, patterns) -> tuple[dict[str, float], list[str]]:
    """({read/write: bytes}, events) of one DRAM source; each kind summed over its events
    (channels, memory controllers, sockets)."""
    got: dict[str, float] = {}
    events = []
    for event in counts.values:
        for kind, pattern in zip(("read", "write"), patterns, strict=True):
            if pattern.search(event):
                got[kind] = got.get(kind, 0.0) + _bytes(counts, event, path)
                events.append(event)
    return got, events


def _sub_channels(events: list[str]) -> list[str]:
    """Granite Rapids / Sierra Forest count each DDR5 sub-channel apart (..._SCH0.RD,
    ..._SCH1.RD): one left out of -e is traffic not counted, so say which."""
    subs = {re.search(r"_sch(\d)", e)[1] for e in events if re.search(r"_sch\d", e)}
    if not subs or set(SUB_CHANNELS) <= subs:
        return []
    lost = [f"UNC_M_CAS_COUNT_SCH{c}.RD/.WR" for c in SUB_CHANNELS if c not in subs]
    return [f"DRAM bytes from sub-channel {', '.join(sorted(subs))} only (add "
            f"{', '.join(lost)}: each DDR5 sub-channel is counted apart): DRAM bytes read "
            f"about half, AI high"]


def _no_dram(counts: Counts) -> str:
    """The hint for a file without DRAM events, naming the events of its CPU's vendor, and
    the file's memory-controller events that are not read+write totals (a sub-count such
    as UNC_M_CAS_COUNT_SCH0.RD_REG)."""
    events = (AMD_DRAM if is_amd(counts) and not is_intel(counts) else
              INTEL_DRAM if is_intel(counts) else f"Intel: {INTEL_DRAM}; AMD: {AMD_DRAM}")
    near = [e for e in counts.values
            if re.search(r"imc|unc_m_|cas_c|umc|data_beats", e) and not is_dram_event(e)]
    seen = (f"; the file's {', '.join(near)} {'is' if len(near) == 1 else 'are'} not "
            f"among them (not read)" if near else "")
    return (f"no memory-controller event rooflab reads ({events}): no DRAM bytes, so no "
            f"point; add them (they need -a, and root or kernel.perf_event_paranoid <= 0)"
            + seen)


def is_amd(counts: Counts) -> bool:
    """Whether the file holds AMD events (its hints then name AMD's)."""
    return any(e.startswith(("amd_", "fp_ret_")) or "umc_" in e or "_data_beats_" in e
               for e in [*counts.values, *counts.missing])


def is_intel(counts: Counts) -> bool:
    return any("fp_arith" in e or "imc" in e or e.startswith("unc_m_")
               for e in [*counts.values, *counts.missing])

