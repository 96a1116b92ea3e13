"""How many CPUs this process may use: one answer for every probe that shares them out.

Where the OS has no os.sched_getaffinity (macOS, Windows) the gloo ranks of `probe --comm`
took one torch thread each while the rank's own CPU probe and the BLAS check counted every
CPU (review s23 r3 F9): each now counts the same CPUs. A cgroup CPU quota (docker --cpus=2,
k8s limits.cpu) leaves the mask whole, so it is applied too (review s24 r2 F11: two --comm
ranks under a 2-CPU quota on a 64-CPU host took 32 torch threads each).
"""

from __future__ import annotations

import os

from ..hardware import cgroup


def mask_cpus() -> int:
    """The CPUs in this process's affinity mask (taskset, a batch job's cpuset) where the OS
    says it (Linux); elsewhere every logical CPU, os.cpu_count(). A library's default
    thread count (OpenBLAS, OpenMP) is this, not the quota."""
    if hasattr(os, "sched_getaffinity"):
        mask = os.sched_getaffinity(0)
        if mask:
            return len(mask)
    return os.cpu_count() or 1


def usable_cpus() -> int:
    """The CPUs this process can keep busy: its mask (mask_cpus), at most the threads a
    cgroup CPU quota can keep busy, ceil(quota / period), as the CPU probe's 'all' counts
    them (probe/cpu/suite.py)."""
    cpus = mask_cpus()
    # the module's paths, looked up now (tests point them at fake files)
    quota = cgroup.cpu_quota(cgroup.PROC_CGROUP, cgroup.CGROUP_ROOT)
    return min(cpus, quota.threads) if quota is not None else cpus
