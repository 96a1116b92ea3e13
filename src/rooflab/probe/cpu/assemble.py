"""The CPU probe's results: roofs, notes and extras assembled from what `suite` measured.

`suite._measure` fills a `_Raw` with every measurement; `_assemble` turns it into a
MachineProfile: measured ceilings (best of the methods), the nominal roof derived at the
measured clock (`_nominal`), the checks between the two (flags.py), and the raw data as
extras. Pure: no measurement, no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...hardware.cgroup import sustained_share
from ...hardware.host import HostInfo
from ...hardware.profile import MachineProfile, now_iso
from ...hardware.windows_topology import SOURCE as WIN_SOURCE
from ...model.ceiling import Ceiling, Roof
from ...model.real_traffic import REAL_TRAFFIC
from ...units import fmt_fraction, fmt_rate, si
from ..nominal import add_below_nominal_notes, below_nominal_extras
from ..stats import slowdown_warning
from . import bandwidth as bw
from .clock import METHOD as CLOCK_METHOD
from .dram_ceiling import dram_from_add, drop_below_dram, real_traffic
from .flags import (
    QuotaBurst,
    dram_drift_note,
    drift_note,
    flag_overshoot,
    flag_undershoot,
    machine_load_notes,
    numa_note,
    soften_gave_up,
    stream_consistency_note,
    sweep_above_roof_note,
)
from .flops import (
    MOST_SIMD_RATIO,
    Measured,
    blas_threads_match,
    fp32_below_fp64,
    simd_ratio_note,
)
from .intensity import BYTE_MODEL as SWEEP_BYTE_MODEL
from .intensity import method_text
from .load import MachineLoad
from .modes import ModeSpec
from .nominal_clock import _clock_for  # noqa: F401 (tests import it from here too)
from .runner import Rate

SOURCE = "rooflab probe (numba kernels, this machine)"


def _measured(rate: Rate, method: str, label: str, **key) -> Ceiling:
    """A measured ceiling: the best sample, with the spread warning and, when the samples
    (kept in the order taken) fell during the run, the slowdown warning naming the
    sustained rate."""
    precision = key.get("precision")
    slowed = slowdown_warning(label, rate.samples, (lambda v: fmt_rate(v, precision))
                              if precision else (lambda v: si(v, "B/s")))
    warns = tuple(w for w in (rate.warning(label), slowed) if w)
    return Ceiling(value=rate.best, provenance="measured", source=SOURCE, method=method,
                   samples=rate.samples, warnings=warns, **key)


def _best(precision: str, methods: list[Measured], unit: str) -> Ceiling:
    win = max(methods, key=lambda m: m.rate.best)
    others = "; ".join(f"{m.method.split(':')[0].split(' (')[0]}: "
                       f"{fmt_rate(m.rate.best, precision)}" for m in methods if m is not win)
    method = win.method + (f" (best of methods; also {others})" if others else "")
    return _measured(win.rate, method, f"{precision} peak", precision=precision, unit=unit)


def _cores(n: float) -> str:
    return f"{n:g} core" if n == 1 else f"{n:g} cores"


HYBRID_P = "Golden Cove/Raptor Cove (client)"   # client P-core design; may sit beside E-cores


@dataclass(frozen=True)
class CoreUse:
    """The cores the nominal roof counts: `cores` in all (a CFS quota may make it
    fractional), of which p/e on a hybrid CPU (P-cores first within the CPU set)."""

    cores: float
    p: float = 0
    e: float = 0
    notes: tuple[str, ...] = ()


def core_use(host: HostInfo, threads: int, cpus=None, quota_cpus: float | None = None
             ) -> CoreUse:
    """Physical cores among the CPUs the probe ran on (`cpus`: --cpus or the affinity
    mask; SMT siblings share a core's pipes, review s21 r2 F3), at most `threads` and at
    most a cgroup quota's CPUs (F1); on a hybrid CPU, the P and E cores of that set (F4)."""
    from ...hardware.cpu_topology import cores_in_set

    phys = host.cores_in(cpus) if cpus else host.cores
    cores: float = min(threads, phys)
    notes = []
    if cpus and phys < min(threads, host.cores):
        notes.append(f"the {len(cpus)} CPUs used are {_cores(phys)} (SMT siblings share one "
                     f"core's FMA pipes): the nominal counts {_cores(phys)}, not {threads}")
    if quota_cpus and quota_cpus < cores:
        cores = int(quota_cpus) if float(quota_cpus).is_integer() else quota_cpus
    split = host.core_split
    if split is None or split.e_cores == 0:
        return CoreUse(cores, notes=tuple(notes))
    p_in, e_in = cores_in_set(split, cpus or (), host.cpu_cores) if cpus else (
        split.p_cores, split.e_cores)
    if not (p_in or e_in):
        p_in, e_in = split.p_cores, split.e_cores
    p = min(cores, p_in)
    return CoreUse(cores, p, min(cores - p, e_in), tuple(notes))


def _nominal(host: HostInfo, arch, ghz: float, threads: int, cpus=None,
             quota_cpus: float | None = None, e_ratio: float | None = None
             ) -> tuple[Roof | None, list[str]]:
    """The derived roof at `ghz` (the P-cores' clock on a hybrid CPU), and notes on what it
    assumes. None for a design the table does not know (no guessed pipe count). On a
    hybrid CPU whose OS lists the P- and E-cores, each core counts at its own design's
    rate (P-cores first, among `cpus` when given), the E-cores at `ghz` x the E/P clock
    ratio: the OS's (cpufreq), else `e_ratio`, the all/one clock readings (ClockChoice)."""
    from ...hardware.cpu_detect import e_core_arch
    from ...hardware.cpu_nominal import cpu_nominal_roof, hybrid_nominal_roof

    if arch is None or not arch.nominal_known:
        return None, []
    if not host.cores_known:
        return None, [no_core_count_note(host)]
    use = core_use(host, threads, cpus, quota_cpus)
    cores = use.cores
    source = f"derived: {arch.source}; clock measured by the probe ({CLOCK_METHOD})"
    split = host.core_split
    if split is None or split.e_cores == 0:
        notes = list(use.notes)
        # a kernel with one plain `cpu` PMU and no cpu_core found one core type (F9)
        if arch.name == HYBRID_P and host.hybrid_pmu is not False:
            notes.append(f"{arch.name} parts may have E-cores, but the OS does not list core "
                         f"types (Linux: /sys/devices/system/cpu/types, cpu_core/cpu_atom "
                         f"PMUs; Windows: {WIN_SOURCE}): the P/E split is unknown and the "
                         f"nominal counts all {cores} cores as P-cores (an upper bound)")
        return cpu_nominal_roof(f"{host.cpu_model} ({arch.name}, {_cores(cores)} @ {ghz:.2f} "
                                f"GHz)", cores, ghz, arch, None, source), notes
    e_arch = e_core_arch(host.vendor, host.family, host.model, host.flags)
    if e_arch is None:
        return None, [f"hybrid CPU ({split.p_cores} P + {split.e_cores} E cores, from "
                      f"{split.source}) whose E-core design is not in rooflab's table: no "
                      f"nominal compute peak (counting E-cores at the P-core rate overstates "
                      f"it); add the design to rooflab/hardware/cpu_arch.py"]
    p_used, e_used = use.p, use.e
    e_ghz = ghz * (split.e_clock_ratio or e_ratio or 1.0)
    notes = [f"hybrid CPU: {split.p_cores} P-cores ({arch.name}) + {split.e_cores} E-cores "
             f"({e_arch.name}) from {split.source}; the nominal counts {p_used:g} P + "
             f"{e_used:g} E cores{' of the CPUs used' if cpus else ''}, each at its own rate"]
    notes += use.notes
    if e_used and split.e_clock_ratio is None and e_ratio:
        # no cpufreq maxima (Windows, macOS): the E-cores' measured clock (s23 h1 F1)
        notes.append(f"E-cores at {e_ghz:.2f} GHz: the P-core clock ({ghz:.2f} GHz) x "
                     f"{e_ratio:.3g} (the all-thread over the one-thread clock reading, as "
                     f"the OS gives no E-core maximum clock)")
    elif e_used and split.e_clock_ratio is None:
        notes.append("the OS gives no E-core maximum clock (Linux's cpufreq does; Windows and "
                     "macOS do not): the nominal runs P- and E-cores at the one measured clock "
                     "(an upper bound for the E-cores)")
    elif e_used:
        notes.append(f"E-cores at {e_ghz:.2f} GHz: the P-core clock ({ghz:.2f} GHz) x "
                     f"{split.e_clock_ratio:.3g} (E/P cpufreq maximum ratio)")
    name = (f"{host.cpu_model} ({arch.name} {_cores(p_used)} @ {ghz:.2f} GHz + {e_arch.name} "
            f"{_cores(e_used)} @ {e_ghz:.2f} GHz)")
    if not p_used:   # E-cores only (--cpus on the E-cores): one design, at its clock
        name = f"{host.cpu_model} ({e_arch.name} {_cores(e_used)} @ {e_ghz:.2f} GHz)"
        return cpu_nominal_roof(name, e_used, e_ghz, e_arch, None, source), notes
    return hybrid_nominal_roof(name, p_used, ghz, arch, e_used, e_ghz, e_arch, source), notes


def no_core_count_note(host: HostInfo) -> str:   # no OS source counted cores (s23 r3 F1)
    return (f"the OS did not say how many physical cores this CPU has (no /proc/cpuinfo core "
            f"ids, sysctl hw.physicalcpu or {WIN_SOURCE}), only {host.threads} logical CPUs; "
            f"counting those as cores would double the nominal on a CPU with two threads per "
            f"core (SMT), so there is no nominal compute peak; the measured ceilings stand "
            f"(compare with a catalog CPU: --on NAME)")


@dataclass
class _Raw:
    """Everything one probe measured, before it becomes roofs and extras."""

    clock0: Rate
    clock_1t: Rate
    peaks: dict
    sweep_extras: dict
    mem_ceilings: dict
    stream: dict
    ws_intensity: float
    intensity: tuple
    gemm: dict
    gemm_by_size: dict
    lowp: list
    not_measured: dict
    overhead: dict
    peak_end: Measured
    clock1: Rate
    notes: list
    dram_end: Rate | None = None   # DRAM triad again at the end (None: no DRAM plateau)
    load: MachineLoad | None = None  # other work on the machine meanwhile (load.py)
    scaling: dict | None = None      # --threads 1,2,...: the other counts (scaling.py)
    affinity: dict | None = None     # the CPUs the probe ran on (affinity.py)
    scalar: dict | None = None       # scalar (no SIMD) FMA peaks by precision (flops.py)


def _assemble(raw: _Raw, spec: ModeSpec, host: HostInfo, arch, threads: int,
              wall_s: float) -> MachineProfile:
    """Roofs, notes and extras from the raw measurements."""
    # A busy machine first: it explains the warnings that follow.
    notes = (machine_load_notes(raw.load) if raw.load is not None else []) + list(raw.notes)
    aff = raw.affinity or {}
    cpus, quota_cpus = aff.get("cpu_list"), (aff.get("cpu_quota") or {}).get("cpus")
    use = core_use(host, threads, cpus, quota_cpus)
    ghz, clock_note, hybrid_note, e_ratio = _clock_for(raw, host, threads, use)
    notes += [hybrid_note] if hybrid_note else []
    gemm_ok = blas_threads_match(threads)
    if not gemm_ok:
        notes.append(f"numpy GEMM ran on the BLAS's default thread count, not {threads}; it "
                     f"is kept in extras but not used for the ceilings; to limit it, "
                     f"install threadpoolctl: pip install threadpoolctl")
    compute = [_best(p, [raw.peaks[p]] + ([raw.gemm[p]] if gemm_ok else []), "vector")
               for p in ("fp64", "fp32")]
    # the in-core scalar ceilings under the vector ones (Williams' "w/out SIMD")
    compute += [flag_scalar(_measured(m.rate, m.method, f"{p} scalar peak", precision=p,
                                      unit="scalar"), raw)
                for p, m in (raw.scalar or {}).items()]
    compute += [_measured(m.rate, m.method, f"{m.precision} peak", precision=m.precision,
                          unit=u) for m, u in raw.lowp]
    nominal, nominal_notes = _nominal(host, arch, ghz, threads, cpus, quota_cpus, e_ratio)
    notes += nominal_notes
    if arch is not None and not arch.nominal_known:
        notes += list(arch.notes)   # why there is no nominal roof, and how to get one
    burst = quota_burst(host, threads, cpus, quota_cpus, use)
    compute = flag_undershoot(flag_overshoot(compute, nominal, arch, burst), nominal)
    compute = soften_gave_up(compute, nominal)
    compute, order_note = fp32_below_fp64(compute)
    notes += [order_note] if order_note else []
    start, end = raw.peaks["fp64"].rate.best, raw.peak_end.rate.best
    notes += [n for n in (clock_note, drift_note(start, end)) if n]
    mem, mem_notes, dropped = _memory(raw)
    dram = mem.get("DRAM")
    chosen_add = dram is not None and dram is not raw.mem_ceilings.get("DRAM")
    if raw.dram_end is not None:
        note = dram_drift_note(raw.mem_ceilings["DRAM"].value, raw.dram_end.best,
                               add=dram.value if chosen_add else None)
        notes += [note] if note else []
    notes += mem_notes
    # with add chosen, its note says what the consistency note would (and what was done)
    notes += [n for n in (None if chosen_add else stream_consistency_note(raw.stream),
                          sweep_above_roof_note([pt.to_dict() for pt in raw.intensity],
                                                dram.value if dram else None,
                                                _real_value(mem)),
                          numa_note(host.numa_nodes)) if n]
    notes += [f"{p}: not measured: {why}" for p, why in raw.not_measured.items()]
    notes += simd_ratio_notes(raw)
    floor_name, floor = min(raw.overhead.items(), key=lambda kv: kv[1].median)
    order = {lv: i for i, lv in enumerate(bw.LEVELS)}
    measured = Roof(
        name=f"{host.cpu_model} measured ({threads} thread{'s' if threads != 1 else ''})",
        kind="measured",
        compute=tuple(compute),
        memory=tuple(sorted(bw.flag_inversions(mem).values(),
                            key=lambda c: order.get(c.level, len(order)))),
        overhead_s=floor.median, overhead_source=f"{floor_name}, median (measured)",
        source=f"{SOURCE}, mode {spec.name}, {now_iso()}", notes=tuple(notes))
    # far below nominal (a DRAM nominal, or compute under half the clock's peak): the roof
    # says so with the usual causes, as the GPU probe does (probe/nominal.py)
    measured, below = add_below_nominal_notes(measured, nominal, "cpu")
    host_d = host.to_dict() | {"clock_hz": ghz * 1e9, "clock_hz_all_threads": raw.clock0.best,
                               "threads_used": threads, "nominal_cores": use.cores,
                               "cpus": (raw.affinity or {}).get("cpus"),
                               "microarch": arch.name if arch else None,
                               "microarch_notes": list(arch.notes) if arch else []}
    extras = _extras(raw, spec, threads, ghz, wall_s) | {
        "below_nominal": below_nominal_extras(below)} | (
        {"quota_sustained": sustained_extras(measured, burst)} if burst else {}) | (
        {"dropped_ceilings": {lv: {"bytes_per_s": c.value, "samples": list(c.samples),
                                   "method": c.method} for lv, c in dropped.items()}}
        if dropped else {})
    return MachineProfile(host=host_d, nominal=nominal, measured=measured,
                          extras=extras, created=now_iso())


def simd_ratio_notes(raw: _Raw) -> list[str]:
    """A note per precision whose vector/scalar FMA ratio is under LEAST_SIMD_RATIO or
    over MOST_SIMD_RATIO (the ratio is the SIMD lanes: 4 for fp64 with AVX2, 8 for fp32)."""
    notes = (simd_ratio_note(p, raw.peaks[p].rate.best / m.rate.best)
             for p, m in (raw.scalar or {}).items())
    return [n for n in notes if n]


def flag_scalar(c: Ceiling, raw: _Raw) -> Ceiling:
    """The scalar ceiling with the over-MOST_SIMD_RATIO note among its warnings, as the
    probe flags a disturbed ceiling (the chart's `*`, the table's `!`), so a ridge drawn
    from it is not trusted silently. An under-LEAST one is the vector kernel's fault."""
    ratio = raw.peaks[c.precision].rate.best / c.value
    note = simd_ratio_note(c.precision, ratio) if ratio > MOST_SIMD_RATIO else None
    return replace(c, warnings=c.warnings + (note,)) if note else c


def _real_value(mem: dict[str, Ceiling]) -> float | None:
    """The DRAM (real traffic) ceiling's value, the sweep's own units (review 17a N13b)."""
    real = mem.get(REAL_TRAFFIC)
    return real.value if real else None


def _memory(raw: _Raw) -> tuple[dict[str, Ceiling], list[str], dict[str, Ceiling]]:
    """The memory ceilings to write (dram_ceiling.py): caches below DRAM dropped, DRAM
    from add where triad was disturbed, and DRAM in real-traffic units beside it; the
    notes saying so, and the dropped ceilings."""
    mem = dict(raw.mem_ceilings)
    if "DRAM" not in mem:
        return mem, [], {}
    stream_dram = raw.stream.get("DRAM") or {}
    mem["DRAM"], note = dram_from_add(mem["DRAM"], stream_dram)
    mem, notes, dropped = drop_below_dram(mem)   # against the DRAM figure written
    notes += [note] if note else []
    real = real_traffic(mem["DRAM"], stream_dram)
    mem[real.level] = real
    return mem, notes, dropped


def _extras(raw: _Raw, spec: ModeSpec, threads: int, ghz: float, wall_s: float) -> dict:
    def method_dict(m: Measured) -> dict:
        return {"method": m.method, "flop_per_s": m.rate.best,
                "median_flop_per_s": m.rate.median, "spread": m.rate.stats.spread,
                "samples": list(m.rate.samples)}

    start, end = raw.peaks["fp64"].rate.best, raw.peak_end.rate.best
    return {
        "mode": spec.name, "threads": threads,
        "bandwidth_sweep": raw.sweep_extras, "stream": raw.stream,
        "compute_methods": {p: [method_dict(m) for m in (raw.peaks[p], raw.gemm[p])]
                            for p in ("fp64", "fp32")},
        "gemm_by_size": {p: {str(n): v for n, v in d.items()}
                         for p, d in raw.gemm_by_size.items()},
        "not_measured": raw.not_measured,
        "intensity_sweep": {"precision": "fp64",
                            "method": method_text(raw.ws_intensity * threads, threads),
                            "byte_model": SWEEP_BYTE_MODEL,
                            "points": [pt.to_dict() for pt in raw.intensity]},
        "overhead": {k: {"seconds": v.median, "best_s": v.best, "samples": list(v.samples)}
                     for k, v in raw.overhead.items()},
        "clock": {"hz": raw.clock0.best, "median_hz": raw.clock0.median,
                  "one_thread_hz": raw.clock_1t.best, "nominal_ghz": ghz,
                  "samples": list(raw.clock0.samples), "method": CLOCK_METHOD,
                  "hz_end": raw.clock1.best},
        "drift": {"reference": "fp64 FMA peak", "start_flop_per_s": start,
                  "end_flop_per_s": end, "relative_change": end / start - 1,
                  "dram_end_bytes_per_s": raw.dram_end.best if raw.dram_end else None},
        "wall_s": wall_s,
    } | ({"scalar_fma": {p: method_dict(m) | {"simd_ratio": raw.peaks[p].rate.best / m.rate.best}
                        for p, m in raw.scalar.items()}} if raw.scalar else {}) | (
        {"machine_load": raw.load.to_dict() | {"notes": machine_load_notes(raw.load)}}
         if raw.load is not None else {}) | (
        {"scaling": raw.scaling} if raw.scaling else {}) | (
        {"affinity": raw.affinity} if raw.affinity else {})


def quota_burst(host: HostInfo, threads: int, cpus, quota_cpus: float | None,
                use: CoreUse) -> QuotaBurst | None:
    """A cgroup quota below the threads (docker --cpus=0.5): the measured figures are
    burst rates of the cores the threads ran on, the nominal counts the quota's cores (the
    sustained rate); None where the quota does not bind."""
    if sustained_share(quota_cpus, threads) is None or not use.cores:
        return None
    ran_on = core_use(host, threads, cpus).cores   # the same cores, without the quota
    return QuotaBurst(quota_cpus, threads, max(1.0, ran_on / use.cores))


def sustained_extras(roof: Roof, burst: QuotaBurst) -> dict:
    """extras.quota_sustained: each measured ceiling x the quota's share, what work
    longer than one CFS period gets. Derived, kept out of the roof: which rate a kernel
    sees depends on how long it runs against the period, which the profile cannot know,
    and a second ceiling per precision or level would be shadowed (find_compute takes
    the fastest) or double the chart's lines."""
    return {"provenance": "derived", "share": burst.share, "quota_cpus": burst.cpus,
            "threads": burst.threads,
            "method": (f"measured burst rate x the quota's {burst.cpus:g} CPUs / "
                       f"{burst.threads} thread{'s' if burst.threads != 1 else ''}: over a "
                       f"CFS period each CPU-bound thread runs {fmt_fraction(burst.share)} of the "
                       f"time, then waits for the next period's quota"),
            "ceilings": {c.label: c.value * burst.share
                         for c in (*roof.compute, *roof.memory)}}


def sweep_points(profile: MachineProfile) -> list[tuple[float, float]]:
    """The intensity sweep as (AI FLOP/byte, FLOP/s) pairs for report.chart's `sweep=`."""
    pts = (profile.extras.get("intensity_sweep") or {}).get("points", [])
    return [(float(p["ai"]), float(p["flop_per_s"])) for p in pts]
