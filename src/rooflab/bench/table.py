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
from ..model.bandwidth_reached import bandwidth_of
from ..model.csv_provenance import PROVENANCE_COLUMNS, provenance_cells
from ..sides import pct_text
from ..units import fmt_ai, fmt_rate, fmt_seconds, fmt_times, si

# The CSV's columns: first the analysis CSV's of the profiler verbs, in their order and
# meaning (cli/profiled.py: COLUMNS + BANDWIDTH_COLUMNS; review r1_json F8: bench wrote its
# own set, without percent_of_bandwidth), then the zoo's own: the floor and the flags.
COLUMNS = ("kernel", "calls", "seconds", "time_share", "level", "precision", "flop", "bytes",
           "ai", "achieved_flop_per_s", "percent_of_roof", "bound", "unit",
           *PROVENANCE_COLUMNS, "achieved_bytes_per_s", "percent_of_bandwidth",
           "floor_s", "floor_ratio", "best_floor_ratio", "flags")
HEADERS = ("kernel", "FLOP", "bytes", "AI", "time", "achieved", "% of roof", "bound",
           "measured/floor", "best/floor", "flags")


def zoo_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """One row per kernel at its binding level, in the order the kernels were given, with
    the COLUMNS (seconds are of all calls: read back, as many)."""
    primary = {p.kernel: p for p in analysis.primary()}
    rows = []
    for k in analysis.kernels:
        p = primary.get(k.name)
        if p is None:
            continue
        row = {"kernel": k.name, "calls": k.calls, "seconds": p.seconds,
               "time_share": p.time_share, "level": p.level, "precision": p.precision,
               "flop": p.flop, "bytes": p.bytes, "ai": p.ai,
               "achieved_flop_per_s": p.achieved_flop_per_s,
               "percent_of_roof": p.percent_of_roof, "bound": p.bound, "unit": k.unit,
               **provenance_cells(k, analysis.roof),
               # the bytes/s of every kernel (the table's achieved for a copy); the % of
               # the level's bandwidth for a kernel without FLOP only, as the ncu CSV's
               "achieved_bytes_per_s": p.bytes / p.seconds if p.seconds else None,
               "percent_of_bandwidth": bandwidth_of(p)[1],
               "floor_s": p.floor_s, "floor_ratio": p.floor_ratio,
               "best_floor_ratio": k.meta.get("best_floor_ratio"),
               "flags": " ".join(k.meta.get("flags", ()))}
        rows.append({c: row[c] for c in COLUMNS})
    return rows


def _achieved(row: dict[str, Any]) -> str:
    # Kernels without FLOP (copy, sort) are judged by the bandwidth they reach.
    if row["flop"] > 0 and row["achieved_flop_per_s"]:
        return fmt_rate(row["achieved_flop_per_s"], row["precision"])
    return si(row["achieved_bytes_per_s"], "B/s")


TIME_NOTE = ("% of roof and measured/floor use the kernel's median time, against ceilings "
             "that are each a best sample; best/floor is the kernel's best sample against the "
             "same floor (best with best, as likwid-bench and STREAM compare)")


# report/tables.py bandwidth_note's words (bench/ may not import report/)
BANDWIDTH_NOTE = ("{kernel}: no FLOP, so achieved is the bytes/s it moved and % of roof is of "
                  "the {level} bandwidth ceiling")


def _percent(row: dict[str, Any]) -> float | None:
    return row["percent_of_roof"] if row["percent_of_bandwidth"] is None \
        else row["percent_of_bandwidth"]


def _times(x: float | None) -> str:
    # units.fmt_times (two decimals, 3 figures from 10 and under 0.1), '-' for no best sample
    return "-" if x is None else fmt_times(x)


def zoo_table(analysis: Analysis, title: str | None = None):
    """A rich Table of zoo_rows (imported lazily: only the CLI renders it); under it,
    TIME_NOTE when a row gives a best-sample ratio."""
    from rich.markup import escape
    from rich.table import Table

    rows = zoo_rows(analysis)
    timed = any(r["best_floor_ratio"] is not None for r in rows)
    # a kernel without FLOP: its % of the level's bandwidth, as `ncu`/`report` print it
    notes = [BANDWIDTH_NOTE.format(kernel=r["kernel"], level=r["level"]) for r in rows
             if r["percent_of_bandwidth"] is not None] + ([TIME_NOTE] if timed else [])
    table = Table(title=title or f"reference kernels on {analysis.roof.name}",
                  title_justify="left", caption=escape("\n".join(notes)) if notes else None,
                  caption_justify="left")
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("kernel", "bound", "flags") else "right")
    for r in rows:
        flags = r["flags"]
        table.add_row(escape(r["kernel"]), si(r["flop"]), si(r["bytes"], "B"), fmt_ai(r["ai"]),
                      fmt_seconds(r["seconds"]), _achieved(r), pct_text(_percent(r)),
                      r["bound"], _times(r["floor_ratio"]), _times(r["best_floor_ratio"]),
                      f"[bold red]{flags}[/]" if "below-floor" in flags
                      else flags)
    return table


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """CSV text with SI numbers (never formatted strings)."""
    from ..files import csv_text

    return csv_text(rows, list(rows[0]) if rows else list(COLUMNS))


def recipe_line(kernels) -> str | None:
    """How the kernels were timed, in one line under `bench --run`'s table (review 17b #8,
    #13: meta carried the recipe and the threads, the table said neither): the timing plan
    (meta["plan"]), the calls before the first timed sample (meta["warmup_calls"]) or
    "single run", and the threads (meta["threads"], with where the count came from). None
    when no kernel's meta says any of it (a kernel file)."""
    plans = _distinct(_plan_words(k.meta) for k in kernels)
    warm = sorted({int(k.meta["warmup_calls"]) for k in kernels if "warmup_calls" in k.meta})
    threads = _distinct(_threads_words(k.meta) for k in kernels)
    parts = []
    if plans:
        parts.append(" / ".join(plans))
    if warm:
        span = str(warm[0]) if len(warm) == 1 else f"{warm[0]}-{warm[-1]}"
        parts.append(f"{span} warm-up call{'' if warm == [1] else 's'} before the first "
                     f"timed sample")
    if threads:
        parts.append("threads " + " / ".join(threads))
    elif parts:   # timed by rooflab, on code whose threads it cannot read
        parts.append("threads not known (read from PyTorch CPU ops and numba only)")
    return "timing: " + "; ".join(parts) if parts else None


def _distinct(words) -> list[str]:
    return list(dict.fromkeys(w for w in words if w))


def _plan_words(meta) -> str:
    """'plan quick (warm-up 10 ms, 10 ms samples, 80 ms budget, 5-200 samples)', or the
    seconds_stat of a single run ('single run', 'sum of single runs')."""
    plan = meta.get("plan")
    if not isinstance(plan, dict):
        stat = meta.get("seconds_stat")
        return str(stat) if stat and stat != "median" else ""
    name = f"plan {plan['name']}" if plan.get("name") else "plan"
    fields = [f"warm-up {fmt_seconds(plan['warmup_s'])}" if "warmup_s" in plan else "",
              f"{fmt_seconds(plan['sample_s'])} samples" if "sample_s" in plan else "",
              f"{fmt_seconds(plan['budget_s'])} budget" if "budget_s" in plan else "",
              f"{plan['min_samples']}-{plan['max_samples']} samples"
              if "min_samples" in plan and "max_samples" in plan else ""]
    fields = [f for f in fields if f]
    return f"{name} ({', '.join(fields)})" if fields else name


def _threads_words(meta) -> str:
    """'1 (torch.get_num_threads())', '' where the threads are not known."""
    if meta.get("threads") is None:
        return ""
    source = meta.get("threads_from")
    return f"{meta['threads']}" + (f" ({source})" if source else "")
