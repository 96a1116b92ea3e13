"""rooflab torch — PyTorch profiler traces (or a script run under the profiler) on the roof."""

from __future__ import annotations

import typer

from .options import JsonOut, On, Output, Top

HELP = """Put PyTorch ops on the roofline: one point per op and input shape, longest first.

Read a chrome trace exported by torch.profiler (profile with record_shapes=True):

  rooflab torch trace.json --on h200

or run a script under the profiler yourself (arguments after the script go to it; put
`--` before them when they look like rooflab options):

  rooflab torch --run model.py
  rooflab torch --run train.py --json -- --steps 3   (script gets --steps 3)

Several traces (the ranks of a distributed job, or steps) go in one table, each op's name
labelled by its trace's rank (distributedInfo.rank) or, for one rank's steps, its file:

  rooflab torch rank0.pt.trace.json.gz rank1.pt.trace.json.gz

FLOP: shape formulas (matmul, addmm and bmm at 2mnk, conv, attention, elementwise,
softmax, layer_norm, sum/mean (n-1 adds per output), nll_loss, and the backward ops of a
training step: convolution_backward, native_layer_norm_backward,
gelu/silu/threshold_backward, softmax, embedding and nll_loss backward; max/avg/adaptive
pooling and group_norm, forward and backward); memory ops with
no FLOP (embedding, index_select, gather, cat, copy_, fill_, zero_) are
placed by their bytes/s on the memory ceiling. Bytes: compulsory traffic from shapes and
dtypes. Time: the GPU kernels an op launched (linked by External id) on CUDA, the op's
own time on the CPU. Shares are of all op time, the ops without a formula included.
Under torch.autocast an op re-dispatched in bf16/fp16
inside itself is counted in the inner call's dtypes, timed by the outer call.
torch.compile'd code: Inductor's fused kernels have no op shapes and are not counted, only
the aten ops they call (extern mm/addmm/conv); for a per-op roof profile the eager model,
or time the compiled one with rooflab.measure(f, x, flop=..., bytes=...).
"""


def register(app) -> None:
    @app.command("torch", help=HELP,
                 context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def torch_cmd(
        ctx: typer.Context,
        trace: str = typer.Argument(None, help="chrome trace JSON (.json or .json.gz); "
                                               "more traces may follow it"),
        run: str = typer.Option(None, "--run", help="a Python script to run under the "
                                                    "profiler; its arguments follow it"),
        save_trace: str = typer.Option(None, "--save-trace",
                                       help="with --run: keep the trace in this file"),
        on: On = None,
        top: Top = 20,
        json_out: JsonOut = False,
        output: Output = None,
    ) -> None:
        import os

        from ..errors import InputError, ParseError
        from ..ingest.torch_trace import load_torch_trace
        from .profiled import check_output, report_import

        # every trace given (the extra ones too) and a --run script's files are inputs
        check_output(output, top, [trace, run, on, save_trace, *ctx.args])
        if save_trace is not None:   # the trace written over the script it ran
            from .common import refuse_input_as_output

            refuse_input_as_output(save_trace, [i for i in (run, trace, on) if i],
                                   "--save-trace")
            _check_trace_name(save_trace)
        if run is None and trace is None:
            raise InputError("give a trace file (rooflab torch trace.json) or a script to "
                             "run (rooflab torch --run model.py)")
        # more traces after the first (typer takes one; the rest arrive as extra args),
        # but an unknown option among them is a typo, not a trace
        if run is None and any(a.startswith("-") for a in ctx.args):
            raise InputError(f"unexpected arguments {' '.join(ctx.args)}; script arguments "
                             f"go after --run SCRIPT")
        if run is not None:
            from ..ingest.torch_run import run_script

            args = ([trace] if trace else []) + list(ctx.args)
            path = run_script(run, args, trace_path=save_trace, quiet_stdout=json_out)
            try:
                imp = load_torch_trace(path)
            except ParseError as exc:
                # the message named the temporary trace (deleted below) and told the user to
                # profile with record_shapes=True, which --run already did: name the script
                if save_trace is not None:
                    raise
                msg = str(exc).removeprefix(f"{path}: ")
                if "no cpu_op events" in msg:
                    msg = "the script ran no PyTorch op (the profiler recorded none)"
                raise ParseError(f"--run {run}: {msg}") from None
            finally:
                if save_trace is None:
                    os.unlink(path)
            if save_trace is None:   # meta.file named the deleted temp trace: name the script
                from dataclasses import replace

                imp = replace(imp, files=(run,), kernels=tuple(
                    replace(k, meta={**k.meta, "file": run}) for k in imp.kernels),
                    uncounted=tuple({**u, "file": run} for u in imp.uncounted))
        else:
            from .inputs import refuse_repeated

            refuse_repeated([trace, *ctx.args])   # as report and plot (s33 C)
            imp = load_torch_trace([trace, *ctx.args])
        raise typer.Exit(report_import(imp, on=on, top=top, json_out=json_out, output=output,
                                       what="ops"))


def _check_trace_name(path: str) -> None:
    """--save-trace names a .json: the profiler writes an uncompressed chrome trace, which
    `rooflab torch FILE` reads back by its suffix; `--save-trace x.bad` (or x.json.gz, not
    compressed) was taken and written (s38 I)."""
    from pathlib import Path

    from ..errors import InputError

    if not path.lower().endswith(".json"):
        gz = path.lower().endswith(".json.gz")
        suffix = Path(path).suffix
        got = f"not '{'.json.gz' if gz else suffix}'" if suffix else "and the name has no suffix"
        raise InputError(f"--save-trace {path}: the trace is written as chrome trace JSON "
                         f"(uncompressed), {got}: name it .json, e.g. --save-trace "
                         f"trace.json")
