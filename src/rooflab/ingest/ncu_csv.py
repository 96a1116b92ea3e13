"""Read `ncu --csv` output: the long "details" page and the wide `--page raw` page.

This module finds the header and the page kind and reads the raw page; the details page
(one row per launch x metric) is ncu_details.py, the numbers in the cells ncu_values.py.
raw: one row per launch, one column per metric, a units row second.

Both may be preceded by program output and `==PROF==`/`==WARNING==`/`==ERROR==` lines, use
thousands separators ('1,619,726,202.90') and auto-scaled units ('Kbyte', 'usecond',
'Gcycle/second'); values become SI here. Bad rows are skipped and logged (file, line,
reason); a file with no usable launch raises ParseError, and so does a number with a comma
ncu does not write ('1,5' from a decimal-comma locale: ncu_values.py).
"""

from __future__ import annotations

import csv  # noqa: F401  (tests/test_ncu_fastpath.py counts csv.reader's rows through it)
import gc
import io
import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import ParseError
from ..files import csv_reader
from .aggregate import Launch
from .ncu_details import read_details
from .ncu_metrics import CC_MAJOR, CC_MINOR, DEVICE_NAME, compute_capability, is_used
from .ncu_numbers import unit_scale
from .ncu_values import CUT_SHORT, GROUPED, CommaError, cell_value, comma_message, ends_open
from .skips import SkipLog

# Moved with the page readers; still importable from here.
__all__ = ["NcuCsv", "read_ncu_csv", "read_text", "open_text", "cell_value", "Body", "IDENTITY",
           "HOW_TO", "SPLIT_QUOTED_LINES"]

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
            "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
            "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
            "Rule Description", "Estimated Speedup Type", "Estimated Speedup")
HOW_TO = "make it with `ncu --csv --metrics ... ./app > out.csv` (or `--page raw`)"
# Details pages: split fully quoted lines with str methods rather than csv.reader (same
# fields, half the cost; see ncu_details.read_details). False sends every row through
# csv.reader, the reference tests/test_ncu_fastpath.py holds the split to.
SPLIT_QUOTED_LINES = True


@dataclass(frozen=True)
class NcuCsv:
    """What one CSV file held: its launches, the page kind, and the profiler's own errors."""

    path: str
    page: str                          # "details" or "raw"
    launches: tuple[Launch, ...]
    profiler_errors: tuple[str, ...]   # '==ERROR== LaunchFailed', ... from before the header


def read_text(path: str) -> str:
    with open_text(path) as fh:
        return fh.read_all()[0]   # a binary file: its reader refuses it, no note


def open_text(path: str):
    """The file opened for csv reading, or ParseError saying why it cannot be. Gzipped,
    UTF-16 (PowerShell's `>`) and stray bytes that are not UTF-8 read as every text
    reader reads them (files_decode.open_text)."""
    from ..files_decode import open_text as open_decoded

    try:
        return open_decoded(path, newline="")
    except FileNotFoundError:
        raise ParseError("file not found", path=path) from None
    except IsADirectoryError:
        raise ParseError("is a directory; give a CSV file", path=path) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=path) from None


# The first line of rocprof's CSVs: v1 results.csv (Index,KernelName,...), v2/v3
# (...,Kernel_Name,...), --stats summaries ("Name","Calls","TotalDurationNs",...)
_ROCPROF_HEADER = re.compile(r'(?:^|,)"?(?:KernelName|Kernel_Name|TotalDurationNs)"?(?:,|$)')


def _is_header(line: str) -> bool:
    s = line.lstrip("\ufeff")
    return s.startswith('"ID",') or s.startswith("ID,") or '"Kernel Name"' in s


def read_ncu_csv(path: str, log: SkipLog | None = None, text: str | None = None) -> NcuCsv:
    """Launches of one `ncu --csv` file (either page). Skipped rows go to `log`.

    The file is streamed (a details page of 100,000 launches is ~270 MB): lines before the
    header are scanned for the profiler's `==ERROR==` lines, the rest is read as CSV (on a
    details page, plainly quoted rows are split without csv.reader: see ncu_details).
    """
    log = log if log is not None else SkipLog(path)
    with (io.StringIO(text, newline="") if text is not None else open_text(path)) as fh:
        errors: list[str] = []
        h, header_line, first, nul = 0, None, "", None
        for line in fh:
            if _is_header(line):
                header_line = line
                break
            if line.startswith("==ERROR=="):
                errors.append(line.strip())
            if nul is None and "\x00" in line:
                nul = h   # binary data: said so, not "no ncu CSV header" (s36 B)
            first = first or line
            h += 1
        if header_line is None:
            raise _no_header(path, text, first, errors, h, nul)
        if "\x00" in header_line:   # binary data, as files_decode refuses it: a NUL in a
            # metric's name once read as that metric not collected (s35 audit)
            from ..files_decode import binary_error

            raise binary_error(path, "\n" * h + header_line)
        header = next(csv_reader([header_line.lstrip("\ufeff")]))
        col = {name.strip(): i for i, name in enumerate(header)}
        if "Kernel Name" not in col:
            raise ParseError("the header has no 'Kernel Name' column; " + HOW_TO, path=path,
                             line=h + 1)
        # the header's line ending, most likely every row's ('\r\n' from Windows)
        body = Body(fh, h + 1, header_line[len(header_line.rstrip("\r\n")):] or "\n")
        if "Average" in col and "Invocations" in col and "Metric Value" not in col:
            # `ncu --print-summary per-kernel --csv`: Invocations, Minimum, Maximum, Average
            raise ParseError("a per-kernel summary (ncu --print-summary: Invocations, Minimum, "
                             "Maximum, Average), not one row per launch; export without "
                             "--print-summary (`ncu --import report.ncu-rep --csv > out.csv`) "
                             "or pass the .ncu-rep itself", path=path, line=h + 1)
        if "Metric Name" in col or "Metric Value" in col:
            missing = [c for c in ("ID", "Metric Name", "Metric Unit", "Metric Value")
                       if c not in col]
            if missing:
                raise ParseError(f"details page without column(s) {', '.join(missing)}; "
                                 + HOW_TO, path=path, line=h + 1)
            with _collector_paused():
                launches = read_details(path, col, len(header), body, log,
                                        split=SPLIT_QUOTED_LINES)
            page = "details"
        else:
            with _collector_paused():
                launches = _raw(path, header, col, body, log)
            page = "raw"
    return NcuCsv(path, page, tuple(launches), tuple(errors))


def _no_header(path: str, text: str | None, first: str, errors: list[str], lines: int,
               nul: int | None) -> ParseError:
    """Why a file has no ncu header: empty, binary, another verb's file, the profiler's own
    errors, or none of these (then how to make an ncu CSV)."""
    if not first.strip() and lines <= 1:   # an empty file (or one blank line)
        return ParseError(f"the file is empty (was it written completely?); {HOW_TO}",
                          path=path)
    if nul is not None:   # binary_error names a PNG, a .ncu-rep, ... by its first bytes
        from ..files_decode import binary_error

        return binary_error(path, "\n" * nul + "\x00")
    why = f" (the profiler said: {'; '.join(errors)})" if errors else ""
    if _ROCPROF_HEADER.search(first):
        why += "; it looks like a rocprof CSV: read it with `rooflab rocprof FILE`"
    other = other_kind(path, text, first)
    if other:   # another verb's file: name it, not how to collect an ncu CSV
        return ParseError(f"no ncu CSV header (a line starting with \"ID\",...) found: "
                          f"{other}", path=path)
    return ParseError(f"no ncu CSV header (a line starting with \"ID\",...) found{why}; "
                      f"{HOW_TO}", path=path)


def other_kind(path: str, text: str | None, first: str, own: str = "") -> str:
    """What a trace or JSON file given as an ncu (or rocprof) CSV is, and the verb that reads
    it ('' for anything else). Only on the error path: file_kind sniffs the file's first
    bytes, text_kind the text a reader holds (perf stat -x, lines given to likwid named
    `rooflab perf`: s36 T). `first`: the file's first line; `own`: the asking verb, never
    named as the one to use."""
    from ..files_decode import SNIFF
    from ..files_kind import text_kind
    from .profile_files import file_kind

    kind = text_kind(text[:SNIFF]) if text is not None else file_kind(path)
    kind = "" if kind == own else kind
    if kind == "torch":
        return "it is a PyTorch profiler trace; read it with `rooflab torch FILE`"
    if kind in ("likwid", "perf"):
        return f"it is {kind} output; read it with `rooflab {kind} FILE`"
    if {"name", "flop"} <= {c.strip().lower() for c in first.split(",")}:
        return ("it is a kernel file (name,flop,bytes,...); put it on a roof with `rooflab "
                "report FILE --on DEVICE`")
    if first.lstrip("\ufeff \t\r\n")[:1] in ("{", "["):
        return ("it is a JSON file; a profile or roof from `rooflab probe` goes to --on FILE, "
                "a kernel list to `rooflab report FILE` or `rooflab plot FILE`")
    lone = _lone_value(path, text)
    return f"it holds only the value {lone}, no table: is it the right file?" if lone else ""


def _lone_value(path: str, text: str | None) -> str:
    """The one JSON value (`null`, `42`, `true`) a file holds and nothing else, '' for any
    other file: such a file got only "no header found" (s36 I)."""
    import json

    from ..files_decode import SNIFF

    if text is None:
        with open_text(path) as fh:
            text = fh.read(SNIFF)
    if len(text) >= SNIFF or not text.strip():
        return ""
    try:
        value = json.loads(text)
    except ValueError:   # not JSON, or a number past Python's digit limit
        return ""
    return "" if isinstance(value, (dict, list)) else json.dumps(value)[:40]


@contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while a page is parsed.

    A details page of 100,000 launches allocates ~1.2 million short-lived lists and keeps
    ~300,000 dicts, lists and Launches, none of them in a reference cycle; the collector's
    repeated passes over that growing heap cost ~15 % of the parse (benchmarks/ncu_parse.py).
    Reference counting still frees everything at once; the collector's previous state is
    restored afterwards.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Body:
    """The lines after the header, read by csv.reader, with their 1-based line numbers.

    Profiler lines ('==PROF== Disconnected ...') and blank lines are passed over."""

    def __init__(self, lines, start: int, eol: str = "\n"):
        self.lines, self.start = lines, start   # the lines after the header; its line number
        self.eol = eol                          # the line ending rows most likely have

    def rows(self, log: SkipLog | None = None):
        """(line, row) pairs; with `log`, a one-line row the file ends inside (a quoted
        field left open: ncu_values.ends_open) is logged and skipped, not read."""
        last = [""]

        def lines():
            for text in self.lines:
                last[0] = text
                yield text

        reader = csv_reader(lines())
        start, before = self.start, 0
        for row in reader:
            one_line = reader.line_num - before == 1
            before = reader.line_num
            if not row or row[0].startswith("=="):
                continue
            if log is not None and one_line and ends_open(last[0]):
                log.add(start + reader.line_num, CUT_SHORT)
                continue
            yield start + reader.line_num, row


def _raw(path: str, header: list[str], col: dict[str, int], body: Body,
         log: SkipLog) -> list[Launch]:
    rows = body.rows(log)
    first = next(rows, None)
    if first is None:
        return []
    units: list[str] | None = None
    units_line = None
    if not first[1][col.get("ID", 0)].strip():
        units_line, units = first
    else:
        rows = itertools.chain([first], rows)
    used = _raw_columns(header, units, units_line, log)
    return _raw_launches(path, header, col, rows, used, log)


def _raw_columns(header: list[str], units: list[str] | None, units_line: int | None,
                 log: SkipLog) -> list[tuple[int, str, float]]:
    """(column, metric, scale to SI) of each metric column rooflab uses; a column whose unit
    it does not know is logged and left out."""
    used: list[tuple[int, str, float]] = []
    for i, name in enumerate(header):
        name = name.strip()
        if name in IDENTITY or not is_used(name):
            continue
        unit = units[i] if units is not None and i < len(units) else ""
        scale = unit_scale(unit)
        if scale is None:
            log.add(units_line,
                    f"unknown unit '{unit}' for column '{name}'; column skipped "
                    f"(re-export with --print-units base)")
            continue
        used.append((i, name, scale))
    return used


def _raw_launches(path: str, header: list[str], col: dict[str, int], rows,
                  used: list[tuple[int, str, float]], log: SkipLog) -> list[Launch]:
    """A Launch of each (line, row) of `rows`; rows cut short or with a cell that is not a
    number are logged and skipped."""
    text_cols = [(col[n], n) for n in (DEVICE_NAME, CC_MAJOR, CC_MINOR) if n in col]
    need = max([i for i, _, _ in used] + [col["Kernel Name"]]) + 1
    # the identity cells' columns (-1: absent, read as ''), looked up once, not per row
    i_id, i_name, i_cc, i_device, i_block, i_grid = (
        col.get(n, -1) for n in ("ID", "Kernel Name", "CC", "Device", "Block Size",
                                 "Grid Size"))
    ccs: dict[str, tuple[int, int] | None] = {}   # compute_capability of each CC text met
    grouped = GROUPED.fullmatch   # ncu_values.ncu_float's rule, inlined below
    out: list[Launch] = []
    # once per launch (100,000 rows x 12 metrics in benchmarks/ncu_parse.py): the least
    # work per cell, as in ncu_details.read_details, and no call per row (building the
    # Launch in a method measured ~2-3 % slower on that benchmark)
    for line, row in rows:
        n = len(row)
        if n < need:
            log.add(line, f"row has {n} of {len(header)} columns (file cut short?)")
            continue
        metrics: dict[str, float] = {}
        bad = ""
        for i, name, scale in used:
            v = row[i]
            try:   # ncu_values.cell_value inlined: float(), thousands separators in groups
                # of three; the rest ('n/a', a locale's comma) to _raw_cell, which says what
                if "," not in v:
                    metrics[name] = float(v) * scale
                elif grouped(v):
                    metrics[name] = float(v.replace(",", "")) * scale
                else:
                    raise CommaError(v)
                continue
            except (ValueError, CommaError):
                pass
            x = _raw_cell(path, line, name, v, scale)
            if x is None:
                bad = f"column '{name}': value '{v}' is not a number"
                break
            metrics[name] = x
        if bad:
            log.add(line, bad + "; row skipped")
            continue
        texts = {n_: row[i].strip() for i, n_ in text_cols if i < n} if text_cols else {}
        cc_text = row[i_cc].strip() if -1 < i_cc < n else ""
        cc = ccs.get(cc_text, False)
        if cc is False:
            cc = ccs[cc_text] = compute_capability(cc_text)
        if cc is None and CC_MAJOR in texts:
            cc = compute_capability(f"{texts.get(CC_MAJOR)}.{texts.get(CC_MINOR, '0')}")
        out.append(Launch(path=path, line=line, id=row[i_id].strip() if -1 < i_id < n else "",
                          name=row[i_name].strip() if -1 < i_name < n else "",
                          metrics=metrics,
                          device=texts.get(DEVICE_NAME) or (
                              row[i_device].strip() if -1 < i_device < n else ""),
                          cc=cc, block=row[i_block].strip() if -1 < i_block < n else "",
                          grid=row[i_grid].strip() if -1 < i_grid < n else ""))
    return out


def _raw_cell(path: str, line: int, name: str, v: str, scale: float) -> float | None:
    """The SI value of a cell the inlined rule did not read, None if it is not a number;
    ParseError for a comma ncu does not write."""
    try:
        return cell_value(v, scale)
    except CommaError:
        raise ParseError(comma_message(v, f"'{name}'"), path=path, line=line) from None
    except ValueError:
        return None
