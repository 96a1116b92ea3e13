"""Whether the roof fits the profile: a catalog roof of another compute capability, a CPU
roof for GPU kernels (or the reverse), a catalog roof whose clock is well above the one the
kernels ran at, a recorded device that is not the roof's; and which catalog devices share
the profile's compute capability. Each check gives a note to append to the roof's line ('' when
all is well). Split from ingest/profile_import.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.ceiling import Roof
from ..model.kernel import Kernel
from ..model.roof_schema import SCALED  # the note's opening (cli/roof_source_notes finds it)
from ..units import fmt_pct
from .profile_envelope import on_cpu


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
    if on_cpu(kernels) and kind in ("gpu", "accelerator"):
        return (f"; warning: the kernels ran on the CPU (CPU ops, no GPU kernels), but "
                f"{roof.name} is a {kind} roof — its ceilings do not apply; move the model "
                f"and inputs to the GPU (.to('cuda')) and profile there, or pass --on "
                f"me.json (a profile from `rooflab probe -o me.json`)")
    return (cc_mismatch(roof, cc) or device_name_mismatch(roof, kernels)
            or mixed_clocks(roof, kernels))


def recorded_device(kernels: Sequence[Kernel]) -> str:
    """The one device name the profiler recorded for these kernels ('' for none or several)."""
    names = {str(k.meta["device"]) for k in kernels if k.meta.get("device")}
    return names.pop() if len(names) == 1 else ""


def device_name_mismatch(roof: Roof, kernels: Sequence[Kernel]) -> str:
    """'; warning: ...' naming both devices when the roof is a catalog entry other than the
    one the recorded device name matches, of the same compute capability (device_mismatch
    warns first when it differs); '' when they are one or either is unknown (a CSV without
    a device name, a profile file's roof). `rooflab ncu output1.ncu-rep --on L4` (an RTX
    4060 Laptop GPU's report) read 18 % of the L4's roof with no warning (review s18 r4 F6)."""
    ran = recorded_device(kernels)
    other = _other_device(roof, ran) if ran else ""
    if not other:
        return ""
    from ..hardware.catalog import match_device_name

    ran_entry = match_device_name(ran)
    alias = (ran_entry.aliases[0] if ran_entry is not None and ran_entry.aliases
             else ran)
    return (f"; warning: the kernels were profiled on {ran}, but the roof is {other}'s "
            f"(another GPU): its ceilings are not the profiled device's; pass --on "
            f"'{alias}' or the .ncu-rep to judge them on the device they ran on")


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
    boost-clock catalog roof reads low by the clock ratio (review 12b J: 37 % vs 55 %).
    Said where the user kept the boost clock (--on 'NAME@boost'); else at_recorded_clock
    scales the roof."""
    boost = catalog_clock_hz(roof) if clock_hz else None
    if boost is None or clock_hz >= SLOW_CLOCK * boost:
        return ""
    return (f"; note: the kernels ran at {clock_hz / 1e9:.2f} GHz "
            f"(sm__cycles_elapsed.avg.per_second in the file; ncu locks base clocks by "
            f"default), while {roof.name}'s catalog peaks assume {boost / 1e9:.2f} GHz "
            f"(boost): % of roof is judged at boost, so it reads at most "
            f"{fmt_pct(100 * clock_hz / boost)} where compute binds; leave '{BOOST}' out "
            f"of --on (the compute ceilings then scale to the recorded clock), profile "
            f"with --clock-control none, or pass --on the .ncu-rep (its peaks are at the "
            f"profiled clock)")


# An --on suffix that keeps a catalog GPU's compute ceilings at its boost clock, as the
# datasheet lists them (`--on 'RTX 4090@boost'`), where at_recorded_clock would scale them
# to the clock ncu recorded; as '@1t' picks a profile's one-thread roof, '@boost' picks the
# datasheet's roof.
BOOST = "@boost"
# a recorded clock within 1 % of the catalog's is the catalog's (no scaling, no note)
SAME_CLOCK = 0.99


def split_boost(spec: str) -> tuple[str, bool]:
    """(the --on text without '@boost', whether the compute ceilings keep their boost
    clock): ('RTX 4090', True) for 'RTX 4090@boost', ('RTX 4090', False) for 'RTX 4090'."""
    text = spec.strip()
    if text.lower().endswith(BOOST) and len(text) > len(BOOST):
        return text[: -len(BOOST)].rstrip(), True
    return spec, False


def _clocked(kernels: Sequence[Kernel]) -> list[tuple[float, float, str]]:
    """(SM clock in Hz, seconds, its file's step label or its name) of each kernel whose
    meta records sm_clock_hz."""
    return [(float(k.meta["sm_clock_hz"]), k.seconds or 0.0, str(k.meta.get("step") or k.name))
            for k in kernels
            if isinstance(k.meta.get("sm_clock_hz"), (int, float))
            and not isinstance(k.meta["sm_clock_hz"], bool) and k.meta["sm_clock_hz"] > 0]


def one_clock(clocks: Sequence[float]) -> bool:
    """Whether the clocks are one (within 1 %: ncu's locked clock reads 1.6200 or 1.6197)."""
    return not clocks or min(clocks) >= SAME_CLOCK * max(clocks)


def kernels_clock(kernels: Sequence[Kernel]) -> float | None:
    """The time-weighted SM clock the kernels' meta records (meta sm_clock_hz: ncu's, kept
    in a kernel file written from its import), or None when none records one, or when they
    ran at clocks more than 1 % apart: a blend is a clock none ran at (two files at 1.62
    and 2.20 GHz were both judged at 1.79: 55 % alone read 49.7 %; review s26 v2 F3), so
    mixed_clocks keeps the listed peaks and says so."""
    pairs = _clocked(kernels)
    total = sum(t for _, t, _ in pairs)
    if not pairs or not one_clock([c for c, _, _ in pairs]):
        return None
    return sum(c * t for c, t, _ in pairs) / total if total > 0 else pairs[0][0]


def mixed_clocks(roof: Roof, kernels: Sequence[Kernel]) -> str:
    """'; warning: ...' when the kernels ran at SM clocks more than 1 % apart (ncu
    --clock-control none, two runs) and the roof is a catalog GPU's that at_recorded_clock
    would scale: it is judged at its listed (boost) peaks, not at a blend of the clocks."""
    pairs = _clocked(kernels)
    if one_clock([c for c, _, _ in pairs]) or catalog_clock_hz(roof) is None:
        return ""
    by_clock: dict[str, list[str]] = {}
    for c, _, label in sorted(pairs):
        by_clock.setdefault(f"{c / 1e9:.2f} GHz", []).append(label)
    said = ", ".join(f"{ghz} ({', '.join(dict.fromkeys(ls))})" for ghz, ls in by_clock.items())
    return (f"; warning: the kernels ran at different SM clocks: {said}; judged at "
            f"{roof.name}'s listed (boost) peaks, not scaled to either, so % of roof reads "
            f"low where compute binds; give each file alone (one report per file) to judge "
            f"its kernels at the clock they ran at")


def at_recorded_clock(roof: Roof, clock_hz: float | None) -> tuple[Roof, str]:
    """The catalog roof with its compute ceilings scaled to the SM clock the kernels ran at
    (derived: nominal x recorded / boost clock), and '; note: ...' saying so; (roof, '')
    when the roof is no catalog NVIDIA GPU, no clock was recorded, or it is the catalog's.

    ncu locks clocks to base by default: an RTX 4060 Laptop kernel at 1.62 GHz judged on
    its 2.37 GHz boost peaks read 37 % of roof and '2.67x (>2x)' headroom where ncu says
    55 % (review s26 r2 F1). Every compute unit (vector, tensor) runs on the SM clock, so
    all scale; memory ceilings stay as listed: DRAM has a clock of its own, which ncu does
    not lock (255.8 GB/s recorded vs 256 listed). A recorded clock above the catalog's
    (opportunistic boost) keeps the datasheet peaks."""
    from dataclasses import replace

    from ..units import si

    boost = catalog_clock_hz(roof) if clock_hz else None
    if boost is None or not clock_hz or clock_hz >= SAME_CLOCK * boost:
        return roof, ""
    ratio = clock_hz / boost
    ghz, top = f"{clock_hz / 1e9:.2f}", f"{boost / 1e9:.2f}"
    compute = tuple(replace(c, value=c.value * ratio, provenance="derived",
                            method=f"nominal {si(c.value, 'FLOP/s')} x {ghz}/{top} GHz "
                                   f"(recorded SM clock / boost clock)")
                    for c in roof.compute)
    # "at SM x GHz": profile_import.profiled_clock_hz reads it back (the chart's legend)
    note = (f"{SCALED} {ghz} GHz, the clock ncu recorded "
            f"(sm__cycles_elapsed.avg.per_second): nominal x {ghz}/{top} GHz (the "
            f"catalog's boost clock), as ncu's own peaks are; memory ceilings as listed "
            f"(the DRAM clock is not the SM's); --on '{roof.name}{BOOST}' judges at boost")
    return replace(roof, compute=compute, notes=roof.notes + (note,)), f"; note: {note}"


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
