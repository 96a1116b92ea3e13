"""What `rooflab bench` writes: -o FILE, checked before any work (a suffix bench writes,
not an input, a place that can be written), then written (a chart, the analysis JSON or
the table); and its --json documents on stdout."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

OUTPUT_SUFFIXES = (".png", ".svg", ".json", ".csv")


def output_suffix(path: str) -> str:
    """-o FILE's suffix, refused unless bench writes it."""
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise InputError(f"-o '{path}': use a file ending in {', '.join(OUTPUT_SUFFIXES)}")
    return suffix


def check_bench_output(path: str, inputs: list[str | None]) -> None:
    """-o FILE before any work: a suffix bench writes, not one of its inputs (--on's
    profile, --run's script: `bench --on me.json -o me.json` replaced the profile), a
    place that can be written."""
    from ..files import check_writable
    from .common import refuse_input_as_output

    output_suffix(path)
    refuse_input_as_output(path, [i for i in inputs if i])
    check_writable(path)


def write_output(path: str, roofs, kernels, analysis, what: str = "reference kernels"
                 ) -> None:
    """-o FILE: a chart (.png/.svg), the analysis JSON (.json) or the table (.csv)."""
    suffix = output_suffix(path)
    if suffix == ".json":
        from ..files import write_json
        from ..model.schema import analysis_to_dict

        write_json(path, analysis_to_dict(analysis))
    elif suffix == ".csv":
        from ..bench.table import rows_csv, zoo_rows
        from ..files import write_atomic

        write_atomic(path, rows_csv(zoo_rows(analysis)))
    else:
        from ..report.chart import plot_roofline, save_figure
        from ..report.chart_parts import roof_label

        # the title says on which machine (the roof that judges them), as probe's does
        display = plot_roofline(roofs, kernels,
                                title=f"{what} on {roof_label(roofs[0])}")
        save_figure(display, path)


def emit_document(doc: dict) -> None:
    """A --json document of bench's own (a list, one --kernel's result), with the schema
    version every rooflab document carries."""
    from ..model.schema import SCHEMA_VERSION
    from .common import emit_json

    emit_json({"schema_version": SCHEMA_VERSION, **doc})


def emit_analysis(analysis) -> None:
    """--json of placed kernels: the analysis document `rooflab report --json` gives."""
    from ..model.schema import analysis_to_dict
    from .common import emit_json

    emit_json(analysis_to_dict(analysis))
