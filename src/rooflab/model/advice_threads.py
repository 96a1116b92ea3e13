"""How much of a CPU kernel's gap more threads can close, and what closes the rest.

A kernel on n threads, judged by a roof probed on N, gains at most N / n from threads
(each thread keeps its speed; there are only N of them). The rest of the gap to a
well-tuned kernel is per thread: loop order, cache and register blocking, SIMD. Review r6
F2: a one-thread numba matmul on a 2-thread roof was told "spread the work over every
core: 25.43x" (2x of it threads), and never told to block for cache, which gave 3.16x.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from ..units import fmt_fraction, fmt_times
from .advice_core import TARGET_EFFICIENCY, Advice, Efficiency, _advice, pct
from .analysis import Point
from .ceiling import Roof
from .kernel import Kernel
from .opkind import is_matrix, is_stencil
from .sanity_ceilings import roof_threads

# Below this, the per-thread remainder is within the model's rounding: not worth a lever.
LEAST_REST = 1.05


def kernel_threads(kernel: Kernel | None) -> int | None:
    """The kernel's recorded thread count (meta 'threads'), None when not a count."""
    n = kernel.meta.get("threads") if kernel is not None else None
    if not isinstance(n, (int, float)) or isinstance(n, bool) or n < 1:
        return None
    return int(n)


def l1_only(kernel: Kernel | None) -> bool:
    """The kernel's bytes are all given at L1 (no L2, L3 or DRAM bytes): its operands
    stay in L1, so there is no reload from further out for blocking to save."""
    if kernel is None:
        return False
    levels = {lv for lv, b in kernel.bytes.items() if b}
    return levels == {"L1"}


def per_thread_words(kind: str, kernel: Kernel | None = None) -> tuple[str, str]:
    """(action, why) of the per-thread lever: for a matrix or stencil op (or one of no
    known kind), loop order and cache blocking (a naive ijk matmul strides B by a row per
    load and misses L1 on each: review r4 F3 measured the blocked version 7.9-9.4x
    faster); for any other op, and for one of no known kind whose bytes are all at L1
    (`kernel`; nothing to block: review s19 r4 F4, an L1-resident recurrence was told
    "block for cache"), the serial dependencies in each thread."""
    if is_matrix(kind) or is_stencil(kind) or (not kind and not l1_only(kernel)):
        return ("block for cache and fix the loop order (L1/L2 tiles, unit-stride inner "
                "loop, register blocking), per thread",
                "a matrix or stencil loop far below its roof usually reloads operands from "
                "L2/L3/DRAM on every use, which DRAM-level AI cannot show (give the "
                "kernel's L2/L3 bytes to see it)")
    return ("cut per-thread latency: fewer barriers and serial dependencies, prefetch, "
            "more independent work per thread",
            "each thread waits on its own dependencies, which more threads do not shorten")


def split_threads(spread: Advice, p: Point, e: Efficiency, roof: Roof,
                  kernel: Kernel | None, kind: str) -> list[Advice]:
    """The 'spread the work over every core' lever of a CPU kernel not yet on every
    core, capped at what threads give (roof threads / the kernel's threads; a kernel of
    no recorded count is taken to run on one, and said to be), and the per-thread lever
    with the rest of the gap: that kernel's threads reaching TARGET_EFFICIENCY of their
    share of the roof. [spread] unchanged when the roof says no thread count or threads
    alone can close the gap."""
    have = roof_threads(roof)
    n = kernel_threads(kernel)
    if have is None or (n is not None and n >= have):
        return [spread]
    ran = n or 1
    cap = have / ran
    if spread.speedup <= cap:
        return [spread]
    t = max(spread.new_seconds, e.seconds / cap)
    action, why = per_thread_words(kind, kernel)
    share = TARGET_EFFICIENCY / cap
    ran_words = f"{ran} thread{'s' if ran != 1 else ''}"
    own = _advice(p, e, action,
                  f"the work runs at {pct(e.efficiency)} of the roof at its AI, and its "
                  f"{ran_words} can reach at most {pct(1 / cap)} of it ({have} measured "
                  f"it); " + why, "below roof", flop=p.flop, nbytes=p.bytes,
                  peak=p.peak_flop_per_s, bw=p.bytes_per_s, efficiency=share,
                  assumption=f"on the same {ran_words}, the same FLOP and bytes reach "
                             f"{fmt_fraction(TARGET_EFFICIENCY)} of their {ran}/{have} share of "
                             f"the roof ({pct(share)} of it; what a well-tuned kernel reaches, "
                             f"seed 000 §6.4)"
                             + ("" if n is not None else
                                "; its thread count is assumed 1 (not recorded)"))
    who = (f"it ran on {ran_words}" if n is not None else
           "its thread count is not recorded (no meta 'threads'; assumed 1)")
    note = (f"threads give at most {fmt_times(cap)}: {who} and the roof was measured on {have}; "
            f"the other {fmt_times(own.speedup)} of the gap to {fmt_fraction(TARGET_EFFICIENCY)} "
            f"of the roof is per-thread work that more threads do not buy")
    capped = replace(spread, new_seconds=t, speedup=e.seconds / t,
                     new_flop_per_s=p.flop / t if t > 0 else 0.0,
                     detail=f"{spread.detail}; {note}",
                     assumption=f"{note}; each of the {have} threads works as fast as "
                                f"the {ran_words} now")
    return [capped] + ([own] if own.speedup >= LEAST_REST else [])


# A one-thread reduction under this share of its roof is paced by its add chain, not its
# bytes: a serial numba sum (no fastmath) ran 1e7 fp64 adds in 9.6 ms, one add per ~3
# cycles at 3.2 GHz (the FP add latency), 55 % of a loaded 2-thread roof, 20 % of its
# real-traffic ceiling (review r6 F5).
SERIAL_SHARE = 0.5


def serial_reduction(kind: str, kernel: Kernel | None, e: Efficiency) -> tuple[str, str] | None:
    """(action, why) for a reduction recorded on one thread (meta 'threads' 1) far below its
    roof (work efficiency under SERIAL_SHARE): its loop-carried add, which the compiler may
    not reorder (no fast-math), not its loads, sets the pace; None otherwise."""
    if kind != "reduction" or kernel_threads(kernel) != 1 or e.efficiency >= SERIAL_SHARE:
        return None
    return ("break the reduction's serial add chain: several partial sums (or numba "
            "fastmath=True / -ffast-math so the compiler reassociates and vectorises it), "
            "then prange / threads over every core",
            "a one-thread reduction's `s += x[i]` waits for the previous add (3-4 cycles "
            "each) and cannot use SIMD without reassociation: the add chain, not DRAM, "
            "sets its pace; SIMD loads alone do not shorten it")
