"""rocprof-compute's `roofline.csv` (its empirical roofline benchmark) as a measured roof.

`rocprof-compute profile` (formerly Omniperf) benchmarks the GPU before it profiles and writes
the peaks into the workload folder (workloads/NAME/GPU_MODEL/roofline.csv). The format, from
ROCm/rocprofiler-compute:

- src/utils/roofline_calc.py (`constuct_roof`, `calc_ceilings`): the first column is the
  device id and is dropped before the header is paired with a row; the ceilings are read by
  name: `HBMBw`, `L2Bw`, `L1Bw`, `LDSBw`, `FP32Flops`, `FP64Flops`, `MFMAF16Flops`,
  `MFMABF16Flops`, `MFMAF32Flops`, `MFMAF64Flops`, `MFMAI8Ops`; drawn in "GB/s" and
  "GFLOP/sec" (src/roofline.py). Newer releases (its Python benchmark's `dump_csv`) add
  `MALLBw`, `FP8Flops`, `FP16Flops`, `I8Ops`, `I32Ops`, `I64Ops`, `MFMAF8Flops`,
  `MFMAF4Flops`, `MFMAF6Flops`, `MFMAF6F4Flops`, and a `<name>Low`/`<name>High` pair after
  each column (two spelt otherwise: _MISSPELT). A column this reader does not know is
  named in the notes with its value, not dropped unsaid.
- The benchmark: each value is the mean over 100 timed launches of `work / ms / 1e6`, i.e.
  GB/s or GFLOP/s (GOP/s for the I* columns) for one device; Low/High are mean -/+ the 95 %
  confidence half-width (1.96 x stdev / sqrt(n)). HBMBw is a copy kernel counting read +
  write bytes. An architecture that lacks a data type gets 0 (`PerfMetrics(0, 0, 0)`).
- Rows: one per benchmarked device. rocprof-compute draws device 0 unless told otherwise
  (`device_id` 0 in src/roofline.py), picks the row whose device column equals that id, drops
  N/A, nan, inf and negative cells, and refuses duplicate device ids; rooflab does the same.

Where rooflab's vocabulary (L1 L2 L3 DRAM) has no place: `MALLBw`, MI300's Infinity Cache,
the memory-side last level between L2 and HBM, becomes L3 (as the catalog's MI300X entry
lists its Infinity Cache); `LDSBw` (the per-CU scratchpad, beside L1, which no rocprof kernel
count in rooflab uses) and `L0Bw` are left out and said so in the roof's notes, as are
the fp6 and MX columns (fp6 is no rooflab precision; `F6F4Flops` is the shared fp6/fp4
instruction's rate) and the 32/64-bit integer rates. `MFMAF4Flops` is the fp4 tensor
ceiling.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from ..errors import ParseError
from ..files import csv_dict_reader, csv_reader, read_text, sniff_text
from ..files_kind import is_roofline_header
from ..model.ceiling import Ceiling, Roof
from ..units import fmt_fraction, rate_unit, si

GIGA = 1e9   # GB/s, GFLOP/s, GOP/s -> SI
MEMORY = {"HBMBw": "DRAM", "MALLBw": "L3", "L2Bw": "L2", "L1Bw": "L1"}
# (precision, unit): VALU = vector; MFMA (CDNA) and WMMA (RDNA) matrix cores = tensor
COMPUTE = {
    "FP64Flops": ("fp64", "vector"), "FP32Flops": ("fp32", "vector"),
    "FP16Flops": ("fp16", "vector"), "BF16Flops": ("bf16", "vector"),
    # the VALU fp8 rate: rocm-amdgpu-bench's flops_benchmark<__hip_fp8_storage_t> (E4M3),
    # written as FP8Flops by both benchmarks (dropped unsaid before: review s20 r6 F4)
    "FP8Flops": ("fp8", "vector"),
    "I8Ops": ("int8", "vector"),
    # F4Flops: the fp4 matrix rate (a real MI355X row: 9769632 GFLOP/s), a ceiling of its
    # own since fp4 is a precision (units.PRECISIONS; it was left out as "no such precision")
    **{f"{pipe}{col}": (p, "tensor") for pipe in ("MFMA", "WMMA") for col, p in (
        ("F64Flops", "fp64"), ("F32Flops", "fp32"), ("F16Flops", "fp16"),
        ("BF16Flops", "bf16"), ("F8Flops", "fp8"), ("F4Flops", "fp4"), ("I8Ops", "int8"))},
}
# Known columns with no place in rooflab's vocabulary: kept out, named in the notes.
LEFT_OUT = {
    "LDSBw": "LDS, the per-CU scratchpad beside L1: rooflab's levels are L1 L2 L3 DRAM",
    "L0Bw": "L0, RDNA's per-CU vector cache: no rocprof count in rooflab is taken there",
    "I32Ops": "int32 vector", "I64Ops": "int64 vector",
    **{f"{pipe}{col}": f"{pipe} {what}: no such precision in rooflab"
       for pipe in ("MFMA", "WMMA")
       for col, what in (("F6Flops", "fp6"), ("F6F4Flops", "fp6/fp4"),
                         ("MXF8Flops", "MX-scaled fp8"))},
    "MFMA_FLOPs_F6F4": "MFMA fp6/fp4: no such precision in rooflab",
}
METHOD = "rocprof-compute's empirical roofline benchmark"
MARK = "roofline.csv of rocprof-compute"   # in Roof.source: tells these roofs apart
_SKIP_CELLS = {"", "n/a", "na", "nan", "-nan", "inf", "-inf", "none"}


def is_roofline_csv(path: str) -> bool:
    """A CSV whose first line is rocprof-compute's roofline header (device, HBMBw, ...)."""
    p = Path(path)
    if p.suffix.lower() != ".csv" or not p.is_file():
        return False
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    # decoded as every reader decodes it: a UTF-16 file (Excel, PowerShell's `>`) was read
    # as UTF-8 here and told "not rocprof-compute's roofline.csv" (review s34 E)
    first = sniff_text(head).partition("\n")[0]
    return is_roofline_header(first.split(","))




def _value(text: str, path: str, line: int, column: str) -> float | None:
    """GB/s or GFLOP/s cell -> SI; None for a cell rocprof-compute drops (N/A, nan, inf,
    negative) or a 0 (the benchmark skips a data type the architecture lacks)."""
    t = text.strip()
    if t.lower() in _SKIP_CELLS:
        return None
    try:
        v = float(t)
    except ValueError:
        raise ParseError(f"column {column}: '{t}' is not a number (GB/s or GFLOP/s); "
                         f"re-run `rocprof-compute profile --roof-only` or fix the cell",
                         path=path, line=line) from None
    return v * GIGA if math.isfinite(v) and v > 0 else None


def _rows(path: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    rows = [(n, r) for n, r in enumerate(csv_reader(read_text(path).splitlines()), start=1)
            if any(c.strip() for c in r)]
    if not rows:
        raise ParseError("empty file: no roofline header (device, HBMBw, L2Bw, ...); "
                         "re-run `rocprof-compute profile --roof-only`", path=path)
    (_, header), *data = rows
    header = [c.strip() for c in header]
    missing = [c for c in ("HBMBw",) if c not in header]
    if not header or header[0].lower() != "device":
        missing.insert(0, "device (first column)")
    if not any(c in COMPUTE for c in header):
        missing.append("a compute column (" + ", ".join(
            ("FP64Flops", "FP32Flops", "MFMAF16Flops", "MFMABF16Flops", "MFMAI8Ops")) + ", ...)")
    if missing:
        raise ParseError(f"rocprof-compute roofline.csv without {', '.join(missing)}; its "
                         f"header is {', '.join(header) or 'empty'}; re-run `rocprof-compute "
                         f"profile --roof-only` (src/utils/roofline_calc.py reads these)",
                         path=path, line=1)
    if len(set(header)) != len(header):
        dup = sorted({c for c in header if header.count(c) > 1})
        raise ParseError(f"duplicate column(s) {', '.join(dup)}: which one is the peak is "
                         f"unknowable", path=path, line=1)
    if not data:
        raise ParseError("a roofline header but no device row (did the benchmark end "
                         "early?); re-run `rocprof-compute profile --roof-only`",
                         path=path, line=1)
    for n, row in data:
        if len(row) != len(header):
            raise ParseError(f"row has {len(row)} cells, the header {len(header)}; the file "
                             f"is cut short or edited", path=path, line=n)
    return header, data


def pick_row(path: str, data: list[tuple[int, list[str]]],
             device: str | None = None) -> tuple[int, list[str], list[str]]:
    """The row of device 0 (or `device`), as rocprof-compute picks it by the value of the
    device column; the first row when no device 0 was benchmarked. Also the other ids."""
    ids = [row[0].strip() for _, row in data]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ParseError(f"device id(s) {', '.join(dup)} appear twice (two benchmark runs "
                         f"appended?): rocprof-compute refuses such a file; keep one row per "
                         f"device", path=path)
    want = device if device is not None else "0"
    at = next((k for k, i in enumerate(ids) if i == want), None)
    if at is None:
        if device is not None:
            raise ParseError(f"no row for device {device}; the file has device(s) "
                             f"{', '.join(ids)}", path=path)
        at = 0
    n, row = data[at]
    return n, row, [i for k, i in enumerate(ids) if k != at]


# Low/High headers as the tool spells them, beside the regular f"{col}Low"/f"{col}High":
# ROCm/rocm-amdgpu-bench roofline.cpp (the `roofline` binary rocprof-compute runs) writes
# `ofile << "device,HBMBw,HBMBwLow,hbmBwHigh,..."` and `"MFMAI8Ops,MFMAFI8OpsLow,
# MFMAI8OpsHigh\n"`, and the real MI355X --roof-only row quoted in rocprofiler-compute's
# tests has `hbmBwHigh` too: looked up exactly, the DRAM ceiling lost its interval (review
# s20 r6 F5). Case is ignored, and the stray F of MFMAFI8OpsLow is known by name.
_MISSPELT = {"MFMAI8OpsLow": "MFMAFI8OpsLow"}


def _interval(header: list[str], row: list[str], col: str) -> str:
    """rocprof-compute's 95 % confidence interval of the mean, when the file has it."""
    cells = {c.lower(): row[i].strip() for i, c in enumerate(header)}

    def cell(name: str):
        got = cells.get(name.lower())
        return got if got is not None or name not in _MISSPELT else cells.get(
            _MISSPELT[name].lower())

    low, high = cell(f"{col}Low"), cell(f"{col}High")
    try:
        lo, hi = float(low), float(high)
    except (TypeError, ValueError):
        return ""
    unit = "GB/s" if col.endswith("Bw") else "GOP/s" if col.endswith("Ops") else "GFLOP/s"
    return f", 95 % confidence {lo:g}-{hi:g} {unit}" if 0 < lo <= hi else ""


def _is_bound(col: str, header: list[str]) -> bool:
    """A Low/High column of another one (any case, and MFMAFI8OpsLow)."""
    stems = {c.lower() for c in header}
    return col in _MISSPELT.values() or any(
        col.lower() == stem + end for stem in stems for end in ("low", "high"))


def roofline_ceilings(path: str, header: list[str], row: list[str], line: int):
    """Compute and memory ceilings of one device row, and what was left out."""
    compute: dict[tuple[str, str], Ceiling] = {}
    memory: list[Ceiling] = []
    left: list[str] = []
    for i, col in enumerate(header[1:], start=1):
        if col in LEFT_OUT:
            v = _value(row[i], path, line, col)
            if v is not None:
                unit = ("B/s" if col.endswith("Bw") else "OP/s" if col.endswith("Ops")
                        else "FLOP/s")
                left.append(f"{col} {si(v, unit)} ({LEFT_OUT[col]})")
            continue
        if col not in MEMORY and col not in COMPUTE:
            if not _is_bound(col, header):   # a column of a release newer than this reader
                try:
                    v = _value(row[i], path, line, col)
                except ParseError:   # a column no ceiling comes from: no reason to refuse
                    v = None
                if v is not None:
                    left.append(f"{col} {row[i].strip()} (a column this reader does not "
                                f"know)")
            continue
        v = _value(row[i], path, line, col)
        if v is None:
            continue
        method = f"{METHOD}, column {col} (mean of its runs{_interval(header, row, col)})"
        src = f"{MARK}: {path}"
        if col in MEMORY:
            memory.append(Ceiling(value=v, level=MEMORY[col], provenance="measured",
                                  source=src, method=method))
            continue
        precision, unit = COMPUTE[col]
        c = Ceiling(value=v, precision=precision, unit=unit, provenance="measured",
                    source=src, method=method)
        old = compute.get((precision, unit))
        compute[(precision, unit)] = c if old is None or c.value > old.value else old
    return tuple(compute.values()), tuple(memory), left


def device_name(path: str) -> str:
    """The GPU the workload folder names: sysinfo.csv's gpu_model (rocprof-compute writes it
    beside roofline.csv), else the folder itself (workloads/NAME/GPU_MODEL/)."""
    folder = Path(path).resolve().parent
    info = folder / "sysinfo.csv"
    if info.is_file():
        try:
            rows = list(csv_dict_reader(read_text(str(info)).splitlines()))
        except (ParseError, csv.Error):
            rows = []
        for key in ("gpu_model", "name", "gpu_name"):
            text = (rows[0].get(key) or "").strip() if rows else ""
            if text:
                return text
    return folder.name


def _catalog_roof(name: str) -> Roof | None:
    try:
        from ..hardware.catalog import match_device_name
    except ImportError:
        return None
    dev = match_device_name(name) if name else None
    return dev.roof if dev is not None else None


def flag_above_nominal(ceilings, nominal: Roof | None) -> tuple[tuple[Ceiling, ...], list[str]]:
    """A measured peak above the matched catalog entry's nominal one gets a warning (never
    clipped): the catalog may list a lower clock, or the benchmark counted differently."""
    from dataclasses import replace

    out, said = [], []
    for c in ceilings:
        nom = (nominal.find_compute(c.precision, c.unit) if c.is_compute
               else nominal.find_memory(c.level)) if nominal is not None else None
        if nom is not None and c.value > nom.value:
            unit = rate_unit(c.precision) if c.is_compute else "B/s"
            note = (f"measured {c.label} {si(c.value, unit)} is above the nominal "
                    f"{si(nom.value, unit)} of '{nominal.name}' "
                    f"({fmt_fraction(c.value / nom.value)}); check the catalog entry or the "
                    f"benchmark")
            c = replace(c, warnings=c.warnings + (note,))
            said.append(note)
        out.append(c)
    return tuple(out), said


def load_roofline_csv(path: str, device: str | None = None) -> Roof:
    """The measured roof in a rocprof-compute roofline.csv (device 0's row by default)."""
    header, data = _rows(path)
    line, row, others = pick_row(path, data, device)
    compute, memory, left = roofline_ceilings(path, header, row, line)
    dev = row[0].strip()
    if not memory or not compute:
        what = "bandwidth (HBMBw, L2Bw, L1Bw)" if not memory else "compute peak"
        raise ParseError(f"device {dev}'s row has no usable {what}: every cell is 0, N/A, "
                         f"nan or inf; re-run `rocprof-compute profile --roof-only`",
                         path=path, line=line)
    gpu = device_name(path)
    nominal = _catalog_roof(gpu)
    compute, above_c = flag_above_nominal(compute, nominal)
    memory, above_m = flag_above_nominal(memory, nominal)
    label = nominal.name if nominal is not None else (gpu or "AMD GPU")
    notes = [f"measured by rocprof-compute on the profiled machine (device {dev}); each "
             f"value is the mean of its benchmark runs, GB/s and GFLOP/s in the file"]
    if any(c.level == "L3" for c in memory):
        notes.append("MALLBw (MI300's Infinity Cache, between L2 and HBM) is the L3 ceiling")
    if left:
        notes.append("left out, no place among rooflab's levels/precisions: " + "; ".join(left))
    if others:
        notes.append(f"the file also holds device(s) {', '.join(others)}; the roof is device "
                     f"{dev}'s, the one rocprof-compute draws by default")
    notes += above_c + above_m
    return Roof(name=f"{label} (rocprof-compute roofline, device {dev})", kind="measured",
                compute=compute, memory=memory,
                source=f"{MARK}: {path}, device {dev} ({METHOD})", notes=tuple(notes))


def is_roofline_roof(roof: Roof) -> bool:
    return roof.source.startswith(MARK)


def above_nominal_line(roof: Roof) -> str:
    """'; warning: ...' for a roofline.csv roof with a peak above its catalog nominal."""
    said = [n for c in (*roof.compute, *roof.memory) for n in c.warnings
            if "above the nominal" in n]
    return f"; warning: {said[0]}" + (f" (and {len(said) - 1} more)" if len(said) > 1 else "") \
        if said and is_roofline_roof(roof) else ""


def workload_roofline(paths) -> str | None:
    """The roofline.csv of the rocprof-compute workload folder given (the folder itself, or
    its pmc_perf.csv), when exactly one folder is given; None otherwise."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    if len(paths) != 1:
        return None
    p = Path(paths[0])
    folder = p if p.is_dir() else p.parent if p.name == "pmc_perf.csv" else None
    if folder is None or not (folder / "pmc_perf.csv").is_file():
        return None
    found = folder / "roofline.csv"
    return str(found) if is_roofline_csv(str(found)) else None
