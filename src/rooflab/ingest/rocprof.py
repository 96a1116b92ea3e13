"""rocprof / rocprof-compute counter CSV (AMD Instinct) -> Kernels, by rocprof-compute's
roofline formulas (../shared/design/FACTS.md, "rocprof-compute"):

    vector FLOP (p = F16, F32, F64) = 64 x (ADD_p + MUL_p + 2 x FMA_p + TRANS_p)
                                      from SQ_INSTS_VALU_<op>_<p>  (64 lanes per wavefront)
    matrix FLOP = 512 x SQ_INSTS_VALU_MFMA_MOPS_<p>                (p = F16, BF16, F32, F64, I8)
    L1  bytes   = 64 x TCP_TOTAL_CACHE_ACCESSES
    L2  bytes   = 128 x TCC_REQ                     (rocprof-compute's L2 roofline, 128-B lines)
    HBM bytes   = 32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)
                + 64 x WRREQ_64B + 32 x (WRREQ - WRREQ_64B)   from TCC_EA(0)_RDREQ/WRREQ
    time        = EndNs - BeginNs (rocprof v1), End_Timestamp - Start_Timestamp (v2/v3,
                  rocprof-compute), or DurationNs

Accepts the wide layout (one row per dispatch, one column per counter; counters may carry
rocprof-compute's `_sum` suffix) and rocprofv3's long layout (Counter_Name, Counter_Value).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping

from ..errors import ParseError
from .aggregate import Launch, display_names, group_counts, kernel_of, sort_by_time, step_labels
from .ncu_csv import read_text
from .ncu_metrics import Counts, parse_number
from .profile_import import ProfileImport
from .skips import Skip, SkipLog

VECTOR = {"F16": "fp16", "F32": "fp32", "F64": "fp64"}
MATRIX = {"F16": "fp16", "BF16": "bf16", "F32": "fp32", "F64": "fp64", "I8": "int8"}
NAME_COLUMNS = ("KernelName", "Kernel_Name", "Kernel-Name", "kernel-name")
ID_COLUMNS = ("Index", "Dispatch_ID", "Dispatch_Id", "Correlation_Id")


def _counter(m: Mapping[str, float], name: str) -> float | None:
    for key in (name, f"{name}_sum", name.replace("TCC_EA_", "TCC_EA0_"),
                name.replace("TCC_EA_", "TCC_EA0_") + "_sum"):
        v = m.get(key)
        if v is not None and v == v:
            return v
    return None


def _seconds(m: Mapping[str, float]) -> float | None:
    for begin, end in (("BeginNs", "EndNs"), ("Start_Timestamp", "End_Timestamp")):
        b, e = m.get(begin), m.get(end)
        if b is not None and e is not None and b == b and e == e:
            return (e - b) * 1e-9
    d = m.get("DurationNs")
    return d * 1e-9 if d is not None and d == d else None


def rocprof_counts(m: Mapping[str, float]) -> Counts:
    """FLOP by precision, bytes by level and seconds of one dispatch."""
    flop: dict[str, float] = {}
    found = False
    for suffix, precision in VECTOR.items():
        parts = [_counter(m, f"SQ_INSTS_VALU_{op}_{suffix}") for op in ("ADD", "MUL", "FMA",
                                                                        "TRANS")]
        if any(p is not None for p in parts):
            found = True
            add, mul, fma, trans = (p or 0.0 for p in parts)
            if add + mul + fma + trans:
                flop[precision] = 64.0 * (add + mul + 2.0 * fma + trans)
    tensor = 0.0
    for suffix, precision in MATRIX.items():
        mops = _counter(m, f"SQ_INSTS_VALU_MFMA_MOPS_{suffix}")
        if mops is not None:
            found = True
            if mops:
                flop[precision] = flop.get(precision, 0.0) + 512.0 * mops
                tensor += 512.0 * mops
    nbytes: dict[str, float] = {}
    rd, rd32 = _counter(m, "TCC_EA_RDREQ"), _counter(m, "TCC_EA_RDREQ_32B")
    wr, wr64 = _counter(m, "TCC_EA_WRREQ"), _counter(m, "TCC_EA_WRREQ_64B")
    if rd is not None or wr is not None:
        rd, rd32, wr, wr64 = (v or 0.0 for v in (rd, rd32, wr, wr64))
        nbytes["DRAM"] = 32 * rd32 + 64 * (rd - rd32) + 64 * wr64 + 32 * (wr - wr64)
    l2 = _counter(m, "TCC_REQ")
    if l2 is not None:
        nbytes["L2"] = 128.0 * l2
    l1 = _counter(m, "TCP_TOTAL_CACHE_ACCESSES")
    if l1 is not None:
        nbytes["L1"] = 64.0 * l1
    seconds = _seconds(m)
    if seconds is None:
        problem = "no time: needs BeginNs/EndNs, Start_Timestamp/End_Timestamp or DurationNs"
    elif seconds <= 0:
        problem = "zero time"
    elif not nbytes:
        problem = "no byte counters (TCC_EA_RDREQ/WRREQ, TCC_REQ, TCP_TOTAL_CACHE_ACCESSES)"
    elif not found:
        problem = "no FLOP counters (SQ_INSTS_VALU_*_F16/F32/F64, SQ_INSTS_VALU_MFMA_MOPS_*)"
    else:
        problem = ""
    return Counts(flop, nbytes, seconds, (), problem, tensor_flop=tensor)


def _column(col: Mapping[str, int], names) -> int | None:
    return next((col[n] for n in names if n in col), None)


def read_rocprof_csv(path: str, log: SkipLog) -> list[tuple[Launch, Counts]]:
    lines = read_text(path).splitlines()
    rows = list(csv.reader(lines))
    h = next((i for i, r in enumerate(rows) if _column({c.strip(): 0 for c in r},
                                                       NAME_COLUMNS) is not None), None)
    if h is None:
        raise ParseError("no rocprof header (a row with KernelName or Kernel_Name) found; "
                         "make it with `rocprof -i counters.txt ./app` or rocprof-compute",
                         path=path)
    header = [c.strip() for c in rows[h]]
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
        for name, text in cells:
            try:
                entry[2][name.strip()] = parse_number(text)
            except ValueError:
                continue   # text columns (arch, signal handles, ...)
    out = []
    for ident, (line, name, metrics) in dispatches.items():
        launch = Launch(path=path, line=line, id=ident, name=name, metrics=metrics)
        out.append((launch, rocprof_counts(metrics)))
    return out


def load_rocprof(paths) -> ProfileImport:
    """Kernels of one or more rocprof CSV files (several = steps), longest first."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    several = len(paths) > 1
    pairs, skips, failed, used = [], [], [], []
    labels = step_labels(paths)
    for i, path in enumerate(paths):
        log = SkipLog(path)
        try:
            groups = group_counts(read_rocprof_csv(path, log), log)
            if not groups:
                why = "; ".join(s.reason for s in log.skips()) or \
                    "the file has a header but no dispatch rows (did the run end early?)"
                raise ParseError(f"no usable dispatch: {why}", path=path)
        except ParseError as exc:
            # as with ncu files: alone it is an error; among several runs (one of which
            # crashed) it is reported and the others are used
            if not several:
                raise
            failed.append(Skip(path, None, str(exc).removeprefix(f"{path}: ")))
            continue
        skips += log.skips()
        used.append(path)
        step = labels[i] if several else None
        pairs += [(g, step, i) for g in groups]
    if not pairs:
        raise ParseError("no file has a usable dispatch: " + "; ".join(str(s) for s in failed))
    names = display_names([(g, s) for g, s, _ in pairs])
    kernels = [kernel_of(g, name, step, i if step else None, source="rocprof")
               for (g, step, i), name in zip(pairs, names, strict=True)]
    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         failed=tuple(failed), files=tuple(used))
