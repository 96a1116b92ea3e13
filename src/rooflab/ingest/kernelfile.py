"""Kernel lists in rooflab's own formats: JSON (the vocabulary) and a simple CSV.

CSV columns (header required; unknown columns are kept in meta):
  name, flop, bytes, seconds[, precision=fp32][, level=DRAM][, calls=1][, unit]
Instead of seconds, a `gflops` column (achieved GFLOP/s, seed 000 §4.2's "实测性能 (GFLOPS)"
column) gives seconds = flop / (gflops x 1e9), marked derived.

A kernel measured at several memory levels (hierarchical roofline) is one row per level:
rows with the same name, precision, flop, seconds, calls and unit and different levels
are one kernel with bytes at each level (its time is counted once, not once per level).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError, ParseError
from ..files import load_json, read_text
from ..model.kernel import Kernel
from ..model.schema import check_schema_version, kernel_from_dict, level_name, precision_name

CSV_REQUIRED = ("name", "flop", "bytes")
CSV_KNOWN = CSV_REQUIRED + ("seconds", "precision", "level", "calls", "unit", "gflops")


def load_kernels(path: str) -> tuple[Kernel, ...]:
    """Kernels from a .json (list, or object with 'kernels') or .csv file."""
    p = Path(path)
    if not p.exists():
        raise ParseError("file not found", path=path)
    if p.suffix.lower() == ".csv":
        return kernels_from_csv(read_text(p), path)
    if p.is_file() and _gzipped(p):
        # a gzipped torch.profiler trace (tensorboard_trace_handler's *.pt.trace.json.gz):
        # read as `rooflab torch` reads it (its errors say when it is not a trace)
        from .torch_trace import load_torch_trace

        return load_torch_trace(path).kernels
    data = load_json(path)
    try:
        check_schema_version(data, path)
    except InputError as exc:
        raise ParseError(str(exc)) from None
    if isinstance(data, dict) and "kernels" not in data and isinstance(data.get("after"), dict):
        # `rooflab whatif -o w.json`: its predicted kernels, so `rooflab compare b.json w.json`
        # and `rooflab report w.json` read a what-if as they read any kernel file
        data = data["after"]
    if isinstance(data, dict) and "kernels" not in data and isinstance(data.get("analysis"), dict):
        data = data["analysis"]      # `rooflab demo --json`: {"profile", "analysis", "files"}
    if isinstance(data, dict) and "matches" in data and "kernels" not in data:
        raise ParseError("this is a comparison (`rooflab compare` output), not a list of "
                         "kernels; pass the kernel files it compared", path=path)
    items = data.get("kernels") if isinstance(data, dict) else data
    if isinstance(data, dict) and items is None and (
            {"measured", "nominal"} & set(data) or {"compute", "memory"} <= set(data)):
        raise ParseError(f"this is a machine profile or roof, not a list of kernels: pass it "
                         f"as the roof, e.g. `--on {path}` (`rooflab plot --on {path} -o "
                         f"chart.png` draws it alone)", path=path)
    if isinstance(data, dict) and items is None and isinstance(data.get("traceEvents"), list):
        # A torch.profiler chrome trace: read as `rooflab torch TRACE` reads it, so report,
        # compare and plot take a trace directly instead of failing on its shape.
        from .torch_trace import load_torch_trace

        return load_torch_trace(path).kernels
    if not isinstance(items, list):
        raise ParseError("expected a list of kernels or an object with a 'kernels' list",
                         path=path)
    out = []
    for i, item in enumerate(items):
        try:
            out.append(kernel_from_dict(item, where=f"kernels[{i}]"))
        except InputError as exc:
            raise ParseError(str(exc), path=path) from None
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    return _merge_levels(out)


def save_kernels(path: str | os.PathLike, kernels: Kernel | Iterable[Kernel]) -> Path:
    """Write kernels (one, or several) as a rooflab kernel file, JSON, atomically:
    load_kernels(path) reads back equal Kernels, and `rooflab report PATH --on ...` reads it."""
    from ..files import dumps_json, write_atomic
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict

    if Path(path).suffix.lower() != ".json":
        raise InputError(f"kernel file '{path}' must end in .json (load_kernels reads it by "
                         f"its suffix)")
    kernels = (kernels,) if isinstance(kernels, Kernel) else tuple(kernels)
    if not kernels or not all(isinstance(k, Kernel) for k in kernels):
        raise InputError(f"save_kernels(): give one or more Kernels; got {kernels!r:.80}")
    doc = {"schema_version": SCHEMA_VERSION, "kernels": [kernel_to_dict(k) for k in kernels]}
    try:
        text = dumps_json(doc)
    except (TypeError, ValueError) as exc:   # a meta value JSON cannot hold (NaN, an object)
        raise InputError(f"save_kernels(): {exc}; keep meta to numbers, strings, lists and "
                         f"dicts") from None
    return write_atomic(path, text)


def _gzipped(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False   # load_json says why it cannot be read


def _merge_levels(kernels: list[Kernel]) -> tuple[Kernel, ...]:
    """Rows that are one kernel seen at different memory levels become one Kernel."""
    from dataclasses import replace

    out: list[Kernel] = []
    index: dict[tuple, int] = {}
    for k in kernels:
        key = (k.name, tuple(k.flop.items()), k.seconds, k.calls, k.unit)
        i = index.get(key)
        if i is not None and not set(k.bytes) & set(out[i].bytes):
            out[i] = replace(out[i], bytes={**out[i].bytes, **k.bytes},
                             meta={**k.meta, **out[i].meta})
            continue
        index[key] = len(out)
        out.append(k)
    return tuple(out)


def _number(row: dict, field: str, path: str, line: int, default: float | None = None):
    text = (row.get(field) or "").strip().replace(",", "")
    if not text:
        if default is not None:
            return default
        raise ParseError(f"field '{field}' is empty", path=path, line=line)
    try:
        return float(text)
    except ValueError:
        raise ParseError(f"field '{field}' is not a number: '{text}'", path=path,
                         line=line) from None


def _extra_columns(row: dict[str, str]) -> dict[str, object]:
    """Columns beyond the known ones go to meta (an `op` column names the op kind that
    advice and sanity checks read; `weight_bytes` feeds the what-ifs), numbers as floats."""
    meta: dict[str, object] = {}
    for key, value in row.items():
        value = value.strip()
        if key in CSV_KNOWN or not value:
            continue
        try:
            meta[key] = float(value.replace("_", ""))
        except ValueError:
            meta[key] = value
    return meta


def kernels_from_csv(text: str, path: str = "<csv>") -> tuple[Kernel, ...]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    # the analysis CSVs rooflab writes (ncu/torch/rocprof/bench -o x.csv) name the kernel
    # 'kernel' and give its precision (llm's CSV does not: it stays refused, not read as fp32)
    alias = ("kernel" if "name" not in header and {"kernel", "precision"} <= set(header)
             else None)
    if alias:
        header.append("name")
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing and {"phase", "kernel"} <= set(header):
        raise ParseError("this is `rooflab llm`'s CSV (a table, without precisions or times); "
                         "read its kernels from `rooflab llm ... -o decode.json` instead",
                         path=path, line=1)
    if missing and len(header) == 1 and ";" in header[0]:
        # a spreadsheet's export in a locale whose decimal mark is ',' (and whose numbers
        # would then read wrongly here): ask for comma-separated values, '.' decimals
        raise ParseError("the columns are separated by ';': save the sheet as comma-separated "
                         "CSV with '.' as the decimal mark", path=path, line=1)
    if missing:
        raise ParseError(f"missing column(s) {', '.join(missing)}; the header needs "
                         f"name,flop,bytes[,seconds,precision,level,calls,unit]",
                         path=path, line=1)
    out = []
    for lineno, raw in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "") for k, v in raw.items() if k}
        if alias:
            row["name"] = row.pop(alias)
        if not any(v.strip() for v in row.values()):
            continue
        seconds = _number(row, "seconds", path, lineno, default=0.0) or None
        timing = "measured"
        gflops = _number(row, "gflops", path, lineno, default=0.0)
        if gflops and seconds:
            raise ParseError("give 'seconds' or 'gflops', not both", path=path, line=lineno)
        if gflops:
            if gflops < 0:
                raise ParseError(f"field 'gflops' must be positive; got {gflops:g}",
                                 path=path, line=lineno)
            seconds = _number(row, "flop", path, lineno) / (gflops * 1e9) or None
            timing = "derived"       # from the achieved rate the user measured
        calls = _number(row, "calls", path, lineno, default=1)
        if calls != int(calls):
            raise ParseError(f"field 'calls' must be a whole number of launches; got {calls:g}",
                             path=path, line=lineno)
        try:
            out.append(Kernel(
                name=row["name"].strip(),
                flop={precision_name((row.get("precision") or "fp32").strip()):
                      _number(row, "flop", path, lineno)},
                bytes={level_name((row.get("level") or "DRAM").strip()):
                       _number(row, "bytes", path, lineno)},
                seconds=seconds, calls=int(calls),
                unit=(row.get("unit") or "").strip() or None,
                provenance={"flop": "given", "bytes": "given",
                            **({"seconds": timing} if seconds else {})},
                meta=_extra_columns(row),
            ))
        except InputError as exc:
            raise ParseError(str(exc), path=path, line=lineno) from None
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    return _merge_levels(out)
