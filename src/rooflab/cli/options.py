"""Options several verbs share, declared once (typer reads them from `Annotated` hints), and
the one command line of the profiler verbs (ncu, rocprof) built from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..ingest.profile_import import ProfileImport

# What --on takes, said once for every verb (review 14b F7): cli/inputs.py: resolve_on
# reads each of these. A verb adds words only where its --on truly differs (on_option).
ON_HELP = ("hardware name (rooflab specs list), a profile/roof JSON file, rocprof-compute's "
           "roofline.csv, or an .ncu-rep report (its recorded peaks)")
# What a verb's positional files may be, said once: ingest.kernelfile.load_kernels and
# load_profiles read each of these by its content.
FILES_HELP = ("kernel files (.json/.csv), analysis JSON, ncu CSV or .ncu-rep, rocprof CSV "
              "or folder, torch trace")


def on_option(more: str = ""):
    """The --on option, with `more` said after ON_HELP where a verb's --on differs (plot's
    repeats, compare's is for the chart only)."""
    return typer.Option("--on", help=ON_HELP + (f"; {more}" if more else ""))


On = Annotated[str | None, on_option()]
OnMany = Annotated[list[str] | None, on_option("repeat for several roofs")]
Files = Annotated[list[str], typer.Argument(help=FILES_HELP)]
Top = Annotated[int, typer.Option("--top", help="show the N longest kernels (0: all)")]
Level = Annotated[str | None, typer.Option(
    "--level", help="only this memory level: DRAM, L2, L1")]
JsonOut = Annotated[bool, typer.Option("--json", help="print the JSON vocabulary")]
Output = Annotated[str | None, typer.Option(
    "-o", "--output", help="write a chart (.png/.svg), .json or .csv")]


def profiler_verb(app, name: str, help: str, files_help: str,
                  load: Callable[[list[str]], ProfileImport]) -> None:
    """Add `rooflab NAME FILE... [--on] [--top] [--level] [--json] [-o]` to `app`: a
    profiler's files read by `load` (which imports its reader when called, so registering
    stays light), then the table, JSON or file every profiler verb gives (cli/profiled.py).
    """
    @app.command(name, help=help)
    def verb(
        files: list[str] = typer.Argument(..., help=files_help),
        on: On = None,
        top: Top = 20,
        level: Level = None,
        json_out: JsonOut = False,
        output: Output = None,
    ) -> None:
        from .profiled import check_output, report_import

        check_output(output, top, [*files, on])
        imp = load(files)
        raise typer.Exit(report_import(imp, on=on, top=top, json_out=json_out, output=output,
                                       level=level))
