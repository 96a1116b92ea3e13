"""What one likwid group measured for one region (or the whole run): FLOP by precision
from its raw FP events or its DP/SP MFLOP/s metric, bytes by level, time, threads."""

from __future__ import annotations

from dataclasses import dataclass, field

from .flop_events import (
    FP_ARITH,
    LIKWID_AMD_FLOPS,
    LIKWID_FP16,
    every_precision_note,
    group_precision,
)
from .likwid_bytes import channel_bytes, coarse_note, volumes
from .likwid_tables import (
    CALLS,
    INFO_RUNTIME,
    RATE,
    RATE_PRECISION,
    RUNTIME,
    Table,
    on_hbm,
    per_thread,
    thread_max,
    thread_sum,
    unknown_note,
)
from .skips import SkipLog


@dataclass
class Part:
    """What one group measured for one region: FLOP by precision, bytes by level, time."""

    group: str
    line: int
    seconds: float | None
    calls: int
    threads: int
    flop: dict[str, float]
    bytes: dict[str, float]
    notes: list[str]
    sockets: int = 0             # threads that read the memory controllers (one per socket)
    channels: dict[tuple[int, ...], float] = field(default_factory=dict)   # Zen's MEM1/MEM2
    clock: str = RUNTIME         # the row the time was read from


def group_part(raw: Table | None, metric: Table | None, path: str, log: SkipLog,
               precision: str | None = None) -> Part:
    """One group's FLOP, bytes and time for one region (or the whole run); precision: the
    user's for AMD's every-precision FLOP event (--precision)."""
    t0 = raw or metric
    assert t0 is not None
    events, info = per_thread(raw, path, log) if raw else ({}, {})
    metrics, _ = per_thread(metric, path, log) if metric else ({}, {})
    notes: list[str] = []
    clock, time_line, times = _times(info, events, metrics, raw)
    seconds = thread_max(times)
    if seconds is not None and None in times:   # once silently the other threads' time
        log.add(time_line, f"'{clock}': {times.count(None)} of {len(times)} threads have no "
                           f"value ('-' or 'nan'): the time is the longest of the others' "
                           f"({seconds:g} s), which may be short of the region's, so its "
                           f"rates may read high (check the export)")
    if clock == RUNTIME and RUNTIME not in events and seconds:
        notes += coarse_note(RUNTIME, [seconds], "the time")
    threads = len(times) or max((len(v) for _, v in events.values()), default=0)
    counts = info.get(CALLS[0]) or events.get(CALLS[1], (0, []))[1]
    calls = int(thread_max(counts or []) or 1)
    flop = _raw_flop(events, t0.group_name, notes, log, precision)
    if not flop:
        flop = _rate_flop(metrics, times, notes, log, clock)
    if precision and flop and not any(LIKWID_AMD_FLOPS.get(n) == "" for n in events):
        notes.append(f"--precision {precision} not applied: the FP events say each FLOP's "
                     f"precision")
    nbytes, sockets = volumes(metrics, events, notes, log,
                              on_hbm(raw) or "HBM" in t0.group_name.upper())
    channels: dict[tuple[int, ...], float] = {}
    if "DRAM" not in nbytes:
        channels, sockets = channel_bytes(metrics, events, notes, log, sockets)
    return Part(t0.group_name, t0.line, seconds, calls, threads, flop, nbytes, notes,
                sockets, channels, clock)


def clock_words(clock: str) -> str:
    """The time's row as notes name it."""
    return f"'{RUNTIME}'" + ("" if clock == RUNTIME else
                             f" (Region Info's '{INFO_RUNTIME}', 6 decimals)")


def _times(info, events, metrics, raw: Table | None = None
           ) -> tuple[str, int | None, list[float | None]]:
    """(the row, its line, each thread's time): Region Info's (printed "%.6f"), else the Raw
    table's (a group without metrics, likwid-mpirun: "%e" or in full), else the Metric
    table's, which likwid prints with 4 decimals (0.1 ms: a short region's time would be
    off by up to half; review s20 r1 F1)."""
    if info.get(INFO_RUNTIME):
        line = next((n for n, cells in (raw.rows if raw else ()) if cells[0] == INFO_RUNTIME),
                    None)
        return INFO_RUNTIME, line, info[INFO_RUNTIME]
    for rows in (events, metrics):
        if rows.get(RUNTIME, (0, []))[1]:
            return RUNTIME, rows[RUNTIME][0], rows[RUNTIME][1]
    return RUNTIME, None, []


def _raw_flop(events, group: str, notes: list[str], log: SkipLog,
              given: str | None = None) -> dict[str, float]:
    flop: dict[str, float] = {}
    for name, (line, values) in events.items():
        if name not in FP_ARITH and name not in LIKWID_AMD_FLOPS and name not in LIKWID_FP16:
            continue
        total = thread_sum(values)
        if total is None:
            log.add(line, unknown_note(name, values, "left out, the FLOP it counts are missing"))
            continue
        if None in values:   # a core counter counts on every thread: once silently low
            log.add(line, f"{name}: {values.count(None)} of {len(values)} threads have no "
                          f"value ('-' or 'nan'): their FLOP are not counted, so the FLOP "
                          f"may read low (check the export)")
        if name in FP_ARITH or name in LIKWID_FP16:
            precision, weight = FP_ARITH.get(name) or LIKWID_FP16[name]
            flop[precision] = flop.get(precision, 0.0) + weight * total
        else:
            precision = LIKWID_AMD_FLOPS[name] or given or group_precision(group)
            flop[precision] = flop.get(precision, 0.0) + total
            if not LIKWID_AMD_FLOPS[name]:
                notes.append(every_precision_note(
                    name, given, f"{precision} (group {group}; code that computes in "
                                 f"another precision: give --precision)"))
    if flop:
        intel = [what for what, table in (("FP_ARITH_INST_RETIRED_*", FP_ARITH),
                                          ("FP_ARITH_INST_RETIRED2_* (fp16)", LIKWID_FP16))
                 if any(n in table for n in events)]
        notes.append(f"FLOP from the raw FP events ({' and '.join(intel)} weighted by vector "
                     f"width, an FMA counted twice by the hardware)" if intel else
                     "FLOP from RETIRED_SSE_AVX_FLOPS (counts FLOPs)")
    return flop


def _rate_flop(metrics, times: list[float | None], notes: list[str],
               log: SkipLog, clock: str = RUNTIME) -> dict[str, float]:
    """FLOP = DP/SP/HP [MFLOP/s] x runtime, thread by thread, when no raw FP event is
    there."""
    flop: dict[str, float] = {}
    for name, (line, rates) in metrics.items():
        hit = RATE.match(name)
        if hit is None:
            continue
        precision = RATE_PRECISION[hit[1].upper()]
        pairs = [(r, t) for r, t in zip(rates, times, strict=False)
                 if r is not None and t is not None]
        if not pairs:
            log.add(line, unknown_note(name, rates, "no FLOP counted from it"))
            continue
        total = sum(r * 1e6 * t for r, t in pairs)
        flop[precision] = flop.get(precision, 0.0) + total
        notes.append(f"{precision} FLOP = '{name}' x {clock_words(clock)}, summed over threads")
    return flop

