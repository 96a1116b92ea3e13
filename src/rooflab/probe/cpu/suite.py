"""probe_cpu: run every CPU measurement in order and assemble a MachineProfile.

Nothing is written here: the caller saves the returned profile (atomically), so an
interrupted probe (Ctrl-C) leaves no partial file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import ProbeError, require
from ...hardware.host import HostInfo, detect_host
from ...hardware.profile import MachineProfile, now_iso
from ...model.ceiling import Ceiling, Roof
from ...units import si
from . import bandwidth as bw
from .clock import METHOD as CLOCK_METHOD
from .clock import measure_clock
from .flags import dram_drift_note, drift_note, flag_overshoot, flag_undershoot
from .flops import Measured, blas_threads_match, fma_peak, gemm_peak, torch_matmul_peak
from .intensity import intensity_sweep, method_text
from .modes import ModeSpec, get_mode
from .overhead import overhead_floor
from .runner import Rate, Team

Progress = Callable[[str, float], None]
CONTENDED = 0.75    # all-thread clock below this x the one-thread clock: cores were shared
SOURCE = "rooflab probe (numba kernels, this machine)"


def _measured(rate: Rate, method: str, label: str, **key) -> Ceiling:
    warn = rate.warning(label)
    return Ceiling(value=rate.best, provenance="measured", source=SOURCE, method=method,
                   samples=rate.samples, warnings=(warn,) if warn else (), **key)


def _fmt_bytes(b: float) -> str:
    return f"{b / 2**20:.3g} MiB" if b >= 2**20 else f"{b / 2**10:.3g} KiB"


class _Stages:
    """Progress as a fraction of the whole probe from fixed stage weights."""

    def __init__(self, progress: Progress | None, weights: dict[str, float]):
        self.progress, self.weights = progress, weights
        self.total = sum(weights.values())
        self.done = 0.0

    def within(self, stage: str, frac: float) -> None:
        if self.progress:
            self.progress(stage, min(1.0, (self.done + self.weights[stage] * frac) / self.total))

    def finish(self, stage: str) -> None:
        self.done += self.weights[stage]
        names = list(self.weights)
        nxt = names[names.index(stage) + 1] if stage != names[-1] else stage
        self.within(nxt, 0.0 if nxt != stage else 0.0)


def dram_working_set(host: HostInfo, spec: ModeSpec) -> tuple[float, list[str]]:
    """Largest total working set: llc_multiple x last-level cache (at least 64 MiB),
    shrunk to a quarter of the available memory when that is less."""
    c = host.caches
    llc = (c.l3 or c.l2 or 8 * 2**20) * max(1, c.l3_instances if c.l3 else 1)
    want = max(spec.llc_multiple * llc, 64 * 2**20)
    notes: list[str] = []
    avail = host.memory_available_bytes
    if avail and want > avail / 4:
        have = avail / 4
        if have < 2 * llc:
            raise ProbeError(f"only {_fmt_bytes(avail)} of memory is available; the DRAM "
                             f"sweep needs at least {_fmt_bytes(8 * llc)}; free memory and "
                             f"rerun")
        notes.append(f"DRAM working set shrunk from {_fmt_bytes(want)} to {_fmt_bytes(have)} "
                     f"(a quarter of the {_fmt_bytes(avail)} available); below "
                     f"{spec.llc_multiple:g}x the last-level cache the DRAM figure may "
                     f"include cache hits")
        want = have
    return want, notes


def _sweep(host, spec, team, stages, dram_total, pool) -> tuple[dict, dict[str, Ceiling], list]:
    kernel = bw.STREAM["triad"]
    sizes = bw.sweep_sizes(spec.sweep_lo_bytes, dram_total / team.threads, spec.sweep_step)
    rates: list[Rate] = []
    for i, s in enumerate(sizes):
        stages.within("sweep", i / len(sizes))
        rates.append(bw.measure_stream(kernel, s, team, spec.plan, pool=pool)[0])
    bests = [r.best for r in rates]   # best: other load only ever lowers a rate
    levels, chosen, notes = bw.label_levels(bests, sizes, host.caches, team.threads)
    ceilings: dict[str, Ceiling] = {}
    for level, p in levels.items():
        i = chosen[level]
        method = (f"STREAM triad {kernel.formula} (numba), {team.threads} threads, working "
                  f"set {_fmt_bytes(sizes[i])} per thread ({_fmt_bytes(sizes[i] * team.threads)}"
                  f" total), plateau {_fmt_bytes(sizes[p.first])}..{_fmt_bytes(sizes[p.last])}"
                  f" per thread; {bw.BYTE_MODEL}; value = best sample")
        ceilings[level] = _measured(rates[i], method, f"{level} bandwidth", level=level)
    extras = {
        "kernel": "triad", "threads": team.threads, "byte_model": bw.BYTE_MODEL,
        "points": [{"ws_bytes_per_thread": s, "ws_bytes_total": s * team.threads,
                    "bytes_per_s": r.best, "median_bytes_per_s": r.median,
                    "spread": r.stats.spread,
                    "samples": list(r.samples)} for s, r in zip(sizes, rates, strict=False)],
        "plateaus": [{"level": lv, "first_bytes_per_thread": sizes[p.first],
                      "last_bytes_per_thread": sizes[p.last], "bytes_per_s": p.bytes_per_s,
                      "chosen_bytes_per_thread": sizes[chosen[lv]]}
                     for lv, p in levels.items()],
        "reported_caches": {"L1d": host.caches.l1d, "L2": host.caches.l2, "L3": host.caches.l3,
                            "source": host.caches.source},
        "notes": list(notes),
    }
    return extras, ceilings, list(notes)


def _stream_extras(spec, team, ws_by_level: dict[str, float], stages, pool) -> dict:
    out: dict = {}
    jobs = [(lv, k) for lv in spec.stream_levels if lv in ws_by_level
            for k in ("copy", "scale", "add", "sum")]
    for j, (lv, name) in enumerate(jobs):
        stages.within("stream", j / max(1, len(jobs)))
        rate, n = bw.measure_stream(bw.STREAM[name], ws_by_level[lv], team, spec.plan,
                                    pool=pool)
        out.setdefault(lv, {})[name] = {
            "bytes_per_s": rate.best, "median_bytes_per_s": rate.median,
            "spread": rate.stats.spread,
            "samples": list(rate.samples), "elements_per_array": n,
            "ws_bytes_per_thread": ws_by_level[lv], "formula": bw.STREAM[name].formula}
    return out


def _best(precision: str, methods: list[Measured], unit: str) -> Ceiling:
    win = max(methods, key=lambda m: m.rate.best)
    others = "; ".join(f"{m.method.split(':')[0].split(' (')[0]}: {si(m.rate.best, 'FLOP/s')}"
                       for m in methods if m is not win)
    method = win.method + (f" (best of methods; also {others})" if others else "")
    return _measured(win.rate, method, f"{precision} peak", precision=precision, unit=unit)


HYBRID_P = "Golden Cove/Raptor Cove (client)"   # client P-core design; may sit beside E-cores


def _nominal(host: HostInfo, arch, ghz: float, threads: int) -> tuple[Roof | None, list[str]]:
    """The derived roof at the measured clock, and notes on what it assumes. None for a
    design the table does not know (no guessed pipe count). On a hybrid CPU whose OS
    lists the P- and E-cores, each core counts at its own design's rate (P-cores first)."""
    from ...hardware.cpu_arch import cpu_nominal_roof, e_core_arch, hybrid_nominal_roof

    if arch is None or not arch.nominal_known:
        return None, []
    cores = min(threads, host.cores)
    source = f"derived: {arch.source}; clock measured by the probe ({CLOCK_METHOD})"
    split = host.core_split
    if split is None or split.e_cores == 0:
        notes = []
        if arch.name == HYBRID_P:
            notes.append(f"{arch.name} parts may have E-cores, but the OS does not list core "
                         f"types (/sys/devices/system/cpu/types, cpu_core/cpu_atom PMUs): the "
                         f"P/E split is unknown and the nominal counts all {cores} cores as "
                         f"P-cores (an upper bound)")
        return cpu_nominal_roof(f"{host.cpu_model} ({arch.name}, {cores} cores @ {ghz:.2f} "
                                f"GHz)", cores, ghz, arch, None, source), notes
    e_arch = e_core_arch(host.vendor, host.family, host.model, host.flags)
    if e_arch is None:
        return None, [f"hybrid CPU ({split.p_cores} P + {split.e_cores} E cores, from "
                      f"{split.source}) whose E-core design is not in rooflab's table: no "
                      f"nominal compute peak (counting E-cores at the P-core rate overstates "
                      f"it); add the design to rooflab/hardware/cpu_arch.py"]
    p_used = min(cores, split.p_cores)
    e_used = min(cores - p_used, split.e_cores)
    e_ghz = ghz * (split.e_clock_ratio or 1.0)
    notes = [f"hybrid CPU: {split.p_cores} P-cores ({arch.name}) + {split.e_cores} E-cores "
             f"({e_arch.name}) from {split.source}; the nominal counts {p_used} P + {e_used} "
             f"E cores, each at its own rate"]
    if e_used and split.e_clock_ratio is None:
        notes.append("cpufreq shows no E-core maximum clock: the nominal runs the E-cores at "
                     "the measured (P-core) clock, an upper bound")
    elif e_used:
        notes.append(f"E-cores at {e_ghz:.2f} GHz: the measured clock x {split.e_clock_ratio:.3g}"
                     f" (E/P cpufreq maximum ratio)")
    name = (f"{host.cpu_model} ({arch.name} {p_used} cores @ {ghz:.2f} GHz + {e_arch.name} "
            f"{e_used} cores @ {e_ghz:.2f} GHz)")
    return hybrid_nominal_roof(name, p_used, ghz, arch, e_used, e_ghz, e_arch, source), notes


PLAUSIBLE_HZ = (3e8, 8e9)  # no CPU core this probe targets runs outside 0.3-8 GHz


def clock_estimate(all_threads_hz: float, one_thread_hz: float, threads: int,
                   end_hz: float | None = None) -> tuple[float, str | None]:
    """The clock for the nominal roof (GHz) and a note. All-core clocks sit at most ~25 %
    below one-core boost on current server parts; far lower means our threads shared
    cores with other load, and then the one-thread clock is the better estimate. A
    reading outside 0.3-8 GHz is a failed measurement (a preempted calibration), not a
    clock: the other readings (one thread, the repeat at the end) stand in for it."""
    lo, hi = PLAUSIBLE_HZ
    if not lo <= all_threads_hz <= hi:
        others = [h for h in (one_thread_hz, end_hz) if h and lo <= h <= hi]
        if not others:
            return all_threads_hz / 1e9, (
                f"the clock measurement failed ({all_threads_hz:.3g} Hz; other load "
                f"preempted it), so the nominal roof is wrong; rerun on a quiet machine")
        return max(others) / 1e9, (
            f"the all-thread clock reading ({all_threads_hz:.3g} Hz) failed (other load "
            f"preempted it); the nominal roof uses the other clock reading, "
            f"{max(others) / 1e9:.2f} GHz")
    if threads > 1 and all_threads_hz < CONTENDED * one_thread_hz:
        return one_thread_hz / 1e9, (
            f"with {threads} threads each ran at {all_threads_hz / 1e9:.2f} GHz effective vs "
            f"{one_thread_hz / 1e9:.2f} GHz alone: other load shared the cores during the "
            f"probe, so measured ceilings may be low; the nominal roof uses the one-thread "
            f"clock; rerun on a quiet machine")
    return all_threads_hz / 1e9, None


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


def _measure(spec: ModeSpec, team: Team, host: HostInfo, arch, stages: _Stages,
             dram_total: float) -> _Raw:
    """Run every measurement in order (the reference FMA peak and clock again at the end)."""
    threads = team.threads
    notes: list[str] = []
    stages.finish("compile")
    clock_plan = spec.peak_plan.scaled(0.5)
    clock0 = measure_clock(team, clock_plan)
    clock_1t = clock0
    if threads > 1:
        with Team(1) as solo:
            clock_1t = measure_clock(solo, clock_plan)
    stages.finish("clock")
    peaks = {p: fma_peak(p, team, spec.peak_plan) for p in ("fp64", "fp32")}
    stages.finish("flops")
    sizes = bw.sweep_sizes(spec.sweep_lo_bytes, dram_total / threads, spec.sweep_step)
    pool = bw.ArrayPool(sizes[-1])
    sweep_extras, mem_ceilings, sweep_notes = _sweep(host, spec, team, stages, dram_total, pool)
    notes += sweep_notes
    stages.finish("sweep")
    ws_by_level = {p["level"]: p["chosen_bytes_per_thread"] for p in sweep_extras["plateaus"]}
    stream = _stream_extras(spec, team, ws_by_level, stages, pool)
    for lv, c in mem_ceilings.items():   # triad itself: the sweep's point
        stream.setdefault(lv, {})["triad"] = {
            "bytes_per_s": c.value, "median_bytes_per_s": c.median, "spread": c.spread,
            "samples": list(c.samples), "ws_bytes_per_thread": ws_by_level[lv],
            "formula": bw.STREAM["triad"].formula}
    stages.finish("stream")
    ws_i = ws_by_level.get("DRAM", dram_total / threads) * spec.intensity_ws_fraction
    sweep = intensity_sweep(spec.intensity_ks, ws_i, team, spec.plan,
                            progress=lambda i, n: stages.within("intensity", i / n), pool=pool)
    stages.finish("intensity")
    gemm, gemm_by_size = {}, {}
    for p in ("fp64", "fp32"):
        gemm[p], gemm_by_size[p] = gemm_peak(p, spec.gemm_sizes, threads, spec.plan)
    stages.finish("gemm")
    lowp, not_measured = _low_precision(spec, arch, threads)
    stages.finish("lowp")
    over = overhead_floor(spec.plan)
    stages.finish("overhead")
    peak_end = fma_peak("fp64", team, spec.peak_plan)
    clock1 = measure_clock(team, clock_plan)
    dram_end = (bw.measure_stream(bw.STREAM["triad"], ws_by_level["DRAM"], team, spec.plan,
                                  pool=pool)[0] if "DRAM" in mem_ceilings else None)
    stages.finish("drift")
    return _Raw(clock0, clock_1t, peaks, sweep_extras, mem_ceilings, stream, ws_i, sweep,
                gemm, gemm_by_size, lowp, not_measured, over, peak_end, clock1, notes,
                dram_end)


def probe_cpu(mode: str = "default", threads: int | None = None,
              progress: Progress | None = None) -> MachineProfile:
    """Measure this CPU's roofline: bandwidth per memory level, peak FLOP/s per precision,
    an intensity sweep and the overhead floor. Returns the profile (writes nothing)."""
    require("numba", "cpu", "the CPU probe")
    from ...hardware.cpu_arch import detect_microarch

    spec = get_mode(mode)
    t_start = time.perf_counter()
    host = detect_host()
    avail = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else host.threads
    threads = int(threads or avail)
    if threads < 1:
        raise ProbeError(f"--threads must be at least 1; got {threads}")
    arch = detect_microarch(host.vendor, host.family, host.model, host.flags, host.cpu_model)
    stages = _Stages(progress, {"compile": 1, "clock": 1, "flops": 2, "sweep": 10,
                                "stream": 4 if len(spec.stream_levels) > 1 else 1,
                                "intensity": 3, "gemm": 2,
                                "lowp": 2 if spec.low_precision else 0.01,
                                "overhead": 1, "drift": 1})
    stages.within("compile", 0.0)
    from . import kernels  # noqa: F401  (compiles or loads the cached kernels)

    dram_total, mem_notes = dram_working_set(host, spec)
    with Team(threads) as team:
        raw = _measure(spec, team, host, arch, stages, dram_total)
    raw.notes[:0] = mem_notes
    return _assemble(raw, spec, host, arch, threads, time.perf_counter() - t_start)


def _assemble(raw: _Raw, spec: ModeSpec, host: HostInfo, arch, threads: int,
              wall_s: float) -> MachineProfile:
    """Roofs, notes and extras from the raw measurements."""
    notes = list(raw.notes)
    ghz, clock_note = clock_estimate(raw.clock0.best, raw.clock_1t.best, threads,
                                     raw.clock1.best)
    gemm_ok = blas_threads_match(threads)
    if not gemm_ok:
        notes.append(f"numpy GEMM ran on the BLAS's default thread count, not {threads}; it "
                     f"is kept in extras but not used for the ceilings (pip install "
                     f"threadpoolctl to limit it)")
    compute = [_best(p, [raw.peaks[p]] + ([raw.gemm[p]] if gemm_ok else []), "vector")
               for p in ("fp64", "fp32")]
    compute += [_measured(m.rate, m.method, f"{m.precision} peak", precision=m.precision,
                          unit=u) for m, u in raw.lowp]
    nominal, nominal_notes = _nominal(host, arch, ghz, threads)
    notes += nominal_notes
    if arch is not None and not arch.nominal_known:
        notes += list(arch.notes)   # why there is no nominal roof, and how to get one
    compute = flag_undershoot(flag_overshoot(compute, nominal, arch), nominal)
    start, end = raw.peaks["fp64"].rate.best, raw.peak_end.rate.best
    notes += [n for n in (clock_note, drift_note(start, end)) if n]
    if raw.dram_end is not None:
        note = dram_drift_note(raw.mem_ceilings["DRAM"].value, raw.dram_end.best)
        notes += [note] if note else []
    notes += [f"{p}: not measured ({why})" for p, why in raw.not_measured.items()]
    floor_name, floor = min(raw.overhead.items(), key=lambda kv: kv[1].median)
    order = {lv: i for i, lv in enumerate(bw.LEVELS)}
    measured = Roof(
        name=f"{host.cpu_model} measured ({threads} threads)", kind="measured",
        compute=tuple(compute),
        memory=tuple(sorted(bw.flag_inversions(raw.mem_ceilings).values(),
                            key=lambda c: order[c.level])),
        overhead_s=floor.median, overhead_source=f"{floor_name}, median (measured)",
        source=f"{SOURCE}, mode {spec.name}, {now_iso()}", notes=tuple(notes))
    host_d = host.to_dict() | {"clock_hz": ghz * 1e9, "clock_hz_all_threads": raw.clock0.best,
                               "threads_used": threads,
                               "microarch": arch.name if arch else None,
                               "microarch_notes": list(arch.notes) if arch else []}
    return MachineProfile(host=host_d, nominal=nominal, measured=measured,
                          extras=_extras(raw, spec, threads, ghz, wall_s), created=now_iso())


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
    }


def _low_precision(spec: ModeSpec, arch, threads: int):
    """bf16/fp16/int8 through torch where the CPU has a fast path; reasons otherwise."""
    measured, reasons = [], {}
    for prec in ("bf16", "fp16", "int8"):
        path = arch.fast_path(prec) if arch else None
        if path is None:
            reasons[prec] = "no fast path on this CPU: its flags show no instructions for it"
            continue
        if not spec.low_precision:
            reasons[prec] = f"skipped in {spec.name} mode; the default mode measures it"
            continue
        got = torch_matmul_peak(prec, 1024, threads, spec.plan)
        if isinstance(got, str):
            reasons[prec] = got
        else:
            measured.append((got, path.unit))
    return measured, reasons


def sweep_points(profile: MachineProfile) -> list[tuple[float, float]]:
    """The intensity sweep as (AI FLOP/byte, FLOP/s) pairs for report.chart's `sweep=`."""
    pts = (profile.extras.get("intensity_sweep") or {}).get("points", [])
    return [(float(p["ai"]), float(p["flop_per_s"])) for p in pts]
