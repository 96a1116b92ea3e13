"""A likwid group's bytes by memory level: its data-volume metrics, else its raw
memory-controller counts; and Zen 3's DRAM channels, counted half by MEM1 and half by MEM2,
put together."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dram_events import (
    CAS,
    CHANNELS,
    DRAM_CHANNEL,
    LINE_BYTES,
    READ_WRITE,
    VOLUMES,
    ZEN3_CHANNELS,
    span,
)
from .likwid_tables import thread_sum, uncore_threads, unknown_note
from .skips import SkipLog

if TYPE_CHECKING:
    from .likwid_groups import Part


def volumes(metrics, events, notes: list[str],
            log: SkipLog) -> tuple[dict[str, float], int]:
    """({level: bytes}, sockets that counted DRAM); a source no thread has a value for is
    passed over (with a warning) for the next: volume, read + write volumes, CAS counts."""
    out: dict[str, float] = {}
    sockets = 0
    for level, names in VOLUMES.items():
        for name in names:
            if name not in metrics:
                continue
            line, values = metrics[name]
            total = thread_sum(values)
            if total is None:
                log.add(line, unknown_note(name, values, f"no {level} bytes from it"))
                continue
            out[level] = 1e9 * total
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
    if "DRAM" not in out:
        cas = {name: v for name, (_, v) in events.items() if CAS.match(name)}
        known = [t for t in (thread_sum(v) for v in cas.values()) if t is not None]
        if known:
            out["DRAM"] = LINE_BYTES * sum(known)
            sockets = max(uncore_threads(v) for v in cas.values())
            notes.append("DRAM bytes = 64 B x the memory controllers' CAS/DRAM read and "
                         "write counts")
        elif cas:
            name = next(iter(cas))
            log.add(events[name][0], unknown_note(name, cas[name],
                                                  "no DRAM bytes from the CAS counts"))
    return out, sockets


def channel_bytes(metrics, events, notes: list[str], log: SkipLog,
                  sockets: int) -> tuple[dict[tuple[int, ...], float], int]:
    """({channels: bytes}, sockets) of a group that counts some of the DRAM channels (Zen
    3's MEM1 or MEM2): its 'Memory data volume (channels a-b) [GBytes]', else 64 B x its
    raw DRAM_CHANNEL_N counts (the groups' own formula)."""
    for name, (line, values) in metrics.items():
        hit = CHANNELS.match(name)
        if hit is None:
            continue
        total = thread_sum(values)
        if total is None:
            log.add(line, unknown_note(name, values, "no DRAM bytes from it"))
            continue
        return ({tuple(range(int(hit[1]), int(hit[2]) + 1)): 1e9 * total},
                uncore_threads(values))
    raw = {int(m[1]): v for name, (_, v) in events.items() if (m := DRAM_CHANNEL.match(name))}
    known = {ch: t for ch, v in raw.items() if (t := thread_sum(v)) is not None}
    if not known:
        return {}, sockets
    notes.append("DRAM bytes = 64 B x the raw DRAM_CHANNEL_N counts")
    return ({tuple(sorted(known)): LINE_BYTES * sum(known.values())},
            max(uncore_threads(raw[ch]) for ch in known))


def channel_dram(ref: Part, timed: list[Part], notes: list[str]) -> float | None:
    """DRAM bytes of the groups that each count some channels (Zen 3: MEM1 + MEM2), each
    put on the time of the group that counted the FLOP; a channel counted twice is read
    once. None when no group counts channels."""
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
    if len(seen) < ZEN3_CHANNELS:
        # likwid's zen3 MEM1/MEM2 split 8 channel counters in two; a client part (Ryzen:
        # 2 channels) may have all its memory behind MEM1 (review 17a N9)
        notes.append(f"only channels {span(tuple(sorted(seen)))} counted: a server Zen 3 "
                     f"(EPYC) has 8, so measure -g MEM1 -g MEM2 there, or DRAM bytes read "
                     f"low and AI high; a 2-channel part (Ryzen) is covered by MEM1")
    return total

