"""rooflab bench — time the reference kernel zoo (or a user's script's kernels: --run) and
place them on the roof.

The command and its table live here; what it runs lives by what it does: bench_zoo (the
reference kernels), bench_run (--run's script), bench_kernel (--kernel's one numba
kernel), bench_roofs (the probe that judges without --on), bench_output (-o FILE and
--json), bench_table (the table for a narrow terminal); import their names from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from .bench_kernel import bench_kernel, check_kernel_options, list_details
from .bench_output import check_bench_output, emit_analysis, write_output
from .bench_roofs import probe_roofs
from .bench_run import check_run_options, time_script
from .bench_table import compact_table
from .bench_zoo import list_kernels, selected_names, time_zoo
from .common import wide_console, wrote
from .options import on_option

# bench's --on replaces the probe it runs without one
OnBench = Annotated[str | None, on_option("judge by it instead of probing first")]


def register(app) -> None:
    @app.command("bench", context_settings={"allow_extra_args": True,
                                            "ignore_unknown_options": True})
    def bench(
        ctx: typer.Context,
        run: str | None = typer.Option(None, "--run", help="time your own kernels: run this "
                                       "script and place every rooflab.measure kernel it "
                                       "makes; its arguments follow it (after --)"),
        device: str | None = typer.Option(None, "--device", help="cpu (numpy; the "
                                          "default), torch-cpu, or cuda[:N] (PyTorch)"),
        on: OnBench = None,
        only: str | None = typer.Option(None, "--only", help="comma-separated kernel names "
                                        "or prefixes, e.g. copy,gemm,triad_fp64"),
        quick: bool = typer.Option(False, "--quick", help="shorter timing (about a third)"),
        samples: int | None = typer.Option(None, "--samples", metavar="N", help="at least N "
                                           "timing samples per kernel (else 9 or more, as "
                                           "many as the time budget fits: the 9 a side "
                                           "`rooflab compare` needs to judge a before/after "
                                           "pair's noise with its U test); each sample past "
                                           "the budget costs ~20 ms (--quick 10 ms), or one "
                                           "call of a slower kernel"),
        output: str | None = typer.Option(None, "-o", "--output",
                                          help="chart .png/.svg, analysis .json, table .csv"),
        json_out: bool = typer.Option(False, "--json", help="print the analysis as JSON"),
        list_: bool = typer.Option(False, "--list", help="list the zoo's kernels and exit"),
        kernel: str | None = typer.Option(None, "--kernel", help="run one numba kernel, "
                                          "likwid-bench's names and meanings: stream (a = "
                                          "b + s*c), triad (a = b*c + d), copy, scale, "
                                          "add, sum, load, store, update, daxpy, ddot, "
                                          "peakflops"),
        size: str | None = typer.Option(None, "--size", help="--kernel's working set per "
                                        "thread, e.g. 24KiB, 1MiB, 4xLLC (default: 4xLLC, "
                                        "DRAM-sized)"),
        threads: int | None = typer.Option(None, "--threads", help="--kernel's thread "
                                           "count (default 1); with --on a profile of "
                                           "`probe --threads`, its row for that count "
                                           "judges"),
        cpus: str | None = typer.Option(None, "--cpus", help="--kernel runs on these CPUs "
                                        "only, e.g. 0-3,8"),
        details: bool = typer.Option(False, "--details", help="with --list: each --kernel's "
                                     "streams, FLOP and bytes per update (likwid-bench -l)"),
    ) -> None:
        """Time ~20 reference kernels (copy, triad, sum, dot, gemv, gemm, conv2d, softmax,
        layernorm, exp, FFT, sort) and place them on the measured roof.

        Each kernel's FLOP and bytes are counted analytically, so the table
        is also a check of the model: a kernel measured faster than its floor
        (max(FLOP/P, bytes/B)) by more than the noise is flagged `below-floor`
        (a wrong count or a wrong roof).

        Your own kernels: rooflab bench --run my_kernels.py [--on me.json] [-- args]
        runs the script and places each kernel its rooflab.measure calls produce.

        One numba kernel at one size on N threads (likwid-bench -t, likwid's kernel
        names: stream is STREAM's triad, triad likwid's 4-stream one):
        `rooflab bench --kernel load --size 24KiB --threads 1`, with --on me.json to
        place it on that roof (a `probe --threads` profile: its row for --threads).

        Example: rooflab bench --only triad,gemm --quick -o zoo.png
        """
        check_samples(samples, run)
        if run is not None:
            zoo = {"--only": only, "--list": list_ or None, "--quick": quick or None,
                   "--device": device}
            check_run_options(run, [k for k, v in zoo.items() if v is not None])
            bench_script(run, list(ctx.args), on=on, output=output, json_out=json_out)
            return
        if list_ and details:
            list_details(json_out)
            return
        one = {"--size": size, "--threads": threads, "--cpus": cpus, "--details":
               details or None}
        if kernel is not None or any(v is not None for v in one.values()):
            zoo = {"--only": only, "--list": list_ or None, "-o": output,
                   "--run": run, "--device": device if device and device != "cpu" else None}
            check_kernel_options(kernel, one, zoo, ctx.args)
            bench_kernel(kernel, size=size, threads=1 if threads is None else threads,
                         cpus=cpus, on=on, quick=quick, json_out=json_out,
                         samples=samples)
            return
        if ctx.args:
            raise InputError(f"unexpected arguments {' '.join(ctx.args)}; arguments for a "
                             f"script go after --run SCRIPT (see `rooflab bench --help`)")
        device = device or "cpu"
        if list_:
            list_kernels(json_out)
            return
        if output:   # fail before minutes of measuring, not after
            check_bench_output(output, [on])
        names = selected_names(device, only)
        # probe_roofs looked up here, at the call: a test (or a caller) may replace it
        roofs, kernels, analysis = time_zoo(device, names, on=on, quick=quick,
                                            probe=probe_roofs, samples=samples,
                                            json_out=json_out)
        show(analysis, roofs, kernels, output, json_out)


def check_samples(samples: int | None, run: str | None) -> None:
    """--samples is a count of 1 or more, for the zoo and --kernel; --run's script times
    its own kernels, so it says its samples in its rooflab.measure calls."""
    if samples is not None and samples < 1:
        raise InputError(f"--samples must be 1 or more (timing samples per kernel; 9 lets "
                         f"`rooflab compare` judge the noise); got {samples}")
    if samples is not None and run is not None:
        raise InputError(f"--samples does not reach --run {run}: the script's "
                         f"rooflab.measure calls time its kernels; give them samples= "
                         f"instead, e.g. rooflab.measure(fn, x, samples={samples}), and "
                         f"drop --samples")


def bench_script(script: str, args: list[str], *, on: str | None, output: str | None,
                 json_out: bool) -> None:
    """`rooflab bench --run script.py`: the script's measured kernels on the roof (--on,
    else a quick probe of the device they ran on, as the zoo's bench does)."""
    roofs, kernels, analysis = time_script(script, args, on=on, output=output,
                                           json_out=json_out, probe=probe_roofs)
    from ..bench.table import recipe_line

    what = f"kernels of {Path(script).name}"
    show(analysis, roofs, kernels, output, json_out, what,
         title=f"{what} on {analysis.roof.name}", under=recipe_line(analysis.kernels))


def show(analysis, roofs, kernels, output: str | None, json_out: bool,
         what: str = "reference kernels", title: str | None = None,
         under: str | None = None) -> None:
    """bench's placed kernels written to -o FILE, then as JSON on stdout or as the table
    (print_results, with `under` beneath it)."""
    if output:
        write_output(output, roofs, kernels, analysis, what)
    if json_out:
        emit_analysis(analysis)
        return
    print_results(analysis, output, title=title, under=under)


def print_results(analysis, output: str | None, title: str | None = None,
                  under: str | None = None) -> None:
    """The table, then `under` (bench --run's timing recipe), the flags' meanings and the
    analysis' notes."""
    from ..bench.check import FLAG_TEXT
    from ..bench.table import zoo_table
    out = wide_console()
    table = zoo_table(analysis, title)
    natural = out.measure(table, options=out.options.update_width(10_000)).maximum
    if out.width < natural:   # an 80-column terminal: keep the names whole
        table = compact_table(analysis, title, out.width)
    out.print(table)
    if under:
        out.print(f"  {under}", markup=False)
    seen = {f for k in analysis.kernels for f in k.meta.get("flags", ())}
    for flag in (f for f in FLAG_TEXT if f in seen):
        out.print(f"  {flag}: {FLAG_TEXT[flag]}")
    for note in analysis.notes:
        out.print(f"  note: {note}")
    if output:
        wrote(output)   # stderr, as every verb (s22 r3 F7)
