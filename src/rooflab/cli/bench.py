"""rooflab bench — time the reference kernel zoo (or a user's script's kernels: --run) and
place them on the roof."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError, MissingDependency
from ..model.ceiling import Roof
from .common import progress_bar, say_line, wide_console
from .options import on_option

OUTPUT_SUFFIXES = (".png", ".svg", ".json", ".csv")
# bench's --on replaces the probe it runs without one
OnBench = Annotated[str | None, on_option("judge by it instead of probing first")]


def probe_roofs(device: str, progress=None) -> tuple[tuple[Roof, ...], object | None]:
    """(roofs, profile) from a quick probe of the device, or the catalog without numba."""
    if device.startswith("cuda"):
        from ..probe.gpu import probe_gpu

        profile = probe_gpu(device, mode="quick", progress=progress)
        return profile.roofs, profile
    try:
        from ..probe.cpu import probe_cpu

        profile = probe_cpu(mode="quick", progress=progress)
        return profile.roofs, profile
    except MissingDependency as exc:
        from ..hardware.catalog import match_device_name
        from ..hardware.host import detect_host

        found = match_device_name(detect_host().cpu_model)
        if found is None:
            raise InputError(f"{exc}; or pass --on PROFILE.json or --on HARDWARE "
                             f"(see `rooflab specs list`)") from None
        from .common import warn

        warn(f"{exc}; judging by the catalog's nominal roof of {found.name}")
        return (found.roof,), None


def say_probe_load(profile) -> None:
    """The quick probe's busy-machine notes (other processes' CPU share, steal), on stderr
    as `rooflab probe --json` says them: they explain a roof that reads low."""
    if profile is not None:
        from .probe import warn_load_notes

        warn_load_notes(profile)


def output_suffix(path: str) -> str:
    """-o FILE's suffix, refused unless bench writes it."""
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise InputError(f"-o '{path}': use a file ending in {', '.join(OUTPUT_SUFFIXES)}")
    return suffix


def check_bench_output(path: str, inputs: list[str | None]) -> None:
    """-o FILE before any work: a suffix bench writes, not one of its inputs (--on's
    profile, --run's script: `bench --on me.json -o me.json` replaced the profile), a
    place that can be written."""
    from ..files import check_writable
    from .common import refuse_input_as_output

    output_suffix(path)
    refuse_input_as_output(path, [i for i in inputs if i])
    check_writable(path)


def write_output(path: str, roofs, kernels, analysis, what: str = "reference kernels"
                 ) -> None:
    """-o FILE: a chart (.png/.svg), the analysis JSON (.json) or the table (.csv)."""
    suffix = output_suffix(path)
    if suffix == ".json":
        from ..files import write_json
        from ..model.schema import analysis_to_dict

        write_json(path, analysis_to_dict(analysis))
    elif suffix == ".csv":
        from ..bench.table import rows_csv, zoo_rows
        from ..files import write_atomic

        write_atomic(path, rows_csv(zoo_rows(analysis)))
    else:
        from ..report.chart import plot_roofline, save_figure
        from ..report.chart_parts import roof_label

        # the title says on which machine (the roof that judges them), as probe's does
        display = plot_roofline(roofs, kernels,
                                title=f"{what} on {roof_label(roofs[0])}")
        save_figure(display, path)


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
        from ..bench.zoo import run_zoo
        from ..model.analysis import analyze

        if run is not None:
            zoo = {"--only": only, "--list": list_ or None, "--quick": quick or None,
                   "--device": device}
            _check_run_options(run, [k for k, v in zoo.items() if v is not None])
            bench_script(run, list(ctx.args), on=on, output=output, json_out=json_out)
            return
        if list_ and details:
            _list_details(json_out)
            return
        one = {"--size": size, "--threads": threads, "--cpus": cpus, "--details":
               details or None}
        if kernel is not None or any(v is not None for v in one.values()):
            zoo = {"--only": only, "--list": list_ or None, "-o": output,
                   "--run": run, "--device": device if device and device != "cpu" else None}
            _check_kernel_options(kernel, one, zoo, ctx.args)
            bench_kernel(kernel, size=size, threads=1 if threads is None else threads,
                         cpus=cpus, on=on, quick=quick, json_out=json_out)
            return
        if ctx.args:
            raise InputError(f"unexpected arguments {' '.join(ctx.args)}; arguments for a "
                             f"script go after --run SCRIPT (see `rooflab bench --help`)")
        device = device or "cpu"
        if list_:
            _list_kernels(json_out)
            return
        if output:   # fail before minutes of measuring, not after
            check_bench_output(output, [on])
        names = _selected_names(device, only)
        if device.lower() != "cpu":   # PyTorch kernels: say a missing torch before any work
            from ..errors import require

            cuda = device.lower().startswith("cuda")
            require("torch", "gpu" if cuda else "torch", f"rooflab bench --device {device}")
        if on is not None:
            from .inputs import resolve_on

            roofs = resolve_on(on)
            mismatch = other_kind_warning(on, device, roofs)
            if mismatch:   # said before the progress bar, not under it
                say_line(mismatch)
        with progress_bar("probe" if on is None else "bench") as update:
            if on is None:
                roofs, profile = probe_roofs(device.lower(), lambda s, f: update(s, 0.5 * f))
            scale = 0.5 if on is None else 1.0
            kernels = run_zoo(roofs[0], names, device=device, plan="quick" if quick else None,
                              progress=lambda s, f: update(s, 1 - scale + scale * f))
        if on is None:
            say_probe_load(profile)
        analysis = analyze(roofs[0], kernels)
        if output:
            write_output(output, roofs, kernels, analysis)
        if json_out:
            from ..model.schema import analysis_to_dict
            from .common import emit_json

            emit_json(analysis_to_dict(analysis))
            return
        print_results(analysis, output)


def _check_kernel_options(kernel: str | None, one: dict, zoo: dict, args) -> None:
    """--size, --threads, --cpus belong to --kernel; the zoo's options do not mix with it."""
    given = [k for k, v in one.items() if v is not None]
    if kernel is None:
        verb = "is an option" if len(given) == 1 else "are options"
        raise InputError(f"{' and '.join(given)} {verb} of --kernel (one kernel at one "
                         f"size); add --kernel NAME, e.g. rooflab bench --kernel stream "
                         f"--size 1MiB")
    if "--details" in given:
        raise InputError("--details goes with --list (rooflab bench --list --details), not "
                         "with --kernel")
    clash = [k for k, v in zoo.items() if v is not None]
    if clash:
        named = " and ".join(clash)
        raise InputError(f"--kernel {kernel} runs one numba kernel on this CPU; {named} "
                         f"{'belongs' if len(clash) == 1 else 'belong'} to the reference "
                         f"kernels (the zoo) or to --run: drop {named}")
    if args:
        raise InputError(f"unexpected arguments {' '.join(args)} (see `rooflab bench "
                         f"--help`)")


def bench_kernel(name: str, *, size: str | None, threads: int, cpus: str | None,
                 on: str | None, quick: bool, json_out: bool) -> None:
    """`rooflab bench --kernel NAME`: one numba kernel at one working set on N threads, with
    --on its share of that level's ceiling (likwid-bench -t NAME -w S0:SIZE:N)."""
    from ..bench import kernel_runner as kr
    from ..bench.zoo import llc_bytes
    from ..hardware.host import detect_caches
    from ..probe.cpu import affinity as aff

    k = kr.kernel(name)
    if size is not None and k.name == "peakflops":
        raise InputError("--size does not apply to --kernel peakflops: its FMA chains stay "
                         "in registers (one block per thread); drop --size")
    llc = llc_bytes()
    ws = kr.parse_size(size, llc) if size is not None else kr.default_size(llc)
    cpu_list = None
    if cpus is not None:
        cpu_list = aff.parse_cpu_list(cpus)
        aff.check_cpus(cpu_list, aff.allowed_cpus())
    allowed = cpu_list or aff.allowed_cpus()
    import os

    kr.check_threads(threads, len(allowed) if allowed else (os.cpu_count() or 1))
    roofs, threads_row = None, ""
    if on is not None:   # a bad --on fails before the run
        from ..hardware.resolve import RUN, roofs_for_kernel_threads
        from .inputs import resolve_on

        # a scaling profile's row for --threads judges, as a kernel file's 'threads'
        # picks it: a one-thread run judged by the all-thread L1 read 171 % (review 16a G)
        roofs = resolve_on(on)
        picked, threads_row, _ = roofs_for_kernel_threads(on, threads, RUN)
        roofs = picked or roofs
    simd = kr.simd_note(name)
    if simd and not json_out:
        say_line(f"note: {simd}")
    from ..errors import require

    require("numba", "cpu", "rooflab bench --kernel")
    if cpu_list is not None:
        aff.pin(cpu_list)
    from ..probe.cpu.bandwidth import capacities
    from ..probe.timer import DEFAULT, QUICK

    caps = capacities(detect_caches(), threads)
    result = kr.run_kernel(k, ws, threads, caps, QUICK if quick else DEFAULT)
    placed = kr.place_on(result, roofs[0], threads_row) if roofs else None
    if json_out:
        from ..model.schema import SCHEMA_VERSION
        from .common import emit_json

        emit_json({"schema_version": SCHEMA_VERSION, **kr.result_dict(result, placed)})
        return
    if roofs and placed is None:
        say_line(f"note: {roofs[0].name} has no {result.level} ceiling to place it on")
    typer.echo("\n".join(kr.summary_lines(result, placed)))


def _list_details(json_out: bool) -> None:
    """--list --details: likwid-bench -l for every --kernel."""
    from ..bench.kernel_runner import BYTE_MODEL, details_rows

    rows = details_rows()
    if json_out:
        from ..model.schema import SCHEMA_VERSION
        from .common import emit_json

        emit_json({"schema_version": SCHEMA_VERSION, "byte_model": BYTE_MODEL,
                   "kernels": rows})
        return
    for r in rows:
        typer.echo(f"{r['kernel']:<10} {r['formula']:<36} streams {r['streams']}  "
                   f"loads {r['loads']}  stores {r['stores']}  FLOP {r['flop_per_update']}  "
                   f"bytes {r['bytes_per_update']}   likwid {r['likwid']}")
        if r["note"]:
            typer.echo(f"{'':<11}note: {r['note']}")
    typer.echo(f"per update (one element of each stream); bytes: {BYTE_MODEL}; "
               f"numba emits no non-temporal stores (no copy_mem/store_mem)")


def _check_run_options(run: str, zoo_options: list[str]) -> None:
    """--only, --list, --quick and --device choose and time the reference kernels; the
    script chooses its own kernels, their timing and their device."""
    if zoo_options:
        named = " and ".join(zoo_options)
        raise InputError(f"--run {run} times your script's own kernels; {named} "
                         f"{'is an option' if len(zoo_options) == 1 else 'are options'} "
                         f"of the reference kernels (the zoo), so they do not mix with "
                         f"--run: drop {named}, or run the zoo without --run")


def bench_script(script: str, args: list[str], *, on: str | None, output: str | None,
                 json_out: bool) -> None:
    """`rooflab bench --run script.py`: the script's measured kernels on the roof (--on,
    else a quick probe of the device they ran on, as the zoo's bench does)."""
    from ..bench.check import check_floors
    from ..bench.user_script import kernels_device, run_script
    from ..bench.zoo import llc_bytes
    from ..model.analysis import analyze

    if output:   # fail before running the script, not after
        check_bench_output(output, [on, script])
    if on is not None:   # a bad --on fails before the script runs, too
        from .inputs import resolve_on

        roofs = resolve_on(on)
    kernels = run_script(script, args, quiet_stdout=json_out)
    device, mixed = kernels_device(kernels)
    notice = mixed or (other_kind_warning(on, device, roofs) if on is not None else "")
    if notice:
        say_line(notice)
    if on is None:
        with progress_bar("probe") as update:
            roofs, profile = probe_roofs(device, update)
        say_probe_load(profile)
    kernels = check_floors(roofs[0], kernels, llc_bytes())
    analysis = analyze(roofs[0], kernels)
    what = f"kernels of {Path(script).name}"
    if output:
        write_output(output, roofs, kernels, analysis, what)
    if json_out:
        from ..model.schema import analysis_to_dict
        from .common import emit_json

        emit_json(analysis_to_dict(analysis))
        return
    from ..bench.table import recipe_line

    print_results(analysis, output, title=f"{what} on {analysis.roof.name}",
                  under=recipe_line(analysis.kernels))


def _list_kernels(json_out: bool) -> None:
    from ..bench.zoo import kernel_names

    if json_out:
        from ..model.schema import SCHEMA_VERSION
        from .common import emit_json

        emit_json({"schema_version": SCHEMA_VERSION, "kernels": list(kernel_names())})
    else:
        typer.echo("\n".join(kernel_names()))


def _selected_names(device: str, only: str | None) -> list[str] | None:
    """--only's names (None: every kernel); a bad device or name fails here, before the
    probe."""
    from ..bench.zoo import check_device, select

    check_device(device)
    names = [t for t in (only or "").split(",") if t.strip()] or None
    if only is not None and names is None:
        raise InputError(f"--only needs kernel names or prefixes, e.g. copy,gemm; got "
                         f"'{only}' (`rooflab bench --list` shows them)")
    select(names)
    return names


def other_kind_warning(on: str, device: str, roofs=()) -> str:
    """`rooflab bench --on T4` times numpy on this CPU against a GPU's roof: say so (a roof
    of another kind than the device the kernels run on), else ''. A catalog name gives its
    Device.kind; a file (a profile, rocprof-compute's roofline.csv) gives the kind its host
    section or its own evidence shows (model.machine.machine_of); an unknown kind says
    nothing."""
    from ..errors import RooflabError
    from ..hardware.resolve import looks_like_file

    if looks_like_file(on) or (Path(on) / "roofline.csv").is_file():
        if not roofs:
            return ""
        from ..model.machine import machine_of

        host = {}
        if on.lower().endswith(".json"):
            from ..hardware.profile import load_profile

            try:
                host = dict(load_profile(on).host)
            except RooflabError:   # a bare roof or an analysis file: no host section
                host = {}
        kind, name = machine_of(roofs[0], host).kind, roofs[0].name
        if kind not in ("cpu", "gpu"):
            return ""
    else:
        from ..hardware.catalog import lookup

        try:
            dev = lookup(on)
        except RooflabError:
            return ""
        kind, name = dev.kind, dev.name
    on_gpu = device.lower().startswith("cuda")
    if (kind != "cpu") == on_gpu:
        return ""
    runs = "a CUDA GPU" if on_gpu else "this machine's CPU"
    fix = ("--on a CPU profile (rooflab probe -o profile.json)" if on_gpu else
           "--device cuda on that GPU, or --on a profile of this machine")
    return (f"warning: the kernels run on {runs} (--device {device}) but are judged by the "
            f"roof of {name}, a {kind}: the percentages compare unlike machines; "
            f"use {fix}")


COMPACT_HEADERS = {"kernel": "kernel", "AI": "AI", "time": "time", "achieved": "achieved",
                   "% of roof": "% roof", "bound": "bound", "measured/floor": "x floor",
                   "best/floor": "x best", "flags": "flags"}


def compact_table(analysis, title: str | None = None, width: int = 80):
    """The zoo table for a narrow terminal: FLOP and bytes left out (AI keeps their ratio;
    -o table.csv has them), no column rules, names never cut (`rooflab demo` at 80 columns
    otherwise printed 'tria…  memo…  GFLO…'). best/floor stays when the table still fits
    `width` without cutting a cell, else the caption says where it is; the caption that
    tells median from best (bench.table.TIME_NOTE) stays, in the short column names."""
    from ..bench.table import zoo_table

    full = zoo_table(analysis, title)
    timed = full.caption is not None   # zoo_table's caption: some row has a best sample
    table = _compact(full, timed)
    if timed and not _fits(table, width):
        table = _compact(full, False, moved=True)
    return table


def _compact(full, best: bool, moved: bool = False):
    """full's columns in COMPACT_HEADERS, best/floor only if `best`; `moved`: the caption
    says that best/floor was left out for width."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ..bench.table import TIME_NOTE

    names = {k: v for k, v in COMPACT_HEADERS.items() if best or k != "best/floor"}
    caption = None
    if full.caption is not None:
        note = TIME_NOTE
        for long, short in COMPACT_HEADERS.items():   # the note names the columns shown
            note = note.replace(long, short)
        if moved:   # 'x best' is not shown: say where it is, and name it as it is there
            note = note.replace("x best is", "best/floor (in -o table.csv or a wider "
                                             "terminal) is")
        caption = escape(note)
    table = Table(title=f"{full.title} (FLOP, bytes: -o table.csv or a wider terminal)",
                  title_justify="left", caption=caption, caption_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  padding=0)   # the box puts one space between columns
    cols = [c for c in full.columns if c.header in names]
    for c in cols:   # only the flags wrap (one flag a line)
        table.add_column(names[str(c.header)], justify=c.justify, no_wrap=c.header != "flags")
    for i in range(full.row_count):
        table.add_row(*(list(c.cells)[i] for c in cols))
    return table


def _fits(table, width: int) -> bool:
    """Whether `table` prints within `width` columns with no cell cut short ('…') or any
    line longer: the flags may fold, nothing else."""
    from io import StringIO

    from rich.console import Console

    probe = Console(width=width, record=True, file=StringIO(), color_system=None,
                    highlight=False)
    probe.print(table)
    lines = probe.export_text().splitlines()
    return all(len(line) <= width and "…" not in line for line in lines)


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
        out.print(f"wrote {output}")
