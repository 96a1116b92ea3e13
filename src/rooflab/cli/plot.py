"""rooflab plot — draw kernels on one or more roofs and write a .png or .svg chart."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError, ParseError

HELP = """Draw a roofline chart and write it as .png or .svg.

Roofs come from --on (catalog names or saved profiles); kernels from files
(the JSON vocabulary, CSV, or an analysis JSON written by another verb).

A profile gives two roofs: measured (solid) and nominal (dashed). The first
roof judges the kernels: indigo left of its ridge, amber right of it.

  rooflab plot kernels.json --on t4 -o chart.png
  rooflab plot kernels.csv --on profile.json --on h100-sxm -o chart.svg
  rooflab plot s1.json s2.json s3.json --on profile.json --trajectory -o steps.png
  rooflab plot --on h200 --on mi300x -o two-roofs.png
"""

def load_inputs(kernel_files: list[str], on: list[str]):
    """Roofs and kernels for the chart; without --on, a roof found in a kernel file."""
    from ..hardware.resolve import load_roofs, roofs_from_file
    from ..ingest.kernelfile import load_kernels

    kernels = [k for path in kernel_files for k in load_kernels(path)]
    roofs = [r for spec in on for r in load_roofs(spec)]
    if not roofs:
        for path in kernel_files:
            if path.lower().endswith(".json"):
                try:
                    roofs.extend(roofs_from_file(path))
                except ParseError:   # a plain kernel list: no roof inside
                    continue
    if not roofs:
        raise InputError("no roof to draw against; add --on HARDWARE (see `rooflab specs "
                         "list`) or --on PROFILE.json (from `rooflab probe -o`)")
    return roofs, kernels


def chart_dict(display, path: str | None) -> dict:
    """The drawn data and the analysis, in the JSON vocabulary."""
    from dataclasses import asdict

    from ..model.analysis import analyze
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict, point_to_dict, roof_to_dict

    kernels = list(display.kernels)
    analysis = analyze(display.roofs[0], kernels) if kernels else None
    return {"schema_version": SCHEMA_VERSION, "chart": path,
            "roofs": [roof_to_dict(r) for r in display.roofs],
            "kernels": [kernel_to_dict(k) for k in kernels],
            "analysis": [point_to_dict(p) for p in analysis.points] if analysis else [],
            "drawn": {"lines": [asdict(x) for x in display.lines],
                      "ridges": [asdict(x) for x in display.ridges],
                      "points": [asdict(x) for x in display.points],
                      "arrows": [asdict(x) for x in display.arrows],
                      "xlim": list(display.xlim), "ylim": list(display.ylim)},
            "notes": list(display.notes)}


def register(app) -> None:
    """Add `rooflab plot`."""

    @app.command("plot", help=HELP)
    def plot(kernel_files: list[str] = typer.Argument(None, metavar="KERNELS",
                                                      help="kernel files (.json or .csv)"),
             on: list[str] = typer.Option([], "--on", help="HARDWARE or PROFILE.json; "
                                                           "repeat for several roofs"),
             output: str = typer.Option("roofline.png", "-o", "--output",
                                        help="chart file: .png or .svg"),
             level: str | None = typer.Option(None, help="draw only this memory level "
                                                         "(default: every level, one marker "
                                                         "each)"),
             title: str | None = typer.Option(None, help="chart title"),
             trajectory: bool = typer.Option(False, help="join kernels with the same name "
                                                         "across the files, in order"),
             json_out: bool = typer.Option(False, "--json", help="also print the drawn data "
                                                                  "and analysis as JSON")) -> None:
        from ..report.chart import SUFFIXES

        if Path(output).suffix.lower() not in SUFFIXES:
            raise InputError(f"-o {output}: the chart must be a .png or .svg file")
        roofs, kernels = load_inputs(list(kernel_files or []), list(on))
        from ..report.chart import plot_roofline, save_figure

        display = plot_roofline(roofs, kernels, level=level, trajectory=trajectory, title=title)
        save_figure(display, output)
        from .common import emit_json, warn

        for note in display.notes:
            warn(note)
        if json_out:
            emit_json(chart_dict(display, output))
        else:
            print(f"wrote {output}: {len(roofs)} roof(s), {len(kernels)} kernel(s), "
                  f"{len(display.points)} point(s)")
