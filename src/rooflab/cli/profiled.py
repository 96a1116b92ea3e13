"""Shared output of the profiler verbs (ncu, torch, rocprof): warnings, roof line, the kernel
table (per kernel and level: AI, achieved, % of roof, bound, time share; longest first, top N),
JSON, chart/CSV/JSON files."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..files import csv_text
from ..ingest.profile_import import (
    ENVELOPE_NAME,
    ENVELOPE_NOTE,
    ProfileImport,
    RoofChoice,
    choose_roof,
)
from ..model.analysis import Analysis, analyze, notes_by_text
from ..model.kernel import Kernel
from ..model.schema import analysis_to_dict
from ..units import LEVELS, fmt_ai, fmt_pct, fmt_rate, fmt_seconds
from .common import (
    emit_json,
    refuse_directory,
    refuse_input_as_output,
    save_text,
    warn,
    wide_console,
)

# flop and bytes (totals over all calls, at the row's level) let the CSV be checked by
# hand: ai = flop / bytes, achieved = flop / seconds.
# unit: the kernel's own compute unit (vector/tensor, empty for any), so the CSV read back
# (`rooflab report k.csv`) holds it to the same ceiling.
COLUMNS = ("kernel", "calls", "seconds", "time_share", "level", "precision", "flop", "bytes",
           "ai", "achieved_flop_per_s", "percent_of_roof", "bound", "unit")


def table_rows(analysis: Analysis, top: int | None = None) -> list[dict]:
    """One row per kernel and level, kernels by total time (longest first), top N kernels."""
    order = sorted(analysis.kernels, key=lambda k: -(k.seconds or 0.0))
    if top is not None and top > 0:
        order = order[:top]
    rows = []
    for k in order:
        for p in analysis.for_kernel(k.name):
            rows.append({"kernel": k.name, "calls": k.calls, "seconds": k.seconds,
                         "time_share": p.time_share, "level": p.level,
                         "precision": p.precision, "flop": p.flop, "bytes": p.bytes,
                         "ai": p.ai,
                         "achieved_flop_per_s": p.achieved_flop_per_s,
                         "percent_of_roof": p.percent_of_roof, "bound": p.bound,
                         "unit": k.unit})
    return rows


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
        pct = r["percent_of_roof"]
        share = r["time_share"]
        cells = [escape(r["kernel"]) if first else "", str(r["calls"]) if first else "",
                 fmt_seconds(r["seconds"]) if first else "",
                 f"{100 * share:.1f}%" if first and share is not None else "",
                 r["level"], r["precision"], fmt_ai(r["ai"]),
                 fmt_rate(r["achieved_flop_per_s"], r["precision"]),
                 fmt_pct(pct), r["bound"]]
        t.add_row(*(cells[:1] + cells[2:] if narrow else cells))
    return t


def shares_per_file(analysis: Analysis) -> tuple[Analysis, str]:
    """Kernels from several files (steps: separate profiling runs) get their time share of
    their own file's time, not of the sum over files (a share of nothing real), and a
    note saying so; one file's analysis is returned as it is, with no note."""
    from dataclasses import replace

    step = {k.name: k.meta.get("step_index") for k in analysis.kernels}
    files = {i for i in step.values() if i is not None}
    if len(files) < 2:
        return analysis, ""
    total: dict[int, float] = {}
    for k in analysis.kernels:
        if k.seconds and step[k.name] is not None:
            total[step[k.name]] = total.get(step[k.name], 0.0) + k.seconds
    seconds = {k.name: k.seconds for k in analysis.kernels}

    def share(p):
        t, i = seconds.get(p.kernel), step.get(p.kernel)
        return t / total[i] if t and i in total and total[i] > 0 else None

    points = tuple(replace(p, time_share=share(p)) for p in analysis.points)
    return replace(analysis, points=points), (
        f"share is of each kernel's own file: the {len(files)} files are separate "
        f"profiling runs, so a share of their summed time would be a share of nothing real")


def collapse_notes(notes: Sequence[str]) -> list[str]:
    """'k1: roof X has no L2 ceiling', 'k2: roof X has no L2 ceiling' -> one line naming both."""
    out = []
    for text, who in notes_by_text(notes).items():
        who = [w for w in who if w]
        if len(who) > 2:
            out.append(f"{len(who)} kernels ({who[0]}, ...): {text}")
        elif who:
            out.append(f"{', '.join(who)}: {text}")
        else:
            out.append(text)
    return out


def _common_prefix(names: Sequence[str]) -> str:
    prefix = os.path.commonprefix(list(names)).rstrip("_:-. ")
    return prefix if len(prefix) >= 3 else ""


def trajectory_kernels(kernels: Sequence[Kernel]) -> list[Kernel]:
    """Kernels for a trajectory chart: each step's top kernel by time, renamed to one shared
    name (the chart joins kernels of the same name, in order), steps in file order."""
    steps: dict[int, Kernel] = {}
    for k in kernels:
        idx = k.meta.get("step_index")
        if idx is None:
            continue
        if idx not in steps or (k.seconds or 0) > (steps[idx].seconds or 0):
            steps[idx] = k
    if len(steps) < 2:
        return list(kernels)
    tops = [steps[i] for i in sorted(steps)]
    base = _common_prefix([str(k.meta.get("full_name", k.name)) for k in tops])
    name = f"{base} (steps)" if base else "top kernel per step"
    chosen = {id(k) for k in tops}
    out = [k.with_(name=name) for k in tops]
    out += [k for k in kernels if id(k) not in chosen]
    return out


SUFFIXES = (".png", ".svg", ".pdf", ".json", ".csv")


def check_output(path: str | None, top: int = 0, inputs: Sequence[str | None] = ()) -> None:
    """Refuse an unknown -o suffix, an unwritable path or a negative --top before any
    work is done."""
    from ..files import check_writable

    check_top(top)
    refuse_directory("-o", path, "roofline.png")
    if path and Path(path).suffix.lower() not in SUFFIXES:
        raise InputError(f"-o {path}: unknown suffix '{Path(path).suffix}'; use .png, .svg, "
                         f".json or .csv")
    refuse_input_as_output(path, [i for i in inputs if i])
    if path:
        check_writable(path)


def check_top(top: int) -> None:
    if top < 0:
        raise InputError(f"--top {top}: give the number of kernels to show, or 0 for all")


def write_output(path: str, analysis: Analysis, rows: Sequence[dict], extra: dict,
                 trajectory: bool, level: str | None) -> str:
    """Write -o FILE by suffix: .png/.svg chart, .json analysis, .csv table."""
    suffix = Path(path).suffix.lower()
    if suffix in (".png", ".svg", ".pdf"):
        from ..report.chart import plot_roofline, save_figure

        kernels = trajectory_kernels(analysis.kernels) if trajectory else list(analysis.kernels)
        display = plot_roofline([analysis.roof], kernels, level=level, trajectory=trajectory)
        save_figure(display, path)
        return f"wrote chart {path}"
    if suffix == ".json":
        from ..files import write_json

        write_json(path, {**analysis_to_dict(analysis), **extra})
        return f"wrote {path}"
    if suffix == ".csv":
        save_text(path, csv_text(rows, COLUMNS))
        return f"wrote {path}"
    raise InputError(f"-o {path}: unknown suffix '{suffix}'; use .png, .svg, .json or .csv")


def _level(level: str | None, kernels) -> str | None:
    """--level as a level name ('dram' and 'HBM' are DRAM), one the kernels have bytes at:
    a level none of them has would print an empty table and exit 0."""
    if level is None:
        return None
    from ..model.schema import level_name

    name = level_name(level)
    if name not in LEVELS:
        raise InputError(f"--level {level}: use one of {', '.join(LEVELS)}")
    have = [lv for lv in LEVELS if any(k.bytes.get(lv, 0) > 0 for k in kernels)]
    if have and name not in have:
        raise InputError(f"--level {level}: no kernel in these files has {name} bytes; "
                         f"they have {', '.join(have)}")
    return name


def report_import(imp: ProfileImport, *, on: str | None, top: int, json_out: bool,
                  output: str | None, level: str | None = None, what: str = "kernels",
                  choice: RoofChoice | None = None) -> int:
    """Warn about skipped rows/files, analyse on the chosen roof, print, write -o. Exit code."""
    for s in imp.failed:
        warn(f"{s} (file skipped)")
    for s in imp.skips:
        warn(str(s))
    level = _level(level, imp.kernels)
    check_top(top)
    choice = choice or choose_roof(on, imp)
    analysis = analyze(choice.roof, imp.kernels, levels=[level] if level else None)
    analysis, share_note = shares_per_file(analysis)
    rows = table_rows(analysis, top)
    extra = {"roof_source": choice.source,
             "skipped": [str(s) for s in (*imp.failed, *imp.skips)]}
    notes = list(imp.notes) + ([share_note] if share_note else [])
    if choice.roof.name == ENVELOPE_NAME:
        notes.append(ENVELOPE_NOTE)
    if notes:
        extra["import_notes"] = notes
    trajectory = len(imp.files) > 1
    if json_out:
        emit_json({**analysis_to_dict(analysis), **extra})
    else:
        from rich.markup import escape

        out = wide_console()   # a pipe or log: one line per row; COLUMNS still wins
        out.print(escape(choice.source))
        shown = len({r["kernel"] for r in rows})
        n = len(analysis.kernels)
        title = (f"{n} {what.removesuffix('s') if n == 1 else what}, longest first"
                 + (f" (top {shown})" if shown < len(analysis.kernels) else ""))
        out.print(rich_table(rows, title))
        for note in collapse_notes((*notes, *analysis.notes)):
            out.print(escape(f"note: {note}"))
        # A measured roof's notes say how its own numbers were got and what it leaves out
        # (rocprof-compute's roofline.csv: MALL as L3, LDS not drawn, the other devices):
        # short, and about this file. A nominal (catalog) roof's notes are its datasheet's
        # caveats, long and the same every run (`rooflab specs NAME` shows them).
        if choice.roof.kind == "measured":
            for note in dict.fromkeys(n for n in choice.roof.notes if n not in notes):
                out.print(escape(f"roof note: {note}"))
    if output:
        # the file holds every kernel, as the .json and the chart do: --top trims the screen
        message = write_output(output, analysis, table_rows(analysis), extra, trajectory, level)
        print(message, file=sys.stderr if json_out else sys.stdout)
    return 0
