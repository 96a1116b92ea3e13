"""Flags on the CPU probe's measured ceilings: a peak above or far below its nominal
figure, and a reference that drifted between the start and the end of the probe."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...model.ceiling import Ceiling, Roof
from ...units import fmt_fraction, fmt_rate, fmt_times, si

OVERSHOOT = 1.05     # measured above nominal by more than this is flagged
# Measured below this fraction of nominal is flagged: the nominal roof is taken at the
# clock measured in this run, so the FMA kernel reaches ~100 % of it here (bf16/int8
# through torch 84-90 %); far below, its samples were all held up by other load, or the
# vector units run slower than the integer clock (AVX-512 frequency offsets).
UNDERSHOOT = 0.75
DRIFT = 0.05         # start/end reference measurements differing by more is flagged
# DRAM triad measured again at the end: a VM's memory bandwidth can jump between states
# within seconds (docs/probe.md: 37 vs 55 GB/s on the dev VM); more than this is said.
DRAM_DRIFT = 0.10


# From a factor of this between the start and the end the drift is said as a factor: the
# percent of a reference held up by other load read "+23811.9 %" (review s33 I).
DRIFT_AS_FACTOR = 2.0


def drift_note(start: float, end: float, limit: float = DRIFT) -> str | None:
    """A note when the fp64 FMA reference (FLOP/s) measured at the end differs from the
    start by > limit: a percent up to a factor of DRIFT_AS_FACTOR, a factor from there."""
    change = end / start - 1
    if abs(change) <= limit:
        return None
    factor = max(end / start, start / end)
    if factor < DRIFT_AS_FACTOR:
        return (f"the fp64 FMA reference moved {100 * change:+.1f} % between the start and "
                f"the end of the probe (clock drift or other load); rerun or use --full")
    held = "start" if end > start else "end"
    return (f"the fp64 FMA reference ran {fmt_times(factor)} "
            f"{'faster' if end > start else 'slower'} at the end of the probe than at the "
            f"start ({fmt_rate(start, 'fp64')} then {fmt_rate(end, 'fp64')}): the machine was "
            f"busy, other load held the {held} measurement up; rerun on a quiet machine")


def dram_drift_note(start: float, end: float, limit: float = DRAM_DRIFT,
                    add: float | None = None) -> str | None:
    """A note when DRAM triad at the end of the probe differs from the sweep's by > limit.
    `add`: the DRAM ceiling when add's rate replaced triad's (dram_ceiling.dram_from_add)."""
    change = end / start - 1
    if abs(change) <= limit:
        return None
    used = (f"the sweep's {si(start, 'B/s')}" if add is None else
            f"add's {si(add, 'B/s')} of the same run (triad's samples were disturbed)")
    return (f"DRAM triad read {si(start, 'B/s')} in the sweep and {si(end, 'B/s')} at the "
            f"end of the probe ({100 * change:+.0f} %): the host's memory bandwidth changed "
            f"during the run (other load, or a VM's memory moving between states); the DRAM "
            f"ceiling is {used}: rerun and compare before trusting it")


# STREAM's add and triad both count 24 B/element (2 loads, 1 store) and run back to back
# on the same arrays: more apart than this is a disturbed measurement, not the kernels.
STREAM_DISAGREE = 0.20


def stream_consistency_note(stream: dict, level: str = "DRAM",
                            limit: float = STREAM_DISAGREE) -> str | None:
    """A note when triad and add at one level differ by more than `limit` (review 11a
    F-C: add 23.0 vs triad 53.6 GB/s at the same 512 MiB passed unremarked).
    `stream`: the probe's extras["stream"] (level -> kernel -> {"bytes_per_s": ...})."""
    got = stream.get(level) or {}
    if "triad" not in got or "add" not in got:
        return None
    triad, add = got["triad"]["bytes_per_s"], got["add"]["bytes_per_s"]
    if max(triad, add) <= (1 + limit) * min(triad, add):
        return None
    return (f"{level} triad ({si(triad, 'B/s')}) and add ({si(add, 'B/s')}) move the same "
            f"24 B/element but differ by {fmt_fraction(max(triad, add) / min(triad, add) - 1)} "
            f"(more than {fmt_fraction(limit)}): the {level} measurement was disturbed (other "
            f"load, or the host's memory bandwidth changed between them); rerun before trusting "
            f"the {level} ceiling")


# The intensity sweep's in-place kernel moves 16 real bytes per element; STREAM triad moves
# 32 with write-allocate and counts 24, so real traffic can read up to 32/24 of the roof.
SWEEP_OVER_ROOF = 32 / 24
# Against the real-traffic ceiling (the same units as the sweep) a point above it by more
# than timing noise is unexplained; 5 %, the tolerance report's above-roof test allows.
SWEEP_OVER_REAL = 1.05


def sweep_above_roof_note(points: list[dict], dram: float | None,
                          real: float | None = None) -> str | None:
    """A note when intensity-sweep points run above the DRAM roof (review 11a F-D). With
    `real`, the profile's DRAM (real traffic) ceiling, the sweep (real traffic: in place,
    no write-allocate) is compared with it, the same units (review 17a N13b); without it
    (older profiles) with the STREAM-counted `dram`, where up to 4/3 above is expected."""
    if real:
        return _sweep_above_real(points, real)
    if not dram or not points:
        return None
    top = max(points, key=lambda p: p["bytes_per_s"])
    ratio = top["bytes_per_s"] / dram
    if ratio <= 1.01:       # at the roof within timing resolution: nothing to explain
        return None
    text = (f"intensity sweep: k={top['k']} reads {si(top['bytes_per_s'], 'B/s')}, "
            f"{fmt_fraction(ratio)} of the DRAM roof ({si(dram, 'B/s')}). The sweep counts real "
            f"traffic (in place, x = f(x): 16 B/element, no write-allocate) while the "
            f"roof is STREAM-counted triad (24 of the 32 B it moves)")
    if ratio <= SWEEP_OVER_ROOF:
        return text + ": a sweep point up to 4/3 above the roof is expected"
    return text + (": more than 4/3 above is not explained by the byte models; the DRAM "
                   "ceiling reads low (the host's memory bandwidth changed); rerun")


def _sweep_above_real(points: list[dict], real: float) -> str | None:
    """The sweep's top point against the DRAM (real traffic) ceiling: above it by more
    than SWEEP_OVER_REAL the ceiling reads low."""
    if not points:
        return None
    top = max(points, key=lambda p: p["bytes_per_s"])
    ratio = top["bytes_per_s"] / real
    if ratio <= SWEEP_OVER_REAL:
        return None
    return (f"intensity sweep: k={top['k']} reads {si(top['bytes_per_s'], 'B/s')}, "
            f"{fmt_fraction(ratio)} of the DRAM (real traffic) ceiling ({si(real, 'B/s')}), the "
            f"same units (the sweep runs in place, x = f(x): its 16 B/element are what the "
            f"memory moves): above it by more than {fmt_fraction(SWEEP_OVER_REAL - 1)} is not "
            f"explained by the byte models; the DRAM ceilings read low (the host's memory "
            f"bandwidth changed during the probe); rerun")


def numa_note(nodes: int | None) -> str | None:
    """What the probe does about memory placement on a host with several NUMA nodes."""
    if not nodes or nodes <= 1:
        return None
    return (f"{nodes} NUMA nodes: each thread first-touches the arrays it streams (as "
            f"STREAM's parallel init loop does), so the DRAM figure spreads over the nodes "
            f"the threads ran on; threads are not pinned one per CPU (--cpus keeps the "
            f"probe on chosen CPUs, e.g. one node's; with numba's omp layer "
            f"OMP_PROC_BIND=spread OMP_PLACES=cores binds each thread; or run under "
            f"numactl/likwid-pin); a "
            f"program that allocates and fills its arrays on one thread reads one node's "
            f"bandwidth")


def _flag_against_nominal(measured: list[Ceiling], nominal: Roof | None, outside,
                          say) -> list[Ceiling]:
    """Each compute ceiling whose value is `outside(measured, nominal)` gets `say(c, nom)`."""
    if nominal is None:
        return measured
    out = []
    for c in measured:
        nom = nominal.find_compute(c.precision, c.unit) if c.is_compute else None
        if nom is not None and outside(c.value, nom.value):
            c = replace(c, warnings=c.warnings + (say(c, nom),))
        out.append(c)
    return out


@dataclass(frozen=True)
class QuotaBurst:
    """A cgroup CPU quota below the probe's threads (docker --cpus=0.5, k8s 500m): the
    threads run at full speed until each period's share is spent, so best-of samples are
    burst rates while the nominal counts the quota's CPUs (the sustained rate).
    `burst_scale`: the nominal of the cores the threads ran on over the quota's nominal."""

    cpus: float
    threads: int
    burst_scale: float

    @property
    def share(self) -> float:
        """What sustained work keeps of a burst rate: the quota's CPUs over the threads."""
        return self.cpus / self.threads


def _overshoot_text(c: Ceiling, nom: Ceiling, arch, quota: QuotaBurst | None) -> str:
    head = (f"{c.label}: measured {fmt_rate(c.value, c.precision)} is "
            f"{fmt_fraction(c.value / nom.value)} of the nominal "
            f"{fmt_rate(nom.value, nom.precision)}")
    if quota is not None and c.value <= OVERSHOOT * nom.value * quota.burst_scale:
        # the quota explains it (review s24 r2 F5 addendum: this run knew the quota and
        # blamed the CPU's identity)
        cpus = f"{quota.cpus:g} CPU{'s' if quota.cpus > 1 else ''}"
        one = quota.threads == 1
        who = "its 1 thread" if one else f"its {quota.threads} threads"
        return (f"{head}, which counts this process's cgroup CPU quota of {cpus}; {who} "
                f"ran at full speed until each period's share was spent, so the measured "
                f"figure is a burst rate (the nominal of the "
                f"{'core it' if one else 'cores they'} ran on is "
                f"{fmt_rate(nom.value * quota.burst_scale, nom.precision)}), and sustained "
                f"work gets {fmt_fraction(quota.share)} of it, "
                f"{fmt_rate(c.value * quota.share, c.precision)} (see the quota note)")
    return (f"{head} for {arch.name}; the CPU may not be what it reports (a VM can mask "
            f"the microarchitecture) or the clock ran faster than measured")


def flag_overshoot(measured: list[Ceiling], nominal: Roof | None, arch,
                   quota: QuotaBurst | None = None) -> list[Ceiling]:
    """Measured above nominal by > 5 %: say so on the ceiling (the VM may mask the CPU;
    under a `quota` below the threads, up to the threads' own nominal is a burst rate)."""
    return _flag_against_nominal(
        measured, nominal, lambda got, nom: got > OVERSHOOT * nom,
        lambda c, nom: _overshoot_text(c, nom, arch, quota))


def flag_undershoot(measured: list[Ceiling], nominal: Roof | None) -> list[Ceiling]:
    """Measured below UNDERSHOOT x nominal: say so on the ceiling. Samples that were all
    slowed down alike show no spread, so the noise test stays silent on them."""
    return _flag_against_nominal(
        measured, nominal, lambda got, nom: got < UNDERSHOOT * nom,
        lambda c, nom: (f"{c.label}: measured {fmt_rate(c.value, c.precision)} is only "
                        f"{fmt_fraction(c.value / nom.value)} of the nominal "
                        f"{fmt_rate(nom.value, nom.precision)} "
                        f"at the clock measured in this run: other load held the kernel up "
                        f"throughout, or the vector units run at a lower clock than the "
                        f"integer clock (AVX-512 frequency offsets); rerun on a quiet machine"))


# A best sample this close to nominal shows the kernel ran at full speed at least once.
REACHED_NOMINAL = 0.95
GAVE_UP = "calibration gave up"


def soften_gave_up(measured: list[Ceiling], nominal: Roof | None) -> list[Ceiling]:
    """A compute ceiling whose calibration gave up ("the figure can read far low") but
    whose best sample reached nominal (within 5 %) is not low: the warning says the samples
    were disturbed and the best one still reached nominal instead."""
    if nominal is None:
        return measured
    out = []
    for c in measured:
        nom = nominal.find_compute(c.precision, c.unit) if c.is_compute else None
        if nom is not None and c.value >= REACHED_NOMINAL * nom.value:
            c = replace(c, warnings=tuple(
                (f"{c.label}: the samples were disturbed (calibration gave up: other load "
                 f"held calls up), but the best one still reached nominal "
                 f"({fmt_fraction(c.value / nom.value)} of {fmt_rate(nom.value, nom.precision)})")
                if GAVE_UP in w else w for w in c.warnings))
        out.append(c)
    return out


# Other work on the machine (load.py). Flagged above 10 % of the CPUs the probe's threads
# used: an idle server or desktop shows 1-3 % (daemons, kernel threads), which the best-of-
# many-samples rule absorbs; at 10 % a parallel region, which waits for its slowest
# thread, is held up in about 1 - 0.9^threads of its samples (19 % with 2 threads, 57 %
# with 8), enough to move the medians past the 5 % noise test and to leave no quiet
# sample for a long one.
OTHER_LOAD = 0.10
# Steal: time a VM's host gave our vCPUs to someone else. Above 5 % say so on its own
# (the guest cannot see that work in its own process list).
STEAL = 0.05


def _loadavg_clause(load) -> str:
    if load.loadavg_1m_before is None:
        return ""
    return (f" (and the load average was {load.loadavg_1m_before:.1f} on "
            f"{load.machine_cpus} CPUs before it started)")


def machine_load_notes(load, *, what: str = "the probe", figures: str = "measured ceilings",
                       low: str = "read low") -> list[str]:
    """Notes on other work during the probe (a load.MachineLoad): CPU time others took
    beyond the CPUs the probe left free, steal, or a busy start where nothing else is
    known. `what` ran and its `figures` `low` under the load: `rooflab bench --on` times
    kernels under the same check, "bench"'s "timed kernels" "read slow" (review s21 r7 F8)."""
    notes: list[str] = []
    share = load.contended_share
    if share is not None and share > OTHER_LOAD:
        if load.spare_cpus == 0:
            head = (f"other processes used {fmt_fraction(load.other_cpu_share)} of the CPUs while "
                    f"{what} ran")
        else:
            head = (f"other processes used {load.other_cpu_s / load.window_s:.2g} CPUs on "
                    f"average while {what} ran {load.threads} thread"
                    f"{'s' if load.threads != 1 else ''} on {load.cpus} "
                    f"CPUs, {fmt_fraction(share)} of the CPUs its threads needed")
        notes.append(f"{head}{_loadavg_clause(load)}: {figures} {low}; rerun on "
                     f"a quiet machine")
    elif (load.other_cpu_s is None and load.loadavg_1m_before is not None
          and load.loadavg_1m_before >= load.machine_cpus):
        notes.append(f"the load average was {load.loadavg_1m_before:.1f} on "
                     f"{load.machine_cpus} CPUs before {what} started: other work was "
                     f"probably running and {figures} may {low} (this system has "
                     f"no /proc/stat, so work during {what} was not measured); rerun on a "
                     f"quiet machine")
    if load.steal_share is not None and load.steal_share > STEAL:
        notes.append(f"the VM's host took {fmt_fraction(load.steal_share)} of the CPU time (steal) "
                     f"while {what} ran: other guests ran on the host's cores, so "
                     f"{figures} {low}; rerun when the host is quieter")
    return notes


def busy_start_warning(loadavg: float | None, machine_cpus: int) -> str | None:
    """Before the long work: a load average at or above the CPU count means other work
    is queued for every CPU, and it would compete with the probe."""
    if loadavg is None or loadavg < machine_cpus:
        return None
    return (f"the machine is busy: the 1-minute load average is {loadavg:.1f} on "
            f"{machine_cpus} CPUs; other work will lower the measured ceilings; stop "
            f"(Ctrl-C) and rerun on a quiet machine for reliable figures")


# The start check from a /proc/stat sample (load.start_sample) warns when others took this
# share of the CPU time the probe's threads need: the load-average rule it replaces fired
# when every CPU had work queued (about 100 %); 75 % leaves room for the sample's tick
# granularity (1 tick is 4 % of a CPU over 0.25 s) while a machine with one of two CPUs
# taken (50 %) is left to the note at the end, as before.
START_BUSY = 0.75


def busy_start_note(load) -> str | None:
    """Before the long work, from a short sample (a load.MachineLoad): other work on the
    CPUs this process may run on (its affinity mask), beyond those the probe's threads
    leave free, as the end-of-probe note counts it. The host-wide load average against
    every host CPU (busy_start_warning) ignored a container's cpuset and quota (review s24
    r2 F10); it stays where there is no /proc/stat to sample (macOS, Windows)."""
    if load.other_cpu_s is None:
        return busy_start_warning(load.loadavg_1m_before, load.machine_cpus)
    share = load.contended_share
    if share is None or share < START_BUSY:
        return None
    text = (f"the machine is busy: other processes kept "
            f"{load.other_cpu_s / load.window_s:.1f} of the {load.cpus} CPUs this process "
            f"may run on busy")
    if load.spare_cpus:
        text += (f", more than the {load.spare_cpus} the probe's {load.threads} "
                 f"thread{'s leave' if load.threads != 1 else ' leaves'} free")
    text += f" (/proc/stat over {load.window_s:.2g} s"
    if load.loadavg_1m_before is not None:
        text += (f"; the host-wide 1-minute load average is {load.loadavg_1m_before:.1f} "
                 f"on {load.machine_cpus} CPUs")
    return (text + "); other work will lower the measured ceilings; stop (Ctrl-C) and "
            "rerun on a quiet machine for reliable figures")
