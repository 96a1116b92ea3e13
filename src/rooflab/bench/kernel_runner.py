"""`rooflab bench --kernel NAME`: one of the probe's numba kernels at one working-set size
on N threads, likwid-bench's daily use (`likwid-bench -t load_avx512 -w S0:24kB:1`).

Kernels have likwid-bench's names and meanings (`likwid-bench -l NAME`, likwid 5.2: streams,
FLOP and bytes per element; one update = one element of each stream): `stream` is STREAM's
triad a = b + s*c, `triad` likwid's a = b*c + d (4 streams). Byte model: the probe's
(probe/cpu/bandwidth.py BYTE_MODEL), explicit loads and stores, 8 B each for fp64, no
write-allocate read counted; ordinary (temporal) stores: numba emits no non-temporal
stores, so likwid's `*_mem` kernels (copy_mem, store_mem) have no counterpart here.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from ..model.sample_spread import spread_short
from ..units import fmt_bytes_binary, fmt_fraction, fmt_pct, si

BYTES_FP64 = 8
# peakflops: FMAs per element per call (probe/cpu/flops.FMA_PER_CALL; not imported: that
# module needs numba, and the table must print without it).
FMA_PER_CALL = 2048


@dataclass(frozen=True)
class BenchKernel:
    """One kernel as likwid-bench's -l prints it: per update (one element of each stream)."""

    name: str
    formula: str
    streams: int        # arrays touched: working set = streams x n x 8 B
    loads: int          # explicit loads per update
    stores: int         # explicit stores per update
    flop: int           # FLOP per update (an FMA is 2)
    likwid: str         # the likwid-bench kernel it matches, and its header
    note: str = ""      # where it departs from likwid's

    @property
    def bytes_per_update(self) -> int:
        return BYTES_FP64 * (self.loads + self.stores)

    @property
    def intensity(self) -> float:
        return self.flop / self.bytes_per_update


KERNELS = {k.name: k for k in (
    BenchKernel("copy", "a[i] = b[i]", 2, 1, 1, 0, "copy: 2 streams, 0 FLOP, 16 B"),
    BenchKernel("scale", "a[i] = s*b[i]", 2, 1, 1, 1,
                "none (STREAM scale; likwid-bench has no scale kernel)"),
    BenchKernel("add", "a[i] = b[i] + c[i]", 3, 2, 1, 1,
                "none (STREAM add; likwid-bench has no add kernel)"),
    BenchKernel("stream", "a[i] = b[i] + s*c[i]", 3, 2, 1, 2,
                "stream: 3 streams, 2 FLOP, 24 B (STREAM's triad)"),
    BenchKernel("triad", "a[i] = b[i]*c[i] + d[i]", 4, 3, 1, 2,
                "triad: 4 streams, 2 FLOP, 32 B",
                "likwid's triad (4 streams); STREAM's triad a = b + s*c, the probe's "
                "DRAM kernel, is --kernel stream"),
    BenchKernel("sum", "s += a[i]", 1, 1, 0, 1, "sum: 1 stream, 1 FLOP, 8 B"),
    BenchKernel("load", "s += a[i]", 1, 1, 0, 1, "load: 1 stream, 0 FLOP, 8 B",
                "runs sum's kernel: numba drops loads whose values go unused, so each "
                "load feeds one add (1 FLOP, likwid's load has 0)"),
    BenchKernel("store", "a[i] = s", 1, 0, 1, 0, "store: 1 stream, 0 FLOP, 8 B"),
    BenchKernel("update", "a[i] = s*a[i]", 1, 1, 1, 1,
                "update: 1 stream, 0 FLOP, 16 B",
                "multiplies by s (1 FLOP) where likwid writes the value back unchanged"),
    BenchKernel("daxpy", "b[i] = b[i] + s*a[i]", 2, 2, 1, 2,
                "daxpy: 2 streams, 2 FLOP, 24 B"),
    BenchKernel("ddot", "s += a[i]*b[i]", 2, 2, 0, 2, "ddot: 2 streams, 2 FLOP, 16 B"),
    # likwid's peakflops* load one stream (peakflops_avx_fma: 1 stream, 30 FLOP, 8 B per
    # element, `likwid-bench -l`), so beyond L1 they read a cache's bandwidth; this one
    # keeps its operands in registers and reads the FMA peak alone.
    BenchKernel("peakflops", f"x = m*x + c, {FMA_PER_CALL} times per element", 2, 1, 1,
                2 * FMA_PER_CALL,
                "none (likwid's peakflops kernels load a stream: peakflops_avx_fma is "
                "1 stream, 30 FLOP, 8 B per element)",
                "the probe's FMA kernel: one register block of NVEC SIMD vectors per "
                "thread, so --size does not apply"),
)}
# likwid-bench's SIMD variants (copy_avx512, stream_avx_fma, load_sse): numba chooses the
# vector width itself, so they run the plain kernel and say so.
_SIMD_SUFFIX = re.compile(r"_(sse|avx|avx512)(_fma)?$")


def kernel(name: str) -> BenchKernel:
    """The kernel called `name` (a likwid-bench name, SIMD suffix allowed), or a clear
    error listing them."""
    key = name.strip().lower()
    refused = _likwid_only(key)
    if refused:
        raise InputError(refused)
    found = KERNELS.get(_SIMD_SUFFIX.sub("", key))
    if found is None:
        raise InputError(f"--kernel '{name}' is not a kernel of `rooflab bench --kernel`; "
                         f"use one of {', '.join(KERNELS)} (likwid-bench's names and "
                         f"meanings; `rooflab bench --list --details` describes them)")
    return found


def simd_note(name: str) -> str:
    """What a likwid SIMD suffix (`_avx512`) means here, '' without one."""
    suffix = _SIMD_SUFFIX.search(name.strip().lower())
    if not suffix:
        return ""
    return (f"'{name}': likwid's {suffix.group(0)[1:]} variant picks its SIMD width by hand; "
            f"rooflab runs the numba kernel, vectorised for this CPU's widest SIMD")


def _likwid_only(key: str) -> str:
    """Why a likwid-bench kernel has no counterpart here ('' when it has one)."""
    if "_mem" in key:
        return (f"--kernel '{key}': likwid's _mem kernels use non-temporal stores, and "
                f"numba emits none; use --kernel {key.replace('_mem', '')} (ordinary "
                f"stores, write-allocate not counted)")
    if key.startswith("peakflops") and key != "peakflops":
        return (f"--kernel '{key}': likwid's peakflops kernels load one stream (e.g. "
                f"peakflops_avx_fma: 1 stream, 30 FLOP, 8 B per element), which rooflab "
                f"does not run; --kernel peakflops is the FMA peak with its operands in "
                f"registers")
    return ""


def details_rows() -> list[dict]:
    """likwid-bench -l for every kernel: streams, FLOP and bytes per update."""
    return [{"kernel": k.name, "formula": k.formula, "streams": k.streams, "loads": k.loads,
             "stores": k.stores, "flop_per_update": k.flop,
             "bytes_per_update": k.bytes_per_update, "likwid": k.likwid, "note": k.note}
            for k in KERNELS.values()]


# --- sizes -------------------------------------------------------------------------------
UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "k": 2**10, "m": 2**20, "g": 2**30}
DRAM_FACTOR = 4     # STREAM's rule: each array at least 4x the last-level cache


def parse_size(text: str, llc: int | None) -> float:
    """'24KiB', '1MiB', '32kB' (likwid's kB = 1000 B), '4xLLC' -> bytes per thread."""
    t = str(text).strip().replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)x(llc)", t, re.IGNORECASE)
    if m:
        if not llc:
            raise InputError(f"--size {text}: the OS reports no cache sizes here (sysfs), so "
                             f"LLC has no size; give bytes, e.g. --size 256MiB")
        value = float(m.group(1)) * llc
    else:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", t, re.IGNORECASE)
        if not m or m.group(2).lower() not in UNITS:
            raise InputError(f"invalid value for '--size': '{text}'; give bytes per thread "
                             f"with a unit, e.g. 24KiB, 1MiB, 32kB or 4xLLC")
        value = float(m.group(1)) * UNITS[m.group(2).lower()]
    if value <= 0:
        raise InputError(f"--size {text}: the working set must be more than 0 bytes; "
                         f"e.g. --size 24KiB")
    return value


def default_size(llc: int | None) -> float:
    """A DRAM-sized working set per thread: 4x the LLC (64 MiB when none is reported)."""
    return DRAM_FACTOR * llc if llc else 64 * 2**20


def elements(k: BenchKernel, ws_bytes: float) -> int:
    """Elements per stream for a per-thread working set: a multiple of 64, at least 64."""
    return max(64, int(ws_bytes / (k.streams * BYTES_FP64)) // 64 * 64)


def level_of(ws_bytes: float, caps: dict[str, float]) -> str:
    """The first cache level (L1, L2, L3: capacity per thread, bandwidth.capacities)
    that holds the working set, else DRAM."""
    for lv in ("L1", "L2", "L3"):
        if lv in caps and ws_bytes <= caps[lv]:
            return lv
    return "DRAM"


def check_threads(threads: int, cpus: int) -> None:
    if threads < 1:
        raise InputError(f"--threads {threads}: use at least 1 thread")
    if threads > cpus:
        raise InputError(f"--threads {threads} is more than the {cpus} CPU"
                         f"{'s' if cpus != 1 else ''} this process may run on (two threads "
                         f"would share a CPU: that measures the scheduler); use at most "
                         f"{cpus}, or more --cpus")


# Beside the arrays: numba's thread pool, likwid's triad compiled on first use, samples.
BENCH_HEADROOM = 64 * 2**20


def array_bytes(k: BenchKernel, n: int, threads: int) -> int:
    """Bytes numba_call allocates: each stream's n elements per thread (64 B aligned)."""
    return k.streams * (threads * n * BYTES_FP64 + 64)


def check_memory(k: BenchKernel, n: int, threads: int, limit=..., avail=...) -> None:
    """InputError, before anything is allocated, where the arrays cannot fit in the memory
    this process may use: min(MemAvailable, a cgroup limit's free part). Past a container's
    limit the OOM killer ends the run with no message (s24 r2 F8). `limit`, `avail`: ...
    reads this process's cgroup and /proc/meminfo."""
    from ..hardware import memory_limit as ml
    from ..hardware.host import meminfo

    lim = ml.memory_limit(threads=threads) if limit is ... else limit  # its pool only
    avail = meminfo()[1] if avail is ... else avail
    usable = ml.usable_memory(avail, lim)
    need = array_bytes(k, n, threads)
    if usable is None or need + BENCH_HEADROOM <= usable:
        return
    ws = k.streams * n * BYTES_FP64
    fits = max(0, (usable - BENCH_HEADROOM) // threads)
    raise InputError(f"--size {fmt_bytes_binary(ws)} x {threads} thread"
                     f"{'s' if threads != 1 else ''} needs {fmt_bytes_binary(need)} of arrays; "
                     f"{ml.where_memory(avail, lim)}: give a smaller --size (at most "
                     f"{fmt_bytes_binary(fits)} per thread fits; 4xLLC is DRAM-sized) or fewer "
                     f"--threads")


# --- running -----------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelResult:
    """One run: the rate in updates/s (per sample) and what the numbers derive from."""

    kernel: BenchKernel
    threads: int
    n: int              # elements per stream per thread
    level: str          # where the working set falls (sysfs caches per thread)
    rate: object        # probe.cpu.runner.Rate, updates/s for all threads together

    @property
    def ws_bytes(self) -> int:
        """Working set per thread (bytes of all its streams)."""
        return self.kernel.streams * self.n * BYTES_FP64

    @property
    def bytes_per_s(self) -> float:
        """Best sample (the probe's convention for a ceiling), counted bytes."""
        return self.rate.best * self.kernel.bytes_per_update

    @property
    def flop_per_s(self) -> float:
        return self.rate.best * self.kernel.flop

    @property
    def median_bytes_per_s(self) -> float:
        return self.rate.median * self.kernel.bytes_per_update


Call = Callable[[int], object]


def numba_call(k: BenchKernel, n: int, threads: int) -> tuple[Call, int]:
    """The numba kernel on `threads` rows of n elements, each row first-touched by its
    thread; (call(reps), elements per thread per call)."""
    import numpy as np

    from ..probe.cpu import kernels as K
    from ..probe.cpu.bandwidth import rows_of

    out = np.zeros(threads)
    if k.name == "peakflops":
        from ..probe.cpu.flops import FMA_PER_CALL as fma

        m = K.block_elements(8)
        src, dst = rows_of(threads, m, 0.5), rows_of(threads, m, 0.0)
        return (lambda reps: K.par_run(K.ERT, src, dst, dst, 0.999, fma, 1, reps, out, m)), m
    # only the kernel's own streams: `load` on 2 GiB allocated 6 GiB (s24 r2 F8); the
    # kernels never touch the arrays beyond their streams, so those alias the first
    own = [rows_of(threads, n, 1.0 + j) for j in range(min(3, k.streams))]
    a, b, c = (own + [own[0]] * 3)[:3]
    if k.name == "triad":   # likwid's: a fourth stream the probe's kernels do not have
        d = rows_of(threads, n, 4.0)
        return (lambda reps: likwid_triad()(a, b, c, d, reps, out, n)), n
    stream = {"copy": K.COPY, "scale": K.SCALE, "add": K.ADD, "stream": K.TRIAD,
              "sum": K.SUM, "load": K.SUM}
    if k.name in stream:
        code = stream[k.name]
        return (lambda reps: K.par_run(code, a, b, c, 3.0, 0, 0, reps, out, n)), n
    code = {"store": K.STORE, "update": K.UPDATE, "daxpy": K.DAXPY, "ddot": K.DDOT}[k.name]
    # update multiplies by 1.0 (values neither grow nor decay over the passes); daxpy adds
    # 1e-9 a[i] a pass
    s = {"update": 1.0, "daxpy": 1e-9}.get(k.name, 3.0)
    return (lambda reps: K.par_more(code, a, b, s, reps, out, n)), n


@functools.cache
def likwid_triad():
    """likwid-bench's triad a[i] = b[i]*c[i] + d[i] (4 streams, 32 B, 2 FLOP per update)
    on one row per thread, as probe.cpu.kernels.par_run runs its kernels: compiled on
    first use (seconds), since only --kernel triad needs it."""
    import numba

    @numba.njit(parallel=True, nogil=True, fastmath=True, boundscheck=False)
    def par_triad(a, b, c, d, reps, out, n):
        for t in numba.prange(a.shape[0]):
            ar, br, cr, dr = a[t, :n], b[t, :n], c[t, :n], d[t, :n]
            for _ in range(reps):
                for i in range(n):
                    ar[i] = br[i] * cr[i] + dr[i]
            out[t] = ar[0]
        return out[0]

    return par_triad


def run_kernel(k: BenchKernel, ws_bytes: float, threads: int, caps: dict[str, float],
               plan=None, clock: Callable[[], float] = time.perf_counter,
               make_call: Callable[[BenchKernel, int, int], tuple[Call, int]] = numba_call
               ) -> KernelResult:
    """Time kernel k on `threads` threads at `ws_bytes` per thread (the probe's runner:
    calibrated repetitions, warm-up, samples until the plan's budget is spent)."""
    from ..measuring import resolve_plan
    from ..probe.cpu.runner import Team, measure_rate

    n = elements(k, ws_bytes)
    if k.name != "peakflops":   # its block stays in registers: no --size to check
        check_memory(k, n, threads)
    with Team(threads):
        call, per_call = make_call(k, n, threads)
        rate = measure_rate(call, per_call * threads, plan or resolve_plan(None), clock=clock)
    level = "registers" if k.name == "peakflops" else level_of(
        k.streams * n * BYTES_FP64, caps)
    return KernelResult(k, threads, per_call, level, rate)


# --- on a roof ---------------------------------------------------------------------------
def place_on(result: KernelResult, roof, threads_row: str = "") -> dict | None:
    """The result as a share of the roof's ceiling for its level (peakflops: fp64 compute),
    or None when the roof has no such ceiling. `threads_row` says which thread count's
    roof it is (the output line says it; '' for the generic caveat)."""
    if result.kernel.name == "peakflops":
        ceiling = roof.find_compute("fp64")
        value = result.flop_per_s
    else:
        ceiling = roof.find_memory(result.level)
        value = result.bytes_per_s
    if ceiling is None or not ceiling.value:
        return None
    return {"roof": roof.name, "ceiling": ceiling.label, "ceiling_value": ceiling.value,
            "provenance": ceiling.provenance, "percent": 100.0 * value / ceiling.value,
            "threads_row": threads_row or None}


def result_dict(r: KernelResult, placed: dict | None) -> dict:
    st = r.rate.stats
    return {"kernel": r.kernel.name, "formula": r.kernel.formula, "threads": r.threads,
            "elements_per_stream": r.n, "working_set_bytes_per_thread": r.ws_bytes,
            "level": r.level, "bytes_per_update": r.kernel.bytes_per_update,
            "flop_per_update": r.kernel.flop, "bytes_per_s": r.bytes_per_s,
            "median_bytes_per_s": r.median_bytes_per_s, "flop_per_s": r.flop_per_s,
            "samples": st.n, "spread": st.spread, "iqr_rel": st.iqr_rel,
            "reps": r.rate.reps, "provenance": "measured", "value": "best sample",
            "likwid_value": "the run's average (likwid-bench's MByte/s)",
            "byte_model": BYTE_MODEL, "likwid": r.kernel.likwid, "note": r.kernel.note,
            "on": placed,
            "warnings": [w for w in (r.rate.warning(r.kernel.name),) if w]}


# rooflab's figure is the best sample, likwid-bench's MByte/s the whole run's average: on
# a busy machine the two differ by 2x (review 16a F: 164 vs 84.9 GB/s back to back).
LIKWID_VALUE = "; rooflab's figure is the best sample (likwid-bench prints the run's average)"
BYTE_MODEL = ("explicit loads + stores, no write-allocate (STREAM/likwid convention); "
              "ordinary (temporal) stores")


def summary_lines(r: KernelResult, placed: dict | None) -> list[str]:
    """The text report: likwid-bench's figures, one per line."""
    k, st = r.kernel, r.rate.stats
    lines = [
        f"{k.name}: {k.formula}   {r.threads} thread{'s' if r.threads != 1 else ''}, "
        f"{fmt_bytes_binary(r.ws_bytes)} per thread ({r.n} elements x {k.streams} stream"
        f"{'s' if k.streams != 1 else ''}), level {r.level}",
        f"  bandwidth     {si(r.bytes_per_s, 'B/s')} (best sample; median "
        f"{si(r.median_bytes_per_s, 'B/s')})",
        f"  compute       {si(r.flop_per_s, 'FLOP/s')}",
        f"  per update    {k.bytes_per_update} B, {k.flop} FLOP (AI {k.intensity:.3g} "
        f"FLOP/B)",
        f"  samples       {st.n} x {r.rate.reps} reps, spread {fmt_fraction(st.spread, 1)} "
        f"(max-min)/median, {spread_short(st.n)} {fmt_fraction(st.iqr_rel, 1)} of median",
        f"  byte model    {BYTE_MODEL}",
        f"  likwid        {k.likwid}{LIKWID_VALUE if not k.likwid.startswith('none') else ''}",
    ]
    if k.note:
        lines.append(f"  note          {k.note}")
    if placed:
        rows = placed.get("threads_row") or (
            f"the ceiling is for the threads that roof was measured or rated with, this "
            f"run used {r.threads}")
        lines.append(f"  on {placed['roof']}: {fmt_pct(placed['percent'])} of "
                     f"{placed['ceiling']} ({placed['provenance']}; {rows})")
    warning = r.rate.warning(k.name)
    if warning:
        lines.append(f"  warning: {warning}")
    return lines
