"""What a profiler import gives (kernels, skips, device names, recorded peaks) and which roof
to judge it by.

The roof, in order (issue 5): the one the user named with --on (a profile file or a catalog
name); else the catalog entry matched by the device name the profiler recorded; else the
peaks the profiler itself recorded (ncu's `.peak_sustained` metrics); else, so that AI and
achieved performance can still be shown, an envelope of the best the kernels themselves
reached, clearly labelled as a lower bound and not a machine's roof.
The envelope is built in ingest/profile_envelope.py; the checks that the roof fits the
profile (device, compute capability, clock) are in ingest/profile_checks.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model.ceiling import Ceiling, Roof
from ..model.dies import kind_words, recorded_roof
from ..model.kernel import Kernel
from .profile_checks import (
    _other_device,
    at_recorded_clock,
    cc_suggestion,
    clock_mismatch,
    device_mismatch,
    recorded_cc,
    split_boost,
)
from .profile_envelope import ON_CPU_HINT, envelope_roof, envelope_words, on_cpu
from .skips import Skip


@dataclass(frozen=True)
class RecordedPeaks:
    """Peaks a profiler recorded: FLOP/s by precision ('fp16:tensor' for tensor units) and B/s
    by level, from one file. methods: how a compute peak was got where it is not the
    profiler's peak rate x its clock (PEAK_METHOD): an fp32 peak derived from the fp64 one
    and the device's single/double ratio (ncu_metrics.derived_peaks)."""

    compute: Mapping[str, float]
    memory: Mapping[str, float]
    path: str
    device: str = ""
    methods: Mapping[str, str] = field(default_factory=dict)
    # the SM clock the compute peaks were multiplied by (the launch's
    # sm__cycles_elapsed.avg.per_second), where recorded
    clock_hz: float | None = None


@dataclass(frozen=True)
class RecordedDevice:
    """What a profiler recorded of one device besides its name (torch traces'
    deviceProperties: totalGlobalMem, computeMajor.computeMinor)."""

    name: str
    memory_bytes: float | None = None
    cc: str | None = None


@dataclass(frozen=True)
class ProfileImport:
    """Kernels from one or more profiler files, longest total time first."""

    kernels: tuple[Kernel, ...]
    skips: tuple[Skip, ...] = ()
    failed: tuple[Skip, ...] = ()       # whole files with nothing usable
    devices: tuple[str, ...] = ()       # device names the files recorded
    peaks: RecordedPeaks | None = None
    files: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    device_details: tuple[RecordedDevice, ...] = ()   # memory and cc, where recorded
    # rocprof-compute's roofline.csv in the workload folder read: its benchmarked peaks
    roof_file: str = ""
    # the SM clock the kernels ran at (ncu's sm__cycles_elapsed.avg.per_second, weighted by
    # time), where recorded: a catalog roof assumes the boost clock
    clock_hz: float | None = None


@dataclass(frozen=True)
class RoofChoice:
    roof: Roof
    source: str      # one line saying where the roof came from


PEAK_METHOD = "peak_sustained x clock (ncu)"


# The SM clock a profiler's compute peaks hold at, as peaks_roof writes it into the roof's
# note and its compute ceilings' sources, and profiled_clock_hz reads it back (the chart's
# legend names it: report/chart_clock; a roof saved to JSON and given to --on keeps it).
PROFILED_CLOCK = "at SM {ghz:.2f} GHz"
_PROFILED_CLOCK_RE = re.compile(r"\bat SM ([0-9]+(?:\.[0-9]+)?) GHz")


def peaks_roof(peaks: RecordedPeaks, clock_hz: float | None = None) -> Roof:
    """A roof from the peaks a profiler recorded (at the clock it profiled at). clock_hz:
    the SM clock the kernels ran at (ProfileImport.clock_hz), stated on the roof where the
    peaks do not record their own (RecordedPeaks.clock_hz), so a reader need not re-derive
    it from the fp32 peak and the SM count (review s22 f1)."""
    src = f"peaks recorded by the profiler in {peaks.path}"
    hz = peaks.clock_hz or clock_hz
    at = " " + PROFILED_CLOCK.format(ghz=hz / 1e9) if hz and hz > 0 else ""
    compute = []
    for key, value in peaks.compute.items():
        precision, _, unit = key.partition(":")
        # a compute peak is per-SM-cycle rate x the SM clock: its source says which clock
        compute.append(Ceiling(value=value, precision=precision, unit=unit or "vector",
                               provenance="derived", source=src + at,
                               method=peaks.methods.get(key, PEAK_METHOD)))
    # (memory peaks are per-cycle rates x their own unit's clock: DRAM's, L2's; not the SM's)
    memory = [Ceiling(value=v, level=level, provenance="derived", source=src,
                      method=PEAK_METHOD) for level, v in peaks.memory.items()]
    name = f"{peaks.device or 'device'} (profiler peaks)"
    profiled = f"ncu profiled {at.strip()} (it locks clocks to base by default)" if at else \
        "ncu locks clocks to base by default"
    # Neither datasheet nor our own measurement: the profiler's peak rates x its clock.
    return Roof(name=name, kind="derived", compute=tuple(compute), memory=tuple(memory),
                source=src, notes=(f"{profiled}, so these peaks sit below boost datasheet "
                                   "values",))


def profiled_clock_hz(roof: Roof) -> float | None:
    """The SM clock peaks_roof recorded on a roof (its note, else a compute ceiling's
    source), in Hz; None for a roof that states none."""
    for text in (*roof.notes, *(c.source for c in roof.compute)):
        m = _PROFILED_CLOCK_RE.search(text or "")
        if m and float(m.group(1)) > 0:
            return float(m.group(1)) * 1e9
    return None


def select_kernels(imp: ProfileImport, kernel: Sequence[str] = (),
                   exclude: Sequence[str] = ()) -> ProfileImport:
    """The import with only the kernels whose name (or full name) matches one of `kernel`
    and none of `exclude` (regular expressions, re.search), as `ncu -k regex:` narrows a
    profile; a bad expression or nothing left is the user's mistake, said so."""
    import re
    from dataclasses import replace

    from ..errors import InputError

    if not kernel and not exclude:
        return imp

    def compiled(option: str, texts: Sequence[str]):
        out = []
        for text in texts:
            try:
                out.append(re.compile(text))
            except re.error as exc:
                raise InputError(f"{option} '{text}' is not a regular expression ({exc}); "
                                 f"e.g. {option} 'gemm|conv'") from None
        return out

    keep, drop = compiled("--kernel", kernel), compiled("--exclude", exclude)

    def hit(pats, k: Kernel) -> bool:
        names = (k.name, str(k.meta.get("full_name") or ""))
        return any(p.search(n) for p in pats for n in names)

    kept = tuple(k for k in imp.kernels
                 if (not keep or hit(keep, k)) and not (drop and hit(drop, k)))
    if not kept:
        names = ", ".join(k.name for k in imp.kernels[:5])
        more = ", ..." if len(imp.kernels) > 5 else ""
        raise InputError(f"--kernel/--exclude left no kernel of {len(imp.kernels)}; the files "
                         f"hold: {names}{more}")
    return replace(imp, kernels=kept)


def with_sm_count(imp: ProfileImport, on: str | None = None) -> ProfileImport:
    """Kernels with a grid, or a GEMM shape (meta shape m and n), but no SM count get the
    count of the device they ran on, from the catalog: the device name the file recorded,
    else the catalog device --on names (a CSV's Device column is often the index '0').
    meta sms_source says which."""
    from dataclasses import replace

    return replace(imp, kernels=kernels_with_sm_count(imp.kernels, on))


def kernels_with_sm_count(kernels: Sequence[Kernel], on: str | None = None
                          ) -> tuple[Kernel, ...]:
    """with_sm_count's kernels, for `rooflab report`'s kernel files too: gemm_1024 (64
    tiles of 128 x 128) judged --on A100 fills 59 % of its 108 SMs, a bound the tensor-core
    check applies only with meta sms (review s21 x2 F9)."""
    from dataclasses import replace
    from pathlib import Path

    from ..model.advice_compute import grid_words
    from ..model.advice_tensor_check import sms_would_bound

    # a shape is only a candidate: sms_would_bound keeps the count where m and n give tiles
    on = split_boost(on)[0] if on else on   # 'RTX 4090@boost' is the RTX 4090
    need = {id(k) for k in kernels if (k.meta.get("grid") or isinstance(k.meta.get("shape"),
                                                                        Mapping))
            and not k.meta.get("sms")}
    if not need:
        return tuple(kernels)
    by_name: dict[str, int | None] = {}

    def sms_of(text: str) -> int | None:
        if text not in by_name:
            try:
                from ..hardware.catalog import lookup, match_device_name

                dev = (match_device_name(text) if not text.isdigit() else None) \
                    or (lookup(text) if text == on else None)
            except Exception:  # noqa: BLE001 — not a catalog name (a profile file): no count
                dev = None
            sms = getattr(dev, "sms", None)
            by_name[text] = sms if isinstance(sms, int) and sms >= 1 else None
        return by_name[text]

    out = []
    for k in kernels:
        if id(k) in need:
            device = str(k.meta.get("device") or "")
            sms, source = (sms_of(device), "catalog: recorded device") if device else (None, "")
            if not sms and on and not Path(on).is_file():
                # a profile or roof file is no catalog name (the fuzzy matcher reads
                # 'a100.json' as the A100 80GB SXM, whatever card the file measured)
                sms, source = sms_of(on), f"catalog: --on {on}"
            meta = {**k.meta, "sms": sms, "sms_source": source}
            # only where it tells something (a grid under two waves, a GEMM whose tiles
            # fill part of the SMs): the JSON of the common, large kernel stays as it was
            if sms and (grid_words(meta) or sms_would_bound(k, sms)):
                k = replace(k, meta=meta)
        out.append(k)
    return tuple(out)


def held_notes(kernels: Sequence[Kernel], keep=None) -> tuple[str, ...]:
    """Each note of the kernels' meta.notes once (those `keep` accepts), with up to three of
    the kernels it holds for: a FLOP source, an n/a counter, an assumed request size change
    the numbers, so they belong on screen, not only in the JSON's meta."""
    held: dict[str, list[str]] = {}
    for k in kernels:
        for note in k.meta.get("notes") or ():
            if keep is None or keep(note):
                held.setdefault(note, []).append(k.name)
    return tuple(f"{', '.join(names[:3])}{', ...' if len(names) > 3 else ''}: {note}"
                 for note, names in held.items())


def launch_notes(kernels: Sequence[Kernel]) -> tuple[str, ...]:
    """'<kernel>: grid of 4 blocks x 256 threads on 24 SMs: 17 % of SMs get a block;
    achieved occupancy 16.5 % ...' for each kernel whose grid is under two waves: ncu's
    launch-statistics rule, the commonest cause of a kernel far under its roof."""
    from ..model.advice_compute import grid_words, latency_detail

    return tuple(f"{k.name}: {latency_detail(k)}" for k in kernels if grid_words(k.meta))


PROFILER_PEAK = "profiler peak: <level metric>.peak_sustained x its clock (ncu)"


def with_recorded_levels(roof: Roof, peaks: RecordedPeaks | None,
                         clock_hz: float | None = None) -> tuple[Roof, str]:
    """The roof --on named, completed by the memory levels it lacks that the file recorded
    peaks for, and a note saying so ('' when nothing was added).

    No catalog entry has an L2 or L1 bandwidth, so `--on <the GPU>` used to drop every L2
    and L1 point of a report that recorded those peaks (review 14d B): the recorded peaks
    fill the gap (provenance derived: the profiler's peak rate per cycle x the clock it ran
    at), and the roof's own ceilings are never replaced."""
    from dataclasses import replace
    from pathlib import Path

    if peaks is None:
        return roof, ""
    have = {c.level for c in roof.memory}
    missing = {lv: v for lv, v in peaks.memory.items() if lv not in have}
    if not missing:
        return roof, ""
    name = Path(peaks.path).name
    other = _other_device(roof, peaks.device)
    if other:
        # another GPU's caches say nothing of this one's: its levels stay missing
        return roof, (f"; note: {name} recorded {'/'.join(missing)} peaks of {peaks.device}, "
                      f"not of {other}: not added to its roof")
    at = f" at {clock_hz / 1e9:.2f} GHz" if clock_hz else ""
    src = f"profiler peak recorded in {peaks.path}{at}"
    added = tuple(Ceiling(value=v, level=lv, provenance="derived", source=src,
                          method=PROFILER_PEAK) for lv, v in missing.items())
    levels = "/".join(missing)
    note = (f"{levels} ceiling{'s' if len(missing) > 1 else ''} from {name}'s recorded peaks"
            f"{at} (profiler peak: {roof.name} lists no {levels} bandwidth; taken at the "
            f"profiled clock, not the roof's own)")
    return replace(roof, memory=roof.memory + added, notes=roof.notes + (note,)), f"; {note}"


def _catalog_match(devices: Sequence[str],
                   details: Sequence[RecordedDevice] = ()) -> tuple[Roof, str] | None:
    try:
        from ..hardware.catalog import match_device_name
    except ImportError:   # the catalog is optional for ingest
        return None
    known = {d.name: d for d in details}
    for text in devices:
        found = _recorded_roof(known[text]) if text in known else None
        if found is not None:
            return found
        device = None if text in known else match_device_name(text)
        if device is not None:
            return device.roof, text
    return None


def _recorded_roof(device: RecordedDevice) -> tuple[Roof, str] | None:
    """The catalog roof of a device whose memory the profiler recorded, as the GPU probe
    finds it (probe.gpu.catalog_match.catalog_roof): one MI250X die ("AMD Instinct MI250X /
    MI250", 64 GiB) gets half the package's figures, not the whole package's."""
    from dataclasses import replace

    from ..probe.gpu.catalog_match import catalog_roof

    roof, _ = catalog_roof(device.name, device.cc, memory_bytes=device.memory_bytes)
    if roof is None:
        return None
    # catalog_roof adds the host link the probe measures; a profile's roof leaves it out,
    # as the catalog's own roofs do
    roof = replace(roof, memory=tuple(c for c in roof.memory if c.level != "PCIe"))
    return roof, device.name


def roof_for_on(on: str) -> Roof:
    """What --on names: a catalog device, a profile/roof JSON, or an .ncu-rep report whose
    recorded peaks become the roof (so CSV steps can be judged at the report's clock), or
    rocprof-compute's roofline.csv, its measured peaks (hardware.resolve reads it)."""
    if not on.lower().endswith(".ncu-rep"):
        from ..hardware.resolve import load_roof

        return load_roof(on)
    from ..errors import ParseError
    from .ncu_files import load_ncu

    imp = load_ncu([on])
    roof = peaks_roof(imp.peaks, imp.clock_hz) if imp.peaks is not None else None
    if roof is None or not (roof.compute and roof.memory):
        raise ParseError("this report records no peak metrics (`…peak_sustained`); profile "
                         "with `--set full` or pass --on a catalog name", path=on)
    return roof


def _above_nominal(roof: Roof) -> str:
    from ..hardware.rocprof_roofline import above_nominal_line

    return above_nominal_line(roof)


def _workload_roof(path: str) -> tuple[Roof, str]:
    from ..errors import ParseError
    from ..hardware.rocprof_roofline import load_roofline_csv

    try:
        roof = load_roofline_csv(path)
    except ParseError as exc:
        raise ParseError(f"{exc} (the workload folder's roofline.csv, used as the roof when "
                         f"no --on is given; pass --on GPU to judge by another roof)") from None
    return roof, (f"roof: {roof.name} ({kind_words(roof)}), from {path} (rocprof-compute's "
                  f"benchmark in the workload folder; --on GPU for another roof)"
                  + _above_nominal(roof))


# The perf/likwid readers' notes on an event group the file lacks (ingest/perf_dram.py,
# perf_flop.py): why a kernel has FLOP or bytes but not both, and which events to add.
_MISSING_COUNTS = ("no memory-controller event", "no FP event")


def _missing_counts(kernels) -> str:
    """"; kernel: <the first note saying which counter group is missing>", or ""."""
    for k in kernels:
        for note in (k.meta or {}).get("notes") or ():
            if isinstance(note, str) and note.startswith(_MISSING_COUNTS):
                return f"; {k.name}: {note}"
    return ""


def clock_judged(roof: Roof, clock_hz: float | None, boost: bool = False
                 ) -> tuple[Roof, str]:
    """A catalog roof at the clock the kernels ran at (profile_checks.at_recorded_clock)
    and its note; with boost (--on 'NAME@boost') the roof as listed, with the note that %
    of roof then reads low (profile_checks.clock_mismatch)."""
    if boost:
        return roof, clock_mismatch(roof, clock_hz)
    return at_recorded_clock(roof, clock_hz)


def choose_roof(on: str | None, imp: ProfileImport) -> RoofChoice:
    """The roof to place the kernels on, and a line saying where it came from. A catalog
    roof's compute ceilings are taken at the SM clock the kernels ran at, unless --on ends
    in '@boost' (clock_judged)."""
    if on:
        spec, boost = split_boost(on)
        roof, die = recorded_roof(roof_for_on(spec))   # one die of an MI250X (dies.py)
        mismatch = device_mismatch(roof, imp.kernels)
        above = _above_nominal(roof)
        # another GPU's roof: the clock ncu recorded is not its clock, so neither scaled
        # nor said (its note told to leave out an '@boost' never given; s33 C)
        roof, clock = clock_judged(roof, None if mismatch else imp.clock_hz, boost)
        roof, added = with_recorded_levels(roof, imp.peaks, imp.clock_hz)
        return RoofChoice(roof, f"roof: {roof.name} ({kind_words(roof)}), from --on {on}"
                                + die + mismatch + above + clock + added)
    if imp.roof_file:
        # rocprof-compute benchmarked this machine into the workload folder: measured peaks
        # of the GPU the counters were taken on come before any catalog entry, as ncu's
        # recorded peaks do
        return RoofChoice(*_workload_roof(imp.roof_file))
    # The profiler's own peaks first: they hold every level (L1, L2, DRAM) and were taken at
    # the clock the kernels ran at (ncu locks clocks near base), so kernel and roof match.
    if imp.peaks is not None and (imp.peaks.compute or imp.peaks.memory):
        roof = peaks_roof(imp.peaks, imp.clock_hz)
        if roof.compute and roof.memory:
            return RoofChoice(roof, f"roof: {roof.name}, the peaks ncu recorded in "
                                    f"{imp.peaks.path} (at the clock it profiled at)")
    found = _catalog_match(imp.devices, imp.device_details)
    if found is not None:
        # the file's device record decides one die or the package by its memory here
        # (catalog_match._one_die), as the probe does
        roof, text = found
        roof, clock = clock_judged(roof, imp.clock_hz)
        return RoofChoice(roof, f"roof: {roof.name} ({kind_words(roof)}), the catalog entry "
                                f"matched by the device name '{text}' in the file" + clock)
    roof = envelope_roof(imp.kernels)
    if roof is None:
        from ..errors import InputError

        ask = ON_CPU_HINT if on_cpu(imp.kernels) else "pass --on GPU"
        raise InputError("no roof: the files name no device and record no peaks, and no kernel "
                         f"has both FLOP and bytes; {ask} (see `rooflab specs list`)"
                         + _missing_counts(imp.kernels))
    if imp.kernels and all(k.meta.get("time") == "cpu op" for k in imp.kernels):
        hint = ("pass --on me.json (a profile from `rooflab probe -o me.json`) or a CPU name "
                "for this machine's roof")
    else:
        hint = (f"{ON_CPU_HINT} for the machine's roof" if on_cpu(imp.kernels) else
                "pass --on GPU for the machine's roof")
    raised = "".join(f"; {w}" for w in envelope_words(roof))
    return RoofChoice(roof, "roof: none known; ceilings are the best the kernels themselves "
                            f"reached (a lower bound) - {hint}{raised}"
                            + cc_suggestion(recorded_cc(imp.kernels)))
