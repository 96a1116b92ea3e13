"""rooflab probe — measure this machine's ceilings and save them as a profile."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from ..errors import InputError
from ..units import fmt_fraction

HELP = """Measure this machine's roofline: bandwidth per memory level (L1, L2, L3, DRAM),
peak FLOP/s per precision, an intensity sweep and the dispatch overhead; print the record
table (nominal vs measured, ridge points) and save the profile (-o profile.json).

  rooflab probe --quick -o profile.json             (5-25 s when quiet)

  rooflab probe -o profile.json --chart roof.png    (about 30 s, with a chart)

  rooflab probe --full --threads 1 --json > one-core.json

  rooflab probe --threads 1,2,all -o me.json        (thread scaling table)

  rooflab probe --cpus 0-3 --threads 1,2,4          (run on CPUs 0-3 only)

  rooflab probe --device cuda:0 -o h200.json        (the GPU probe)

  rooflab probe --device torch-cpu --quick          (dry run of the GPU probe)

  rooflab probe --comm --nproc 2                    (the communication probe)

Use the saved profile with the other verbs: rooflab plot --on profile.json ...

Nothing is written when the probe is interrupted (Ctrl-C)."""

CHART_SUFFIXES = (".png", ".svg")


def parse_device_option(text: str) -> str:
    """probe's --device text -> 'cpu', 'cuda', 'cuda:N' or 'torch-cpu' (which probe runs
    where); probe.gpu.identity.parse_torch_device then reads a GPU probe's torch device."""
    t = text.strip().lower()
    if t in ("cpu", "torch-cpu") or re.fullmatch(r"cuda(:\d+)?", t):
        return t
    # ROCm's PyTorch names an AMD GPU `cuda` too (HIP behind torch.cuda): hip/rocm users
    # are told so rather than refused alone (review s28 R4 F15)
    amd = ("; on ROCm, PyTorch names an AMD GPU `cuda` too: use --device cuda:0"
           if re.match(r"(hip|rocm|amd)", t) else "")
    raise InputError(f"--device must be cpu, cuda, cuda:N (e.g. cuda:0) or torch-cpu (the GPU "
                     f"probe's code on PyTorch's CPU device, a dry run); got '{text}'{amd}")


def mode_of(quick: bool, full: bool) -> str:
    if quick and full:
        raise InputError("choose one of --quick and --full, not both")
    return "quick" if quick else "full" if full else "default"


def split_outputs(output: str | None, chart: str | None) -> tuple[str | None, str | None]:
    """-o FILE by suffix: .json is the profile, .png/.svg a chart (as --chart)."""
    from .common import refuse_directory

    profile_path = None
    for flag, path, example in (("-o", output, "profile.json"), ("--chart", chart, "roof.png")):
        refuse_directory(flag, path, example)
    if output:
        suffix = Path(output).suffix.lower()
        if suffix in CHART_SUFFIXES:
            if chart:
                raise InputError(f"-o {output} is a chart and --chart {chart} another; "
                                 f"give one chart path")
            chart = output
        elif suffix == ".json":
            profile_path = output
        else:
            raise InputError(f"-o must end in .json (profile), .png or .svg (chart); "
                             f"got '{output}'")
    if chart and Path(chart).suffix.lower() not in CHART_SUFFIXES:
        raise InputError(f"--chart must end in .png or .svg; got '{chart}'")
    return profile_path, chart


def run_probe(device: str, mode: str, threads, progress, cpus=None):
    if device == "cpu":
        from ..probe.cpu import probe_cpu

        return probe_cpu(mode, threads, progress, cpus=cpus)
    if threads is not None:
        raise InputError("--threads applies to the CPU probe only")
    from ..probe.gpu import probe_gpu

    # torch-cpu: the GPU probe's own code on PyTorch's CPU device (a dry run of --device cuda).
    return probe_gpu("cpu" if device == "torch-cpu" else device, mode, progress)


def chart_profile(profile, path: str) -> None:
    from ..probe.cpu import sweep_points
    from ..report.chart import plot_roofline, save_figure

    # The GPU probe keeps no intensity sweep; the CPU one says its precision (fp64).
    sweep = sweep_points(profile) if "intensity_sweep" in profile.extras else ()
    precision = (profile.extras.get("intensity_sweep") or {}).get("precision")
    display = plot_roofline(list(profile.roofs), sweep=sweep, sweep_precision=precision,
                            title=f"{profile.name}: measured (solid) vs nominal (dashed)")
    save_figure(display, path)


def _with_progress(fn, quiet: bool):
    from .common import progress_bar

    with progress_bar("probe", quiet) as update:
        return fn(update)


def register(app) -> None:
    @app.command("probe", help=HELP)
    def probe(
        quick: bool = typer.Option(False, "--quick", help="Coarse sweep, short samples. "
                                   "CPU: about 10 s, no low-precision (torch) peaks. GPU: "
                                   "under 20 s, matmul 4096/8192 in every precision, no L1 "
                                   "sweep."),
        full: bool = typer.Option(False, "--full", help="Minutes: fine sweep, long samples."),
        threads: str = typer.Option(None, "--threads", "-t",
                                    help="Threads for the CPU kernels (default: all CPUs); "
                                    "several counts (1,2,4,all) measure thread scaling."),
        cpus: str = typer.Option(None, "--cpus", help="Run on these CPUs only, e.g. 0-3,8 "
                                 "(os.sched_setaffinity before numba starts its threads)."),
        output: str = typer.Option(None, "--output", "-o",
                                   help="Save the profile (.json) or a chart (.png/.svg); "
                                   "--comm saves to rooflab-comm-profile.json without it."),
        json_out: bool = typer.Option(False, "--json", help="Print the profile JSON to stdout "
                                      "instead of the table."),
        chart: str = typer.Option(None, "--chart", help="Write a chart (.png/.svg): both "
                                  "roofs and the intensity sweep."),
        device: str = typer.Option("cpu", "--device", help="cpu (default), cuda, cuda:N, or "
                                    "torch-cpu (dry run of the GPU probe)."),
        comm: bool = typer.Option(False, "--comm", help="Probe communication "
                                  "(torch.distributed) instead of compute and memory."),
        nproc: int = typer.Option(None, "--nproc", min=1, help="Local ranks for --comm "
                                  "(default: one per GPU when there are two or more, else "
                                  "2; at most one per CPU)."),
        timeout: float = typer.Option(None, "--timeout", metavar="S", help="--comm: a rank "
                                      "that makes no progress (reaches no new stage, or "
                                      "waits in one collective) for S seconds stops the "
                                      "probe; a hang detector, not a limit on the whole "
                                      "run (default: ROOFLAB_COMM_TIMEOUT, else the mode's "
                                      "90 s to 60 min)."),
        quiet: bool = typer.Option(False, "--quiet", "-q",
                                   help="No progress bar, notes or warnings."),
    ) -> None:
        mode = mode_of(quick, full)
        if comm:
            _check_comm_flags(threads, chart, device, cpus)
            from .probe_comm import run as comm_run

            raise typer.Exit(comm_run(nproc, mode, output, json_out, timeout))
        if nproc is not None or timeout is not None:
            raise InputError(f"{'--nproc' if nproc is not None else '--timeout'} applies to "
                             f"--comm only")
        dev = parse_device_option(device)
        profile_path, chart_path = split_outputs(output, chart)
        counts, cpu_list = _threads_and_cpus(dev, threads, cpus)
        _preflight(dev, profile_path, chart_path, counts)
        if dev == "cpu":
            warn_if_busy(counts)
        elif dev.startswith("cuda"):
            warn_if_gpu_busy(dev)
        try:
            # cpus only when given: run_probe(device, mode, threads, progress) stays callable
            # as before (tests and callers replace it with four-argument functions)
            extra = {"cpus": cpu_list} if cpu_list is not None else {}
            profile = _with_progress(lambda p: run_probe(dev, mode, counts, p, **extra), quiet)
        except KeyboardInterrupt:
            # cli.main says `error: interrupted; nothing was written` for exit 130.
            raise typer.Exit(130) from None
        from .common import with_rooflab_version

        profile = with_rooflab_version(profile)
        if lost := (profile.extras.get("gpu") or {}).get("context_lost"):
            from .common import warn

            warn(lost["message"])   # which stage, and how to run without it
        # Written only now that the probe has finished (atomically): Ctrl-C leaves nothing.
        if profile_path:
            from ..hardware.profile import save_profile

            save_profile(profile_path, profile)
        if chart_path:
            chart_profile(profile, chart_path)
        if json_out:
            from ..hardware.profile import profile_to_dict
            from .common import emit_json

            emit_json(profile_to_dict(profile))
            warn_load_notes(profile)
            return
        _print_profile(profile, profile_path, chart_path, output)


def warn_if_busy(threads=None) -> None:
    """Before the long work: say on stderr when other work already keeps the CPUs this
    process may run on busy (a short /proc/stat sample over its affinity mask, the threads
    a cgroup quota allows; the load average where there is no /proc/stat), so the user can
    stop (Ctrl-C) and retry on a quiet machine (review s24 r2 F10). `threads`: --threads
    as parsed (None, a count, 'all' or a tuple of them): CPUs the probe's largest team
    leaves free may be busy (start_threads). Nothing is sampled under -q, which would
    drop the warning (s24 h1 F3)."""
    from .common import is_quiet, warn

    if is_quiet():
        return
    from ..probe.cpu.flags import busy_start_note
    from ..probe.cpu.load import start_sample

    message = busy_start_note(start_sample(threads=start_threads(threads)))
    if message:
        warn(message)


def start_threads(threads=None) -> int:
    """The most threads the CPU probe will run for --threads `threads`: the largest count
    given, 'all' (and None) as probe_cpu resolves it, the CPUs this process may use
    (mask, CPU quota) within numba's pool (s24 h1 F2: `--threads 1`, or
    NUMBA_NUM_THREADS=1, was warned about CPUs it left free)."""
    from ..probe.cpus import usable_cpus

    asked = threads if isinstance(threads, (tuple, list)) else (threads,)
    counts = [int(c) for c in asked if c is not None and c != "all"]
    if len(counts) < len(asked):   # None or 'all'
        pool = _numba_pool()
        counts.append(min(usable_cpus(), pool) if pool else usable_cpus())
    return max(counts)


def _numba_pool() -> int | None:
    """numba's pool size without importing numba (probe --comm and demo sample before it
    is imported; ~0.5 s): numba.config's where it is loaded, else NUMBA_NUM_THREADS, which
    sizes the pool at import (unset: the mask, which usable_cpus counts already)."""
    import os
    import sys

    numba = sys.modules.get("numba")
    if numba is not None:
        return int(numba.config.NUMBA_NUM_THREADS)
    try:
        return max(0, int(os.environ.get("NUMBA_NUM_THREADS", "0"))) or None
    except ValueError:   # numba ignores a value it cannot read
        return None


def warn_if_gpu_busy(device: str) -> None:
    """Before the long work: say on stderr when other processes use the GPU or it is
    running kernels (NVML, read only), as warn_if_busy does for the CPU."""
    from ..errors import require
    from ..probe.gpu.identity import open_device
    from ..probe.gpu.load import busy_warning, snapshot
    from .common import warn

    torch = require("torch", "gpu", "the GPU probe")
    dev = open_device(torch, device)
    message = busy_warning(snapshot(torch, dev), str(dev))
    if message:
        warn(message)


def warn_load_notes(profile) -> None:
    """With --json the notes are not printed: say a busy machine (or GPU), and measured
    ceilings far below nominal, on stderr (`bench`'s own quick probe says them too)."""
    from .common import warn

    for key in ("machine_load", "device_load", "below_nominal"):
        for note in (profile.extras.get(key) or {}).get("notes") or ():
            warn(note)


def _check_comm_flags(threads, chart: str | None, device: str, cpus: str | None = None
                      ) -> None:
    """--comm's ranks pick their devices and probe themselves, and draw no chart."""
    ignored = [flag for flag, given in (("--threads", threads is not None),
                                        ("--cpus", cpus is not None),
                                        ("--chart", chart is not None),
                                        ("--device", device != "cpu")) if given]
    if ignored:
        verb = "does" if len(ignored) == 1 else "do"
        raise InputError(f"{', '.join(ignored)} {verb} not apply to --comm (each rank "
                         f"probes its own device with all its threads; the result "
                         f"is a cluster profile, -o FILE.json); drop "
                         f"{' and '.join(ignored)}")


def _threads_and_cpus(dev: str, threads: str | None, cpus: str | None):
    """--threads as a count or a list (1,2,all), and --cpus checked and applied now: the
    mask must be set before numba starts its pool (and before it is imported, so its pool
    size, NUMBA_NUM_THREADS, counts these CPUs only)."""
    from ..probe.cpu import affinity as aff

    if dev != "cpu":
        for flag, given in (("--threads", threads), ("--cpus", cpus)):
            if given is not None:
                raise InputError(f"{flag} applies to the CPU probe only (--device cpu); "
                                 f"drop it")
    cpu_list = None
    if cpus is not None:
        cpu_list = aff.parse_cpu_list(cpus)
        aff.check_cpus(cpu_list, aff.allowed_cpus())
    resolved = None
    if threads is not None:
        parsed = aff.parse_thread_counts(threads)
        # 'all' stays a word: probe_cpu resolves it within the CPU mask, a CPU quota and
        # numba's pool (NUMBA_NUM_THREADS), and says so where the pool is the limit
        numbers = tuple(sorted({int(c) for c in parsed if c != aff.ALL}))
        resolved = numbers + ((aff.ALL,) if aff.ALL in parsed else ())
        if cpu_list is not None and numbers and numbers[-1] > len(cpu_list):
            raise InputError(aff.too_many_threads(numbers[-1], cpu_list))
    if cpu_list is not None:   # only once every flag is known good
        aff.pin(cpu_list)
    if resolved is None:
        return None, cpu_list
    return (resolved[0] if len(resolved) == 1 else resolved), cpu_list


def _preflight(dev: str, profile_path: str | None, chart_path: str | None,
               threads=None) -> None:
    """What can fail is said now, before the busy warning, the progress bar and the
    measurement: an unwritable output, --threads off the CPU or beyond numba's pool, a
    missing extra, no visible GPU."""
    from ..errors import require
    from ..files import check_writable

    if threads is not None and dev != "cpu":
        raise InputError("--threads applies to the CPU probe only (--device cpu); drop it")

    for path in (profile_path, chart_path):
        if path:
            check_writable(path)
    # torch-cpu needs only PyTorch: point at [torch], not [gpu] (triton, nvidia-ml-py and,
    # by default, a CUDA build of torch that a CPU-only machine cannot use).
    mod = require(*(("numba", "cpu", "the CPU probe") if dev == "cpu"
                    else ("torch", "torch", "--device torch-cpu, the GPU probe's dry run "
                          "on the CPU") if dev == "torch-cpu"
                    else ("torch", "gpu", "the GPU probe")))
    if dev == "cpu" and threads is not None:
        from ..probe.cpu.runner import check_threads

        for n in (threads if isinstance(threads, tuple) else (threads,)):
            if n != "all":   # within the pool by definition (probe_cpu resolves it)
                check_threads(n, mod.config.NUMBA_NUM_THREADS)
    if dev.startswith("cuda"):
        from ..probe.gpu.identity import open_device

        open_device(mod, dev)


def _print_profile(profile, profile_path: str | None, chart_path: str | None,
                   output: str | None) -> None:
    """The record table, the notes, and what was written (or how to save it)."""
    from ..report.tables import profile_notes, profile_table
    from .common import console, wrote

    out = console()
    out.print(profile_table(profile))
    for note in profile_notes(profile):
        out.print(f"note: {note}")
    _print_scaling(profile)
    # The CPU probe keeps its wall time at the top of extras, the GPU probe under "gpu".
    wall = profile.extras.get("wall_s") or (profile.extras.get("gpu") or {}).get("wall_s")
    saved = [p for p in (profile_path, chart_path) if p]
    parts = [f"probe took {wall:.1f} s"] if wall is not None else []
    if not profile_path:   # the other verbs read a saved profile (--on FILE)
        chart_as_o = output is not None and output == chart_path
        parts.append("profile not saved: add -o profile.json to use it with --on"
                     if not chart_as_o else "profile not saved: give the chart as "
                     f"--chart {chart_path} and -o profile.json to use it with --on")
    if parts:   # paths are text: '-o x[/].json' was markup (s22 r1 F5)
        out.print("; ".join(parts), markup=False)
    for path in saved:   # on stderr, as in every verb (review s22 h1 H2)
        wrote(path)


def scaling_table(scaling):
    """The thread-scaling table (rich) from extras.scaling: DRAM and fp64 per count, per
    thread, and fp64's parallel efficiency; L1/L2/L3 where measured."""
    from rich import box
    from rich.table import Table

    from ..probe.cpu.scaling import scaling_rows

    rows = scaling_rows(scaling)

    def cell(v, key=None, r=None, scale=1e9):
        mark = " !" if r is not None and key in r.noisy else ""
        return "-" if v is None else f"{v / scale:.3g}{mark}"

    caches = [lv for lv in ("l1", "l2", "l3") if any(getattr(r, lv, None) for r in rows)]
    # headers on two lines: nine columns fit in a pipe's 80
    table = Table(title="thread scaling (STREAM triad, FMA kernel; best sample)",
                  title_justify="left", header_style="bold", box=box.SIMPLE_HEAD)
    for h in ["threads", "DRAM\nGB/s", "per\nthread", "fp64\nGFLOP/s", "per\nthread",
              "fp64\neff", *(f"{lv.upper()}\nGB/s" for lv in caches)]:
        table.add_column(h, justify="right", no_wrap=True)
    for r in rows:
        eff = fmt_fraction(r.efficiency)    # None: '-'
        table.add_row(str(r.threads), cell(r.dram, "DRAM", r), cell(r.dram_per_thread),
                      cell(r.fp64, "fp64", r), cell(r.fp64_per_thread), eff,
                      *(cell(getattr(r, lv), lv.upper(), r) for lv in caches))
    return table


def _print_scaling(profile) -> None:
    """After the record table: the scaling table and where DRAM saturates."""
    from ..probe.cpu.scaling import dram_saturation, reference_note, scaling_rows
    from .common import console

    scaling = profile.extras.get("scaling")
    if not scaling:
        return
    out = console()
    out.print(scaling_table(scaling))
    rows = scaling.get("by_threads") or {}
    smallest = min(rows, key=int) if rows else "1"
    roof = profile.measured
    fp64 = roof.find_compute("fp64") if roof is not None else None
    out.print(f"fp64 eff: fp64 per thread / per thread at {smallest} thread"
              f"{'s' if smallest != '1' else ''}; "
              f"{reference_note(scaling, fp64.value if fp64 else None)}; the others use "
              f"the quick timing plans")
    if any(r.noisy for r in scaling_rows(scaling)):
        out.print("!: its samples disagree by more than 5 % or calibration gave up (other "
                  "load); rerun on a quiet machine (extras.scaling keeps the samples)")
    sat = dram_saturation(scaling)
    if sat:
        out.print(sat[1])
