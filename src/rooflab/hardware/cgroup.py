"""The CPU time a container may use: the cgroup CFS bandwidth quota.

`docker run --cpus=2` and a Kubernetes `limits.cpu: 2` set a quota (cgroup v2 `cpu.max`
"200000 100000"; v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) and leave the affinity mask
whole, so os.sched_getaffinity still lists every host CPU. Sixty-four threads under a
two-CPU quota spend each period's budget in a few milliseconds and then stall: "all"
threads oversubscribe the budget, and the nominal roof of the host's 32 cores is not this
container's. Go 1.25 sizes GOMAXPROCS from the same files for the same reason
(golang/go#73193, runtime/cgroup_linux.go). Pure parsing plus small file reads; None
wherever no quota is set or the files are absent (macOS, Windows, no cgroup mount).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..units import fmt_fraction
from .os_files import read as _read

PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_MOUNTINFO = Path("/proc/self/mountinfo")


@dataclass(frozen=True)
class CpuQuota:
    """A CFS bandwidth limit: `cpus` CPUs' worth of time per period (quota / period)."""

    quota_us: int
    period_us: int
    source: str        # the file it came from, and its text

    @property
    def cpus(self) -> float:
        return self.quota_us / self.period_us

    @property
    def threads(self) -> int:
        """Threads the quota can keep busy: ceil(quota / period), at least 1."""
        return max(1, math.ceil(self.cpus - 1e-9))

    @property
    def fits(self) -> int:
        """Threads that stay within the quota: floor(quota / period), at least 1 (a
        1.5-CPU quota fits one thread; two are throttled every period)."""
        return max(1, math.floor(self.cpus + 1e-9))

    def to_dict(self) -> dict:
        return {"cpus": self.cpus, "quota_us": self.quota_us, "period_us": self.period_us,
                "source": self.source}


def parse_cpu_max(text: str) -> tuple[int, int] | None:
    """cgroup v2 cpu.max: 'QUOTA PERIOD' in microseconds, QUOTA 'max' when unlimited."""
    parts = text.split()
    if not parts or parts[0] == "max" or not parts[0].isdigit():
        return None
    period = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 100000
    quota = int(parts[0])
    return (quota, period) if quota > 0 and period > 0 else None


def _v1(quota_text: str | None, period_text: str | None) -> tuple[int, int] | None:
    """cgroup v1: cpu.cfs_quota_us (-1 when unlimited) and cpu.cfs_period_us."""
    try:
        quota, period = int(quota_text or "-1"), int(period_text or "100000")
    except ValueError:
        return None
    return (quota, period) if quota > 0 and period > 0 else None


def mount_roots(text: str) -> dict[str, str]:
    """{mount point: the cgroup it shows} of each cgroup/cgroup2 mount in
    /proc/self/mountinfo's text (field 4 is the root of the mount inside its filesystem:
    '/' for a whole hierarchy or a private cgroup namespace's; the container's own cgroup
    where a runtime bind-mounts only that subtree, as docker does under v1 and LXC may)."""
    out = {}
    for line in text.splitlines():
        head, _, tail = line.partition(" - ")
        fields = head.split()
        if len(fields) >= 5 and tail.split()[:1] in (["cgroup"], ["cgroup2"]):
            out[fields[4]] = fields[3]
    return out


def _dirs(base: Path, path: str, mount_root: str = "/") -> list[Path]:
    """The cgroup's directory and each ancestor up to the mount (a parent's limit holds
    for its children too; the smallest on the path wins, as systemd, the JVM and Go read
    it). `path` (/proc/self/cgroup's) is relative to the mount's root where it lies under
    it (mountinfo: the mount shows only that subtree). Else, inside a container whose
    mount is its own cgroup, the path in /proc/self/cgroup may not exist under it: the
    mount itself counts. A path with '..' is outside this cgroup namespace, whose mount
    holds none of its ancestors: none."""
    rel = [p for p in path.strip("/").split("/") if p]
    top = [p for p in mount_root.strip("/").split("/") if p]
    if ".." in rel:
        return []
    if top and rel[:len(top)] == top:
        rel = rel[len(top):]
    out = [base.joinpath(*rel[:i]) for i in range(len(rel), -1, -1)]
    return [d for d in out if d.is_dir()]


def controller_dirs(proc_text: str, root: Path, controller: str,
                    v1_mounts: tuple[str, ...] = (), mounts: dict[str, str] | None = None
                    ) -> list[tuple[Path, bool]]:
    """(directory, is it v2) of this process's cgroup and each ancestor where `controller`'s
    files are: the v2 unified hierarchy, or the v1 controller's mount (named as in
    /proc/self/cgroup, then `v1_mounts`). proc_text: /proc/self/cgroup's text; mounts:
    mount_roots() of /proc/self/mountinfo (None: read it)."""
    if mounts is None:
        mounts = mount_roots(_read(PROC_MOUNTINFO))
    out: list[tuple[Path, bool]] = []

    def walk(base: Path, path: str) -> list[Path]:
        return _dirs(base, path, mounts.get(str(base), "/"))

    for line in proc_text.splitlines():
        hier, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hier == "0" and controllers == "":          # v2 unified hierarchy
            bases = [root / "unified", root] if (root / "unified").is_dir() else [root]
            out += [(d, True) for b in bases for d in walk(b, path)]
        elif controller in controllers.split(","):     # v1: the controller's own mount
            for name in dict.fromkeys((controllers, *v1_mounts)):
                out += [(d, False) for d in walk(root / name, path)]
    return out


def cpu_quota(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> CpuQuota | None:
    """The tightest CFS quota over this process's cgroup and its ancestors, None if none."""
    found: list[CpuQuota] = []
    for d, v2 in controller_dirs(_read(proc_cgroup) or "", root, "cpu", ("cpu,cpuacct", "cpu")):
        if v2:
            got = parse_cpu_max(_read(d / "cpu.max"))
            if got:
                found.append(CpuQuota(*got, f"{d / 'cpu.max'}: '{_read(d / 'cpu.max')}'"))
            continue
        got = _v1(_read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us"))
        if got:
            found.append(CpuQuota(*got, f"{d / 'cpu.cfs_quota_us'}: {got[0]}, "
                                        f"cpu.cfs_period_us: {got[1]}"))
    return min(found, key=lambda q: q.cpus) if found else None


def _threads(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def sustained_share(quota_cpus: float | None, threads: int) -> float | None:
    """The share of its burst rate each of `threads` CPU-bound threads keeps over a whole
    period under a `quota_cpus` quota (quota / threads); None where the quota does not bind
    (the threads fit in it, or there is none)."""
    if not quota_cpus or threads <= quota_cpus + 1e-9:
        return None
    return quota_cpus / threads


def quota_note(quota: CpuQuota, threads: int, host_cpus: int) -> str:
    """What the quota means for this probe: how many threads it ran, what the nominal
    counts, and, when the threads exceed the quota, that the measured ceilings are burst
    rates and what sustained work gets. A share under one CPU (docker --cpus=0.5, k8s
    500m) throttles even one thread: there is no --threads to advise then (review s24
    r2 F5: "--threads 1 or fewer" after a 1-thread run)."""
    cpus = f"{quota.cpus:g} CPU{'s' if quota.cpus > 1 else ''}"
    text = (f"this process's cgroup limits it to {cpus} of time ({quota.source}) on a host "
            f"with {host_cpus} CPUs: 'all' threads means {quota.threads}, and the nominal "
            f"roof counts at most {quota.cpus:g} cores")
    share = sustained_share(quota.cpus, threads)
    if share is None:
        return text
    budget_ms, period_ms = quota.quota_us / 1000, quota.period_us / 1000
    run_ms = budget_ms / threads
    verb = "spends" if threads == 1 else "spend"
    text += (f"; the CFS scheduler lets it run {budget_ms:g} ms of CPU time in each "
             f"{period_ms:g} ms period, which {_threads(threads)} {verb} in {run_ms:.3g} ms "
             f"before waiting for the next period: the measured ceilings are burst rates of "
             f"{_threads(threads)} (a best-of sample shorter than {run_ms:.3g} ms can run "
             f"unthrottled), and sustained work (running longer than one period) gets "
             f"{fmt_fraction(share)} of them, the quota's {cpus} that the nominal roof counts")
    if quota.cpus >= 1:
        return text + (f"; for sustained figures keep the threads within the quota "
                       f"(measure with --threads {quota.fits} or fewer)")
    return text + ("; a share under one CPU throttles even one thread, so no --threads "
                   "setting avoids it")
