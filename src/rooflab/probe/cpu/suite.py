"""probe_cpu: run every CPU measurement in order; assemble.py makes the MachineProfile.

Nothing is written here: the caller saves the returned profile (atomically), so an
interrupted probe (Ctrl-C) leaves no partial file.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...errors import InputError, ProbeError, require
from ...hardware import cgroup
from ...hardware.host import HostInfo, detect_host
from ...hardware.profile import MachineProfile
from ...model.ceiling import Ceiling
from ...units import fmt_bytes_binary as _fmt_bytes
from . import affinity as aff
from . import bandwidth as bw
from . import load as machine
from . import scaling
from .assemble import _assemble, _measured, _Raw
from .clock import measure_clock
from .dram_ceiling import dram_from_add
from .flops import fma_peak, gemm_peak, scalar_fma_peak, torch_matmul_peak
from .intensity import intensity_sweep
from .modes import ModeSpec, get_mode
from .overhead import overhead_floor
from .runner import Rate, Team

# Result assembly lives in assemble.py (_Raw, _assemble, _nominal: import them from there).
__all__ = ["probe_cpu", "dram_working_set"]

Progress = Callable[[str, float], None]


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


def dram_working_set(host: HostInfo, spec: ModeSpec, limit=..., threads: int | None = None
                     ) -> tuple[float, list[str]]:
    """The DRAM working set and its notes (working_set.py: llc_multiple x the reachable L3s,
    within MemAvailable and a cgroup memory limit; `limit` ... reads this process's)."""
    from .working_set import dram_working_set as choose

    return choose(host, spec, limit, threads)


def sweep_sizes_for(spec: ModeSpec, dram_total: float, threads: int) -> tuple[float, ...]:
    """Per-thread working sets of the bandwidth sweep: geometric from the mode's smallest
    to the DRAM set, with two sizes at or beyond the DRAM set (bw.with_second_dram_point)."""
    hi = dram_total / threads
    return bw.with_second_dram_point(
        bw.sweep_sizes(spec.sweep_lo_bytes, hi, spec.sweep_step), hi)


def placement(host: HostInfo, allowed, pinned, threads: int
              ) -> tuple[bw.Placement | None, bool]:
    """(where the threads ran, whether they were unpinned on a subset): known with --cpus
    or when every allowed CPU has a thread; else the scheduler chose (review s21 r2 F7)."""
    from ...hardware import host as H
    from ...hardware.cpu_topology import l3_groups

    cpus = pinned or allowed
    if not cpus or (pinned is None and threads < len(cpus)):
        return None, bool(cpus)
    return bw.Placement(host.cores_in(cpus), l3_groups(H.SYS_CPU, cpus)), False


def _sweep(host, spec, team, stages, dram_total, pool, where=(None, False)
           ) -> tuple[dict, dict[str, Ceiling], list]:
    kernel = bw.STREAM["triad"]
    sizes = sweep_sizes_for(spec, dram_total, team.threads)
    rates: list[Rate] = []
    for i, s in enumerate(sizes):
        stages.within("sweep", i / len(sizes))
        rate = bw.measure_stream(kernel, s, team, spec.plan, pool=pool)[0]
        if not rate.calibrated:
            # every call waited for a vCPU (a 4 KiB point once read 6.2 MB/s, L2 263 MB/s):
            # one more try, the load may have passed; the Rate's warning says if not
            rate = bw.measure_stream(kernel, s, team, spec.plan, pool=pool)[0]
        rates.append(rate)
    bests = [r.best for r in rates]   # best: other load only ever lowers a rate
    levels, chosen, notes = bw.label_levels(bests, sizes, host.caches, team.threads,
                                            medians=[r.median for r in rates],
                                            placement=where[0], unpinned=where[1])
    notes = hybrid_cache_notes(notes, host)
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
                    "spread": r.stats.spread, "calibrated": r.calibrated,
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


VM_CACHES = "a virtual machine may report another CPU's cache sizes"


def hybrid_cache_notes(notes, host: HostInfo) -> tuple[str, ...]:
    """The sweep's notes with the cache-size mismatch put down to E-cores, not a VM, on a
    hybrid CPU whose OS lists its core types (s23 r3 F4): the sizes read are the P-cores'
    (sysfs cpu0, hw.perflevel0), an E-core's are smaller (64 KiB L1d on an M2 Pro's, not
    128 KiB), and the slowest thread sets the team's rate."""
    split = getattr(host, "core_split", None)   # tests' stand-in hosts may lack it
    if split is None or not split.e_cores:
        return tuple(notes)
    why = (f"this hybrid CPU's {split.e_cores} E-cores have smaller caches than the "
           f"P-cores' sizes the OS reports, and the slowest thread sets the rate")
    return tuple(n.replace(VM_CACHES, why) for n in notes)


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


def _measure(spec: ModeSpec, team: Team, host: HostInfo, arch, stages: _Stages,
             dram_total: float, where=(None, False)) -> _Raw:
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
    # the in-core scalar ceilings (kernels_scalar): register-resident like the vector
    # peak, so half its budget suffices (--quick: about 0.2 s more in all, default 0.55 s)
    scalar = {p: scalar_fma_peak(p, team, spec.peak_plan.scaled(0.5)) for p in ("fp64", "fp32")}
    stages.finish("flops")
    pool = bw.ArrayPool(sweep_sizes_for(spec, dram_total, threads)[-1])
    sweep_extras, mem_ceilings, sweep_notes = _sweep(host, spec, team, stages, dram_total, pool,
                                                     where)
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
    lowp, not_measured = _low_precision(spec, arch, threads, bool(host.flags))
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
                dram_end, scalar=scalar)


def thread_counts(threads, available: int) -> tuple[int, ...]:
    """The thread counts to measure, ascending: None -> every available CPU; an int -> that
    one; a sequence of ints and 'all' (--threads 1,2,all) -> each, 'all' = `available`."""
    if threads is None:
        return (available,)
    if isinstance(threads, (int, str)):
        threads = (threads,)
    counts = aff.resolve_counts(threads, available)
    if not counts or counts[0] < 1:
        raise ProbeError(f"--threads must be at least 1; got {list(threads)}")
    return counts


def checked_cpus(cpus) -> tuple[int, ...] | None:
    """--cpus as a sorted tuple, each one checked against this process's mask."""
    if cpus is None:
        return None
    cpus = tuple(sorted(set(int(c) for c in cpus)))
    aff.check_cpus(cpus, aff.allowed_cpus())
    return cpus


def probe_cpu(mode: str = "default", threads=None,
              progress: Progress | None = None,
              load_sources: machine.LoadSources | None = None,
              cpus=None) -> MachineProfile:
    """Measure this CPU's roofline: bandwidth per memory level, peak FLOP/s per precision,
    an intensity sweep and the overhead floor. Returns the profile (writes nothing).
    Other work on the machine meanwhile is measured too (load.py; `load_sources` fakes).

    `threads`: None (all CPUs), a count, or several counts (e.g. (1, 2, 'all')): the
    largest gets the whole probe, the others the scaling numbers (scaling.py,
    extras.scaling). `cpus`: run on these CPUs only (affinity.py); the process's mask
    is put back when the probe returns."""
    require("numba", "cpu", "the CPU probe")
    from .runner import all_threads, release_frames

    spec = get_mode(mode)
    t_start = time.perf_counter()
    pinned = checked_cpus(cpus)
    host = detect_host()
    allowed = pinned or aff.allowed_cpus()
    # a cgroup CPU quota (docker --cpus, k8s limits.cpu) leaves the mask whole: 'all' is
    # the threads the quota can keep busy (review s21 r2 F1), within numba's pool
    quota = cgroup.cpu_quota()
    available = len(allowed) if allowed else host.threads
    quota = quota if quota is not None and quota.cpus < available else None   # binding only
    most, pool_note = all_threads(min(available, quota.threads) if quota else available)
    counts = thread_counts(threads, most)
    asked = threads if isinstance(threads, (tuple, list)) else (threads,)
    pool_note = pool_note if threads is None or aff.ALL in asked else None
    if pinned and counts[-1] > len(pinned):
        raise InputError(aff.too_many_threads(counts[-1], pinned))
    before = aff.allowed_cpus()
    try:
        if pinned:
            aff.pin(pinned)   # before numba's pool starts (kernels, Team): workers inherit it
        profile = _probe(spec, counts, host, allowed, pinned, progress, load_sources,
                         t_start, quota)
    except BaseException as exc:   # Ctrl-C too: a kept traceback must not hold the arrays
        release_frames(exc)
        raise
    finally:
        if pinned:
            aff.pin(before)
    if pool_note and profile.measured is not None:
        from dataclasses import replace

        m = profile.measured
        profile = replace(profile, measured=replace(m, notes=(*m.notes, pool_note)))
    return profile


def _probe(spec: ModeSpec, counts: tuple[int, ...], host: HostInfo, allowed, pinned,
           progress, load_sources, t_start: float,
           quota: cgroup.CpuQuota | None = None) -> MachineProfile:
    """The measurements of probe_cpu, on the CPUs already chosen (and under `quota`)."""
    from ...hardware.cpu_detect import detect_microarch

    threads = counts[-1]
    sources = load_sources or machine.LoadSources()
    loadavg = machine.loadavg_1m(sources)   # before the probe adds its own load
    arch = detect_microarch(host.vendor, host.family, host.model, host.flags, host.cpu_model)
    stages = _Stages(progress, {"compile": 1, "clock": 1, "flops": 2, "sweep": 10,
                                "stream": 4 if len(spec.stream_levels) > 1 else 1,
                                "intensity": 3, "gemm": 2,
                                "lowp": 2 if spec.low_precision else 0.01,
                                "overhead": 1, "drift": 1,
                                "scaling": 1.5 * (len(counts) - 1) or 0.01})
    stages.within("compile", 0.0)
    from . import kernels  # noqa: F401  (compiles or loads the cached kernels)

    # sized for the team that runs (s24 h1 F1): every size 1..N took the pool of the
    # largest, shrinking the set (or refusing it) where the real team's arrays fit; the
    # scaling rows' smaller pools are built after this one is gone (_measure returned)
    dram_total, mem_notes = dram_working_set(host, spec, threads=threads)
    before = machine.snapshot(sources)
    with Team(threads) as team:
        raw = _measure(spec, team, host, arch, stages, dram_total,
                       placement(host, allowed, pinned, threads))
    if len(counts) > 1:
        raw.scaling = _scaling(counts, raw, stages)
    stages.finish("scaling")
    raw.load = machine.machine_load(before, machine.snapshot(sources), threads, loadavg,
                                    sources)
    raw.notes[:0] = mem_notes
    raw.affinity = _affinity_record(pinned, allowed, quota)
    if quota is not None:
        raw.notes.append(cgroup.quota_note(quota, threads,
                                           len(allowed) if allowed else host.threads))
    return _assemble(raw, spec, host, arch, threads, time.perf_counter() - t_start)


def _scaling(counts: tuple[int, ...], raw: _Raw, stages: _Stages) -> dict:
    """The other counts' scaling numbers beside the full run's (scaling.py)."""
    threads = counts[-1]
    ws = {p["level"]: p["chosen_bytes_per_thread"]
          for p in raw.sweep_extras.get("plateaus", ()) if p["level"] in scaling.LEVELS}
    # the reference row is the roof: DRAM as _assemble writes it (add's where triad's
    # samples were disturbed, dram_ceiling.dram_from_add)
    mem = dict(raw.mem_ceilings)
    if "DRAM" in mem:
        mem["DRAM"] = dram_from_add(mem["DRAM"], raw.stream.get("DRAM") or {})[0]
    ref = scaling.reference_row(threads, mem, raw.peaks, ws)
    return scaling.measure_scaling(counts, ref, ws,
                                   progress=lambda f: stages.within("scaling", f))


def _affinity_record(pinned: tuple[int, ...] | None, allowed,
                     quota: cgroup.CpuQuota | None = None) -> dict:
    """extras.affinity: the CPUs the probe ran on, whether --cpus set them, numba's layer,
    and the cgroup CPU quota (None where none is set)."""
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:   # no parallel region has run (a faked probe)
        layer = None
    return {"cpu_quota": quota.to_dict() if quota else None,
            "cpus": aff.format_cpu_list(allowed) if allowed else None,
            "cpu_list": list(allowed) if allowed else None,
            "pinned": pinned is not None, "threading_layer": layer,
            "method": ("os.sched_setaffinity on every thread of the process before the "
                       "measurements (--cpus); threads float within the set, one thread per "
                       "CPU is not enforced" if pinned is not None else
                       "not pinned: the process's own affinity mask (os.sched_getaffinity)"
                       if allowed else "not pinned: this OS gives no affinity mask to read "
                       "(no os.sched_getaffinity); the OS scheduler places the threads")}


def _low_precision(spec: ModeSpec, arch, threads: int, flags_read: bool = True):
    """bf16/fp16/int8 through torch where the CPU has a fast path; reasons otherwise
    (`flags_read`: False where the OS shows no instruction-set flags, as on Windows)."""
    measured, reasons = [], {}
    for prec in ("bf16", "fp16", "int8"):
        path = arch.fast_path(prec) if arch else None
        if path is None:
            reasons[prec] = ("no fast path on this CPU: its flags show no instructions for it"
                             if flags_read else "no fast path known for this CPU: the OS shows "
                             "no instruction-set flags to check (none on Windows), and "
                             "rooflab's table lists none for its design")
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
