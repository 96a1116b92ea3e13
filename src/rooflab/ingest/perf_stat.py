"""`perf stat` output -> one Kernel per file: the whole measured command, its FLOP from the
core's FP events, its DRAM bytes from the memory controllers' events (Intel's uncore IMC,
AMD's UMC or data fabric), its time.

Collect, for a whole run (perf stat has no regions; put the loop in its own program):

    perf stat -a -x, -o run.csv -e duration_time,fp_arith_inst_retired.scalar_double,\
fp_arith_inst_retired.128b_packed_double,fp_arith_inst_retired.256b_packed_double,\
fp_arith_inst_retired.512b_packed_double,uncore_imc/cas_count_read/,\
uncore_imc/cas_count_write/ ./app

Two layouts are read:

- CSV (`-x,` or `-x\\;`), as tools/perf/Documentation/perf-stat.txt "CSV FORMAT" orders the
  fields: [timestamp with -I], [CPU/core/socket id with -A/--per-*], [aggregated CPUs],
  counter value, unit, event name, counter run time, % of time the counter ran, [variance
  with -r], [metric value, metric unit]. `<not counted>` / `<not supported>` values, and
  `#` comment lines (-o writes "# started on ..."), are recognised. perf writes no
  "seconds time elapsed" footer in CSV mode (stat-display.c: `if (!interval &&
  !config->csv_output && !config->json_output) print_footer(config)`), so the time comes
  from the `duration_time` event (ns).
- The default text output: `    1,234,567      fp_arith_inst_retired.scalar_double`,
  `    1,234.56 MiB  uncore_imc/cas_count_read/`, and the footer
  `       1.001234567 seconds time elapsed` (builtin-stat.c's sample output). With
  --per-socket/--per-die/--per-core/--per-node each line starts with the id and the number
  of CPUs aggregated (stat-display.c, print_aggr_id_std: "S0        8   1,234   cycles"),
  with -A the CPU alone ("CPU0   1,234   cycles").

perf formats numbers in the user's locale (builtin-stat.c calls setlocale(LC_ALL, "")):
de_DE prints `1.234.567` and `0,500000000 seconds time elapsed`. The footer, printed with
%.9f and never grouped, says which mark is the decimal one; without a footer a value with
'.' thousands ('1.234.567') does. Grouping is checked, so a number is never read 1000x off.
In -x output a decimal comma ('1536,00') is read under -x\\; and refused under -x, (which
splits it).

Counts (event names as perf lists them, with or without a `cpu/.../` or `cpu_core/.../`
PMU wrapper; lines of one event, per CPU or per PMU instance, are added up):

- FLOP: fp_arith_inst_retired.{scalar,128b_packed,256b_packed,512b_packed}_double x
  1/2/4/8 and _single x 1/4/8/16 (likwid's FLOPS_DP/FLOPS_SP weights; Intel counts an FMA
  instruction twice in these events, so an FMA is 2 FLOP per element: see ingest/likwid.py).
  AMD's fp_ret_sse_avx_ops.all counts FLOPs of every precision: read as fp64, or as the
  precision the user gives (--precision), with a note.
- DRAM bytes: uncore_imc[_N]/cas_count_read/ + cas_count_write/ (servers; also the JSON
  names unc_m_cas_count.rd / .wr), or uncore_imc[_free_running]/data_read(s)/ +
  data_write(s)/ (client parts). perf scales these by their sysfs .scale/.unit (64 B per
  CAS, printed in MiB): the unit column is honoured; a bare count (no unit) is x 64 B.
  AMD: amd_umc_N/umc_cas_cmd.rd/ + .wr/, or the data fabric's
  amd_df/local_processor_{read,write}_data_beats_csN/, 64 B per CAS or beat, summed over
  the controllers and channels given (see _DRAM_SOURCES).
- time: "seconds time elapsed", else duration_time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, ParseError
from ..files import STDIN_NAME
from ..model.kernel import Kernel
from .aggregate import step_labels
from .likwid import FP_ARITH, counter_text, sockets_note, stem
from .profile_import import ProfileImport, held_notes
from .skips import SkipLog, read_each

COLLECT = ("collect with `perf stat -a -x, -o run.csv -e duration_time,"
           "fp_arith_inst_retired.256b_packed_double,...,uncore_imc/cas_count_read/,"
           "uncore_imc/cas_count_write/ ./app`")
_UNITS = {"": None, "b": 1.0, "bytes": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 2.0 ** 10,
          "mib": 2.0 ** 20, "gib": 2.0 ** 30}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "": 1e-9}
_NOT_COUNTED = ("<not counted>", "<not supported>")
_ID = re.compile(r"^(CPU\d+|S\d+(-\w+)*|N\d+|C\d+)$")
# --per-socket/-die/-core/-node: "S0-D0   8 "; -A: "CPU3 " (no count of CPUs)
_AGGR = re.compile(r"^\s*(?P<id>CPU\d+|S\d+(?:-[A-Z]+\d+)*|N\d+)\s+"
                   r"(?:(?P<cpus>\d+)\s+(?=[\d<]))?")
_TEXT = re.compile(r"^\s*(?P<value><not counted>|<not supported>|[\d.,\u00a0\u202f]*\d)\s+"
                   r"(?:(?P<unit>B|Bytes|KiB|MiB|GiB|KB|MB|GB|ns|us|ms|msec)\s+)?"
                   r"(?P<event>\S+)(?P<rest>.*)$")
_ELAPSED = re.compile(r"^\s*(?P<s>[\d.,]+)\s+(?:\+-\s*[\d.,]+\s+)?seconds time elapsed")
_COMMAND = re.compile(r"Performance counter stats for '(?P<cmd>.*)'")
_PCT = re.compile(r"\((?P<pct>[\d.,]+)%\)\s*$")
# DRAM traffic, one source per vendor's counters: (what it is, read pattern, write pattern).
# Each count is 64 B where perf gives no unit. AMD Zen 4's data fabric counts "read data
# beats (64 bytes) for local processor at Coherent Station N" (Linux perf, tools/perf/
# pmu-events/arch/x86/amdzen4/data-fabric.json; its dram_read_data_for_local_processor
# metric sums cs0..cs11); Linux 6.x's amd_umc PMU counts each memory controller's 64-B
# CAS commands. The sources count the same traffic: only the first one found is read.
_DRAM_SOURCES = (
    ("uncore IMC",
     re.compile(r"(?:imc|unc_m).*(?:cas_count[_.]?(?:read|rd)\b|data_reads?\b)"),
     re.compile(r"(?:imc|unc_m).*(?:cas_count[_.]?(?:write|wr)\b|data_writes?\b)")),
    ("AMD UMC CAS", re.compile(r"umc_cas_cmd[._]rd\b"), re.compile(r"umc_cas_cmd[._]wr\b")),
    ("AMD data fabric", re.compile(r"local_processor_read_data_beats_cs\d+"),
     re.compile(r"local_processor_write_data_beats_cs\d+")),
)
AMD_FLOPS = "fp_ret_sse_avx_ops.all"
AMD_DRAM = ("amd_df/local_processor_read_data_beats_cs0/ ... _cs11/ and "
            "local_processor_write_data_beats_csN/ (Zen 4), or amd_umc_N/umc_cas_cmd.rd/ and "
            "umc_cas_cmd.wr/ (Linux 6.x)")
# perf's software events: counted by the kernel, so they have values without a PMU
SOFTWARE = ("duration_time", "user_time", "system_time", "task-clock", "cpu-clock",
            "page-faults", "faults", "minor-faults", "major-faults", "context-switches", "cs",
            "cpu-migrations", "migrations", "alignment-faults", "emulation-faults", "dummy")
NO_PMU = ("every hardware event is <not supported>: this machine exposes no PMU (a VM "
          "without vPMU?); perf cannot count FLOP or bytes here")
# the --precision a user may give for FLOP the counters do not split by precision
PRECISIONS = ("fp64", "fp32", "fp16", "bf16")


@dataclass
class _Counts:
    """Event totals of one file: {event: value in its unit}, units, lines, and the rest."""

    values: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)   # least % of time counted
    missing: list[str] = field(default_factory=list)          # <not counted> events
    unsupported: list[str] = field(default_factory=list)      # <not supported> ones
    elapsed: float | None = None
    command: str = ""
    sockets: list[str] = field(default_factory=list)          # S0, S1 of --per-socket/-die
    comma: bool = False                                       # a decimal-comma locale
    seen: dict[tuple[str, str], int] = field(default_factory=dict)   # (id, event): line

    def add(self, event: str, value: float, unit: str, line: int, pct: float | None) -> None:
        # a wall time is the same on every socket's line (--per-socket), not a count to add
        self.values[event] = (max(value, self.values.get(event, 0.0))
                              if event == "duration_time" else
                              self.values.get(event, 0.0) + value)
        self.units.setdefault(event, unit)
        self.lines.setdefault(event, line)
        if pct is not None and pct < 99.99:
            self.running[event] = min(pct, self.running.get(event, 100.0))


def _plain(event: str) -> str:
    """'cpu/fp_arith_inst_retired.scalar_double/u' -> 'fp_arith_inst_retired.scalar_double';
    an uncore event keeps its PMU ('uncore_imc_0/cas_count_read/'), lower case."""
    e = event.strip().lower()
    hit = re.match(r"^(cpu|cpu_core|cpu_atom)/([^/=,]+)/\w*$", e)
    if hit:
        return hit[2]
    return e.split(":")[0] if "/" not in e else e


def _number(text: str, comma: bool = False) -> float:
    """A number as perf prints it: C locale '1,234,567.89', or (comma) a decimal-comma
    locale's '1.234.567,89' ('1 234,5' with a no-break space in fr_FR). ValueError for a
    grouping in the wrong place ('1.234.567' read with '.' as the decimal mark), so a
    number of the other locale is an error, not read 1000x off."""
    group, point = (".", ",") if comma else (",", ".")
    t = text.strip().replace("\u00a0", group).replace("\u202f", group)
    whole, _, frac = t.partition(point)
    parts = whole.split(group)
    if len(parts) > 1 and not (1 <= len(parts[0]) <= 3
                               and all(len(p) == 3 for p in parts[1:])):
        raise ValueError(text)
    digits = "".join(parts)
    if digits.isdigit() and (frac.isdigit() or point not in t):
        return float(digits + "." + (frac or "0"))
    if comma or "," in t:
        raise ValueError(text)
    return float(t)          # -x's other forms (1e+06, nan: the caller checks the value)


def _decimal_comma(lines: list[str]) -> bool:
    """Whether this text output was printed in a decimal-comma locale (de_DE): the
    footer's %.9f seconds has a comma; without one, a value has '.' thousands."""
    for ln in lines:
        hit = _ELAPSED.match(ln)
        if hit:
            return "," in hit["s"]
    return any(re.match(r"^\s*\d{1,3}(\.\d{3})+(,\d+)?\s", _AGGR.sub("", ln))
               for ln in lines)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_perf(path: str, log: SkipLog, text: str | None = None) -> _Counts:
    """One file's counts (`text`: its contents, read already from standard input)."""
    lines = counter_text(path, text).splitlines()
    data = [(n, ln) for n, ln in enumerate(lines, start=1)
            if ln.strip() and not ln.lstrip().startswith("#")]
    head = "\n".join(lines[:40])
    if "TABLE,Group" in head or "TABLE,Region" in head or "STRUCT,Info" in head:
        raise ParseError("likwid-perfctr output, not perf stat's: read it with "
                         "`rooflab likwid FILE`", path=path, line=1)
    if re.search(r"^#\s+time\s", head, re.M):
        raise _interval(path, 1)
    text_layout = any(_TEXT.match(_AGGR.sub("", ln)) for _, ln in data)
    counts = _Counts(comma=text_layout and _decimal_comma(lines))
    for n, ln in enumerate(lines, start=1):
        hit = _COMMAND.search(ln)
        if hit and not counts.command:
            counts.command = hit["cmd"]
        hit = _ELAPSED.match(ln)
        if hit:
            counts.elapsed = _value(hit["s"], "seconds time elapsed", n, counts, path)
    # the text layout pads with spaces ("  1,234,567      cycles"); -x writes none
    if text_layout:
        for n, ln in data:
            if not (_COMMAND.search(ln) or _ELAPSED.match(ln) or " seconds " in ln):
                _text_line(ln, n, counts, path, log)
    else:
        sep = ";" if any(";" in ln for _, ln in data) else ","
        for n, ln in data:
            _csv_line(ln, sep, n, counts, path, log)
    if not counts.values and not counts.missing and counts.elapsed is None:
        raise ParseError("no perf stat counter line found (value, [unit,] event); "
                         + COLLECT, path=path, line=1 if lines else None)
    return counts


def _value(text: str, what: str, n: int, counts: _Counts, path: str) -> float:
    try:
        return _number(text, counts.comma)
    except ValueError:
        locale = ("1.234.567,89 (a decimal-comma locale)" if counts.comma else
                  "1,234,567.89")
        raise ParseError(f"{what} = '{text.strip()}' is not a number as this file writes "
                         f"them ({locale}); re-run perf with LC_ALL=C", path=path,
                         line=n) from None


def _interval(path: str, line: int) -> ParseError:
    return ParseError("interval output (perf stat -I): each line is one interval; rooflab "
                      "reads a whole run: re-run without -I", path=path, line=line)


def _csv_line(line: str, sep: str, n: int, counts: _Counts, path: str, log: SkipLog) -> None:
    f = [c.strip() for c in line.split(sep)]
    if sep == "," and len(f) >= 4 and f[0].isdigit() and f[1].isdigit() and (
            f[2].lower() in _UNITS or f[2].lower() in _TIME_UNITS):
        # "1536,00,MiB,...": a decimal comma that -x, split (an interval's time has a '.')
        raise ParseError(f"'{','.join(f[:3])}' looks like a value with a decimal comma "
                         f"(perf ran in a locale such as de_DE), which -x, splits in two; "
                         f"re-run with LC_ALL=C perf stat ..., or -x\\;", path=path, line=n)
    if len(f) >= 3 and _is_number(f[0]) and (_is_number(f[1]) or f[1] in _NOT_COUNTED
                                            or _ID.match(f[1])):
        raise _interval(path, n)
    where = ""
    while f and not _is_number(f[0]) and f[0] not in _NOT_COUNTED and _ID.match(f[0]):
        where = f[0]
        _socket(f[0], counts)
        f = f[1:]                                # -A / --per-socket: the CPU or socket id
    if len(f) >= 4 and _is_number(f[0]) and _is_number(f[1]):
        f = f[1:]                                # --per-*: the number of CPUs aggregated
    if len(f) < 3:
        raise ParseError(f"'{line.strip()[:80]}' is not a perf stat -x line (value, unit, "
                         f"event, ...); " + COLLECT, path=path, line=n)
    value, unit, event = f[0], f[1], f[2]
    k = 3
    while event.count("/") % 2 and k < len(f):   # cpu/event=0xc7,umask=0x1/ split by -x,
        event, k = f"{event}{sep}{f[k]}", k + 1
    pct = float(f[k + 1]) if len(f) > k + 1 and _is_number(f[k + 1]) else None
    if sep == ";" and "," in value:               # -x\; in a decimal-comma locale: 1536,00
        counts.comma = True
    _add(value, unit, event, n, pct, counts, path, log, where)


def _socket(ident: str, counts: _Counts) -> None:
    socket = re.match(r"^S\d+", ident)            # S1, S1-D0, S1-D0-C3: socket 1
    if socket and socket[0] not in counts.sockets:
        counts.sockets.append(socket[0])


def _text_line(line: str, n: int, counts: _Counts, path: str, log: SkipLog) -> None:
    aggr = _AGGR.match(line)                      # "S0        8   1,234  cycles"
    if aggr:
        _socket(aggr["id"], counts)
    hit = _TEXT.match(line[aggr.end():] if aggr else line)
    if hit is None:
        return                                    # perf's prose ("Some events weren't ...")
    rest = hit["rest"]
    first = rest.split()[0] if rest.split() else ""
    if (_is_number(hit["event"].replace(",", "")) and first) or _ID.match(hit["event"]):
        raise _interval(path, n)                  # "  1.0012   123,456   cycles"
    _add(hit["value"], hit["unit"] or "", hit["event"], n, _percent(rest, counts.comma),
         counts, path, log, aggr["id"] if aggr else "")


def _percent(rest: str, comma: bool) -> float | None:
    """The '(50.00%)' of time a multiplexed counter ran, None when not printed."""
    hit = _PCT.search(rest)
    try:
        return _number(hit["pct"], comma) if hit else None
    except ValueError:
        return None


def _add(value: str, unit: str, event: str, n: int, pct: float | None, counts: _Counts,
         path: str, log: SkipLog, where: str = "") -> None:
    name = _plain(event)
    if value in _NOT_COUNTED:
        log.add(n, f"{event}: {value} (left out; a {value.strip('<>')} event counts as "
                   f"unknown, not 0)")
        if name not in counts.missing:
            counts.missing.append(name)
        if value == "<not supported>" and name not in counts.unsupported:
            counts.unsupported.append(name)
        return
    if not re.fullmatch(r"[\d.,\u00a0\u202f]+", value.strip()) and not _is_number(value):
        # -x's metric lines (",,,,,1.23,insn per cycle") and the like: not a count
        log.add(n, f"{event}: value '{value}' is not a number (left out)")
        return
    x = _value(value, event, n, counts, path)       # digits: in this file's locale or error
    first = counts.seen.setdefault((where, event), n)
    if first != n:   # `-e cycles,cycles`: perf counts and prints it twice; adding doubles it
        log.add(n, f"{event}{' on ' + where if where else ''} appears twice (also line "
                   f"{first}): counted once, this line left out (an event given twice "
                   f"in -e?)")
        return
    if not math.isfinite(x) or x < 0:
        raise ParseError(f"{event} = '{value}' is not a count (>= 0); check the file",
                         path=path, line=n)
    counts.add(name, x, unit.strip(), n, pct)


def _bytes(counts: _Counts, event: str, path: str) -> float:
    unit = counts.units.get(event, "").lower()
    scale = _UNITS.get(unit, -1.0)
    if scale == -1.0:
        raise ParseError(f"{event}: unit '{counts.units[event]}' is not a byte unit (B, KiB, "
                         f"MiB, GiB, MB, GB) or empty (a count of 64-B lines)",
                         path=path, line=counts.lines[event])
    return counts.values[event] * (64.0 if scale is None else scale)


def kernel_fields(counts: _Counts, path: str,
                  precision: str | None = None) -> tuple[dict, list[str]]:
    """The run's FLOP, bytes and seconds, and notes on how they were got. precision: what
    the user says the code computes in (--precision), for FLOP the events do not split."""
    notes: list[str] = []
    nbytes, dram_notes = _dram(counts, path)
    flop = _flop(counts, precision, bool(nbytes), notes)
    notes += dram_notes
    seconds = counts.elapsed
    if seconds is None and "duration_time" in counts.values:
        unit = counts.units.get("duration_time", "").lower()
        seconds = counts.values["duration_time"] * _TIME_UNITS.get(unit, 1e-9)
        notes.append("time = duration_time (perf -x prints no 'seconds time elapsed')")
    elif seconds is not None:
        notes.append("time = 'seconds time elapsed' (the whole command)")
    for event, pct in counts.running.items():
        notes.append(f"{event} counted {pct:g} % of the time (multiplexed; perf scaled the "
                     f"count up): it may read off")
    if counts.missing:
        notes.append(f"not counted: {', '.join(counts.missing)} (what they count is missing: "
                     f"FLOP or bytes read low)")
    unread = [e for e in counts.values if not _read_event(e)]
    if unread:
        notes.append(f"not read (rooflab reads FP, DRAM and time events only): "
                     f"{', '.join(unread)}")
    if len(counts.sockets) > 1:
        notes.append(sockets_note(len(counts.sockets), ", ".join(counts.sockets)))
    if counts.comma:
        notes.append("numbers read with a decimal comma (perf ran in a locale such as "
                     "de_DE: 1.234.567,89)")
    fields = {"flop": {k: v for k, v in flop.items() if v > 0}, "bytes": nbytes,
              "seconds": seconds, "line": min(counts.lines.values(), default=None),
              "sockets": len(counts.sockets)}
    return fields, notes


def _flop(counts: _Counts, precision: str | None, has_bytes: bool,
          notes: list[str]) -> dict[str, float]:
    """FLOP by precision: Intel's events say each one's, AMD's one event counts every
    precision and is read as `precision` (fp64 when the user did not say)."""
    flop: dict[str, float] = {}
    for event, value in counts.values.items():
        key = event.upper().replace(".", "_")
        if key in FP_ARITH:
            kind, weight = FP_ARITH[key]
            flop[kind] = flop.get(kind, 0.0) + weight * value
    if flop:
        notes.append("FLOP from fp_arith_inst_retired.* weighted by vector width (an FMA "
                     "counted twice by the hardware)")
        if precision:
            notes.append(f"--precision {precision} not applied: fp_arith_inst_retired.* say "
                         f"each FLOP's precision")
    elif AMD_FLOPS in counts.values:
        flop[precision or "fp64"] = counts.values[AMD_FLOPS]
        notes.append(f"{AMD_FLOPS} counts the FLOP of every precision: read as "
                     + (f"{precision} (--precision {precision})" if precision else
                        "fp64 (code that computes in fp32: give --precision fp32)"))
    else:
        event = (AMD_FLOPS if _amd(counts) else "fp_arith_inst_retired.*" if _intel(counts)
                 else f"fp_arith_inst_retired.* on Intel, {AMD_FLOPS} on AMD")
        notes.append(f"no FP event ({event}): no FLOP counted"
                     + (", a bytes-only point" if has_bytes else ""))
    return flop


def _amd(counts: _Counts) -> bool:
    """Whether the file holds AMD events (its hints then name AMD's)."""
    return any(e.startswith(("amd_", "fp_ret_")) or "umc_" in e or "_data_beats_" in e
               for e in [*counts.values, *counts.missing])


def _intel(counts: _Counts) -> bool:
    return any("fp_arith" in e or "imc" in e for e in [*counts.values, *counts.missing])


def _read_event(event: str) -> bool:
    """Whether rooflab reads this event (FP, DRAM or time)."""
    return (event == "duration_time" or event == AMD_FLOPS
            or event.upper().replace(".", "_") in FP_ARITH
            or any(p.search(event) for _, *pair in _DRAM_SOURCES for p in pair))


def _dram(counts: _Counts, path: str) -> tuple[dict[str, float], list[str]]:
    """DRAM bytes from the first source of _DRAM_SOURCES the file has, with notes."""
    found = []
    for what, *patterns in _DRAM_SOURCES:
        got, events = _source(counts, path, patterns)
        if got:
            found.append((what, got, events))
    if not found:
        return {}, [_no_dram(counts)]
    (what, got, events), rest = found[0], found[1:]
    notes = [f"{other} events left out: they count the traffic the {what} events count"
             for other, _, _ in rest]
    if len(got) == 1:
        (kind,) = got
        other = "write" if kind == "read" else "read"
        return {"DRAM": got[kind]}, notes + [
            f"DRAM = {kind}s only (no {other} event in the file): DRAM bytes read low, AI "
            f"high"]
    notes.append(f"DRAM bytes from the memory controllers ({what} read + write events; "
                 f"counts the whole socket, other processes too)")
    if what == "AMD data fabric":
        channels = sorted({re.search(r"_cs(\d+)", e)[1] for e in events}, key=int)
        notes.append(f"64 B per data beat, channels cs{', cs'.join(channels)} (Linux perf's "
                     f"amdzen4 DRAM metrics add cs0-cs11: a channel left out of -e is not "
                     f"counted)")
    return {"DRAM": got["read"] + got["write"]}, notes


def _source(counts: _Counts, path: str, patterns) -> tuple[dict[str, float], list[str]]:
    """({read/write: bytes}, events) of one DRAM source; each kind summed over its events
    (channels, memory controllers, sockets)."""
    got: dict[str, float] = {}
    events = []
    for event in counts.values:
        for kind, pattern in zip(("read", "write"), patterns, strict=True):
            if pattern.search(event):
                got[kind] = got.get(kind, 0.0) + _bytes(counts, event, path)
                events.append(event)
    return got, events


def _no_dram(counts: _Counts) -> str:
    """The hint for a file without DRAM events, naming the events of its CPU's vendor."""
    intel = ("uncore_imc/cas_count_read/, cas_count_write/, or data_reads/data_writes")
    events = (AMD_DRAM if _amd(counts) and not _intel(counts) else
              intel if _intel(counts) else f"Intel: {intel}; AMD: {AMD_DRAM}")
    return (f"no memory-controller event ({events}): no DRAM bytes, so no point; add them "
            f"(they need -a, and root or kernel.perf_event_paranoid <= 0)")


def _name(counts: _Counts, path: str) -> str:
    cmd = counts.command.strip()
    if not cmd or cmd == "system wide":
        return stem(path)
    first, _, args = cmd.partition(" ")
    short = f"{Path(first).name} {args}".strip()
    return short if len(short) <= 60 else short[:59] + "…"


def load_perf_stat(paths, stdin: str | None = None,
                   precision: str | None = None) -> ProfileImport:
    """One kernel per perf stat file (several = steps), longest first. stdin: the text of
    the file named STDIN_NAME (`rooflab perf -`); precision: what the code computes in,
    for AMD's FLOP event, which counts every precision (fp64 when None)."""
    precision = check_precision(precision)
    paths = [paths] if isinstance(paths, str) else list(paths)
    several = len(paths) > 1
    labels = step_labels(paths)
    done, failed = read_each(paths, lambda path, log: _read_run(
        path, log, stdin if path == STDIN_NAME else None, precision))
    kernels = []
    for f in done:
        counts, fields, notes = f.value
        name = _name(counts, f.path)
        if several and name == stem(f.path):   # the step label says which file
            name = "whole run"
        kernels.append(_kernel(name, fields, notes, f.path,
                               labels[f.index] if several else None,
                               f.index if several else None))
    if not kernels:
        raise ParseError("no file has a usable run: " + "; ".join(str(s) for s in failed))
    kernels.sort(key=lambda k: -(k.seconds or 0.0))
    return ProfileImport(kernels=tuple(kernels),
                         skips=tuple(s for f in done for s in f.skips), failed=tuple(failed),
                         files=tuple(f.path for f in done), notes=held_notes(kernels))


def check_precision(precision: str | None) -> str | None:
    """--precision as rooflab names it (lower case), or InputError naming the choices."""
    if precision is None:
        return None
    if precision.strip().lower() not in PRECISIONS:
        raise InputError(f"--precision {precision}: not a precision the CPU counters count; "
                         f"give one of {', '.join(PRECISIONS)}")
    return precision.strip().lower()


def _read_run(path: str, log: SkipLog, text: str | None = None,
              precision: str | None = None) -> tuple[_Counts, dict, list[str]]:
    """One perf stat file's counts, kernel fields and notes; a run without a time, or one
    where the machine has no counters at all, is refused."""
    counts = read_perf(path, log, text)
    hardware = [e for e in [*counts.values, *counts.missing] if e not in SOFTWARE]
    if hardware and set(hardware) <= set(counts.unsupported):
        raise ParseError(NO_PMU, path=path)
    fields, notes = kernel_fields(counts, path, precision)
    if fields["seconds"] is None:
        raise ParseError("no time: neither a 'seconds time elapsed' line (perf stat "
                         "without -x) nor a duration_time event (add -e "
                         "duration_time to a -x run)", path=path)
    if fields["seconds"] <= 0:
        raise ParseError("the run's time is 0 s", path=path)
    return counts, fields, notes


def _kernel(name: str, fields: dict, notes: list[str], path: str, step: str | None,
            index: int | None) -> Kernel:
    meta = {"source": "perf", "full_name": name, "file": path, "line": fields["line"],
            "device": "cpu", "notes": notes}
    if fields.get("sockets"):
        meta["sockets"] = fields["sockets"]
    if step is not None:
        meta["step"], meta["step_index"] = step, index
    provenance = {"flop": "counted", "bytes": "measured", "seconds": "measured"}
    return Kernel(name=name if step is None else f"{name} [{step}]", flop=fields["flop"],
                  bytes=fields["bytes"], seconds=fields["seconds"], provenance=provenance,
                  unit="vector" if fields["flop"] else None, meta=meta)
