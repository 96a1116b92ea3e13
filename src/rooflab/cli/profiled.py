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
from ..ingest.profile_envelope import ENVELOPE_NAME, ENVELOPE_NOTE
from ..ingest.profile_import import ProfileImport, RoofChoice, choose_roof
from ..model.analysis import Analysis, analyze, notes_by_text
from ..model.bandwidth_reached import bandwidth_of
from ..model.csv_provenance import PROVENANCE_COLUMNS, provenance_cells
from ..model.kernel import Kernel
from ..model.roof_schema import judged_kind  # roof_kind, as the JSON's roof.kind says
from ..model.schema import analysis_to_dict
from ..units import LEVELS
from .common import (
    emit_json,
    refuse_directory,
    refuse_input_as_output,
    save_text,
    say_line,
    warn,
    wide_console,
)
from .level_view import analyze_in_view, bounds_in_view, reading_json, with_full_bounds
from .profiled_table import bandwidth_notes, rich_table  # noqa: F401 (tests import them here)
from .roof_source_notes import split_roof_source

# flop and bytes (totals over all calls, at the row's level) let the CSV be checked by
# hand: ai = flop / bytes, achieved = flop / seconds.
# unit: the kernel's own compute unit (vector/tensor, empty for any), so the CSV read back
# (`rooflab report k.csv`) holds it to the same ceiling. The provenance of the FLOP, bytes
# and seconds (counted, measured, ...), read back by the kernel-file CSV reader so an ncu
# export's counted numbers do not turn "given"; roof and roof_kind: what percent_of_roof
# and bound were judged on (nominal or measured ceilings), which a CSV alone could not tell
# (review s22 r4 F6; model/csv_provenance.py).
COLUMNS = ("kernel", "calls", "seconds", "time_share", "level", "precision", "flop", "bytes",
           "ai", "achieved_flop_per_s", "percent_of_roof", "bound", "unit",
           *PROVENANCE_COLUMNS)
# -o x.csv adds a flop_<precision> column per precision any kernel has (flop is their sum,
# precision the largest part): a mixed kernel (fp64 + fp32) read back by `rooflab report
# x.csv` is held to the same weighted ceiling, not to its largest part's (review 12b A).
FLOP_COLUMN = "flop_"
# the bytes/s every kernel moved at the row's level (bytes / seconds, as --json's analysis
# and the bench CSV give it: review s22 r4 F5, the ncu CSV left it empty for every kernel
# with FLOP), and, for a kernel without FLOP (a copy), their % of the level's bandwidth
# ceiling, what the table shows in its achieved / % roof cells (empty for other kernels)
BANDWIDTH_COLUMNS = ("achieved_bytes_per_s", "percent_of_bandwidth")


def table_rows(analysis: Analysis, top: int | None = None, full: Analysis | None = None,
               bounds: dict[int, str] | None = None) -> list[dict]:
    """One row per kernel and level it has a point at, kernels by total time (longest
    first), the top N placed kernels (an unplaced kernel has no row: listed below the
    table, it does not take a place in the top N). bounds: level_view.bounds_in_view's,
    where the caller has them already (else worded here, on `full` where given)."""
    order = sorted(analysis.kernels, key=lambda k: -(k.seconds or 0.0))
    if bounds is None:
        bounds = bounds_in_view(analysis, full)   # full: every level (--level, r4 F2)
    rows = []
    shown = 0
    for k in order:
        points = analysis.points_of(k)
        if not points:
            continue
        if top is not None and 0 < top <= shown:
            break
        shown += 1
        rows += [_point_row(k, p, bounds[id(p)], analysis.roof) for p in points]
    return rows


def _point_row(k: Kernel, p, bound: str, roof) -> dict:
    # a kernel without FLOP (a copy) has no FLOP/s: its bandwidth against the level's
    # ceiling is what it reaches (report/tables.py: bandwidth_of, shared with `report`)
    pct = bandwidth_of(p)[1]
    return {"kernel": k.name, "calls": k.calls, "seconds": k.seconds,
            "time_share": p.time_share, "level": p.level, "precision": p.precision,
            "flop": p.flop, "bytes": p.bytes, "ai": p.ai,
            "achieved_flop_per_s": p.achieved_flop_per_s,
            "percent_of_roof": p.percent_of_roof, "bound": bound, "unit": k.unit,
            **provenance_cells(k, roof), "roof_kind": judged_kind(roof),
            "achieved_bytes_per_s": p.bytes / p.seconds if p.seconds else None,
            "percent_of_bandwidth": pct}


def csv_table(analysis: Analysis, full: Analysis | None = None,
              bounds: dict[int, str] | None = None) -> tuple[list[dict], tuple[str, ...]]:
    """(rows, columns) of -o x.csv: one row per kernel and every level it has bytes at (a
    level the roof lacks too: its AI and achieved rate, no % of roof or bound), with the
    FLOP of each precision in its own column, so that `rooflab report x.csv` reads back the
    kernels `rooflab ncu` analysed (ingest/kernelfile_rows.py joins the level rows by name),
    and the meta the advice reads (cli/profiled_meta.py) before the flop_ columns."""
    from ..units import PRECISIONS
    from .profiled_meta import meta_columns

    have = list(dict.fromkeys(p for k in analysis.kernels for p, v in k.flop.items() if v > 0))
    precisions = [p for p in PRECISIONS if p in have] + [p for p in have if p not in PRECISIONS]
    if bounds is None:
        bounds = bounds_in_view(analysis, full)
    rows = []
    flats, meta = meta_columns(analysis.kernels)
    for k in sorted(analysis.kernels, key=lambda k: -(k.seconds or 0.0)):
        split = {**flats[id(k)], **{FLOP_COLUMN + p: k.flop.get(p) for p in precisions}}
        for lv in analysis.levels_of(k):
            if lv.point is not None:
                rows.append({**_point_row(k, lv.point, bounds[id(lv.point)], analysis.roof),
                             **split})
                continue
            # a level the roof lacks: the model's AI and achieved rate, no % of roof or bound
            rows.append({"kernel": k.name, "calls": k.calls, "seconds": k.seconds,
                         "time_share": lv.time_share, "level": lv.level,
                         "precision": k.precision, "flop": k.total_flop, "bytes": lv.bytes,
                         "ai": lv.ai, "achieved_flop_per_s": lv.achieved_flop_per_s,
                         "percent_of_roof": None, "bound": None, "unit": k.unit,
                         **provenance_cells(k, analysis.roof),
                         "roof_kind": judged_kind(analysis.roof),
                         "achieved_bytes_per_s": (lv.bytes / k.seconds if k.seconds
                                                  else None), **split})
    return rows, (COLUMNS + BANDWIDTH_COLUMNS + meta
                  + tuple(FLOP_COLUMN + p for p in precisions))


def unplaced_lines(analysis: Analysis):
    """The kernels without a point, as `rooflab report` lists them below its table ("Not
    placed on this roof": why, and how to place them); None when every kernel is placed."""
    from ..report.terminal import unplaced_text

    return unplaced_text(analysis)


def above_roof_warnings(analysis: Analysis) -> list[str]:
    """`rooflab report`'s "read with care" lines (report.markdown.trust_warnings, its wording
    and tolerance): kernels faster than their roof allows, and kernels whose AI is too high
    for their op (sanity.check_ai_high), so the profiler verbs and `report` agree; [] when
    none is. Diagnosing (advice for every kernel: 0.55 s for 5000 kernels) runs only when
    one of the two sanity checks behind those lines fires on some kernel."""
    if not _checks_fire(analysis):
        return []
    from ..model.diagnose import diagnose
    from ..report.markdown import trust_warnings

    return trust_warnings(diagnose(analysis), kernels=analysis.kernels)


def _checks_fire(analysis: Analysis) -> bool:
    """Whether sanity's above-roof or AI-high check fires on some kernel: the checks
    themselves, not copies of their conditions, so a change to either reaches the
    warnings. Cheap: ~0.1 s cold for 5000 kernels (the AI-high check reads each kernel's
    kind off its name), as much as the pre-filters that copied them."""
    from ..model.sanity import check_above_roof, check_ai_high

    return (any(check_above_roof(p) is not None for p in analysis.points)
            or any(check_ai_high(k, analysis.points_of(k)) is not None
                   for k in analysis.kernels))


def shares_per_file(analysis: Analysis) -> tuple[Analysis, str]:
    """The analysis as it is, and its note that the time shares are of each kernel's own
    file ('' for one file). analyze() already takes every share from
    model.analysis.share_totals (of the kernel's own file when kernels come from several:
    separate profiling runs) and words the note; this only finds it, for import_notes
    (report_import then takes it out of the analysis' own notes, so it is said once)."""
    note = next((n for n in analysis.notes if n.startswith(OWN_FILE_NOTE)), "")
    return analysis, note


# how analyze() begins its note on shares taken per file
OWN_FILE_NOTE = "share is of each kernel's own file:"


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


CHART_SUFFIXES = (".png", ".svg", ".pdf")


def check_chart_option(output: str | None, option: str, given: object) -> None:
    """An option that only shapes the chart, given without -o x.png/.svg/.pdf: a clear
    error rather than silently nothing."""
    if given is not None and (output is None
                              or Path(output).suffix.lower() not in CHART_SUFFIXES):
        raise InputError(f"{option} leaves kernels out of the chart only: add -o x.png "
                         f"(or .svg); the table, .json and .csv keep every kernel")


def write_output(path: str, analysis: Analysis, extra: dict,
                 trajectory: bool, level: str | None, min_share: float | None = None,
                 full: Analysis | None = None, bounds: dict[int, str] | None = None) -> str:
    """Write -o FILE by suffix: .png/.svg chart (kernels under min_share of the time left
    out, as `rooflab plot --min-share`), .json analysis, .csv table (bounds: as
    table_rows takes them)."""
    suffix = Path(path).suffix.lower()
    if suffix in CHART_SUFFIXES:
        from ..report.chart import plot_roofline, save_figure

        kernels = trajectory_kernels(analysis.kernels) if trajectory else list(analysis.kernels)
        display = plot_roofline([analysis.roof], kernels, level=level, trajectory=trajectory,
                                min_share=min_share)
        save_figure(display, path)
        return f"wrote chart {path}" + (f"; {display.dropped}" if display.dropped else "")
    if suffix == ".json":
        from ..files import write_json

        write_json(path, {**with_full_bounds(analysis_to_dict(analysis), full), **extra})
        return f"wrote {path}"
    if suffix == ".csv":
        save_text(path, csv_text(*csv_table(analysis, full, bounds)))
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


def table_title(analysis: Analysis, rows: Sequence[dict], what: str = "kernels") -> str:
    """'3 kernels, longest first (top 1); 1 not placed on this roof (below the table)': the
    top N counts placed kernels only, so an unplaced one no longer reads as cut by --top."""
    n = len(analysis.kernels)
    shown = len({r["kernel"] for r in rows})
    placed = len({id(k) for k in analysis.kernels if analysis.points_of(k)})
    gone = len(analysis.unplaced)
    return (f"{n} {what.removesuffix('s') if n == 1 else what}, longest first"
            + (f" (top {shown})" if shown < placed else "")
            + (f"; {gone} not placed on this roof (below{' the table' if rows else ''})"
               if gone else ""))


def _env_worded(choice: RoofChoice, on: str | None) -> RoofChoice:
    """The roof line with '--on X' said as 'ROOFLAB_ON=X' where the environment gave it
    (options.on_source), as README promises: a CI log or a saved JSON's roof_source named
    a flag that was in no command line (review 15v F-k)."""
    from dataclasses import replace

    from .options import on_source

    said = f"from {on_source(on)}" if on else ""
    if not on or said == f"from --on {on}":
        return choice
    return replace(choice, source=choice.source.replace(f"from --on {on}", said, 1))


def refuse_split_views(kernels, output: str | None) -> None:
    """Refuse -o x.json/x.csv of `--precision each`: its rows are one kernel's precisions,
    whose times add up to more than was measured, and read back as kernels report and
    whatif counted the one 22.8 s launch twice (45.5 s; review s26 v2 F1). A chart is a view."""
    views = {k.meta.get("precision_view") for k in kernels} - {None}
    if output and len(views) > 1 and Path(output).suffix.lower() in (".json", ".csv"):
        raise InputError(f"-o {output} with --precision each: its rows are views of one "
                         f"kernel ({', '.join(sorted(views))}), whose times add up to more "
                         f"than was measured, so a kernel file of them counts each kernel "
                         f"once per precision; save without --precision (every precision "
                         f"in one point, as report reads it) or with one precision "
                         f"(--precision fp64), or write a chart (-o x.png)")


def report_import(imp: ProfileImport, *, on: str | None, top: int, json_out: bool,
                  output: str | None, level: str | None = None, what: str = "kernels",
                  choice: RoofChoice | None = None, min_share: float | None = None) -> int:
    """Warn about skipped rows/files, analyse on the chosen roof, print, write -o (a chart
    without the kernels under min_share of the time). Exit code."""
    refuse_split_views(imp.kernels, output)
    for s in imp.failed:
        warn(f"{s} (file skipped)")
    for s in imp.skips:
        warn(str(s))
    level = _level(level, imp.kernels)
    check_top(top)
    choice = _env_worded(choice or choose_roof(on, imp), on)
    if on:   # which device a family name chose, before the table (review s33 J2)
        from .options import say_name_note_now

        say_name_note_now(on)
    # --level L1 is CARM as in report and plot (s26 v2 F4); another level's rows are worded
    # with every level in view (review s18 r4 F2, level_view.analyze_in_view)
    analysis, full = analyze_in_view(choice.roof, imp.kernels, level, analyze)
    analysis, share_note = shares_per_file(analysis)
    if share_note:
        # said once, among the import notes where --json has always listed it: analyze()
        # words it in its own notes too, so the JSON's "notes" and "import_notes" both held
        # it, and the terminal's collapse_notes joined the two copies into one garbled line
        from dataclasses import replace

        analysis = replace(analysis, notes=tuple(n for n in analysis.notes
                                                 if n != share_note))
    bounds = bounds_in_view(analysis, full)   # once: the table, -o x.csv (reread F1)
    rows = table_rows(analysis, top, bounds=bounds)
    source, roof_notes = split_roof_source(choice, imp)   # the warnings apart (r1 F10)
    extra = {"roof_source": source, "skipped": [str(s) for s in (*imp.failed, *imp.skips)],
             **({"notes": [*roof_notes, *analysis.notes]} if roof_notes else {})}
    notes = list(imp.notes) + ([share_note] if share_note else [])
    if choice.roof.name == ENVELOPE_NAME:
        notes.append(ENVELOPE_NOTE)
    extra["import_notes"] = notes   # always a list, [] when empty, like notes
    extra.update(reading_json(level, analysis))   # --level's reading, as report's (v2 F4)
    uncounted = getattr(imp, "uncounted", None)   # a torch trace's ops without a formula
    if uncounted:
        extra["uncounted"] = [dict(u) for u in uncounted]
    trajectory = len(imp.files) > 1
    care = above_roof_warnings(analysis)
    if care:
        extra["read_with_care"] = care   # as `rooflab report --json` names them
    if json_out:
        for line in roof_notes:
            say_line(line)
        emit_json({**with_full_bounds(analysis_to_dict(analysis), full), **extra})
    else:
        from rich.markup import escape

        out = wide_console()   # a pipe or log: one line per row; COLUMNS still wins
        out.print(escape(choice.source))
        for line in care:
            out.print(f"[bold red]read with care: {escape(line)}[/]")
        title = table_title(analysis, rows, what)
        # nothing placed: the title and the list below, not an empty table's frame
        out.print(rich_table(rows, title) if rows else escape(title))
        gone = unplaced_lines(analysis)
        if gone is not None:
            out.print(gone)
        for note in collapse_notes((*notes, *bandwidth_notes(rows), *analysis.notes)):
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
        message = write_output(output, analysis, extra, trajectory, level, min_share, full,
                               bounds)
        from ..report.term_text import visible

        print(visible(message), file=sys.stderr)   # stderr, as every verb (s22 r3 F7)
    return 0
