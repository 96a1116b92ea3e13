"""`rooflab bench` on the reference kernel zoo: its list, the kernels --only names, and
their timing on the device, judged by --on's roof or a quick probe's."""

from __future__ import annotations

import typer

from ..errors import InputError
from .bench_output import emit_document
from .bench_roofs import (
    other_kind_warning,
    say_probe_load,
    say_timing_load,
    timed_with_load,
    with_load,
    with_load_notes,
)
from .common import progress_bar, say_line


def list_kernels(json_out: bool) -> None:
    """--list: the zoo's kernel names."""
    from ..bench.zoo import kernel_names

    if json_out:
        emit_document({"kernels": list(kernel_names())})
    else:
        typer.echo("\n".join(kernel_names()))


def selected_names(device: str, only: str | None) -> list[str] | None:
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


def time_zoo(device: str, names: list[str] | None, *, on: str | None, quick: bool, probe,
             samples: int | None = None, json_out: bool = False):
    """(roofs, kernels, analysis) of the zoo's kernels `names` timed on `device` (at least
    `samples` samples each), judged by --on's roofs, else by `probe(device, progress)`'s
    (bench_roofs.probe_roofs). With --on on the CPU the timings run under the probe's load
    check (bench_roofs.timed_with_load): each kernel's meta machine_load, the analysis'
    notes, and with --json (no table to print the notes) warnings on stderr."""
    from ..bench.zoo import run_zoo
    from ..measuring import resolve_plan
    from ..model.analysis import analyze

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
    record = None
    with progress_bar("probe" if on is None else "bench") as update:
        if on is None:
            roofs, profile = probe(device.lower(), lambda s, f: update(s, 0.5 * f))
        scale = 0.5 if on is None else 1.0
        plan = resolve_plan("quick" if quick else None).with_min_samples(samples)

        def timings():
            return run_zoo(roofs[0], names, device=device, plan=plan,
                           progress=lambda s, f: update(s, 1 - scale + scale * f))

        # a GPU's kernels: the CPUs' load is not what slows them (the GPU probe's
        # device_load is its check)
        if on is not None and not device.lower().startswith("cuda"):
            kernels, record = timed_with_load(timings)
        else:
            kernels = timings()
    if on is None:
        say_probe_load(profile)
    elif json_out:
        say_timing_load(record)
    kernels = with_load(kernels, record)
    return roofs, kernels, with_load_notes(analyze(roofs[0], kernels), record)
