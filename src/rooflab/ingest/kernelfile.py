"""Kernel lists in rooflab's own formats: JSON (the vocabulary) and a simple CSV.

CSV columns (header required; unknown columns are kept in meta):
  name, flop, bytes, seconds[, precision=fp32][, level=DRAM][, calls=1][, unit]

A kernel measured at several memory levels (hierarchical roofline) is one row per level:
rows with the same name, precision, flop, seconds, calls and unit and different levels
are one kernel with bytes at each level (its time is counted once, not once per level).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import InputError, ParseError
from ..files import load_json, read_text
from ..model.kernel import Kernel
from ..model.schema import kernel_from_dict

CSV_REQUIRED = ("name", "flop", "bytes")
CSV_KNOWN = CSV_REQUIRED + ("seconds", "precision", "level", "calls", "unit")


def load_kernels(path: str) -> tuple[Kernel, ...]:
    """Kernels from a .json (list, or object with 'kernels') or .csv file."""
    p = Path(path)
    if not p.exists():
        raise ParseError("file not found", path=path)
    if p.suffix.lower() == ".csv":
        return kernels_from_csv(read_text(p), path)
    data = load_json(path)
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
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing:
        raise ParseError(f"missing column(s) {', '.join(missing)}; the header needs "
                         f"name,flop,bytes[,seconds,precision,level,calls,unit]",
                         path=path, line=1)
    out = []
    for lineno, raw in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "") for k, v in raw.items() if k}
        if not any(v.strip() for v in row.values()):
            continue
        seconds = _number(row, "seconds", path, lineno, default=0.0) or None
        calls = _number(row, "calls", path, lineno, default=1)
        if calls != int(calls):
            raise ParseError(f"field 'calls' must be a whole number of launches; got {calls:g}",
                             path=path, line=lineno)
        try:
            out.append(Kernel(
                name=row["name"].strip(),
                flop={(row.get("precision") or "fp32").strip(): _number(row, "flop", path, lineno)},
                bytes={(row.get("level") or "DRAM").strip(): _number(row, "bytes", path, lineno)},
                seconds=seconds, calls=int(calls),
                unit=(row.get("unit") or "").strip() or None,
                provenance={"flop": "given", "bytes": "given",
                            **({"seconds": "measured"} if seconds else {})},
                meta=_extra_columns(row),
            ))
        except InputError as exc:
            raise ParseError(str(exc), path=path, line=lineno) from None
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    return _merge_levels(out)
