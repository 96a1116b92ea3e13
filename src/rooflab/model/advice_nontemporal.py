"""Non-temporal (streaming) store advice, one rule for a stencil sweep and a STREAM triad
(review s18 r2 F1, F5). A normal CPU store that misses first reads the line it writes (the
write-allocate read), so L loads and S stores move L + 2S at the memory controller;
streaming stores move L + S. Whether the kernel's byte count holds that read decides what
the advice predicts: a count with it (real traffic: `--write-allocate`, counter bytes)
shrinks to L + S; a STREAM-counted one (L + S already, judged against the STREAM-counted
DRAM ceiling) keeps its bytes and AI, and the loop moves its real traffic faster instead:
the gain is the same (L + 2S) / (L + S), priced as bytes per second. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..units import fmt_times, si
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
from .byte_convention import holds_write_allocate
from .element_dtype import element_bytes
from .kernel import Kernel
from .machine import Machine
from .opkind import is_stencil, kind_word, name_words
from .weight_traffic import meta_shape

# A stencil count of at least this many element sizes per updated point holds the write-
# allocate read (24 B/point in fp64 with it, 16 without: the midpoint between them).
WA_ELEMENTS_PER_POINT = 2.5


@dataclass(frozen=True)
class StoreTraffic:
    """Explicit loads and stores that miss (any unit: bytes, or per point), how much of
    the write-allocate read the kernel's count holds (0 .. stores), and where it comes from."""

    loads: float
    stores: float
    counted_wa: float
    source: str

    @property
    def time_ratio(self) -> float:
        """Real DRAM traffic with streaming stores over traffic with normal ones."""
        return (self.loads + self.stores) / (self.loads + 2 * self.stores)

    @property
    def bytes_ratio(self) -> float:
        """The kernel's byte count with streaming stores over its count now: below 1 only
        by the write-allocate read the count holds (a STREAM-counted count keeps its bytes)."""
        return (self.loads + self.stores) / (self.loads + self.stores + self.counted_wa)


def meta_split(kernel: Kernel) -> dict[str, float]:
    """meta bytes_split's non-negative numbers (read, write, write_allocate, ...)."""
    split = kernel.meta.get("bytes_split")
    if not isinstance(split, Mapping):
        return {}
    return {k: float(v) for k, v in split.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0}


def shape_of(kernel: Kernel) -> Mapping:
    """meta shape (weight_traffic.meta_shape), or {} when there is none."""
    return meta_shape(kernel) or {}


def _from_split(kernel: Kernel) -> StoreTraffic | None:
    """Loads and stores from meta bytes_split: read / write / write_allocate (`ai stencil`),
    or per array with stores named <array>_write (`ai axpy`: x, y, z_write). A store to an
    array the kernel reads (axpy's y_write in place) hits the line just read: no
    write-allocate read to save, so it counts as neither a missing store nor a load."""
    split = meta_split(kernel)
    if not split:
        return None
    wa = split.get("write_allocate", 0.0)
    if "read" in split or "write" in split:
        loads, stores = split.get("read", 0.0), split.get("write", 0.0)
        words = f"{si(loads, 'B')} read, {si(stores, 'B')} written"
    else:
        writes = {k.removesuffix("_write"): v for k, v in split.items() if k.endswith("_write")}
        reads = {k: v for k, v in split.items()
                 if not k.endswith("_write") and k != "write_allocate"}
        missing = {a: v for a, v in writes.items() if a not in reads}
        loads, stores = sum(reads.values()), sum(missing.values())
        words = (f"{si(loads, 'B')} read ({', '.join(reads)}), {si(stores, 'B')} written "
                 f"({', '.join(missing) or 'to arrays it reads'})")
    if loads <= 0 or stores <= 0:
        return None
    counted = min(wa, stores) if wa > 0 else stores if holds_write_allocate(kernel) else 0.0
    return StoreTraffic(loads, stores, counted, f"its bytes_split: {words}")


def store_traffic(kernel: Kernel, kind: str, p: Point) -> StoreTraffic | None:
    """The kernel's loads and missing stores: from its bytes_split, else one load and one
    store per point for a stencil, two loads and one store per element for a triad
    (a[i] = b[i] + s*c[i]); None for other kinds or no missing store."""
    split = _from_split(kernel)
    if split is not None or meta_split(kernel):
        return split
    real = holds_write_allocate(kernel)
    if is_stencil(kind):
        pts, size = shape_of(kernel).get("updated_points"), element_bytes(kernel, p.precision)
        if real:
            counted, how = 1.0, "its bytes are real traffic (write-allocate read in)"
        elif isinstance(pts, (int, float)) and pts > 0 and size:
            per = p.bytes / pts / size
            counted = 1.0 if per >= WA_ELEMENTS_PER_POINT else 0.0
            how = f"{per * size:.3g} B per updated point (meta shape updated_points)"
        else:
            counted, how = 1.0, "its bytes taken to hold the write-allocate read"
        return StoreTraffic(1.0, 1.0, counted, f"one load and one store per point assumed "
                                               f"(24 -> 16 B per fp64 point); {how}; give "
                                               f"meta bytes_split read/write for the "
                                               f"kernel's own split")
    if _says_triad(kernel, kind):
        how = ("its bytes are real traffic (32 B per fp64 element, write-allocate read in)"
               if real else "its bytes STREAM-counted (24 B per fp64 element)")
        return StoreTraffic(2.0, 1.0, 1.0 if real else 0.0,
                            f"a triad's two loads and one store per element (32 -> 24 B "
                            f"per fp64 element of real traffic); {how}")
    return None


def _says_triad(kernel: Kernel, kind: str) -> bool:
    """A STREAM triad by its kind: meta op, else its name (opkind.kernel_kind: 'triad',
    'stream_triad', perf's 'triad_perf'); a meta op that names another kind wins, as it
    does for every lever."""
    return kind_word(kind) == "triad" or (not kind and "triad" in name_words(kernel.name))


def _offered(kernel: Kernel, kind: str) -> bool:
    """Who gets the advice: a stencil, a triad by kind or name, or a count that holds a
    write-allocate read (`ai axpy --out-of-place --write-allocate`) or stores out of
    place (`ai axpy --out-of-place`: STREAM's triad)."""
    return (is_stencil(kind) or _says_triad(kernel, kind)
            or meta_split(kernel).get("write_allocate", 0.0) > 0
            or shape_of(kernel).get("out_of_place") is True)


def nontemporal_ratio(kernel: Kernel, kind: str = "stencil",
                      p: Point | None = None) -> StoreTraffic | None:
    """The kernel's StoreTraffic where the advice applies (tests and callers without a
    point pass p=None: no shape-based guess then)."""
    if not _offered(kernel, kind):
        return None
    if p is None:
        return _from_split(kernel)
    return store_traffic(kernel, kind, p)


def nontemporal_advice(p: Point, e: Efficiency, kernel: Kernel, machine: Machine | None,
                       kind: str = "stencil") -> Advice | None:
    """Streaming (non-temporal) stores for the output: a CPU store-miss reads the line
    before writing it; bypassing the cache removes that read. DRAM only (a cache-resident
    array has no DRAM traffic to save), and not on a GPU (full-line stores allocate no
    read). The predicted point: bytes x bytes_ratio (only the write-allocate read the count
    holds goes), time x time_ratio (the real traffic's share that goes)."""
    if p.level != "DRAM" or (machine is not None and machine.kind == "gpu"):
        return None
    st = nontemporal_ratio(kernel, kind, p)
    if st is None or st.time_ratio >= 1.0:
        return None
    grid = "grid" if is_stencil(kind) else "array"
    nbytes = p.bytes * st.bytes_ratio
    # the time shrinks by time_ratio whatever the count holds: the bytes the count keeps
    # move at bytes_ratio / time_ratio the rate (a STREAM-counted count: (L + 2S)/(L + S))
    bw = p.bytes_per_s * st.bytes_ratio / st.time_ratio
    kept = ("" if st.counted_wa else
            f"; the count leaves that read out already (STREAM's convention), so its "
            f"{si(p.bytes, 'B')} and AI stay and the loop moves them "
            f"{fmt_times(1 / st.time_ratio)} faster (the real-traffic rate of the same memory)")
    return _advice(
        p, e, f"use non-temporal (streaming) stores for the output {grid}",
        f"stores that bypass the cache skip the write-allocate read of each written line: "
        f"real DRAM traffic x {st.time_ratio:.3g} ({fmt_times(1 / st.time_ratio)} fewer bytes)"
        + kept, "along slope", flop=p.flop, nbytes=nbytes, peak=p.peak_flop_per_s, bw=bw,
        assumption=f"{st.source}; the output {grid} is not re-read from cache before it is "
                   f"evicted (true for one larger than the last-level cache); the "
                   f"compiler emits streaming stores (#pragma omp simd nontemporal(a), "
                   f"-qopt-streaming-stores=always, _mm512_stream_pd); FLOP unchanged")
