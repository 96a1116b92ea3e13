"""Intel Advisor's roofs (the CPU roofline benchmarks it runs before a roofline collection)
as rooflab ceilings: `rooflab specs import roofs.csv` (all threads) and `roofs.csv@1t` (its
single-threaded roofs).

The format, from public material (no Intel page documents it row by row):
- `advisor --report=roofs --format=csv --project-dir=P --report-output=roofs.csv`: a
  header `Name,Bandwidth,Type,Device`, then one row a roof: `DRAM Bandwidth,175273218366,
  memory,CPU`, `DP Vector FMA Peak,1349734446677,compute,CPU` (rows quoted from a real
  2023.0 run in a public design note of an Advisor pipeline; its parser looks for the
  `Name` header row, so a preamble may come first). Values are bytes/s and FLOP/s (INTOP/s
  for the integer roofs), whole numbers.
- `advixe-cl --report=roofs` without --format: the same rows as a text table, name, value
  and type apart by spaces and tabs (`L1 bandwidth (single-threaded)  \\t  315579346298\\t
  memory`), as reframe-hpc/reframe's cscs-checks intel_advisor_roofline.py quotes a full
  2019 report and parses it (`^L1\\sbandwidth\\s\\(single-threaded\\)\\s+(\\d+)\\s+memory$`).
- Names in that report: `{L1,L2,L3,DRAM} Bandwidth`, `Scalar {L1,L2,L3} Bandwidth`, `DRAM
  Bandwidth (single node)`, `{SP,DP} Vector {FMA,Add} Peak`, `Scalar Add Peak`, `Integer
  Scalar Add Peak`, `Int{32,64} Vector Add Peak`; each also `(single-threaded)`, lower-case
  'bandwidth' there in 2019.

Where rooflab's vocabulary has a place: the four levels; DP/SP Vector FMA Peak = fp64/fp32
vector; Scalar Add Peak = fp64 and fp32 scalar (x86's scalar adds run at one rate in
either precision; Advisor names no precision); Int64/Int32 Vector Add Peak = int64/int32 vector;
Integer Scalar Add Peak = int64 and int32 scalar. The rest (Vector Add peaks: the no-FMA
ceilings, which rooflab derives from a kernel's FMA share; Scalar bandwidths; one NUMA
node's DRAM; GPU rows) are named in the roof's notes with their values, never dropped
unsaid.
"""

from __future__ import annotations

import csv
import re
import shlex
from dataclasses import dataclass

from ..errors import InputError, ParseError
from ..files_decode import cut_note, last_line_cut
from ..model.ceiling import Ceiling
from ..units import fmt_fraction, fmt_rate, si

ONE_THREAD = "(single-threaded)"
_ROW_TEXT = re.compile(r"^\s*(?P<name>\S.*?)\s+(?P<value>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
                       r"\s+(?P<type>memory|compute)\b\s*(?P<device>\S*)\s*$", re.I)
_LEVEL = re.compile(r"^(L1|L2|L3|DRAM) bandwidth$", re.I)
_INT_VECTOR = re.compile(r"^int(8|16|32|64) vector add peak$", re.I)
_COMPUTE = {"dp vector fma peak": (("fp64", "vector"),),
            "sp vector fma peak": (("fp32", "vector"),),
            "scalar add peak": (("fp64", "scalar"), ("fp32", "scalar")),
            "integer scalar add peak": (("int64", "scalar"), ("int32", "scalar"))}
_WHY = {
    "scalar add peak": "a scalar add loop, no FMA and no SIMD (x86's scalar adds, addsd "
                       "and addss, issue at one rate; Advisor names no precision): a scalar "
                       "FMA loop can go up to 2x it",
    "integer scalar add peak": "a scalar integer add loop (one rate for 32- and 64-bit adds)",
}


@dataclass(frozen=True)
class AdvisorRoof:
    """One row of Advisor's roofs report, as written: bytes/s or FLOP/s."""

    name: str
    value: float
    kind: str          # 'memory' or 'compute'
    device: str        # 'CPU', 'GPU', or '' (the text report has no column)
    line: int

    @property
    def one_thread(self) -> bool:
        return self.name.lower().endswith(ONE_THREAD)

    @property
    def base(self) -> str:
        """The name without '(single-threaded)', lower case: 'l1 bandwidth'."""
        return self.name.lower().removesuffix(ONE_THREAD).strip()


def parse_advisor_roofs(text: str) -> list[AdvisorRoof]:
    """Every roof row of an Advisor roofs report, CSV or text ([] when none)."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    out = []
    for n, row in enumerate(csv.reader(lines), start=1):
        cells = [c.strip() for c in row]
        if len(cells) >= 3 and cells[2].lower() in ("memory", "compute") and \
                _number(cells[1]) is not None:
            out.append(AdvisorRoof(cells[0], _number(cells[1]), cells[2].lower(),
                                   cells[3] if len(cells) > 3 else "", n))
            continue
        m = _ROW_TEXT.match(lines[n - 1]) if len(row) <= 1 else None
        if m:
            out.append(AdvisorRoof(m["name"].strip(), float(m["value"]), m["type"].lower(),
                                   m["device"], n))
    return out


def is_advisor_roofs(text: str) -> bool:
    """Two or more rows of Advisor's roofs report, one of them a Bandwidth or Peak, in the
    file's head (a report has some 30 rows; a kernel CSV of 1e5 rows is not read twice)."""
    rows = parse_advisor_roofs(text[:16384])
    return len(rows) >= 2 and any(r.base.endswith(("bandwidth", "peak")) for r in rows)


def _number(cell: str) -> float | None:
    try:
        v = float(cell)
    except ValueError:
        return None
    return v if v > 0 else None


def advisor_ceilings(text: str, path: str, one_thread: bool
                     ) -> tuple[list[Ceiling], list[str]]:
    """The ceilings of the file's all-thread roofs (one_thread: of its single-threaded
    ones), measured, and the notes on the rows that gave none. ParseError when the file
    has no CPU row of that kind rooflab reads."""
    rows = parse_advisor_roofs(text)
    gpu = [r for r in rows if r.device.upper() == "GPU"]
    cpu = [r for r in rows if r not in gpu and r.one_thread == one_thread]
    ceilings, left = [], []
    for r in cpu:
        got = _ceilings(r, path)
        ceilings += got
        left += [] if got else [r]
    if not ceilings:
        which = "single-threaded" if one_thread else "all-thread"
        raise ParseError(f"Intel Advisor's roofs report with no {which} CPU roof rooflab "
                         f"reads (L1/L2/L3/DRAM Bandwidth, DP/SP Vector FMA Peak, Scalar "
                         f"Add Peak, Int64 Vector Add Peak ...); it has: "
                         f"{', '.join(r.name for r in rows) or 'no rows'}", path=path)
    notes = _left_notes(left, cpu, path) + _cut(text, rows, ceilings, path, one_thread)
    others = [r for r in rows if r not in gpu and r.one_thread != one_thread]
    if others and not one_thread:
        notes.append(f"the file's single-threaded roofs ({len(others)}, one core's) are "
                     f"imported on their own: `rooflab specs import "
                     f"{shlex.quote(path + '@1t')} -o roof-1t.json`, for loops that ran "
                     f"on one thread")
    if one_thread:
        notes.append("Advisor's single-threaded roofs: one core's; a loop that ran on more "
                     "threads belongs on the all-thread roof (the file without '@1t')")
    if gpu:
        notes.append(f"left out: {len(gpu)} GPU roof(s) ({', '.join(r.name for r in gpu[:3])}"
                     f"{' ...' if len(gpu) > 3 else ''}): rooflab reads Advisor's CPU roofs")
    return ceilings, notes


def _cut(text: str, rows: list[AdvisorRoof], ceilings: list[Ceiling], path: str,
         one_thread: bool) -> list[str]:
    """A note on a report whose last line is cut short (no line break, not a whole row: the
    rows after it are lost), or ParseError naming its line when it leaves the roof without
    compute or bandwidth roofs: it once said only "the roof has no compute ceiling"."""
    cut = last_line_cut(text)
    if cut is None or any(r.line == cut[0] for r in rows):
        return []
    lacks = [what for what, have in (("compute (Peak)", any(c.precision for c in ceilings)),
                                     ("bandwidth", any(c.level for c in ceilings))) if not have]
    if lacks:
        which = "single-threaded" if one_thread else "all-thread"
        tail = " ".join(cut[1].split())[-40:]
        raise ParseError(f"Intel Advisor's roofs report has no {which} {' and no '.join(lacks)} "
                         f"roof rooflab reads: the file ends inside this line ('{tail}', no "
                         f"line break: cut short?), so the rows after it are lost; export it "
                         f"again (advisor --report=roofs --format=csv --report-output=FILE)",
                         path=path, line=cut[0])
    return [f"{path}:{cut[0]}: {cut_note(cut[1])}"]


def _ceilings(r: AdvisorRoof, path: str) -> list[Ceiling]:
    """The rooflab ceilings one row gives ([] where it has no place)."""
    common = dict(provenance="measured", source=f"Intel Advisor roofs ({path})")
    said = f"Advisor's '{r.name}' ({path}, line {r.line}), {r.value:.0f} {_unit(r)} as written"
    m = _LEVEL.match(r.base)
    if r.kind == "memory" and m:
        return [Ceiling(r.value, level=m[1].upper(), method=said, **common)]
    if r.kind != "compute":
        return []
    pairs = _COMPUTE.get(r.base)
    if pairs is None and _INT_VECTOR.match(r.base):
        pairs = ((f"int{_INT_VECTOR.match(r.base)[1]}", "vector"),)
    why = f": {_WHY[r.base]}" if r.base in _WHY else ""
    return [Ceiling(r.value, precision=p, unit=u, method=said + why, **common)
            for p, u in pairs or ()]


def _unit(r: AdvisorRoof) -> str:
    if r.kind == "memory":
        return "bytes/s"
    return "INTOP/s" if r.base.startswith("int") else "FLOP/s"


def _left_notes(left: list[AdvisorRoof], rows: list[AdvisorRoof], path: str) -> list[str]:
    """Notes on the rows that gave no ceiling: a Vector Add peak beside its FMA peak (the
    no-FMA ceiling), and the rest with their values."""
    fma = {r.base.replace(" add ", " fma "): r for r in rows if " fma " in r.base}
    notes, rest = [], []
    for r in left:
        twin = fma.get(r.base.replace(" add ", " fma ")) if " vector add " in r.base else None
        if twin is not None:
            notes.append(f"Advisor's '{r.name}' {_rate(r)} is "
                         f"{fmt_fraction(r.value / twin.value, 1)} of its FMA peak: where a loop "
                         f"of vector adds alone tops out on this machine (rooflab's no-FMA ceiling "
                         f"from a kernel's FMA share takes adds at an FMA's issue rate, "
                         f"50 %)")
        else:
            rest.append(r)
    if rest:
        notes.append(f"left out of {path}: " + "; ".join(
            f"'{r.name}' {_rate(r)} ({_no_place(r)})" for r in rest))
    return notes


def _rate(r: AdvisorRoof) -> str:
    if r.kind == "memory":
        return si(r.value, "B/s")
    return fmt_rate(r.value, "int64" if r.base.startswith("int") else "fp64")


def _no_place(r: AdvisorRoof) -> str:
    """Why a row has no rooflab ceiling, in a few words."""
    if "single node" in r.base:
        return ("one NUMA node's DRAM; rooflab's DRAM is the machine's: for loops kept to "
                "one node, type it as --dram")
    if r.base.startswith("scalar") and r.kind == "memory":
        return "scalar loads' bandwidth; a rooflab level has one bandwidth, the vector one"
    return "no such level or ceiling in rooflab"


def advisor_host(path: str, one_thread: bool) -> str:
    """The roof's default name: 'roofs (Intel Advisor)', '... 1 thread)' for @1t."""
    from pathlib import Path

    stem = Path(path).stem or "roofs"
    return f"{stem} (Intel Advisor{', 1 thread' if one_thread else ''})"


def check_at(spec: str, at: str) -> bool:
    """Whether '@AT' after an Advisor roofs file picks its single-threaded roofs ('1t'):
    True for '1t', False for none; any other is an InputError."""
    if not at:
        return False
    if at.strip().lower() in ("1t", "1thread", "1threads"):
        return True
    raise InputError(f"{spec}: Advisor's roofs name their levels, so no '@{at}'; "
                     f"'@1t' picks the file's single-threaded roofs, none the all-thread ones")
