"""rooflab compare — two runs matched by kernel name: speed-ups, and a gate for CI."""

from __future__ import annotations

import math
import sys
from typing import Annotated

import typer

from ..errors import InputError
from ..name_list import named
from .compare_table import compare_table, table_notes, untimed_words
from .exit_codes import EXIT_REGRESSION
from .finite_options import as_typed
from .options import FILES_HELP, on_option

# compare's --on judges nothing: it is the roof the -o chart draws the moves on
OnChart = Annotated[str | None, on_option("the roof of the -o chart (else the files' own)")]

HELP = """Compare two runs (before/after an optimisation, or two machines).

Kernels are matched by name (entries of the same name in one run are added up, and a
note says so); --map OLD=NEW matches a renamed kernel (one kernel a run under two names
is matched for the table; under --fail-if-slower it is an error (exit 2) unless --map
pairs it; a first-run kernel named NEW then matches nothing by name, and two OLDs onto
one NEW are refused). Prints the speed-up of each matched kernel (before time / after
time, each the total over all its calls: profile the same number of iterations in both
runs; when the call counts differ a note gives the per-call speed-up) and exits 1 when
any matched kernel got slower by more than --fail-if-slower PCT outside the timing
noise, or the whole run did (the kernels timed in both runs plus those in one run only:
new, gone, renamed, split), so it can gate CI (exit 2 is a usage error, 70 a bug in
rooflab; a matched kernel timed in one run only is not gated, and a warning names it and
the kernels in one run only). Noise: where both runs kept the timing samples (`rooflab
bench`, rooflab.measure, profiler launches), a two-sided Mann-Whitney U test (as Google
benchmark's compare.py) must find the change at p < 0.05, else the table says "within
noise" and the gate lets it pass; with 9 or more samples a side, "cannot tell" where a
run is flagged noisy (load between runs shifts a whole run), not gated either; with
fewer than 9 a side ("too few"), without samples ("-"), or where summed entries or
launches of other shapes make the samples not describe the total ("not testable"), the
change is gated as measured and a note says why. A change of exactly PCT passes. Kernels
in one run only are listed with their times beside the whole-run totals, and gated in
the whole run only. A what-if document (`rooflab whatif -o`) as a run is a prediction:
the table shows its range, and --fail-if-slower refuses it. Two untimed `rooflab llm
--json` files (fp16 vs int4, one device vs another), or two `rooflab train --json`
steps, have no seconds to compare: their kernels' work floors and the step's (TPOT or
TTFT floor; a train step's floor, with its tokens/s, MFU and memory below the table) are
compared instead, labelled as derived floors, never gated. -o arrows.png draws each
kernel's move on the roof (needs --on or a roof in the files).

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
                                             help="exit 1 if a matched kernel, or the "
                                                  "whole run, is slower by more than PCT "
                                                  "percent, outside the timing noise where "
                                                  "samples tell"),
        on: OnChart = None,
        output: str = typer.Option(None, "-o", "--output", help="arrows chart .png/.svg, "
                                                                 "or .json"),
        json_out: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
    ) -> None:
        from ..model.compare import compare_kernels, comparison_to_dict, parse_rename
        from .common import (
            check_output,
            emit_json,
            refuse_input_as_output,
            say,
            wrote,
        )

        _check_gate(fail_if_slower)
        check_output(output, (".json", ".png", ".svg"))
        refuse_input_as_output(output, [before, after, *([on] if on else [])])
        if on and not _charted(output):
            _check_on(on)
        k_before = _kernels(before, (before, after))
        k_after = _kernels(after, (before, after))
        cmp = compare_kernels(k_before, k_after, parse_rename(rename))
        if not cmp.matches:
            # Nothing to compare: a CI gate (--fail-if-slower) would pass on nothing.
            first, second = ([k.name for k in ks] for ks in (cmp.only_before, cmp.only_after))
            raise InputError(f"no kernel of {before} has the name of one in {after} "
                             f"(first run: {_names(first)}; second run: {_names(second)}); "
                             f"pair renamed kernels with --map OLD=NEW")
        if fail_if_slower is not None and not rename:
            _refuse_guessed_pair(cmp, before, after)
        if fail_if_slower is not None and not cmp.timed:
            # a gate over kernels without a time on both sides would pass on nothing
            untimed = ", ".join(f"{m.name} ({_untimed_sides(m)})" for m in cmp.matches[:3])
            raise InputError(f"--fail-if-slower: no matched kernel has a time in both runs "
                             f"(no time: {untimed}); give both runs' seconds")
        if fail_if_slower is not None:
            _refuse_predicted(cmp, before, after)
        data = comparison_to_dict(cmp, fail_if_slower)
        from .compare_floors import comm_labelled, step_floors

        floors = step_floors(cmp, before, after)
        if floors is not None:
            from ..model.compare_floors import floors_to_dict

            data["floors"] = floors_to_dict(*floors)
        from .compare_train import train_lines, train_move

        if (move := train_move(before, after)) is not None:
            data["train"] = move   # the step's floor, MFU and memory, from `train`
        if (why := untimed_words(cmp, floors)) is not None:
            # the terminal's explanation of the null speed-ups, in the document too
            data["notes"].append(why)
        if output:
            _write(output, cmp, data, on, [before, after])
        if json_out:
            emit_json(data)
            if output:
                wrote(output)   # stderr: stdout holds only the JSON
        else:
            from .common import wide_console

            wide_console().print(compare_table(cmp, fail_if_slower,
                                               comm_labelled(floors, before, after)))
            if move is not None:
                print("\n".join(train_lines(move)))
            for note in table_notes(cmp, fail_if_slower):
                say("note", note)
            if output:
                wrote(output)
        if fail_if_slower is not None:
            _gate(cmp, fail_if_slower)


def _gate(cmp, pct: float) -> None:
    """Exit 1 when a matched kernel, or the whole run (every timed kernel, matched or not:
    time moved into a new, renamed or split kernel; s21 r7 F3), got slower by more than
    PCT; the kernels it cannot compare one to one are a `warning:` either way."""
    from ..model.compare_gate import (
        membership,
        membership_warning,
        run_regressed,
        run_words,
    )
    from .common import warn

    if (words := membership_warning(cmp, pct)) is not None:
        warn(words)
    slower = cmp.regressions(pct)
    if slower:
        # 843 failures were one 14 kB line (review s23 h2 F4): the first ten, then a count
        names = named((m.name for m in slower), where="`--json` lists every match")
        print(f"slower by more than {pct:g} %: {names}", file=sys.stderr)
    whole = run_regressed(cmp, pct)
    # with every timed kernel matched, a slower whole run is its slower kernels, named above
    if whole and (membership(cmp) or not slower):
        print(f"slower by more than {pct:g} %: the whole run, {run_words(cmp)}",
              file=sys.stderr)
    if slower or whole:
        raise typer.Exit(EXIT_REGRESSION)


def _check_gate(pct: float | None) -> None:
    # NaN compares false with every change, so `--fail-if-slower nan` passed every run (and
    # its JSON could not be written); inf can never fail either: neither is a gate.
    if pct is not None and not (math.isfinite(pct) and pct >= 0):
        raise InputError(f"--fail-if-slower takes a finite percentage >= 0 (e.g. 5); "
                         f"got {as_typed('--fail-if-slower', pct)}")


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


def _refuse_predicted(cmp, before: str, after: str) -> None:
    """A what-if document's times are rooflab's prediction (provenance derived), at one
    end of a range whatif itself calls one of two: gating on them called a predicted
    move to a slower GPU a regression (exit 1) as if measured (review s19 r5 F3). The gate
    judges measurements only."""
    from ..model.compare_notes import predicted

    for path, side in ((before, "before"), (after, "after")):
        names = [m.name for m in cmp.timed if predicted(getattr(m, side))]
        if names:
            raise InputError(f"--fail-if-slower: {path}'s times are a what-if prediction "
                             f"(provenance derived: {_names(names)}), not measured; "
                             f"the gate judges measured runs: compare without "
                             f"--fail-if-slower to see the predicted change")


def _untimed_sides(m) -> str:
    """Which run lacks the kernel's time ('before', 'after' or both), for the error of a
    gate with nothing to gate (it said 'before' whichever side it was)."""
    return " and ".join(side for side, k in (("before", m.before), ("after", m.after))
                        if not k.seconds)


def _names(names, limit: int = 3) -> str:
    """The first `limit` names, and how many in all."""
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more if names else "none"


def _kernels(path: str, pair: tuple[str, str]):
    # any kernel file: ours, an analysis JSON, or a profiler's (ncu, rocprof, torch trace)
    from ..ingest.kernelfile import load_kernels

    if path == "-":
        # `rooflab ncu ... --json | rooflab compare base.json -` said "-: file not found"
        raise InputError("-: a run is read from a file, not from stdin; save it first, "
                         "e.g. `rooflab ncu run.csv --json > run.json`, and pass run.json")
    from ..errors import RooflabError

    try:
        return load_kernels(path)
    except RooflabError:
        if not all(_machine_file(p) for p in pair):
            raise   # one side a profile: its own error says pass it as --on
        # two machines' profiles: the user wants their roofs side by side
        raise InputError(f"{path}: this is a machine profile or roof, not a list of "
                         f"kernels: to compare two machines' roofs run "
                         f"`rooflab specs compare {' '.join(pair)}`; to draw runs on it, "
                         f"pass it as the roof, e.g. `--on {path}`") from None


def _machine_file(path: str) -> bool:
    """Whether the file is a machine profile or roof (its document kind), the files
    `rooflab specs compare` takes."""
    from ..errors import RooflabError
    from ..files import load_json
    from ..model.document_parts import document_kind

    if path == "-":
        return False   # standard input is not read here (_kernels refuses it)
    try:
        return document_kind(load_json(path)) in ("profile", "roof")
    except (RooflabError, OSError, ValueError):
        return False


def _labelled(match):
    """The pair as the chart labels it: which point is before, which after, and the
    speed-up (both points of a kernel otherwise carried the same name); a speed-up the
    table calls within the noise or cannot tell says so (review s19 r5 F8)."""
    from ..units import fmt_times

    gain = f", {fmt_times(match.speedup)}" if match.speedup else ""
    if gain and match.cannot_tell:
        gain += ", cannot tell"
    elif gain and match.within_noise:
        gain += ", within noise"
    elif gain and match.predicted:
        gain += ", predicted"
    from ..report.chart_precisions import PLAIN_NAME

    # the kernel's own name kept in meta: the chart's notes name kernels, not points
    before, after = match.before, match.after
    return (before.with_(name=f"{before.name} (before)",
                         meta={**before.meta, PLAIN_NAME: before.name}),
            after.with_(name=f"{after.name} (after{gain})",
                        meta={**after.meta, PLAIN_NAME: after.name}))


def _own_roofs(files) -> list:
    """Each run's own roof (the first a rooflab JSON file carries), None where it carries
    none; a what-if document's first run is named by its efficiency basis (the roof the
    measured run was judged on), as a str."""
    from ..files import load_json
    from ..hardware.resolve import embedded_roofs

    out: list = []
    for path in files:
        if not path.lower().endswith(".json"):
            out.append(None)
            continue
        data = load_json(path)
        found = embedded_roofs(data, path)
        out.append(found[0] if found else None)
        basis = data.get("efficiency_basis") if isinstance(data, dict) else None
        if (path == files[1] and out[0] is None and isinstance(basis, dict)
                and isinstance(basis.get("name"), str)):
            out[0] = basis["name"]
    return out


def _name(roof) -> str:
    return roof if isinstance(roof, str) else roof.name


def _charted(output: str | None) -> bool:
    """Whether -o is a chart, which reads --on as its roof (load_inputs)."""
    return bool(output) and not output.lower().endswith(".json")


def _check_on(on: str) -> None:
    """--on with no chart to draw still names a roof that must exist: `compare a.csv b.csv
    --on h2000` printed the comparison and exit 0, where every other verb says "unknown
    hardware 'h2000'; did you mean ..." (s33 C)."""
    from ..ingest.profile_checks import split_boost
    from ..ingest.profile_import import roof_for_on
    from .options import say_name_note_now

    roof_for_on(split_boost(on)[0])
    say_name_note_now(on)     # which device a family name chose, before the tables


def _write(path: str, cmp, data, on, files) -> None:
    from dataclasses import replace
    from pathlib import Path

    from ..files import write_json

    if Path(path).suffix.lower() == ".json":
        write_json(path, data)
        return
    from ..report.chart import plot_roofline, save_figure

    # the chart's notes are filtered by the starts of their sources' sentences
    from ..report.chart_points import ABOVE_ROOF_NOTE
    from ..report.chart_words import provenance_label
    from .common import say
    from .inputs import SHARED_NAMES_NOTE, load_inputs

    inputs = load_inputs(files, [on] if on else [], distinct=False)   # a run vs itself is fine
    # compare pairs the kernels by name across its files: shared names are its point, and
    # "rename the kernels in one file" would break the match (review s18 r5 F5)
    inputs = replace(inputs, notes=tuple(n for n in inputs.notes
                                         if not n.startswith(SHARED_NAMES_NOTE)))
    inputs.print_notes()   # of the chart's roof and kernels, as plot says them
    roof = inputs.roof
    # two machines: each run's points on its own roof where both files carry one (the
    # first run's roof grey, as whatif draws a move to other hardware); else the runs
    # whose own roof is not the one drawn are named (review s19 r5 F6)
    own = _own_roofs(files)
    before_roof, title = None, f"before -> after on {provenance_label(roof)}"
    if (not on and not any(isinstance(r, str) or r is None for r in own)
            and own[0].name != own[1].name):
        before_roof, roof = own[0], own[1]
        title = (f"before on {provenance_label(before_roof)} -> after on "
                 f"{provenance_label(roof)}")
    other = [(side, _name(r)) for side, r in zip(("first", "second"), own, strict=True)
             if r is not None and _name(r) != roof.name and before_roof is None]
    if other:
        words = ", ".join(f"the {side} run's {name}" for side, name in other)
        title += f" ({words} not drawn)"
        say("note", f"the runs carry other roofs than the one drawn ({words}): both runs "
                    f"are drawn on {roof.name}, so a point of a run not drawn on its own "
                    f"roof may sit above this one without any counting error")
    pairs = [_labelled(m) for m in cmp.matches]
    kernels = [k for pair in pairs for k in pair]
    roofs = [roof] + ([before_roof] if before_roof is not None else [])
    display = plot_roofline(roofs, kernels, level="DRAM" if roof.find_memory("DRAM")
                            else None, arrows=pairs, before_roof=before_roof,
                            # a best-achieved roof named for what it is (18c F19)
                            title=title)
    save_figure(display, path)
    # A point ringed above its roof is named, as plot names it: the legend's "check the
    # counts or the roof" had no name to check where the point was not labelled (F5).
    for note in display.notes:
        if ABOVE_ROOF_NOTE in note:
            say("warning", note)
