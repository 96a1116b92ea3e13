"""Which DRAM ceiling judges a kernel's bytes: STREAM-counted vs. real traffic (memory_ceiling),
and whether a ceiling counts STREAM's way (stream_counted). One rule for analyze, the
sanity checks, the charts and the parallel model. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..units import fmt_fraction, si
from .ceiling import Ceiling, Roof
from .kernel import Kernel
from .machine import is_cpu
from .opkind import kernel_kind, kind_word, normal_kind
from .provenance import has_counter_bytes
from .real_traffic import REAL_TRAFFIC

# Which bytes: STREAM-counted vs. real traffic (review 16a A, 17a N1/N2/N8). The CPU probe's DRAM
# ceiling is STREAM-counted (triad: 24 of the 32 B it moves; the store's write-allocate
# read is left out), the convention hand counts follow. Hardware counters (perf's IMC CAS
# counts, likwid-perfctr's MEM groups) see every byte at the memory controller, write-
# allocate reads included: against the counted ceiling a loop at the machine's real speed
# reads up to 32/24 = 133 % (copy/scale-shaped loops 24/16 = 150 %). So the probe writes a
# second DRAM ceiling in real-traffic units (probe/cpu/dram_ceiling.py), and memory_ceiling
# sends every DRAM byte figure that is real traffic to it: counter-measured bytes, and
# counts that are real traffic by construction (no stores to allocate, or the allocate
# read counted in). Counter bytes say "counted" (ncu, rocprof, perf, likwid); files of
# older versions say "measured" for perf/likwid, read the same (provenance.has_counter_bytes).
# meta["byte_count"] of a kernel whose count includes the write-allocate reads (`ai stencil
# --write-allocate`, `ai axpy`; a kernel file may set it, docs/json.md).
REAL_TRAFFIC_COUNT = "real traffic"
# Kinds that store nothing or almost nothing (a scalar, or a y vector 1/(n+1) of a GEMV's
# bytes): no write-allocate read to leave out, so their count is the real traffic (review
# 17a N2). Matched as opkind.kind_word; a plain 'sum' too. An SpMV's y is 2 % of its
# compulsory bytes at 27 nonzeros a row but 10 % at 5 (review s18 r2 F2): `ai spmv` counts
# y's write-allocate read in (meta byte_count); a hand count that leaves it out is still
# nearer the real-traffic ceiling (-2..-9 %) than the STREAM-counted one (+25 % and more).
READ_ONLY_KINDS = ("reduction", "dot", "gemv", "mul_mat_vec", "spmv")
# A read/write bytes_split whose write share is at most this is read-only: its uncounted
# write-allocate reads add at most this share, the tolerance above-roof tests allow.
READ_ONLY_WRITE_SHARE = 0.05


# A DRAM ceiling whose method says it counts STREAM's way (the CPU probe's, a likwid-bench
# import): explicit loads + stores, the write-allocate read left out.
_STREAM_COUNTED = re.compile(r"no write-allocate|write-allocate not counted")


def stream_counted(c: Ceiling) -> bool:
    """Whether the memory ceiling is STREAM-counted by its own method text."""
    return bool(_STREAM_COUNTED.search(c.method or ""))


def counter_bytes(kernel: Kernel) -> bool:
    """Whether the kernel's bytes were counted by hardware counters (real traffic)."""
    return has_counter_bytes(kernel.provenance)


def holds_write_allocate(kernel: Kernel) -> bool:
    """Whether the kernel's bytes hold every write-allocate read: counter bytes, or meta
    byte_count "real traffic" (one test for real_traffic_reason and the non-temporal and
    sparse advice)."""
    return counter_bytes(kernel) or (
        str(kernel.meta.get("byte_count", "")).strip().lower() == REAL_TRAFFIC_COUNT)


def roof_write_allocates(roof: Roof | None) -> bool:
    """Whether a store miss on the roof's machine reads its line first (write-allocate), so
    a count of real traffic holds that read: a CPU's caches do; an NVIDIA GPU's L2 keeps
    per-sector byte masks and writes a fully written 32-byte sector back without reading
    it, and GPUs and accelerators count no such read (review s19 r1 F12: `ai spmv --on
    h100` was 10 % high). No roof, or one of unknown kind: the CPU convention (machine.
    is_cpu, the rule `ai elementwise --stride` counts lines by too)."""
    return roof is None or is_cpu(roof)


def _store_share(kernel: Kernel) -> float | None:
    """The write share of a read/write meta bytes_split ({"read": .., "write": ..}, as
    `rooflab ai` writes it); None without one."""
    split = kernel.meta.get("bytes_split") if isinstance(kernel.meta, Mapping) else None
    if not isinstance(split, Mapping) or "read" not in split:
        return None
    try:
        read, write = float(split["read"]), float(split.get("write") or 0.0)
    except (TypeError, ValueError):
        return None
    return write / (read + write) if read + write > 0 else None


def real_traffic_reason(kernel: Kernel) -> str:
    """Why the kernel's DRAM bytes are real traffic (memory_ceiling's table), '' when they
    are STREAM-counted."""
    if counter_bytes(kernel):
        return ("DRAM bytes measured by hardware counters (real traffic, write-allocate "
                "reads included)")
    if holds_write_allocate(kernel):
        return (f'its count is real traffic (meta byte_count "{REAL_TRAFFIC_COUNT}": the '
                f"write-allocate reads are counted in, or its stores hit lines it read)")
    kind, _ = kernel_kind(kernel)
    if kind and (kind_word(kind) in READ_ONLY_KINDS or normal_kind(kind) == "sum"):
        return (f"a read-only kind ({kind}: it stores nothing or almost nothing, so no "
                f"write-allocate read is left out and its count is real traffic)")
    share = _store_share(kernel)
    if share is not None and share <= READ_ONLY_WRITE_SHARE:
        return (f"read-only by its bytes_split ({fmt_fraction(share)} written: no write-allocate "
                f"read to leave out, so its count is real traffic)")
    return ""


def memory_ceiling(roof: Roof, kernel: Kernel, level: str) -> tuple[Ceiling | None, str]:
    """The ceiling a kernel's bytes at `level` are judged against, and a note saying which
    and why when it is the real-traffic one. One rule, by whether the DRAM byte figure
    is real traffic (every byte the memory controller moves) or STREAM-counted (explicit
    loads + stores, the write-allocate read of each stored line left out):

    | DRAM bytes of the kernel                          | are       | judged against     |
    |---------------------------------------------------|-----------|--------------------|
    | counted by counters (provenance bytes counted)    | real      | DRAM (real traffic)|
    | meta byte_count "real traffic" (ai stencil/axpy   | real      | DRAM (real traffic)|
    |   --write-allocate, in-place axpy, a user's file) |           |                    |
    | a read-only kind: reduction/sum, dot, gemv, spmv  | real      | DRAM (real traffic)|
    | bytes_split read/write with <= 5 % written        | real      | DRAM (real traffic)|
    | any other count (hand, ai, zoo, profilers' DRAM)  | counted   | DRAM               |

    A roof without the real-traffic ceiling (GPU, datasheet, older profiles) judges every
    figure against its DRAM ceiling; other levels against their own ceiling (with a note
    for counter bytes on a STREAM-counted cache ceiling: _cache_note). Where that
    DRAM is STREAM-counted (a CPU probe's) and the bytes are real traffic, the note says
    so: they are judged against the counted ceiling because no real-traffic one was
    measured, not silently (review 17a N5)."""
    own = roof.find_memory(level)
    if own is not None and level != "DRAM":
        return own, _cache_note(own, kernel, level)
    if own is None:
        return own, ""
    real = roof.find_memory(REAL_TRAFFIC)
    if real is None and not stream_counted(own):
        return own, ""
    why = real_traffic_reason(kernel)
    if not why:
        # the default convention: no note (a trace of 20 000 kernels would print 20 000);
        # the point's binding ceiling says DRAM
        return own, ""
    if real is None:
        return own, (f"{why}, but roof '{roof.name}' has no {REAL_TRAFFIC} ceiling (a "
                     f"profile from an older probe, or a roof from numbers): judged against "
                     f"the STREAM-counted DRAM {si(own.value, 'B/s')}, which leaves the "
                     f"write-allocate read out, so a loop at the machine's speed reads up "
                     f"to 4/3 of it (copy-shaped 3/2); re-probe with `rooflab probe` for a "
                     f"real-traffic ceiling")
    return real, (f"{why}: judged against the {REAL_TRAFFIC} ceiling "
                  f"{si(real.value, 'B/s')} ({real.provenance}), not the STREAM-counted "
                  f"DRAM {si(own.value, 'B/s')}, which leaves the write-allocate read out")


def _cache_note(own: Ceiling, kernel: Kernel, level: str) -> str:
    """A note for counter bytes at a cache level judged against a STREAM-counted ceiling
    (review s18 r2 F4): likwid's L2/L3 groups and perf's cache events count lines moved, the
    write-allocate fill of each stored line included, as the DRAM counters do; the probe's
    cache ceilings count a triad's 24 of its 32 B and have no real-traffic twin. '' else."""
    if not (counter_bytes(kernel) and stream_counted(own)):
        return ""
    return (f"{level} bytes measured by hardware counters (lines moved, the write-allocate "
            f"fill of each stored line included) are judged against the STREAM-counted "
            f"{level} {si(own.value, 'B/s')}, which leaves that fill out and has no real-"
            f"traffic twin: a store-heavy loop at the level's speed reads up to 4/3 of it "
            f"(copy-shaped 3/2), so its % of roof there reads that much high")


def on_real_traffic(roof: Roof, kernel: Kernel) -> bool:
    """Whether the kernel's DRAM point is judged against the roof's REAL_TRAFFIC ceiling
    (memory_ceiling): what a chart asks before drawing that ceiling."""
    if "DRAM" not in kernel.bytes:
        return False
    c, _ = memory_ceiling(roof, kernel, "DRAM")
    return c is not None and c.level == REAL_TRAFFIC

