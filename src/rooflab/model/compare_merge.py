"""Same-named kernels of one run added up for compare, and what the sum can still tell.
Pure.

A sum of entries is one kernel's time, but its samples describe that time only when every
entry carried samples of the same launches: 9 samples of a 1 ms entry beside an untimed-
by-samples 10 ms one, scaled to the sum, made the U test compare the unchanged entry with
itself and call a +91 % slowdown noise; launches of two shapes (ncu sums them, its note
'summed into one point') made a +15 % slowdown of one shape read as the mix's spread
(review s19 r5 F2). Such a kernel's noise is 'not testable' (`untestable`): the gate takes
its change as measured. An AI needs the FLOP of the entries that carry the level's bytes
(`ai`): 2 GFLOP over the 100 MB of the one entry with DRAM bytes read 20, not 10.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .kernel import Kernel, sum_counts

# meta keys merge_by_name sets: why the summed samples cannot be tested, and the FLOP of
# the entries that carry each memory level's bytes (only where some entry lacks the level)
UNTESTABLE = "noise_untestable"
LEVEL_FLOP = "flop_with_level_bytes"
# the meta flag the ncu/rocprof reader sets on a kernel whose launches of other shapes or
# AI it summed into one (ingest/aggregate.py group_kernel, beside its spread_note): the
# gate reads the flag, not the note's wording (review s19 x1 F3)
LAUNCH_MIX = "launch_mix"
# words of that note (aggregate builds it with them): only a kernels file written before
# the flag existed (rooflab <= session 19) is told by them, so the fallback keeps them
SUMMED_SHAPES = "summed into one point"


def untestable(k: Kernel) -> str | None:
    """Why this kernel's samples do not describe its total (entries without samples
    summed with ones with, entries or launches of other shapes), in words; None when they
    do."""
    why = k.meta.get(UNTESTABLE)
    if why:
        return str(why)
    notes = k.meta.get("notes")
    old = (LAUNCH_MIX not in k.meta and isinstance(notes, (list, tuple))
           and any(SUMMED_SHAPES in str(n) for n in notes))
    if k.meta.get(LAUNCH_MIX) is True or old:
        return (f"its {k.calls} launches differ in shape or AI (the profiler's note), so "
                f"their spread is the mix of launches, not timing noise")
    return None


def ai(k: Kernel, level: str) -> float | None:
    """FLOP per byte of `level`, over the entries that carry that level's bytes."""
    b = k.bytes.get(level)
    if not b:
        return None
    # `or {}`: a key present as null gave None.get (s23 r4 F6)
    split = k.meta.get(LEVEL_FLOP) or {}
    flop = split.get(level, k.total_flop) if isinstance(split, Mapping) else k.total_flop
    if isinstance(flop, bool) or not isinstance(flop, (int, float)):
        flop = k.total_flop
    return flop / b if flop > 0 else None


def _samples_apart(a: Kernel, b: Kernel) -> bool:
    """Two entries' per-call samples that do not overlap: different launches, not noise."""
    return max(a.samples) < min(b.samples) or max(b.samples) < min(a.samples)


def _merged_samples(cur: Kernel, k: Kernel) -> tuple[tuple[float, ...], str | None]:
    """(samples, why not testable) of the sum so far and one more entry."""
    if cur.meta.get(UNTESTABLE):
        return (), cur.meta[UNTESTABLE]
    if not cur.samples and not k.samples:
        return (), None
    if not cur.samples or not k.samples:
        return (), ("the entries of this name are summed, and not every entry has timing "
                    "samples (they would describe part of the total)")
    if _samples_apart(cur, k):
        return (), ("the entries of this name are summed, and their samples do not overlap "
                    "(other launches, not timing noise)")
    return cur.samples + k.samples, None


def merge_by_name(kernels: Iterable[Kernel]) -> tuple[Kernel, ...]:
    """Kernels of the same name added up: FLOP, bytes, seconds, calls, samples. A kernel
    file's repeated rows, which the reader names 'conv #2' apart (meta renamed_from), count
    under their own name again: here they are launches of one kernel."""
    out: dict[str, Kernel] = {}
    level_flop: dict[str, dict[str, float]] = {}
    entries: dict[str, list[Kernel]] = {}
    for k in kernels:
        name = k.meta.get("renamed_from", k.name)
        if not isinstance(name, str):   # a list or dict is no name (s23 r4 F5)
            name = k.name
        entries.setdefault(name, []).append(k)
        cur = out.get(name)
        if cur is None:
            out[name] = k if name == k.name else k.with_(name=name)
            continue
        seconds = (cur.seconds + k.seconds) if cur.seconds and k.seconds else None
        samples, why = _merged_samples(cur, k)
        meta = dict(cur.meta)
        if k.meta.get(LAUNCH_MIX) is True:   # the sum holds that entry's mix of launches
            meta[LAUNCH_MIX] = True
        if why:
            meta[UNTESTABLE] = why
        out[name] = cur.with_(flop=sum_counts((cur.flop, k.flop)),
                              bytes=sum_counts((cur.bytes, k.bytes)), seconds=seconds,
                              calls=cur.calls + k.calls, samples=samples, meta=meta)
    for name, group in entries.items():
        levels = {lv for e in group for lv in e.bytes}
        partial = {lv: sum(e.total_flop for e in group if e.bytes.get(lv))
                   for lv in levels if not all(e.bytes.get(lv) for e in group)}
        if partial:
            level_flop[name] = partial
    return tuple(k.with_(meta={**k.meta, LEVEL_FLOP: level_flop[n]}) if n in level_flop
                 else k for n, k in out.items())
