"""The roof `rooflab bench` judges by without --on: a quick probe of the device (the
catalog's nominal roof where numba is missing), its busy-machine notes; with --on, the
probe's load check over bench's own timings (timed_with_load); and the warning when --on
names a roof of another kind than the device the kernels run on."""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingDependency
from ..model.ceiling import Roof


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
        found = _catalog_cpu()
        if found is None:
            raise no_cpu_probe(exc, device) from None
        from .common import warn

        # the install command ends the line: copied from "pip" on, it runs (review s19 r3 F2)
        warn(f"judging by the catalog's nominal roof of {found.name}: {exc}")
        return (found.roof,), None


def _catalog_cpu():
    """The catalog entry naming this host's CPU, or None."""
    from ..hardware.catalog import match_device_name
    from ..hardware.host import detect_host

    return match_device_name(detect_host().cpu_model)


def no_cpu_probe(exc: MissingDependency, device: str = "cpu") -> MissingDependency:
    """The missing-numba error of a bench without --on, with what works instead said
    before the install command, which ends the line (copyable as is: review s19 r3 F2).
    --device torch-cpu: the torch-cpu probe needs only the torch the kernels already use
    (F6)."""
    alternative = "or pass --on PROFILE.json or --on HARDWARE, see `rooflab specs list`"
    if device == "torch-cpu":
        alternative = ("or probe this CPU with torch alone, `rooflab probe --device "
                       "torch-cpu -o tc.json`, then pass --on tc.json; or --on HARDWARE, see "
                       "`rooflab specs list`")
    return MissingDependency(exc.module, exc.extra,
                             f"the CPU probe bench judges by without --on; {alternative}")


def check_cpu_roof() -> None:
    """Before `bench --run` runs the script (minutes, for a real one): raise what
    probe_roofs would raise after it, the CPU probe's missing numba with no catalog roof
    for this CPU (review s19 r3 F3). Not when CUDA is there: the script's kernels may run
    on the GPU, whose probe needs no numba."""
    import importlib.util

    try:
        has_numba = importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):   # None in sys.modules: missing
        has_numba = False
    if has_numba or _catalog_cpu() is not None or _cuda_visible():
        return
    raise no_cpu_probe(MissingDependency("numba", "cpu", "the CPU probe"))


def _cuda_visible() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def say_probe_load(profile) -> None:
    """The quick probe's busy-machine notes (other processes' CPU share, steal), on stderr
    as `rooflab probe --json` says them: they explain a roof that reads low."""
    if profile is not None:
        from .probe import warn_load_notes

        warn_load_notes(profile)


def load_sources():
    """Where bench's load check reads /proc/stat, its own CPU time, the clock and the load
    average: the probe's sources (probe/cpu/load.py); a test replaces this function."""
    from ..probe.cpu.load import LoadSources

    return LoadSources()


# whose CPU time machine_load subtracts from the CPUs' busy time (load.OWN_CPU's words)
OWN_BENCH = "bench's own CPU time (os.times, children included)"


def timed_with_load(work, threads: int | None = None):
    """(work(), record): `work` (bench's timings) between two /proc/stat snapshots, the
    probe's own load check (probe/cpu/load.machine_load). Without --on the quick probe's
    check says a busy machine; with --on nothing did, and a CI run at load 11 read 126-181 %
    of roof with no word (review s21 r7 F8). record: extras.machine_load's shape, its notes
    in bench's words (flags.machine_load_notes). `threads`: the timings' threads, else
    every CPU bench may run on (numpy's BLAS uses them all)."""
    from ..probe.cpu.flags import machine_load_notes
    from ..probe.cpu.load import loadavg_1m, machine_load, snapshot

    sources = load_sources()
    avg = loadavg_1m(sources)
    before = snapshot(sources)
    result = work()
    after = snapshot(sources)
    cpus = len(sources.affinity() or ()) or sources.machine_cpus
    load = machine_load(before, after, threads or cpus, avg, sources, own_what=OWN_BENCH)
    notes = machine_load_notes(load, what="bench", figures="timed kernels", low="read slow")
    return result, load.to_dict() | {"notes": notes}


def with_load(kernels, record: dict | None) -> tuple:
    """The kernels with meta machine_load (the record of the load while they were timed:
    model/sanity_timing.load_evidence then names it as their noise's cause)."""
    if record is None:
        return tuple(kernels)
    return tuple(k.with_(meta={**dict(k.meta), "machine_load": record}) for k in kernels)


def with_load_notes(analysis, record: dict | None):
    """The analysis with the load record's notes first among its notes (the document's
    `notes`, the table's `note:` lines)."""
    if not record or not record.get("notes"):
        return analysis
    from dataclasses import replace

    return replace(analysis, notes=(*record["notes"], *analysis.notes))


def say_timing_load(record: dict | None) -> None:
    """The load record's notes as warnings on stderr (-q drops them), as
    say_probe_load says the quick probe's."""
    if record:
        from types import SimpleNamespace

        from .probe import warn_load_notes

        warn_load_notes(SimpleNamespace(extras={"machine_load": record}))


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
