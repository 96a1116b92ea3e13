"""Read `ncu --csv` output: the long "details" page and the wide `--page raw` page.

details: one row per (launch x metric) with columns ID, Process ID, Process Name, Host Name,
  Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, Section Name, Metric Name,
  Metric Unit, Metric Value (newer ncu versions append Rule Name, Rule Type, Rule Description,
  Estimated Speedup Type, Estimated Speedup; rule-only rows have no metric and are ignored).
raw: one row per launch, one column per metric, a units row second.

Both may be preceded by program output and `==PROF==`/`==WARNING==`/`==ERROR==` lines, use
thousands separators ('1,619,726,202.90') and auto-scaled units ('Kbyte', 'usecond',
'Gcycle/second'); values become SI here. Bad rows are skipped and logged (file, line,
reason); a file with no usable launch raises ParseError.
"""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass, replace

from ..errors import ParseError
from .aggregate import Launch
from .ncu_metrics import (
    CC_MAJOR,
    CC_MINOR,
    DEVICE_NAME,
    compute_capability,
    is_used,
    parse_number,
    unit_scale,
)
from .skips import SkipLog

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
            "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
            "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
            "Rule Description", "Estimated Speedup Type", "Estimated Speedup")
# Raw-page columns that hold text, not numbers.
TEXT_METRICS = (DEVICE_NAME,)
HOW_TO = "make it with `ncu --csv --metrics ... ./app > out.csv` (or `--page raw`)"


@dataclass(frozen=True)
class NcuCsv:
    """What one CSV file held: its launches, the page kind, and the profiler's own errors."""

    path: str
    page: str                          # "details" or "raw"
    launches: tuple[Launch, ...]
    profiler_errors: tuple[str, ...]   # '==ERROR== LaunchFailed', ... from before the header


def read_text(path: str) -> str:
    with open_text(path) as fh:
        return fh.read()


def open_text(path: str):
    """The file opened for csv reading, or ParseError saying why it cannot be."""
    try:
        return open(path, encoding="utf-8", errors="replace", newline="")
    except FileNotFoundError:
        raise ParseError("file not found", path=path) from None
    except IsADirectoryError:
        raise ParseError("is a directory; give a CSV file", path=path) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=path) from None


def _is_header(line: str) -> bool:
    s = line.lstrip("\ufeff")
    return s.startswith('"ID",') or s.startswith("ID,") or '"Kernel Name"' in s


def read_ncu_csv(path: str, log: SkipLog | None = None, text: str | None = None) -> NcuCsv:
    """Launches of one `ncu --csv` file (either page). Skipped rows go to `log`.

    The file is streamed (a details page of 100,000 launches is ~270 MB): lines before the
    header are scanned for the profiler's `==ERROR==` lines, the rest goes to csv.reader.
    """
    log = log if log is not None else SkipLog(path)
    with (io.StringIO(text, newline="") if text is not None else open_text(path)) as fh:
        errors: list[str] = []
        h, header_line = 0, None
        for line in fh:
            if _is_header(line):
                header_line = line
                break
            if line.startswith("==ERROR=="):
                errors.append(line.strip())
            h += 1
        if header_line is None:
            why = f" (the profiler said: {'; '.join(errors)})" if errors else ""
            raise ParseError(f"no ncu CSV header (a line starting with \"ID\",...) found{why}; "
                             f"{HOW_TO}", path=path)
        header = next(csv.reader([header_line.lstrip("\ufeff")]))
        col = {name.strip(): i for i, name in enumerate(header)}
        if "Kernel Name" not in col:
            raise ParseError("the header has no 'Kernel Name' column; " + HOW_TO, path=path,
                             line=h + 1)
        body = Body(fh, h + 1)
        if "Metric Name" in col or "Metric Value" in col:
            missing = [c for c in ("ID", "Metric Name", "Metric Unit", "Metric Value")
                       if c not in col]
            if missing:
                raise ParseError(f"details page without column(s) {', '.join(missing)}; "
                                 + HOW_TO, path=path, line=h + 1)
            launches = _details(path, col, len(header), body, log)
            page = "details"
        else:
            launches = _raw(path, header, col, body, log)
            page = "raw"
    return NcuCsv(path, page, tuple(launches), tuple(errors))


def cell_value(text: str, scale: float) -> float:
    """A metric cell in SI units: plain float() first (the common case, with thousands
    separators removed), else parse_number ('n/a' and '' give nan). ValueError otherwise."""
    try:
        return float(text.replace(",", "")) * scale
    except ValueError:
        return parse_number(text) * scale


def _identity(row: list[str], col: dict[str, int]):
    def cell(name: str) -> str:
        i = col.get(name)
        return row[i].strip() if i is not None and i < len(row) else ""

    return cell


class Body:
    """The lines after the header, read by csv.reader, with their 1-based line numbers.

    Profiler lines ('==PROF== Disconnected ...') and blank lines are passed over."""

    def __init__(self, lines, start: int):
        self.lines, self.start = lines, start   # the lines after the header; its line number

    def rows(self):
        reader = csv.reader(self.lines)
        start = self.start
        for row in reader:
            if not row or row[0].startswith("=="):
                continue
            yield start + reader.line_num, row


def _details(path: str, col: dict[str, int], ncols: int, body: Body,
             log: SkipLog) -> list[Launch]:
    i_id, i_name, i_unit, i_val = (col["ID"], col["Metric Name"], col["Metric Unit"],
                                   col["Metric Value"])
    need = max(i_id, i_name, i_unit, i_val, col["Kernel Name"]) + 1
    pid = col.get("Process ID")
    builders: dict[tuple[str, str], list] = {}   # [first-row Launch, metrics, device name]
    # metric -> its scale for a unit: {metric: {unit: scale}}; None = the metric is unused
    known: dict[str, dict[str, float | None] | None] = {}
    last_id, metrics, entry = None, None, None
    # This loop runs once per (launch x metric) row: 1.2 million times for 100,000 launches
    # of 12 metrics, so it does the least it can per row (benchmarks/ncu_parse.py).
    reader = csv.reader(body.lines)
    for row in reader:
        if len(row) < need:
            if row and not row[0].startswith("=="):
                log.add(body.start + reader.line_num,
                        f"row has {len(row)} of {ncols} columns (file cut short?)")
            continue
        metric = row[i_name]
        if not metric:
            continue   # a rule row of newer ncu versions: no metric on it
        if row[i_id] != last_id:   # rows of one launch come together: look up once per launch
            last_id = row[i_id]
            key = (row[pid] if pid is not None else "", last_id)
            entry = builders.get(key)
            if entry is None:
                cell = _identity(row, col)
                metrics = {}   # filled in place below: the Launch keeps this very dict
                launch = Launch(path=path, line=body.start + reader.line_num, id=last_id,
                                name=cell("Kernel Name"), metrics=metrics, device=cell("Device"),
                                cc=compute_capability(cell("CC")), block=cell("Block Size"),
                                grid=cell("Grid Size"))
                entry = builders[key] = [launch, metrics, ""]
            metrics = entry[1]
        units = known.get(metric, False)
        if units is False:
            units = known[metric] = {} if is_used(metric) or metric in TEXT_METRICS else None
        if units is None:
            log.add_grouped(body.start + reader.line_num,
                            f"metric '{metric}' is not used by rooflab; row ignored")
            continue
        unit = row[i_unit]
        scale = units.get(unit, False)
        if scale is False:
            scale = units[unit] = 0.0 if metric in TEXT_METRICS else unit_scale(unit)
        if not scale:
            if scale is None:
                log.add_grouped(body.start + reader.line_num,
                                f"unknown unit '{unit}' for metric '{metric}'; row skipped "
                                f"(re-export with --print-units base)")
            else:
                entry[2] = row[i_val].strip()   # the device name, a text metric
            continue
        text = row[i_val]
        try:
            metrics[metric] = cell_value(text, scale)
        except ValueError:
            log.add(body.start + reader.line_num,
                    f"metric '{metric}': value '{text}' is not a number; row skipped")
    return [replace(launch, device=name) if name else launch
            for launch, _, name in builders.values()]


def _raw(path: str, header: list[str], col: dict[str, int], body: Body,
         log: SkipLog) -> list[Launch]:
    rows = body.rows()
    first = next(rows, None)
    if first is None:
        return []
    units: list[str] | None = None
    units_line = None
    if not first[1][col.get("ID", 0)].strip():
        units_line, units = first
    else:
        rows = itertools.chain([first], rows)
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
    text_cols = [(col[n], n) for n in (DEVICE_NAME, CC_MAJOR, CC_MINOR) if n in col]
    need = max([i for i, _, _ in used] + [col["Kernel Name"]]) + 1
    out: list[Launch] = []
    for line, row in rows:
        if len(row) < need:
            log.add(line, f"row has {len(row)} of {len(header)} columns (file cut short?)")
            continue
        metrics: dict[str, float] = {}
        bad = ""
        for i, name, scale in used:
            try:
                metrics[name] = cell_value(row[i], scale)
            except ValueError:
                bad = f"column '{name}': value '{row[i]}' is not a number"
                break
        if bad:
            log.add(line, bad + "; row skipped")
            continue
        cell = _identity(row, col)
        texts = {n: row[i].strip() for i, n in text_cols if i < len(row)}
        cc = compute_capability(cell("CC"))
        if cc is None and CC_MAJOR in texts:
            cc = compute_capability(f"{texts.get(CC_MAJOR)}.{texts.get(CC_MINOR, '0')}")
        out.append(Launch(path=path, line=line, id=cell("ID"), name=cell("Kernel Name"),
                          metrics=metrics, device=texts.get(DEVICE_NAME) or cell("Device"),
                          cc=cc, block=cell("Block Size"), grid=cell("Grid Size")))
    return out
