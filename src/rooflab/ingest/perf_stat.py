"""`perf stat` output -> one Kernel per file: the whole measured command, its FLOP from the
core's FP events, its DRAM bytes from the memory controllers' (uncore IMC) events, its time.

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
  `       1.001234567 seconds time elapsed` (builtin-stat.c's sample output).

Counts (event names as perf lists them, with or without a `cpu/.../` or `cpu_core/.../`
PMU wrapper; lines of one event, per CPU or per PMU instance, are added up):

- FLOP: fp_arith_inst_retired.{scalar,128b_packed,256b_packed,512b_packed}_double x
  1/2/4/8 and _single x 1/4/8/16 (likwid's FLOPS_DP/FLOPS_SP weights; Intel counts an FMA
  instruction twice in these events, so an FMA is 2 FLOP per element: see ingest/likwid.py).
  AMD's fp_ret_sse_avx_ops.all counts FLOPs of every precision: read as fp64, with a note.
- DRAM bytes: uncore_imc[_N]/cas_count_read/ + cas_count_write/ (servers; also the JSON
  names unc_m_cas_count.rd / .wr), or uncore_imc[_free_running]/data_read(s)/ +
  data_write(s)/ (client parts). perf scales these by their sysfs .scale/.unit (64 B per
  CAS, printed in MiB): the unit column is honoured; a bare count (no unit) is x 64 B.
- time: "seconds time elapsed", else duration_time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParseError
from ..model.kernel import Kernel
from .aggregate import step_labels
from .likwid import FP_ARITH, sockets_note
from .ncu_csv import read_text
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
_TEXT = re.compile(r"^\s*(?P<value><not counted>|<not supported>|[\d.,]+)\s+"
                   r"(?:(?P<unit>B|Bytes|KiB|MiB|GiB|KB|MB|GB|ns|us|ms|msec)\s+)?"
                   r"(?P<event>\S+)(?P<rest>.*)$")
_ELAPSED = re.compile(r"^\s*(?P<s>[\d.,]+)\s+(?:\+-\s*[\d.,]+\s+)?seconds time elapsed")
_COMMAND = re.compile(r"Performance counter stats for '(?P<cmd>.*)'")
_PCT = re.compile(r"\((?P<pct>[\d.]+)%\)\s*$")
_DRAM = (("read", re.compile(r"(?:imc|unc_m).*(?:cas_count[_.]?(?:read|rd)\b|data_reads?\b)")),
         ("write", re.compile(r"(?:imc|unc_m).*(?:cas_count[_.]?(?:write|wr)\b|data_writes?\b)")))
AMD_FLOPS = "fp_ret_sse_avx_ops.all"


@dataclass
class _Counts:
    """Event totals of one file: {event: value in its unit}, units, lines, and the rest."""

    values: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)   # least % of time counted
    missing: list[str] = field(default_factory=list)          # <not counted> events
    elapsed: float | None = None
    command: str = ""
    sockets: list[str] = field(default_factory=list)          # S0, S1 of --per-socket/-die

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


def _number(text: str) -> float:
    return float(text.replace(",", "")) if text.count(".") <= 1 else float("nan")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_perf(path: str, log: SkipLog) -> _Counts:
    text = read_text(path)
    lines = text.splitlines()
    data = [(n, ln) for n, ln in enumerate(lines, start=1)
            if ln.strip() and not ln.lstrip().startswith("#")]
    head = "\n".join(lines[:40])
    if "TABLE,Group" in head or "TABLE,Region" in head or "STRUCT,Info" in head:
        raise ParseError("likwid-perfctr output, not perf stat's: read it with "
                         "`rooflab likwid FILE`", path=path, line=1)
    if re.search(r"^#\s+time\s", head, re.M):
        raise _interval(path, 1)
    counts = _Counts()
    for ln in lines:
        hit = _COMMAND.search(ln)
        if hit and not counts.command:
            counts.command = hit["cmd"]
        hit = _ELAPSED.match(ln)
        if hit:
            counts.elapsed = _number(hit["s"])
    # the text layout pads with spaces ("  1,234,567      cycles"); -x writes none
    if any(_TEXT.match(ln) for _, ln in data):
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


def _interval(path: str, line: int) -> ParseError:
    return ParseError("interval output (perf stat -I): each line is one interval; rooflab "
                      "reads a whole run: re-run without -I", path=path, line=line)


def _csv_line(line: str, sep: str, n: int, counts: _Counts, path: str, log: SkipLog) -> None:
    f = [c.strip() for c in line.split(sep)]
    if len(f) >= 3 and _is_number(f[0]) and (_is_number(f[1]) or f[1] in _NOT_COUNTED
                                            or _ID.match(f[1])):
        raise _interval(path, n)
    while f and not _is_number(f[0]) and f[0] not in _NOT_COUNTED and _ID.match(f[0]):
        socket = re.match(r"^S\d+", f[0])        # S1, S1-D0, S1-D0-C3: socket 1
        if socket and socket[0] not in counts.sockets:
            counts.sockets.append(socket[0])
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
    pct = _number(f[k + 1]) if len(f) > k + 1 and _is_number(f[k + 1]) else None
    _add(value, unit, event, n, pct, counts, path, log)


def _text_line(line: str, n: int, counts: _Counts, path: str, log: SkipLog) -> None:
    hit = _TEXT.match(line)
    if hit is None:
        return                                    # perf's prose ("Some events weren't ...")
    rest = hit["rest"]
    first = rest.split()[0] if rest.split() else ""
    if _is_number(hit["event"].replace(",", "")) and first:
        raise _interval(path, n)                  # "  1.0012   123,456   cycles"
    pct = _PCT.search(rest)
    _add(hit["value"], hit["unit"] or "", hit["event"], n,
         float(pct["pct"]) if pct else None, counts, path, log)


def _add(value: str, unit: str, event: str, n: int, pct: float | None, counts: _Counts,
         path: str, log: SkipLog) -> None:
    name = _plain(event)
    if value in _NOT_COUNTED:
        log.add(n, f"{event}: {value} (left out; a {value.strip('<>')} event counts as "
                   f"unknown, not 0)")
        if name not in counts.missing:
            counts.missing.append(name)
        return
    try:
        x = _number(value)
    except ValueError:
        log.add(n, f"{event}: value '{value}' is not a number (left out)")
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


def kernel_fields(counts: _Counts, path: str) -> tuple[dict, list[str]]:
    """The run's FLOP, bytes and seconds, and notes on how they were got."""
    notes: list[str] = []
    flop: dict[str, float] = {}
    for event, value in counts.values.items():
        key = event.upper().replace(".", "_")
        if key in FP_ARITH:
            precision, weight = FP_ARITH[key]
            flop[precision] = flop.get(precision, 0.0) + weight * value
    if flop:
        notes.append("FLOP from fp_arith_inst_retired.* weighted by vector width (an FMA "
                     "counted twice by the hardware)")
    elif AMD_FLOPS in counts.values:
        flop["fp64"] = counts.values[AMD_FLOPS]
        notes.append(f"{AMD_FLOPS} counts the FLOP of every precision: read as fp64")
    else:
        notes.append("no FP event (fp_arith_inst_retired.*): no FLOP counted, a bytes-only "
                     "point")
    nbytes, dram_notes = _dram(counts, path)
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
    if len(counts.sockets) > 1:
        notes.append(sockets_note(len(counts.sockets), ", ".join(counts.sockets)))
    fields = {"flop": {k: v for k, v in flop.items() if v > 0}, "bytes": nbytes,
              "seconds": seconds, "line": min(counts.lines.values(), default=None),
              "sockets": len(counts.sockets)}
    return fields, notes


def _dram(counts: _Counts, path: str) -> tuple[dict[str, float], list[str]]:
    got: dict[str, float] = {}
    for event in counts.values:
        for kind, pattern in _DRAM:
            if pattern.search(event):
                got[kind] = got.get(kind, 0.0) + _bytes(counts, event, path)
    if not got:
        return {}, ["no memory-controller event (uncore_imc/cas_count_read/, "
                    "cas_count_write/, or data_reads/data_writes): no DRAM bytes, so no "
                    "point; add them (they need -a, and root or kernel.perf_event_paranoid "
                    "<= 0)"]
    if len(got) == 1:
        (kind,) = got
        other = "write" if kind == "read" else "read"
        return {"DRAM": got[kind]}, [f"DRAM = {kind}s only (no {other} event in the file): "
                                     f"DRAM bytes read low, AI high"]
    return {"DRAM": got["read"] + got["write"]}, [
        "DRAM bytes from the memory controllers (uncore IMC read + write events; counts "
        "the whole socket, other processes too)"]


def _name(counts: _Counts, path: str) -> str:
    cmd = counts.command.strip()
    if not cmd or cmd == "system wide":
        return Path(path).stem
    first, _, args = cmd.partition(" ")
    short = f"{Path(first).name} {args}".strip()
    return short if len(short) <= 60 else short[:59] + "…"


def load_perf_stat(paths) -> ProfileImport:
    """One kernel per perf stat file (several = steps), longest first."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    several = len(paths) > 1
    labels = step_labels(paths)
    done, failed = read_each(paths, _read_run)
    kernels = []
    for f in done:
        counts, fields, notes = f.value
        name = _name(counts, f.path)
        if several and name == Path(f.path).stem:   # the step label says which file
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


def _read_run(path: str, log: SkipLog) -> tuple[_Counts, dict, list[str]]:
    """One perf stat file's counts, kernel fields and notes; a run without a time is refused."""
    counts = read_perf(path, log)
    fields, notes = kernel_fields(counts, path)
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
