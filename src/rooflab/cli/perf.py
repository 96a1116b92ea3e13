"""rooflab perf — a `perf stat` run (FP and memory-controller events) on the roof."""

from __future__ import annotations

from .options import profiler_verb

HELP = """Put a whole CPU program measured with `perf stat` on the roofline: one point per file.

Count the FP instructions, the memory controllers' reads and writes (client parts:
uncore_imc/data_reads/ and data_writes/), and the time:

  F=fp_arith_inst_retired
  E=duration_time,$F.scalar_double,$F.128b_packed_double
  E=$E,$F.256b_packed_double,$F.512b_packed_double
  E=$E,uncore_imc/cas_count_read/,uncore_imc/cas_count_write/
  perf stat -a -x, -o run.csv -e $E ./app
  rooflab perf run.csv --on me.json

Plain `perf stat` output (no -x, with its "seconds time elapsed" line) is read too. Several
files are steps (one trajectory). -I (interval) output is refused: rooflab reads a run.

FLOP: fp_arith_inst_retired.* x vector width (1/2/4/8 double, 1/4/8/16 single; the hardware
counts an FMA twice); DRAM bytes: cas_count_read + cas_count_write in perf's unit (MiB), or
64 B per count when there is no unit; time: "seconds time elapsed", else duration_time.
"""


def _load(files: list[str]):
    from ..ingest.perf_stat import load_perf_stat

    return load_perf_stat(files)


def register(app) -> None:
    profiler_verb(app, "perf", HELP, "perf stat output file(s) (-x, or plain); several = steps",
                  _load)
