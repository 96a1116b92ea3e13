"""rocprof's counter CSVs grouped by kernel as they are read: each dispatch's counters are a
dict only while its row (wide layout) or rows (rocprofv3's long layout, a row per counter)
are counted, then summed into its kernel's group (aggregate.group_counts). Read whole, a
file kept a dict, a Launch and a Counts per dispatch until every row was read: ~2.4 KB a
dispatch, 2459 MB for 1M dispatches in a 141 MB wide file (review s23 r5 F5); 376 MB for
a 125 MB long one (100,000 dispatches), 36 MB now (s26).

The same groups, skips and errors as reading it whole (rocprof.read_rocprof_csv, then
group_counts): a kernel with a level some dispatch could not count (an `n/a` counter) is
read a second time, knowing which levels to drop for all its dispatches
(rocprof_counters.known_levels); a dispatch id seen twice (whose rows are joined; in the
long layout, rocprofv3's row per counter, one seen again after another dispatch's rows),
and a count group_counts refuses (its error could come before a later row's) are read
whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import ParseError
from ..files import csv_reader
from .aggregate import Launch, _Group, group_counts
from .ncu_csv import open_text
from .rocprof import _TRACES, Plan, _lines, _plan, data_row, read_rocprof_csv
from .rocprof_cells import _cell, _sum_instances, fill_cells, pick_cells
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


def _launches(path: str, rows: Iterator[list[str]], log: SkipLog, plan: Plan
              ) -> Iterator[Launch]:
    try:
        yield from (_long_rows if plan.long else _rows)(path, rows, log, plan)
    except ParseError as exc:
        raise _ReadError(exc) from None


def _rows(path: str, rows: Iterator[list[str]], log: SkipLog, plan: Plan
          ) -> Iterator[Launch]:
    """rocprof._dispatch_list's wide rows, each a Launch as soon as it is read."""
    header, i_name, i_id, every, channels = (plan.header, plan.i_name, plan.i_id, plan.every,
                                             plan.channels)
    seen = _Seen()
    for n, row in enumerate(rows, start=plan.h + 2):
        if not data_row(row, n, header, log):
            continue
        ident = row[i_id] if i_id is not None else str(n)
        if seen.again(ident):   # its rows are joined: read whole
            raise _Whole
        kernel = row[i_name].strip()
        metrics: dict[str, float] = {}
        fill_cells(metrics, kernel, row, every, path, n, log)
        yield Launch(path=path, line=n, id=ident, name=kernel,
                     metrics=_sum_instances(metrics) if channels else metrics)


def _long_rows(path: str, rows: Iterator[list[str]], log: SkipLog, plan: Plan
               ) -> Iterator[Launch]:
    """rocprof._dispatch_list's long rows (rocprofv3: a row per dispatch and counter), each
    dispatch a Launch once the next one's first row is read: rocprofv3 writes a dispatch's
    rows together. Kept whole, the dispatches held ~3x the file (376 MB for 125 MB). A
    dispatch whose rows come apart (its id again after another's) is read whole."""
    header, i_name, i_id, i_cn, i_cv = (plan.header, plan.i_name, plan.i_id, plan.i_cn,
                                        plan.i_cv)
    plain, same, every, counted = plan.plain, plan.same, plan.every, plan.counted
    seen = _Seen()
    entry = None                          # [id, line, name, metrics, channels] being read
    last = None                           # (id, plain cells) of the row before
    for n, row in enumerate(rows, start=plan.h + 2):
        if not data_row(row, n, header, log):
            continue
        ident = row[i_id] if i_id is not None else str(n)
        if entry is None or ident != entry[0]:
            if seen.again(ident):   # its rows are apart: joined by reading whole
                raise _Whole
            if entry is not None:
                yield _launch(path, entry)
            entry = [ident, n, row[i_name].strip(), {}, plan.channels]
        _long_row(path, row, n, log, entry, i_cn, i_cv)
        cells, last = pick_cells(row, ident, last, plain, same, every, counted)
        fill_cells(entry[3], entry[2], row, cells, path, n, log)
    if entry is not None:
        yield _launch(path, entry)


def _launch(path: str, entry: list) -> Launch:
    ident, line, name, metrics, summed = entry
    return Launch(path=path, line=line, id=ident, name=name,
                  metrics=_sum_instances(metrics) if summed else metrics)


def _long_row(path: str, row: list[str], n: int, log: SkipLog, entry: list, i_cn: int,
              i_cv: int) -> None:
    """A long row's counter (Counter_Name, Counter_Value) into its dispatch's metrics, as
    rocprof._dispatch_list reads it: a finite count inline, the rest through _cell."""
    name, text = row[i_cn].strip(), row[i_cv]
    try:
        value = float(text)
        if value - value != 0.0 or value < 0:
            value = _cell(name, text, True, entry[2], path, n, log)
    except ValueError:
        value = _cell(name, text, True, entry[2], path, n, log)
    if value is not None:
        entry[3][name] = value
        if name[-1:] == "]":
            entry[4] = True


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
