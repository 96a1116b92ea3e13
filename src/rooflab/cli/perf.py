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

Plain `perf stat` output (no -x, with its "seconds time elapsed" line) and -j JSON lines
are read too, with --per-socket/--per-die/-A columns and in a decimal-comma locale
(1.234.567,89). Several files are steps (one trajectory). -I (interval) output is refused:
rooflab reads a run.
`-` reads standard input: `perf stat -a -x, -e $E ./app 2>&1 | rooflab perf -`.

AMD (Zen 4): fp_ret_sse_avx_ops.all and the data fabric's DRAM beats, read and write, one
event per channel, cs0 to cs11 (or amd_umc_N/umc_cas_cmd.rd/ and .wr/, Linux 6.x); say what
the code computes in, as the FLOP event counts every precision:

  D=amd_df/local_processor
  E=duration_time,fp_ret_sse_avx_ops.all
  E=$E,${D}_read_data_beats_cs0/,${D}_write_data_beats_cs0/
  perf stat -a -x, -o run.csv -e $E ./app
  rooflab perf run.csv --on me.json --precision fp32

FLOP: fp_arith_inst_retired.* x vector width (1/2/4/8 double, 1/4/8/16 single; the hardware
counts an FMA twice); the combined .scalar / .4_flops / .8_flops (1/4/8 FLOP each) mix fp64
and fp32 and are read as --precision says (fp64 if not given), less any _double/_single
part in the file; Sapphire Rapids' fp_arith_inst_retired2.* are fp16 (scalar_half 1,
128b/256b/512b_packed_half 8/16/32, complex_scalar_half 2); AMD's fp_ret_sse_avx_ops.all
counts FLOP of every precision: read as fp64, or as --precision says. DRAM bytes:
cas_count_read + cas_count_write in perf's unit
(MiB), or 64 B per count when there is no unit (an AMD data-fabric beat, a UMC CAS; Granite
Rapids / Sierra Forest: UNC_M_CAS_COUNT_SCH0.RD + SCH1.RD + SCH0.WR + SCH1.WR); time:
"seconds time elapsed", else duration_time.
"""


def _load(files: list[str], precision: str | None = None):
    from ..files import read_with_stdin
    from ..ingest.perf_stat import load_perf_stat

    return read_with_stdin(load_perf_stat, files, precision=precision)


def register(app) -> None:
    profiler_verb(app, "perf", HELP, "perf stat output file(s) (-x, or plain); several = steps",
                  _load, precision=True)
