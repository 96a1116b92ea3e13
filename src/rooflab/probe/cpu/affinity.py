"""Which CPUs the probe runs on (`rooflab probe --cpus 0-3,8`) and how many threads each
run of a scaling sweep uses (`--threads 1,2,4,all`).

numba has no pinning API of its own. Its three threading layers (omp, tbb, workqueue)
all start their worker threads with pthreads, which inherit the affinity mask of the
thread that creates them, so a mask set on the process before the pool starts confines
every layer to those CPUs (threads still float within the set). Binding one thread to
one CPU is the OpenMP runtime's job (OMP_PROC_BIND / OMP_PLACES) and only the omp layer
reads those variables (docs/probe.md, "Affinity").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...errors import InputError

ALL = "all"


def format_cpu_list(cpus) -> str:
    """(0, 1, 2, 3, 8) -> '0-3,8' (the kernel's cpulist syntax, as taskset -c takes it)."""
    xs = sorted(set(int(c) for c in cpus))
    runs: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        runs.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(runs)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-3,8' -> (0, 1, 2, 3, 8): CPU numbers and inclusive ranges, comma-separated."""
    out: set[int] = set()
    for part in str(text).replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise InputError(f"invalid value for '--cpus': it takes CPU numbers and ranges, "
                             f"e.g. 0-3,8 (as taskset -c and /sys/devices/system/cpu/online "
                             f"write them); got '{text}' ('{part}' is not a number or a "
                             f"rising range)")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))


def allowed_cpus() -> tuple[int, ...] | None:
    """The CPUs this process may run on (None where the OS does not say: macOS, Windows)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    return tuple(sorted(os.sched_getaffinity(0)))


def check_cpus(cpus: tuple[int, ...], allowed: tuple[int, ...] | None) -> None:
    """Every requested CPU must be one this process may use (cgroup, taskset, offline)."""
    if allowed is None:
        raise InputError("--cpus needs os.sched_setaffinity (Linux); this system has none: "
                         "drop --cpus")
    missing = [c for c in cpus if c not in allowed]
    if missing:
        raise InputError(f"--cpus {format_cpu_list(cpus)}: CPU "
                         f"{format_cpu_list(missing)} {'is' if len(missing) == 1 else 'are'} "
                         f"not available to this process (it may run on "
                         f"{format_cpu_list(allowed)}: os.sched_getaffinity); choose among "
                         f"those")


def pin(cpus: tuple[int, ...]) -> None:
    """Restrict every thread of this process to `cpus`. Linux's sched_setaffinity acts on
    one thread: threads already running (the BLAS's pool, a numba pool started earlier in
    this process) are moved one by one; threads started later inherit the mask."""
    tasks = Path("/proc/self/task")
    tids = [int(p.name) for p in tasks.iterdir()] if tasks.is_dir() else [0]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):   # a thread that just ended
            continue
    os.sched_setaffinity(0, cpus)


def too_many_threads(threads: int, cpus: tuple[int, ...]) -> str:
    """The error for more threads than --cpus gives CPUs (oversubscription measures the
    scheduler, not the machine)."""
    k = len(cpus)
    return (f"--threads {threads} is more than the {k} CPU{'s' if k != 1 else ''} of --cpus "
            f"{format_cpu_list(cpus)}: two threads would share a CPU; use at most {k} "
            f"thread{'s' if k != 1 else ''} ('all') or give more CPUs")


def parse_thread_counts(text: str) -> tuple[int | str, ...]:
    """'1,2,4,all' -> (1, 2, 4, 'all'); one number -> one count (today's single probe)."""
    out: list[int | str] = []
    for part in str(text).replace(" ", "").lower().split(","):
        if part == ALL:
            out.append(ALL)
        elif part.isdigit() and int(part) >= 1:
            out.append(int(part))
        else:
            raise InputError(f"invalid value for '--threads': it takes thread counts and "
                             f"'all', comma-separated (e.g. 4 or 1,2,4,all); got '{text}' "
                             f"('{part}' is not a count of at least 1)")
    return tuple(out)


def resolve_counts(counts, available: int) -> tuple[int, ...]:
    """Thread counts ascending, 'all' as `available`, duplicates dropped."""
    return tuple(sorted({available if c == ALL else int(c) for c in counts}))
