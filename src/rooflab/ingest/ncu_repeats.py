"""Where a metric a launch gives twice first stood (ncu_details' "twice with different
values" warning names both lines, s35 O).

The row loop of ncu_details.read_details keeps a value, not its line: recording each
row's line would cost the 1.2 million-row pass (benchmarks/ncu_parse.py) for a warning
few files raise. So the first lines are looked up after the pass, only when a metric
repeated, by reading the file again up to the last repeat; None where it cannot be read
again or the row is not found (a .ncu-rep exported in memory: its file is not the CSV).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from ..errors import RooflabError
from ..files import csv_reader


def first_lines(path: str, i_id: int, i_name: int,
                wanted: list[tuple[str, str, int, int]]) -> list[int | None]:
    """For each (launch ID, metric, the launch's first line, the repeat's line): the line
    of the first row of that launch giving that metric, between the two; None if none."""
    if not wanted:
        return []
    from .ncu_csv import open_text

    found: list[int | None] = [None] * len(wanted)
    last = max(w[3] for w in wanted)
    need = max(i_id, i_name) + 1
    try:
        with open_text(path) as fh:
            before, lines = _from_header(fh)
            # rows, not lines: a quoted field may hold a line break (a process or kernel
            # name), and a row's second line split alone matched nothing (s36 B); a row is
            # numbered by its last line, as read_details numbers it
            reader = csv_reader(lines)
            for row in reader:
                n = before + reader.line_num
                if n >= last:
                    break
                for j, (launch, metric, start, end) in enumerate(wanted):
                    if (found[j] is None and start <= n < end and len(row) >= need
                            and row[i_id] == launch and row[i_name] == metric):
                        found[j] = n
    except (OSError, UnicodeError, RooflabError):
        return [None] * len(wanted)
    return found


def _from_header(fh) -> tuple[int, Iterator[str]]:
    """(the lines before the header, the file's lines from its header on): lines before
    it, program output, may hold an unpaired quote that csv.reader would read on past."""
    from .ncu_csv import _is_header

    for before, text in enumerate(fh):
        if _is_header(text):
            return before, itertools.chain([text], fh)
    return 0, iter(())
