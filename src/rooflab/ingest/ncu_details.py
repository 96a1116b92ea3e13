"""The long "details" page of `ncu --csv`: one row per (launch x metric), read fast.

Columns ID, Process ID, Process Name, Host Name, Kernel Name, Context, Stream, Block Size,
Grid Size, Device, CC, Section Name, Metric Name, Metric Unit, Metric Value (newer ncu
versions append Rule Name, Rule Type, Rule Description, Estimated Speedup Type, Estimated
Speedup; rule-only rows have no metric and are ignored). ncu_csv finds the header and
hands the rest of the file here.
"""

from __future__ import annotations

from dataclasses import replace
from sys import intern
from typing import NamedTuple

from ..errors import ParseError
from ..files import csv_reader
from .aggregate import Launch, short_name
from .ncu_metrics import DEVICE_NAME, compute_capability, is_used
from .ncu_numbers import unit_scale
from .ncu_values import CUT_SHORT, GROUPED, CommaError, cell_value, comma_message, ends_open
from .skips import SkipLog

# Details-page metrics that hold text, not numbers.
TEXT_METRICS = (DEVICE_NAME,)


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
    its identity, every row one metric. What the row loop in read_details leaves to it."""

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
        self.dropped: list[tuple[list, int]] = []   # (builder, line): launches cut short
        # (launch, metric, first value, repeat, its line): a metric twice (twice)
        self.repeats: list[tuple] = []
        self.i_name = col["Metric Name"]

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
        self.value(text, scale, line, metric, entry)

    def twice(self, metric: str, x: float, line: int, entry: list) -> None:
        """A metric met again in the same launch: kept as before (the last value), said
        when its values differ (two --metrics/--section lists, or files joined): one was
        silently kept, a DRAM 1.35e11 B read as 1000 B (s35 audit)."""
        metrics, launch = entry[1], entry[0]
        old = metrics[metric]
        metrics[metric] = x
        if old != x and not (old != old and x != x):
            # said after the pass (launches), when the first value's line is looked up
            self.repeats.append((launch, metric, old, x, line))

    def _say_repeats(self) -> None:
        """The "twice with different values" warnings, each naming the first value's line
        (ncu_repeats.first_lines: looked up after the pass) and the repeat's."""
        from .ncu_repeats import first_lines

        firsts = first_lines(self.path, self.i_id, self.i_name,
                             [(lc.id, m, lc.line, n) for lc, m, _, _, n in self.repeats])
        for (launch, metric, old, x, line), first in zip(self.repeats, firsts, strict=True):
            where = (f"{old:g} on line {first}, then {x:g} on line {line}" if first else
                     f"{old:g}, then {x:g} on line {line} (its rows start on line "
                     f"{launch.line})")
            self.log.add_grouped(
                line, f"launch {launch.id} of '{short_name(launch.name)}' has metric "
                      f"'{metric}' twice with different values: {where}; the last is kept: "
                      f"check the export", key=f"twice {metric}", what="launches")

    def value(self, text: str, scale: float, line: int, metric: str, entry: list) -> None:
        try:
            x = cell_value(text, scale)
        except CommaError:
            raise ParseError(comma_message(text, f"'Metric Value' (metric '{metric}')"),
                             path=self.path, line=line) from None
        except ValueError:
            self.log.add(line, f"metric '{metric}': value '{text}' is not a number; "
                               f"row skipped")
            return
        if entry[1].setdefault(metric, x) is not x:
            self.twice(metric, x, line, entry)

    def cut(self, row: list[str], line: int, last_id, entry: list | None) -> None:
        """A row cut short (the file ends inside it, or too few columns). When it belongs
        to the launch being read, that launch has lost this metric and maybe the ones after
        it: its FLOP or bytes would be silently too low, so `launches` drops it, with a
        reason, unless the other launches show it lacks no metric they have."""
        if entry is None or (len(row) > self.i_id + 1 and row[self.i_id] != last_id):
            return   # the first row of a new launch: the previous one is whole
        # (a row cut inside or before its ID cell is taken as the current launch's)
        if not any(e is entry for e, _ in self.dropped):
            self.dropped.append((entry, line))

    def launches(self) -> list[Launch]:
        if self.repeats:
            self._say_repeats()
        gone = self._incomplete() if self.dropped else set()
        return [replace(launch, device=name) if name else launch
                for launch, _, name in self.builders.values() if id(launch) not in gone]

    def _incomplete(self) -> set[int]:
        """id() of each cut launch that lacks a metric the uncut launches have (ncu writes
        the same metrics for every launch); a lone launch cut short cannot show it lacks
        nothing, so it goes too. Each one dropped is logged."""
        cut = {id(e[0]) for e, _ in self.dropped}
        whole = [e[1].keys() for e in self.builders.values() if id(e[0]) not in cut]
        wanted = set().union(*whole)
        gone = set()
        for (launch, metrics, _), line in self.dropped:
            if whole and wanted <= metrics.keys():
                continue   # it holds every metric the others have: nothing was lost
            gone.add(id(launch))
            self.log.add(line, f"launch {launch.id} of '{short_name(launch.name)}' skipped: a "
                               f"row of it was cut short, so its metrics are incomplete")
        return gone


def read_details(path: str, col: dict[str, int], ncols: int, body, log: SkipLog,
                 split: bool = True) -> list[Launch]:
    """The launches of a details page; `body` is ncu_csv.Body (the lines after the header).
    `split` False sends every row through csv.reader (ncu_csv.SPLIT_QUOTED_LINES)."""
    i_id, i_name, i_unit, i_val = (col["ID"], col["Metric Name"], col["Metric Unit"],
                                   col["Metric Value"])
    built = _Launches(path, col, log)
    known, nothing = built.known, {}
    grouped = GROUPED.fullmatch   # ncu_values.ncu_float's rule, inlined below
    # This loop runs once per (launch x metric) row: 1.2 million times for 100,000 launches
    # of 12 metrics, so it does the least it can per row (benchmarks/ncu_parse.py), all of
    # it here, without a call per row: plainly quoted lines are split in place (_Split),
    # the others read by csv.reader (_Rows.read).
    cut, pieces, a, b, c, seps, quotes = _Split.of(i_id, i_name, i_unit, i_val, ncols, split)
    end = '"' + body.eol   # a row's last field's closing quote and the line ending
    k = len(end)
    line = body.start
    lines = iter(body.lines)
    rows = _Rows(lines, max(i_id, i_name, i_unit, i_val, col["Kernel Name"]) + 1, ncols,
                 log, built)
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
            line, row = rows.read(text, line, last_id, entry)
            prefix = None
            if row is None:
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
        try:   # ncu_values.cell_value inlined: float(), thousands separators in groups of
            # three; the rest ('n/a', a locale's comma) to built.value, which says what
            if "," not in v:
                x = float(v)
            elif grouped(v):
                x = float(v.replace(",", ""))
            else:
                raise CommaError(v)
        except (ValueError, CommaError):
            built.value(v, scale, line, metric, entry)
        else:
            # interned: the 100,000 dicts share one copy of each name, not 1.2 million;
            # setdefault, not a store, returns a value already there: a metric given twice
            # (one C call a row, not a second lookup: benchmarks/ncu_parse.py)
            x *= scale
            if metrics.setdefault(intern(metric), x) is not x:
                built.twice(metric, x, line, entry)
    return built.launches()


class _Split(NamedTuple):
    """How read_details splits a plainly quoted line without csv.reader.

    ncu quotes every field. A line with exactly 2 x ncols quotes, starting with one and
    ending with '"' and the header's line ending, whose fields split at '","' number
    ncols, holds no quote inside a field: splitting it gives what csv.reader would, for
    about half the cost. Only the fields from the first metric column on are split off
    per row; the rest (the launch's identity, the same on all its rows) is compared whole
    and split when it changes. Any other line (profiler output, a quote or line break
    inside a field, a row cut short, other quoting) goes to csv.reader, which reads on
    into the next lines if it must; tests/test_ncu_fastpath.py holds both to one result.
    """

    cut: int      # rsplit: [identity part, fields first..ncols-1]
    pieces: int   # the parts of a split line
    a: int        # Metric Name, Metric Unit, Metric Value: their parts
    b: int
    c: int
    seps: int     # '","' in the identity part
    quotes: int   # the quotes on a plainly quoted line; -1: every row through csv.reader

    @classmethod
    def of(cls, i_id: int, i_name: int, i_unit: int, i_val: int, ncols: int,
           split: bool) -> _Split:
        first = min(i_name, i_unit, i_val)   # the identity columns, ID first, come before
        cut = ncols - first
        # -1: another layout (or the split turned off), every row through csv.reader
        quotes = 2 * ncols if split and i_id < first else -1
        return cls(cut, cut + 1, i_name - first + 1, i_unit - first + 1, i_val - first + 1,
                   first - 1, quotes)


class _Rows:
    """The rows read_details leaves to csv.reader: it is fed their first line and reads on
    into the next lines of the file if a field holds a line break."""

    def __init__(self, lines, need: int, ncols: int, log: SkipLog, built: _Launches):
        self.feed = _Feed(lines)
        self.reader = csv_reader(self.feed)
        self.need, self.ncols, self.log, self.built = need, ncols, log, built

    def read(self, text: str, line: int, last_id, entry: list | None
             ) -> tuple[int, list[str] | None]:
        """(the number of the row's last line, the row) for the row starting with `text`
        on line `line`; the row is None where there is none to read: a row cut short
        (logged, and its launch marked) or a profiler or blank line."""
        self.feed.held = text
        reader = self.reader
        read = reader.line_num
        row = next(reader)
        line += reader.line_num - read - 1
        if reader.line_num - read == 1 and ends_open(text):
            self.log.add(line, CUT_SHORT)
            self.built.cut(row, line, last_id, entry)
            return line, None
        if len(row) < self.need:
            if row and not row[0].startswith("=="):
                self.log.add(line, f"row has {len(row)} of {self.ncols} columns "
                                   f"(file cut short?)")
                self.built.cut(row, line, last_id, entry)
            return line, None
        return line, row
