"""Kernel lists in rooflab's own formats: JSON (the vocabulary) and a simple CSV.

CSV columns (header required; unknown columns are kept in meta, and one that looks like a
misspelt known column or a time in another unit -- 'sconds', 'time_ms' -- is warned about):
  name, flop, bytes, seconds[, precision=fp32][, level=DRAM][, calls=1][, unit][, threads]
A kernel without a precision is judged as fp32, with a note naming it (and the precision a
BLAS-style name says: dgemm -> fp64). `threads` (CSV column, JSON kernel field, or the JSON
document's top-level field for all its kernels) is the thread count the kernel ran on, kept
in Kernel.meta["threads"] as rooflab.measure keeps it; cli/inputs.py picks a scaling
profile's row for it.
Instead of seconds, a `gflops` column (achieved GFLOP/s, seed 000 §4.2's "实测性能 (GFLOPS)"
column) gives seconds = flop / (gflops x 1e9), marked derived.
flop_<precision> columns (flop_fp64, flop_fp32, ...: the profiler verbs' -o x.csv writes
them) give a kernel's FLOP in several precisions; flop is then their sum.

A kernel measured at several memory levels (hierarchical roofline) is one row per level:
rows with the same name, precision, flop, seconds, calls and unit and different levels
are one kernel with bytes at each level (its time is counted once, not once per level).

Every verb that takes a kernel file also takes a profiler's file, told by its content (not
only its name): Nsight Compute CSV pages and .ncu-rep reports, rocprof / rocprofv3 /
rocprof-compute counter CSVs and their folders, torch.profiler chrome traces (.json,
.json.gz). They are read as `rooflab ncu`, `rooflab rocprof` and `rooflab torch` read them.
Which file is which (file_kind) and reading the profilers' files is profile_files.py; the
checks and level joins both readers share are kernelfile_rows.py.
"""

from __future__ import annotations

import csv
import difflib
import io
import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError, ParseError
from ..files import load_json, read_text
from ..model.kernel import Kernel, names_warned_by_reader
from ..model.schema import (
    check_schema_version,
    document_kind,
    kernel_from_dict,
    kernels_part,
    level_name,
    precision_name,
    time_unit,
    unknown_field_words,
    unknown_fields,
)
from ..units import canonical_dtype
from .kernelfile_rows import (  # noqa: F401  (AI_TOLERANCE, VECTOR_OPS re-exported)
    AI_TOLERANCE,
    DEFAULT_PRECISION,
    VECTOR_OPS,
    _check_read,
    _given_ai,
    _merge_levels,
    _with_op_unit,
    note_default_precision,
    threads_value,
    unknown_fields_message,
    warn_file,
)
from .profile_files import (  # noqa: F401  (re-exported: the verbs import them from here)
    PROFILERS,
    file_kind,
    join_imports,
    load_profiler_files,
    load_profiles,
)

CSV_REQUIRED = ("name", "flop", "bytes")
CSV_KNOWN = CSV_REQUIRED + ("seconds", "precision", "level", "calls", "unit", "gflops",
                            "threads")
# Said by every error about a file that is none of the formats read here.
ACCEPTED = ("rooflab reads: a kernel file (.json, or .csv with name,flop,bytes[,seconds,"
            "precision,level,calls,unit,threads]), an analysis JSON from another verb, an Nsight "
            "Compute CSV or .ncu-rep, a rocprof counter CSV (results.csv, "
            "*_counter_collection.csv, pmc_perf.csv) or its folder, or a torch.profiler trace "
            "(.json, .json.gz)")


def load_kernels(path: str | os.PathLike) -> tuple[Kernel, ...]:
    """Kernels from a .json (list, or object with 'kernels') or .csv file, or from any
    profiler's file or folder (`file_kind`). A kernel field (a CSV column) that is not read
    and looks like a mistake gets one `warning:` line per file on stderr (warn_file)."""
    path = os.fspath(path)    # a pathlib.Path from Python as well as the CLI's str
    p = Path(path)
    if not p.exists():
        raise ParseError("file not found", path=path)
    kind = file_kind(path)
    if kind != "rooflab":
        # a profiler's file (ncu, rocprof, a torch trace, gzipped or not), read as its own
        # verb reads it: `rooflab report results.csv` once said "missing column(s) name..."
        return load_profiler_files(kind, [path]).kernels
    if p.suffix.lower() == ".csv":
        return kernels_from_csv(read_text(p), path)
    data = _read_json(p, path)
    if document_kind(data) == "torch_trace":
        # A torch.profiler chrome trace: read as `rooflab torch TRACE` reads it, so report,
        # compare and plot take a trace directly instead of failing on its shape.
        from .torch_trace import load_torch_trace

        return load_torch_trace(path).kernels
    return kernels_from_items(_kernel_items(data, path), path, _file_threads(data, path))


def _file_threads(data: object, path: str) -> int | None:
    """The document's top-level "threads" (every kernel's thread count unless a kernel
    gives its own), None when absent."""
    if not isinstance(data, dict) or data.get("threads") is None:
        return None
    try:
        return threads_value(data["threads"], "top-level field")
    except InputError as exc:
        raise ParseError(str(exc), path=path) from None


# What a document that holds no kernels is, and what to pass instead (model.schema kinds)
NOT_KERNELS = {
    "compare": "this is a comparison (`rooflab compare` output), not a list of kernels; pass "
               "the kernel files it compared",
    "choose": "this is a hardware ranking (`rooflab choose` output), not a list of kernels; "
              "pass the kernel files it ranked",
    "devices": "this is a device list (`rooflab specs --json` output), not a list of "
               "kernels; pass kernel files, and name devices with --on",
    "profile": "this is a machine profile or roof, not a list of kernels: pass it as the "
               "roof, e.g. `--on {path}` (`rooflab plot --on {path} -o chart.png` draws it "
               "alone)",
}
NOT_KERNELS["roof"] = NOT_KERNELS["profile"]


def _read_json(p: Path, path: str) -> object:
    """The parsed JSON; a file that is no JSON at all (a picture, a binary) is told what
    rooflab reads (a JSON file cut short keeps its own error)."""
    try:
        data = load_json(path)
    except ParseError as exc:
        # A picture ("is a PNG image, not a text file; give the .json") says enough.
        text = str(exc)
        foreign = ("invalid JSON" in text and not _starts_like_json(p)) or \
            "not a UTF-8 text file" in text or "is a directory" in text
        if not foreign:
            raise
        where = f"{exc.path}:{exc.line}: " if exc.line is not None else f"{exc.path}: "
        raise ParseError(f"{text.removeprefix(where)}; {ACCEPTED}", path=exc.path,
                         line=exc.line) from None
    try:
        check_schema_version(data, path)
    except InputError as exc:
        raise ParseError(str(exc)) from None
    return data


def _kernel_items(data: object, path: str) -> list:
    """The kernel dicts of a document (model.schema.kernels_part: a kernel list, an
    analysis, `rooflab whatif -o w.json`'s predicted kernels, `rooflab demo --json`'s), or
    the error that says what the document is instead."""
    kind = document_kind(data)
    if kind in NOT_KERNELS:
        raise ParseError(NOT_KERNELS[kind].format(path=path), path=path)
    items = kernels_part(data)
    if not isinstance(items, list):
        raise ParseError(f"expected a list of kernels or an object with a 'kernels' list; "
                         f"{ACCEPTED}", path=path)
    return items


# unknown precisions and levels: said once per file by _check_read, not per Kernel
@names_warned_by_reader()
def kernels_from_items(items: list, path: str,
                       threads: int | None = None) -> tuple[Kernel, ...]:
    """Kernels from a JSON document's kernel dicts, with the warnings and checks every
    reader gives (unknown fields, a given AI that disagrees, levels joined, a precision
    left to the fp32 default). threads: the document's own thread count, for the kernels
    that give none."""
    out = []
    odd: list[tuple[str, tuple[str, ...], str]] = []   # kernels with unknown fields
    given_ai: list[float | None] = []
    defaulted: list[tuple[tuple[int | None, str], str]] = []
    for i, item in enumerate(items):
        where = f"kernels[{i}]"
        try:
            item, count = _threads_field(item, where, threads)
            out.append(_with_threads(kernel_from_dict(item, where=where), count))
        except InputError as exc:
            raise ParseError(str(exc), path=path) from None
        if _bare_flop(item) and out[-1].total_flop > 0:   # 0 FLOP: no precision to judge
            defaulted.append(((None, f"{where} '{out[-1].name}'"), out[-1].name))
        words = unknown_field_words(item)
        if words:
            odd.append((f"kernels[{i}] '{out[-1].name}'", tuple(unknown_fields(item)), words))
        given_ai.append(_given_ai(item.get("ai") if isinstance(item, dict) else None))
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    if odd:
        warn_file(path, unknown_fields_message(odd))
    wheres = [(None, f"kernels[{i}] '{k.name}'") for i, k in enumerate(out)]
    _check_read(path, out, wheres, given_ai)
    # the example keys the first such kernel's own FLOP (review 17a N13: a fixed 2.7e8
    # read as if it were the user's number)
    first = next((k for k in out if k.name == defaulted[0][1]), None) if defaulted else None
    example = (f"{first.total_flop:.6g}".replace("e+0", "e").replace("e+", "e")
               if first is not None else "2.7e8")
    note_default_precision(path, defaulted, 'key the FLOP by precision, e.g. "flop": '
                                            f'{{"fp64": {example}}}')
    return _merge_levels([_with_op_unit(k) for k in out], path, wheres)


def _bare_flop(item: object) -> bool:
    """Whether a kernel dict gives its FLOP as a bare number, which is read as fp32."""
    flop = item.get("flop") if isinstance(item, dict) else None
    return isinstance(flop, (int, float, str)) and not isinstance(flop, bool)


def _threads_field(item: object, where: str, default: int | None
                   ) -> tuple[object, int | None]:
    """The kernel dict without its "threads" field (kernel_from_dict would call it unknown)
    and the thread count: its own, else meta's, else the document's."""
    if not isinstance(item, dict):
        return item, default
    if "threads" in item:
        item = dict(item)
        value = item.pop("threads")
        return item, None if value is None else threads_value(value, f"{where}")
    meta = item.get("meta")
    if isinstance(meta, dict) and meta.get("threads") is not None:
        return item, threads_value(meta["threads"], f"{where}: meta")
    return item, default


def _with_threads(k: Kernel, threads: int | None) -> Kernel:
    """k with meta["threads"] = threads (an int, checked), as rooflab.measure records it."""
    if threads is None:
        return k
    from dataclasses import replace

    return replace(k, meta={**k.meta, "threads": threads})


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


def _starts_like_json(p: Path) -> bool:
    """Whether the text begins as JSON does: a JSON file cut short keeps its own error."""
    try:
        with p.open("rb") as fh:
            return fh.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
    except OSError:
        return False



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


# unknown precisions and levels: said once per file by _check_read, not per Kernel
@names_warned_by_reader()
def kernels_from_csv(text: str, path: str = "<csv>") -> tuple[Kernel, ...]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    _check_header(header, path)
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
    if missing and "ai" in header:
        # seed 000 §4.3's (AI, GFLOPS) pairs: a point with no FLOP or bytes has no floor,
        # no time share and nothing a what-if could change
        raise ParseError(f"missing column(s) {', '.join(missing)}: rooflab places a kernel "
                         f"from its FLOP and bytes (AI = flop / bytes); AI alone gives no "
                         f"floor and no time share. Give flop and bytes columns, e.g. "
                         f"name,flop,bytes,gflops", path=path, line=1)
    if missing:
        raise ParseError(f"missing column(s) {', '.join(missing)}; {ACCEPTED}",
                         path=path, line=1)
    split = _flop_columns(header)
    out = []
    first: tuple[int, dict[str, str]] | None = None   # the first row, for the warning's example
    wheres: list[tuple[int | None, str]] = []
    given_ai: list[float | None] = []
    defaulted: list[tuple[tuple[int | None, str], str]] = []   # no precision: fp32
    for lineno, raw in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "") for k, v in raw.items() if k}
        if alias:
            row["name"] = row.pop(alias)
        if not any(v.strip() for v in row.values()):
            continue
        lineno = reader.line_num   # a quoted cell may span lines: the row's last line
        _check_cells(raw, reader.fieldnames or [], path, lineno)
        first = first or (lineno, row)
        seconds = _number(row, "seconds", path, lineno, default=0.0) or None
        if (row.get("seconds") or "").strip() and not (seconds or 0) > 0:
            # 0 s is no time (the JSON reader refuses it too); only an empty cell is untimed
            raise ParseError(f"field 'seconds' must be > 0; got "
                             f"{_number(row, 'seconds', path, lineno):g} (leave the cell "
                             f"empty for an untimed kernel)", path=path, line=lineno)
        timing = "measured"
        gflops = _number(row, "gflops", path, lineno, default=0.0)
        if gflops and seconds:
            raise ParseError("give 'seconds' or 'gflops', not both", path=path, line=lineno)
        if (row.get("gflops") or "").strip() and gflops <= 0:
            # 0 GFLOP/s is no rate: it would be an infinite time, not an untimed kernel
            raise ParseError(f"field 'gflops' must be > 0; got {gflops:g} (leave the cell "
                             f"empty for an untimed kernel)", path=path, line=lineno)
        if gflops:
            seconds = _number(row, "flop", path, lineno) / (gflops * 1e9) or None
            timing = "derived"       # from the achieved rate the user measured
        calls = _number(row, "calls", path, lineno, default=1)
        if calls != int(calls):
            raise ParseError(f"field 'calls' must be a whole number of launches; got {calls:g}",
                             path=path, line=lineno)
        parts = _split_flop(row, split, path, lineno)
        given = (row.get("precision") or "").strip()
        try:
            meta = _extra_columns({c: v for c, v in row.items() if c not in split})
            if (row.get("threads") or "").strip():
                meta["threads"] = threads_value(row["threads"],
                                                f"kernel '{row['name'].strip()}'")
            out.append(Kernel(
                name=row["name"].strip(),
                flop=(parts or {precision_name(given or DEFAULT_PRECISION):
                                _number(row, "flop", path, lineno)}),
                bytes={level_name((row.get("level") or "DRAM").strip()):
                       _number(row, "bytes", path, lineno)},
                seconds=seconds, calls=int(calls),
                unit=(row.get("unit") or "").strip() or None,
                provenance={"flop": "given", "bytes": "given",
                            **({"seconds": timing} if seconds else {})},
                meta=meta,
            ))
        except InputError as exc:
            raise ParseError(str(exc), path=path, line=lineno) from None
        wheres.append((lineno, f"kernel '{out[-1].name}'"))
        given_ai.append(_given_ai(row.get("ai")))
        if not parts and not given and out[-1].total_flop > 0:
            defaulted.append(((lineno, f"kernel '{out[-1].name}'"), out[-1].name))
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    hints = _column_hints(header, first)
    if hints:
        warn_file(path, f"{'; '.join(hints)} (columns read: {', '.join(CSV_KNOWN)}; any "
                        f"other is kept in the kernels' meta)", line=1)
    _check_read(path, out, wheres, given_ai)
    note_default_precision(path, defaulted, "add a precision column (fp64, fp32, ...)"
                           if "precision" not in header else "fill its precision cell")
    return _merge_levels([_with_op_unit(k) for k in out], path, wheres)


def _check_header(header: list[str], path: str) -> None:
    """A column named twice is refused: csv.DictReader keeps the last one's cells, so the
    first was dropped without a word (a 'name,name,...' header named the kernel 'j')."""
    seen: dict[str, int] = {}
    for i, col in enumerate(header, start=1):
        if col and col in seen:
            raise ParseError(f"column '{col}' appears twice in the header (columns "
                             f"{seen[col]} and {i}); give each column once", path=path, line=1)
        seen[col] = i


def _check_cells(raw: dict, fieldnames: list[str], path: str, line: int) -> None:
    """A row with fewer or more cells than the header is refused: a missing 'seconds' cell
    made the kernel untimed, an extra cell was dropped, both without a word. Empty cells
    past the header (a sheet's trailing commas) hold nothing and are let through."""
    extra = raw.get(None) or []
    short = any(v is None for k, v in raw.items() if k is not None)
    if not short and not any(c.strip() for c in extra):
        return
    cells = len(extra) + sum(v is not None for k, v in raw.items() if k is not None)
    raise ParseError(f"{cells} cells, the header has {len(fieldnames)} "
                     f"({','.join(h.strip() for h in fieldnames)}); give each column one cell "
                     f"(an empty one for no value)", path=path, line=line)


def _flop_columns(header: list[str]) -> dict[str, str]:
    """{column: precision} of the flop_<precision> columns (flop_fp64, flop_fp32, ...) that
    the profiler verbs' -o x.csv writes for a kernel with FLOP in several precisions."""
    import re

    out = {}
    for col in header:
        if col.startswith("flop_"):
            name = col.removeprefix("flop_")
            try:
                out[col] = canonical_dtype(name)
            except InputError:
                # a precision rooflab has no ceiling for (fp6, complex64) is kept as named,
                # as in a precision column; flop_total, flop_per_s stay meta as before
                if re.fullmatch(r"(fp|bf|tf|int|uint|mxfp|nvfp|complex)\d+\w*", name):
                    out[col] = name
    return out


def _split_flop(row: dict, split: dict[str, str], path: str, line: int) -> dict[str, float]:
    """FLOP by precision from the row's flop_<precision> cells ({} when it has none, and
    the flop and precision cells give them); their sum must be the row's flop."""
    parts: dict[str, float] = {}
    for col, precision in split.items():
        value = _number(row, col, path, line, default=0.0)
        if value:
            parts[precision] = parts.get(precision, 0.0) + value
    if not parts:
        return {}
    total = _number(row, "flop", path, line)
    if abs(sum(parts.values()) - total) > 1e-9 * max(total, 1.0):
        raise ParseError(f"field 'flop' is {total:g} but the flop_<precision> columns add "
                         f"up to {sum(parts.values()):g}; make flop their sum (or leave "
                         f"the flop_ cells empty)", path=path, line=line)
    return parts


def _column_hints(header: list[str], first: tuple[int, dict[str, str]] | None) -> list[str]:
    """Unknown columns that look like a mistake: a time in another unit ('time_ms', 'us')
    where no 'seconds' or 'gflops' column gives one, or a misspelt known column ('sconds').
    Any other column is meta on purpose (op, weight_bytes) and is not warned about."""
    hints = []
    timed = {"seconds", "gflops"} & set(header)
    for col in header:
        if col in CSV_KNOWN or col == "kernel":
            continue
        is_time, per_unit = time_unit(col)
        if is_time and not timed:
            text = (first[1].get(col) or "").strip() if first else ""
            try:
                example = (f"; line {first[0]}: {float(text) * per_unit:.6g}"
                           if first and per_unit is not None else "")
            except ValueError:
                example = ""
            scale = f"{col} x {per_unit:g}{example}" if per_unit is not None else \
                "in seconds"
            hints.append(f"column '{col}' looks like a time and is not read, so the kernels "
                         f"are untimed: give a 'seconds' column ({scale})")
            continue
        close = difflib.get_close_matches(col, [c for c in CSV_KNOWN if c not in header],
                                          n=1, cutoff=0.75)
        if close:
            hints.append(f"column '{col}' is not read: did you mean '{close[0]}'?")
    return hints
