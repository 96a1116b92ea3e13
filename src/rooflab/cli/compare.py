"""rooflab compare — two runs matched by kernel name: speed-ups, and a gate for CI."""

from __future__ import annotations

import math
import sys
from typing import Annotated

import typer

from ..errors import InputError
from .common import EXIT_REGRESSION
from .options import FILES_HELP, on_option

# compare's --on judges nothing: it is the roof the -o chart draws the moves on
OnChart = Annotated[str | None, on_option("the roof of the -o chart (else the files' own)")]

HELP = """Compare two runs (before/after an optimisation, or two machines).

Kernels are matched by name (entries of the same name in one run are added up, and a
note says so); --map OLD=NEW matches a renamed kernel (one kernel a run under two names
is matched for the table, but gated only when --map pairs it). Prints the speed-up of each
matched kernel (before time / after time, each the total over all its calls: profile
the same number of iterations in both runs; when the call counts differ a note gives
the per-call speed-up) and exits 1 when any matched kernel got slower by more than
--fail-if-slower PCT outside the timing noise, so it can gate CI (exit 2 is a usage
error, 70 a bug in rooflab; a kernel without a time in both runs, or in one run only,
is not gated: a note says so). Noise: where both runs kept the timing samples
(`rooflab bench`, rooflab.measure, profiler launches), a two-sided Mann-Whitney U test
(as Google benchmark's compare.py) must find the change at p < 0.05, else the table
says "within noise" and the gate lets it pass; "cannot tell" where a run is flagged
noisy or fewer than 9 samples a side merely do not overlap (load between runs shifts a
whole run), not gated either; without samples the change is gated as measured and a
note says noise could not be judged. Two untimed `rooflab llm --json`
files (fp16 vs int4, one device vs another) have no seconds to compare: their kernels'
work floors and the step's (TPOT or TTFT floor) are compared instead, labelled as
derived floors, never gated. -o arrows.png draws each kernel's move on the roof (needs
--on or a roof in the files).

  rooflab compare before.json after.json
  rooflab compare before.json after.json --fail-if-slower 5
  rooflab compare output1.csv output5.csv --on output5.ncu-rep -o moves.png
  rooflab compare before_trace.json after_trace.json    (torch traces)
  rooflab compare run1/results.csv run2/results.csv    (rocprof CSVs)
"""


def register(app) -> None:
    @app.command("compare", help=HELP)
    def compare(
        before: str = typer.Argument(..., help=f"the first run: any file report reads "
                                               f"({FILES_HELP})"),
        after: str = typer.Argument(..., help="the second run, same formats"),
        rename: list[str] = typer.Option([], "--map", help="OLD=NEW for a renamed kernel "
                                                           "(repeatable)"),
        fail_if_slower: float = typer.Option(None, "--fail-if-slower", metavar="PCT",
                                             help="exit 1 if a matched kernel is slower by "
                                                  "more than PCT percent, outside the "
                                                  "timing noise where samples tell"),
        on: OnChart = None,
        output: str = typer.Option(None, "-o", "--output", help="arrows chart .png/.svg, "
                                                                 "or .json"),
        json_out: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
    ) -> None:
        from ..model.compare import compare_kernels, comparison_to_dict, parse_rename
        from .common import check_output, emit_json, err_console, refuse_input_as_output

        _check_gate(fail_if_slower)
        check_output(output, (".json", ".png", ".svg"))
        refuse_input_as_output(output, [before, after, *([on] if on else [])])
        k_before = _kernels(before)
        k_after = _kernels(after)
        cmp = compare_kernels(k_before, k_after, parse_rename(rename))
        if not cmp.matches:
            # Nothing to compare: a CI gate (--fail-if-slower) would pass on nothing.
            raise InputError(f"no kernel of {before} has the name of one in {after} "
                             f"(first run: {_names(cmp.only_before)}; second run: "
                             f"{_names(cmp.only_after)}); pair renamed kernels with "
                             f"--map OLD=NEW")
        if fail_if_slower is not None and not rename:
            _refuse_guessed_pair(cmp, before, after)
        if fail_if_slower is not None and not cmp.timed:
            # a gate over kernels without a time on both sides would pass on nothing
            untimed = ", ".join(f"{m.name} ({_untimed_sides(m)})" for m in cmp.matches[:3])
            raise InputError(f"--fail-if-slower: no matched kernel has a time in both runs "
                             f"(no time: {untimed}); give both runs' seconds")
        data = comparison_to_dict(cmp, fail_if_slower)
        floors = _floors(cmp, before, after)
        if floors is not None:
            from ..model.compare import floors_to_dict

            data["floors"] = floors_to_dict(*floors)
        if output:
            _write(output, cmp, data, on, [before, after])
        if json_out:
            emit_json(data)
        else:
            from .common import wide_console

            wide_console().print(_table(cmp, fail_if_slower, floors))
            if output:
                err_console().print(f"wrote {output}")
        if fail_if_slower is not None and cmp.regressions(fail_if_slower):
            names = ", ".join(m.name for m in cmp.regressions(fail_if_slower))
            print(f"slower by more than {fail_if_slower:g} %: {names}", file=sys.stderr)
            raise typer.Exit(EXIT_REGRESSION)


def _check_gate(pct: float | None) -> None:
    # NaN compares false with every change, so `--fail-if-slower nan` passed every run (and
    # its JSON could not be written); inf can never fail either: neither is a gate.
    if pct is not None and not (math.isfinite(pct) and pct >= 0):
        raise InputError(f"--fail-if-slower takes a finite percentage >= 0 (e.g. 5); "
                         f"got {pct}")


def _refuse_guessed_pair(cmp, before: str, after: str) -> None:
    """The gate judges a kernel against itself: two runs of one kernel each under
    different names are paired for the table (a note says so), but gating that pair called
    an fp16 GEMM "slower" than another GPU's fp64 kernel (exit 1, a regression) where the
    runs have no kernel in common (exit 2). A renamed kernel is named with --map."""
    guessed = [m for m in cmp.matches if m.before.name != m.name]
    if not guessed:
        return
    m = guessed[0]
    raise InputError(f"--fail-if-slower: no kernel of {before} has the name of one in "
                     f"{after} (first run: {m.before.name}; second run: {m.name}), so "
                     f"there is nothing to gate; if the kernel was renamed, pair it with "
                     f"--map '{m.before.name}={m.name}'")


def _untimed_sides(m) -> str:
    """Which run lacks the kernel's time ('before', 'after' or both), for the error of a
    gate with nothing to gate (it said 'before' whichever side it was)."""
    return " and ".join(side for side, k in (("before", m.before), ("after", m.after))
                        if not k.seconds)


def _names(kernels, limit: int = 3) -> str:
    names = [k.name for k in kernels]
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more if names else "none"


def _kernels(path: str):
    # any kernel file: ours, an analysis JSON, or a profiler's (ncu, rocprof, torch trace)
    from ..ingest.kernelfile import load_kernels

    if path == "-":
        # `rooflab ncu ... --json | rooflab compare base.json -` said "-: file not found"
        raise InputError("-: a run is read from a file, not from stdin; save it first, "
                         "e.g. `rooflab ncu run.csv --json > run.json`, and pass run.json")
    return load_kernels(path)


def _llm_floors(path: str) -> tuple[dict[str, float], str, float] | None:
    """(work floor by kernel, step name, step floor) of an untimed `rooflab llm --json`
    file: its analysis[].floor_s (the roofline floor of each kernel on the file's roof),
    which add up to the tabled step's floor (llm.decode or llm.prefill floor_s). None for
    any other input, or a file whose kernels carry seconds (then the times compare)."""
    import json

    from ..files import read_text
    from ..model.document_parts import analysis_floors, llm_part

    if not path.lower().endswith(".json"):
        return None
    try:
        doc = json.loads(read_text(path))
    except (ValueError, OSError):
        return None
    # the llm block and the floors checked as choose and whatif check them: a negative
    # floor_s made a "-993 ms" step, a NaN one a step without a floor, without a word
    llm = llm_part(doc, path)
    rows = doc.get("analysis") if llm is not None else None
    if not isinstance(rows, list) or not rows or any(
            not isinstance(r, dict) or r.get("seconds") for r in rows):
        return None
    floors: dict[str, float] = {}
    for name, floor in analysis_floors(doc, path):
        if floor is None:
            return None
        floors[name] = floors.get(name, 0.0) + floor
    step = sum(floors.values())
    # the analysis is the decode step's, or the prefill's under --phase prefill
    phases = {name: llm.get(key, {}).get("floor_s") for key, name in
              (("decode", "TPOT floor"), ("prefill", "TTFT floor"))}
    known = {n: v for n, v in phases.items() if isinstance(v, (int, float))}
    label = (min(known, key=lambda n: abs(known[n] - step)) if known else "step floor")
    return floors, label, step


def _floors(cmp, before: str, after: str):
    """(kernel FloorMoves, step FloorMove) when both runs are untimed llm documents and no
    matched kernel has a time; None otherwise (timed runs compare their seconds)."""
    if cmp.timed:
        return None
    b, a = _llm_floors(before), _llm_floors(after)
    if b is None or a is None:
        return None
    from ..model.compare import FloorMove, floor_moves

    name = b[1] if b[1] == a[1] else f"{b[1]} -> {a[1]}"
    return floor_moves(cmp, b[0], a[0]), FloorMove(f"step ({name})", b[2], a[2])


def _floor_table(moves, step):
    from rich.table import Table

    from ..units import fmt_seconds

    t = Table(title="Work floors (derived, not measured)", title_justify="left")
    for h in ("kernel", "floor before", "floor after", "speed-up"):
        t.add_column(h, justify="left" if h == "kernel" else "right")
    for m in (*moves, step):
        t.add_row(m.name, fmt_seconds(m.before_s), fmt_seconds(m.after_s),
                  "-" if m.speedup is None else f"{m.speedup:.2f}x")
    return t


def _table(cmp, fail_pct, floors=None):
    from rich.console import Group
    from rich.text import Text

    from ..model.compare import gate_notes
    from ..model.compare_trust import trust_notes
    from ..units import fmt_seconds

    parts: list = [_Fitted(lambda work: _matches_table(cmp, fail_pct, work),
                           lambda: _work_lines(cmp))]
    if cmp.speedup:
        parts.append(Text(f"matched total: {fmt_seconds(cmp.total_before_s)} -> "
                          f"{fmt_seconds(cmp.total_after_s)} ({cmp.speedup:.2f}x)"))
    for k in cmp.only_before:
        parts.append(Text(f"only in the first run: {k.name} (use --map OLD=NEW if renamed)",
                          style="dim"))
    for k in cmp.only_after:
        parts.append(Text(f"only in the second run: {k.name}", style="dim"))
    if floors is not None:
        parts.append(_floor_table(*floors))
        step = floors[1]
        parts.append(Text(f"{step.name}: {fmt_seconds(step.before_s)} -> "
                          f"{fmt_seconds(step.after_s)}"
                          + (f" ({step.speedup:.2f}x)" if step.speedup else "")
                          + "; no matched kernel has a time in both runs, so these are "
                          "the roofline's work floors (each file's FLOP and bytes on its "
                          "roof, no launches), not speed-ups seen"))
    elif cmp.matches and not cmp.timed:
        parts.append(Text("no matched kernel has a time in both runs (FLOP and bytes only, as "
                          "`rooflab llm --json` writes): no speed-up to show; `rooflab choose` "
                          "and `rooflab whatif` give their floors"))
    gate = gate_notes(cmp, fail_pct) if fail_pct is not None else trust_notes(cmp.matches)
    for n in (*cmp.notes, *gate):
        parts.append(Text(f"note: {n}", style="dim"))
    return Group(*parts)


class _Fitted:
    """The matches table with its work columns (FLOP before -> after, FLOP/s change) where
    they fit the width it is printed at; else without them, and the same figures on a line
    per kernel below it (the numbers that decide the gate are never folded)."""

    def __init__(self, table, lines):
        self.table, self.lines = table, lines

    def __rich_console__(self, console, options):
        from rich.measure import Measurement

        full = self.table(True)
        # measured unbounded: Measurement.get clamps to the width it is given
        wanted = Measurement.get(console, options.update(max_width=10_000), full).maximum
        if wanted <= options.max_width:
            yield full
            return
        yield self.table(False)
        yield from self.lines()


def _matches_table(cmp, fail_pct, work: bool):
    from rich.markup import escape
    from rich.table import Table

    from ..units import fmt_ai, fmt_seconds

    t = Table(title="Matched kernels (speed-up = before / after)", title_justify="left")
    for h in ("kernel", "before", "after", "speed-up", "change", "noise",
              *(("FLOP before -> after (work)", "FLOP/s change") if work else ()),
              "AI DRAM before -> after"):
        t.add_column(h, justify="left" if h == "kernel" else "right")
    regressed = set(id(m) for m in cmp.regressions(fail_pct)) if fail_pct is not None else ()
    for m in cmp.matches:
        ai_b, ai_a = m.ai_move()
        change = "-" if m.change_pct is None else f"{m.change_pct:+.1f} %"
        name = m.name if m.before.name == m.name else f"{m.before.name} -> {m.name}"
        t.add_row(escape(name), fmt_seconds(m.before.seconds), fmt_seconds(m.after.seconds),
                  "-" if m.speedup is None else f"{m.speedup:.2f}x",
                  f"[bold red]{change}[/]" if id(m) in regressed else change,
                  _noise_cell(m), *((_work_cell(m), _rate_cell(m)) if work else ()),
                  f"{fmt_ai(ai_b)} -> {fmt_ai(ai_a)}")
    return t


def _work_lines(cmp):
    from rich.text import Text

    for m in cmp.matches:
        if m.before.total_flop or m.after.total_flop:
            yield Text(f"work: {m.name}: FLOP {_work_cell(m)}, FLOP/s change {_rate_cell(m)}")


def _rate_cell(m) -> str:
    return "-" if m.rate_change_pct is None else f"{m.rate_change_pct:+.1f} %"


def _work_cell(m) -> str:
    """'2.6 TFLOP -> 1.09 TFLOP (-57.9 %)': the work each run did (a speed-up from fewer
    FLOP is not a faster kernel: the FLOP/s change beside it says how the rate moved)."""
    from ..units import si

    b, a = m.before.total_flop, m.after.total_flop
    if not (b or a):
        return "-"
    pct = m.work_change_pct
    return f"{si(b, 'FLOP')} -> {si(a, 'FLOP')}" + (f" ({pct:+.1f} %)" if pct is not None
                                                   else "")


def _noise_cell(m) -> str:
    """'within (p 0.41)' / 'outside (p 0.002)' from the U test of the runs' samples; '-'
    without samples, 'too few' when no outcome of so few could reach p < 0.05."""
    if m.noise is None:
        return "-"
    if m.within_noise is None:
        return "too few"
    if m.cannot_tell:
        return f"cannot tell (p {m.noise.p_value:.2g}; see notes)"
    where = "within" if m.within_noise else "outside"
    return f"{where} noise (p {m.noise.p_value:.2g})"


def _labelled(match):
    """The pair as the chart labels it: which point is before, which after, and the
    speed-up (both points of a kernel otherwise carried the same name)."""
    gain = f", {match.speedup:.2f}x" if match.speedup else ""
    return (match.before.with_(name=f"{match.before.name} (before)"),
            match.after.with_(name=f"{match.after.name} (after{gain})"))


def _write(path: str, cmp, data, on, files) -> None:
    from dataclasses import replace
    from pathlib import Path

    from ..files import write_json

    if Path(path).suffix.lower() == ".json":
        write_json(path, data)
        return
    from ..report.chart import plot_roofline, provenance_label, save_figure

    # the chart's notes are filtered by the starts of their sources' sentences
    from ..report.chart_points import ABOVE_ROOF_NOTE
    from .inputs import SHARED_NAMES_NOTE, load_inputs

    inputs = load_inputs(files, [on] if on else [], distinct=False)   # a run vs itself is fine
    # compare pairs the kernels by name across its files: shared names are its point, and
    # "rename the kernels in one file" would break the match (review s18 r5 F5)
    inputs = replace(inputs, notes=tuple(n for n in inputs.notes
                                         if not n.startswith(SHARED_NAMES_NOTE)))
    inputs.print_notes()   # of the chart's roof and kernels, as plot says them
    roof = inputs.roof
    pairs = [_labelled(m) for m in cmp.matches]
    kernels = [k for pair in pairs for k in pair]
    display = plot_roofline([roof], kernels, level="DRAM" if roof.find_memory("DRAM")
                            else None, arrows=pairs,
                            # a best-achieved roof named for what it is (18c F19)
                            title=f"before -> after on {provenance_label(roof)}")
    save_figure(display, path)
    # A point ringed above its roof is named, as plot names it: the legend's "check the
    # counts or the roof" had no name to check where the point was not labelled (F5).
    from .common import say

    for note in display.notes:
        if ABOVE_ROOF_NOTE in note:
            say("warning", note)
