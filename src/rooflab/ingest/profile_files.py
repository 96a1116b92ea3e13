"""Profilers' files among the files a verb is given, told by content (not only by name:
files_kind.file_kind):
Nsight Compute CSV pages and .ncu-rep reports, rocprof / rocprofv3 / rocprof-compute counter
CSVs and their folders, torch.profiler chrome traces (.json, .json.gz), likwid-perfctr CSV
(-O) and `perf stat` output; each read as `rooflab ncu`, `rocprof`, `torch`, `likwid` and
`perf` read them.
"""

from __future__ import annotations

from ..errors import InputError
from ..files_kind import file_kind  # below hardware, which asks it too; ingest imports it here
from .profile_import import ProfileImport

PROFILERS = ("ncu", "rocprof", "torch", "likwid", "perf")


def load_profiler_files(kind: str, paths: list[str], progress=None, device: str | None = None
                        ) -> ProfileImport:
    """One profiler's files, read together as its verb reads them (several = steps);
    `device`: the GPU --on names, which rocprof's reader takes (MI300's 128-B lines, the
    occupancy's limits), as `rooflab rocprof --on` gives it."""
    if kind == "ncu":
        from .ncu_files import load_ncu

        return load_ncu(paths, progress=progress)
    if kind == "rocprof":
        from .rocprof import load_rocprof

        return load_rocprof(paths, device=device)
    if kind == "torch":
        from .torch_trace import load_torch_trace

        return load_torch_trace(paths)
    if kind == "likwid":
        from .likwid import load_likwid

        return load_likwid(paths)
    if kind == "perf":
        from .perf_stat import load_perf_stat

        return load_perf_stat(paths)
    raise InputError(f"unknown profiler '{kind}'; use one of {', '.join(PROFILERS)}")


def load_profiles(paths: list[str], progress=None, label_traces: bool = False,
                  device: str | None = None) -> ProfileImport | None:
    """The profiler files among `paths`, joined into one import (None when there are none).

    ncu and rocprof files are read together, so several are steps as in `rooflab ncu a.csv
    b.csv`; each torch trace is read alone, keeping op names without a step label, so that
    `rooflab plot a.json b.json --trajectory` joins the same op across traces.
    label_traces: several traces' rows labelled by file where their ranks do not tell
    them apart (torch_trace_ranks.labelled_by_file), for a verb that lists rows (report)
    and not one that joins the same name across files (compare's chart, --trajectory).
    device: --on's GPU, for the rocprof files (load_profiler_files)."""
    kinds = {p: file_kind(p) for p in paths}
    imports = []
    for kind in PROFILERS:
        mine = [p for p in paths if kinds[p] == kind]
        groups = [[p] for p in mine] if kind == "torch" else [mine] if mine else []
        got = [load_profiler_files(kind, g, progress, device) for g in groups]
        if kind == "torch" and label_traces and len(got) > 1:
            got = _by_file(mine, got)
        imports += got
    return join_imports(imports) if imports else None


def _by_file(paths: list[str], imports: list[ProfileImport]) -> list[ProfileImport]:
    """The torch traces' imports with their kernels labelled by file where their ranks do
    not tell them apart (torch_trace_ranks.labelled_by_file)."""
    from dataclasses import replace

    from .torch_trace_ranks import labelled_by_file

    per_trace = labelled_by_file(paths, [imp.kernels for imp in imports])
    return [replace(imp, kernels=tuple(ks)) for imp, ks in zip(imports, per_trace, strict=True)]


def join_imports(imports: list[ProfileImport]) -> ProfileImport:
    """Several imports as one: kernels, skips and files in order, the first recorded peaks."""
    from dataclasses import replace

    if len(imports) == 1:
        return imports[0]
    first, *_ = imports

    def every(field: str) -> tuple:
        return tuple(x for imp in imports for x in getattr(imp, field))

    return replace(first, kernels=every("kernels"), skips=every("skips"),
                   failed=every("failed"), devices=tuple(dict.fromkeys(every("devices"))),
                   peaks=next((i.peaks for i in imports if i.peaks is not None), None),
                   files=every("files"), notes=tuple(dict.fromkeys(every("notes"))),
                   device_details=every("device_details"))
