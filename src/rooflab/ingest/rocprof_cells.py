"""One rocprof row's cells as numbers: the counters and the other numeric cells of a dispatch
(a finite count read inline, the rest through _cell, which says what is not a number and
refuses a negative count), per-channel counters summed. Split from rocprof.py (s35), which
reads the file layouts and calls these on every row."""

from __future__ import annotations

import math
import re

from ..errors import ParseError
from .ncu_numbers import parse_number
from .skips import SkipLog

_INSTANCE = re.compile(r"^(\w+)\[(\d+)\]$")


def pick_cells(row: list[str], ident: str, last, plain: bool, same, every, counted):
    """(the cells of a long row to read, the new `last`): every one, or only the counted
    ones on a row of the dispatch `last` read already, whose other cells repeat (`plain`
    layouts, `same` picks them)."""
    if not plain:
        return every, last
    now = (ident, same(row))
    return (counted if now == last else every), now


def fill_cells(metrics: dict, kernel: str, row: list[str], cells, path: str, n: int,
               log: SkipLog) -> None:
    """A row's cells that `cells` (names, a picker of their texts, which are counters)
    names into `metrics`, each through _cell unless all are finite counts (the common case,
    in C calls); the whole-file reader and the long-layout stream share it."""
    names, pick, counters = cells
    if not names:
        return
    texts = pick(row)
    try:
        values = list(map(float, texts))
        total = sum(values)
        if total - total == 0.0 and min(values) >= 0.0:
            metrics.update(zip(names, values, strict=True))
            return
    except ValueError:
        pass
    for name, text, counter in zip(names, texts, counters, strict=True):
        value = _cell(name, text, counter, kernel, path, n, log)
        if value is not None:
            metrics[name] = value


def _sum_instances(metrics: dict[str, float]) -> dict[str, float]:
    """Per-instance counters summed: rocprof v1 writes one column per TCC channel when asked
    for a block counter without `_sum` (pmc: TCC_EA_RDREQ[0] ... TCC_EA_RDREQ[15]; ROCm's
    rocprof docs and rocprof-compute's pmc files list them so). `TCC_EA_RDREQ` becomes the sum
    of its `[i]` columns unless the file also has the total itself."""
    sums: dict[str, float] = {}
    for name, value in metrics.items():
        hit = _INSTANCE.match(name) if name.endswith("]") else None
        if hit:   # an n/a channel makes the sum unknown (nan), not the others' sum
            sums[hit.group(1)] = sums.get(hit.group(1), 0.0) + value
    if not sums:
        return metrics
    return {**{k: v for k, v in sums.items() if k not in metrics}, **metrics}


def _cell(name: str, text: str, counter: bool, kernel: str, path: str, line: int,
          log: SkipLog) -> float | None:
    """A cell's number; None for a text column (arch, signal handles, ...). A hardware
    counter's cell that is not a number ('abc') is unknown, as n/a is (nan: its level or
    FLOP part is left out with a note), and said: it once read as 0 without a word. A
    negative count is refused: no counter counts below zero, and its term would cancel
    the others' bytes or FLOP."""
    try:
        value = float(text)   # the common case; parse_number for the rest (its n/a, inf
        if value - value != 0.0:   # and -inf are nan; its 1,234 a number)
            value = parse_number(text)
    except ValueError:
        try:
            value = parse_number(text)
        except ValueError:
            if not counter:
                return None
            log.add(line, f"counter '{name}' of '{kernel}' = '{text.strip()}' is not a "
                          f"number; read as unknown (as n/a)")
            return math.nan
    if counter and value < 0:
        raise ParseError(f"counter '{name}' of '{kernel}' is {value:g}: a count cannot be "
                         f"negative; check the export (or leave the counter out)",
                         path=path, line=line)
    return value
