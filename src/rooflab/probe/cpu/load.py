"""Other work on the machine while the CPU probe runs: how much CPU time it took.

Linux: the CPUs' busy time from /proc/stat (user + nice + system + irq + softirq + steal,
summed over the CPUs the probe may run on) between two snapshots, minus the probe's own
CPU time (os.times(): user + system, children included), as a share of wall time x those
CPUs. `steal` on its own is time a VM's host ran something else on our vCPUs. The 1-minute
load average before the probe is an early hint (it also counts tasks waiting on I/O).
Without /proc/stat (macOS, Windows) only the load average is recorded, or nothing, and
`method` says so. Every source is injectable (LoadSources), so tests use fakes.

Field order of the cpu lines: proc(5), "/proc/stat": user nice system idle iowait irq
softirq steal guest guest_nice, in USER_HZ ticks (sysconf SC_CLK_TCK). guest time is
already counted in user, so it is not added again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

PROC_STAT = "/proc/stat"
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)   # user nice system irq softirq steal
_STEAL = 7


def read_proc_stat(path: str = PROC_STAT) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _clk_tck() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0   # USER_HZ on every Linux ABI


def _affinity() -> frozenset[int] | None:
    return frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def _own_cpu_s(t: Any) -> float:
    """The process's CPU time, all its threads and the children it waited for."""
    return (t.user + t.system + getattr(t, "children_user", 0.0)
            + getattr(t, "children_system", 0.0))


@dataclass(frozen=True)
class LoadSources:
    """Where the figures come from; tests pass fakes."""

    read_stat: Callable[[], str | None] = read_proc_stat
    times: Callable[[], Any] = os.times
    loadavg: Callable[[], tuple[float, float, float]] | None = getattr(os, "getloadavg", None)
    clock: Callable[[], float] = time.monotonic
    ticks_per_s: float = field(default_factory=_clk_tck)
    affinity: Callable[[], frozenset[int] | None] = _affinity
    machine_cpus: int = field(default_factory=lambda: os.cpu_count() or 1)
    platform: str = sys.platform


@dataclass(frozen=True)
class CpuTicks:
    """Busy and steal ticks summed over `cpus` CPUs of one /proc/stat reading."""

    busy: int
    steal: int
    cpus: int
    which: str   # "CPUs 0-1 (the probe's affinity)" or "all CPUs"


def parse_proc_stat(text: str, cpus: Collection[int] | None = None) -> CpuTicks | None:
    """Busy/steal ticks over the CPUs in `cpus` (per-CPU lines), or over all CPUs (the
    aggregate line) when `cpus` is None or some of them have no line. None: no cpu line."""
    total: list[int] | None = None
    per: dict[int, list[int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu"):
            continue
        try:
            vals = [int(v) for v in parts[1:]] + [0] * 8   # old kernels: no steal field
        except ValueError:
            continue
        if parts[0] == "cpu":
            total = vals
        elif parts[0][3:].isdigit():
            per[int(parts[0][3:])] = vals

    def ticks(vals: list[int]) -> tuple[int, int]:
        return sum(vals[i] for i in _BUSY_FIELDS), vals[_STEAL]

    if cpus and all(c in per for c in cpus):
        sums = [ticks(per[c]) for c in cpus]
        return CpuTicks(sum(b for b, _ in sums), sum(s for _, s in sums), len(sums),
                        f"CPUs {_cpu_list(cpus)} (the probe's affinity)")
    if total is None:
        return None
    busy, steal = ticks(total)
    return CpuTicks(busy, steal, max(1, len(per)), "all CPUs")


def _cpu_list(cpus: Collection[int]) -> str:
    """0,1,2,5 -> '0-2,5'."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(c)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


@dataclass(frozen=True)
class Snapshot:
    """One reading: wall clock (s), the process's CPU time (s), the CPUs' ticks."""

    wall_s: float
    own_cpu_s: float
    ticks: CpuTicks | None


def snapshot(sources: LoadSources = LoadSources()) -> Snapshot:
    text = sources.read_stat()
    ticks = parse_proc_stat(text, sources.affinity()) if text else None
    return Snapshot(sources.clock(), _own_cpu_s(sources.times()), ticks)


def loadavg_1m(sources: LoadSources = LoadSources()) -> float | None:
    """The 1-minute load average, or None where the system has none (Windows)."""
    if sources.loadavg is None:
        return None
    try:
        return float(sources.loadavg()[0])
    except OSError:
        return None


@dataclass(frozen=True)
class MachineLoad:
    """Other work on the machine while the probe ran. Shares are of wall time x `cpus`
    (the CPUs the probe could run on); None where the system does not tell."""

    other_cpu_share: float | None
    steal_share: float | None
    loadavg_1m_before: float | None
    cpus: int               # CPUs the probe could run on (whose ticks are counted)
    machine_cpus: int       # CPUs of the machine (what the load average is compared with)
    threads: int            # threads the probe ran
    window_s: float
    own_cpu_s: float
    other_cpu_s: float | None
    method: str

    @property
    def spare_cpus(self) -> int:
        """CPUs the probe's threads left free: other work there did not compete."""
        return max(0, self.cpus - self.threads)

    @property
    def contended_share(self) -> float | None:
        """Other work beyond the spare CPUs, as a share of the CPUs the threads used."""
        if self.other_cpu_s is None or self.window_s <= 0:
            return None
        busy = self.other_cpu_s / self.window_s - self.spare_cpus
        return max(0.0, busy) / max(1, min(self.threads, self.cpus))

    def to_dict(self) -> dict[str, Any]:
        return {"other_cpu_share": self.other_cpu_share, "steal_share": self.steal_share,
                "loadavg_1m_before": self.loadavg_1m_before, "cpus": self.cpus,
                "machine_cpus": self.machine_cpus, "threads": self.threads,
                "window_s": self.window_s, "own_cpu_s": self.own_cpu_s,
                "other_cpu_s": self.other_cpu_s, "contended_share": self.contended_share,
                "method": self.method}


OWN_CPU = "the probe's own CPU time (os.times, children included)"


def machine_load(before: Snapshot, after: Snapshot, threads: int, loadavg: float | None,
                 sources: LoadSources = LoadSources(), own_what: str = OWN_CPU
                 ) -> MachineLoad:
    """Other CPU time between two snapshots: busy ticks / ticks_per_s minus own CPU time,
    over wall x CPUs (floored at 0: tick accounting is coarser than the process's own).
    `own_what` says in `method` whose CPU time the snapshots' own_cpu_s is (the comm
    probe under torchrun subtracts every rank on the host, gathered, not its own)."""
    window = after.wall_s - before.wall_s
    own = after.own_cpu_s - before.own_cpu_s
    avg = ("1-minute load average before the probe (os.getloadavg)" if loadavg is not None
           else "no load average on this system")
    t0, t1 = before.ticks, after.ticks
    if t0 is None or t1 is None or t0.cpus != t1.cpus or window <= 0:
        cpus = len(sources.affinity() or ()) or sources.machine_cpus
        why = (f"no {PROC_STAT} on this system ({sources.platform})" if t0 is None or t1 is None
               else "the CPUs changed during the probe")
        return MachineLoad(None, None, loadavg, cpus, sources.machine_cpus, threads,
                           window, own, None, f"{why}: other work during the probe is not "
                           f"measured; {avg}")
    capacity = window * t0.cpus
    busy = (t1.busy - t0.busy) / sources.ticks_per_s
    other = max(0.0, busy - own)
    steal = max(0.0, (t1.steal - t0.steal) / sources.ticks_per_s)
    method = (f"{PROC_STAT} busy time (user+nice+system+irq+softirq+steal, "
              f"{t0.which}, {sources.ticks_per_s:g} ticks/s) over {window:.2f} s minus "
              f"{own_what}, as a share of wall time x {t0.cpus} CPUs; {avg}")
    return MachineLoad(other / capacity, steal / capacity, loadavg, t0.cpus,
                       sources.machine_cpus, threads, window, own, other, method)


# The start check's sample: long enough for 25 ticks per CPU at 100 Hz, short beside the
# probe's 5-40 s.
START_SAMPLE_S = 0.25


def start_sample(sources: LoadSources | None = None, threads: int | None = None,
                 window_s: float = START_SAMPLE_S,
                 sleep: Callable[[float], None] = time.sleep) -> MachineLoad:
    """Other work on the CPUs this process may run on, over a short sample before the
    probe starts (flags.busy_start_note words it). `threads`: the probe's ('all' by
    default: probe.cpus.usable_cpus, the affinity mask capped by a cgroup quota), so work
    on CPUs they leave free is not counted, as machine_load counts it at the end. Where
    there is no /proc/stat nothing is sampled: the load average alone is returned."""
    sources = sources or LoadSources()
    if threads is None:
        from ..cpus import usable_cpus

        threads = usable_cpus()
    loadavg = loadavg_1m(sources)
    before = snapshot(sources)
    if before.ticks is not None:
        sleep(window_s)
    return machine_load(before, snapshot(sources), threads, loadavg, sources,
                        own_what="rooflab's own CPU time")
