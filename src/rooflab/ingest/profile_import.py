"""What a profiler import gives (kernels, skips, device names, recorded peaks) and which roof
to judge it by.

The roof, in order (issue 5): the one the user named with --on (a profile file or a catalog
name); else the catalog entry matched by the device name the profiler recorded; else the
peaks the profiler itself recorded (ncu's `.peak_sustained` metrics); else, so that AI and
achieved performance can still be shown, an envelope of the best the kernels themselves
reached, clearly labelled as a lower bound and not a machine's roof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model.ceiling import Ceiling, Roof
from ..model.kernel import Kernel
from .skips import Skip


@dataclass(frozen=True)
class RecordedPeaks:
    """Peaks a profiler recorded: FLOP/s by precision ('fp16:tensor' for tensor units) and B/s
    by level, from one file."""

    compute: Mapping[str, float]
    memory: Mapping[str, float]
    path: str
    device: str = ""


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


def peaks_roof(peaks: RecordedPeaks) -> Roof:
    """A roof from the peaks a profiler recorded (at the clock it profiled at)."""
    src = f"peaks recorded by the profiler in {peaks.path}"
    compute = []
    for key, value in peaks.compute.items():
        precision, _, unit = key.partition(":")
        compute.append(Ceiling(value=value, precision=precision, unit=unit or "vector",
                               provenance="derived", source=src,
                               method="peak_sustained x clock (ncu)"))
    memory = [Ceiling(value=v, level=level, provenance="derived", source=src,
                      method="peak_sustained x clock (ncu)") for level, v in peaks.memory.items()]
    name = f"{peaks.device or 'device'} (profiler peaks)"
    # Neither datasheet nor our own measurement: the profiler's peak rates x its clock.
    return Roof(name=name, kind="derived", compute=tuple(compute), memory=tuple(memory),
                source=src, notes=("ncu locks clocks to base by default, so these peaks sit "
                                   "below boost datasheet values",))


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
    """Kernels with a grid but no SM count get the count of the device they ran on, from
    the catalog: the device name the file recorded, else the catalog device --on names
    (a CSV's Device column is often the index '0'). meta sms_source says which."""
    from dataclasses import replace

    from ..model.advice_compute import grid_words

    need = {id(k) for k in imp.kernels if k.meta.get("grid") and not k.meta.get("sms")}
    if not need:
        return imp
    by_name: dict[str, int | None] = {}

    def sms_of(text: str) -> int | None:
        if text not in by_name:
            try:
                from ..hardware.catalog import lookup, match_device_name

                dev = (match_device_name(text) if not text.isdigit() else None) \
                    or (lookup(text) if text == on else None)
            except Exception:  # noqa: BLE001 — not a catalog name (a profile file): no count
                dev = None
            by_name[text] = getattr(dev, "sms", None)
        return by_name[text]

    out = []
    for k in imp.kernels:
        if id(k) in need:
            device = str(k.meta.get("device") or "")
            sms, source = (sms_of(device), "catalog: recorded device") if device else (None, "")
            if not sms and on:
                sms, source = sms_of(on), f"catalog: --on {on}"
            meta = {**k.meta, "sms": sms, "sms_source": source}
            # only where it tells something (a grid under two waves): the JSON of the
            # common, large-grid kernel stays as it was
            if sms and grid_words(meta):
                k = replace(k, meta=meta)
        out.append(k)
    return replace(imp, kernels=tuple(out))


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
    achieved occupancy 17 % ...' for each kernel whose grid is under two waves: ncu's
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


def _other_device(roof: Roof, recorded: str) -> str:
    """The catalog name of the roof's device when it is not the device the file recorded
    ('' when it is, or when either is unknown: a profile file's roof, a file without a
    device name)."""
    dev = _catalog_device(roof.name) if recorded else None
    if dev is None or dev.roof.name != roof.name:
        return ""
    try:
        from ..hardware.catalog import match_device_name

        ran = match_device_name(recorded)
    except ImportError:
        return ""
    return dev.name if ran is not None and ran.name != dev.name else ""


ENVELOPE_NAME = "best achieved (no roof given)"
ENVELOPE_NOTE = ("% roof and bound are measured against the best these kernels reached, not "
                 "against the machine: 100 % means the fastest here, not at a ceiling")


# CPU counters (likwid, perf) and torch's CPU ops are judged by a CPU's roof, not a GPU's
ON_CPU_HINT = ("pass --on CPU (a catalog name such as 'EPYC 9654', or a profile of this "
               "machine: `rooflab probe -o me.json`, then --on me.json)")


def on_cpu(kernels: Sequence[Kernel]) -> bool:
    """Whether every kernel ran on a CPU (the importer's meta device, or a torch CPU op)."""
    return bool(kernels) and all(k.meta.get("device") == "cpu"
                                 or k.meta.get("time") == "cpu op" for k in kernels)


def envelope_roof(kernels: Sequence[Kernel]) -> Roof | None:
    """Ceilings = the best FLOP/s per precision and unit, and B/s per level, any kernel
    reached; a kernel's FLOP/s of its main precision (Kernel.precision), raised where its
    other precisions are held to that ceiling so that the kernel takes its measured time.

    Not a machine's roof: a lower bound on it, used only when nothing better is known so that
    the kernels can still be compared with each other; so no kernel is above it, and the one
    that set a ceiling is at exactly 100 %. Tensor (MFMA, tensor-core) kernels get a tensor
    ceiling of their own: a single vector one made analyze() note "no fp8 tensor ceiling;
    using fp8 vector" for an MFMA kernel that had set that very ceiling.
    """
    flop: dict[tuple[str, str], float] = {}
    alone: dict[tuple[str, str], tuple[float, Kernel]] = {}   # main precision's own rate
    bw: dict[str, float] = {}
    timed = [k for k in kernels if k.seconds]
    for k in timed:
        main = k.flop.get(k.precision, 0.0)
        if main > 0:
            # A minor precision sets no ceiling: its FLOP ran alongside the main ones, and
            # as a ceiling of its own (2.16 GFLOP/s of fp32 in the GPP kernel) analyze()'s
            # time-weighted mix would put its own kernel at 200 %; held to the main one it
            # gets analyze()'s "no <p> ceiling" note.
            key = (k.precision, k.unit or "vector")
            flop[key] = max(flop.get(key, 0.0), main / k.seconds)
            if main / k.seconds >= alone.get(key, (0.0,))[0]:
                alone[key] = (main / k.seconds, k)
        for level, v in k.bytes.items():
            if v > 0:
                bw[level] = max(bw.get(level, 0.0), v / k.seconds)
    if not flop or not bw:
        return None
    roof = _envelope(flop, bw, alone, on_cpu(timed))
    # The main precision's own rate alone (review 12b H) put the GPP kernel at 102 % of the
    # roof it set: its 4.9e10 fp32 FLOP are held to the fp64 ceiling too (review 13v F-B).
    # Raise each main ceiling until every kernel's FLOP held to it, plus the time of its
    # parts on other ceilings, take at most its measured time. Raising only shortens other
    # kernels' roof times, so a few passes settle it (one, unless a minor precision falls
    # back to a ceiling another kernel then raises).
    for _ in range(4):
        raised = False
        for k in timed:
            key = (k.precision, k.unit or "vector")
            need = _rate_for_own_time(roof, k, key) if key in flop else 0.0
            if need > flop[key] * (1 + 1e-12):
                flop[key], raised = need, True
        if not raised:
            break
        roof = _envelope(flop, bw, alone, on_cpu(timed))
    return roof


def _rate_for_own_time(roof: Roof, k: Kernel, key: tuple[str, str]) -> float:
    """The rate the ceiling `key` (the kernel's main precision and unit) needs for kernel k
    to take its measured time on `roof`: the FLOP held to it over the time the kernel's
    other parts leave (0 when none are held to it or the others alone take longer)."""
    from ..model.ceiling import CeilingPart, kernel_ceiling

    held = kernel_ceiling(roof, k.flop, k.unit, k.precision)
    parts = held.parts or (CeilingPart(k.precision, k.total_flop, held.ceiling),)
    own = [x for x in parts if (x.ceiling.precision, x.ceiling.unit) == key]
    rest = sum(x.seconds_at_peak for x in parts if x not in own)
    if not own or rest >= k.seconds:
        return 0.0
    return sum(x.flop for x in own) / (k.seconds - rest)


ENVELOPE_SOURCE = "best achieved by the profiled kernels (a lower bound on the machine's roof)"


def _envelope(flop: Mapping[tuple[str, str], float], bw: Mapping[str, float],
              alone: Mapping[tuple[str, str], tuple[float, Kernel]],
              cpu: bool = False) -> Roof:
    """The envelope Roof; a compute ceiling raised above its precision's own best rate says
    so in its method (envelope_words)."""
    def method(key: tuple[str, str], value: float) -> str:
        rate, k = alone[key]
        if value <= rate * (1 + 1e-9):
            return ""
        from ..units import fmt_rate

        others = ", ".join(p for p, v in k.flop.items() if v > 0 and p != key[0])
        return (f"{k.name}'s FLOP, {others} included: {key[0]} alone "
                f"{fmt_rate(rate, key[0])}")

    return Roof(
        name=ENVELOPE_NAME, kind="derived",
        compute=tuple(Ceiling(value=v, precision=p, unit=unit, provenance="derived",
                              source=ENVELOPE_SOURCE, method=method((p, unit), v))
                      for (p, unit), v in flop.items()),
        memory=tuple(Ceiling(value=v, level=lv, provenance="derived", source=ENVELOPE_SOURCE)
                     for lv, v in bw.items()),
        source=ENVELOPE_SOURCE,
        notes=("no roof was given, the files name no known device and record no peaks; "
               + (ON_CPU_HINT if cpu else
                  "pass --on GPU (a catalog name or a profile)") + " for real ceilings",))


def envelope_words(roof: Roof) -> list[str]:
    """'fp64 vector 88.4 GFLOP/s (sigma_gpp_gpu_29's FLOP, fp32 included: fp64 alone
    86.3 GFLOP/s)': each envelope ceiling a mixed kernel's minor FLOP raised."""
    from ..units import fmt_rate

    if roof.name != ENVELOPE_NAME:
        return []
    return [f"{c.label} {fmt_rate(c.value, c.precision)} ({c.method})"
            for c in roof.compute if c.method]


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

    peaks = load_ncu([on]).peaks
    roof = peaks_roof(peaks) if peaks is not None else None
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
    return roof, (f"roof: {roof.name} ({roof.kind}), from {path} (rocprof-compute's "
                  f"benchmark in the workload folder; --on GPU for another roof)"
                  + _above_nominal(roof))


def recorded_cc(kernels: Sequence[Kernel]) -> str | None:
    """The one compute capability the profiler recorded for these kernels ("8.9"), if any."""
    ccs = {str(k.meta["cc"]) for k in kernels if k.meta.get("cc")}
    return ccs.pop() if len(ccs) == 1 else None


def _catalog_device(name: str):
    try:
        from ..hardware.catalog import lookup

        return lookup(name)
    except Exception:  # noqa: BLE001 — a profile file's roof, or no catalog: nothing to check
        return None


def cc_mismatch(roof: Roof, cc: str | None) -> str:
    """A warning when a catalog roof is of another compute capability than the profile."""
    dev = _catalog_device(roof.name) if cc else None
    if dev is None or not dev.compute_capability or dev.compute_capability == cc:
        return ""
    return (f"; warning: the kernels were profiled on a compute capability {cc} GPU, but "
            f"{dev.name} is {dev.compute_capability} — its ceilings may not apply")


def device_mismatch(roof: Roof, kernels: Sequence[Kernel]) -> str:
    """A warning when --on names a roof of another device than the kernels ran on: a GPU of
    another compute capability (cc_mismatch), a CPU roof for kernels an NVIDIA GPU ran (ncu
    records the capability), or a GPU or accelerator roof for kernels a CPU ran (a torch
    trace of CPU ops: `rooflab torch --run model.py --on h200` on a machine without a GPU,
    or rooflab.measure kernels timed on the CPU)."""
    from ..model.machine import machine_of

    cc = recorded_cc(kernels)
    kind = machine_of(roof).kind
    if cc and kind == "cpu":
        return (f"; warning: the kernels were profiled on a compute capability {cc} GPU, but "
                f"{roof.name} is a CPU roof — its ceilings do not apply; pass --on the GPU "
                f"(a catalog name or its .ncu-rep)")
    # CPU ops of a torch trace ("cpu op" times), or rooflab.measure kernels timed on the CPU
    on_cpu = bool(kernels) and all(k.meta.get("time") == "cpu op" or k.meta.get("device")
                                   == "cpu" for k in kernels)
    if on_cpu and kind in ("gpu", "accelerator"):
        return (f"; warning: the kernels ran on the CPU (CPU ops, no GPU kernels), but "
                f"{roof.name} is a {kind} roof — its ceilings do not apply; move the model "
                f"and inputs to the GPU (.to('cuda')) and profile there, or pass --on "
                f"me.json (a profile from `rooflab probe -o me.json`)")
    return cc_mismatch(roof, cc)


# FP32 results per clock per SM, by compute capability (CUDA C++ Programming Guide,
# "Arithmetic Instructions" throughput table): with the catalog's SM count and fp32 vector
# peak this gives the clock the catalog peaks assume (RTX 4060 Laptop: 14.56 TFLOP/s /
# (24 x 128 x 2) = 2.37 GHz, its top boost).
FP32_LANES_PER_SM = {"6.0": 64, "6.1": 128, "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64,
                     "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128,
                     "12.0": 128}
# below this share of the catalog's clock the note is printed (boost varies by a few %)
SLOW_CLOCK = 0.9


def catalog_clock_hz(roof: Roof) -> float | None:
    """The SM clock a catalog roof's peaks were derived at (fp32 vector / (SMs x FP32
    lanes x 2)), or None when the roof is not a catalog NVIDIA entry with those figures."""
    if roof.kind != "nominal":
        return None
    dev = _catalog_device(roof.name)
    lanes = FP32_LANES_PER_SM.get(getattr(dev, "compute_capability", None) or "")
    fp32 = roof.find_compute("fp32", "vector")
    if dev is None or dev.roof.name != roof.name or not dev.sms or not lanes or fp32 is None:
        return None
    return fp32.value / (dev.sms * lanes * 2.0)


def clock_mismatch(roof: Roof, clock_hz: float | None) -> str:
    """A note when the profile says the kernels ran well below the clock the catalog roof
    assumes: ncu locks clocks to base by default (--clock-control base), so % of roof on a
    boost-clock catalog roof reads low by the clock ratio (review 12b J: 37 % vs 55 %)."""
    boost = catalog_clock_hz(roof) if clock_hz else None
    if boost is None or clock_hz >= SLOW_CLOCK * boost:
        return ""
    return (f"; note: the kernels ran at {clock_hz / 1e9:.2f} GHz "
            f"(sm__cycles_elapsed.avg.per_second in the file; ncu locks base clocks by "
            f"default), while {roof.name}'s catalog peaks assume {boost / 1e9:.2f} GHz "
            f"(boost): % of roof is judged at boost, so it reads at most "
            f"{100 * clock_hz / boost:.0f} % where compute binds; profile with "
            f"--clock-control none, or pass --on the .ncu-rep (its peaks are at the "
            f"profiled clock)")


def cc_suggestion(cc: str | None) -> str:
    """Catalog devices that share the profile's compute capability, for --on."""
    if not cc:
        return ""
    try:
        from ..hardware.catalog import devices_with_cc
    except ImportError:
        return ""
    names = [d.name.removeprefix("NVIDIA ").removeprefix("GeForce ") for d in devices_with_cc(cc)]
    return (f"; the files record compute capability {cc}: e.g. --on '{names[0]}' "
            f"(catalog devices of {cc}: {', '.join(names)})") if names else ""


def choose_roof(on: str | None, imp: ProfileImport) -> RoofChoice:
    """The roof to place the kernels on, and a line saying where it came from."""
    if on:
        roof = roof_for_on(on)
        roof, added = with_recorded_levels(roof, imp.peaks, imp.clock_hz)
        return RoofChoice(roof, f"roof: {roof.name} ({roof.kind}), from --on {on}"
                                + device_mismatch(roof, imp.kernels)
                                + _above_nominal(roof) + clock_mismatch(roof, imp.clock_hz)
                                + added)
    if imp.roof_file:
        # rocprof-compute benchmarked this machine into the workload folder: measured peaks
        # of the GPU the counters were taken on come before any catalog entry, as ncu's
        # recorded peaks do
        return RoofChoice(*_workload_roof(imp.roof_file))
    # The profiler's own peaks first: they hold every level (L1, L2, DRAM) and were taken at
    # the clock the kernels ran at (ncu locks clocks near base), so kernel and roof match.
    if imp.peaks is not None and (imp.peaks.compute or imp.peaks.memory):
        roof = peaks_roof(imp.peaks)
        if roof.compute and roof.memory:
            return RoofChoice(roof, f"roof: {roof.name}, the peaks ncu recorded in "
                                    f"{imp.peaks.path} (at the clock it profiled at)")
    found = _catalog_match(imp.devices, imp.device_details)
    if found is not None:
        roof, text = found
        return RoofChoice(roof, f"roof: {roof.name} ({roof.kind}), the catalog entry matched "
                                f"by the device name '{text}' in the file"
                                + clock_mismatch(roof, imp.clock_hz))
    roof = envelope_roof(imp.kernels)
    if roof is None:
        from ..errors import InputError

        ask = ON_CPU_HINT if on_cpu(imp.kernels) else "pass --on GPU"
        raise InputError("no roof: the files name no device and record no peaks, and no kernel "
                         f"has both FLOP and bytes; {ask} (see `rooflab specs list`)")
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
