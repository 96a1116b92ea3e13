"""rooflab plot — draw kernels on one or more roofs and write a .png or .svg chart."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from ..errors import InputError, ParseError
from .options import FILES_HELP, PER_LAUNCH_HELP, ExcludeRe, KernelRe, OnMany

HELP = """Draw a roofline chart and write it as .png or .svg.

Roofs come from --on (catalog names, saved profiles, or an .ncu-rep's recorded
peaks); kernels from files (the JSON vocabulary, CSV, an analysis JSON written by
another verb, ncu CSV / .ncu-rep files, rocprof counter CSVs or their folders,
torch.profiler chrome traces).

A profile gives two roofs: measured (solid) and nominal (dashed). The first
roof judges the kernels: blue with a slope glyph left of its ridge, orange
with a flat glyph right of it (`rooflab docs plot`: reading the chart in grey).

  rooflab plot kernels.json --on t4 -o chart.png
  rooflab plot kernels.csv --on profile.json --on h100-sxm -o chart.svg
  rooflab plot s1.json s2.json s3.json --on me.json --trajectory -o steps.png
  rooflab plot --on h200 --on mi300x -o two-roofs.png
  rooflab plot kernels.json --on a100 --precision fp16,fp32 -o chart.png
  rooflab plot output.csv output?.csv --on l4 --trajectory -o steps.png
  rooflab plot --on profile.json --precision all -o every-ceiling.png
  rooflab plot out.ncu-rep --kernel sigma --per-launch -o launches.png

--kernel/--exclude draw only the kernels `rooflab ncu` would keep with them (any
input); --per-launch draws an ncu file's launches one point each.

A roof with more than 5 compute ceilings (catalog GPUs have up to 10) is drawn
with the ceilings the kernels are judged by plus its top float ceiling; the
output says which were left out. --precision all draws every one.

A chart of many kernels (an application's ncu export) labels the 20 longest;
every point is drawn and the output says how many went unlabelled (--labels N
to change, --labels 0 labels every one).

A kernel's marker area is proportional to its share of the measured time (4 to
20 pt across: every kernel under 4 % is the smallest; --size-by none draws all
alike); a thin grey line joins one kernel's points at its memory levels. With
several profiler files, shares are of each kernel's own file: where every file
holds one timed kernel (before/after, a --trajectory), each is 100 %, so all are
drawn alike and the legend says why.
--min-share 1 leaves out kernels under 1 % of the time, and says how many.

A CPU profile from `rooflab probe` carries the measured intensity sweep: its
points are drawn in grey, tracing the real roof, knee included (--no-sweep
leaves them out).
"""


def profile_sweep(spec: str) -> tuple[list[tuple[float, float]], str, str | None]:
    """The measured intensity sweep a --on profile carries, a note when it has none that
    can be drawn, and its precision. Catalog names and roof files have no sweep."""
    from ..files import load_json
    from ..hardware.resolve import looks_like_file
    from ..model.document_parts import profile_part

    if not looks_like_file(spec) or spec.lower().endswith((".ncu-rep", ".csv")):
        return [], "", None   # (a .csv: rocprof-compute's roofline.csv, no sweep)
    data = profile_part(load_json(spec))   # a profile, or the one demo --json carries
    extras = data.get("extras") if data is not None else None
    if not isinstance(extras, dict):
        return [], "", None
    if isinstance(extras.get("intensity_sweep"), dict):
        from ..hardware.profile import profile_from_dict
        from ..probe.cpu import sweep_points

        precision = extras["intensity_sweep"].get("precision")
        try:
            return (sweep_points(profile_from_dict(data, where=spec)), "",
                    str(precision) if precision else None)
        except (KeyError, TypeError, ValueError) as exc:
            raise ParseError(f"extras.intensity_sweep: malformed point ({exc}); rerun "
                             f"`rooflab probe -o FILE` or pass --no-sweep", path=spec) from None
    if "gpu" in extras:
        # The GPU probe sweeps working-set sizes at one intensity (cache plateaus), not
        # intensities, so it has no points for the roofline's x axis.
        return [], (f"{spec}: the GPU probe's sweep is over working-set size (bandwidth per "
                    f"cache level), not intensity; no sweep points drawn"), None
    return [], "", None


def parse_size_by(text: str) -> str:
    """--size-by: 'time' or 'none', any case."""
    from ..report.marker_size import SIZE_BY  # no chart module: `report` draws none

    got = text.strip().lower()
    if got not in SIZE_BY:
        raise InputError(f"--size-by {text}: use {' or '.join(SIZE_BY)} (time: marker area "
                         f"proportional to the kernel's share of the time; none: all alike)")
    return got


def parse_min_share(text: str | None) -> float | None:
    """--min-share PCT ('1', '1%', '0.5 %') as a fraction of the time (0.01), None when not
    given; a clear error for anything else."""
    if text is None:
        return None
    body = text.strip().removesuffix("%").strip()
    try:
        pct = float(body)
    except ValueError:
        pct = float("nan")
    if not 0 <= pct < 100:
        raise InputError(f"--min-share {text}: give a percent of the time in [0, 100), e.g. "
                         f"--min-share 1 (kernels under 1 % of the time are not drawn)")
    return pct / 100


def load_inputs(kernel_files: list[str], on: list[str], trajectory: bool = False,
                kernel: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
                per_launch: bool = False, said: list[str] | None = None):
    """(roofs, kernels) for the chart: cli/inputs.py's load_inputs, as report and whatif
    read them, with its notes printed on stderr (Inputs.print_notes) and the roof's origin
    said when no --on named it. --trajectory joins each step's longest kernel (several ncu
    files, or the analysis JSON `rooflab ncu a.csv b.csv -o steps.json` wrote), as
    `rooflab ncu -o steps.png` does; without steps, kernels of the same name are joined.
    kernel/exclude/per_launch: `rooflab ncu`'s --kernel/--exclude/--per-launch. said: a
    list the printed notes are added to (the verb's, to say nothing twice)."""
    from .inputs import load_inputs as read_inputs
    from .options import on_from_env

    # --trajectory joins the same op across torch traces by name: no file labels there
    inputs = read_inputs(kernel_files, on, kernel=kernel, exclude=exclude,
                         per_launch=per_launch, label_traces=not trajectory)
    if not on or on_from_env():   # a roof the command line does not show: say where from
        print(inputs.source, file=sys.stderr)
    inputs.print_notes()
    if said is not None:
        said.extend(inputs.notes)
    from .step_order import profiler_steps, warn_step_order

    # the steps' order is the command line's: say when a numbered series is out of order
    warn_step_order(kernel_files if trajectory else profiler_steps(kernel_files))
    kernels = list(inputs.kernels)
    if trajectory:
        from .profiled import trajectory_kernels

        kernels = trajectory_kernels(kernels)
    return list(inputs.roofs), kernels


def chart_dict(display, path: str | None, inputs_notes: Sequence[str] = (),
               level: str | None = None) -> dict:
    """The drawn data and the analysis, in the JSON vocabulary. inputs_notes: the input
    files' notes (rows and files a profiler's reader skipped, as `skipped: ...`), kept in
    "notes" as report --json keeps them (review s22 h2 F6: plot --json had none). level:
    --level's; "reading" then holds the reading (CARM at L1) and its analysis at that
    level, the numbers the points are labelled with ("analysis" keeps every level)."""
    from dataclasses import asdict

    from ..model.roof_schema import roof_to_dict
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict
    from ..report.chart_batch import chart_analysis
    from ..report.chart_words import above_roof, caveats, flagged
    from ..report.envelope_bound import analysis_json

    kernels = list(display.kernels)
    analysis = chart_analysis(display.roofs[0], kernels) if kernels else None
    # the image's F5 marks as fields (review 19c N8: only the `*` inside a label said it):
    # a ceiling the probe flagged, a point above its roof (ringed), the footnote's words
    return {"schema_version": SCHEMA_VERSION, "chart": path,
            "roofs": [roof_to_dict(r) for r in display.roofs],
            "kernels": [kernel_to_dict(k) for k in kernels],
            "analysis": analysis_json(analysis)["analysis"] if analysis else [],
            "drawn": {"lines": [{**asdict(x), "flagged": x.kind in ("compute", "memory")
                                 and x.ceiling is not None and flagged(x.ceiling)}
                                for x in display.lines],
                      "ridges": [asdict(x) for x in display.ridges],
                      "points": [{**asdict(x), "above_roof": above_roof(x)}
                                 for x in display.points],
                      "caveats": caveats(display),
                      "arrows": [asdict(x) for x in display.arrows],
                      "xlim": list(display.xlim), "ylim": list(display.ylim),
                      "hidden_ceilings": list(display.hidden),
                      "caps": [asdict(c) for c in display.caps],
                      # the lines through each kernel's per-level points
                      "joins": [asdict(j) for j in display.joins]},
            "notes": [*display.notes, *(n for n in inputs_notes if n not in display.notes)],
            **_reading_json(display, level)}


def _reading_json(display, level: str | None) -> dict:
    """{"reading": {level, model, text, analysis}} under --level, {} without."""
    from ..model.level_reading import reading_dict
    from ..report.envelope_bound import analysis_json

    said = reading_dict(level)
    if said is None or not display.roofs:
        return {}
    at = level_analysis(display.roofs[0], list(display.kernels), level)
    said = reading_dict(level, at) or said   # CARM: each point's binding ceiling (v2 F8)
    return {"reading": {**said, "analysis": analysis_json(at)["analysis"] if at else []}}


def register(app) -> None:
    """Add `rooflab plot`."""

    @app.command("plot", help=HELP)
    def plot(kernel_files: list[str] = typer.Argument(None, metavar="KERNELS",
                                                      help=FILES_HELP),
             on: OnMany = None,
             output: str | None = typer.Option(
                 None, "-o", "--output", help="chart file: .png or .svg (default "
                 "roofline.png; with --json, no chart unless -o is given)"),
             level: str | None = typer.Option(None, help="draw only this memory level "
                                                         "(default: every level, one marker "
                                                         "each)"),
             title: str | None = typer.Option(None, help="chart title"),
             trajectory: bool = typer.Option(False, help="join kernels with the same name "
                                                         "across the files, in order"),
             precision: str | None = typer.Option(
                 None, "--precision", help="compute ceilings to draw, comma-separated "
                 "precisions (fp16,fp32) or labels ('fp16 tensor'), or 'all' (default: all, "
                 "or a selection when a roof has more than 5)"),
             labels: int = typer.Option(
                 20, "--labels", metavar="N", help="label the N longest kernels (0: every "
                 "one); the others are drawn without a label"),
             size_by: str = typer.Option(
                 "time", "--size-by", metavar="time|none", help="marker area proportional to "
                 "each kernel's share of the measured time (time, default; of its own file's "
                 "time with several profiler files, so one timed kernel per file draws all "
                 "alike, as the legend says), or all alike (none)"),
             min_share: str | None = typer.Option(
                 None, "--min-share", metavar="PCT", help="leave out kernels under PCT % of "
                 "the measured time (e.g. 1; of its own file's time with several profiler "
                 "files); the output says how many"),
             size: str | None = typer.Option(
                 None, "--size", metavar="W,H|page|slide", help="chart size in inches, "
                 "e.g. 7,4.5, or a preset: page (7,4.5), slide (10,5.6); default 9,6. A "
                 "smaller chart is the 9x6 one scaled down, text included"),
             dpi: float | None = typer.Option(
                 None, "--dpi", help="pixels per inch of a .png (default 150; 300 for "
                 "print)"),
             zoom: bool = typer.Option(False, "--zoom", help="when the points fill under a "
                                       "quarter of the chart's decades, hug them (plus every "
                                       "ridge and compute ceiling, half a decade each side) "
                                       "instead of showing the whole roof"),
             no_sweep: bool = typer.Option(False, "--no-sweep", help="leave out a profile's "
                                                                     "measured intensity sweep"),
             json_out: bool = typer.Option(False, "--json", help="print the drawn data and "
                                                                  "analysis as JSON (and write "
                                                                  "the chart only with -o)"),
             kernel: KernelRe = None,
             exclude: ExcludeRe = None,
             per_launch: bool = typer.Option(False, "--per-launch", help=PER_LAUNCH_HELP),
             ) -> None:
        from ..files import check_writable
        from ..report.chart import SUFFIXES

        # --json alone prints to stdout only: the -o default would overwrite a roofline.png
        # in the folder without the user having asked for a file.
        if output is None and not json_out:
            output = "roofline.png"
        if output is not None:   # `-o newdir/` said "must be a .png or .svg file" (s38 N)
            from .common import refuse_directory

            refuse_directory("-o", output, "roofline.png")
        if output is not None and Path(output).suffix.lower() not in SUFFIXES:
            html = str(output).lower().endswith((".html", ".htm"))
            hint = ("; for an interactive HTML chart with the diagnosis, use `rooflab report "
                    "... -o report.html`") if html else ""
            raise InputError(f"-o {output}: the chart must be a .png or .svg file{hint}")
        if level is not None:
            from ..model.level_names import checked_level

            level = checked_level(level, "--level")   # 'dram', 'hbm3' -> DRAM; unknown refused
        if labels < 0:
            raise InputError(f"--labels {labels}: give how many kernels to label, 0 for "
                             f"every one")
        size_by = parse_size_by(size_by)
        share = parse_min_share(min_share)
        from ..report.chart_layout_size import parse_dpi, parse_size

        inches = parse_size(size) if size is not None else None
        dpi = parse_dpi(dpi)
        on = list(on or [])
        if output is not None:
            from .common import refuse_input_as_output

            refuse_input_as_output(output, [*(kernel_files or []), *on])
            check_writable(output)
        from ..report.frozen_heap import long_lived
        from .options import patterns

        said: list[str] = []
        # the kernels read are kept to the end: frozen out of the collector's passes, read
        # with it paused (20 000 kernels: its 0.9 s CPU -> 0.45 s; RESULTS.md session 37)
        with long_lived() as keep:
            roofs, kernels = keep(load_inputs, list(kernel_files or []), on, trajectory,
                                  patterns(kernel), patterns(exclude), per_launch, said)
            if roofs:   # the points are labelled on the first roof (level_analysis)
                from ..model.level_reading import refuse_carm

                refuse_carm(roofs[0], level)   # CARM on a roof without L1: as report refuses
            from ..report.chart import plot_roofline, save_figure

            sweep, notes, sweep_precision = [], [], None
            for spec in ([] if no_sweep else on):
                got, note, prec = profile_sweep(spec)
                notes += [note] if note else []
                if got and sweep:
                    notes.append(f"{spec}: only the first profile's intensity sweep is drawn")
                elif got:
                    sweep, sweep_precision = got, prec
            precisions = (None if precision is None
                          else [p for p in precision.split(",") if p.strip()])
            display = plot_roofline(roofs, kernels, level=level, trajectory=trajectory,
                                    title=title, sweep=sweep, precisions=precisions,
                                    sweep_precision=sweep_precision, labels=labels,
                                    size_by=size_by, min_share=share, size=inches, zoom=zoom)
            if output is not None:
                save_figure(display, output, **({"dpi": dpi} if dpi else {}))
            from .common import emit_json, say

            small = _small_text(size, inches, display)
            if small:
                say("warning", small)
            told = _analysis_notes(roofs, display, level)
            from ..model.threads_note import threads_said_once

            # the input's thread-count warning (it names the profile's rows) says analyze()'s
            # "ran on 1 thread" note already: one sentence, not two (review s18 r8 F5)
            for note in threads_said_once([*notes, *display.notes], said=said):
                # the analysis' own notes ("no L3 ceiling, so no L3 point") are `note:` here as
                # in likwid/perf/ncu: one message, one severity (review 15v F-o)
                say("note" if note in told else "warning", note)
            if json_out:
                emit_json(chart_dict(display, output, [*notes, *said], level))
            # with --json the line goes to stderr: stdout stays pure JSON, and a chart file is
            # never written without a word
            if output is None:
                return
            # stderr with or without --json: stdout holds data only (s22 r3 F7); the path shown
            # with its control characters escaped (r1 F7)
            from ..report.term_text import visible

            print(visible(wrote_line(output, roofs, kernels, display, min_share, len(sweep))),
                  file=sys.stderr)


def _small_text(size: str | None, inches: tuple[float, float] | None, display) -> str:
    """The warning for a --size whose labels print under LEGIBLE_PT, from the scale the
    chart was drawn at (display.scale_): a legend outside the axes widens the design
    before it is scaled to the width asked, so the text is smaller, and the chart shorter,
    than the asked size alone says (review 19c N3: 3.5,2.6 gave 3.5 x 1.77 in at 2.1 pt,
    and `page` 3.6 pt with no warning). '' when the labels are legible."""
    from ..report.chart_layout_size import LEGIBLE_PT, printed_pt

    if inches is None or display.size_ is None:
        return ""
    pt = printed_pt(display.scale_)
    if pt >= LEGIBLE_PT:
        return ""
    w, h = display.size_
    shorter = (f"; a legend outside the axes widened the design, so it prints {w:g} x "
               f"{h:.2f} in, not {inches[1]:g} in high" if h < inches[1] * 0.99 else "")
    return (f"--size {size}: the chart is the 9x6 in one scaled down, so its labels print at "
            f"{pt:.1f} pt (under {LEGIBLE_PT:g} pt is hard to read){shorter}; a wider --size "
            f"prints them larger")


def _analysis_notes(roofs, display, level: str | None = None) -> set[str]:
    """The notes the analysis of the drawn kernels gives (what the profiler verbs print
    as `note:`), with --level those of the level's reading too (the CARM note); empty
    when the chart has no notes, so a clean chart costs no analysis."""
    if not display.notes or not display.kernels:
        return set()
    from ..report.chart_batch import chart_analysis

    # the chart's own joint analysis where it made one (100 000 kernels: as long again)
    told = set(chart_analysis(roofs[0], display.kernels).notes)
    at = level_analysis(roofs[0], display.kernels, level)
    return told | set(at.notes) if at is not None else told


def level_analysis(roof, kernels, level: str | None):
    """The analysis `--level` labels the points by (the kernels with bytes there, L1 read
    as CARM: model/level_carm), None without --level or without such a kernel."""
    from ..model.analysis import analyze
    from ..model.level_carm import is_carm

    asked = [k for k in kernels if level is not None and level in k.bytes]
    return analyze(roof, asked, levels=[level], carm=is_carm(level)) if asked else None


def wrote_line(output: str, roofs, kernels, display, min_share: str | None,
               sweep_points: int) -> str:
    """'wrote a.png: 1 roof(s), 1 of 2 kernels (1 under --min-share 1 %), 3 point(s)': the
    kernels counted as drawn (a marker on the chart), out of those read, with why the rest
    are not (review 15v F-o: '2 kernel(s)' after --min-share left one out)."""
    given = len({id(k) for k in kernels})
    drawn = len({p.kernel_index for p in display.points})
    kept = len(display.kernels)
    why = []
    if given > kept:
        share = parse_min_share(min_share)
        why.append(f"{given - kept} under --min-share {100 * (share or 0):g} %")
    if kept > drawn:
        why.append(f"{kept - drawn} with no point on the roof: see the notes")
    counted = (f"{given} kernel(s)" if drawn == given
               else f"{drawn} of {given} kernel{'' if given == 1 else 's'}")
    counted += f" ({'; '.join(why)})" if why else ""
    extra = f", {sweep_points} sweep point(s)" if sweep_points else ""
    return (f"wrote {output}: {len(roofs)} roof(s), {counted}, {len(display.points)} "
            f"point(s){extra}")
