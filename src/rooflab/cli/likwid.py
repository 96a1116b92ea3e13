"""rooflab likwid — likwid-perfctr CSV (-O) regions of a compiled CPU program on the roof."""

from __future__ import annotations

from .options import profiler_verb

HELP = """Put a CPU program's marker regions, measured with likwid-perfctr, on the roofline.

Mark the loops with the marker API (LIKWID_MARKER_START("triad") ... STOP) and collect
CSV output (-O) with a group that counts FLOP and memory traffic; add -g L2 -g L3 for one
point per memory level (AMD Zen 4: -g MEM, all 12 channels; Zen 3: -g MEM1 -g MEM2, its two
halves of the channels; fp16 on Sapphire Rapids: -g MEM_HP):

  likwid-perfctr -C 0-15 -g MEM_DP -m -O -o run.csv ./app
  likwid-perfctr -C 0-15 -g MEM_DP -g L2 -g L3 -m -O -o run.csv ./app
  likwid-perfctr -C 0-15 -g FLOPS_DP -g MEM1 -g MEM2 -m -O -o run.csv ./app
  rooflab likwid run.csv --on me.json
  rooflab likwid run.csv --on "Xeon Platinum 8380" -o run.png

Without -m the whole run is one kernel. Several files are steps (one trajectory). `-` reads
standard input: `likwid-perfctr -C 0 -g MEM_DP -m -O ./app | rooflab likwid -`.

FLOP: FP_ARITH_INST_RETIRED_* counts x vector width (1/2/4/8 double, 1/4/8/16 single,
FP_ARITH_INST_RETIRED2_*_HALF 1/8/16/32 half; the hardware counts an FMA twice), AMD's
RETIRED_SSE_AVX_FLOPS_ALL as counted (every precision: the group's, or what --precision
says), else the DP/SP/HP MFLOP/s metric x runtime; bytes: 64 B x the raw CAS counts
(CAS_COUNT_RD/WR, Zen 4's CAS_CMD_RD/WR; exact), else the Memory data volume metric (4
decimals) (DRAM; Zen: MEM1's channels 0-3 + MEM2's 4-7, with a note where the CPU has
more; Xeon Max's HBM groups: HBM, with a note), the L2/L3 data volume metrics; time: the
longest thread's RDTSC runtime (Region Info's, 6 decimals, before the 4-decimal metric's;
the region's wall time); calls: Region Info's call count or likwid-mpirun's Region calls.
A group without FP events (MEM) gives a bytes-only point, with a note.
"""


def _load(files: list[str], precision: str | None = None):
    from ..files import read_with_stdin
    from ..ingest.likwid import load_likwid

    return read_with_stdin(load_likwid, files, precision=precision)


def register(app) -> None:
    profiler_verb(app, "likwid", HELP, "likwid-perfctr CSV file(s) (-O); several = steps",
                  _load, precision=True)
