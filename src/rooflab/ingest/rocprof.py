"""rocprof / rocprof-compute counter CSV (AMD Instinct) -> Kernels: the file layouts read
here, each dispatch's counters turned into FLOP, bytes and seconds by rocprof-compute's
roofline formulas in rocprof_counters.py.

Accepts the wide layout (one row per dispatch, one column per counter; counters may carry
rocprof-compute's `_sum` suffix, or come per channel, `TCC_EA_RDREQ[0]`..., summed here) and
rocprofv3's long layout (Counter_Name, Counter_Value), whose passes (`pass_1/`, `pass_2/`) are
joined per dispatch, one process at a time (rocprof_runs). Time-only files (--stats
summaries, kernel traces) and rocprofv3's SQLite/JSON/Perfetto outputs are refused with what
to collect instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from ..errors import ParseError
from ..files import csv_reader
from ..files_decode import binary_error, cut_note, last_line_cut, looks_binary
from ..files_kind import ROCPROF_NAME_COLUMNS as NAME_COLUMNS  # one list, shared with file_kind
from ..files_kind import is_roofline_header
from .aggregate import Launch, group_counts, group_kernel, sort_by_time
from .kernel_names import display_names, step_labels
from .ncu_csv import _collector_paused, open_text, other_kind
from .ncu_metrics import Counts
from .profile_import import ProfileImport, held_notes
from .rocprof_arch import mi300_of_device, mi300_of_path
from .rocprof_cells import _cell, _sum_instances, fill_cells, pick_cells
from .rocprof_counters import _with_known_levels, rocprof_counted
from .rocprof_runs import runs
from .skips import SkipLog, read_each

ID_COLUMNS = ("Index", "Dispatch_ID", "Dispatch_Id", "Correlation_Id")

# `rocprof --stats` (results.stats.csv) and rocprofv3 `--stats` (*_kernel_stats.csv) write one
# row per kernel: "Name","Calls","TotalDurationNs","AverageNs","Percentage"[,"MinNs","MaxNs",
# "StdDev"] (ROCm rocprofiler docs; rocprofv3 "kernel_stats.csv"): times, no counters.
COLLECT_HINT = ("collect them with `rocprof -i counters.txt --timestamp on ./app` (results.csv) "
                "or `rocprofv3 --pmc SQ_INSTS_VALU_FMA_F32 TCC_EA_RDREQ_sum TCC_EA_RDREQ_32B_sum "
                "TCC_EA_WRREQ_sum TCC_EA_WRREQ_64B_sum ... -- ./app` (*_counter_collection.csv; "
                "MI300 spells them TCC_EA0_RDREQ_sum ... and adds TCC_BUBBLE_sum; without the "
                "_32B/_64B split counters reads count 64 B and writes 32 B)")
STATS_HINT = ("a kernel-time summary (rocprof --stats / rocprofv3 --stats: Name, Calls, "
              "TotalDurationNs): it has times but no FLOP or byte counters; " + COLLECT_HINT)
_COUNTER_PREFIXES = ("SQ_", "TCC", "TCP_", "TA_", "TD_", "GRBM_",
                     # rocprof's derived HBM sizes (v1/v2; rocprofv3 FetchSize/WriteSize)
                     "FETCH_SIZE", "WRITE_SIZE", "FetchSize", "WriteSize")


def _column(col: Mapping[str, int], names) -> int | None:
    return next((col[n] for n in names if n in col), None)


def read_rocprof_csv(path: str, log: SkipLog, mi300: bool | None = None
                     ) -> list[tuple[Launch, Counts]]:
    return _with_known_levels([(launch, rocprof_counted(launch.metrics, mi300))
                               for launch in _dispatches(path, log)])


# rocprofv3's other trace formats (--output-format pftrace / otf2): timelines, no counters
_TRACES = {".pftrace": "a Perfetto trace (rocprofv3 --output-format pftrace)",
           ".otf2": "an OTF2 trace (rocprofv3 --output-format otf2)"}


def _dispatches(path: str, log: SkipLog) -> list[Launch]:
    """The dispatches of one file with their counters ({name: value}), in file order."""
    trace = _TRACES.get(Path(path).suffix.lower())
    if trace:
        raise ParseError(f"{trace}, not a CSV: it holds kernel times, not counters; re-run "
                         f"rocprofv3 with --pmc ... and `--output-format csv`, and pass the "
                         f"*_counter_collection.csv (or its folder)", path=path)
    with open_text(path) as fh:
        return _read_dispatches(path, csv_reader(_lines(path, fh, log)), log)


_CHUNK = 1 << 20
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"   # str.splitlines' line breaks


def _lines(path: str, fh, log: SkipLog | None = None) -> Iterator[str]:
    """The file's lines as text.splitlines() gives them, read a chunk at a time: the text,
    its lines and their rows once were all held (1.3 GB for a 126 MB rocprofv3 file:
    review r5 F2). An SQLite or JSON file is refused first. A last line without its line
    break (a file cut short: its last count may be cut too) is said in `log`
    (files_decode.last_line_cut)."""
    head = fh.read(_CHUNK)
    while head.isspace() and (more := fh.read(_CHUNK)):   # read on to the first character
        head += more
    if head.startswith("SQLite format 3"):
        # rocprofv3's default output format is rocpd, an SQLite database (rocprofiler-sdk
        # docs, "Output formats"); rooflab reads its CSV output
        raise ParseError("an SQLite database (rocprofv3's default rocpd output), not a CSV; "
                         "re-run rocprofv3 with `--output-format csv` and pass the "
                         "*_counter_collection.csv", path=path)
    if head.lstrip()[:1] in ("{", "["):
        other = other_kind(path, None, head.lstrip())
        if "PyTorch" in other or head.lstrip()[:1] == "[":
            # a torch trace or a kernel list (rocprofv3's JSON is one object): name its verb,
            # not rocprofv3's CSV option (s36 I)
            raise ParseError(f"not a CSV: {other}", path=path)
        raise ParseError("a JSON file, not a CSV; re-run rocprofv3 with `--output-format csv` "
                         "and pass the *_counter_collection.csv", path=path)
    if looks_binary(head, getattr(fh, "replaced", 0)):
        # every other reader refuses it (files_decode.read_text); a NUL in the header once
        # made its counter a name never matched: "not collected" (s35 audit)
        raise binary_error(path, head)
    rest, chunk, n = "", head, 0
    while chunk:
        parts = (rest + chunk).splitlines(keepends=True)
        # the last part waits for the next chunk unless it is whole: ended by a break that
        # is not a \r (a \r\n may be split between two chunks)
        last = parts[-1]
        rest = "" if last[-1] in _BREAKS and last[-1] != "\r" else parts.pop()
        n += len(parts)
        for part in parts:
            yield part[:-2] if part.endswith("\r\n") else part[:-1]
        # a line longer than a chunk: read as much again, so a file with no line break
        # (a binary one) is split a doubling number of times, not once per chunk
        chunk = fh.read(max(_CHUNK, len(rest)))
    cut = last_line_cut(rest) if log is not None else None
    if cut is not None:
        log.add(n + cut[0], cut_note(cut[1]))
    yield from rest.splitlines()


def _read_dispatches(path: str, rows: Iterator[list[str]], log: SkipLog) -> list[Launch]:
    """The dispatches of the rows of one file (rows read lazily: the header is looked for
    in the rows before it, the rest stream through)."""
    return _dispatch_list(path, rows, log, _plan(path, rows))


class Plan(NamedTuple):
    """What the rows after the header hold (_plan), read by name: as thirteen positional
    arguments a reordering could swap two without a word (review s28 R1 #16)."""
    h: int                       # the header's row index
    header: list[str]
    i_name: int
    i_id: int | None
    long: bool                   # rocprofv3's long rows: Counter_Name, Counter_Value
    plain: list                  # (name, index) of the cells that are not counters
    same: Callable               # row -> the plain cells, to compare with the row before's
    every: tuple                 # _cells of every cell; counted: of the counters only
    counted: tuple
    i_cn: int | None
    i_cv: int | None
    channels: bool               # per-channel columns (TCC_EA_RDREQ[0]) to sum


def _plan(path: str, rows: Iterator[list[str]]) -> Plan:
    """What the rows after the header hold (the rows are read up to it)."""
    before: list[list[str]] = []   # the rows up to the header (the whole file without one)
    h = None
    for i, r in enumerate(rows):
        if _column({c.strip(): 0 for c in r}, NAME_COLUMNS) is not None:
            h = i
            break
        before.append(r)
    if h is None:
        raise _no_header(before, path)
    header = [c.strip() for c in r]
    if not any(c == "Counter_Name" or c.startswith(_COUNTER_PREFIXES) for c in header) and \
            any(any(c.strip() for c in r) for r in rows):
        # rocprofv3 --kernel-trace (*_kernel_trace.csv: Kind, Agent_Id, ..., Kernel_Name,
        # Start_Timestamp, End_Timestamp) and rocprof --timestamp alone: times only
        raise ParseError("the header has kernel names but no hardware counter column (SQ_*, "
                         "TCC_*, TCP_* or Counter_Name), so no FLOP and no byte counters: a "
                         "kernel trace, times only; " + COLLECT_HINT,
                         path=path, line=h + 1)
    col = {c: i for i, c in enumerate(header)}
    i_name, i_id = _column(col, NAME_COLUMNS), _column(col, ID_COLUMNS)
    long = "Counter_Name" in col and "Counter_Value" in col
    # every cell but the kernel's name (and a long file's counter pair), with whether it is
    # a hardware counter: decided once per file, not once per cell
    plan = [(c, i, c.startswith(_COUNTER_PREFIXES)) for c, i in col.items() if i != i_name
            and (not long or c not in ("Counter_Name", "Counter_Value"))]
    # a long file's rows of one dispatch repeat its other cells: those that are not counters
    # (never a warning: a text cell is skipped) are parsed again only when they differ from
    # the row before's, of the same dispatch
    plain = [(c, i) for c, i, counter in plan if not counter]
    same = _picker([i for _, i in plain])
    every, counted = _cells(plan), _cells([cell for cell in plan if cell[2]])
    i_cn, i_cv = col.get("Counter_Name"), col.get("Counter_Value")
    # per-channel columns (TCC_EA_RDREQ[0]) to sum: known from the header, or a long row's name
    channels = any(c.endswith("]") for c, _, _ in plan)
    return Plan(h, header, i_name, i_id, long, plain, same, every, counted, i_cn, i_cv,
                channels)


def data_row(row: list[str], n: int, header: list[str], log: SkipLog) -> bool:
    """Whether line n is a dispatch's row: a blank row is passed over, a short one (a file
    cut short) skipped with its line said."""
    if not row or (not row[0].strip() and not "".join(row).strip()):
        return False
    if len(row) < len(header):
        log.add(n, f"row has {len(row)} of {len(header)} columns (file cut short?)")
        return False
    return True


def _dispatch_list(path: str, rows: Iterator[list[str]], log: SkipLog, plan: Plan
                   ) -> list[Launch]:
    """The dispatches of the rows after the header, each with its counters as a dict."""
    # locals, not attribute reads, in the loop over every row
    header, i_name, i_id, long = plan.header, plan.i_name, plan.i_id, plan.long
    i_cn, i_cv, channels = plan.i_cn, plan.i_cv, plan.channels
    plain, same, every, counted = plan.plain, plan.same, plan.every, plan.counted
    dispatches: dict[str, list] = {}      # id -> [line, name, metrics, channels]
    last = None                           # (id, plain cells) of the row before
    for n, row in enumerate(rows, start=plan.h + 2):
        if not data_row(row, n, header, log):
            continue
        ident = row[i_id] if i_id is not None else str(n)
        entry = dispatches.get(ident)
        if entry is None:
            entry = dispatches[ident] = [n, row[i_name].strip(), {}, channels]
        metrics, kernel = entry[2], entry[1]
        if long:
            name, text = row[i_cn].strip(), row[i_cv]
            try:   # as below: a finite count inline, the rest through _cell
                value = float(text)
                if value - value != 0.0 or value < 0:
                    value = _cell(name, text, True, kernel, path, n, log)
            except ValueError:
                value = _cell(name, text, True, kernel, path, n, log)
            if value is not None:
                metrics[name] = value
                if name[-1:] == "]":
                    entry[3] = True
            cells, last = pick_cells(row, ident, last, plain, same, every, counted)
        else:
            cells = every
        fill_cells(metrics, kernel, row, cells, path, n, log)
    return [Launch(path=path, line=line, id=ident, name=name,
                   metrics=_sum_instances(metrics) if summed else metrics)
            for ident, (line, name, metrics, summed) in dispatches.items()]


def _cells(plan: list[tuple[str, int, bool]]):
    """(names, row -> their cells, whether each is a counter) of the cells in plan."""
    return (tuple(c for c, _, _ in plan), _picker([i for _, i, _ in plan]),
            tuple(counter for _, _, counter in plan))


def _picker(indexes: list[int]):
    """row -> the cells at indexes (a tuple), in one C call."""
    if not indexes:
        return lambda row: ()
    pick = itemgetter(*indexes)
    return (lambda row: (pick(row),)) if len(indexes) == 1 else pick


def _no_header(rows: list[list[str]], path: str) -> ParseError:
    """Why a file with no rocprof header is not one, naming what it is where it can: empty,
    a summary, an ncu CSV, a roofline.csv, another verb's file (ncu_csv.other_kind)."""
    filled = [r for r in rows if any(c.strip() for c in r)]
    if not filled:   # it once said "no rocprof header" alone (s36 I)
        return ParseError(f"the file is empty (was it written completely?); {_MAKE_IT}",
                          path=path)
    if rows and {"Name", "Calls", "TotalDurationNs"} <= {c.strip() for c in rows[0]}:
        return ParseError(STATS_HINT, path=path, line=1)
    if any({"Kernel Name", "ID"} <= {c.strip() for c in r} for r in rows[:50]):
        return ParseError("an Nsight Compute CSV (\"ID\", ..., \"Kernel Name\"), not rocprof "
                          "output: read it with `rooflab ncu FILE`", path=path)
    if rows and is_roofline_header(rows[0]):
        # rocprof-compute's empirical roofline benchmark (roofline.csv: device, HBMBw, L2Bw,
        # L1Bw, LDSBw, FP32Flops, MFMAF16Flops, ...; src/utils/roofline_calc.py): peaks
        return ParseError("rocprof-compute's roofline.csv: the machine's benchmarked peaks "
                          "(HBMBw, L2Bw, ...FLOPs), not kernel counters; pass the pmc_perf.csv "
                          "of the same workload folder (or the folder itself), and this file "
                          "as the roof: --on roofline.csv", path=path, line=1)
    other = other_kind(path, None, ",".join(filled[0]))
    if other:   # another verb's file: name it, not how to collect rocprof counters
        return ParseError(f"{_NO_HEADER} found: {other}", path=path)
    return ParseError(f"{_NO_HEADER} found; {_MAKE_IT}", path=path)


_NO_HEADER = "no rocprof header (a row with KernelName or Kernel_Name)"
_MAKE_IT = "make it with `rocprof -i counters.txt ./app` or rocprof-compute"


def _merged_passes(paths: list[str], log: SkipLog, other_logs: list[SkipLog],
                   mi300: bool | None = None) -> list[tuple[Launch, Counts]]:
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
    return _with_known_levels([(launch, rocprof_counted(launch.metrics, mi300))
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


def load_rocprof(paths, device: str | None = None) -> ProfileImport:
    """Kernels of one or more rocprof CSV files (several = steps), longest first; one
    rocprof-compute workload folder (or its pmc_perf.csv) brings its roofline.csv as roof_file.
    device: the GPU the user named (`--on`), which tells MI300's 128-B lines from MI200's
    64-B ones when the file does not (rocprof_arch)."""
    paths_in = [paths] if isinstance(paths, str) else list(paths)
    grouped = runs([f for p in paths_in for f in _counter_files(p)])
    paths = [run[0] for run, _ in grouped]
    several = len(paths) > 1
    labels = _process_labels(step_labels(paths), [label for _, label in grouped])
    run_of = {run[0]: run for run, _ in grouped}
    named = mi300_of_device(device)

    def read(path: str, log: SkipLog):
        run, other_logs = run_of[path], []
        mi300 = mi300_of_path(path)
        mi300 = named if mi300 is None else mi300
        with _collector_paused():   # no cycles among a file's dispatches (as ncu's pages)
            if len(run) > 1:
                groups = group_counts(_merged_passes(run, log, other_logs, mi300), log)
            else:   # grouped as read, not a dict per dispatch first (review s23 r5 F5)
                from .rocprof_stream import rocprof_groups

                groups = rocprof_groups(path, log, mi300)
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
    from ..hardware.cdna_limits import cu_limits
    from .rocprof_achieved import target_gpu
    from .rocprof_dispatch import dispatch_occupancy, theoretical_span
    from .rocprof_occupancy import target_gfx, with_occupancy  # as ncu records occupancy

    gfx, gpu = target_gfx(device, paths_in), target_gpu(device, paths_in)
    dispatch_occupancy([g for g, _, _ in pairs], gpu, cu_limits(gfx))   # before their notes
    names = display_names([(g, s) for g, s, _ in pairs])
    kernels = [group_kernel(g, name, step, i if step else None, source="rocprof")
               for (g, step, i), name in zip(pairs, names, strict=True)]
    spans = {(k.name, k.meta.get("step")): span
             for k, (g, _, _) in zip(kernels, pairs, strict=True) if (span := theoretical_span(g))}
    kernels, occupancy = with_occupancy(kernels, [g.first.metrics for g, _, _ in pairs],
                                        gfx, gpu, spans)
    from ..hardware.rocprof_roofline import workload_roofline

    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         failed=tuple(failed), files=tuple(used),
                         notes=held_notes(kernels) + occupancy,
                         roof_file=workload_roofline(paths_in) or "")


def _process_labels(labels: list[str], processes: list[str | None]) -> list[str]:
    """Each run's step label: its process ('pid 100') where its files were grouped by
    process and those labels tell the runs apart, else the file's (step_labels)."""
    out = [p or label for label, p in zip(labels, processes, strict=True)]
    return out if len(set(out)) == len(out) else labels


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
