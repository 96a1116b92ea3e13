"""The probe's DRAM working set: how large, and whether it fits in this process's memory.

Large enough that no cache holds it (llc_multiple x the L3s this process's CPUs reach),
small enough for the memory the process may use: a quarter of MemAvailable, and under a
cgroup memory limit (docker --memory, Kubernetes limits.memory, Slurm --mem) the whole
footprint of the probe's arrays plus what the process still allocates (s24 r2 F1: a
1 GiB container was OOM-killed with no message).
"""

from __future__ import annotations

import sys

from ...errors import ProbeError
from ...hardware.host import HostInfo
from ...units import fmt_bytes_binary as _fmt_bytes
from ...units import fmt_times
from . import affinity as aff
from . import bandwidth as bw
from .modes import ModeSpec


def sweep_top(spec: ModeSpec, ws_total: float, threads: int) -> float:
    """The bandwidth sweep's largest per-thread size (suite.sweep_sizes_for's last)."""
    hi = ws_total / threads
    return bw.with_second_dram_point(bw.sweep_sizes(spec.sweep_lo_bytes, hi, spec.sweep_step),
                                     hi)[-1]


# The DRAM working set where the OS reports no cache sizes (s23 r3 F2: an assumed 8 MiB LLC
# gave 96 MiB, served from a 9800X3D's 96 MiB L3). 1 GiB is 4x the largest desktop L3
# (Threadripper 7980X, 256 MiB: 8 CCDs of 32 MiB, each caching 128 MiB of its threads'
# data) and ~10x a 96-128 MiB X3D's. --quick takes 512 MiB, still 4x an X3D's L3, so the
# DRAM parts (sweep, STREAM, intensity, drift) add no time over a 32 MiB-L3 machine's.
UNKNOWN_LLC_WS = {"quick": 2**29}
UNKNOWN_LLC_WS_DEFAULT = 2**30
LARGE_L3 = "96-128 MiB on X3D Ryzens, 256 MiB on a Threadripper"
LARGEST_L3 = 2**28   # a set at or under this may sit in a current desktop L3


def _host_working_set(host: HostInfo, spec: ModeSpec) -> tuple[float, list[str]]:
    """Largest total working set: llc_multiple x last-level cache (at least 64 MiB), or
    UNKNOWN_LLC_WS where no cache size is known (at most an eighth of the memory when only
    its total is); shrunk to a quarter of the available memory when that is less."""
    c = host.caches
    known = c.l3 or c.l2
    llc = (known or 8 * 2**20) * max(1, c.l3_instances if c.l3 else 1)
    want = max(spec.llc_multiple * llc, 64 * 2**20)
    avail = host.memory_available_bytes
    if not known:
        total = host.memory_bytes
        want = UNKNOWN_LLC_WS.get(spec.name, UNKNOWN_LLC_WS_DEFAULT)
        want = min(want, total / 8) if total and not avail else want
        want = max(want, 64 * 2**20)
    if not (avail and want > avail / 4):
        return want, ([f"the OS reports no cache sizes: the DRAM working set is "
                       f"{_fmt_bytes(want)}, larger than any current desktop L3 ({LARGE_L3})"]
                      if not known else [])
    have = avail / 4
    if have < 2 * llc:
        raise ProbeError(f"only {_fmt_bytes(avail)} of memory is available; the DRAM "
                         f"sweep needs at least {_fmt_bytes(8 * llc)}; free memory and "
                         f"rerun")
    shrunk = (f"DRAM working set shrunk from {_fmt_bytes(want)} to {_fmt_bytes(have)} "
              f"(a quarter of the {_fmt_bytes(avail)} available)")
    if known:
        return have, [f"{shrunk}; below {spec.llc_multiple:g}x the last-level cache the DRAM "
                      f"figure may include cache hits"]
    # one note: the size is the capped one, and the LLC it is set against is unknown (no
    # "12x the last-level cache", which would be an assumed 8 MiB; s23 h1 F4)
    if have > LARGEST_L3:
        return have, [f"the OS reports no cache sizes; {shrunk}, still larger than any "
                      f"current desktop L3 ({LARGE_L3})"]
    return have, [f"the OS reports no cache sizes; {shrunk}: with the last-level cache size "
                  f"unknown, {_fmt_bytes(have)} may sit in a large L3 ({LARGE_L3}), and the "
                  f"DRAM figure may then be that L3's; free memory and rerun"]


# What the probe holds beside its DRAM working set (s24 r2 F1): bandwidth.ArrayPool keeps
# one slot per array count (1, 2, 3 arrays: ws, ws/2, ws/3 of the sweep's largest size,
# itself up to a sweep step past the DRAM set), so 1.83x or more of the working set; and
# the process grows by the GEMM's matrices, numba's thread pool and numpy temporaries
# (PROCESS_GROWTH), and by torch where the mode measures bf16/fp16/int8 (TORCH_BYTES:
# `import torch` 2.13 CPU added 190 MB of RSS here). What is resident when the working set
# is chosen (interpreter, numba, compiled kernels: ~100-250 MB) is already in the usage.
POOL_SLOTS = 3
PROCESS_GROWTH = 64 * 2**20
TORCH_BYTES = 256 * 2**20
MIN_DRAM_WS = 64 * 2**20
# taken in 5 % steps down to the largest set whose arrays fit under a cgroup limit
SHRINK_STEP = 0.95


def process_growth(spec: ModeSpec, limit_kind: str = "cgroup") -> float:
    """Bytes the probe allocates after the working set is chosen, besides the pool. Under
    `ulimit -v` (limit_kind "address space") torch's import counts by the address space
    it maps (470 MiB, not its 190 MB resident: past the cap the import aborts the process
    with std::bad_alloc and no message), and not at all once torch is loaded (then in
    VmSize already)."""
    gemm = 3 * 8 * max(spec.gemm_sizes, default=0) ** 2
    torch = TORCH_BYTES
    if limit_kind == "address space":
        from ...hardware.address_space import TORCH_ADDRESS_SPACE

        torch = 0 if "torch" in sys.modules else TORCH_ADDRESS_SPACE
    return PROCESS_GROWTH + gemm + (torch if spec.low_precision else 0)


def pool_bytes(spec: ModeSpec, ws_total: float, threads: int) -> float:
    """Bytes bandwidth.ArrayPool allocates for a DRAM working set `ws_total` on `threads`
    threads, as ArrayPool.rows sizes them: slot j is one row per thread of the sweep's
    largest per-thread size / (j + 1), rounded up to whole huge pages (ROW_QUANTUM), plus
    one huge page per slot for its offset (bandwidth.placed). The rounding is per row, the
    offset per slot (s24 h1 F1: 2 huge pages per row and slot overstated 64 threads'
    arrays by ~0.5 GiB); the kernels' arrays never outgrow a slot (elements_for)."""
    top = sweep_top(spec, ws_total, threads)
    q = bw.ROW_QUANTUM
    rows = (-(-int(top / (8 * (j + 1))) // q) * q * 8 for j in range(POOL_SLOTS))
    return float(sum(threads * row + bw.HUGE_PAGE for row in rows))


def _thread_counts(host: HostInfo, threads: int | None) -> range | tuple[int, ...]:
    """The team sizes the pool may be built for: `threads`, else any up to the CPUs this
    process may use (--threads picks one after the working set is chosen)."""
    if threads:
        return (threads,)
    allowed = aff.allowed_cpus()
    return range(1, max(1, len(allowed) if allowed else host.threads) + 1)


def dram_working_set(host: HostInfo, spec: ModeSpec, limit=..., threads: int | None = None
                     ) -> tuple[float, list[str]]:
    """The DRAM working set (_host_working_set: llc_multiple x the L3s this process's CPUs
    reach, at most a quarter of MemAvailable), shrunk until the pool's arrays and the rest
    of the probe fit under a cgroup memory limit (`limit`: memory_limit.MemoryLimit, None
    for none, ... to read this process's cgroup); ProbeError, before anything is
    allocated, when even MIN_DRAM_WS (2x the LLC, if more) does not fit."""
    from ...hardware import memory_limit as ml

    want, notes = _host_working_set(host, spec)
    lim = ml.memory_limit() if limit is ... else limit
    if lim is None:
        return want, notes
    counts = _thread_counts(host, threads)
    grow = process_growth(spec, lim.kind)

    def need(ws: float) -> float:
        return max(pool_bytes(spec, ws, t) for t in counts) + grow

    if need(want) <= lim.free:
        return want, notes
    c = host.caches
    known = c.l3 or c.l2
    floor = min(want, max(MIN_DRAM_WS, 2 * (c.l3 * max(1, c.l3_instances) if c.l3 else
                                            c.l2 or 0)))
    # the pool holds at least 1 + 1/2 + 1/3 of the set: start the search no higher
    slots = sum(1 / (j + 1) for j in range(POOL_SLOTS))
    ws = max(floor, min(want, float(int((lim.free - grow) / slots) >> 20 << 20)))
    while need(ws) > lim.free and ws > floor:
        # whole MiB at every step: the pool's size jumps with the sweep's grid (a set just
        # under a grid point gets a point 1.25x past it), so the size tried is the one used
        ws = max(floor, float(int(ws * SHRINK_STEP) >> 20 << 20))
    if need(ws) > lim.free:
        raise ProbeError(f"{lim.describe()}: too little for the DRAM sweep, which needs at "
                         f"least a {_fmt_bytes(floor)} working set, about {_fmt_bytes(need(ws))}"
                         f" of memory with its arrays and the rest of the probe; {_raise_it(lim)}")
    arrays = need(ws) - grow
    shrunk = (f"DRAM working set shrunk from {_fmt_bytes(want)} to {_fmt_bytes(ws)}: "
              f"{lim.describe()}, and the probe's arrays take {_fmt_bytes(arrays)} for it "
              f"({fmt_times(arrays / ws)} the working set) beside {_fmt_bytes(grow)} for the rest "
              f"of the probe")
    # one note, replacing the host's (whose size is no longer the one used; s23 h1 F4)
    if known:
        return ws, [f"{shrunk}; below {spec.llc_multiple:g}x the last-level cache the DRAM "
                    f"figure may include cache hits"]
    tail = (f", still larger than any current desktop L3 ({LARGE_L3})" if ws > LARGEST_L3 else
            f"; with the last-level cache size unknown, {_fmt_bytes(ws)} may sit in a large "
            f"L3 ({LARGE_L3}), and the DRAM figure may then be that L3's")
    return ws, [f"the OS reports no cache sizes; {shrunk}{tail}"]


def _raise_it(lim) -> str:
    """How to lift the binding limit: `ulimit -v` is the shell's, a cgroup the container's."""
    if lim.kind == "address space":
        return "raise it (`ulimit -v unlimited`, or a larger `ulimit -v` in KiB) and rerun"
    return ("raise the limit (docker run --memory, Kubernetes limits.memory, Slurm --mem) "
            "or free memory in it and rerun")
