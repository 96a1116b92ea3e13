"""rooflab ncu — Nsight Compute CSV pages and .ncu-rep reports on the roof."""

from __future__ import annotations

from .options import profiler_verb

HELP = """Put Nsight Compute results on the roofline: one point per kernel and memory level.

Reads `ncu --csv` output (the default "details" page or `--page raw`) and
`.ncu-rep` reports. Collect the metrics rooflab needs with, for example:

  I=sm__sass_thread_inst_executed_op
  M=dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,gpu__time_duration.sum
  M=$M,${I}_dadd_pred_on.sum,${I}_dmul_pred_on.sum,${I}_dfma_pred_on.sum
  M=$M,${I}_fadd_pred_on.sum,${I}_fmul_pred_on.sum,${I}_ffma_pred_on.sum
  M=$M,${I}_hadd_pred_on.sum,${I}_hmul_pred_on.sum,${I}_hfma_pred_on.sum
  M=$M,sm__ops_path_tensor_src_fp16_dst_fp32.sum   (tensor cores, sm_80+)
  P=peak_sustained
  M=$M,dram__bytes.sum.$P,lts__t_bytes.sum.$P,l1tex__t_bytes.sum.$P
  M=$M,${I}_dfma_pred_on.sum.$P,${I}_ffma_pred_on.sum.$P
  M=$M,${I}_hfma_pred_on.sum.$P,sm__cycles_elapsed.avg.per_second
  M=$M,dram__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
  M=$M,l1tex__cycles_elapsed.avg.per_second
  M=$M,sm__warps_active.avg.pct_of_peak_sustained_active
  M=$M,sm__maximum_warps_per_active_cycle_pct
  M=$M,launch__occupancy_limit_registers,launch__occupancy_limit_warps
  ncu --metrics $M --csv ./app > out.csv

(the .peak_sustained metrics: the roof at the profiled clock, L2 and L1 included, which
also completes an --on catalog roof; occupancy: cited for a kernel far under its roof)

FLOP: fp64 = dadd + dmul + 2 dfma, fp32 = fadd + fmul + 2 ffma, fp16 =
2 (hadd + hmul) + 4 hfma; bytes: dram__bytes.sum (or read + write), L2, L1.

Examples:

  rooflab ncu out.csv --on "RTX 4090"
  rooflab ncu report.ncu-rep --json
  rooflab ncu step0.csv step1.csv step2.csv --on a100 -o steps.png

(several files are optimisation steps: one trajectory on the chart)

A kernel with FLOP in several precisions is one point held to their weighted
ceiling (the whole kernel's % of roof). Nsight Compute's own charts draw one
point per precision: --precision fp64 keeps each kernel's fp64 FLOP (its
double-precision chart), --precision each gives a row per precision (the
kernel's name, the precision after it in square brackets), each over the
kernel's whole time.

A catalog roof (--on "RTX 4090", or the device named in the file) is judged
at the SM clock ncu recorded: its compute ceilings x recorded / boost clock
(derived; ncu locks base clocks by default), memory as listed; --on
"RTX 4090@boost" keeps the datasheet's boost-clock peaks.

The roof: --on (catalog name or profile file), else the peaks ncu recorded
(full-set reports; at the clock it profiled at, every level; they also add the
L2/L1 levels an --on roof lacks), else the catalog
entry matching the device name in the file, else the best the kernels reached
(a lower bound; the output says which). Rows that cannot be used (nan values
of a failed launch, missing metrics, zero time, a file cut short) are skipped
with a warning that names the file and line.
"""


def _load(files: list[str], per_launch: bool = False, precision: str | None = None):
    # the notes on which metric stood in for another are added by profiler_verb, after
    # --kernel/--exclude, so that they name only the kernels shown
    from dataclasses import replace

    from ..ingest.ncu_files import load_ncu
    from ..ingest.ncu_precision import parse_view, precision_view
    from .common import progress_bar

    if precision is not None:
        parse_view(precision)   # a bad word refused before the files are read
    with progress_bar("ncu") as update:
        imp = load_ncu(files, progress=update, per_launch=per_launch)
    if precision is None:
        return imp
    kernels, notes = precision_view(imp.kernels, precision)
    return replace(imp, kernels=kernels, notes=imp.notes + notes)


def register(app) -> None:
    # precision=True: the verb takes --precision (each, or one precision: ncu's per-precision
    # points, ingest/ncu_precision.py)
    profiler_verb(app, "ncu", HELP, "ncu CSV files and/or .ncu-rep reports; several files = "
                                    "optimisation steps", _load, per_launch=True,
                  precision=True)
    _precision_help(app)


PRECISION_HELP = ("the kernels' FLOP to show, as Nsight Compute's per-precision charts: each "
                  "(a row per precision), or one precision (fp64, fp32, fp16, ...); default: "
                  "every precision in one point, held to their weighted ceiling")


def _precision_help(app) -> None:
    """--precision's help in ncu's words: profiler_verb words it for likwid and perf (which
    precision an AMD FLOP event counts). Its option object is this verb's own (made when
    profiler_verb defined it); left as it is where it cannot be found."""
    import inspect

    for command in app.registered_commands:
        if command.name == "ncu" and command.callback is not None:
            for param in inspect.signature(command.callback).parameters.values():
                if "--precision" in (getattr(param.default, "param_decls", None) or ()):
                    param.default.help = PRECISION_HELP
