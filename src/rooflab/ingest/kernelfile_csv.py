"""rooflab's own kernel CSV: name, flop, bytes, seconds[, precision][, level][, calls][, unit]
[, threads][, gflops][, flop_<precision>...], the format ingest/kernelfile.py's module
docstring describes. Unknown columns go to meta; one that looks like a mistake is warned
about; a malformed header or row is refused with its line. Split from ingest/kernelfile.py.
"""

from __future__ import annotations

import difflib
import io

from ..errors import InputError, ParseError
from ..files import csv_dict_reader
from ..model.csv_provenance import KERNEL_PROVENANCE_COLUMNS, ROOF_COLUMNS
from ..model.field_hints import time_unit
from ..model.kernel import Kernel, names_warned_by_reader
from ..model.meta_check import TEXT_KEYS, checked_meta
from ..model.schema import calls_problem, level_name, precision_name
from ..units import canonical_dtype
from .kernelfile_rows import (
    DEFAULT_PRECISION,
    _given_ai,
    finish_read,
    threads_value,
    warn_file,
)

CSV_REQUIRED = ("name", "flop", "bytes")
# flop_/bytes_/seconds_provenance: the words the analysis CSVs write (model/csv_provenance),
# read back so an ncu export's counted numbers stay counted (review s22 r4 F6)
CSV_KNOWN = CSV_REQUIRED + ("seconds", "precision", "level", "calls", "unit", "gflops",
                            "threads", *KERNEL_PROVENANCE_COLUMNS)
# Said by every error about a file that is none of the formats read here.
ACCEPTED = ("rooflab reads: a kernel file (.json, or .csv with name,flop,bytes[,seconds,"
            "precision,level,calls,unit,threads]), an analysis JSON from another verb, an Nsight "
            "Compute CSV or .ncu-rep, a rocprof counter CSV (results.csv, "
            "*_counter_collection.csv, pmc_perf.csv) or its folder, a torch.profiler trace "
            "(.json, .json.gz), or Intel Advisor's survey CSV (--report=survey --format=csv)")


def _number(row: dict, field: str, path: str, line: int, default: float | None = None):
    text = (row.get(field) or "").strip().replace(",", "")
    if not text:
        if default is not None:
            return default
        raise ParseError(f"field '{field}' is empty", path=path, line=line, field=field)
    try:
        x = float(text)
    except ValueError:
        raise ParseError(f"field '{field}' is not a number: '{text}'", path=path,
                         line=line, field=field) from None
    if x in (INF, -INF) and "inf" not in text.lower():
        # '1e400' or 400 digits read as infinity, then refused as "got inf": said as typed
        shown = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
        raise ParseError(f"field '{field}' is '{shown}', past the largest number a double "
                         f"holds (about 1.8e308): a mistake in the file?", path=path,
                         line=line, field=field)
    return x


INF = float("inf")


# The verdicts rooflab's own analysis CSVs (ncu/torch/rocprof/bench -o x.csv) write beside
# the counts: figures of the roof that file was judged on. Read back (`report kk.csv --on
# L4`) they are not kept in meta: the new analysis judges again, and the document held two
# percent_of_roof/bound figures for one kernel, the old roof's in kernels[].meta, carried
# on by every later -o x.json (review s19 r2 F20). `ai` is still checked against
# flop/bytes (_given_ai); `flags` stays (whatif reads the bench's flags).
ANALYSIS_COLUMNS = frozenset(("time_share", "ai", "achieved_flop_per_s", "percent_of_roof",
                              "bound", "achieved_bytes_per_s", "percent_of_bandwidth",
                              "floor_s", "floor_ratio", "best_floor_ratio", *ROOF_COLUMNS))


# The profiler verbs' -o x.csv writes the kernel meta the advice reads as flat columns
# (cli/profiled_meta.py); read back here into the meta they came from: a grid or block
# '65535x1x1' as ncu's '(65535, 1, 1)', the SM count as a whole number (the grid and tile
# advice take an int), pipe_busy_<pipe> columns as meta pipe_busy {pipe: %}, busiest first.
GRID_COLUMNS = ("grid", "block")
PIPE_COLUMN = "pipe_busy_"
WHOLE_COLUMNS = ("sms",)


def _extra_columns(row: dict[str, str]) -> dict[str, object]:
    """Columns beyond the known ones go to meta (an `op` column names the op kind that
    advice and sanity checks read; `weight_bytes` feeds the what-ifs), numbers as floats;
    the analysis CSVs' verdicts (ANALYSIS_COLUMNS) are dropped."""
    meta: dict[str, object] = {}
    for key, value in row.items():
        value = value.strip()
        if key in CSV_KNOWN or key in ANALYSIS_COLUMNS or not value:
            continue
        if key in TEXT_KEYS:   # a label: a step '1' stays '1', not 1.0
            meta[key] = value
            continue
        try:
            meta[key] = float(value.replace("_", ""))
        except ValueError:
            meta[key] = value
    return _nested_meta(meta)


def _nested_meta(meta: dict[str, object]) -> dict[str, object]:
    """The flat columns of GRID_COLUMNS, WHOLE_COLUMNS and PIPE_COLUMN as the meta the
    profiler readers give."""
    import re

    for key in GRID_COLUMNS:
        v = meta.get(key)
        if isinstance(v, float) and v.is_integer():
            v = str(int(v))        # a '4' grid cell: 4 blocks
        if isinstance(v, str) and re.fullmatch(r"\d+(x\d+)*", v):
            meta[key] = "(" + ", ".join(v.split("x")) + ")"
    for key in WHOLE_COLUMNS:
        v = meta.get(key)
        if isinstance(v, float) and v.is_integer():
            meta[key] = int(v)
    pipes = {k.removeprefix(PIPE_COLUMN): meta.pop(k) for k in list(meta)
             if k.startswith(PIPE_COLUMN) and isinstance(meta[k], float)}
    if pipes:
        meta["pipe_busy"] = dict(sorted(pipes.items(), key=lambda kv: -kv[1]))
    return _split_meta(_json_meta(meta))


# `rooflab train -o x.csv`'s cells that hold a list or an object (a comm row's collectives
# and by_zero, a kernel's shape) as JSON text, and its flags (overlap) as true/false: read
# back as the JSON's meta, so whatif and report time the overlap again from the
# collectives and grow an embedding's rows with the batch as on the JSON (s31 hd).
JSON_COLUMNS = ("collectives", "by_zero", "shape")
BOOL_COLUMNS = {"true": True, "false": False}


def _json_meta(meta: dict[str, object]) -> dict[str, object]:
    """meta with JSON_COLUMNS' JSON text decoded and overlap's true/false as a flag; a
    cell that is no JSON list or object stays the text it was (another tool's column)."""
    import json

    out = dict(meta)
    for key in JSON_COLUMNS:
        text = out.get(key)
        if isinstance(text, str) and text[:1] in "[{":
            try:
                out[key] = json.loads(text)
            except ValueError:
                pass
    flag = out.get("overlap")
    if isinstance(flag, str) and flag.lower() in BOOL_COLUMNS:
        out["overlap"] = BOOL_COLUMNS[flag.lower()]
    return out


# The columns `rooflab train -o x.csv` writes a kernel's bytes_split in, by part.
SPLIT_COLUMNS = {"weights": "weight_bytes", "activations": "activations_bytes",
                 "kv": "kv_bytes"}


def _split_meta(meta: dict[str, object]) -> dict[str, object]:
    """A row that names model_dtype_parts (train -o x.csv: the parts whatif --precision fp8
    keeps at the model dtype) names parts of its bytes_split: its SPLIT_COLUMNS cells, as
    the JSON's meta bytes_split holds them. Without it fp8 narrowed a train CSV's norms,
    RoPE, residual add and SwiGLU too: 132 ms, the JSON 148 ms (s30 hg). A weight-gradient
    row's too (meta weight_gradient): its `weights` are the gradients whatif --precision
    keeps at --grad-dtype (model/whatif_grads.py; s35 H)."""
    if not ({"model_dtype_parts", "weight_gradient"} & set(meta)) or "bytes_split" in meta:
        return meta
    split = {part: meta[col] for part, col in SPLIT_COLUMNS.items()
             if isinstance(meta.get(col), float)}
    return {**meta, "bytes_split": split} if split else meta


# unknown precisions and levels: said once per file by _check_read, not per Kernel
@names_warned_by_reader()
def kernels_from_csv(text: str, path: str = "<csv>") -> tuple[Kernel, ...]:
    reader = csv_dict_reader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    _check_header(header, path)
    # the analysis CSVs rooflab writes (ncu/torch/rocprof/bench -o x.csv) name the kernel
    # 'kernel' and give its precision (llm's CSV does not: it stays refused, not read as fp32)
    alias = ("kernel" if "name" not in header and {"kernel", "precision"} <= set(header)
             else None)
    if alias:
        header.append("name")
    _refuse_header(header, [c for c in CSV_REQUIRED if c not in header], path)
    split = _flop_columns(header)
    out = []
    first: tuple[int, dict[str, str]] | None = None   # the first row, for the warning's example
    wheres: list[tuple[int | None, str]] = []
    given_ai: list[float | None] = []
    defaulted: list[int] = []   # the kernels given no precision: fp32, marked assumed
    for lineno, raw in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "") for k, v in raw.items() if k}
        if alias:
            row["name"] = row.pop(alias)
        if not any(v.strip() for v in row.values()):
            continue
        lineno = reader.line_num   # a quoted cell may span lines: the row's last line
        _check_cells(raw, reader.fieldnames or [], path, lineno)
        first = first or (lineno, row)
        kernel, assumed = _row_kernel(row, split, path, lineno)
        out.append(kernel)
        wheres.append((lineno, f"kernel '{out[-1].name}'"))
        given_ai.append(_given_ai(row.get("ai")))
        if assumed and out[-1].total_flop > 0:
            defaulted.append(len(out) - 1)
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    hints = _column_hints(header, first)
    if hints:
        warn_file(path, f"{'; '.join(hints)} (columns read: {', '.join(CSV_KNOWN)}; any "
                        f"other is kept in the kernels' meta, but an analysis CSV's verdicts "
                        f"such as percent_of_roof and bound, judged again)", line=1)
    return finish_read(path, out, wheres, given_ai, defaulted,
                       "add a precision column (fp64, fp32, ...)"
                       if "precision" not in header else "fill its precision cell")


def _refuse_header(header: list[str], missing: list[str], path: str) -> None:
    """A header without the required columns is refused, saying what the file looks like
    instead: `rooflab llm`'s table, a ';'-separated sheet, (AI, GFLOP/s) pairs."""
    if missing and {"phase", "kernel"} <= set(header):
        raise ParseError("this is `rooflab llm`'s CSV (a table, without precisions or times); "
                         "read its kernels from `rooflab llm ... -o decode.json` instead",
                         path=path, line=1)
    if missing and len(header) == 1 and ";" in header[0]:
        # a spreadsheet's export in a locale whose decimal mark is ',' (and whose numbers
        # would then read wrongly here): ask for comma-separated values, '.' decimals
        raise ParseError("the columns are separated by ';': save the sheet as comma-separated "
                         "CSV with '.' as the decimal mark", path=path, line=1)
    if missing and len(header) == 1 and "\t" in header[0]:
        # a sheet saved as "Text (Tab delimited)" or pasted from one (s38 G: it said only
        # "missing column(s) name, flop, bytes", which the header plainly has)
        raise ParseError("the columns are separated by tabs: save the sheet as "
                         "comma-separated CSV (or `tr '\\t' , < FILE > NEW.csv`)",
                         path=path, line=1)
    if missing and "ai" in header:
        # seed 000 §4.3's (AI, GFLOPS) pairs: a point with no FLOP or bytes has no floor,
        # no time share and nothing a what-if could change
        raise ParseError(f"missing column(s) {', '.join(missing)}: rooflab places a kernel "
                         f"from its FLOP and bytes (AI = flop / bytes); AI alone gives no "
                         f"floor and no time share. Give flop and bytes columns, e.g. "
                         f"name,flop,bytes,gflops", path=path, line=1)
    if missing:
        raise ParseError(f"missing column(s) {', '.join(missing)}{_missing_hints(missing, header)}"
                         f"; {ACCEPTED}", path=path, line=1)


def _row_seconds(row: dict, path: str, lineno: int) -> tuple[float | None, str]:
    """(seconds, its provenance) of a data row: its seconds cell (measured), or its FLOP over
    its gflops cell (derived); None when both are empty (an untimed kernel)."""
    seconds = _number(row, "seconds", path, lineno, default=0.0) or None
    if (row.get("seconds") or "").strip() and not (seconds or 0) > 0:
        # 0 s is no time (the JSON reader refuses it too); only an empty cell is untimed
        raise ParseError(f"field 'seconds' must be > 0; got "
                         f"{_number(row, 'seconds', path, lineno):g} (leave the cell "
                         f"empty for an untimed kernel)", path=path, line=lineno,
                         field="seconds")
    timing = "measured"
    gflops = _number(row, "gflops", path, lineno, default=0.0)
    if gflops and seconds:
        raise ParseError("give 'seconds' or 'gflops', not both", path=path, line=lineno)
    if (row.get("gflops") or "").strip() and gflops <= 0:
        # 0 GFLOP/s is no rate: it would be an infinite time, not an untimed kernel
        raise ParseError(f"field 'gflops' must be > 0; got {gflops:g} (leave the cell "
                         f"empty for an untimed kernel)", path=path, line=lineno,
                         field="gflops")
    if gflops:
        seconds = _number(row, "flop", path, lineno) / (gflops * 1e9) or None
        timing = "derived"       # from the achieved rate the user measured
    return seconds, timing


def _row_kernel(row: dict, split: dict[str, str], path: str,
                lineno: int) -> tuple[Kernel, bool]:
    """A data row's Kernel, and whether its precision is assumed (neither a precision cell
    nor flop_<precision> cells: DEFAULT_PRECISION)."""
    seconds, timing = _row_seconds(row, path, lineno)
    calls = _number(row, "calls", path, lineno, default=1)
    if calls_problem(calls):
        raise ParseError(calls_problem(calls), path=path, line=lineno, field="calls")
    parts = _split_flop(row, split, path, lineno)
    given = (row.get("precision") or "").strip()
    try:
        meta = _extra_columns({c: v for c, v in row.items() if c not in split})
        if (row.get("threads") or "").strip():
            meta["threads"] = threads_value(row["threads"],
                                            f"kernel '{row['name'].strip()}'")
        # the meta keys rooflab reads, of the type it reads them as (model/meta_check)
        meta = checked_meta(meta, f"kernel '{row['name'].strip()}'")
        kernel = Kernel(
            name=row["name"].strip(),
            flop=(parts or {precision_name(given or DEFAULT_PRECISION):
                            _number(row, "flop", path, lineno)}),
            bytes={level_name((row.get("level") or "DRAM").strip()):
                   _number(row, "bytes", path, lineno)},
            seconds=seconds, calls=int(calls),
            unit=(row.get("unit") or "").strip() or None,
            provenance={"flop": _word(row, "flop") or "given",
                        "bytes": _word(row, "bytes") or "given",
                        **({"seconds": _word(row, "seconds") or timing} if seconds else {})},
            meta=meta,
        )
    except InputError as exc:
        raise ParseError(str(exc), path=path, line=lineno, field=exc.field) from None
    return kernel, not parts and not given


def _word(row: dict, field: str) -> str:
    """The row's <field>_provenance cell ('counted', 'measured'), '' when absent or empty;
    an unknown word is kept and warned about once per file (kernelfile_rows._check_read)."""
    return (row.get(f"{field}_provenance") or "").strip().lower()


def _missing_hints(missing: list[str], header: list[str]) -> str:
    """" (column 'flops': did you mean 'flop'?)" for the header's unknown columns that look
    like a missing required one: the optional columns got that hint, the required ones
    only "missing column(s) flop" (review r3 F14)."""
    odd = [c for c in header if c and c not in CSV_KNOWN]
    said = []
    for col in missing:
        close = difflib.get_close_matches(col, odd, n=1, cutoff=0.75)
        if close:
            said.append(f"column '{close[0]}': did you mean '{col}'?")
    return f" ({'; '.join(said)})" if said else ""


def _check_header(header: list[str], path: str) -> None:
    """A column named twice is refused: csv.DictReader keeps the last one's cells, so the
    first was dropped without a word (a 'name,name,...' header named the kernel 'j')."""
    if not header:   # an empty file (or blank lines): said so, as for an empty JSON (s36 B)
        raise ParseError(f"the file is empty (was it written completely?); {ACCEPTED}",
                         path=path, line=1)
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
    # a '"' left open makes one cell of the lines after it (s38 G: "1 cells" said nothing
    # of the quote, which is what to mend)
    values = [v for k, v in raw.items() if k is not None and v is not None] + extra
    spans = sum(v.rstrip("\r\n").count("\n") for v in values)   # EOF's newline: no line
    # an open quote swallows a line's commas with its end: a cell holding both (s38 R: a
    # closed quoted name over two lines was blamed, an open one on the last row was not)
    opened = any("," in v and "\n" in v for v in values)
    runs = "over the next lines" if spans else "to the end of the file"
    quote = f"; a '\"' opens a quoted cell that runs on {runs}: close it or remove it" \
        if opened else ""
    line -= spans   # the row's first line, where the quote opens (`line` is its last)
    raise ParseError(f"{cells} cells, the header has {len(fieldnames)} "
                     f"({','.join(h.strip() for h in fieldnames)}); give each column one cell "
                     f"(an empty one for no value){quote}", path=path, line=line)


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
                         f"the flop_ cells empty)", path=path, line=line, field="flop")
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
