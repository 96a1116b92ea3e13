"""`perf stat` output (-x CSV, -j JSON or the default text, see ingest/perf_stat.py) read
into the counts of one run: {event: total}, units, lines, what was not counted, the elapsed
time."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from ..errors import ParseError
from ..files_decode import last_line_cut
from .counter_text import counter_text, repeat_note
from .ncu_csv import other_kind
from .perf_numbers import is_number, number
from .skips import SkipLog

COLLECT = ("collect with `perf stat -a -x, -o run.csv -e duration_time,"
           "fp_arith_inst_retired.256b_packed_double,...,uncore_imc/cas_count_read/,"
           "uncore_imc/cas_count_write/ ./app` (or -j for JSON lines)")
UNITS = {"": None, "b": 1.0, "bytes": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 2.0 ** 10,
         "mib": 2.0 ** 20, "gib": 2.0 ** 30}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "": 1e-9}
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
# -j: the aggregation id's key (stat-display.c print_aggr_id_json), "cpu" with -A
_JSON_IDS = ("socket", "die", "cluster", "cache", "core", "node", "thread")


@dataclass
class Counts:
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
    layout: str = "csv"                                       # csv, text or json (-j)
    # <not counted>/<not supported> lines, settled once the whole file is read: (line,
    # event as printed, value, plain name, where: socket/CPU id or PMU)
    pending: list[tuple[int, str, str, str, str]] = field(default_factory=list)
    partial: dict[str, list[str]] = field(default_factory=dict)   # counted, but not on these

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


def _decimal_comma(lines: list[str]) -> bool:
    """Whether this text output was printed in a decimal-comma locale (de_DE): the
    footer's %.9f seconds has a comma; without one, a value has '.' thousands."""
    for ln in lines:
        hit = _ELAPSED.match(ln)
        if hit:
            return "," in hit["s"]
    return any(re.match(r"^\s*\d{1,3}(\.\d{3})+(,\d+)?\s", _AGGR.sub("", ln))
               for ln in lines)


def read_perf(path: str, log: SkipLog, text: str | None = None) -> Counts:
    """One file's counts (`text`: its contents, read already from standard input). A last
    line cut short that cannot be read says so in its error ('76' of '768.00 MiB ...')."""
    text = counter_text(path, text, log)
    try:
        return _read_perf(path, log, text)
    except ParseError as exc:
        cut = last_line_cut(text)
        # a file that is this one line (`[{"name": ...}]` with no final break) is a
        # complete file of another kind far more often than perf output cut inside its
        # first line: the cut hint misled there (s36 I)
        if cut is None or exc.line != cut[0] or not text[:-len(cut[1])].strip():
            raise
        said = str(exc).removeprefix(f"{path}:{exc.line}: ")
        raise ParseError(f"the file ends inside this line (no line break after it: file cut "
                         f"short?): {said}", path=path, line=exc.line) from None


def _read_perf(path: str, log: SkipLog, text: str) -> Counts:
    lines = text.splitlines()
    data = [(n, ln) for n, ln in enumerate(lines, start=1)
            if ln.strip() and not ln.lstrip().startswith("#")]
    head = "\n".join(lines[:40])
    if "TABLE,Group" in head or "TABLE,Region" in head or "STRUCT,Info" in head:
        raise ParseError("likwid-perfctr output, not perf stat's: read it with "
                         "`rooflab likwid FILE`", path=path, line=1)
    if re.search(r"^#\s+time\s", head, re.M):
        raise _interval(path, 1)
    if (failed := _perf_failed(lines[:40], path)) is not None:
        raise failed
    if data and data[0][1].lstrip().startswith("{"):
        counts = Counts(layout="json")      # perf stat -j: one JSON object per line
        for n, ln in data:
            _json_line(ln, n, counts, path, log)
        return _settled(counts, path, log, lines)
    text_layout = any(_TEXT.match(_AGGR.sub("", ln)) for _, ln in data)
    counts = Counts(comma=text_layout and _decimal_comma(lines),
                    layout="text" if text_layout else "csv")
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
    return _settled(counts, path, log, lines)


def _settled(counts: Counts, path: str, log: SkipLog, lines: list[str]) -> Counts:
    """The file's counts once every line is read. An event <not counted> on one copy (a
    hybrid CPU's cpu_atom PMU, socket S1 of --per-socket) but counted on another was read
    from the copies that counted: only an event no copy counted is missing (unknown, not
    0); duration_time, the wall time, perf counts once (--per-socket prints it on S0)."""
    for n, event, value, name, where in counts.pending:
        if name in counts.values:
            if name != "duration_time":
                counts.partial.setdefault(name, []).append(where or "one copy")
            continue
        log.add(n, f"{event}: {value} (left out; a {value.strip('<>')} event counts as "
                   f"unknown, not 0)")
        if name not in counts.missing:
            counts.missing.append(name)
        if value == "<not supported>" and name not in counts.unsupported:
            counts.unsupported.append(name)
    if not counts.values and not counts.missing and counts.elapsed is None:
        # another verb's file (a kernel list, a torch trace) is named with its verb, not
        # told how to collect perf output (s36 O: the one wrong-kind helper)
        other = other_kind(path, "\n".join(lines), lines[0] if lines else "", own="perf")
        raise ParseError("no perf stat counter line found (value, [unit,] event); "
                         + (other or COLLECT), path=path, line=1 if lines else None)
    return counts


def _json_line(line: str, n: int, counts: Counts, path: str, log: SkipLog) -> None:
    """One line of `perf stat -j` (stat-display.c: "counter-value", "unit", "event",
    "event-runtime", "pcnt-running", with --per-* a "socket"/"die"/... id, with -A "cpu"):
    the fields of a -x line, by name."""
    try:
        obj = json.loads(line)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        comma = re.search(r"\d,\d", line)
        raise ParseError(f"'{line.strip()[:80]}' is not a perf stat -j line (one JSON object "
                         f"per line)" + ("; perf ran in a decimal-comma locale (de_DE), which "
                                         "breaks its JSON: re-run with LC_ALL=C" if comma
                                         else "; " + COLLECT), path=path, line=n)
    if "interval" in obj:
        raise _interval(path, n)
    if "counter-value" not in obj or "event" not in obj:
        return                                # a metric's own line: no count
    where = next((str(obj[k]) for k in _JSON_IDS if k in obj), "")
    if not where and "cpu" in obj:
        where = f"CPU{obj['cpu']}"
    if where:
        _socket(where, counts)
    value = str(obj["counter-value"]).strip()
    if re.fullmatch(r"\d+,\d+", value):        # %f in a decimal-comma locale
        counts.comma = True
    pct = obj.get("pcnt-running")
    pct = float(pct) if isinstance(pct, (int, float)) else None
    _add(value, str(obj.get("unit") or ""), str(obj["event"]), n, pct, counts, path, log,
         where)


def _perf_failed(lines: list[str], path: str) -> ParseError | None:
    """perf's own error, where perf stopped before counting (its stderr piped in by
    `2>&1 | rooflab perf -`): an event this CPU does not have, or counters the kernel
    refuses. It read "'\\___ parser error' is not a perf stat -x line", naming perf's
    caret line and not what went wrong (s37 A: the README's AMD events on a VM without them)."""
    for n, line in enumerate(lines, start=1):
        said = line.strip()
        if said.startswith("event syntax error:"):
            return ParseError(f"perf stat stopped before counting: {said[:100]}: no such "
                              f"event on this machine (its CPU, kernel or VM); `perf list` "
                              f"names the events it has: fix -e and re-run", path=path,
                              line=n)
        if said == "Error:" and any("perf_event" in x for x in lines[n:n + 4]):
            why = next(x.strip() for x in lines[n:n + 4] if x.strip())
            # 'sys_perf_event_open() ... 22 (Invalid argument) for event (X)' is an event
            # the CPU cannot count, not a refusal: no paranoid hint there (s37 R)
            refused = any("paranoid" in x or "ermission" in x for x in lines[n:n + 4])
            fix = ("see /proc/sys/kernel/perf_event_paranoid, or run as root" if refused
                   else "an event this machine cannot count: `perf list` names those it "
                   "has; fix -e and re-run")
            return ParseError(f"perf stat stopped before counting: {why[:120]} ({fix})",
                              path=path, line=n)
    return None


def _value(text: str, what: str, n: int, counts: Counts, path: str) -> float:
    try:
        return number(text, counts.comma)
    except ValueError:
        locale = ("1.234.567,89 (a decimal-comma locale)" if counts.comma else
                  "1,234,567.89")
        raise ParseError(f"{what} = '{text.strip()}' is not a number as this file writes "
                         f"them ({locale}); re-run perf with LC_ALL=C", path=path,
                         line=n) from None


def _interval(path: str, line: int) -> ParseError:
    return ParseError("interval output (perf stat -I): each line is one interval; rooflab "
                      "reads a whole run: re-run without -I", path=path, line=line)


def _csv_line(line: str, sep: str, n: int, counts: Counts, path: str, log: SkipLog) -> None:
    f = [c.strip() for c in line.split(sep)]
    if sep == "," and len(f) >= 4 and f[0].isdigit() and f[1].isdigit() and (
            f[2].lower() in UNITS or f[2].lower() in TIME_UNITS):
        # "1536,00,MiB,...": a decimal comma that -x, split (an interval's time has a '.')
        raise ParseError(f"'{','.join(f[:3])}' looks like a value with a decimal comma "
                         f"(perf ran in a locale such as de_DE), which -x, splits in two; "
                         f"re-run with LC_ALL=C perf stat ..., or -x\\;", path=path, line=n)
    if len(f) >= 3 and is_number(f[0]) and (is_number(f[1]) or f[1] in _NOT_COUNTED
                                            or _ID.match(f[1])):
        raise _interval(path, n)
    where = ""
    while f and not is_number(f[0]) and f[0] not in _NOT_COUNTED and _ID.match(f[0]):
        where = f[0]
        _socket(f[0], counts)
        f = f[1:]                                # -A / --per-socket: the CPU or socket id
    if len(f) >= 4 and is_number(f[0]) and is_number(f[1]):
        f = f[1:]                                # --per-*: the number of CPUs aggregated
    if len(f) < 3:
        raise ParseError(f"'{line.strip()[:80]}' is not a perf stat -x line (value, unit, "
                         f"event, ...); " + COLLECT, path=path, line=n)
    value, unit, event = f[0], f[1], f[2]
    k = 3
    while event.count("/") % 2 and k < len(f):   # cpu/event=0xc7,umask=0x1/ split by -x,
        event, k = f"{event}{sep}{f[k]}", k + 1
    pct = float(f[k + 1]) if len(f) > k + 1 and is_number(f[k + 1]) else None
    if sep == ";" and "," in value:               # -x\; in a decimal-comma locale: 1536,00
        counts.comma = True
    _add(value, unit, event, n, pct, counts, path, log, where)


def _socket(ident: str, counts: Counts) -> None:
    socket = re.match(r"^S\d+", ident)            # S1, S1-D0, S1-D0-C3: socket 1
    if socket and socket[0] not in counts.sockets:
        counts.sockets.append(socket[0])


def _text_line(line: str, n: int, counts: Counts, path: str, log: SkipLog) -> None:
    aggr = _AGGR.match(line)                      # "S0        8   1,234  cycles"
    if aggr:
        _socket(aggr["id"], counts)
    hit = _TEXT.match(line[aggr.end():] if aggr else line)
    if hit is None:
        return                                    # perf's prose ("Some events weren't ...")
    rest = hit["rest"]
    first = rest.split()[0] if rest.split() else ""
    if (is_number(hit["event"].replace(",", "")) and first) or _ID.match(hit["event"]):
        raise _interval(path, n)                  # "  1.0012   123,456   cycles"
    _add(hit["value"], hit["unit"] or "", hit["event"], n, _percent(rest, counts.comma),
         counts, path, log, aggr["id"] if aggr else "")


def _percent(rest: str, comma: bool) -> float | None:
    """The '(50.00%)' of time a multiplexed counter ran, None when not printed."""
    hit = _PCT.search(rest)
    try:
        return number(hit["pct"], comma) if hit else None
    except ValueError:
        return None


def _add(value: str, unit: str, event: str, n: int, pct: float | None, counts: Counts,
         path: str, log: SkipLog, where: str = "") -> None:
    name = _plain(event)
    if value in _NOT_COUNTED:                   # settled when the file is read (_settled)
        pmu = re.match(r"^\s*([\w-]+)/", event)
        counts.pending.append((n, event, value, name, where or (pmu[1] if pmu else "")))
        return
    if not re.fullmatch(r"[\d.,\u00a0\u202f]+", value.strip()) and not is_number(value):
        # -x's metric lines (",,,,,1.23,insn per cycle") and the like: not a count
        log.add(n, f"{event}: value '{value}' is not a number (left out)")
        return
    x = _value(value, event, n, counts, path)       # digits: in this file's locale or error
    first = counts.seen.setdefault((where, event), n)
    if first != n:   # `-e cycles,cycles`: perf counts and prints it twice; adding doubles it
        log.add(n, repeat_note(f"{event}{' on ' + where if where else ''}", first, "line",
                               "in -e"))
        return
    if not math.isfinite(x) or x < 0:
        raise ParseError(f"{event} = '{value}' is not a count (>= 0); check the file",
                         path=path, line=n)
    counts.add(name, x, unit.strip(), n, pct)

