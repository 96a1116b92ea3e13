"""Read `ncu --csv` output: the long "details" page and the wide `--page raw` page.

details: one row per (launch x metric) with columns ID, Process ID, Process Name, Host Name,
  Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, Section Name, Metric Name,
  Metric Unit, Metric Value (newer ncu versions append Rule Name, Rule Type, Rule Description,
  Estimated Speedup Type, Estimated Speedup; rule-only rows have no metric and are ignored).
raw: one row per launch, one column per metric, a units row second.

Both may be preceded by program output and `==PROF==`/`==WARNING==`/`==ERROR==` lines, use
thousands separators ('1,619,726,202.90') and auto-scaled units ('Kbyte', 'usecond',
'Gcycle/second'); values become SI here. Bad rows are skipped and logged (file, line,
reason); a file with no usable launch raises ParseError.
"""

from __future__ import annotations

import csv
import gc
import io
import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from sys import intern

from ..errors import ParseError
from .aggregate import Launch
from .ncu_metrics import (
    CC_MAJOR,
    CC_MINOR,
    DEVICE_NAME,
    compute_capability,
    is_used,
    parse_number,
    unit_scale,
)
from .skips import SkipLog

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
            "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
            "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
            "Rule Description", "Estimated Speedup Type", "Estimated Speedup")
# Raw-page columns that hold text, not numbers.
TEXT_METRICS = (DEVICE_NAME,)
HOW_TO = "make it with `ncu --csv --metrics ... ./app > out.csv` (or `--page raw`)"
# Details pages: split fully quoted lines with str methods rather than csv.reader (same
# fields, half the cost; see _details). False sends every row through csv.reader, the
# reference tests/test_ncu_fastpath.py holds the split to.
SPLIT_QUOTED_LINES = True


@dataclass(frozen=True)
class NcuCsv:
    """What one CSV file held: its launches, the page kind, and the profiler's own errors."""

    path: str
    page: str                          # "details" or "raw"
    launches: tuple[Launch, ...]
    profiler_errors: tuple[str, ...]   # '==ERROR== LaunchFailed', ... from before the header


def read_text(path: str) -> str:
    with open_text(path) as fh:
        return fh.read()


def open_text(path: str):
    """The file opened for csv reading, or ParseError saying why it cannot be."""
    try:
        return open(path, encoding="utf-8", errors="replace", newline="")
    except FileNotFoundError:
        raise ParseError("file not found", path=path) from None
    except IsADirectoryError:
        raise ParseError("is a directory; give a CSV file", path=path) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=path) from None


# The first line of rocprof's CSVs: v1 results.csv (Index,KernelName,...), v2/v3
# (...,Kernel_Name,...), --stats summaries ("Name","Calls","TotalDurationNs",...)
_ROCPROF_HEADER = re.compile(r'(?:^|,)"?(?:KernelName|Kernel_Name|TotalDurationNs)"?(?:,|$)')


def _is_header(line: str) -> bool:
    s = line.lstrip("\ufeff")
    return s.startswith('"ID",') or s.startswith("ID,") or '"Kernel Name"' in s


def read_ncu_csv(path: str, log: SkipLog | None = None, text: str | None = None) -> NcuCsv:
    """Launches of one `ncu --csv` file (either page). Skipped rows go to `log`.

    The file is streamed (a details page of 100,000 launches is ~270 MB): lines before the
    header are scanned for the profiler's `==ERROR==` lines, the rest is read as CSV (on a
    details page, plainly quoted rows are split without csv.reader: see _details).
    """
    log = log if log is not None else SkipLog(path)
    with (io.StringIO(text, newline="") if text is not None else open_text(path)) as fh:
        errors: list[str] = []
        h, header_line, first = 0, None, ""
        for line in fh:
            if _is_header(line):
                header_line = line
                break
            if line.startswith("==ERROR=="):
                errors.append(line.strip())
            first = first or line
            h += 1
        if header_line is None:
            why = f" (the profiler said: {'; '.join(errors)})" if errors else ""
            if _ROCPROF_HEADER.search(first):
                why += "; it looks like a rocprof CSV: read it with `rooflab rocprof FILE`"
            raise ParseError(f"no ncu CSV header (a line starting with \"ID\",...) found{why}; "
                             f"{HOW_TO}", path=path)
        header = next(csv.reader([header_line.lstrip("\ufeff")]))
        col = {name.strip(): i for i, name in enumerate(header)}
        if "Kernel Name" not in col:
            raise ParseError("the header has no 'Kernel Name' column; " + HOW_TO, path=path,
                             line=h + 1)
        # the header's line ending, most likely every row's ('\r\n' from Windows)
        body = Body(fh, h + 1, header_line[len(header_line.rstrip("\r\n")):] or "\n")
        if "Average" in col and "Invocations" in col and "Metric Value" not in col:
            # `ncu --print-summary per-kernel --csv`: Invocations, Minimum, Maximum, Average
            raise ParseError("a per-kernel summary (ncu --print-summary: Invocations, Minimum, "
                             "Maximum, Average), not one row per launch; export without "
                             "--print-summary (`ncu --import report.ncu-rep --csv > out.csv`) "
                             "or pass the .ncu-rep itself", path=path, line=h + 1)
        if "Metric Name" in col or "Metric Value" in col:
            missing = [c for c in ("ID", "Metric Name", "Metric Unit", "Metric Value")
                       if c not in col]
            if missing:
                raise ParseError(f"details page without column(s) {', '.join(missing)}; "
                                 + HOW_TO, path=path, line=h + 1)
            with _collector_paused():
                launches = _details(path, col, len(header), body, log)
            page = "details"
        else:
            with _collector_paused():
                launches = _raw(path, header, col, body, log)
            page = "raw"
    return NcuCsv(path, page, tuple(launches), tuple(errors))


@contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while a page is parsed.

    A details page of 100,000 launches allocates ~1.2 million short-lived lists and keeps
    ~300,000 dicts, lists and Launches, none of them in a reference cycle; the collector's
    repeated passes over that growing heap cost ~15 % of the parse (benchmarks/ncu_parse.py).
    Reference counting still frees everything at once; the collector's previous state is
    restored afterwards.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def cell_value(text: str, scale: float) -> float:
    """A metric cell in SI units: plain float() first (the common case, with thousands
    separators removed), else parse_number ('n/a' and '' give nan). ValueError otherwise."""
    try:
        return float(text.replace(",", "")) * scale
    except ValueError:
        return parse_number(text) * scale


def _identity(row: list[str], col: dict[str, int]):
    def cell(name: str) -> str:
        i = col.get(name)
        return row[i].strip() if i is not None and i < len(row) else ""

    return cell


class Body:
    """The lines after the header, read by csv.reader, with their 1-based line numbers.

    Profiler lines ('==PROF== Disconnected ...') and blank lines are passed over."""

    def __init__(self, lines, start: int, eol: str = "\n"):
        self.lines, self.start = lines, start   # the lines after the header; its line number
        self.eol = eol                          # the line ending rows most likely have

    def rows(self):
        reader = csv.reader(self.lines)
        start = self.start
        for row in reader:
            if not row or row[0].startswith("=="):
                continue
            yield start + reader.line_num, row


class _Feed:
    """Lines for csv.reader: the line held back for it first, then the rest of the file
    (a record with a line break inside a field goes on into the next lines)."""

    __slots__ = ("held", "lines")

    def __init__(self, lines):
        self.held, self.lines = None, lines

    def __iter__(self):
        return self

    def __next__(self) -> str:
        held = self.held
        if held is None:
            return next(self.lines)
        self.held = None
        return held


class _Launches:
    """The launches of a details page, built as its rows come: the first row of each gives
    its identity, every row one metric. What the row loop in _details leaves to it."""

    def __init__(self, path: str, col: dict[str, int], log: SkipLog):
        self.path, self.log = path, log
        self.i_id, self.pid = col["ID"], col.get("Process ID")
        # Kernel Name, Device, CC, Block Size, Grid Size: their columns (-1: absent)
        self.ident = tuple(col.get(n, -1) for n in ("Kernel Name", "Device", "CC",
                                                     "Block Size", "Grid Size"))
        self.builders: dict[tuple[str, str], list] = {}   # [Launch, metrics, device name]
        # {metric: {unit: scale}}: the numeric metrics rooflab uses, with the units met so
        # far; a row not found here (a new metric or unit, an unused or text metric) is
        # handed to `other`.
        self.known: dict[str, dict[str, float]] = {}
        self.used: dict[str, bool] = {}   # metric -> is_used(metric)
        self.cc: dict[str, tuple[int, int] | None] = {}

    def of(self, row: list[str], line: int) -> list:
        """The builder of the row's launch, made from this (its first) row if new."""
        key = (row[self.pid] if self.pid is not None else "", row[self.i_id])
        entry = self.builders.get(key)
        if entry is None:
            n = len(row)
            name, device, cc, block, grid = [row[i].strip() if -1 < i < n else ""
                                             for i in self.ident]
            if cc not in self.cc:
                self.cc[cc] = compute_capability(cc)
            metrics: dict[str, float] = {}   # filled in place: the Launch keeps this dict
            launch = Launch(path=self.path, line=line, id=row[self.i_id], name=name,
                            metrics=metrics, device=device, cc=self.cc[cc], block=block,
                            grid=grid)
            entry = self.builders[key] = [launch, metrics, ""]
        return entry

    def other(self, metric: str, unit: str, text: str, line: int, entry: list) -> None:
        """A row `known` could not place: classify and cache it, then log, store or keep."""
        if metric in TEXT_METRICS:
            entry[2] = text.strip()   # the device name, a text metric
            return
        used = self.used.get(metric)
        if used is None:
            used = self.used[metric] = is_used(metric)
        if not used:
            self.log.add_grouped(line, f"metric '{metric}' is not used by rooflab; row ignored")
            return
        scale = unit_scale(unit)
        if scale is None:
            self.log.add_grouped(line, f"unknown unit '{unit}' for metric '{metric}'; row "
                                       f"skipped (re-export with --print-units base)")
            return
        self.known.setdefault(metric, {})[unit] = scale
        self.value(text, scale, line, metric, entry[1])

    def value(self, text: str, scale: float, line: int, metric: str, metrics: dict) -> None:
        try:
            metrics[metric] = cell_value(text, scale)
        except ValueError:
            self.log.add(line, f"metric '{metric}': value '{text}' is not a number; "
                               f"row skipped")

    def launches(self) -> list[Launch]:
        return [replace(launch, device=name) if name else launch
                for launch, _, name in self.builders.values()]


def _details(path: str, col: dict[str, int], ncols: int, body: Body,
             log: SkipLog) -> list[Launch]:
    i_id, i_name, i_unit, i_val = (col["ID"], col["Metric Name"], col["Metric Unit"],
                                   col["Metric Value"])
    need = max(i_id, i_name, i_unit, i_val, col["Kernel Name"]) + 1
    built = _Launches(path, col, log)
    known, nothing = built.known, {}
    # This loop runs once per (launch x metric) row: 1.2 million times for 100,000 launches
    # of 12 metrics, so it does the least it can per row (benchmarks/ncu_parse.py).
    # ncu quotes every field. A line with exactly 2 x ncols quotes, starting with one and
    # ending with '"' and the header's line ending, whose fields split at '","' number
    # ncols, holds no quote inside a field: splitting it gives what csv.reader would, for
    # about half the cost. Only the fields from the first metric column on are split off
    # per row; the rest (the launch's identity, the same on all its rows) is compared whole
    # and split when it changes. Any other line (profiler output, a quote or line break
    # inside a field, a row cut short, other quoting) goes to csv.reader, which reads on
    # into the next lines if it must; tests/test_ncu_fastpath.py holds both to one result.
    first = min(i_name, i_unit, i_val)   # the identity columns, ID first, come before
    cut = ncols - first                  # rsplit: [identity part, fields first..ncols-1]
    pieces = cut + 1
    a, b, c = i_name - first + 1, i_unit - first + 1, i_val - first + 1
    seps = first - 1                     # '","' in the identity part
    # -1: another layout (or the split turned off), every row through csv.reader
    quotes = 2 * ncols if SPLIT_QUOTED_LINES and i_id < first else -1
    end = '"' + body.eol   # a row's last field's closing quote and the line ending
    k = len(end)
    line = body.start
    lines = iter(body.lines)
    feed = _Feed(lines)
    reader = csv.reader(feed)
    prefix, last_id, metrics, entry = None, None, None, None
    for text in lines:
        line += 1
        tail = None
        if text.count('"') == quotes and text[-k:] == end and text[0] == '"':
            tail = text[1:-k].rsplit('","', cut)
            head = tail[0]
            if len(tail) == pieces and (head == prefix or head.count('","') == seps):
                metric, unit, v = tail[a], tail[b], tail[c]
                if not metric:
                    continue   # a rule row of newer ncu versions: no metric on it
                if head != prefix:
                    prefix = head
                    row = head.split('","') + tail[1:]
                    if row[i_id] != last_id:   # rows of one launch come together
                        last_id = row[i_id]
                        entry = built.of(row, line)
                        metrics = entry[1]
            else:
                tail = None
        if tail is None:
            feed.held = text
            read = reader.line_num
            row = next(reader)
            line += reader.line_num - read - 1
            prefix = None
            if len(row) < need:
                if row and not row[0].startswith("=="):
                    log.add(line, f"row has {len(row)} of {ncols} columns (file cut short?)")
                continue
            metric, unit, v = row[i_name], row[i_unit], row[i_val]
            if not metric:
                continue
            if row[i_id] != last_id:
                last_id = row[i_id]
                entry = built.of(row, line)
                metrics = entry[1]
        scale = known.get(metric, nothing).get(unit)
        if scale is None:
            built.other(metric, unit, v, line, entry)
            continue
        try:   # cell_value inlined: float() first, parse_number for 'n/a' and the like
            # (interned: the 100,000 dicts share one copy of each name, not 1.2 million)
            metrics[intern(metric)] = float(v.replace(",", "")) * scale
        except ValueError:
            built.value(v, scale, line, metric, metrics)
    return built.launches()


def _raw(path: str, header: list[str], col: dict[str, int], body: Body,
         log: SkipLog) -> list[Launch]:
    rows = body.rows()
    first = next(rows, None)
    if first is None:
        return []
    units: list[str] | None = None
    units_line = None
    if not first[1][col.get("ID", 0)].strip():
        units_line, units = first
    else:
        rows = itertools.chain([first], rows)
    used: list[tuple[int, str, float]] = []
    for i, name in enumerate(header):
        name = name.strip()
        if name in IDENTITY or not is_used(name):
            continue
        unit = units[i] if units is not None and i < len(units) else ""
        scale = unit_scale(unit)
        if scale is None:
            log.add(units_line,
                    f"unknown unit '{unit}' for column '{name}'; column skipped "
                    f"(re-export with --print-units base)")
            continue
        used.append((i, name, scale))
    text_cols = [(col[n], n) for n in (DEVICE_NAME, CC_MAJOR, CC_MINOR) if n in col]
    need = max([i for i, _, _ in used] + [col["Kernel Name"]]) + 1
    out: list[Launch] = []
    for line, row in rows:
        if len(row) < need:
            log.add(line, f"row has {len(row)} of {len(header)} columns (file cut short?)")
            continue
        metrics: dict[str, float] = {}
        bad = ""
        for i, name, scale in used:
            try:
                metrics[name] = cell_value(row[i], scale)
            except ValueError:
                bad = f"column '{name}': value '{row[i]}' is not a number"
                break
        if bad:
            log.add(line, bad + "; row skipped")
            continue
        cell = _identity(row, col)
        texts = {n: row[i].strip() for i, n in text_cols if i < len(row)}
        cc = compute_capability(cell("CC"))
        if cc is None and CC_MAJOR in texts:
            cc = compute_capability(f"{texts.get(CC_MAJOR)}.{texts.get(CC_MINOR, '0')}")
        out.append(Launch(path=path, line=line, id=cell("ID"), name=cell("Kernel Name"),
                          metrics=metrics, device=texts.get(DEVICE_NAME) or cell("Device"),
                          cc=cc, block=cell("Block Size"), grid=cell("Grid Size")))
    return out
