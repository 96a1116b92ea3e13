"""A rich terminal summary: the roof, the top kernels to work on, and each one's diagnosis.

`terminal_summary(...)` returns a rich renderable (a Group); only the CLI prints it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model.analysis import Analysis
from ..model.ceiling import Roof
from ..model.choose import count_text, timed_total
from ..model.diagnose import Diagnosis
from ..model.diagnose_distances import factor_words
from ..model.machine import machine_of
from ..sides import share_text
from ..units import fmt_rate, fmt_seconds, fmt_times, si
from .envelope_bound import envelope_bound, envelope_header
from .markdown import (
    RECORD_HEADERS,
    RECORD_TITLE,
    STEP_HEADERS,
    UNPLACED_TITLE,
    compute_only_words,
    load_said,
    priority_headers,
    priority_rows,
    record_notes,
    record_rows,
    short_doubt,
    step_findings,
    step_rows,
    trust_warnings,
    unplaced_summary,
)
from .record_table import has_both_roofs
from .term_text import cell, shown

BOUND_STYLE = {"memory": "blue", "compute": "dark_orange", "overhead": "magenta",
               "latency": "red"}


# Below this many columns the priorities table leaves out "best advice" and "predicted"
# (each diagnosis under the table gives both in full) instead of folding every cell.
WIDE_TABLE = 110


class WidthAware:
    """A renderable built for the width it is printed at: `build(narrow)` makes the table,
    narrow when fewer than `wide` columns are free (rich asks at print time)."""

    def __init__(self, build, wide: int = WIDE_TABLE):
        self.build, self.wide = build, wide

    def __rich_console__(self, console, options):
        yield self.build(options.max_width < self.wide)


# The units a throughput advice counts its gain in, as its detail says it ("the speed-up
# is per request (throughput)": batching requests per weight read; "per vector": an SpMV's
# right-hand sides per matrix read).
THROUGHPUT_UNITS = ("request", "vector")


def throughput_unit(a) -> str:
    """The unit an advice's speed-up is a throughput gain per ('request', 'vector'), as its
    detail says it; '' for a latency gain. The terminal says it beside the figure, where
    '8.00x' alone read as latency (review 11b #14), in the advice's own unit (an SpMM's
    6.04x is per vector, not per request: review 16b follow-up)."""
    return next((u for u in THROUGHPUT_UNITS if f"per {u} (throughput)" in a.detail), "")


def priority_table(diagnoses: Sequence[Diagnosis], title: str = "Top kernels to work on",
                   roof: Roof | None = None):
    """roof: the analysis' roof, so that on the envelope (no --on) a class reads relative,
    or none (report.envelope_bound)."""
    diagnoses = list(diagnoses)
    return WidthAware(lambda narrow: _priority_table(diagnoses, title, narrow, roof))


def _priority_table(diagnoses: Sequence[Diagnosis], title: str, narrow: bool,
                    roof: Roof | None = None):
    from rich import box
    from rich.table import Table

    headers = priority_headers(diagnoses)   # '/ own file' for several profiler files
    keep = [h for h in headers
            if not (narrow and h in ("best advice", "predicted"))]
    t = Table(title=title + (" (advice and predicted speed-up: below each)" if narrow else ""),
              title_justify="left", show_lines=False,
              box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD)
    for h in keep:
        t.add_column(h, justify="right" if h in ("#", "time share", "headroom",
                                                  "predicted") else "left",
                     overflow="fold", ratio=1 if h == "best advice" else None)
    for d, row in zip(diagnoses, priority_rows(diagnoses), strict=True):
        cells = list(row)
        # The action without its parenthesis; the diagnosis below gives it in full.
        cells[6] = cells[6].split(" (")[0]
        unit = throughput_unit(d.best_advice) if d.best_advice is not None else ""
        if unit:
            cells[7] += f" per {unit}"
        # a kernel 'loop[i]': rich would take [i] for markup; ESC and megabyte names: cell
        cells[1] = cell(cells[1])
        if roof is not None:
            cells[2] = envelope_bound(d.point, roof, d.bound)
        cells[2] = f"[{BOUND_STYLE.get(d.bound, 'white')}]{cells[2]}[/]"
        if d.flagged:
            cells[4] = f"[bold red]{cells[4]}[/]"
        t.add_row(*(c for h, c in zip(headers, cells, strict=True) if h in keep))
    return t


def record_table_parts(analysis: Analysis, diagnoses: Sequence[Diagnosis], profile) -> list:
    """Seed 004's record table (nominal vs measured: B, P, ridge, the top kernels' FLOP/s
    and time) with its notes, when the profile holds both roofs; the rows are the .md and
    .html report's (markdown.record_rows), so all three say the same numbers."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    if not has_both_roofs(profile):
        return []
    t = Table(title=RECORD_TITLE, title_justify="left")
    for i, h in enumerate(RECORD_HEADERS):
        t.add_column(h, justify="left" if i in (0, 3) else "right")
    for row in record_rows(analysis, profile, diags=diagnoses):
        t.add_row(*(escape(c) for c in row))
    return [t] + [Text(f"- {n}", style="dim") for n in record_notes(profile)]


def steps_table(analysis: Analysis):
    from rich.table import Table

    rows = step_rows(analysis)
    if not rows:
        return None
    t = Table(title="Optimisation steps", title_justify="left")
    skip = {"kernel", "AI L1"}
    for h in STEP_HEADERS:
        if h not in skip:
            t.add_column(h, justify="left" if h in ("step", "bound") else "right")
    for row in rows:
        t.add_row(*(c for h, c in zip(STEP_HEADERS, row, strict=True) if h not in skip))
    return t


def unplaced_text(analysis: Analysis):
    """The kernels without a point (Analysis.unplaced): name, time, share, why, their
    compute-only position and the fix; None when every kernel is placed."""
    from rich.text import Text

    if not analysis.unplaced:
        return None
    t = Text()
    t.append(f"{UNPLACED_TITLE}\n", style="bold")
    t.append(unplaced_summary(analysis) + "\n", style="dim")
    for u in analysis.unplaced:
        share = (f", {share_text(100 * u.time_share)} of the time"
                 if u.time_share else "")
        t.append(f" - {shown(u.kernel)}", style="bold")
        t.append(f" ({fmt_seconds(u.seconds) if u.seconds else 'untimed'}{share}): "
                 f"{u.reason}\n")
        if u.achieved_flop_per_s is not None:
            t.append(f"   compute only (no memory level, so no AI): achieved "
                     f"{compute_only_words(u)}\n")
        t.append(f"   to place it: {u.fix}\n", style="green")
    return t


# The advice to re-time first (model/advice_compute: noisy samples or a loaded probe)
# predicts no speed-up: it is printed on its own line above the levers and takes none of
# their `advice` slots (review 17a N11: a stencil's non-temporal-store lever, 1.50x, was
# computed and hidden behind "re-time on a quiet machine ... 1.00x").
RETIME = "re-time"


def _retime(a) -> bool:
    return a.action.startswith(RETIME) and a.speedup == 1.0


def more_advice_line(rest) -> str:
    """The levers past the printed ones, by name and speed-up, on one line: the terminal
    keeps the diagnosis short, and the reports give every advice in full."""
    # a trailing parenthesis is detail ("... on every core (unit stride, ...)"); one inside
    # the action is not ("use non-temporal (streaming) stores for the output grid")
    return ("   also: " + "; ".join(f"{re.sub(r' [(][^()]*[)]$', '', a.action)} "
                                    f"{fmt_times(a.speedup)}" for a in rest)
            + " (every advice in full: -o report.md or --json)")


def diagnosis_text(d: Diagnosis, advice: int = 3, said: bool = False,
                   roof: Roof | None = None):
    """said: the top says the probe's load note (markdown.load_said): point there. roof:
    the analysis' roof (on the envelope the class line says it has none to judge by)."""
    from rich.text import Text

    t = Text()
    t.append(f"{d.rank}. {shown(d.kernel)}", style="bold")   # s22 r1 F7, F8
    head = envelope_header(d.point, roof, d.bound)
    t.append(f"  {head}\n", style=BOUND_STYLE.get(d.bound, ""))
    t.append(f"   position: {d.evidence}\n")
    t.append(f"   gain: {d.gain_words}\n")
    for n in d.notes:
        t.append(f"   kernel note: {n}\n", style="italic")
    for x in d.distances:
        f = factor_words(x)   # '1.0004x', not '1x' beside the ridge (sides.py)
        t.append(f"   {x.name} ({f}): ", style="bold")
        t.append(f"{x.words}\n", style="dim")
    for f in d.findings:
        style = "yellow" if f.severity == "warning" else "dim"
        t.append(f"   {'!' if f.severity == 'warning' else 'i'} {f.check}: {f.message}\n",
                 style=style)
        if f.causes and f.severity == "warning":
            t.append(f"     likely: {short_doubt(f.causes[0], said)}\n", style=style)
    for a in d.advice:
        if _retime(a):
            t.append(f"   ! {a.action}: {short_doubt(a.detail, said)}\n", style="yellow")
    levers = [a for a in d.advice if not _retime(a)]
    for a in levers[:advice]:
        unit = throughput_unit(a)
        gain = (f" per {unit} (throughput; the latency of one {unit} does not drop)"
                if unit else "")
        t.append(f"   -> {a.action}: {fmt_times(a.speedup)} predicted{gain} ", style="green")
        t.append(f"(assumes {short_doubt(a.assumption, said)})\n", style="dim")
    if levers[advice:]:
        t.append(more_advice_line(levers[advice:]) + "\n", style="dim")
    return t


def terminal_summary(analysis: Analysis, diagnoses: Sequence[Diagnosis], top: int = 5,
                     source: str = "", profile=None, extra: Sequence = (),
                     written: str | None = None):
    """Roof line, priorities table, then the top kernels' diagnoses. extra: renderables
    printed after the priorities table (`report --level all`'s table of every level).
    written: the file `report -o` wrote, which holds the diagnoses: the terminal then
    says where they are instead of printing them again (review s33 J3)."""
    from rich.console import Group
    from rich.text import Text

    from ..model.dies import kind_words

    roof = analysis.roof
    head = Text()
    head.append(shown(roof.name), style="bold")
    head.append(f" ({kind_words(roof)}): ")   # one die of a package: derived (s34 G)
    head.append(", ".join(f"{c.label} {fmt_rate(c.value, c.precision)}"
                          for c in roof.compute) + "; ")
    head.append(", ".join(f"{c.level} {si(c.value, 'B/s')}" for c in roof.memory))
    if roof.overhead_s:
        cpu = machine_of(roof).kind == "cpu"
        head.append(f"; {'dispatch' if cpu else 'launch'} floor {fmt_seconds(roof.overhead_s)}")
    parts: list = [head]
    if source:
        parts.append(Text(source, style="dim"))
    total = timed_total(analysis.kernels)
    flagged = sum(1 for d in diagnoses if d.flagged)
    timed = sum(1 for k in analysis.kernels if k.seconds)
    # a what-if file's kernels (`rooflab whatif -o w.json`) carry predicted times
    predicted = timed and all(k.meta.get("whatif") for k in analysis.kernels if k.seconds)
    gone = (f"; {len(analysis.unplaced)} not placed on this roof (below the table)"
            if analysis.unplaced else "")
    parts.append(Text(f"{count_text(analysis.kernels)}, " + (
        f"{fmt_seconds(total)} {'predicted' if predicted else 'measured'}; {flagged} more "
        f"than 2x below their roof" if timed else
        "none timed (counted FLOP and bytes only): ranked by time floor, no percent of roof")
        + gone))
    care = trust_warnings(diagnoses, profile, analysis.notes, analysis.kernels)
    parts += [Text(f"read with care: {w}", style="bold red") for w in care]
    parts += record_table_parts(analysis, diagnoses, profile)
    steps = steps_table(analysis)
    if steps is not None:
        parts.append(steps)
        parts += [Text(f"- {s}") for s in step_findings(analysis)]
    parts.append(priority_table(diagnoses[:top], roof=roof))
    parts += list(extra)
    unplaced = unplaced_text(analysis)
    if unplaced is not None:
        parts.append(unplaced)
    if written is None:
        parts += [diagnosis_text(d, said=load_said(care), roof=roof)
                  for d in diagnoses[:top]]
    else:
        parts.append(Text(f"each kernel's position, distances to its roof and advice: "
                          f"{written}", style="dim"))
    for n in analysis.notes:
        parts.append(Text(f"note: {n}", style="dim"))
    return Group(*parts)
