"""rocprof / rocprof-compute counter CSV (AMD Instinct) -> Kernels: the file layouts read
here, each dispatch's counters turned into FLOP, bytes and seconds by rocprof-compute's
roofline formulas in rocprof_counters.py.

Accepts the wide layout (one row per dispatch, one column per counter; counters may carry
rocprof-compute's `_sum` suffix, or come per channel, `TCC_EA_RDREQ[0]`..., summed here) and
rocprofv3's long layout (Counter_Name, Counter_Value), whose passes (`pass_1/`, `pass_2/`) are
joined per dispatch. Time-only files (--stats summaries, kernel traces) and rocprofv3's
SQLite/JSON outputs are refused with what to collect instead.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..errors import ParseError
from ..files import ROCPROF_NAME_COLUMNS as NAME_COLUMNS  # one list, shared with file_kind
from ..files import is_roofline_header
from .aggregate import Launch, group_counts, group_kernel, sort_by_time
from .kernel_names import display_names, step_labels
from .ncu_csv import read_text
from .ncu_metrics import Counts
from .ncu_numbers import parse_number
from .profile_import import ProfileImport, held_notes
from .rocprof_counters import _with_known_levels, rocprof_counts
from .skips import SkipLog, read_each

ID_COLUMNS = ("Index", "Dispatch_ID", "Dispatch_Id", "Correlation_Id")



# `rocprof --stats` (results.stats.csv) and rocprofv3 `--stats` (*_kernel_stats.csv) write one
# row per kernel: "Name","Calls","TotalDurationNs","AverageNs","Percentage"[,"MinNs","MaxNs",
# "StdDev"] (ROCm rocprofiler docs; rocprofv3 "kernel_stats.csv"): times, no counters.
COLLECT_HINT = ("collect them with `rocprof -i counters.txt --timestamp on ./app` (results.csv) "
                "or `rocprofv3 --pmc SQ_INSTS_VALU_FMA_F32 TCC_EA_RDREQ TCC_EA_RDREQ_32B "
                "TCC_EA_WRREQ TCC_EA_WRREQ_64B ... -- ./app` (*_counter_collection.csv; "
                "TCC_BUBBLE too on MI300; without the _32B/_64B split counters reads count "
                "64 B and writes 32 B)")
STATS_HINT = ("a kernel-time summary (rocprof --stats / rocprofv3 --stats: Name, Calls, "
              "TotalDurationNs): it has times but no FLOP or byte counters; " + COLLECT_HINT)
_COUNTER_PREFIXES = ("SQ_", "TCC", "TCP_", "TA_", "TD_", "GRBM_")
_INSTANCE = re.compile(r"^(\w+)\[(\d+)\]$")


def _sum_instances(metrics: dict[str, float]) -> dict[str, float]:
    """Per-instance counters summed: rocprof v1 writes one column per TCC channel when asked
    for a block counter without `_sum` (pmc: TCC_EA_RDREQ[0] ... TCC_EA_RDREQ[15]; ROCm's
    rocprof docs and rocprof-compute's pmc files list them so). `TCC_EA_RDREQ` becomes the sum
    of its `[i]` columns unless the file also has the total itself."""
    sums: dict[str, float] = {}
    for name, value in metrics.items():
        hit = _INSTANCE.match(name) if name.endswith("]") else None
        if hit:   # an n/a channel makes the sum unknown (nan), not the others' sum
            sums[hit.group(1)] = sums.get(hit.group(1), 0.0) + value
    if not sums:
        return metrics
    return {**{k: v for k, v in sums.items() if k not in metrics}, **metrics}


def _column(col: Mapping[str, int], names) -> int | None:
    return next((col[n] for n in names if n in col), None)


def read_rocprof_csv(path: str, log: SkipLog) -> list[tuple[Launch, Counts]]:
    return _with_known_levels([(launch, rocprof_counts(launch.metrics))
                               for launch in _dispatches(path, log)])


def _dispatches(path: str, log: SkipLog) -> list[Launch]:
    """The dispatches of one file with their counters ({name: value}), in file order."""
    text = read_text(path)
    if text.startswith("SQLite format 3"):
        # rocprofv3's default output format is rocpd, an SQLite database (rocprofiler-sdk
        # docs, "Output formats"); rooflab reads its CSV output
        raise ParseError("an SQLite database (rocprofv3's default rocpd output), not a CSV; "
                         "re-run rocprofv3 with `--output-format csv` and pass the "
                         "*_counter_collection.csv", path=path)
    if text.lstrip()[:1] in ("{", "["):
        raise ParseError("a JSON file, not a CSV; re-run rocprofv3 with `--output-format csv` "
                         "and pass the *_counter_collection.csv", path=path)
    lines = text.splitlines()
    rows = list(csv.reader(lines))
    h = next((i for i, r in enumerate(rows) if _column({c.strip(): 0 for c in r},
                                                       NAME_COLUMNS) is not None), None)
    if h is None and rows and {"Name", "Calls", "TotalDurationNs"} <= {c.strip()
                                                                      for c in rows[0]}:
        raise ParseError(STATS_HINT, path=path, line=1)
    if h is None and any({"Kernel Name", "ID"} <= {c.strip() for c in r} for r in rows[:50]):
        raise ParseError("an Nsight Compute CSV (\"ID\", ..., \"Kernel Name\"), not rocprof "
                         "output: read it with `rooflab ncu FILE`", path=path)
    if h is None and rows and is_roofline_header(rows[0]):
        # rocprof-compute's empirical roofline benchmark (roofline.csv: device, HBMBw, L2Bw,
        # L1Bw, LDSBw, FP32Flops, MFMAF16Flops, ...; src/utils/roofline_calc.py): peaks
        raise ParseError("rocprof-compute's roofline.csv: the machine's benchmarked peaks "
                         "(HBMBw, L2Bw, ...FLOPs), not kernel counters; pass the pmc_perf.csv "
                         "of the same workload folder (or the folder itself), and this file "
                         "as the roof: --on roofline.csv", path=path, line=1)
    if h is None:
        raise ParseError("no rocprof header (a row with KernelName or Kernel_Name) found; "
                         "make it with `rocprof -i counters.txt ./app` or rocprof-compute",
                         path=path)
    header = [c.strip() for c in rows[h]]
    has_rows = any(any(c.strip() for c in r) for r in rows[h + 1:])
    if has_rows and not any(c == "Counter_Name" or c.startswith(_COUNTER_PREFIXES)
                            for c in header):
        # rocprofv3 --kernel-trace (*_kernel_trace.csv: Kind, Agent_Id, ..., Kernel_Name,
        # Start_Timestamp, End_Timestamp) and rocprof --timestamp alone: times only
        raise ParseError("the header has kernel names but no hardware counter column (SQ_*, "
                         "TCC_*, TCP_* or Counter_Name), so no FLOP and no byte counters: a "
                         "kernel trace, times only; " + COLLECT_HINT,
                         path=path, line=h + 1)
    col = {c: i for i, c in enumerate(header)}
    i_name, i_id = _column(col, NAME_COLUMNS), _column(col, ID_COLUMNS)
    long = "Counter_Name" in col and "Counter_Value" in col
    dispatches: dict[str, list] = {}      # id -> [line, name, metrics]
    for n, row in enumerate(rows[h + 1:], start=h + 2):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) < len(header):
            log.add(n, f"row has {len(row)} of {len(header)} columns (file cut short?)")
            continue
        ident = row[i_id] if i_id is not None else str(n)
        entry = dispatches.setdefault(ident, [n, row[i_name].strip(), {}])
        cells = ([(row[col["Counter_Name"]], row[col["Counter_Value"]])] if long else [])
        cells += [(c, row[i]) for c, i in col.items() if i != i_name
                  and (not long or c not in ("Counter_Name", "Counter_Value"))]
        for i, (name, text) in enumerate(cells):
            counter = (long and i == 0) or name.strip().startswith(_COUNTER_PREFIXES)
            value = _cell(name.strip(), text, counter, entry[1], path, n, log)
            if value is not None:
                entry[2][name.strip()] = value
    return [Launch(path=path, line=line, id=ident, name=name, metrics=_sum_instances(metrics))
            for ident, (line, name, metrics) in dispatches.items()]


def _cell(name: str, text: str, counter: bool, kernel: str, path: str, line: int,
          log: SkipLog) -> float | None:
    """A cell's number; None for a text column (arch, signal handles, ...). A hardware
    counter's cell that is not a number ('abc') is unknown, as n/a is (nan: its level or
    FLOP part is left out with a note), and said: it once read as 0 without a word. A
    negative count is refused: no counter counts below zero, and its term would cancel
    the others' bytes or FLOP."""
    try:
        value = parse_number(text)
    except ValueError:
        if not counter:
            return None
        log.add(line, f"counter '{name}' of '{kernel}' = '{text.strip()}' is not a number; "
                      f"read as unknown (as n/a)")
        return math.nan
    if counter and value < 0:
        raise ParseError(f"counter '{name}' of '{kernel}' is {value:g}: a count cannot be "
                         f"negative; check the export (or leave the counter out)",
                         path=path, line=line)
    return value


_PASS_DIR = re.compile(r"^(?:pass|pmc)_\d+$")


def _runs(paths: list[str]) -> list[list[str]]:
    """Files grouped by run: rocprofv3 collects one `pmc:` line per pass and writes each to
    its own folder, `pass_1/`, `pass_2/`, ... (rocprofiler-sdk docs; some builds `pmc_1/`),
    so FLOP and byte counters of one dispatch can sit in two files. Files in sibling pass
    folders form one run; every other file is a run (a step) of its own."""
    runs: list[list[str]] = []
    by_parent: dict[Path, list[str]] = {}
    for path in paths:
        parent = Path(path).parent
        if _PASS_DIR.match(parent.name):
            group = by_parent.get(parent.parent)
            if group is not None and not any(Path(q).parent == parent for q in group):
                group.append(path)
                continue
            by_parent[parent.parent] = group = [path]
            runs.append(group)
        else:
            runs.append([path])
    return runs


def _merged_passes(paths: list[str], log: SkipLog,
                   other_logs: list[SkipLog]) -> list[tuple[Launch, Counts]]:
    """One run's passes joined by (Dispatch_Id, kernel name): each dispatch gets the
    counters of every pass; the first pass's timestamps are kept."""
    merged: dict[tuple[str, str], Launch] = {}
    for path in paths:
        if path != paths[0]:
            log = SkipLog(path)
            other_logs.append(log)
        for launch in _dispatches(path, log):
            key = (launch.id, launch.name)
            have = merged.get(key)
            merged[key] = launch if have is None else \
                replace(have, metrics={**launch.metrics, **have.metrics})
    return _with_known_levels([(launch, rocprof_counts(launch.metrics))
                               for launch in merged.values()])


def _counter_files(path: str) -> list[str]:
    """A folder stands for its counter CSVs: rocprof-compute's workload folder
    (workloads/NAME/ARCH/) for its pmc_perf.csv, the per-dispatch counters its roofline
    reads; a rocprof v1 output folder for its results.csv; a rocprofv3 output folder for its
    *_counter_collection.csv (pass_N/ folders included). Any other path is returned as is."""
    folder = Path(path)
    if not folder.is_dir():
        return [path]
    for name in ("pmc_perf.csv", "results.csv"):
        if (folder / name).is_file():
            return [str(folder / name)]
    found = sorted(str(f) for f in folder.rglob("*_counter_collection.csv"))
    if not found:
        raise ParseError("is a directory with no pmc_perf.csv (rocprof-compute), results.csv "
                         "(rocprof) or *_counter_collection.csv (rocprofv3); give the counter "
                         "CSV file", path=path)
    return found


def load_rocprof(paths) -> ProfileImport:
    """Kernels of one or more rocprof CSV files (several = steps), longest first; one
    rocprof-compute workload folder (or its pmc_perf.csv) brings its roofline.csv as roof_file."""
    paths_in = [paths] if isinstance(paths, str) else list(paths)
    runs = _runs([f for p in paths_in for f in _counter_files(p)])
    paths = [run[0] for run in runs]
    several = len(paths) > 1
    labels = step_labels(paths)
    run_of = dict(zip(paths, runs, strict=True))

    def read(path: str, log: SkipLog):
        run, other_logs = run_of[path], []
        items = (_merged_passes(run, log, other_logs) if len(run) > 1
                 else read_rocprof_csv(path, log))
        groups = group_counts(items, log)
        if not groups:
            raise _unusable(path, log)
        return groups, tuple(s for other in other_logs for s in other.skips())

    done, failed = read_each(paths, read)
    skips = [s for f in done for s in (*f.skips, *f.value[1])]
    used = [f.path for f in done]
    pairs = [(g, labels[f.index] if several else None, f.index)
             for f in done for g in f.value[0]]
    if not pairs:
        raise ParseError("no file has a usable dispatch: " + "; ".join(str(s) for s in failed))
    names = display_names([(g, s) for g, s, _ in pairs])
    kernels = [group_kernel(g, name, step, i if step else None, source="rocprof")
               for (g, step, i), name in zip(pairs, names, strict=True)]
    from ..hardware.rocprof_roofline import workload_roofline

    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         failed=tuple(failed), files=tuple(used), notes=held_notes(kernels),
                         roof_file=workload_roofline(paths_in) or "")


def _unusable(path: str, log: SkipLog) -> ParseError:
    """The error for a file with no usable dispatch, naming the line of each skip: one
    skipped dispatch is FILE:LINE, as every other reader's error is."""
    skips = log.skips()
    if len(skips) == 1 and skips[0].line is not None:
        return ParseError(f"no usable dispatch: {skips[0].reason}", path=path,
                          line=skips[0].line)
    why = "; ".join(f"line {s.line}: {s.reason}" if s.line is not None else s.reason
                    for s in skips) or \
        "the file has a header but no dispatch rows (did the run end early?)"
    return ParseError(f"no usable dispatch: {why}", path=path)
