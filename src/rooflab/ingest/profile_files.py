"""Profilers' files among the files a verb is given, told by content (not only by name):
Nsight Compute CSV pages and .ncu-rep reports, rocprof / rocprofv3 / rocprof-compute counter
CSVs and their folders, torch.profiler chrome traces (.json, .json.gz), likwid-perfctr CSV
(-O) and `perf stat` output; each read as `rooflab ncu`, `rocprof`, `torch`, `likwid` and
`perf` read them.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..errors import InputError
from .profile_import import ProfileImport

PROFILERS = ("ncu", "rocprof", "torch", "likwid", "perf")
# perf stat's events rooflab reads (ingest/perf_stat.py) and its text footer: a line naming
# one of them is perf's, not a kernel CSV's (whose first row is rooflab's column names)
_PERF_WORDS = re.compile(r"seconds time elapsed|duration_time|fp_arith_inst_retired|"
                         r"uncore_imc|cas_count|fp_ret_sse_avx_ops", re.IGNORECASE)
_SNIFF = 65536   # bytes read to tell a file's kind: a trace's deviceProperties come first


def file_kind(path: str) -> str:
    """'ncu', 'rocprof', 'torch', 'likwid', 'perf', or 'rooflab' (our JSON/CSV, and anything
    unknown, whose errors then say what is accepted), told by content: a rocprof results.csv,
    an ncu out.csv and a likwid or perf CSV share the suffix of our own CSV, a gzipped trace
    may have lost its name."""
    p = Path(path)
    if p.is_dir():   # a rocprof output folder, else read_text lists what is in it
        return "rocprof" if _rocprof_folder(p) else "rooflab"
    if path.lower().endswith(".ncu-rep"):
        return "ncu"
    try:
        with p.open("rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return "rooflab"   # read_text says why it cannot be read
    if head[:2] == b"\x1f\x8b":
        return "torch"     # gzip: tensorboard_trace_handler's *.pt.trace.json.gz
    if head.startswith(b"SQLite format 3"):
        return "rocprof"   # rocprofv3's rocpd database: its reader says to export CSV
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if text.lstrip()[:1] in ("{", "["):
        return "torch" if '"traceEvents"' in text else "rooflab"
    if '"Kernel Name"' in text or "Kernel Name," in text:
        return "ncu"
    if _rocprof_header(text):
        return "rocprof"
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith(("STRUCT,Info", "TABLE,Region ", "TABLE,Group ")):
        return "likwid"
    perf = _PERF_WORDS.search(text) and not first.lower().startswith("name")
    return "perf" if perf else "rooflab"


def _rocprof_folder(folder: Path) -> bool:
    """The folders `rooflab rocprof` takes: rocprof-compute's workload folder (pmc_perf.csv),
    rocprof v1's (results.csv), rocprofv3's (*_counter_collection.csv, in pass_N/ too)."""
    if (folder / "pmc_perf.csv").is_file() or (folder / "results.csv").is_file():
        return True
    # rocprofv3 writes OUT/HOST/PID_counter_collection.csv, with passes OUT/HOST/pass_N/...:
    # three levels, not a walk of whatever tree was given by mistake
    return any(next(folder.glob(f"{'*/' * depth}*_counter_collection.csv"), None) is not None
               for depth in range(4))


def _rocprof_header(text: str) -> bool:
    """A rocprof header (KernelName, Kernel_Name, ...) in the first lines, or one of the
    rocprof files its reader names and refuses (--stats summaries, roofline.csv)."""
    from ..hardware.rocprof_roofline import is_roofline_header
    from .rocprof import NAME_COLUMNS

    lines = text.splitlines()[:50]
    for i, row in enumerate(csv.reader(lines)):
        cells = {c.strip() for c in row}
        if cells & set(NAME_COLUMNS):
            return True
        if i == 0 and ({"Name", "Calls", "TotalDurationNs"} <= cells
                       or is_roofline_header(cells)):
            return True
    return False


def load_profiler_files(kind: str, paths: list[str], progress=None) -> ProfileImport:
    """One profiler's files, read together as its verb reads them (several = steps)."""
    if kind == "ncu":
        from .ncu_files import load_ncu

        return load_ncu(paths, progress=progress)
    if kind == "rocprof":
        from .rocprof import load_rocprof

        return load_rocprof(paths)
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


def load_profiles(paths: list[str], progress=None) -> ProfileImport | None:
    """The profiler files among `paths`, joined into one import (None when there are none).

    ncu and rocprof files are read together, so several are steps as in `rooflab ncu a.csv
    b.csv`; each torch trace is read alone, keeping op names without a step label, so that
    `rooflab plot a.json b.json --trajectory` joins the same op across traces."""
    kinds = {p: file_kind(p) for p in paths}
    imports = []
    for kind in PROFILERS:
        mine = [p for p in paths if kinds[p] == kind]
        groups = [[p] for p in mine] if kind == "torch" else [mine] if mine else []
        imports += [load_profiler_files(kind, g, progress) for g in groups]
    return join_imports(imports) if imports else None


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
