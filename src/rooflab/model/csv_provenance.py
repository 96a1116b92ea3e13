"""The analysis CSVs' provenance columns (`rooflab ncu/torch/rocprof/bench -o x.csv`):
where each kernel's FLOP, bytes and seconds came from, and the roof its percent_of_roof and
bound were judged on. Without them a CSV could not tell nominal from measured ceilings, and
read back (`rooflab report x.csv`) an ncu export's counted FLOP and bytes became "given"
(review s22 r4 F6). One copy for the writers (cli/profiled.py, bench/table.py) and the
reader (ingest/kernelfile_csv.py). Pure.
"""

from __future__ import annotations

# the kernel's own words, read back into Kernel.provenance
KERNEL_PROVENANCE_COLUMNS = ("flop_provenance", "bytes_provenance", "seconds_provenance")
# the roof judged on: a verdict of that file, dropped on reading (the new roof judges again)
ROOF_COLUMNS = ("roof", "roof_kind")
PROVENANCE_COLUMNS = KERNEL_PROVENANCE_COLUMNS + ROOF_COLUMNS


def provenance_cells(k, roof) -> dict:
    """The PROVENANCE_COLUMNS of a kernel's rows: a word only where the number is there
    (no FLOP, no flop_provenance; untimed, no seconds_provenance). roof_kind as the
    JSON's roof.kind says it (judged_kind: one die of a package or a clock-scaled catalog
    roof judges on derived figures)."""
    from .roof_schema import judged_kind

    return {"flop_provenance": k.provenance.get("flop") if k.flop else None,
            "bytes_provenance": k.provenance.get("bytes") if k.bytes else None,
            "seconds_provenance": (k.provenance.get("seconds") if k.seconds is not None
                                   else None),
            "roof": roof.name, "roof_kind": judged_kind(roof)}
