"""Nsight Compute files (CSV pages and .ncu-rep reports) -> one ProfileImport.

With several files, each file is one step of an optimisation sequence (its stem, e.g.
'output3', goes into each kernel's meta as `step`, with `step_index` in command-line order),
so a chart can join the steps as a trajectory. A file with nothing usable is an error when
it is the only one; among several it is reported (a failed launch such as the NERSC GPP
`output8.csv`) and the others are used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import ParseError
from .aggregate import Launch, group_kernel, group_launches, sort_by_time
from .kernel_names import display_names, step_labels
from .ncu_metrics import (
    CLOCK,
    FP_OPS,
    NO_TIME_NOTE,
    derived_peaks,
    rates_to_totals,
    recorded_peaks,
)
from .profile_import import ProfileImport, RecordedPeaks, held_notes
from .skips import Skip, SkipLog

Progress = Callable[[str, float], None]


def read_launches(path: str, log: SkipLog) -> tuple[tuple[Launch, ...], tuple[str, ...]]:
    """Launches of one file (by suffix: .ncu-rep, else CSV) and the profiler's own errors."""
    if path.endswith(".ncu-rep"):
        from .ncu_rep import read_ncu_rep

        return read_ncu_rep(path, log), ()
    from .ncu_csv import read_ncu_csv

    data = read_ncu_csv(path, log)
    return _with_totals(data.launches), data.profiler_errors


_RATE_SUFFIXES = (".per_second", ".per_cycle_elapsed")


def _with_totals(launches: tuple[Launch, ...]) -> tuple[Launch, ...]:
    """CSV launches whose counts were collected as rates get totals (rate x time).

    NVIDIA's nvprof-to-ncu metric table maps dram_read_throughput to
    dram__bytes_read.sum.per_second (docs.nvidia.com/nsight-compute/NsightComputeCli,
    "Metric Comparison"), so `--metrics dram__bytes_read.sum.per_second,...` CSVs are common;
    rebuilt as for full-set reports (ncu_metrics.rates_to_totals). Launches without a rate
    metric are passed through untouched (the common, 100,000-launch case stays cheap)."""
    rates = {n for n in set().union(*(la.metrics.keys() for la in launches))
             if n.endswith(_RATE_SUFFIXES) and not n.endswith("cycles_elapsed.avg.per_second")}
    if not rates:
        return launches
    return tuple(replace(la, metrics=rates_to_totals(la.metrics))
                 if not rates.isdisjoint(la.metrics) else la for la in launches)


def _file_groups(path: str, log: SkipLog, per_launch: bool = False):
    launches, errors = read_launches(path, log)
    groups = group_launches(launches, log, per_launch)
    if not groups:
        said = f"; the profiler said: {'; '.join(errors)}" if errors else ""
        skips = log.skips()
        reasons = [s.reason for s in skips]
        # where the first reason was met, so the user can open the file at that line
        at = f"line {skips[0].line}: " if skips and skips[0].line is not None else ""
        why = f" ({at}{reasons[0]})" if len(reasons) == 1 else (
            f" ({len(reasons)} rows/launches skipped, first at {at}{reasons[0]})"
            if reasons else "")
        hint = ""
        if any("is not used by rooflab" in r for r in reasons) and \
                all(not la.metrics for la in launches):
            # ncu's default ('basic') set has no FLOP counts, in its CSV or its .ncu-rep:
            # the roofline sections belong to the roofline, detailed and full sets
            # (review s26 r2 F7: "pass the .ncu-rep itself" could not work)
            hint = ("; the file holds none of the metrics rooflab reads (section pages use "
                    "display names such as 'Duration': ncu's default set, which counts no "
                    "FLOP, in its .ncu-rep neither): re-profile with `ncu --set roofline` "
                    "(or `--set full`) and pass that .ncu-rep (or its `ncu --import "
                    "r.ncu-rep --csv --page raw` export), or collect the metrics listed in "
                    "`rooflab ncu --help`")
        if not launches and not reasons:   # a header and nothing after it (s36 B)
            why = (": no row after the header (the file ends there: cut short? or ncu "
                   "profiled no launch: check --kernel-name, --launch-skip, "
                   "--launch-count)")
        raise ParseError(f"no usable kernel launch{why}{said}{hint}", path=path)
    return launches, groups


def load_ncu(paths: Sequence[str], progress: Progress | None = None,
             per_launch: bool = False) -> ProfileImport:
    """Kernels of every file, sorted by time; steps in meta when there are several files.
    per_launch: one kernel per launch, named `name #ID` (ncu's launch ID), not one per name
    with its launches summed."""
    if not paths:
        raise ParseError("no files given; pass one or more ncu CSV or .ncu-rep files")
    several = len(paths) > 1
    pairs = []
    skips: list[Skip] = []
    failed: list[Skip] = []
    devices: list[str] = []
    peaks: RecordedPeaks | None = None
    used: list[str] = []
    clocks: list[tuple[float, float]] = []
    labels = step_labels(paths)
    for i, path in enumerate(paths):
        if progress:
            progress(f"reading {Path(path).name}", i / len(paths))
        log = SkipLog(path)
        try:
            launches, groups = _file_groups(path, log, per_launch)
        except ParseError as exc:
            if not several:
                raise
            failed.append(Skip(path, None, str(exc).removeprefix(f"{path}: ")))
            continue
        skips.extend(log.skips())
        used.append(path)
        step = labels[i] if several else None
        pairs += [(g, step, len(used) - 1) for g in groups]
        for launch in launches:
            if launch.device and not launch.device.isdigit() and launch.device not in devices:
                devices.append(launch.device)
        if peaks is None:
            peaks = _peaks(launches, path)
        clocks += _clocks(groups)
    if not pairs:
        raise ParseError("no file has a usable kernel launch: "
                         + "; ".join(str(s) for s in failed))
    names = display_names([(g, step) for g, step, _ in pairs])
    if per_launch:
        names = [f"{name} #{g.first.id}" for (g, _, _), name in zip(pairs, names, strict=True)]
    kernels = [group_kernel(g, name, step, idx if step is not None else None)
               for (g, step, idx), name in zip(pairs, names, strict=True)]
    if progress:
        progress("done", 1.0)
    untimed = [k.name for k in kernels if k.seconds is None]
    notes = (f"{len(untimed)} of {len(kernels)} kernel(s) untimed ({', '.join(untimed[:3])}"
             f"{', ...' if len(untimed) > 3 else ''}): {NO_TIME_NOTE}",) if untimed else ()
    notes += _partial_flop_notes(kernels)
    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         failed=tuple(failed), devices=tuple(devices), peaks=peaks,
                         files=tuple(used), notes=notes, clock_hz=_clock(clocks))


def _partial_flop_notes(kernels) -> tuple[str, ...]:
    """Kernel notes that say a precision's FLOP came from some of its add/mul/fma metrics
    only (ncu_flop._partial_note), once each with the kernels they hold for: FLOP that
    may read low belong on screen, not only in the JSON's meta."""
    starts = tuple(f"{p} FLOP from " for p in FP_OPS)
    return held_notes(kernels, keep=lambda note: note.startswith(starts))


def _clocks(groups) -> list[tuple[float, float]]:
    """(SM clock in Hz, seconds) of each kernel: its first launch's clock (ncu locks it, so
    the launches agree) with the kernel's total time; per kernel, not per launch, to keep a
    100,000-launch file cheap."""
    out = []
    for g in groups:
        clock, seconds = g.first.metrics.get(CLOCK), sum(g.samples)
        if clock and clock == clock and seconds > 0:
            out.append((clock, seconds))
    return out


def _clock(clocks: Sequence[tuple[float, float]]) -> float | None:
    """The time-weighted mean SM clock the kernels ran at (ncu locks it, so the launches
    of one run agree), or None when no launch recorded it."""
    from .profile_checks import one_clock

    total = sum(t for _, t in clocks)
    if not one_clock([c for c, _ in clocks]):
        return None   # no blend of clocks none ran at (profile_checks.mixed_clocks)
    return sum(c * t for c, t in clocks) / total if total > 0 else None


def _sm_clock(metrics) -> float | None:
    """The SM clock a launch recorded (Hz), which its compute peaks were multiplied by."""
    clock = metrics.get(CLOCK)
    return float(clock) if clock and clock == clock and clock > 0 else None


def _peaks(launches: Sequence[Launch], path: str) -> RecordedPeaks | None:
    # Peaks are properties of the device, recorded with every launch of a full-set report:
    # the first launches are enough (a --metrics CSV of 100,000 launches has none).
    for launch in launches[:3]:
        compute, memory = recorded_peaks(launch.metrics)
        if compute or memory:
            derived = derived_peaks(launch.metrics, compute)
            return RecordedPeaks({**compute, **{k: v for k, (v, _) in derived.items()}},
                                 memory, path, launch.device,
                                 methods={k: how for k, (_, how) in derived.items()},
                                 clock_hz=_sm_clock(launch.metrics))
    return None
