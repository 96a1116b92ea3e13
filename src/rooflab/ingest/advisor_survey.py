"""Intel Advisor's per-loop roofline results (its Survey report, CSV) as kernels:
`rooflab report loops.csv --on roof.json` where loops.csv is

    advisor --report=survey --format=csv --show-all-columns --project-dir=DIR \\
            --report-output=loops.csv

after a roofline collection (`advisor --collect=roofline`, or survey then tripcounts --flop).

The columns, as Advisor writes them (from public material; Intel documents no CSV layout):
- the header row comes after a preamble: `sep=,`, a blank line, a quoted two-line banner,
  `"Survey Data version=1.1.0","delimiter=,"`, a blank line (an Advisor 2023.0 run quoted in
  a public pipeline's parser); `--csv-delimiter=tab` gives tabs instead.
- `ID`, `Function Call Sites and Loops` (`[loop in multiply at solution.cpp:32]`), `Source
  Location`, `Self Time`, `Self Elapsed Time`, `Self GFLOP`, `Self GINTOP`, `Self Memory GB`,
  `Self GFLOPS`, `Self GB/s`, `Self AI`, with --enable-cache-simulation `Self L2 GB`, `Self L3
  GB`, `Self DRAM GB`, and `Data Types` (`Float64; UInt64`). The Self columns are the
  roofline's (Advisor's own Python example: Self GFLOPS = Self GFLOP / Self Elapsed Time,
  Self GB/s = Self Memory GB / Self Elapsed Time, Self AI = Self GFLOPS / Self GB/s; the
  column list of waggyz/femera-mini-app's perf/femera-advisor-survey-csv.sh). Times may carry
  an 's' ('4.050s', '< 0.001s').
- GB and GFLOP are decimal: a worked case (400x400 fp32 matrix products, 12 B and 2 FLOP a
  multiply-add) shows Self GFLOP 12.800 and Self Memory GB 76.800 for 6.4e9 of them: 76.8e9
  bytes, not GiB.

Read so: flop = Self GFLOP x 1e9, precision from Data Types (fp64 for Float64, fp32 for
Float32, fp64 for both, said: Advisor does not count SP and DP FLOP apart, its roofline
FAQ; without it the reader's fp32 default, said); bytes at L1 = Self Memory GB x 1e9 (the
loads and stores the loop executed: Advisor's cache-aware (CARM) bytes, its L1 point) and at
L2, L3, DRAM the cache simulation's GB where exported; seconds = Self Elapsed Time (else
Self Time). Advisor's own Self GFLOPS and Self AI are checked against these, not used.
"""

from __future__ import annotations

import csv
import re

from ..errors import ParseError
from ..files import nul_safe
from ..files_kind import ADVISOR_LOOP_COLUMN, advisor_header
from ..model.kernel import Kernel, names_warned_by_reader
from ..model.provenance import COUNTED, MEASURED
from .kernelfile_rows import _warn_rows, finish_read

GIGA = 1e9
GFLOP = "Self GFLOP"
BYTES_GB = {"L1": "Self Memory GB", "L2": "Self L2 GB", "L3": "Self L3 GB",
            "DRAM": "Self DRAM GB"}
TIMES = ("Self Elapsed Time", "Self Time")
EXPORT = ("`advisor --report=survey --format=csv --show-all-columns --project-dir=DIR "
          "--report-output=loops.csv` after `advisor --collect=roofline` (or survey, then "
          "tripcounts --flop)")
# Advisor prints 3 decimals: a given Self GFLOPS or Self AI this far off ours is not rounding
_REL, _ABS = 0.02, 6e-4
_CUT = ("the file ends inside this row (no line break after it, a cell short or a quote "
        "left open: file cut short?)")
_META = {"ID": "advisor_id", "Source Location": "source", "Data Types": "data_types",
         "Type": "loop_type", "Vector ISA": "vector_isa", "Self GINTOP": "gintop"}


@names_warned_by_reader()
def kernels_from_advisor(text: str, path: str) -> tuple[Kernel, ...]:
    """The loops of an Advisor survey CSV as Kernels (module docstring); ParseError naming
    Advisor and the export command where a column rooflab needs is missing."""
    header_line, cols, rows, cut = _table(text, path)
    time_col = next((c for c in TIMES if c in cols), None)
    missing = [c for c in (ADVISOR_LOOP_COLUMN, GFLOP) if c not in cols]
    missing += [] if any(c in cols for c in BYTES_GB.values()) else [BYTES_GB["L1"]]
    missing += [] if time_col else [TIMES[0]]
    if missing:
        raise ParseError(f"Intel Advisor survey CSV without column(s) {', '.join(missing)}; "
                         f"rooflab reads {ADVISOR_LOOP_COLUMN}, {GFLOP}, {BYTES_GB['L1']} "
                         f"(and Self L2/L3/DRAM GB), {TIMES[0]} (or {TIMES[1]}); export them "
                         f"with {EXPORT}", path=path, line=header_line)
    kernels, wheres, used, defaulted, skipped, mixed = [], [], [], [], {}, []
    for line, row in rows:
        got = _loop(row, time_col)
        if isinstance(got, str):
            skipped.setdefault(got, []).append(
                ((line, f"'{row[ADVISOR_LOOP_COLUMN]}'"), "skipped"))
            continue
        k, defaulted_here, both = got
        wheres.append((line, f"loop '{k.name}'"))
        defaulted += [len(kernels)] if defaulted_here else []
        mixed += [(wheres[-1], f"Data Types '{row.get('Data Types')}'")] if both else []
        kernels.append(k)
        used.append(row)
    if cut:
        skipped.setdefault(_CUT, []).append(((cut[0], f"'{cut[1]}'"), "skipped"))
    for why, where in skipped.items():
        _warn_rows(path, where, f"{why} ({len(where)} row(s))")
    if not kernels and not rows:   # a header, then at most a row the file ends inside
        at = cut[0] if cut else header_line
        ends = f"inside the first, line {at}" if cut else "there"
        raise ParseError(f"no loop row after the header (line {header_line}): the file ends "
                         f"{ends} (cut short?); export it again with {EXPORT}", path=path,
                         line=at)
    if not kernels:
        raise ParseError(f"no loop with {GFLOP}, bytes and a time above zero: the FLOP come "
                         f"from Advisor's Characterization (tripcounts --flop); export with "
                         f"{EXPORT}", path=path, line=header_line)
    if mixed:
        _warn_rows(path, mixed, "Data Types has both Float64 and Float32, and Advisor's Self "
                                "GFLOP does not split them: judged as fp64, the lower "
                                "peak, so their % of roof is an upper bound")
    _check_given(path, kernels, wheres, used, time_col)
    kernels = _call_sites(path, kernels, wheres)
    return finish_read(path, kernels, wheres, [None] * len(kernels), defaulted,
                       "export Advisor's Data Types column (--show-all-columns), which "
                       "says Float64 or Float32 for each loop")


def _table(text: str, path: str
           ) -> tuple[int, list[str], list[tuple[int, dict]], tuple[int, str] | None]:
    """(header's 1-based line, column names, [(line, {column: cell})], the last row when the
    file ends inside it: (line, loop name), else None) of the survey CSV."""
    found = advisor_header(text)
    if found is None:   # kernelfile sends only files advisor_header told apart
        raise ParseError(f"no Intel Advisor survey header ({ADVISOR_LOOP_COLUMN}, {GFLOP}, "
                         f"...); export with {EXPORT}", path=path)
    first, delimiter = found
    lines = text.splitlines()[first:]
    reader = csv.reader(nul_safe(lines), delimiter=delimiter)
    cols = [c.strip() for c in next(reader)]
    rows, cut = [], None
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        row = dict(zip(cols, (c.strip() for c in cells), strict=False))
        if row.get(ADVISOR_LOOP_COLUMN):
            rows.append((first + reader.line_num, row))
    # A file cut inside its last row (no line break after it, a cell short or a quote left
    # open) read that row's cut cells as a loop: an empty time ("no Self Elapsed Time"), or
    # a loop without its Data Types judged as fp32
    last = lines[-1] if lines else ""
    if rows and not text.endswith(("\n", "\r")) and (
            last.count('"') % 2 or len(next(csv.reader([last], delimiter=delimiter), []))
            < len(cols)):
        line, row = rows.pop()
        cut = (line, row[ADVISOR_LOOP_COLUMN])
    return first + 1, cols, rows, cut


def refuse_preamble_only(text: str, path: str) -> None:
    """A file holding Advisor's preamble ('Survey Data version=...' or its banner) and no
    header: the export was cut before its header (said so, not "missing column(s) name,
    flop, bytes" of a kernel CSV)."""
    head = text[:4096]
    first = head.lstrip().split("\n", 1)[0]
    # the file starts as Advisor's does (a kernel named 'Intel(R) Advisor ...' on line 2 of
    # a kernel CSV is not a preamble)
    if (first.startswith("sep=") or _PREAMBLE.match(first)) and _PREAMBLE.search(head):
        n = len(text.splitlines())
        raise ParseError(f"an Intel Advisor survey CSV that ends before its header row "
                         f"({ADVISOR_LOOP_COLUMN}, {GFLOP}, ...): only Advisor's preamble, "
                         f"{n} line(s) (file cut short?); export it again with {EXPORT}",
                         path=path, line=n)


# a line of Advisor's preamble: its banner's first line, its version line (both quoted)
_PREAMBLE = re.compile(r'^"?(?:Intel\(R\) Advisor|Survey Data version=)', re.MULTILINE)
_TIME = re.compile(r"^\s*(<)?\s*([0-9.]+(?:[eE][+-]?\d+)?)\s*s?\s*$")


def _cell(row: dict, col: str) -> tuple[float | None, bool]:
    """(the cell's number, whether it was '< x': below Advisor's resolution); (None, False)
    for an empty, 'N/A' or non-numeric cell."""
    m = _TIME.match(row.get(col) or "")
    if not m:
        return None, False
    try:
        return float(m[2]), bool(m[1])
    except ValueError:
        return None, False


def _loop(row: dict, time_col: str) -> tuple[Kernel, bool, bool] | str:
    """(the Kernel, precision defaulted, Data Types both fp64 and fp32), or why the row
    gives none."""
    seconds, below = _cell(row, time_col)
    if below:
        return f"{time_col} below Advisor's resolution ('< ...'): no rate to place"
    if not seconds:
        return f"no {time_col} (empty or 0)"
    gflop, _ = _cell(row, GFLOP)
    if gflop is None:
        return f"no {GFLOP} (a loop outside the FLOP collection)"
    nbytes = {lv: v * GIGA for lv, col in BYTES_GB.items()
              if (v := _cell(row, col)[0]) is not None and v > 0}
    if not gflop and not nbytes:
        return f"{GFLOP} and every bytes column 0: no work of its own (a caller)"
    precision, defaulted, both = _precision(row.get("Data Types", ""))
    meta = {key: row[col] for col, key in _META.items() if row.get(col)}
    meta["seconds_column"] = time_col
    # a mixed loop's fp64 is not marked "assumed": that word's note says "judged as fp32"
    provenance = {"flop": COUNTED, "bytes": COUNTED, "seconds": MEASURED}
    if both:
        meta["precision_from"] = "Data Types lists Float64 and Float32: held to fp64"
    k = Kernel(row[ADVISOR_LOOP_COLUMN], flop={precision: gflop * GIGA}, bytes=nbytes,
               seconds=seconds, provenance=provenance, meta=meta)
    return k, defaulted and gflop > 0, both


def _precision(data_types: str) -> tuple[str, bool, bool]:
    """(precision, defaulted, both) from Data Types ('Float64; UInt64'): integer types are
    Advisor's INTOP, counted apart (Self GINTOP)."""
    words = data_types.lower()
    f64, f32 = "float64" in words, "float32" in words
    if f64 or f32:
        return ("fp64" if f64 else "fp32"), False, f64 and f32
    return "fp32", True, False


def _check_given(path: str, kernels: list[Kernel], wheres: list, rows: list[dict],
                 time_col: str) -> None:
    """One warning for the loops whose Self GFLOPS or Self AI (Advisor's own) is off the
    rate and AI read here: a wrong time column or a file edited by hand."""
    off = []
    for k, where, row in zip(kernels, wheres, rows, strict=True):
        gflops, _ = _cell(row, "Self GFLOPS")
        ours = k.total_flop / k.seconds / GIGA
        if gflops is not None and not _close(gflops, ours):
            off.append((where, f"Self GFLOPS {gflops:g} but {GFLOP} / {time_col} = "
                               f"{ours:.4g}"))
        ai, _ = _cell(row, "Self AI")
        if ai is not None and k.bytes.get("L1") and not _close(ai, k.total_flop /
                                                                k.bytes["L1"]):
            off.append((where, f"Self AI {ai:g} but {GFLOP} / {BYTES_GB['L1']} = "
                               f"{k.total_flop / k.bytes['L1']:.4g}"))
    if off:
        _warn_rows(path, off, "the point is placed from the counts and the time read here, "
                              "not Advisor's own rate and AI; check the time column (Self "
                              "Elapsed Time is the roofline's) and that the file is as "
                              "Advisor wrote it")


def _close(given: float, ours: float) -> bool:
    return abs(given - ours) <= max(_REL * abs(ours), _ABS)


def _call_sites(path: str, kernels: list[Kernel], wheres: list) -> list[Kernel]:
    """Kernels of one loop name (Advisor lists a loop once per call site, each with its
    own ID and counts) named apart, 'name #2' in file order as `rooflab ncu` names repeats,
    with one warning; the generic rows-of-one-name warning told an Advisor user to rename
    kernels in a file Advisor wrote."""
    from dataclasses import replace

    seen: dict[str, int] = {}
    out, renamed = [], []
    for k, where in zip(kernels, wheres, strict=True):
        seen[k.name] = n = seen.get(k.name, 0) + 1
        if n > 1:
            renamed.append((where, f"named '{k.name} #{n}'"))
            k = replace(k, name=f"{k.name} #{n}", meta={**k.meta, "renamed_from": k.name})
        out.append(k)
    if renamed:
        _warn_rows(path, renamed, "Advisor lists a loop once per call site: each call site "
                                  "is its own kernel, numbered in file order")
    return out
