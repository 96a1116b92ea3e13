"""Where a metric a launch gives twice first stood (ncu_details' "twice with different
values" warning names both lines, s35 O).

The row loop of ncu_details.read_details keeps a value, not its line: recording each
row's line would cost the 1.2 million-row pass (benchmarks/ncu_parse.py) for a warning
few files raise. So the first lines are looked up after the pass, only when a metric
repeated, by reading the file again up to the last repeat; None where it cannot be read
again or the row is not found (a .ncu-rep exported in memory: its file is not the CSV).
"""

from __future__ import annotations

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
            for n, text in enumerate(fh, start=1):
                if n >= last:
                    break
                for j, (launch, metric, start, end) in enumerate(wanted):
                    if found[j] is None and start <= n < end and metric in text:
                        row = next(csv_reader([text]), [])
                        if len(row) >= need and row[i_id] == launch and row[i_name] == metric:
                            found[j] = n
    except (OSError, UnicodeError, RooflabError):
        return [None] * len(wanted)
    return found
