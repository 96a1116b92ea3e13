"""A likwid group's bytes by memory level: its raw memory-controller counts (exact
integers), else its data-volume metrics (printed with 4 decimals: 100 kB steps); and Zen's
DRAM channels, counted half by MEM1 and half by MEM2, put together."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import fmt_fraction
from .dram_events import (
    CAS,
    CAS_ANY,
    CHANNELS,
    DRAM_CHANNEL,
    LINE_BYTES,
    READ_WRITE,
    VOLUMES,
    span,
)
from .likwid_cpu import LikwidCpu, channels_note
from .likwid_tables import HBM_VOLUME, thread_sum, uncore_threads, unknown_note
from .skips import SkipLog

if TYPE_CHECKING:
    from .likwid_groups import Part


# HBM, not DDR: Xeon Max's HBM groups read as the DRAM level (the roof's main memory)
HBM_NOTE = ("HBM group: these DRAM bytes are Xeon Max's HBM traffic (CAS on the HBM boxes), "
            "not DDR's; put them on an HBM roof (against a DDR one an HBM-bound kernel reads "
            "far above 100 %)")


def coarse_note(name: str, values: list[float], what: str) -> list[str]:
    """A note when a metric likwid printed with 4 decimals ("%.4f") leaves `what` with fewer
    than 3 significant digits (0.0001 s, 0.0012 GBytes); [] otherwise. A value "%.4f" does
    not round-trip was printed "%e" (likwid does that for small ones) and is exact enough."""
    values = [v for v in values if v]      # a thread that read no uncore shows 0
    total = sum(values)
    if total <= 0 or any(float(f"{v:.4f}") != v for v in values):
        return []
    error = 0.5e-4 * len(values) / total
    if error <= 0.005:
        return []
    return [f"{what} from '{name}' = {total:.4f}: likwid prints metrics with 4 decimals, so "
            f"known to +-{fmt_fraction(error)} only (a longer region, or the marker API's "
            f"Region Info time and the raw counts, give more digits)"]


def volumes(metrics, events, notes: list[str], log: SkipLog,
            hbm: bool = False) -> tuple[dict[str, float], int]:
    """({level: bytes}, sockets that counted DRAM); a source no thread has a value for is
    passed over (with a warning) for the next: the raw CAS counts (exact), the volume
    metric, the read + write volumes. hbm: the group counts Xeon Max's HBM (its CAS or
    'HBM data volume' are the DRAM bytes, with a note)."""
    out: dict[str, float] = {}
    sockets = 0
    dram = _cas_bytes(events, notes, log)
    if dram is not None:
        out["DRAM"], sockets = dram
    for level, names in VOLUMES.items():
        for name in names + ((HBM_VOLUME,) if level == "DRAM" and hbm else ()):
            if name not in metrics or level in out:
                continue
            line, values = metrics[name]
            total = thread_sum(values)
            if total is None:
                log.add(line, unknown_note(name, values, f"no {level} bytes from it"))
                continue
            out[level] = 1e9 * total
            notes += coarse_note(name, [v for v in values if v is not None],
                                 f"{level} bytes")
            sockets = uncore_threads(values) if level == "DRAM" else sockets
            break
    if "DRAM" not in out and all(n in metrics for n in READ_WRITE):
        totals = [thread_sum(metrics[n][1]) for n in READ_WRITE]
        if None in totals:
            gone = [n for n, t in zip(READ_WRITE, totals, strict=True) if t is None]
            log.add(metrics[gone[0]][0], unknown_note(gone[0], metrics[gone[0]][1],
                                                      "no DRAM bytes from the read + write "
                                                      "volumes"))
        else:
            out["DRAM"] = 1e9 * sum(t for t in totals if t is not None)
            sockets = max(uncore_threads(metrics[n][1]) for n in READ_WRITE)
    if hbm and "DRAM" in out:
        notes.append(HBM_NOTE)
    return out, sockets


def _cas_bytes(events, notes: list[str], log: SkipLog) -> tuple[float, int] | None:
    """(64 B x the raw CAS counts, sockets), None without any with a value. likwid prints
    them as integers (or "%e", 7 digits), where its volume metrics have 4 decimals."""
    cas = {name: v for name, (_, v) in events.items() if CAS.match(name)}
    if len(cas) > 1:
        cas.pop(CAS_ANY, None)      # reads + writes again
    known = [t for t in (thread_sum(v) for v in cas.values()) if t is not None]
    if known:
        notes.append("DRAM bytes = 64 B x the memory controllers' CAS/DRAM read and "
                     "write counts")
        return LINE_BYTES * sum(known), max(uncore_threads(v) for v in cas.values())
    if cas:
        name = next(iter(cas))
        log.add(events[name][0], unknown_note(name, cas[name],
                                              "no DRAM bytes from the CAS counts"))
    return None


def channel_bytes(metrics, events, notes: list[str], log: SkipLog,
                  sockets: int) -> tuple[dict[tuple[int, ...], float], int]:
    """({channels: bytes}, sockets) of a group that counts some of the DRAM channels (Zen
    3's or 4's MEM1 or MEM2): 64 B x its raw DRAM_CHANNEL_N counts (the groups' own
    formula; exact), else its 'Memory data volume (channels a-b) [GBytes]' (4 decimals)."""
    raw = {int(m[1]): v for name, (_, v) in events.items() if (m := DRAM_CHANNEL.match(name))}
    known = {ch: t for ch, v in raw.items() if (t := thread_sum(v)) is not None}
    if known:
        notes.append("DRAM bytes = 64 B x the raw DRAM_CHANNEL_N counts")
        return ({tuple(sorted(known)): LINE_BYTES * sum(known.values())},
                max(uncore_threads(raw[ch]) for ch in known))
    for name, (line, values) in metrics.items():
        hit = CHANNELS.match(name)
        if hit is None:
            continue
        total = thread_sum(values)
        if total is None:
            log.add(line, unknown_note(name, values, "no DRAM bytes from it"))
            continue
        notes += coarse_note(name, [v for v in values if v is not None], "DRAM bytes")
        return ({tuple(range(int(hit[1]), int(hit[2]) + 1)): 1e9 * total},
                uncore_threads(values))
    return {}, sockets


def channel_dram(ref: Part, timed: list[Part], notes: list[str],
                 cpu: LikwidCpu | None = None) -> float | None:
    """DRAM bytes of the groups that each count some channels (Zen 3/4: MEM1 + MEM2), each
    put on the time of the group that counted the FLOP; a channel counted twice is read
    once; a note when the CPU (`cpu`, the file's header) has more channels than were
    counted. None when no group counts channels."""
    total, seen, said = 0.0, set(), []
    for p in [ref] + [p for p in timed if p is not ref]:
        for chans, value in p.channels.items():
            if seen & set(chans):
                continue
            seen |= set(chans)
            total += value * ref.seconds / p.seconds
            said.append(f"channels {span(chans)} (group {p.group})")
    if not said:
        return None
    notes.append(f"DRAM bytes = {' + '.join(said)}, each on the {ref.seconds:.6g} s of "
                 f"group {ref.group}")
    # likwid's zen3/zen4 MEM1 + MEM2 count DRAM_CHANNEL_0..7: all of an EPYC 7003's
    # channels, 8 of an EPYC 9004's 12 (review s20 r1 F3)
    missing = channels_note(cpu or LikwidCpu(), span(tuple(sorted(seen))), len(seen))
    if missing:
        notes.append(missing)
    return total

