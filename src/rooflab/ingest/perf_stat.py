"""`perf stat` output -> one Kernel per file: the whole measured command, its FLOP from the
core's FP events, its DRAM bytes from the memory controllers' events (Intel's uncore IMC,
AMD's UMC or data fabric), its time.

Collect, for a whole run (perf stat has no regions; put the loop in its own program):

    perf stat -a -x, -o run.csv -e duration_time,fp_arith_inst_retired.scalar_double,\
fp_arith_inst_retired.128b_packed_double,fp_arith_inst_retired.256b_packed_double,\
fp_arith_inst_retired.512b_packed_double,uncore_imc/cas_count_read/,\
uncore_imc/cas_count_write/ ./app

Three layouts are read:

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
- `-j` (perf >= 6.0): one JSON object per line, the CSV fields by name (stat-display.c:
  "counter-value", "unit", "event", "event-runtime", "pcnt-running", with --per-* a
  "socket"/"die"/... id, with -A "cpu"); no footer, so the time is duration_time.

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
  The combined .scalar / .4_flops / .8_flops (1/4/8 FLOP per count) mix fp64 and fp32: see
  ingest/perf_flop.py.
  AMD's fp_ret_sse_avx_ops.all counts FLOPs of every precision: read as fp64, or as the
  precision the user gives (--precision), with a note.
- DRAM bytes: uncore_imc[_N]/cas_count_read/ + cas_count_write/ (servers; also the JSON
  names unc_m_cas_count.rd / .wr; Granite Rapids / Sierra Forest's per sub-channel
  unc_m_cas_count_sch0.rd + _sch1.rd, .wr), or uncore_imc[_free_running]/data_read(s)/ +
  data_write(s)/ (client parts). perf scales these by their sysfs .scale/.unit (64 B per
  CAS, printed in MiB): the unit column is honoured; a bare count (no unit) is x 64 B.
  AMD: amd_umc_N/umc_cas_cmd.rd/ + .wr/, or the data fabric's
  amd_df/local_processor_{read,write}_data_beats_csN/, 64 B per CAS or beat, summed over
  the controllers and channels given (see dram_events.DRAM_SOURCES).
- time: "seconds time elapsed", else duration_time.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ParseError
from ..files import STDIN_NAME
from .counter_kernels import counter_import, counter_kernel, file_steps
from .counter_text import sockets_note, stem
from .dram_events import is_dram_event
from .flop_events import check_precision
from .perf_dram import dram_bytes
from .perf_flop import is_flop_event, perf_flop
from .perf_lines import TIME_UNITS, Counts, read_perf
from .profile_import import ProfileImport
from .skips import SkipLog, read_each

# names other modules and the docs import from here (one definition each, re-exported)
__all__ = ["NO_PMU", "SOFTWARE", "check_precision", "kernel_fields", "load_perf_stat",
           "read_perf"]

# perf's software events: counted by the kernel, so they have values without a PMU
SOFTWARE = ("duration_time", "user_time", "system_time", "task-clock", "cpu-clock",
            "page-faults", "faults", "minor-faults", "major-faults", "context-switches", "cs",
            "cpu-migrations", "migrations", "alignment-faults", "emulation-faults", "dummy")
NO_PMU = ("every hardware event is <not supported>: this machine exposes no PMU (a VM "
          "without vPMU?); perf cannot count FLOP or bytes here")

def kernel_fields(counts: Counts, path: str,
                  precision: str | None = None) -> tuple[dict, list[str]]:
    """The run's FLOP, bytes and seconds, and notes on how they were got. precision: what
    the user says the code computes in (--precision), for FLOP the events do not split."""
    notes: list[str] = []
    nbytes, dram_notes = dram_bytes(counts, path)
    flop = perf_flop(counts, precision, bool(nbytes), notes)
    notes += dram_notes
    seconds = _seconds(counts, notes)
    notes += _count_notes(counts)
    fields = {"flop": {k: v for k, v in flop.items() if v > 0}, "bytes": nbytes,
              "seconds": seconds, "line": min(counts.lines.values(), default=None),
              "sockets": len(counts.sockets)}
    return fields, notes


def _seconds(counts: Counts, notes: list[str]) -> float | None:
    """The run's time: perf's footer, else the duration_time event (-x has no footer)."""
    seconds = counts.elapsed
    if seconds is None and "duration_time" in counts.values:
        unit = counts.units.get("duration_time", "").lower()
        seconds = counts.values["duration_time"] * TIME_UNITS.get(unit, 1e-9)
        flag = "-j" if counts.layout == "json" else "-x"
        notes.append(f"time = duration_time (perf {flag} prints no 'seconds time elapsed')")
    elif seconds is not None:
        notes.append("time = 'seconds time elapsed' (the whole command)")
    return seconds


def _count_notes(counts: Counts) -> list[str]:
    """What may make the counts read off: multiplexing, events not counted or not read,
    several sockets, a decimal-comma locale."""
    notes = []
    for event, pct in counts.running.items():
        notes.append(f"{event} counted {pct:g} % of the time (multiplexed; perf scaled the "
                     f"count up): it may read off")
    if counts.missing:
        notes.append(f"not counted: {', '.join(counts.missing)} (what they count is missing: "
                     f"FLOP or bytes read low)")
    for event, where in counts.partial.items():
        # read from the copies that counted; one that did not (a hybrid CPU's cpu_atom
        # PMU, which has no such event) misses only what ran there
        notes.append(f"{event} read from the copies that counted; not counted on "
                     f"{', '.join(where)}: what ran there alone is not in it (on a hybrid "
                     f"CPU, pin the run to the cores that count it, e.g. with taskset)")
    unread = [e for e in counts.values if not _read_event(e)]
    if unread:
        notes.append(f"not read (rooflab reads FP, DRAM and time events only): "
                     f"{', '.join(unread)}")
    if len(counts.sockets) > 1:
        notes.append(sockets_note(len(counts.sockets), ", ".join(counts.sockets)))
    if counts.comma:
        notes.append("numbers read with a decimal comma (perf ran in a locale such as "
                     "de_DE: 1.234.567,89)")
    return notes


def _read_event(event: str) -> bool:
    """Whether rooflab reads this event (FP, DRAM or time)."""
    return event == "duration_time" or is_flop_event(event) or is_dram_event(event)


def _name(counts: Counts, path: str) -> str:
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
    steps = file_steps(paths)
    done, failed = read_each(paths, lambda path, log: _read_run(
        path, log, stdin if path == STDIN_NAME else None, precision))
    kernels = []
    for f in done:
        counts, fields, notes = f.value
        name = _name(counts, f.path)
        if len(paths) > 1 and name == stem(f.path):   # the step label says which file
            name = "whole run"
        kernels.append(counter_kernel("perf", name, fields, notes, f.path, steps[f.index]))
    return counter_import(kernels, done, failed, "run")


def _read_run(path: str, log: SkipLog, text: str | None = None,
              precision: str | None = None) -> tuple[Counts, dict, list[str]]:
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
                         "duration_time to a -x or -j run)", path=path)
    if fields["seconds"] <= 0:
        raise ParseError("the run's time is 0 s", path=path)
    return counts, fields, notes
