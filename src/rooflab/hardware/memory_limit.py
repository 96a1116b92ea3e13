"""The memory this process may use: the host's MemAvailable and a cgroup memory limit.

`docker run --memory=1g`, a Kubernetes `limits.memory` and a Slurm `--mem` set a cgroup
limit (v2 `memory.max`; v1 `memory.limit_in_bytes`) that /proc/meminfo does not show:
inside the container MemAvailable is the host's (20 GiB on a machine whose container may
use 1 GiB), and going past the limit gets the process OOM-killed with no message (review
s24 r2 F1, F8). The free part of a limit is the limit less what the cgroup is charged now,
less its inactive file cache (reclaimed before the OOM killer runs: the "working set" that
`docker stats` and the kubelet compare with the limit). The same walk as the CPU quota's
(hardware/cgroup.py): this process's cgroup and each ancestor, the tightest wins.
Under v1 docker mounts only the container's own cgroup, so a limit on a parent (docker
--cgroup-parent, a pod-level limit, a Slurm job above its step) is on no visible path:
v1's memory.stat `hierarchical_memory_limit` (the least limit up the tree) counts too
(s24 h1 F5). v2 has no such key: there a parent's limit counts only where the parent's
directory is visible under the mount (cgroupns=host, systemd slices, Slurm); under a
private cgroup namespace (docker's default on v2, containerd's pods) no file inside shows it.
`ulimit -v` (RLIMIT_AS) caps the address space instead: what the process has mapped now
(VmSize, large with numba's or torch's libraries loaded) and the numba pool's threads still
to start come off it (address_space.py; s26 fC).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..units import fmt_bytes_binary
from .address_space import address_space
from .cgroup import controller_dirs
from .os_files import read as _read
from .os_files import to_int as _int

MEMINFO = Path("/proc/meminfo")
PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")
# v1 writes "no limit" as LONG_MAX rounded down to a page (9223372036854771712)
UNLIMITED = 2**60


@dataclass(frozen=True)
class MemoryLimit:
    """A cgroup memory limit, what the cgroup is charged now (less reclaimable file
    cache), and the limit file's path."""

    limit: int
    usage: int
    source: str
    # "cgroup", or "address space": `ulimit -v`, whose usage is the mapped address space
    kind: str = "cgroup"

    @property
    def free(self) -> int:
        """Bytes this cgroup may still allocate before the OOM killer runs."""
        return max(0, self.limit - self.usage)

    @property
    def named(self) -> str:
        """Which limit, in a few words: '/sys/fs/cgroup/memory.max, this process's cgroup'
        or '`ulimit -v` (RLIMIT_AS)'."""
        if self.kind == "address space":
            return "`ulimit -v` (RLIMIT_AS, address space)"
        return f"{self.source}, this process's cgroup"

    def describe(self) -> str:
        """'this process's cgroup allows 1 GiB (/sys/fs/cgroup/memory.max), 200 MiB of
        it in use' (a Slurm job or a systemd slice as much as a container: s24 h1 F6)."""
        if self.kind == "address space":
            return (f"`ulimit -v` allows this process {fmt_bytes_binary(self.limit)} of "
                    f"address space ({self.source}), {fmt_bytes_binary(self.usage)} of it "
                    f"taken")
        return (f"this process's cgroup allows {fmt_bytes_binary(self.limit)} "
                f"({self.source}), {fmt_bytes_binary(self.usage)} of it in use")


def parse_meminfo(text: str) -> tuple[int | None, int | None]:
    """(MemTotal, MemAvailable) in bytes from /proc/meminfo's text."""
    vals = {}
    for line in text.splitlines():
        m = re.match(r"(\w+):\s+(\d+)\s*kB", line)
        if m:
            vals[m.group(1)] = int(m.group(2)) * 1024
    return vals.get("MemTotal"), vals.get("MemAvailable")


def _stat(text: str, key: str) -> int:
    m = re.search(rf"^{key} (\d+)$", text, re.M)
    return int(m.group(1)) if m else 0


def _limit_in(d: Path, v2: bool) -> MemoryLimit | None:
    """The limit set in cgroup directory `d`, None where it sets none (or cannot be read)."""
    name, usage_name, stat_key = (("memory.max", "memory.current", "inactive_file") if v2 else
                                  ("memory.limit_in_bytes", "memory.usage_in_bytes",
                                   "total_inactive_file"))
    limit = _int(_read(d / name))   # "max" (v2) reads as None: no limit
    usage = _int(_read(d / usage_name))
    if usage is None:
        return None
    stat = _read(d / "memory.stat")
    source = str(d / name)
    hier = 0 if v2 else _stat(stat, "hierarchical_memory_limit")
    if 0 < hier < UNLIMITED and not (limit and limit <= hier):
        # an ancestor's limit, its usage unseen: this cgroup's usage is the best known
        limit, source = hier, f"{d / 'memory.stat'} hierarchical_memory_limit, a parent's"
    if not limit or limit >= UNLIMITED:
        return None
    cache = _stat(stat, stat_key) or (0 if v2 else _stat(stat, "inactive_file"))
    return MemoryLimit(limit, max(0, usage - cache), source)


def address_space_limit(**kw) -> MemoryLimit | None:
    """`ulimit -v` as a MemoryLimit (address_space.address_space's arguments)."""
    got = address_space(**kw)
    return MemoryLimit(*got, kind="address space") if got else None


def cgroup_limits(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT,
                  mounts: dict[str, str] | None = None) -> list[MemoryLimit]:
    """The limits set on this process's cgroup and each ancestor, v2 or v1 (mounts:
    cgroup.mount_roots of /proc/self/mountinfo, None to read it)."""
    dirs = controller_dirs(_read(proc_cgroup) or "", root, "memory", mounts=mounts)
    return [lim for d, v2 in dirs if (lim := _limit_in(d, v2))]


def memory_limit(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT,
                 address_space=..., mounts: dict[str, str] | None = None,
                 threads: int | None = None) -> MemoryLimit | None:
    """The tightest memory limit (least free) over this process's cgroup and its
    ancestors, v2 or v1, and `ulimit -v` (address_space: a MemoryLimit or None, ...
    reads this process's, with numba's pool started for `threads`, None: all of it);
    None where none is set or the files are absent (macOS, Windows, no cgroup mount)."""
    found = cgroup_limits(proc_cgroup, root, mounts)
    space = (address_space_limit(threads=threads) if address_space is ...
             else address_space)
    found += [space] if space is not None else []
    return min(found, key=lambda lim: lim.free) if found else None


def memory_cap(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT,
               address_space=..., mounts: dict[str, str] | None = None
               ) -> MemoryLimit | None:
    """The smallest limit itself (not its free part): what a model may hold in all on
    this machine under its cgroup or `ulimit -v`, the host's RAM aside (host.py records
    it, `llm --on PROFILE` judges the fit against it). Only the limits count here: numba's
    pool is not started for `ulimit -v`'s VmSize (detect_host runs in every verb)."""
    found = cgroup_limits(proc_cgroup, root, mounts)
    space = (address_space_limit(pool=lambda n: 0) if address_space is ...
             else address_space)
    found += [space] if space is not None else []
    return min(found, key=lambda lim: lim.limit) if found else None


def usable_memory(avail: int | None, limit: MemoryLimit | None) -> int | None:
    """What this process may still allocate: min(MemAvailable, the limit's free part);
    None where neither is known."""
    known = [x for x in (avail, limit.free if limit else None) if x is not None]
    return min(known) if known else None


def where_memory(avail: int | None, limit: MemoryLimit | None) -> str:
    """Which of the two bounds binds, in words (for an error or a note)."""
    if limit is not None and (avail is None or limit.free <= avail):
        return limit.describe()
    return f"only {fmt_bytes_binary(avail or 0)} of memory is available (MemAvailable, {MEMINFO})"
