"""likwid-perfctr CSV output (`likwid-perfctr -C 0-N -g MEM_DP [-m] -O -o out.csv ./app`) ->
Kernels: one per marker region (LIKWID_MARKER_START("name") ... STOP), or one for the whole
run without the marker API.

The format, as likwid writes it (RRZE-HPC/likwid src/applications/likwid.lua, printOutput
and printcsv; likwid-mpirun.lua reads it back the same way): a table per group and kind,

    STRUCT,Info,3,,,
    CPU name:,Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz,,,
    TABLE,Region triad,Group 1 Raw,MEM_DP,20,,,        (no marker API: TABLE,Group 1 Raw,...)
    Region Info,HWThread 0,HWThread 1                    (marker API only: these 3 lines)
    RDTSC Runtime [s],0.500000,0.500100
    call count,10,10
    Event,Counter,HWThread 0,HWThread 1
    FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE,PMC2,100000000,100000000
    TABLE,Region triad,Group 1 Raw STAT,MEM_DP,20,,,     (more than one thread; "Raw Stat"
    Event,Counter,Sum,Min,Max,Avg                          in likwid 4)
    TABLE,Region triad,Group 1 Metric,MEM_DP,25,,,
    Metric,HWThread 0,HWThread 1
    Runtime (RDTSC) [s],0.500000,0.500100
    DP [MFLOP/s],1600.0000,1599.6801
    TABLE,Region triad,Group 1 Metric STAT,MEM_DP,25,,,
    Metric,Sum,Min,Max,Avg

printcsv writes each table transposed (one line per event or metric, one column per
hardware thread) and pads every line with commas to the widest table; the 4th field of a
TABLE line is the number of rows after the header. likwid writes `-` or `nan` for a value it
could not read.

What is read, per region and group (a region measured with several groups, `-g MEM_DP -g L2
-g L3`, gets one point per level):

- time: the region's wall time, the longest thread's "RDTSC Runtime [s]" of Region Info
  (printed "%.6f"); else the Raw table's TSC row "Runtime (RDTSC) [s]"; else the Metric
  table's, which likwid prints "%.4f" (a 0.149 ms region reads 0.0001 there: a note says
  when that leaves fewer than 3 digits). Threads run side by side, so the sum of their
  times is not the region's time.
- calls: Region Info's "call count", or likwid-mpirun's Raw row "Region calls,CTR,...".
- FLOP: the raw FP_ARITH_INST_RETIRED_{SCALAR,128B_PACKED,256B_PACKED,512B_PACKED}_DOUBLE
  counts weighted 1/2/4/8 and _SINGLE weighted 1/4/8/16 (Sapphire Rapids' fp16
  FP_ARITH_INST_RETIRED2_{SCALAR_HALF|SCALAR,128B,256B,512B_PACKED_HALF} 1/8/16/32,
  groups/SPR/MEM_HP.txt), summed over threads, as likwid's
  FLOPS_DP/FLOPS_SP/MEM_DP groups weigh them (groups/skylakeX/MEM_DP.txt: "DP [MFLOP/s]
  1.0E-06*(PMC0*2.0+PMC1+PMC2*4.0+PMC3*8.0)/time"). Intel counts an FMA instruction twice in
  these events already (intel/perfmon, e.g. SKX/events/skylakex_core.json,
  FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE: "Counts twice for DPP and FM(N)ADD/SUB
  instructions retired"), so no further factor 2 is applied: an FMA is 2 FLOP per element.
  AMD's RETIRED_SSE_AVX_FLOPS_ALL (Zen 3/4, likwid's FLOPS_DP/FLOPS_SP groups, with MERGE)
  counts FLOPs, not instructions: read unweighted, as likwid's formula does, and given the
  group's precision (it counts every precision). Without raw FP events: "DP [MFLOP/s]" /
  "SP [MFLOP/s]" / "HP [MFLOP/s]" (likwid 4: "DP MFLOP/s", "DP MFlops/s") x the thread's
  runtime, summed.
- DRAM bytes: 64 B x the raw CAS_COUNT_RD/WR (DRAM_READS/DRAM_WRITES, Zen 4's UMC
  CAS_CMD_RD/WR) counts, summed over threads (the uncore counters are read by one thread
  per socket, the others show 0, as likwid's Sum column adds them): integers, where the
  metrics below have 4 decimals (100 kB); else "Memory data volume [GBytes]" (x 1e9);
  else read + write volumes. Xeon Max's HBM groups (CAS on HBMxCy boxes, "HBM data volume
  [GBytes]") are read as the DRAM level with a note that it is HBM. Zen's MEM1 + MEM2
  (DRAM_CHANNEL_0..7) are added up, with a note when the CPU has more channels (an EPYC
  9004 has 12: likwid's zen4 MEM group counts them all).
- L2 / L3 bytes: "L2 data volume [GBytes]" / "L3 data volume [GBytes]" of the L2 / L3 groups
  (groups/skylake/L2.txt: 64 x (L1D_REPLACEMENT + L1D_M_EVICT + ...); groups/skylakeX/L3.txt:
  64 x (L2_LINES_IN_ALL + L2_TRANS_L2_WB)).

Groups of one region measured for different times (likwid multiplexes several -g groups,
or the marker API switched groups between calls) are put on one time: each group's bytes
are scaled by (time of the group that counted the FLOP) / (its own time), with a note.
"""

from __future__ import annotations

from ..errors import ParseError
from ..files import STDIN_NAME
from .counter_kernels import counter_import, counter_kernel, file_steps
from .counter_text import sockets_note, stem
from .dram_events import ZEN_MEM
from .flop_events import check_precision
from .likwid_bytes import channel_dram
from .likwid_cpu import LikwidCpu
from .likwid_groups import Part, group_part
from .likwid_tables import RUNTIME, Table, read_cpu_tables, table_name
from .profile_import import ProfileImport
from .skips import SkipLog, read_each

# names other modules and the docs import from here (one definition each, re-exported)
__all__ = ["RUNTIME", "ZEN_MEM", "load_likwid", "read_likwid", "sockets_note",
           "stem"]


def _regions(tables: list[Table], path: str) -> dict[str | None, list[tuple[Table | None,
                                                                            Table | None]]]:
    """{region (None: the whole run): [(raw, metric) table of each group]}, file order."""
    found: dict[str | None, dict[tuple[int, str], list]] = {}
    for t in tables:
        if t.stat:
            continue
        slot = found.setdefault(t.region, {}).setdefault((t.group, t.group_name), [None, None])
        i = 0 if t.kind == "raw" else 1
        if slot[i] is not None:
            raise ParseError(f"table '{table_name(t)}' appears twice (line {slot[i].line} and "
                             f"here): two runs of one group in one file? Give each run its "
                             f"own file (several files are steps)", path=path, line=t.line)
        slot[i] = t
    return {r: [tuple(v) for v in groups.values()] for r, groups in found.items()}


def _merge(region: str | None, parts: list[Part], log: SkipLog,
           label: str, cpu: LikwidCpu, amd: bool = False) -> tuple[dict, list[str]] | None:
    """The region's Kernel fields from its groups: FLOP from the first group that counted
    any, time from that group, other groups' bytes put on its time."""
    name = region if region is not None else \
        (f"{label} (whole run)" if label else "whole run")   # steps: the label says which
    timed = [p for p in parts if p.seconds]
    if not timed:
        log.add(parts[0].line, f"region '{name}' skipped: no runtime (Runtime (RDTSC) [s]) "
                               f"or a zero one; was the region ever entered?")
        return None
    ref = next((p for p in timed if p.flop), timed[0])
    notes = list(ref.notes)
    flop = dict(ref.flop)
    nbytes = _region_bytes(ref, timed, notes, cpu)
    if not flop:   # AMD's events and groups differ from Intel's (review s20 x1 F5)
        notes.append(cpu.flop_hint() if amd else
                     "no FLOP counted (no FP_ARITH_INST_RETIRED_* events or DP/SP/HP MFLOP/s "
                     "metric in its groups): a bytes-only point; add the FLOPS_DP (FLOPS_SP, "
                     "FLOPS_HP) group or use MEM_DP (MEM_SP, MEM_HP)")
    if not nbytes:
        hint = cpu.memory_hint() if amd else ZEN_MEM
        groups = (hint + "; on Zen 2 the MEM_DP or MEM group; or the L2 or L3 group"
                  if amd else "measure the MEM_DP, MEM, L2 or L3 group (" + hint + ")")
        log.add(ref.line, f"region '{name}' skipped: no bytes at any level (no 'Memory data "
                          f"volume [GBytes]' or '(channels a-b)', L2/L3 data volume, "
                          f"CAS_COUNT or DRAM_CHANNEL events); {groups}")
        return None
    fields = {"name": name, "flop": {k: v for k, v in flop.items() if v > 0},
              "bytes": nbytes, "seconds": ref.seconds, "calls": ref.calls,
              "threads": ref.threads, "line": ref.line,
              "groups": [p.group for p in parts],
              "sockets": max((p.sockets for p in parts), default=0)}
    if fields["sockets"] > 1:
        notes.append(sockets_note(fields["sockets"]))
    clock = RUNTIME if ref.clock == RUNTIME else f"Region Info '{ref.clock}'"
    notes.append(f"time = the longest of {ref.threads} threads' {clock} (the region's wall "
                 f"time; threads run side by side)" if ref.threads > 1 else f"time = {clock}")
    return fields, notes


def _region_bytes(ref: Part, timed: list[Part], notes: list[str],
                  cpu: LikwidCpu) -> dict[str, float]:
    """{level: bytes} of a region, each level from the first group that counted it (`ref`,
    the one that counted the FLOP, first), put on `ref`'s time; Zen 3's DRAM from the
    groups that each count some channels."""
    nbytes: dict[str, float] = {}
    for p in [ref] + [p for p in timed if p is not ref]:
        scale = ref.seconds / p.seconds
        for level, v in p.bytes.items():
            if level in nbytes:
                continue
            nbytes[level] = v * scale
            if abs(scale - 1) > 0.01:
                notes.append(f"{level} bytes from group {p.group} (measured over "
                             f"{p.seconds:.6g} s) scaled to the {ref.seconds:.6g} s of "
                             f"group {ref.group}: the groups ran at different times")
        notes += [n for n in p.notes if n not in notes and p is not ref and "bytes" in n]
    dram = None if "DRAM" in nbytes else channel_dram(ref, timed, notes, cpu)
    return nbytes if dram is None else {"DRAM": dram, **nbytes}


def read_likwid(path: str, log: SkipLog, label: str, text: str | None = None,
                precision: str | None = None) -> tuple[str, list[tuple[dict, list]]]:
    """(CPU name, [(kernel fields, notes)] per region) of one file (`text`: its contents,
    read already from standard input; precision: --precision, for AMD's FLOP event)."""
    cpu, tables = read_cpu_tables(path, text, log)
    amd = cpu.amd or any(t.group_name in ("MEM1", "MEM2") for t in tables)
    out = []
    for region, groups in _regions(tables, path).items():
        parts = [group_part(raw, metric, path, log, precision) for raw, metric in groups]
        merged = _merge(region, parts, log, label, cpu, amd)
        if merged is not None:
            out.append(merged)
    return cpu.name, out


def load_likwid(paths, stdin: str | None = None,
                precision: str | None = None) -> ProfileImport:
    """Kernels of one or more likwid-perfctr CSV files (several = steps), longest first.
    stdin: the text of the file named STDIN_NAME (`rooflab likwid -`); precision: what the
    code computes in, for AMD's RETIRED_SSE_AVX_FLOPS_ALL (every precision; the group's
    precision when None)."""
    precision = check_precision(precision)
    paths = [paths] if isinstance(paths, str) else list(paths)
    steps = file_steps(paths)

    def read(path: str, log: SkipLog):
        given = stdin if path == STDIN_NAME else None
        cpu, regions = read_likwid(path, log, "" if len(paths) > 1 else stem(path), given,
                                   precision)
        if not regions:
            raise _unusable(path, log)
        return cpu, regions

    done, failed = read_each(paths, read)
    kernels, cpus = [], []
    for f in done:
        cpu, regions = f.value
        if cpu and cpu not in cpus:
            cpus.append(cpu)
        kernels += [counter_kernel("likwid", fields["name"], fields, notes, f.path,
                                   steps[f.index], {"threads": fields["threads"],
                                                    "groups": fields["groups"]})
                    for fields, notes in regions]
    return counter_import(kernels, done, failed, "region", tuple(cpus))


def _unusable(path: str, log: SkipLog) -> ParseError:
    skips = log.skips()
    if len(skips) == 1:
        return ParseError(f"no usable region: {skips[0].reason}", path=path,
                          line=skips[0].line)
    why = "; ".join(f"line {s.line}: {s.reason}" for s in skips) or "no region has data"
    return ParseError(f"no usable region: {why}", path=path)
