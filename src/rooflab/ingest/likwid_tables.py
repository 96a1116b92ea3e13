"""likwid-perfctr's CSV output (-O) read into tables, and the per-thread values of their
rows (the layout: see ingest/likwid.py)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..errors import ParseError
from ..files import csv_reader
from .counter_text import counter_text, repeat_note
from .dram_events import CAS, CHANNELS, DRAM_CHANNEL, READ_WRITE, VOLUMES
from .flop_events import FP_ARITH, LIKWID_AMD_FLOPS, LIKWID_FP16
from .likwid_cpu import LikwidCpu
from .ncu_csv import other_kind
from .skips import SkipLog

COLLECT = ("collect with `likwid-perfctr -C 0-N -g MEM_DP -m -O -o out.csv ./app` (-m: "
           "the marker API's regions; -O: CSV)")
_TABLE = re.compile(r"^(?:Region (?P<region>.*?),)?Group (?P<group>\d+) "
                    r"(?P<kind>Raw|Metric)(?P<stat> STAT)?$", re.IGNORECASE)
# likwid's DP/SP/HP rate metric (likwid 4: "DP MFLOP/s", "DP MFlops/s"; SPR's MEM_HP and
# FLOPS_HP: "HP [MFLOP/s]"), read x the runtime
RATE = re.compile(r"^(DP|SP|HP) \[?MFLOP(?:S)?/s\]?$", re.IGNORECASE)
RATE_PRECISION = {"DP": "fp64", "SP": "fp32", "HP": "fp16"}
RUNTIME = "Runtime (RDTSC) [s]"
# Region Info's time (marker API), printed "%.6f" where the Metric table's RUNTIME is "%.4f"
INFO_RUNTIME = "RDTSC Runtime [s]"
# the call count: Region Info's (likwid-perfctr), a Raw row on counter CTR (likwid-mpirun's
# printMpiOutput: "Region calls,CTR,100,100")
CALLS = ("call count", "Region calls")
# Xeon Max's HBM groups (groups/SPR/HBM_DP.txt): CAS_COUNT_RD/WR on the HBM boxes
# (HBM0C0 ...), and their volume metric
HBM_VOLUME = "HBM data volume [GBytes]"
_HBM_BOX = re.compile(r"^HBM\d+C\d+$", re.IGNORECASE)
# glibc prints a negative NaN as "-nan" (likwid's Lua prints what C's printf gives)
_UNKNOWN = ("-", "nan", "-nan", "+nan", "")
# a core counter holds one event per hardware thread: an event named on two of them was
# given twice (a custom group), where one on two uncore boxes (MBOX0C0, MBOX1C0) is two
# memory controllers' counts to add
_CORE_COUNTER = re.compile(r"^(PMC|FIXC)\d+$", re.IGNORECASE)


@dataclass
class Table:
    line: int                    # 1-based line of its TABLE header
    region: str | None
    group: int
    group_name: str
    kind: str                    # "raw" or "metric"
    stat: bool
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in next(csv_reader([line]))] if line else []


def read_cpu_tables(path: str, text: str | None = None, log: SkipLog | None = None
                    ) -> tuple[LikwidCpu, list[Table]]:
    """(its CPU name and type lines, tables) of one likwid-perfctr CSV file; a last line
    cut short is said in `log` (counter_text)."""
    lines = counter_text(path, text, log).splitlines()
    cpu, kind = "", ""
    tables: list[Table] = []
    for n, line in enumerate(lines, start=1):
        cells = _cells(line.lstrip("\ufeff"))
        if not cells or not any(cells):
            continue
        if cells[0] == "TABLE":
            tables.append(_table_header(cells, path, n))
        elif cells[0] == "STRUCT":
            tables.append(Table(n, None, 0, "", "info", False))
        elif cells[0] == "CPU name:" and len(cells) > 1:
            cpu = cpu or cells[1]
        elif cells[0] == "CPU type:" and len(cells) > 1:
            kind = kind or cells[1]
        elif tables:
            tables[-1].rows.append((n, cells))
    if not any(t.kind != "info" for t in tables):
        raise ParseError(_not_csv(lines, path), path=path, line=1 if lines else None)
    tables = [t for t in tables if t.kind != "info"]
    for t in tables:
        _check_rows(t, path)
    return LikwidCpu(cpu, kind), tables


def _table_header(cells: list[str], path: str, n: int) -> Table:
    """TABLE,[Region NAME,]Group N Raw|Metric[ STAT],GROUPNAME,ROWS."""
    region = len(cells) > 2 and cells[1].startswith("Region ")
    name = f"{cells[1]},{cells[2]}" if region else (cells[1] if len(cells) > 1 else "")
    rest = cells[3:] if region else cells[2:]
    hit = _TABLE.match(name)
    if hit is None or not rest or not rest[0]:
        raise ParseError(f"'{','.join(c for c in cells if c)}' is not a likwid table header "
                         f"(TABLE,[Region NAME,]Group N Raw|Metric[ STAT],GROUP,ROWS); was the "
                         f"file edited or cut?", path=path, line=n)
    return Table(n, hit["region"], int(hit["group"]), rest[0], hit["kind"].lower(),
                 bool(hit["stat"]))


def _check_rows(t: Table, path: str) -> None:
    """A table needs its header row: a file cut short ends inside one."""
    heads = ("Event",) if t.kind == "raw" else ("Metric",)
    if not any(cells[0] in heads for _, cells in t.rows):
        raise ParseError(f"table '{table_name(t)}' has no '{heads[0]},...' row (file cut "
                         f"short?); re-export it with likwid-perfctr -O", path=path,
                         line=t.line)


def table_name(t: Table) -> str:
    return (f"Region {t.region}, " if t.region is not None else "") + \
        f"Group {t.group} {t.kind.capitalize()}{' STAT' if t.stat else ''} ({t.group_name})"


def _not_csv(lines: list[str], path: str) -> str:
    head = "\n".join(lines[:60])
    if "Region Info" in head or re.search(r"^\|\s+(Event|Metric)\s+\|", head, re.M):
        return ("likwid-perfctr's table output (+----+ boxes), not its CSV: re-run with -O "
                "(`likwid-perfctr ... -O -o out.csv ./app`)")
    if "Performance counter stats" in head or "seconds time elapsed" in head:
        return "perf stat output, not likwid's: read it with `rooflab perf FILE`"
    # a kernel list or torch trace is named with its verb (s36 O: the one wrong-kind helper)
    other = other_kind(path, "\n".join(lines), lines[0] if lines else "", own="likwid")
    return "no likwid-perfctr table (a 'TABLE,Group 1 Raw,...' line) found; " + (other or COLLECT)


def _number(text: str, t: Table, line: int, what: str, path: str) -> float | None:
    """A cell's value; None for what likwid writes for an unknown one ('-', 'nan')."""
    if text.lower() in _UNKNOWN:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"{what} = '{text}' in table '{table_name(t)}' is not a number; check "
                         f"the export", path=path, line=line) from None
    if not math.isfinite(value) or value < 0:
        raise ParseError(f"{what} = '{text}' in table '{table_name(t)}': a count, volume or time "
                         f"must be >= 0 and finite", path=path, line=line)
    return value


def per_thread(t: Table, path: str, log: SkipLog
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
            log.add(n, repeat_note(f"'{name}'", rows[name][0], "row", "in a custom group",
                                   f" in table '{table_name(t)}'"))
            continue
        if name in rows:   # one event on two counters (CAS_COUNT_RD on MBOX0C0, MBOX1C0...)
            old = rows[name][1]
            values = [(a or 0.0) + (b or 0.0) if a is not None or b is not None else None
                      for a, b in zip(old, values, strict=False)]
        rows[name] = (rows.get(name, (n,))[0], values)
    return rows, info


def _repeat(t: Table, cells: list[str]) -> bool:
    return t.kind != "raw" or len(cells) < 2 or bool(_CORE_COUNTER.match(cells[1]))


def on_hbm(t: Table | None) -> bool:
    """Whether a raw table counts CAS on Xeon Max's HBM boxes (HBM0C0 ...), not the DDR
    MBOXes."""
    return t is not None and any(len(c) > 1 and _HBM_BOX.match(c[1]) and CAS.match(c[0])
                                 for _, c in t.rows)


def _used(name: str) -> bool:
    return (name in (RUNTIME, INFO_RUNTIME, HBM_VOLUME) or name in CALLS or name in FP_ARITH
            or name in LIKWID_FP16 or name in LIKWID_AMD_FLOPS or name in READ_WRITE
            or bool(RATE.match(name))
            or bool(CAS.match(name)) or any(name in v for v in VOLUMES.values())
            or bool(CHANNELS.match(name) or DRAM_CHANNEL.match(name)))


def thread_sum(values: list[float | None]) -> float | None:
    """The sum over threads; None when no thread has a value: an unknown count is not 0
    (one thread's '-' is normal, uncore counted by one thread per socket; all '-' is not)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def unknown_note(name: str, values: list[float | None], what: str) -> str:
    return (f"{name}: no thread has a value ({len(values)} x '-' or 'nan'): {what} (an "
            f"unknown count is not read as 0)")


def uncore_threads(values: list[float | None]) -> int:
    """Threads that read an uncore count (likwid reads it on one thread per socket; the
    others show 0 or '-'): the sockets counted."""
    return sum(1 for v in values if v)


def thread_max(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None

