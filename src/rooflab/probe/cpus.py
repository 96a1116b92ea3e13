"""How many CPUs this process may use: one answer for every probe that shares them out.

Where the OS has no os.sched_getaffinity (macOS, Windows) the gloo ranks of `probe --comm`
took one torch thread each while the rank's own CPU probe and the BLAS check counted every
CPU (review s23 r3 F9): each now counts the same CPUs.
"""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs in this process's affinity mask (taskset, a batch job's cpuset) where the OS
    says it (Linux); elsewhere every logical CPU, os.cpu_count()."""
    if hasattr(os, "sched_getaffinity"):
        mask = os.sched_getaffinity(0)
        if mask:
            return len(mask)
    return os.cpu_count() or 1
