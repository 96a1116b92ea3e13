"""Memory bandwidth: STREAM kernels swept over working-set sizes, plateaus found in the
curve and labelled L1, L2, L3, DRAM from the cache sizes the OS reports (probe/plateaus.py
finds and names them; here are the CPU's parts: per-thread capacities, STREAM's choice of
the DRAM point, and levels that noise broke up read inside their reported sizes).

Byte model (STREAM and likwid-bench count the same way, FACTS.md "CPU peaks"): explicit
loads + stores, 8 bytes each for fp64; write-allocate traffic is not counted. Triad moves
24 B per element, copy/scale 16, add 24, sum 8. Stores are ordinary (temporal) stores.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...hardware.host import Caches
from ...model import level_order
from ...units import fmt_bytes_binary as fmt_bytes
from ...units import fmt_fraction, si
from ..plateaus import LEVELS, Plateau, find_plateaus, geometric_sizes, label_plateaus
from ..timer import TimingPlan
from .runner import Rate, Team, measure_rate

BYTE_MODEL = ("explicit loads + stores, no write-allocate (STREAM/likwid convention); "
              "ordinary (temporal) stores")


@dataclass(frozen=True)
class StreamKernel:
    name: str
    arrays: int      # arrays touched (working set = arrays x n x 8 B)
    loads: int       # explicit loads per element
    stores: int      # explicit stores per element
    formula: str

    @property
    def bytes_per_element(self) -> int:
        return 8 * (self.loads + self.stores)


STREAM = {k.name: k for k in (
    StreamKernel("copy", 2, 1, 1, "a[i] = b[i]"),
    StreamKernel("scale", 2, 1, 1, "a[i] = s*b[i]"),
    StreamKernel("add", 3, 2, 1, "a[i] = b[i] + c[i]"),
    StreamKernel("triad", 3, 2, 1, "a[i] = b[i] + s*c[i]"),
    StreamKernel("sum", 1, 1, 0, "s += a[i]"),
)}


def aligned(n: int, fill: float = 1.0, dtype=np.float64) -> np.ndarray:
    """An array of n elements starting on a 64-byte (cache line) boundary."""
    item = np.dtype(dtype).itemsize
    raw = np.empty(n + 64 // item, dtype=dtype)
    off = (-raw.ctypes.data % 64) // item
    arr = raw[off:off + n]
    arr.fill(fill)
    return arr


# Where slot j's buffer starts, in bytes modulo a 2 MiB huge page (numpy madvises large
# arrays into transparent huge pages, so these low 21 address bits are physical too):
# 0/704/1408 KiB apart, plus 64 B more per slot so the starts also differ modulo 4 KiB.
# STREAM pads its arrays for the same reason (its OFFSET). Measured on the 2-vCPU Zen 4
# VM (docs/probe.md): DRAM triad 2-5 % and copy/scale ~10 % higher than with wherever
# malloc put the buffers (it left a and b 4 KiB apart modulo 2 MiB).
HUGE_PAGE = 2 * 1024 * 1024
SLOT_SPREAD = 704 * 1024 + 64


def slot_offset(slot: int) -> int:
    """Start of slot `slot`'s buffer modulo HUGE_PAGE, in bytes (a multiple of 64)."""
    return (64 + slot * SLOT_SPREAD) % HUGE_PAGE


def placed(n: int, offset: int, fill: float | None = 1.0) -> np.ndarray:
    """n float64 elements whose first one sits at `offset` bytes modulo HUGE_PAGE (offset a
    multiple of 8; a multiple of 64 keeps the start on a cache line). fill=None leaves
    the pages untouched (the caller first-touches them, see rows_of)."""
    raw = np.empty(n + HUGE_PAGE // 8, dtype=np.float64)
    start = (offset - raw.ctypes.data) % HUGE_PAGE // 8
    arr = raw[start:start + n]
    if fill is not None:
        arr.fill(fill)
    return arr


# Bytes of each row the first first-touch call writes, and the least any call writes.
# Page faults ran at 16-100 MB/s per thread at load 4-7 on the 2-vCPU VM (0.2-0.5 s for
# 8 MiB), a few GB/s when quiet. Each call is timed and the next one sized to take about
# TOUCH_CALL_S: twice the bytes after a call under half of it, half after one over twice
# it. Growing matters too: each call ends with the threads waiting for the slowest, and
# 8 MiB calls over a 512 MiB pair of rows took ~30 ms more than one call when quiet. The
# calls are untimed: only where the pages land matters (a second compiled variant of
# par_fill, for the strided column slice, loads from numba's cache in ~0.05 s).
TOUCH_CHUNK = 4 * 2**20
TOUCH_MIN = 2**20
TOUCH_CALL_S = 0.1


def first_touch(rows: np.ndarray, fill: float, clock=time.perf_counter) -> np.ndarray:
    """Fill a (threads, n) C-contiguous array with each row written by the thread that
    streams it (kernels.par_fill), so its pages sit on that thread's NUMA node under
    Linux's first-touch policy, as STREAM's parallel init loop places them. A main-thread
    fill puts every page on one node: the DRAM figure of a 2-socket or NPS>1 host is then
    one node's bandwidth (review 11a F-H).

    Rows longer than TOUCH_CHUNK bytes are filled a column chunk at a time: Python handles
    Ctrl-C only between native calls, and one call over a DRAM-sized pool took 5-15 s on
    a loaded VM (review s24 r3 F3); `clock` times the calls (TOUCH_CALL_S). Each chunk of
    row t is still written by the thread that streams row t (the same prange over rows),
    so the pages land where they did."""
    from . import kernels as K

    step = max(1, TOUCH_CHUNK // rows.itemsize)
    least, n = min(step, max(1, TOUCH_MIN // rows.itemsize)), rows.shape[1]
    if n <= step:
        K.par_fill(rows, fill)
        return rows
    lo = 0
    while lo < n:
        t0 = clock()
        K.par_fill(rows[:, lo:lo + step], fill)
        lo += step
        took = clock() - t0
        if took < TOUCH_CALL_S / 2:
            step *= 2
        elif took > 2 * TOUCH_CALL_S:
            step = max(least, step // 2)
    return rows


def rows_of(threads: int, n: int, fill: float = 1.0, dtype=np.float64) -> np.ndarray:
    """(threads, n) aligned C-contiguous array, each row first-touched by its thread."""
    item = np.dtype(dtype).itemsize
    raw = np.empty(threads * n + 64 // item, dtype=dtype)
    off = (-raw.ctypes.data % 64) // item
    return first_touch(raw[off:off + threads * n].reshape(threads, n), fill)


# Each thread's row of a pool slot spans whole huge pages, so row t starts at the slot's
# offset modulo HUGE_PAGE for every t (the spread below holds for every thread's arrays).
ROW_QUANTUM = HUGE_PAGE // 8


class ArrayPool:
    """Aligned float64 arrays reused by every measurement: slot j is one (threads, cap)
    C-contiguous buffer, one row per thread, each row first-touched by its own thread
    (first_touch). A kernel on n <= cap elements per array runs on rows[t, :n], so at every
    working-set size a thread streams memory it placed itself.

    Allocating and first-touching a few hundred MiB for each DRAM measurement would take
    longer than the measurement; slot j holds enough elements for the largest per-thread
    working set of any kernel using j+1 arrays (ws/8, ws/16, ws/24 elements per thread,
    rounded up to whole huge pages).
    The slots start at different offsets within a huge page (slot_offset), so a kernel's
    arrays a[t], b[t], c[t] never alias whatever addresses the allocator hands out.
    """

    def __init__(self, ws_bytes_max: float):
        self.ws_max = ws_bytes_max
        self._rows: dict[int, np.ndarray] = {}

    def rows(self, slot: int, threads: int, n: int) -> np.ndarray:
        """Slot `slot` as (threads, cap) rows, cap >= n; kernels use [:, :n]."""
        buf = self._rows.get(slot)
        if buf is None or buf.shape[0] != threads or buf.shape[1] < n:
            cap = max(n, int(self.ws_max / (8 * (slot + 1))))
            cap = -(-cap // ROW_QUANTUM) * ROW_QUANTUM
            flat = placed(threads * cap, slot_offset(slot), None)
            buf = self._rows[slot] = first_touch(flat.reshape(threads, cap), 1.0 + slot)
        return buf

    def get(self, slot: int, threads: int, n: int) -> np.ndarray:
        """The (threads, n) arrays a kernel streams: views of each thread's row."""
        return self.rows(slot, threads, n)[:, :n]


def elements_for(kernel: StreamKernel, ws_bytes: float) -> int:
    """Elements per array for a per-thread working set, a multiple of 64 (at least 64)."""
    return max(64, int(ws_bytes / (kernel.arrays * 8)) // 64 * 64)


def measure_stream(kernel: StreamKernel, ws_per_thread: float, team: Team, plan: TimingPlan,
                   clock=None, pool: ArrayPool | None = None) -> tuple[Rate, int]:
    """Bandwidth (B/s, all threads together) of one kernel at one per-thread working set.
    Returns the rate and the elements per array (per thread)."""
    from . import kernels as K

    n = elements_for(kernel, ws_per_thread)
    pool = pool or ArrayPool(ws_per_thread)
    arrs = [pool.rows(j, team.threads, n) for j in range(kernel.arrays)]
    a, b, c = (arrs + [arrs[0]] * 3)[:3]
    code = {"copy": K.COPY, "scale": K.SCALE, "add": K.ADD, "triad": K.TRIAD,
            "sum": K.SUM}[kernel.name]
    out = np.zeros(team.threads)

    def call(reps: int) -> None:
        K.par_run(code, a, b, c, 3.0, 0, 0, reps, out, n)

    work = kernel.bytes_per_element * n * team.threads
    kw = {"clock": clock} if clock else {}
    return measure_rate(call, work, plan, **kw), n


def sweep_sizes(lo: float, hi: float, step: float) -> tuple[float, ...]:
    """Geometric per-thread sizes from lo to at least hi (the DRAM set must be reached)."""
    return geometric_sizes(lo, hi, step, cover=True)


@dataclass(frozen=True)
class Placement:
    """Where the probe's threads ran, when known (--cpus, or every allowed CPU busy):
    the physical cores and the L3 instances among those CPUs (review s21 r2 F7)."""

    cores: int
    l3_groups: int | None = None   # None: sysfs does not say


def capacities(caches: Caches, threads: int,
               placement: Placement | None = None) -> dict[str, float]:
    """Bytes of each cache level available to one thread's working set."""
    out: dict[str, float] = {}
    # L1d and L2 are per core: the SMT siblings among the probe's threads share them
    # (sysfs shared_cpu_list; review 11a F-K). Where the CPUs used are known, only as many
    # threads share a core as the set puts on one (--cpus 0-7 on 8 cores: none share).
    per_core = -(-threads // placement.cores) if placement and placement.cores else threads
    share = {lv: max(1, min(caches.sharing(lv), per_core)) for lv in ("L1", "L2")}
    if caches.l1d:
        out["L1"] = caches.l1d / share["L1"]
    if caches.l2:
        out["L2"] = caches.l2 / share["L2"]
    if caches.l3:
        # L3: the instances the threads reach (one CCD's for --cpus 0-7 on an EPYC), over them
        reach = max(1, caches.l3_instances)
        if placement and placement.l3_groups:
            reach = min(reach, placement.l3_groups)
        out["L3"] = caches.l3 * reach / max(1, threads)
    return out


UNPINNED = ("the threads were not pinned (fewer threads than CPUs; --cpus fixes them), so "
            "which cores and L3 instances they shared is unknown; or a virtual machine may "
            "report another CPU's cache sizes")


def with_second_dram_point(sizes: Sequence[float], hi: float) -> tuple[float, ...]:
    """The sweep's sizes with at least two at or beyond `hi` (the DRAM working set per
    thread: each triad array >= 4x the LLC): the geometric sweep reaches only one, and one
    size's best sample is no DRAM figure (review 11a F-C: 52 % above its own plateau).
    `hi` itself is added when the last size lies beyond it; else one step further."""
    sizes = tuple(sizes)
    if sum(s >= hi * 0.99 for s in sizes) >= 2:
        return sizes
    extra = hi if sizes[-1] > hi * 1.05 else sizes[-1] * 1.25
    return tuple(sorted(sizes + (extra,)))


# The best DRAM point this far above the median of the other qualifying points (or of its
# plateau neighbours) is an outlier: a disturbed run, cache hits, a VM's memory state.
DRAM_OUTLIER = 1.20


def dram_point(plateau: Plateau, values: Sequence[float], sizes: Sequence[float],
               caps: dict[str, float] | None = None,
               medians: Sequence[float] | None = None) -> tuple[int, str | None]:
    """The sweep point that stands for DRAM, and a note when the best one was set aside.

    Candidates: the points whose every triad array is at least 4x the last-level cache
    (STREAM's rule; the largest size when sizes are unknown or none is that large). The
    best candidate is used unless it lies more than DRAM_OUTLIER above the median of the
    others: then the best of the rest is used; when it is the only candidate, against its
    plateau neighbours: then the neighbour at their median is used. The note says so
    (STREAM/likwid practice: a DRAM figure must hold over several sizes beyond the LLC).
    A best point whose median sample beats every other candidate's best is kept: a
    sustained reading at arrays >= 4x the LLC cannot be cache-assisted, and load only
    lowers the others (review r4 F1: 14.4 GB/s, median 13.6, set aside for a 10.0 best)."""
    caps = caps or {}
    idx = list(range(plateau.first, plateau.last + 1))
    llc = max(caps.values()) if caps else 0.0
    far = [i for i in idx if llc and sizes[i] >= 12 * llc * 0.99] or [plateau.last]
    far.sort(key=lambda i: values[i], reverse=True)
    best, dropped, kept = far[0], [], None
    while len(far) - len(dropped) > 1:          # other sizes beyond the LLC to compare with
        rest = [i for i in far if i != best and i not in dropped]
        if values[best] <= DRAM_OUTLIER * statistics.median(values[i] for i in rest):
            break
        if _sustained(best, rest, values, medians):
            kept = rest
            break
        dropped.append(best)
        best = max(rest, key=lambda i: values[i])
    if len(far) == 1:                           # only its plateau neighbours: their median
        rest = [i for i in idx if i != best]
        mid = statistics.median(values[i] for i in rest) if rest else 0.0
        if rest and values[best] > DRAM_OUTLIER * mid:
            dropped.append(best)
            best = min(rest, key=lambda i: (abs(values[i] - mid), -sizes[i]))
    if not dropped:
        return best, _kept_note(best, kept, values, sizes, medians) if kept else None
    top = dropped[0]
    return best, (
        f"DRAM: the best point ({si(values[top], 'B/s')} at {fmt_bytes(sizes[top])} per "
        f"thread) is {fmt_fraction(values[top] / values[best] - 1)} above the rest of the DRAM "
        f"plateau (more than {fmt_fraction(DRAM_OUTLIER - 1)}: a disturbed or cache-assisted "
        f"sample); the DRAM ceiling uses {si(values[best], 'B/s')} at "
        f"{fmt_bytes(sizes[best])} per thread (plateau median {si(plateau.bytes_per_s, 'B/s')})")


def _sustained(best: int, rest: Sequence[int], values: Sequence[float],
               medians: Sequence[float] | None) -> bool:
    """Whether the best point's median sample beats the best sample of every other
    candidate: then it is no lucky sample, and the others are the disturbed ones."""
    return medians is not None and medians[best] > max(values[i] for i in rest)


def _kept_note(best: int, rest: Sequence[int], values: Sequence[float],
               sizes: Sequence[float], medians: Sequence[float]) -> str:
    low = max(rest, key=lambda i: values[i])
    return (f"DRAM: the sizes beyond 4x the LLC disagree by "
            f"{fmt_fraction(values[best] / values[low] - 1)} ({si(values[best], 'B/s')} at "
            f"{fmt_bytes(sizes[best])} per thread, {si(values[low], 'B/s')} at "
            f"{fmt_bytes(sizes[low])}); the best point's median ({si(medians[best], 'B/s')}) "
            f"is above the other's best, so the lower one was disturbed (load only lowers a "
            f"rate): the DRAM ceiling uses {si(values[best], 'B/s')}; rerun on a quieter "
            f"machine to confirm")


def representative(level: str, plateau: Plateau, values: Sequence[float],
                   sizes: Sequence[float], caps: dict[str, float] | None = None,
                   medians: Sequence[float] | None = None) -> int:
    """The sweep point that stands for a level. DRAM: dram_point. A cache: the
    best point of its plateau well inside the level (above 1.5x the level below, below
    the level's size / 1.5), or the best of the whole plateau when none is (wrong sizes)."""
    idx = list(range(plateau.first, plateau.last + 1))
    caps = caps or {}
    if level == "DRAM":
        return dram_point(plateau, values, sizes, caps, medians)[0]
    order = [lv for lv in ("L1", "L2", "L3") if lv in caps]
    if level in caps:
        below = caps[order[order.index(level) - 1]] if order.index(level) > 0 else 0.0
        inside = [i for i in idx if 1.5 * below <= sizes[i] <= caps[level] / 1.5]
        idx = inside or idx
    return max(idx, key=lambda i: values[i])


def label_levels(values: Sequence[float], sizes: Sequence[float], caches: Caches,
                 threads: int, tol: float = 0.12, medians: Sequence[float] | None = None,
                 placement: Placement | None = None, unpinned: bool = False
                 ) -> tuple[dict[str, Plateau], dict[str, int], tuple[str, ...]]:
    """Plateaus, their level names, the representative point of each, and notes.

    The largest sizes are DRAM even when noise keeps them from forming a plateau: the
    points beyond twice the last-level cache (at least the last point) stand for it.
    `placement`: the CPUs used, when known; `unpinned`: fewer threads than CPUs and no
    --cpus, so a capacity mismatch may be the placement's, not a VM's.
    """
    caps = capacities(caches, threads, placement)
    levels, notes = label_plateaus(find_plateaus(values, tol), sizes, caps, per=" per thread")
    if unpinned:
        notes = tuple(n.replace("a virtual machine may report another CPU's cache sizes",
                                UNPINNED) for n in notes)
    if "DRAM" not in levels:
        llc = max(caps.values()) if caps else 0.0
        far = [i for i, s in enumerate(sizes) if s >= 2 * llc] or [len(sizes) - 1]
        levels = _cut_before(levels, far[0], values)
        levels["DRAM"] = Plateau(far[0], far[-1], statistics.median(values[i] for i in far))
        notes += ("no flat DRAM plateau (noisy); the largest working sets stand for DRAM",)
    if levels["DRAM"].last < len(sizes) - 1:   # noisy last points still lie beyond the LLC
        p = levels["DRAM"]
        levels["DRAM"] = Plateau(p.first, len(sizes) - 1, p.bytes_per_s)
    levels, more = _fill_missing(levels, values, sizes, caps)
    chosen = {lv: representative(lv, p, values, sizes, caps, medians)
              for lv, p in levels.items()}
    outlier = dram_point(levels["DRAM"], values, sizes, caps, medians)[1]
    more += (outlier,) if outlier else ()
    order = {lv: i for i, lv in enumerate(LEVELS)}
    return dict(sorted(levels.items(), key=lambda kv: order[kv[0]])), chosen, notes + more


def _cut_before(levels: dict[str, Plateau], first: int, values) -> dict[str, Plateau]:
    """The cache plateaus ended before sweep point `first`, where DRAM's stand-in points
    begin: noise can run a cache's plateau on past the last-level cache into them (or a
    sweep can end inside it), and DRAM then had no points: a KeyError (CI, session 32). A
    plateau wholly past `first` is dropped (_fill_missing reads its level afresh)."""
    out = {}
    for level, p in levels.items():
        last = min(p.last, first - 1)
        if last >= p.first:
            kept = p if last == p.last else Plateau(
                p.first, last, statistics.median(values[p.first:last + 1]))
            out[level] = kept
    return out


def _fill_missing(levels: dict[str, Plateau], values, sizes, caps
                  ) -> tuple[dict[str, Plateau], tuple[str, ...]]:
    """A reported cache level without a plateau (noise broke it up) is read at the sweep
    points well inside its reported size, and the note says so."""
    out, notes = dict(levels), []
    names = list(caps)
    for j, level in enumerate(names):
        if level in out:
            continue
        below = caps[names[j - 1]] if j else 0.0
        inside = [i for i, s in enumerate(sizes) if 1.5 * below <= s <= caps[level] / 1.5]
        if not inside:
            continue
        out[level] = Plateau(inside[0], inside[-1],
                             statistics.median(values[i] for i in inside))
        notes.append(f"{level}: no clear plateau in the sweep (noise); read between "
                     f"{fmt_bytes(sizes[inside[0]])} and {fmt_bytes(sizes[inside[-1]])} per "
                     f"thread, inside the reported size")
    return out, tuple(notes)


# The level-order check lives in model/ (the thread rows of a profile use it too, review
# 19c N2); re-exported here, where the probe's roof and dram_ceiling use it.
INVERTED = level_order.INVERTED
flag_inversions = level_order.flag_inversions
