"""`rooflab bench --run script.py`: the kernels a user's script measures with
rooflab.measure, judged by --on's roof or a quick probe of the device they ran on."""

from __future__ import annotations

import warnings

from ..errors import InputError
from ..measure_checks import OverlapWarning
from ..measure_overlap import overlap_note
from .bench_output import check_bench_output
from .bench_roofs import (
    check_cpu_roof,
    other_kind_warning,
    probe_roofs,
    say_probe_load,
    say_timing_load,
    timed_with_load,
    with_load,
    with_load_notes,
)
from .common import progress_bar, say_line


def check_run_options(run: str, zoo_options: list[str]) -> None:
    """--only, --list, --quick and --device choose and time the reference kernels; the
    script chooses its own kernels, their timing and their device."""
    if zoo_options:
        named = " and ".join(zoo_options)
        raise InputError(f"--run {run} times your script's own kernels; {named} "
                         f"{'is an option' if len(zoo_options) == 1 else 'are options'} "
                         f"of the reference kernels (the zoo), so they do not mix with "
                         f"--run: drop {named}, or run the zoo without --run")


def time_script(script: str, args: list[str], *, on: str | None, output: str | None,
                json_out: bool, probe):
    """(roofs, kernels, analysis) of the script's measured kernels, floor-checked, on --on's
    roofs, else on `probe(device, progress)`'s (bench_roofs.probe_roofs) for the device
    they ran on, as the zoo's bench does."""
    from ..bench.check import check_floors
    from ..bench.user_script import kernels_device, run_script
    from ..bench.zoo import llc_bytes
    from ..model.analysis import analyze

    if output:   # fail before running the script, not after
        check_bench_output(output, [on, script])
    if on is not None:   # a bad --on fails before the script runs, too
        from .inputs import resolve_on

        roofs = resolve_on(on)
    elif probe is probe_roofs:   # a roof it cannot give (no numba, no catalog CPU): now, too
        from ..bench.script_run import check_script

        check_script(script)   # a wrong path is said first, as with a roof
        check_cpu_roof()
    record = None
    if on is None:
        kernels = _quiet_overlap(run_script, script, args, quiet_stdout=json_out)
    else:   # judged by a given roof: the probe's load check over the script (F8, s21 r7)
        kernels, record = timed_with_load(
            lambda: _quiet_overlap(run_script, script, args, quiet_stdout=json_out))
    for k in kernels:   # in rooflab's voice, once per kernel, under the name shown
        said = overlap_note(k)
        if said:
            say_line(f"warning: {said}")
    device, mixed = kernels_device(kernels)
    notice = mixed or (other_kind_warning(on, device, roofs) if on is not None else "")
    if notice:
        say_line(notice)
    if on is None:
        with progress_bar("probe") as update:
            roofs, profile = probe(device, update)
        say_probe_load(profile)
    elif device.startswith("cuda"):   # a GPU's kernels: the CPUs' load does not judge them
        record = None
    elif json_out:   # the table prints the analysis' notes; --json only on stderr
        say_timing_load(record)
    kernels = with_load(check_floors(roofs[0], kernels, llc_bytes()), record)
    return roofs, kernels, with_load_notes(analyze(roofs[0], kernels), record)


def _quiet_overlap(run, *args, **kwargs):
    """run(*args, **kwargs) with no OverlapWarning shown: a decorated function's calls that
    ran at once in several threads were said as Python's `file:line: TimingWarning:` from
    rooflab's own measure_collect.py (review s26), and again at each `fn.kernel` the
    script read; time_script says it once per kernel, as a `warning:` line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OverlapWarning)
        return run(*args, **kwargs)
