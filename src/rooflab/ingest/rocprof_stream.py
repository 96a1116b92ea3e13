"""rocprof's wide layout (one row per dispatch) grouped by kernel as it is read: each
dispatch's counters are a dict only while its row is counted, then summed into its kernel's
group (aggregate.group_counts). Read whole, a file kept a dict, a Launch and a Counts per
dispatch until every row was read: ~2.4 KB a dispatch, 2459 MB for 1M dispatches in a
141 MB file (review s23 r5 F5).

The same groups, skips and errors as reading it whole (rocprof.read_rocprof_csv, then
group_counts): a kernel with a level some dispatch could not count (an `n/a` counter) is
read a second time, knowing which levels to drop for all its dispatches
(rocprof_counters.known_levels); a dispatch id seen twice (whose rows are joined), the long
layout (a dispatch's counters on many rows), and a count group_counts refuses (its error
could come before a later row's) are read whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import ParseError
from ..files import csv_reader
from .aggregate import Launch, _Group, group_counts
from .ncu_csv import open_text
from .rocprof import _TRACES, _cell, _lines, _plan, _sum_instances, data_row, read_rocprof_csv
from .rocprof_counters import known_levels, missing_levels, rocprof_counted
from .skips import SkipLog


class _Whole(Exception):
    """Read the file whole (rocprof.read_rocprof_csv)."""


class _Again(Exception):
    """Read it again, dropping these levels (identity -> level -> (why, ids))."""

    def __init__(self, missing: dict):
        super().__init__("again")
        self.missing = missing


class _ReadError(Exception):
    """A ParseError of reading the rows, which reading whole gives too, first."""

    def __init__(self, error: ParseError):
        super().__init__(str(error))
        self.error = error


def rocprof_groups(path: str, log: SkipLog, mi300: bool | None) -> list[_Group]:
    """group_counts(read_rocprof_csv(path, log, mi300), log), without a dict per dispatch
    where the file allows."""
    if Path(path).suffix.lower() in _TRACES:
        return group_counts(read_rocprof_csv(path, log, mi300), log)
    missing = None
    for _ in range(2):
        read = SkipLog(path)
        try:
            groups = _groups(path, read, mi300, missing)
        except _Again as again:
            missing = again.missing
            continue
        except _ReadError as exc:
            raise exc.error from None
        except (_Whole, ParseError):
            break
        for skip in read.skips():   # (sorted, each group's "and N more" said)
            log.add(skip.line, skip.reason)
        return groups
    return group_counts(read_rocprof_csv(path, log, mi300), log)


def _groups(path: str, log: SkipLog, mi300: bool | None, missing: dict | None
            ) -> list[_Group]:
    found: dict = {}
    with open_text(path) as fh:
        rows = csv_reader(_lines(path, fh, log))
        try:
            plan = _plan(path, rows)
        except ParseError as exc:
            raise _ReadError(exc) from None
        if plan[5]:   # the long layout
            raise _Whole
        noted: set[str] = set()

        def counted():
            for launch in _launches(path, rows, log, plan):
                counts, unknown = rocprof_counted(launch.metrics, mi300)
                if missing is None:
                    missing_levels(found, launch, counts, unknown)
                else:
                    counts = known_levels(launch, counts, missing, noted)
                yield launch, counts

        groups = group_counts(counted(), log)
        if missing is None and found:   # (raised inside: the file's note is said once)
            raise _Again(found)
    return groups


def _launches(path: str, rows: Iterator[list[str]], log: SkipLog, plan: tuple
              ) -> Iterator[Launch]:
    try:
        yield from _rows(path, rows, log, *plan)
    except ParseError as exc:
        raise _ReadError(exc) from None


def _rows(path: str, rows: Iterator[list[str]], log: SkipLog, h, header, col, i_name, i_id,
          long, plain, same, every, counted, i_cn, i_cv, channels) -> Iterator[Launch]:
    """rocprof._dispatch_list's wide rows, each a Launch as soon as it is read."""
    names, pick, counters = every
    seen = _Seen()
    for n, row in enumerate(rows, start=h + 2):
        if not data_row(row, n, header, log):
            continue
        ident = row[i_id] if i_id is not None else str(n)
        if seen.again(ident):   # its rows are joined: read whole
            raise _Whole
        kernel = row[i_name].strip()
        metrics: dict[str, float] = {}
        if names:
            texts = pick(row)
            try:   # the common case in C calls: every cell a finite number not below zero
                values = list(map(float, texts))
                total = sum(values)
                fine = total - total == 0.0 and min(values) >= 0.0
            except ValueError:
                fine = False
            if fine:
                metrics.update(zip(names, values, strict=True))
            else:
                for name, text, counter in zip(names, texts, counters, strict=True):
                    value = _cell(name, text, counter, kernel, path, n, log)
                    if value is not None:
                        metrics[name] = value
        yield Launch(path=path, line=n, id=ident, name=kernel,
                     metrics=_sum_instances(metrics) if channels else metrics)


class _Seen:
    """The dispatch ids read so far: ids 0, 1, 2 ... (rocprof's Index, Dispatch_ID) as bits,
    one byte per eight; other ids in a set."""

    def __init__(self):
        self.bits = bytearray()
        self.other: set[str] = set()

    def again(self, ident: str) -> bool:
        if ident.isdigit() and ident.isascii() and (ident == "0" or ident[0] != "0") \
                and len(ident) < 10:
            i = int(ident)
            byte, bit = divmod(i, 8)
            if byte >= len(self.bits):
                self.bits.extend(bytes(max(byte + 1 - len(self.bits), len(self.bits))))
            if self.bits[byte] >> bit & 1:
                return True
            self.bits[byte] |= 1 << bit
            return False
        if ident in self.other:
            return True
        self.other.add(ident)
        return False
