"""rocprof / rocprof-compute counter CSV (AMD Instinct) -> Kernels, by rocprof-compute's
roofline formulas (../shared/design/FACTS.md, "rocprof-compute"):

    vector FLOP (p = F16, F32, F64) = lanes x (ADD_p + MUL_p + 2 x FMA_p + TRANS_p)
                                      from SQ_INSTS_VALU_<op>_<p>  (lanes per wavefront:
                                      the file's wave size, else 64)
    matrix FLOP = 512 x SQ_INSTS_VALU_MFMA_MOPS_<p>          (p = F8, F16, BF16, F32, F64, I8)
    L1  bytes   = line x TCP_TOTAL_CACHE_ACCESSES
    L2  bytes   = line x TCP_TCC_READ_REQ + 64 x (TCP_TCC_WRITE_REQ
                  + TCP_TCC_ATOMIC_WITH_RET_REQ + TCP_TCC_ATOMIC_WITHOUT_RET_REQ)
                  or, without those, 128 x TCC_REQ      (its speed-of-light "L2 Cache BW")
                  line = 64 B (MI200), 128 B on MI300 (files with TCC_BUBBLE)
    HBM bytes   = 32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)
                + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)   from TCC_EA(0)_RDREQ/WRREQ;
                  on MI300 (gfx942) TCC_BUBBLE counts the 128-B reads among RDREQ:
                  reads = 128 x BUBBLE + 64 x (RDREQ - BUBBLE - RDREQ_32B) + 32 x RDREQ_32B;
                  a missing split counter counts as 0 (reads 64 B, writes 32 B) with a note;
                  a counter that is not a number drops the level (never 0 bytes)
    time        = EndNs - BeginNs (rocprof v1), End_Timestamp - Start_Timestamp (v2/v3,
                  rocprof-compute), or DurationNs

(ROCm/rocprofiler-compute: src/utils/roofline_calc.py `calc_ai`; for MI300 the gfx942
panels, src/rocprof_compute_soc/analysis_configs/gfx942/0200_system-speed-of-light.yaml and
1600_L1_cache.yaml, whose 128-B lines calc_ai does not apply yet.)

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
from ..hardware.rocprof_roofline import is_roofline_header
from .aggregate import Launch, display_names, group_counts, kernel_of, sort_by_time, step_labels
from .ncu_csv import read_text
from .ncu_metrics import Counts, parse_number
from .profile_import import ProfileImport
from .skips import Skip, SkipLog

VECTOR = {"F16": "fp16", "F32": "fp32", "F64": "fp64"}
MATRIX = {"F8": "fp8", "F16": "fp16", "BF16": "bf16", "F32": "fp32", "F64": "fp64",
          "I8": "int8"}
# L1->L2 requests, the L2 traffic of rocprof-compute's roofline (read first)
TCP_TCC = ("TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ", "TCP_TCC_ATOMIC_WITH_RET_REQ",
           "TCP_TCC_ATOMIC_WITHOUT_RET_REQ")
NAME_COLUMNS = ("KernelName", "Kernel_Name", "Kernel-Name", "kernel-name")
ID_COLUMNS = ("Index", "Dispatch_ID", "Dispatch_Id", "Correlation_Id")


def _value(m: Mapping[str, float], name: str) -> float | None:
    """A counter's value under any of its spellings; nan when the file has the counter but
    not as a number (`n/a`, empty, `nan`: parse_number's nan); None when it is absent."""
    seen = False
    for key in (name, f"{name}_sum", name.replace("TCC_EA_", "TCC_EA0_"),
                name.replace("TCC_EA_", "TCC_EA0_") + "_sum"):
        v = m.get(key)
        if v is not None:
            if v == v:
                return v
            seen = True
    return math.nan if seen else None


def _counter(m: Mapping[str, float], name: str) -> float | None:
    """A counter's value; None when absent or not a number."""
    v = _value(m, name)
    return v if v == v else None


def _seconds(m: Mapping[str, float]) -> float | None:
    for begin, end in (("BeginNs", "EndNs"), ("Start_Timestamp", "End_Timestamp")):
        b, e = m.get(begin), m.get(end)
        if b is not None and e is not None and b == b and e == e:
            return (e - b) * 1e-9
    d = m.get("DurationNs")
    return d * 1e-9 if d is not None and d == d else None


def _time_words(m: Mapping[str, float]) -> str:
    """The timestamps a dispatch's time came from, as 'EndNs 1000 < BeginNs 2000'."""
    for begin, end in (("BeginNs", "EndNs"), ("Start_Timestamp", "End_Timestamp")):
        b, e = m.get(begin), m.get(end)
        if b is not None and e is not None and b == b and e == e:
            sign = "<" if e < b else "=" if e == b else ">"
            return f"{end} {e:.0f} {sign} {begin} {b:.0f}"
    return f"DurationNs {m.get('DurationNs', math.nan):g}"


def _split_problem(m: Mapping[str, float]) -> str:
    """Why the HBM split counters cannot be of one dispatch ('' when they can): the 32-B
    reads (and MI300's 128-B TCC_BUBBLE reads) are a part of TCC_EA_RDREQ, the 64-B writes
    a part of TCC_EA_WRREQ. More parts than the whole made the formula's other term
    negative: RDREQ_32B 200 > RDREQ 100 gave 32 x 200 + 64 x (100 - 200) = 6 400 B."""
    rd, rd32 = _counter(m, "TCC_EA_RDREQ"), _counter(m, "TCC_EA_RDREQ_32B")
    wr, wr64 = _counter(m, "TCC_EA_WRREQ"), _counter(m, "TCC_EA_WRREQ_64B")
    big = _counter(m, "TCC_BUBBLE") or 0.0
    why = ("; these counts are not of one dispatch (counters joined from different runs "
           "or passes?): collect them together")
    if rd is not None and (rd32 or 0.0) + big > rd:
        parts = f"TCC_EA_RDREQ_32B {rd32 or 0:g}" + (f" + TCC_BUBBLE {big:g}" if big else "")
        return f"{parts} > TCC_EA_RDREQ {rd:g}, the reads they are a part of{why}"
    if wr is not None and wr64 is not None and wr64 > wr:
        return f"TCC_EA_WRREQ_64B {wr64:g} > TCC_EA_WRREQ {wr:g}, the writes it is a part of{why}"
    return ""


# the counters of each level; one that is in the file but not a number makes the level
# unknown for that dispatch (never 0: a kernel whose reads are unknown is not write-only)
_LEVEL_COUNTERS = {
    "DRAM": ("TCC_EA_RDREQ", "TCC_EA_RDREQ_32B", "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B",
             "TCC_BUBBLE"),
    "L2": TCP_TCC,
    "L1": ("TCP_TOTAL_CACHE_ACCESSES",),
}


def _dram(m: Mapping[str, float], bubble: float | None) -> tuple[float | None, list[str]]:
    """HBM bytes (None: no TCC_EA counter) and notes on the sizes assumed for the requests
    whose split counter was not collected. rocprof-compute's formula assumes both split
    counters (it always collects them); rooflab's users often collect RDREQ and WRREQ alone,
    and then every read counts 64 B and every write 32 B (review 12b F)."""
    rd, rd32 = _counter(m, "TCC_EA_RDREQ"), _counter(m, "TCC_EA_RDREQ_32B")
    wr, wr64 = _counter(m, "TCC_EA_WRREQ"), _counter(m, "TCC_EA_WRREQ_64B")
    if rd is None and wr is None:
        return None, []
    notes = []
    if (rd is None) != (wr is None):
        # one direction collected: said, as ncu's "DRAM = reads only" (a file of
        # TCC_EA_RDREQ alone is common: a read-only kernel's counters)
        have, lack, what = (("TCC_EA_RDREQ", "TCC_EA_WRREQ", "reads") if wr is None else
                            ("TCC_EA_WRREQ", "TCC_EA_RDREQ", "writes"))
        notes.append(f"DRAM = {what} only: {have} without {lack} (add it to --pmc, or DRAM "
                     f"bytes may read low)")
    if rd32 is None and rd:
        notes.append("TCC_EA_RDREQ_32B not collected: every DRAM read assumed 64 B (a 32-B "
                     "read counts twice its size); add it to --pmc")
    if wr64 is None and wr:
        notes.append("TCC_EA_WRREQ_64B not collected: every DRAM write assumed 32 B (a 64-B "
                     "write counts half its size); add it to --pmc")
    rd, rd32, wr, wr64, big = (v or 0.0 for v in (rd, rd32, wr, wr64, bubble))
    return (128 * big + 32 * rd32 + 64 * (rd - big - rd32)
            + 64 * wr64 + 32 * (wr - wr64)), notes


def _bytes(m: Mapping[str, float]) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """Bytes by level, the levels whose counts are unknown ({level: why}: a counter in the
    file but not a number; no bytes for them),
    and notes on assumed request sizes. MI300 (gfx942) files carry TCC_BUBBLE, its 128-B
    HBM reads, which MI200's counters lack; its vector L1 line is 128 B, so rocprof-compute's
    gfx942 panels
    count 128 B per TCP_TOTAL_CACHE_ACCESSES and per TCP_TCC_READ_REQ (64 B per write and
    atomic) where its gfx90a ones count 64 ("vL1D Cache BW", "L1-L2 BW")."""
    nbytes: dict[str, float] = {}
    unknown: dict[str, str] = {}
    bubble = _value(m, "TCC_BUBBLE")
    line = 64.0 if bubble is None else 128.0
    for level, names in _LEVEL_COUNTERS.items():
        bad = next((n for n in names if (v := _value(m, n)) is not None and v != v), None)
        if bad is not None:
            unknown[level] = f"{bad} is not a number (n/a)"
    dram, notes = _dram(m, bubble)
    if dram is not None:
        nbytes["DRAM"] = dram
    read, *others = (_counter(m, name) for name in TCP_TCC)
    if read is not None or any(v is not None for v in others):
        nbytes["L2"] = line * (read or 0.0) + 64.0 * sum(v or 0.0 for v in others)
    elif (l2 := _value(m, "TCC_REQ")) is not None:
        if l2 == l2:
            nbytes["L2"] = 128.0 * l2
        elif "L2" not in unknown:
            unknown["L2"] = "TCC_REQ"
    if (l1 := _counter(m, "TCP_TOTAL_CACHE_ACCESSES")) is not None:
        nbytes["L1"] = line * l1
    for level in unknown:
        nbytes.pop(level, None)
    return nbytes, unknown, notes


def _wave_size(m: Mapping[str, float]) -> float:
    """Lanes per wavefront: the file's wave size (rocprof v1 `wave_size`, rocprofv2
    `Wave_Size`; RDNA runs wave32), else 64, CDNA's and rocprof-compute's constant.
    SQ_INSTS_VALU_* count per-wavefront instructions, so FLOP scale with it."""
    for key in ("wave_size", "Wave_Size", "WaveSize"):
        v = m.get(key)
        if v is not None and v in (32.0, 64.0):
            return v
    return 64.0


def _vector_flop(m: Mapping[str, float], lanes: float
                 ) -> tuple[dict[str, float], list[str], bool]:
    """Vector FLOP by precision, notes on precisions counted from some of their
    ADD/MUL/FMA/TRANS counters only (as ncu's _partial_note), and whether any was found."""
    flop: dict[str, float] = {}
    notes: list[str] = []
    found = False
    ops = ("ADD", "MUL", "FMA", "TRANS")
    for suffix, precision in VECTOR.items():
        parts = [_counter(m, f"SQ_INSTS_VALU_{op}_{suffix}") for op in ops]
        if any(p is not None for p in parts):
            found = True
            add, mul, fma, trans = (p or 0.0 for p in parts)
            if add + mul + fma + trans:
                flop[precision] = lanes * (add + mul + 2.0 * fma + trans)
            if any(p is None for p in parts):
                have = [op for op, p in zip(ops, parts, strict=True) if p is not None]
                lack = [f"SQ_INSTS_VALU_{op}_{suffix}"
                        for op, p in zip(ops, parts, strict=True) if p is None]
                notes.append(f"{precision} FLOP from {', '.join(have)} only: "
                             f"{', '.join(lack)} not collected or not a number (add "
                             f"{'it' if len(lack) == 1 else 'them'} to --pmc, or the FLOP "
                             f"may read low)")
    return flop, notes, found


def rocprof_counts(m: Mapping[str, float]) -> Counts:
    """FLOP by precision, bytes by level and seconds of one dispatch. A level whose counter
    is in the file but not a number gets no bytes (_bytes); a dispatch left with none has a
    problem naming the counter."""
    lanes = _wave_size(m)
    flop, notes, found = _vector_flop(m, lanes)
    if lanes != 64.0:
        notes.append(f"vector FLOP at {lanes:.0f} lanes per wavefront (the file's wave size)")
    tensor = 0.0
    for suffix, precision in MATRIX.items():
        mops = _counter(m, f"SQ_INSTS_VALU_MFMA_MOPS_{suffix}")
        if mops is not None:
            found = True
            if mops:
                flop[precision] = flop.get(precision, 0.0) + 512.0 * mops
                tensor += 512.0 * mops
    nbytes, unknown, bnotes = _bytes(m)
    if "DRAM" not in unknown:   # (bnotes are about DRAM requests)
        notes += bnotes
    seconds = _seconds(m)
    split = _split_problem(m)
    if seconds is None:
        problem = ("no time: needs BeginNs/EndNs, Start_Timestamp/End_Timestamp or DurationNs "
                   "(rocprof v1: add `--timestamp on`; rocprofv3 and rocprof-compute write them)")
    elif seconds < 0:
        problem = f"negative time ({_time_words(m)}): the end is before the begin"
    elif seconds == 0:
        problem = f"zero time ({_time_words(m)})"
    elif split:
        problem = split
    elif not nbytes and unknown:
        problem = "no bytes: " + "; ".join(f"{why}, so no {level} bytes"
                                           for level, why in unknown.items())
    elif not nbytes:
        problem = ("no byte counters (TCC_EA_RDREQ/WRREQ, TCP_TCC_*_REQ, TCC_REQ, "
                   "TCP_TOTAL_CACHE_ACCESSES)")
    elif not found:
        problem = "no FLOP counters (SQ_INSTS_VALU_*_F16/F32/F64, SQ_INSTS_VALU_MFMA_MOPS_*)"
    else:
        problem = ""
    return Counts(flop, nbytes, seconds, tuple(notes), problem, tensor_flop=tensor)


def _with_known_levels(items: list[tuple[Launch, Counts]]) -> list[tuple[Launch, Counts]]:
    """Dispatches with every level dropped that some dispatch of the same kernel could not
    count (a counter `n/a`): the others' bytes over the kernel's whole time would read low.
    The first dispatch of the kernel carries a note naming the counter and the dispatches."""
    missing: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for launch, counts in items:
        if counts.problem:   # skipped whole (time too): the others stay consistent
            continue
        for level, why in _bytes(launch.metrics)[1].items():
            entry = missing.setdefault(launch.identity, {}).setdefault(level, (why, []))
            entry[1].append(launch.id)
    if not missing:
        return items
    out, noted = [], set()
    for launch, counts in items:
        drop = missing.get(launch.identity)
        if not drop or counts.problem:
            out.append((launch, counts))
            continue
        nbytes = {lv: v for lv, v in counts.bytes.items() if lv not in drop}
        notes = counts.notes
        if launch.identity not in noted:
            noted.add(launch.identity)
            notes += tuple(_unknown_note(level, counter, ids)
                           for level, (counter, ids) in drop.items())
        problem = "" if nbytes else "no bytes: " + "; ".join(
            f"{why} in dispatch {ids[0]} of this kernel, so no {lv} bytes"
            for lv, (why, ids) in drop.items())
        out.append((launch, replace(counts, bytes=nbytes, notes=notes, problem=problem)))
    return out


def _unknown_note(level: str, why: str, ids: list[str]) -> str:
    more = f" (and {len(ids) - 1} more)" if len(ids) > 1 else ""
    return (f"{why} in dispatch {ids[0]}{more}: no {level} point (an unknown count is not "
            f"0 bytes)")


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
    pairs, skips, failed, used = [], [], [], []
    labels = step_labels(paths)
    for i, (path, run) in enumerate(zip(paths, runs, strict=True)):
        log, other_logs = SkipLog(path), []
        try:
            items = (_merged_passes(run, log, other_logs) if len(run) > 1
                     else read_rocprof_csv(path, log))
            groups = group_counts(items, log)
            if not groups:
                raise _unusable(path, log)
        except ParseError as exc:
            # as with ncu files: alone it is an error; among several runs (one of which
            # crashed) it is reported and the others are used
            if not several:
                raise
            failed.append(Skip(path, None, str(exc).removeprefix(f"{path}: ")))
            continue
        skips += [*log.skips(), *(s for other in other_logs for s in other.skips())]
        used.append(path)
        step = labels[i] if several else None
        pairs += [(g, step, i) for g in groups]
    if not pairs:
        raise ParseError("no file has a usable dispatch: " + "; ".join(str(s) for s in failed))
    names = display_names([(g, s) for g, s, _ in pairs])
    kernels = [kernel_of(g, name, step, i if step else None, source="rocprof")
               for (g, step, i), name in zip(pairs, names, strict=True)]
    from ..hardware.rocprof_roofline import workload_roofline

    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         failed=tuple(failed), files=tuple(used), notes=_kernel_notes(kernels),
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


def _kernel_notes(kernels) -> tuple[str, ...]:
    """The kernels' counter notes (an n/a counter, an assumed request size, a partial FLOP
    count, the wave size), once each with the kernels they hold for: they change the
    numbers, so they belong on screen, not only in the JSON's meta."""
    held: dict[str, list[str]] = {}
    for k in kernels:
        for note in k.meta.get("notes") or ():
            held.setdefault(note, []).append(k.name)
    return tuple(f"{', '.join(names[:3])}{', ...' if len(names) > 3 else ''}: {note}"
                 for note, names in held.items())
