"""The profiler verbs' kernels table on the terminal (`rooflab ncu/torch/rocprof`): its
rows' cells and the notes on rows that hold bandwidth. Split from cli/profiled.py."""

from __future__ import annotations

from collections.abc import Sequence

from ..report.tables import bandwidth_note
from ..sides import pct_text
from ..units import fmt_ai, fmt_rate, fmt_seconds, fmt_share, si


def rich_table(rows: Sequence[dict], title: str):
    """The kernels table, laid out for the terminal it lands in: in a narrow one (80
    columns) without `calls` (in --json and -o x.csv) or column rules, numbers never cut
    and only kernel names folded."""
    from ..report.terminal import WidthAware

    rows = list(rows)
    return WidthAware(lambda narrow: _kernels_table(rows, title, narrow))


def _kernels_table(rows: Sequence[dict], title: str, narrow: bool):
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    t = (Table(title=title + " (calls: --json or -o x.csv)", title_justify="left",
               box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=0) if narrow
         else Table(title=title, title_justify="left"))
    for name, justify in (("kernel", "left"), ("calls", "right"), ("time", "right"),
                          ("share", "right"), ("level", "left"), ("prec", "left"),
                          ("AI", "right"), ("achieved", "right"), ("% roof", "right"),
                          ("bound", "left")):
        if not (narrow and name == "calls"):
            t.add_column(name, justify=justify, overflow="fold",
                         no_wrap=narrow and name != "kernel")
    last = None
    for r in rows:
        first = r["kernel"] != last
        last = r["kernel"]
        share = r["time_share"]
        cells = [escape(r["kernel"]) if first else "", str(r["calls"]) if first else "",
                 fmt_seconds(r["seconds"]) if first else "",
                 fmt_share(share) if first and share is not None else "",
                 r["level"], r["precision"], fmt_ai(r["ai"]), *_achieved_cells(r),
                 r["bound"]]
        t.add_row(*(cells[:1] + cells[2:] if narrow else cells))
    return t


def _achieved_cells(row: dict) -> tuple[str, str]:
    """(achieved, % roof): FLOP/s against the attainable roof, or for a kernel without
    FLOP (a copy) the bytes/s it moved against its level's bandwidth ceiling (review 12a
    #14: '0 FLOP/s' and '-' hid the copy's 87 % of DRAM); a note says which it is."""
    if _bandwidth_row(row):
        return (si(row["achieved_bytes_per_s"], "B/s"),
                pct_text(row.get("percent_of_bandwidth")))
    return (fmt_rate(row["achieved_flop_per_s"], row["precision"]),
            pct_text(row["percent_of_roof"]))


def _bandwidth_row(row: dict) -> bool:
    """A timed row without FLOP (a copy): its cells hold bandwidth (bandwidth_of's rule;
    achieved_bytes_per_s alone no longer tells, every timed row has it)."""
    return row.get("achieved_bytes_per_s") is not None and not (row.get("flop") or 0) > 0


def bandwidth_notes(rows: Sequence[dict]) -> list[str]:
    """'copy: no FLOP: achieved is bytes/s, % roof of the DRAM bandwidth' for the rows
    _achieved_cells fills with bandwidth (kernel: text, so collapse_notes joins them)."""
    return list(dict.fromkeys(bandwidth_note(r["kernel"], r["level"]) for r in rows
                              if _bandwidth_row(r)))
