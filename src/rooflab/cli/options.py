"""Options several verbs share, declared once (typer reads them from `Annotated` hints)."""

from __future__ import annotations

from typing import Annotated

import typer

On = Annotated[str | None, typer.Option(
    "--on", help="hardware name (rooflab specs list), a profile/roof JSON file, or an "
    ".ncu-rep report (its recorded peaks)")]
Top = Annotated[int, typer.Option("--top", help="show the N longest kernels (0: all)")]
Level = Annotated[str | None, typer.Option(
    "--level", help="only this memory level: DRAM, L2, L1")]
JsonOut = Annotated[bool, typer.Option("--json", help="print the JSON vocabulary")]
Output = Annotated[str | None, typer.Option(
    "-o", "--output", help="write a chart (.png/.svg), .json or .csv")]
