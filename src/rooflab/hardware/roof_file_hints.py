"""What a file given as a roof (--on FILE, --among, --hardware) is instead, when it is no
roof: a kernel file belongs in the verb's positional arguments, a profiler's output goes to
its own verb. Said in the error, so the user does not read 'not a roofline.csv' as 'fix the
roofline.csv'."""

from __future__ import annotations

from pathlib import Path

from ..files import file_kind

ROOF_IS = ("a roof is a catalog name (`rooflab specs list`), a profile .json (`rooflab probe "
           "-o me.json`) or rocprof-compute's roofline.csv")
_PROFILERS = {"ncu": "an Nsight Compute", "rocprof": "a rocprof", "likwid": "a likwid",
              "perf": "a perf stat", "torch": "a PyTorch profiler trace"}
# a kernel CSV's header: a name and a count (ingest/kernelfile_csv.py); not 'seconds' alone,
# which choose's ranking CSV (rank,name,seconds) has too
_KERNEL_COUNTS = frozenset({"flop", "bytes", "gflops"})


def not_a_roof(path: str, data: object = None) -> str | None:
    """'it is a kernel file: ...', to follow the caller's 'not a roof file', or None when
    the file is none of those. data: the parsed JSON when the caller has it (a CSV is
    sniffed from its header)."""
    kind = file_kind(path)
    if kind in _PROFILERS:
        return (f"it is {_PROFILERS[kind]} file; put its kernels on a roof with "
                f"`rooflab {kind} FILE --on h100`; {ROOF_IS}")
    if _kernel_json(data) or (data is None and _kernel_csv(path)):
        return ("it is a kernel file, and kernel files are the verb's positional arguments "
                f"(`rooflab report FILE --on h100`); {ROOF_IS}")
    return None


def _kernel_json(data: object) -> bool:
    """A kernel list, bare or under 'kernels' (an analysis JSON without its roof)."""
    items = data.get("kernels") if isinstance(data, dict) else data
    return isinstance(items, list) and bool(items) and \
        all(isinstance(k, dict) and "name" in k for k in items)


def _kernel_csv(path: str) -> bool:
    try:
        with Path(path).open(encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return False
    cells = {c.strip().strip('"').lower() for c in first.split(",")}
    return "name" in cells and bool(cells & _KERNEL_COUNTS)
