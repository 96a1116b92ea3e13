"""The zoo's kernel table: rows as plain data (CSV, tests) and as a rich Table (terminal).

"% of roof" and measured/floor divide a kernel's median time by a floor whose ceilings are
each a probe's best sample (docs/probe.md); on a loaded machine that asymmetry alone pushes
a kernel down by its median/best gap. The table therefore also gives best/floor, the
kernel's best sample against the same floor (best with best, as likwid-bench and STREAM
compare), and says under itself which is which (TIME_NOTE).
"""

from __future__ import annotations

from typing import Any

from ..model.analysis import Analysis
from ..units import fmt_ai, fmt_rate, fmt_seconds, si

COLUMNS = ("kernel", "flop", "bytes", "ai", "seconds", "achieved_flop_per_s",
           "percent_of_roof", "bound", "floor_ratio", "best_floor_ratio", "flags")
HEADERS = ("kernel", "FLOP", "bytes", "AI", "time", "achieved", "% of roof", "bound",
           "measured/floor", "best/floor", "flags")


def zoo_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """One row per kernel at its binding level, in the order the kernels were given."""
    primary = {p.kernel: p for p in analysis.primary()}
    rows = []
    for k in analysis.kernels:
        p = primary.get(k.name)
        if p is None:
            continue
        flags = k.meta.get("flags", ())
        rows.append({"kernel": k.name, "precision": p.precision, "level": p.level,
                     "flop": p.flop, "bytes": p.bytes, "ai": p.ai, "seconds": p.seconds,
                     "calls": k.calls,   # seconds are of all calls: read back, as many
                     "achieved_flop_per_s": p.achieved_flop_per_s,
                     "achieved_bytes_per_s": p.bytes / p.seconds if p.seconds else None,
                     "percent_of_roof": p.percent_of_roof, "bound": p.bound,
                     "floor_s": p.floor_s, "floor_ratio": p.floor_ratio,
                     "best_floor_ratio": k.meta.get("best_floor_ratio"),
                     "flags": " ".join(flags)})
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}%"


def _achieved(row: dict[str, Any]) -> str:
    # Kernels without FLOP (copy, sort) are judged by the bandwidth they reach.
    if row["flop"] > 0 and row["achieved_flop_per_s"]:
        return fmt_rate(row["achieved_flop_per_s"], row["precision"])
    return si(row["achieved_bytes_per_s"], "B/s")


TIME_NOTE = ("% of roof and measured/floor use the kernel's median time, against ceilings "
             "that are each a best sample; best/floor is the kernel's best sample against the "
             "same floor (best with best, as likwid-bench and STREAM compare)")


def _times(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def zoo_table(analysis: Analysis, title: str | None = None):
    """A rich Table of zoo_rows (imported lazily: only the CLI renders it); under it,
    TIME_NOTE when a row gives a best-sample ratio."""
    from rich.markup import escape
    from rich.table import Table

    rows = zoo_rows(analysis)
    timed = any(r["best_floor_ratio"] is not None for r in rows)
    table = Table(title=title or f"reference kernels on {analysis.roof.name}",
                  title_justify="left", caption=escape(TIME_NOTE) if timed else None,
                  caption_justify="left")
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("kernel", "bound", "flags") else "right")
    for r in rows:
        flags = r["flags"]
        table.add_row(escape(r["kernel"]), si(r["flop"]), si(r["bytes"], "B"), fmt_ai(r["ai"]),
                      fmt_seconds(r["seconds"]), _achieved(r), _pct(r["percent_of_roof"]),
                      r["bound"], _times(r["floor_ratio"]), _times(r["best_floor_ratio"]),
                      f"[bold red]{flags}[/]" if "below-floor" in flags
                      else flags)
    return table


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """CSV text with SI numbers (never formatted strings)."""
    from ..files import csv_text

    return csv_text(rows, list(rows[0]) if rows else list(COLUMNS))
