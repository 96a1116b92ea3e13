"""rocprofv3 pass files grouped by run: which files hold the counters of one process.

rocprofv3 collects one `pmc:` line per pass and writes each to its own folder, `pass_1/`,
`pass_2/`, ... (rocprofiler-sdk docs; some builds `pmc_1/`), running the app once per
pass, each time as a new process, whose id names the file (`<pid>_counter_collection.csv`).
So the FLOP and the byte counters of one dispatch can sit in two files, to be joined by
dispatch; and Dispatch_Id restarts at 1 in every process, so two processes' files (two MPI
ranks, two runs into one folder) must never be joined (review r9 F1: rank B's FLOP over
rank A's bytes, AI 12 for two kernels of AI 1.33).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import ParseError

_PASS_DIR = re.compile(r"^(?:pass|pmc)_\d+$")
_PID = re.compile(r"^(\d+)_")


def _pid(path: str) -> str | None:
    hit = _PID.match(Path(path).name)
    return hit.group(1) if hit else None


def runs(paths: list[str]) -> list[tuple[list[str], str | None]]:
    """Files grouped by run, each with its process label ('pid 100', or None): the files
    of sibling pass folders form one run when each folder holds one file (one process);
    with several files a folder, the files of one process id form a run, one per folder;
    a pairing that cannot be told is refused. Every other file is a run of its own."""
    order: list[str | Path] = []                   # a file, or the root of pass folders
    passes: dict[Path, dict[Path, list[str]]] = {}  # root -> pass folder -> its files
    for path in paths:
        parent = Path(path).parent
        if _PASS_DIR.match(parent.name):
            if parent.parent not in passes:
                order.append(parent.parent)
            passes.setdefault(parent.parent, {}).setdefault(parent, []).append(path)
        else:
            order.append(path)
    out: list[tuple[list[str], str | None]] = []
    for item in order:
        if isinstance(item, str):
            out.append(([item], None))
        else:
            out += _by_process(passes[item])
    return out


def _by_process(folders: dict[Path, list[str]]) -> list[tuple[list[str], str | None]]:
    """The runs of one root's pass folders (see runs)."""
    if len(folders) == 1:   # one pass: nothing to join; each file (process) a run
        files = next(iter(folders.values()))
        return [([f], _label(f) if len(files) > 1 else None) for f in files]
    if all(len(files) == 1 for files in folders.values()):
        return [([files[0] for files in folders.values()], None)]
    by_pid: dict[str, list[str]] = {}
    for files in folders.values():
        for f in files:
            by_pid.setdefault(_pid(f) or f, []).append(f)
    if all(len(run) == len(folders) and len({Path(f).parent for f in run}) == len(run)
           for run in by_pid.values()):
        return [(run, f"pid {pid}") for pid, run in by_pid.items()]
    raise ParseError(_ambiguous(folders), path=str(next(iter(folders)).parent))


def _label(path: str) -> str | None:
    pid = _pid(path)
    return f"pid {pid}" if pid else None


def _ambiguous(folders: dict[Path, list[str]]) -> str:
    held = "; ".join(f"{d.name}/ holds {len(fs)} ("
                     + ", ".join(Path(f).name for f in fs[:3])
                     + (", ..." if len(fs) > 3 else "") + ")"
                     for d, fs in folders.items())
    dirs = list(folders)
    first = [folders[dirs[0]][0], *(str(d / "PID_counter_collection.csv") for d in dirs[1:])]
    return (f"rocprofv3 pass folders with several processes' files: {held}. rocprofv3 runs the "
            f"app once per pass (a new process id each time), so which files are one "
            f"process cannot be told, and joining them by Dispatch_Id would mix processes' "
            f"counters; pass one process's files, one per pass folder, at a time, e.g. "
            f"`rooflab rocprof {' '.join(first)}`")
