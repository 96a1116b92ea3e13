"""likwid-perfctr CSV output (`likwid-perfctr -C 0-N -g MEM_DP [-m] -O -o out.csv ./app`) ->
Kernels: one per marker region (LIKWID_MARKER_START("name") ... STOP), or one for the whole
run without the marker API.

The format, as likwid writes it (RRZE-HPC/likwid src/applications/likwid.lua, printOutput
and printcsv; likwid-mpirun.lua reads it back the same way): a table per group and kind,

    STRUCT,Info,3,,,
    CPU name:,Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz,,,
    TABLE,Region triad,Group 1 Raw,MEM_DP,20,,,        (no marker API: TABLE,Group 1 Raw,...)
    Region Info,HWThread 0,HWThread 1                    (marker API only: these 3 lines)
    RDTSC Runtime [s],0.500000,0.500100
    call count,10,10
    Event,Counter,HWThread 0,HWThread 1
    FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE,PMC2,100000000,100000000
    TABLE,Region triad,Group 1 Raw STAT,MEM_DP,20,,,     (more than one thread; "Raw Stat"
    Event,Counter,Sum,Min,Max,Avg                          in likwid 4)
    TABLE,Region triad,Group 1 Metric,MEM_DP,25,,,
    Metric,HWThread 0,HWThread 1
    Runtime (RDTSC) [s],0.500000,0.500100
    DP [MFLOP/s],1600.0000,1599.6801
    TABLE,Region triad,Group 1 Metric STAT,MEM_DP,25,,,
    Metric,Sum,Min,Max,Avg

printcsv writes each table transposed (one line per event or metric, one column per
hardware thread) and pads every line with commas to the widest table; the 4th field of a
TABLE line is the number of rows after the header. likwid writes `-` or `nan` for a value it
could not read.

What is read, per region and group (a region measured with several groups, `-g MEM_DP -g L2
-g L3`, gets one point per level):

- time: the region's wall time, the longest thread's "Runtime (RDTSC) [s]" (the Metric
  table; else "RDTSC Runtime [s]" of Region Info; else the Raw table's TSC row). Threads run
  side by side, so the sum of their times is not the region's time.
- FLOP: the raw FP_ARITH_INST_RETIRED_{SCALAR,128B_PACKED,256B_PACKED,512B_PACKED}_DOUBLE
  counts weighted 1/2/4/8 and _SINGLE weighted 1/4/8/16, summed over threads, as likwid's
  FLOPS_DP/FLOPS_SP/MEM_DP groups weigh them (groups/skylakeX/MEM_DP.txt: "DP [MFLOP/s]
  1.0E-06*(PMC0*2.0+PMC1+PMC2*4.0+PMC3*8.0)/time"). Intel counts an FMA instruction twice in
  these events already (intel/perfmon, e.g. SKX/events/skylakex_core.json,
  FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE: "Counts twice for DPP and FM(N)ADD/SUB
  instructions retired"), so no further factor 2 is applied: an FMA is 2 FLOP per element.
  AMD's RETIRED_SSE_AVX_FLOPS_ALL (Zen 3/4, likwid's FLOPS_DP/FLOPS_SP groups, with MERGE)
  counts FLOPs, not instructions: read unweighted, as likwid's formula does, and given the
  group's precision (it counts every precision). Without raw FP events: "DP [MFLOP/s]" /
  "SP [MFLOP/s]" (likwid 4: "DP MFLOP/s", "DP MFlops/s") x the thread's runtime, summed.
- DRAM bytes: "Memory data volume [GBytes]" (x 1e9, summed over threads: the uncore
  counters are read by one thread per socket, the others show 0, as likwid's Sum column
  adds them); else read + write volumes; else 64 B x the raw CAS_COUNT_RD/WR (or
  DRAM_READS/DRAM_WRITES) counts.
- L2 / L3 bytes: "L2 data volume [GBytes]" / "L3 data volume [GBytes]" of the L2 / L3 groups
  (groups/skylake/L2.txt: 64 x (L1D_REPLACEMENT + L1D_M_EVICT + ...); groups/skylakeX/L3.txt:
  64 x (L2_LINES_IN_ALL + L2_TRANS_L2_WB)).

Groups of one region measured for different times (likwid multiplexes several -g groups,
or the marker API switched groups between calls) are put on one time: each group's bytes
are scaled by (time of the group that counted the FLOP) / (its own time), with a note.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParseError
from ..files import STDIN_NAME
from ..model.kernel import Kernel
from .aggregate import step_labels
from .ncu_csv import read_text
from .profile_import import ProfileImport, held_notes
from .skips import SkipLog, read_each

COLLECT = ("collect with `likwid-perfctr -C 0-N -g MEM_DP -m -O -o out.csv ./app` (-m: "
           "the marker API's regions; -O: CSV)")
_TABLE = re.compile(r"^(?:Region (?P<region>.*?),)?Group (?P<group>\d+) "
                    r"(?P<kind>Raw|Metric)(?P<stat> STAT)?$", re.IGNORECASE)
# FP_ARITH_INST_RETIRED_<width>_<precision>: FLOP per count (likwid's FLOPS_DP/_SP groups)
FP_ARITH = {f"FP_ARITH_INST_RETIRED_{w}_{p.upper()}": (prec, n)
            for p, prec, widths in (("double", "fp64", (1, 2, 4, 8)),
                                    ("single", "fp32", (1, 4, 8, 16)))
            for w, n in zip(("SCALAR", "128B_PACKED", "256B_PACKED", "512B_PACKED"), widths,
                            strict=True)}
AMD_FLOPS = {"RETIRED_SSE_AVX_FLOPS_DOUBLE_ALL": "fp64", "RETIRED_SSE_AVX_FLOPS_SINGLE_ALL":
             "fp32", "RETIRED_SSE_AVX_FLOPS_ALL": ""}   # "": the group's precision
_RATE = re.compile(r"^(DP|SP) \[?MFLOP(?:S)?/s\]?$", re.IGNORECASE)
RUNTIME = "Runtime (RDTSC) [s]"
VOLUMES = {"DRAM": ("Memory data volume [GBytes]",), "L2": ("L2 data volume [GBytes]",),
           "L3": ("L3 data volume [GBytes]",)}
_READ_WRITE = ("Memory read data volume [GBytes]", "Memory write data volume [GBytes]")
_CAS = re.compile(r"^(CAS_COUNT_(RD|WR)|DRAM_READS|DRAM_WRITES)$")
# AMD Zen 3 has 8 DRAM channels and 4 data-fabric counters, so likwid splits them in two
# groups (perfgroups/zen3/MEM1.txt: "Memory data volume (channels 0-3) [GBytes]" =
# 1.0E-09*(DFC0+DFC1+DFC2+DFC3)*64.0 over DRAM_CHANNEL_0..3; MEM2.txt: channels 4-7):
# each group's bytes are part of the region's, added up over its groups
_CHANNELS = re.compile(r"^Memory data volume \(channels (\d+)-(\d+)\) \[GBytes\]$")
_DRAM_CHANNEL = re.compile(r"^DRAM_CHANNEL_(\d+)$")
# likwid 5.2's perfgroups: zen3/ has MEM1 + MEM2 and no MEM/MEM_DP; zen2/ has MEM, MEM_DP
ZEN_MEM = "on AMD Zen 3 measure -g MEM1 -g MEM2 (likwid has no MEM or MEM_DP group there)"
# glibc prints a negative NaN as "-nan" (likwid's Lua prints what C's printf gives)
_UNKNOWN = ("-", "nan", "-nan", "+nan", "")
# a core counter holds one event per hardware thread: an event named on two of them was
# given twice (a custom group), where one on two uncore boxes (MBOX0C0, MBOX1C0) is two
# memory controllers' counts to add
_CORE_COUNTER = re.compile(r"^(PMC|FIXC)\d+$", re.IGNORECASE)


@dataclass
class _Table:
    line: int                    # 1-based line of its TABLE header
    region: str | None
    group: int
    group_name: str
    kind: str                    # "raw" or "metric"
    stat: bool
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


@dataclass
class _Part:
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


def _cells(line: str) -> list[str]:
    return [c.strip() for c in next(csv.reader([line]))] if line else []


def counter_text(path: str, text: str | None = None) -> str:
    """A counter tool's saved output (`text`: standard input's, read already) without a
    byte-order mark, or ParseError when it holds nothing to read: an empty file, or binary
    data (read as U+FFFD), which would otherwise be quoted back as garbage in a 'not a ...
    line' error."""
    # a byte-order mark (a file saved by a Windows editor) is no part of the first line
    text = (read_text(path) if text is None else text).removeprefix("\ufeff")
    if not text.strip() and path == STDIN_NAME:
        raise ParseError("is empty: nothing came through the pipe (perf stat writes its "
                         "counts to stderr: `perf stat ... 2>&1 | rooflab perf -`)", path=path)
    if not text.strip():
        raise ParseError("is empty: nothing to read (did the run write its output here? "
                         "likwid-perfctr -o and perf stat -o name the file)", path=path)
    head = text[:4096]
    odd = [i for i, ch in enumerate(head) if ch in "\x00\ufffd"]
    if odd and ("\x00" in head or len(odd) > len(head) // 50):
        raise ParseError("holds binary data, not the text likwid-perfctr or perf stat "
                         "writes: is it the right file?", path=path,
                         line=head[:odd[0]].count("\n") + 1)
    return text


def read_tables(path: str, text: str | None = None) -> tuple[str, list[_Table]]:
    """(CPU name, tables) of one likwid-perfctr CSV file (`text`: its contents, when read
    already from standard input), tables in file order."""
    lines = counter_text(path, text).splitlines()
    cpu = ""
    tables: list[_Table] = []
    for n, line in enumerate(lines, start=1):
        cells = _cells(line.lstrip("\ufeff"))
        if not cells or not any(cells):
            continue
        if cells[0] == "TABLE":
            tables.append(_table_header(cells, path, n))
        elif cells[0] == "STRUCT":
            tables.append(_Table(n, None, 0, "", "info", False))
        elif cells[0] == "CPU name:" and len(cells) > 1:
            cpu = cpu or cells[1]
        elif tables:
            tables[-1].rows.append((n, cells))
    if not any(t.kind != "info" for t in tables):
        raise ParseError(_not_csv(lines), path=path, line=1 if lines else None)
    tables = [t for t in tables if t.kind != "info"]
    for t in tables:
        _check_rows(t, path)
    return cpu, tables


def _table_header(cells: list[str], path: str, n: int) -> _Table:
    """TABLE,[Region NAME,]Group N Raw|Metric[ STAT],GROUPNAME,ROWS."""
    region = len(cells) > 2 and cells[1].startswith("Region ")
    name = f"{cells[1]},{cells[2]}" if region else (cells[1] if len(cells) > 1 else "")
    rest = cells[3:] if region else cells[2:]
    hit = _TABLE.match(name)
    if hit is None or not rest or not rest[0]:
        raise ParseError(f"'{','.join(c for c in cells if c)}' is not a likwid table header "
                         f"(TABLE,[Region NAME,]Group N Raw|Metric[ STAT],GROUP,ROWS); was the "
                         f"file edited or cut?", path=path, line=n)
    return _Table(n, hit["region"], int(hit["group"]), rest[0], hit["kind"].lower(),
                  bool(hit["stat"]))


def _check_rows(t: _Table, path: str) -> None:
    """A table needs its header row: a file cut short ends inside one."""
    heads = ("Event",) if t.kind == "raw" else ("Metric",)
    if not any(cells[0] in heads for _, cells in t.rows):
        raise ParseError(f"table '{_where(t)}' has no '{heads[0]},...' row (file cut "
                         f"short?); re-export it with likwid-perfctr -O", path=path,
                         line=t.line)


def _where(t: _Table) -> str:
    return (f"Region {t.region}, " if t.region is not None else "") + \
        f"Group {t.group} {t.kind.capitalize()}{' STAT' if t.stat else ''} ({t.group_name})"


def _not_csv(lines: list[str]) -> str:
    head = "\n".join(lines[:60])
    if "Region Info" in head or re.search(r"^\|\s+(Event|Metric)\s+\|", head, re.M):
        return ("likwid-perfctr's table output (+----+ boxes), not its CSV: re-run with -O "
                "(`likwid-perfctr ... -O -o out.csv ./app`)")
    if "Performance counter stats" in head or "seconds time elapsed" in head:
        return "perf stat output, not likwid's: read it with `rooflab perf FILE`"
    return "no likwid-perfctr table (a 'TABLE,Group 1 Raw,...' line) found; " + COLLECT


def _number(text: str, t: _Table, line: int, what: str, path: str) -> float | None:
    """A cell's value; None for what likwid writes for an unknown one ('-', 'nan')."""
    if text.lower() in _UNKNOWN:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"{what} = '{text}' in table '{_where(t)}' is not a number; check "
                         f"the export", path=path, line=line) from None
    if not math.isfinite(value) or value < 0:
        raise ParseError(f"{what} = '{text}' in table '{_where(t)}': a count, volume or time "
                         f"must be >= 0 and finite", path=path, line=line)
    return value


def _per_thread(t: _Table, path: str, log: SkipLog
                ) -> tuple[dict[str, tuple[int, list[float | None]]],
                           dict[str, list[float | None]]]:
    """({row name: (line, value per thread)}, {Region Info row: value per thread}) of a
    per-thread (not STAT) table; a raw table's rows are keyed by event name, its values
    start after the Counter column. A row named twice on core counters (PMC, FIXC) or in a
    Metric table is a repeat, left out with a warning; on uncore boxes, the boxes' sum."""
    rows: dict[str, tuple[int, list[float | None]]] = {}
    info: dict[str, list[float | None]] = {}
    skip = 2 if t.kind == "raw" else 1
    in_info = False
    for n, cells in t.rows:
        name = cells[0]
        if name == "Region Info":
            in_info = True
            continue
        if name in ("Event", "Metric"):
            in_info = False
            continue
        if not _used(name):   # a metric rooflab does not read (CPI, energy) is not checked
            continue
        if in_info:
            info[name] = [_number(c, t, n, f"'{name}'", path) for c in cells[1:] if c]
            continue
        values = [_number(c, t, n, f"'{name}'", path) for c in cells[skip:] if c]
        if name in rows and _repeat(t, cells):
            log.add(n, f"'{name}' appears twice in table '{_where(t)}' (also line "
                       f"{rows[name][0]}): counted once, this row left out (an event given "
                       f"twice in a custom group?)")
            continue
        if name in rows:   # one event on two counters (CAS_COUNT_RD on MBOX0C0, MBOX1C0...)
            old = rows[name][1]
            values = [(a or 0.0) + (b or 0.0) if a is not None or b is not None else None
                      for a, b in zip(old, values, strict=False)]
        rows[name] = (rows.get(name, (n,))[0], values)
    return rows, info


def _repeat(t: _Table, cells: list[str]) -> bool:
    return t.kind != "raw" or len(cells) < 2 or bool(_CORE_COUNTER.match(cells[1]))


def _used(name: str) -> bool:
    return (name in (RUNTIME, "RDTSC Runtime [s]", "call count") or name in FP_ARITH
            or name in AMD_FLOPS or name in _READ_WRITE or bool(_RATE.match(name))
            or bool(_CAS.match(name)) or any(name in v for v in VOLUMES.values())
            or bool(_CHANNELS.match(name) or _DRAM_CHANNEL.match(name)))


def _total(values: list[float | None]) -> float | None:
    """The sum over threads; None when no thread has a value: an unknown count is not 0
    (one thread's '-' is normal, uncore counted by one thread per socket; all '-' is not)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _unknown(name: str, values: list[float | None], what: str) -> str:
    return (f"{name}: no thread has a value ({len(values)} x '-' or 'nan'): {what} (an "
            f"unknown count is not read as 0)")


def _uncore_threads(values: list[float | None]) -> int:
    """Threads that read an uncore count (likwid reads it on one thread per socket; the
    others show 0 or '-'): the sockets counted."""
    return sum(1 for v in values if v)


def _longest(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _group_precision(group: str) -> str:
    """FLOPS_SP / MEM_SP count single precision; every other group is read as double."""
    return "fp32" if re.search(r"(^|_)SP($|_)", group.upper()) else "fp64"


def _part(raw: _Table | None, metric: _Table | None, path: str, log: SkipLog,
          precision: str | None = None) -> _Part:
    """One group's FLOP, bytes and time for one region (or the whole run); precision: the
    user's for AMD's every-precision FLOP event (--precision)."""
    t0 = raw or metric
    assert t0 is not None
    events, info = _per_thread(raw, path, log) if raw else ({}, {})
    metrics, _ = _per_thread(metric, path, log) if metric else ({}, {})
    notes: list[str] = []
    times = (metrics.get(RUNTIME, (0, []))[1] or info.get("RDTSC Runtime [s]")
             or events.get(RUNTIME, (0, []))[1] or [])
    seconds = _longest(times)
    threads = len(times) or max((len(v) for _, v in events.values()), default=0)
    calls = int(_longest(info.get("call count", [])) or 1)
    flop = _raw_flop(events, t0.group_name, notes, log, precision)
    if not flop:
        flop = _rate_flop(metrics, times, notes, log)
    if precision and flop and not any(AMD_FLOPS.get(n) == "" for n in events):
        notes.append(f"--precision {precision} not applied: the FP events say each FLOP's "
                     f"precision")
    nbytes, sockets = _volumes(metrics, events, notes, log)
    channels: dict[tuple[int, ...], float] = {}
    if "DRAM" not in nbytes:
        channels, sockets = _channel_bytes(metrics, events, notes, log, sockets)
    return _Part(t0.group_name, t0.line, seconds, calls, threads, flop, nbytes, notes,
                 sockets, channels)


def _raw_flop(events, group: str, notes: list[str], log: SkipLog,
              given: str | None = None) -> dict[str, float]:
    flop: dict[str, float] = {}
    for name, (line, values) in events.items():
        if name not in FP_ARITH and name not in AMD_FLOPS:
            continue
        total = _total(values)
        if total is None:
            log.add(line, _unknown(name, values, "left out, the FLOP it counts are missing"))
            continue
        if name in FP_ARITH:
            precision, weight = FP_ARITH[name]
            flop[precision] = flop.get(precision, 0.0) + weight * total
        else:
            precision = AMD_FLOPS[name] or given or _group_precision(group)
            flop[precision] = flop.get(precision, 0.0) + total
            if not AMD_FLOPS[name]:
                notes.append(f"{name} counts the FLOP of every precision: read as "
                             + (f"{given} (--precision {given})" if given else
                                f"{precision} (group {group}; code that computes in "
                                f"another precision: give --precision)"))
    if flop:
        notes.append("FLOP from the raw FP events (FP_ARITH_INST_RETIRED_* weighted by "
                     "vector width, an FMA counted twice by the hardware)"
                     if any(n in FP_ARITH for n in events) else
                     "FLOP from RETIRED_SSE_AVX_FLOPS (counts FLOPs)")
    return flop


def _rate_flop(metrics, times: list[float | None], notes: list[str],
               log: SkipLog) -> dict[str, float]:
    """FLOP = DP/SP [MFLOP/s] x runtime, thread by thread, when no raw FP event is there."""
    flop: dict[str, float] = {}
    for name, (line, rates) in metrics.items():
        hit = _RATE.match(name)
        if hit is None:
            continue
        precision = "fp64" if hit[1].upper() == "DP" else "fp32"
        pairs = [(r, t) for r, t in zip(rates, times, strict=False)
                 if r is not None and t is not None]
        if not pairs:
            log.add(line, _unknown(name, rates, "no FLOP counted from it"))
            continue
        total = sum(r * 1e6 * t for r, t in pairs)
        flop[precision] = flop.get(precision, 0.0) + total
        notes.append(f"{precision} FLOP = '{name}' x '{RUNTIME}', summed over threads")
    return flop


def _volumes(metrics, events, notes: list[str],
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
            total = _total(values)
            if total is None:
                log.add(line, _unknown(name, values, f"no {level} bytes from it"))
                continue
            out[level] = 1e9 * total
            sockets = _uncore_threads(values) if level == "DRAM" else sockets
            break
    if "DRAM" not in out and all(n in metrics for n in _READ_WRITE):
        totals = [_total(metrics[n][1]) for n in _READ_WRITE]
        if None in totals:
            gone = [n for n, t in zip(_READ_WRITE, totals, strict=True) if t is None]
            log.add(metrics[gone[0]][0], _unknown(gone[0], metrics[gone[0]][1],
                                                  "no DRAM bytes from the read + write "
                                                  "volumes"))
        else:
            out["DRAM"] = 1e9 * sum(t for t in totals if t is not None)
            sockets = max(_uncore_threads(metrics[n][1]) for n in _READ_WRITE)
    if "DRAM" not in out:
        cas = {name: v for name, (_, v) in events.items() if _CAS.match(name)}
        known = [t for t in (_total(v) for v in cas.values()) if t is not None]
        if known:
            out["DRAM"] = 64.0 * sum(known)
            sockets = max(_uncore_threads(v) for v in cas.values())
            notes.append("DRAM bytes = 64 B x the memory controllers' CAS/DRAM read and "
                         "write counts")
        elif cas:
            name = next(iter(cas))
            log.add(events[name][0], _unknown(name, cas[name], "no DRAM bytes from the CAS "
                                                               "counts"))
    return out, sockets


def _channel_bytes(metrics, events, notes: list[str], log: SkipLog,
                   sockets: int) -> tuple[dict[tuple[int, ...], float], int]:
    """({channels: bytes}, sockets) of a group that counts some of the DRAM channels (Zen
    3's MEM1 or MEM2): its 'Memory data volume (channels a-b) [GBytes]', else 64 B x its
    raw DRAM_CHANNEL_N counts (the groups' own formula)."""
    for name, (line, values) in metrics.items():
        hit = _CHANNELS.match(name)
        if hit is None:
            continue
        total = _total(values)
        if total is None:
            log.add(line, _unknown(name, values, "no DRAM bytes from it"))
            continue
        return ({tuple(range(int(hit[1]), int(hit[2]) + 1)): 1e9 * total},
                _uncore_threads(values))
    raw = {int(m[1]): v for name, (_, v) in events.items() if (m := _DRAM_CHANNEL.match(name))}
    known = {ch: t for ch, v in raw.items() if (t := _total(v)) is not None}
    if not known:
        return {}, sockets
    notes.append("DRAM bytes = 64 B x the raw DRAM_CHANNEL_N counts")
    return ({tuple(sorted(known)): 64.0 * sum(known.values())},
            max(_uncore_threads(raw[ch]) for ch in known))


def _channel_dram(ref: _Part, timed: list[_Part], notes: list[str]) -> float | None:
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
            said.append(f"channels {_span(chans)} (group {p.group})")
    if not said:
        return None
    notes.append(f"DRAM bytes = {' + '.join(said)}, each on the {ref.seconds:.6g} s of "
                 f"group {ref.group}")
    if len(seen) < 8:   # likwid's zen3 MEM1 + MEM2: 8 channels
        notes.append(f"only channels {_span(tuple(sorted(seen)))} counted (Zen 3 has 8: "
                     f"measure -g MEM1 -g MEM2): DRAM bytes read low, AI high")
    return total


def _span(chans: tuple[int, ...]) -> str:
    """(0, 1, 2, 3) -> '0-3'; (0, 2) -> '0, 2'."""
    if len(chans) > 1 and list(chans) == list(range(chans[0], chans[-1] + 1)):
        return f"{chans[0]}-{chans[-1]}"
    return ", ".join(map(str, chans))


def _regions(tables: list[_Table], path: str) -> dict[str | None, list[tuple[_Table | None,
                                                                              _Table | None]]]:
    """{region (None: the whole run): [(raw, metric) table of each group]}, file order."""
    found: dict[str | None, dict[tuple[int, str], list]] = {}
    for t in tables:
        if t.stat:
            continue
        slot = found.setdefault(t.region, {}).setdefault((t.group, t.group_name), [None, None])
        i = 0 if t.kind == "raw" else 1
        if slot[i] is not None:
            raise ParseError(f"table '{_where(t)}' appears twice (line {slot[i].line} and "
                             f"here): two runs of one group in one file? Give each run its "
                             f"own file (several files are steps)", path=path, line=t.line)
        slot[i] = t
    return {r: [tuple(v) for v in groups.values()] for r, groups in found.items()}


def _merge(region: str | None, parts: list[_Part], log: SkipLog,
           label: str, amd: bool = False) -> tuple[dict, list[str]] | None:
    """The region's Kernel fields from its groups: FLOP from the first group that counted
    any, time from that group, other groups' bytes put on its time."""
    name = region if region is not None else \
        (f"{label} (whole run)" if label else "whole run")   # steps: the label says which
    timed = [p for p in parts if p.seconds]
    if not timed:
        log.add(parts[0].line, f"region '{name}' skipped: no runtime (Runtime (RDTSC) [s]) "
                               f"or a zero one; was the region ever entered?")
        return None
    ref = next((p for p in timed if p.flop), timed[0])
    notes = list(ref.notes)
    flop = dict(ref.flop)
    nbytes: dict[str, float] = {}
    for p in [ref] + [p for p in timed if p is not ref]:
        scale = ref.seconds / p.seconds
        for level, v in p.bytes.items():
            if level in nbytes:
                continue
            nbytes[level] = v * scale
            if abs(scale - 1) > 0.01:
                notes.append(f"{level} bytes from group {p.group} (measured over "
                             f"{p.seconds:.6g} s) scaled to the {ref.seconds:.6g} s of "
                             f"group {ref.group}: the groups ran at different times")
        notes += [n for n in p.notes if n not in notes and p is not ref and "bytes" in n]
    dram = None if "DRAM" in nbytes else _channel_dram(ref, timed, notes)
    if dram is not None:
        nbytes = {"DRAM": dram, **nbytes}
    if not flop:
        notes.append("no FLOP counted (no FP_ARITH_INST_RETIRED_* events or DP/SP MFLOP/s "
                     "metric in its groups): a bytes-only point; add the FLOPS_DP group or "
                     "use MEM_DP")
    if not nbytes:
        groups = (ZEN_MEM + "; on Zen 2 the MEM_DP or MEM group; or the L2 or L3 group"
                  if amd else "measure the MEM_DP, MEM, L2 or L3 group (" + ZEN_MEM + ")")
        log.add(ref.line, f"region '{name}' skipped: no bytes at any level (no 'Memory data "
                          f"volume [GBytes]' or '(channels a-b)', L2/L3 data volume, "
                          f"CAS_COUNT or DRAM_CHANNEL events); {groups}")
        return None
    fields = {"name": name, "flop": {k: v for k, v in flop.items() if v > 0},
              "bytes": nbytes, "seconds": ref.seconds, "calls": ref.calls,
              "threads": ref.threads, "line": ref.line,
              "groups": [p.group for p in parts],
              "sockets": max((p.sockets for p in parts), default=0)}
    if fields["sockets"] > 1:
        notes.append(sockets_note(fields["sockets"]))
    notes.append(f"time = the longest of {ref.threads} threads' {RUNTIME} (the region's "
                 f"wall time; threads run side by side)" if ref.threads > 1 else
                 f"time = {RUNTIME}")
    return fields, notes


def read_likwid(path: str, log: SkipLog, label: str, text: str | None = None,
                precision: str | None = None) -> tuple[str, list[tuple[dict, list]]]:
    """(CPU name, [(kernel fields, notes)] per region) of one file (`text`: its contents,
    read already from standard input; precision: --precision, for AMD's FLOP event)."""
    cpu, tables = read_tables(path, text)
    amd = "AMD" in cpu.upper() or any(t.group_name in ("MEM1", "MEM2") for t in tables)
    out = []
    for region, groups in _regions(tables, path).items():
        parts = [_part(raw, metric, path, log, precision) for raw, metric in groups]
        merged = _merge(region, parts, log, label, amd)
        if merged is not None:
            out.append(merged)
    return cpu, out


def _kernel(fields: dict, notes: list[str], path: str, step: str | None,
            index: int | None) -> Kernel:
    name = fields["name"] if step is None else f"{fields['name']} [{step}]"
    meta = {"source": "likwid", "full_name": fields["name"], "file": path,
            "line": fields["line"], "device": "cpu", "threads": fields["threads"],
            "groups": fields["groups"], "notes": notes}
    if fields["sockets"]:
        meta["sockets"] = fields["sockets"]
    if step is not None:
        meta["step"], meta["step_index"] = step, index
    return Kernel(name=name, flop=fields["flop"], bytes=fields["bytes"],
                  seconds=fields["seconds"], calls=fields["calls"],
                  provenance={"flop": "counted", "bytes": "measured", "seconds": "measured"},
                  unit="vector" if fields["flop"] else None, meta=meta)


def load_likwid(paths, stdin: str | None = None,
                precision: str | None = None) -> ProfileImport:
    """Kernels of one or more likwid-perfctr CSV files (several = steps), longest first.
    stdin: the text of the file named STDIN_NAME (`rooflab likwid -`); precision: what the
    code computes in, for AMD's RETIRED_SSE_AVX_FLOPS_ALL (every precision; the group's
    precision when None)."""
    from .perf_stat import check_precision

    precision = check_precision(precision)
    paths = [paths] if isinstance(paths, str) else list(paths)
    several = len(paths) > 1
    labels = step_labels(paths)

    def read(path: str, log: SkipLog):
        given = stdin if path == STDIN_NAME else None
        cpu, regions = read_likwid(path, log, "" if several else stem(path), given,
                                   precision)
        if not regions:
            raise _unusable(path, log)
        return cpu, regions

    done, failed = read_each(paths, read)
    kernels, cpus = [], []
    for f in done:
        cpu, regions = f.value
        if cpu and cpu not in cpus:
            cpus.append(cpu)
        step = labels[f.index] if several else None
        kernels += [_kernel(fields, n, f.path, step, f.index if several else None)
                    for fields, n in regions]
    if not kernels:
        raise ParseError("no file has a usable region: " + "; ".join(str(s) for s in failed))
    kernels.sort(key=lambda k: -(k.seconds or 0.0))
    return ProfileImport(kernels=tuple(kernels),
                         skips=tuple(s for f in done for s in f.skips), failed=tuple(failed),
                         devices=tuple(cpus), files=tuple(f.path for f in done),
                         notes=held_notes(kernels))


def stem(path: str) -> str:
    """A file's name without its suffix, 'stdin' for standard input: a kernel's name."""
    return "stdin" if path == STDIN_NAME else Path(path).stem


def sockets_note(n: int, ids: str = "") -> str:
    """Counts from several sockets against a catalog CPU, whose ceilings are one socket's:
    the % of roof would read up to n x high, so say it."""
    which = f" ({ids})" if ids else ""
    every = "both" if n == 2 else f"all {n}"
    return (f"counted on {n} sockets{which}: a catalog CPU's ceilings are per socket, so "
            f"against one the % of roof reads up to {n}x high; use a roof of {every} sockets "
            f"(a profile from `rooflab probe -o me.json` on this machine) or count one "
            f"socket")


def _unusable(path: str, log: SkipLog) -> ParseError:
    skips = log.skips()
    if len(skips) == 1:
        return ParseError(f"no usable region: {skips[0].reason}", path=path,
                          line=skips[0].line)
    why = "; ".join(f"line {s.line}: {s.reason}" for s in skips) or "no region has data"
    return ParseError(f"no usable region: {why}", path=path)
