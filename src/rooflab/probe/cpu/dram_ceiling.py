"""The memory ceilings the CPU probe writes, chosen from what it measured. Pure.

- DRAM: the triad sweep's point, or add's rate of the same run when triad's samples were
  disturbed and add's were not (review 16a K: triad best 42.6 GB/s over a median of 22.4,
  add 56.1 GB/s with 3 % spread). Add moves the same 24 B per element (2 loads, 1 store)
  on the same arrays, so it measures the same ceiling.
- DRAM (real traffic): the DRAM rate in the units hardware counters see (write-allocate
  reads included), derived from the same run, for counter-measured kernels (review 16a A;
  model/analysis.py memory_ceiling).
- A cache level measured below DRAM is dropped (review 16a L7).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...model.analysis import REAL_TRAFFIC
from ...model.ceiling import Ceiling
from ...units import si
from ..plateaus import fmt_bytes
from ..stats import rates_warning, summarize
from . import bandwidth as bw

# A STREAM store is preceded by a write-allocate read of its line: triad and add move
# 32 B per element at the memory controller and count 24 (McCalpin's STREAM FAQ; likwid's
# MEM group counts the 32).
WRITE_ALLOCATE = 32 / 24


def _disturbed(c: Ceiling) -> bool:
    """The ceiling's own flag (spread or failed calibration, runner.Rate.warning), or its
    samples failing the same test."""
    return bool(c.warnings) or (len(c.samples) > 1
                                and rates_warning("", c.samples) is not None)


def dram_from_add(triad: Ceiling, stream_dram: Mapping) -> tuple[Ceiling, str | None]:
    """The DRAM ceiling: `triad` unless its samples are disturbed and add's (same run,
    `stream_dram` = extras.stream.DRAM) are clean and higher; then add's best, with the
    method and a note saying so. Provenance stays measured; both sample sets stay in
    extras.stream.DRAM."""
    add = stream_dram.get("add") or {}
    samples = tuple(float(v) for v in add.get("samples") or ())
    if not samples or not _disturbed(triad) or rates_warning("", samples) is not None:
        return triad, None
    best = max(samples)
    if best <= triad.value:
        return triad, None
    t_med = summarize(triad.samples).median if triad.samples else triad.value
    a_med = summarize(samples).median
    ws = add.get("ws_bytes_per_thread")
    at = f" at {fmt_bytes(ws)} per thread" if isinstance(ws, (int, float)) else ""
    why = (f"used in place of triad (best {si(triad.value, 'B/s')}, median "
           f"{si(t_med, 'B/s')}: its samples were disturbed) because add moves the same "
           f"24 B per element (2 loads + 1 store) in the same run and its samples were "
           f"clean (median {si(a_med, 'B/s')}); both sample sets are in extras.stream.DRAM")
    method = (f"STREAM add {bw.STREAM['add'].formula} (numba), the same threads as the "
              f"triad sweep{at}; {bw.BYTE_MODEL}; "
              f"value = best sample; {why}")
    chosen = Ceiling(value=best, level="DRAM", provenance="measured", source=triad.source,
                     method=method, samples=samples)
    note = (f"DRAM ceiling: add's {si(best, 'B/s')} instead of triad's "
            f"{si(triad.value, 'B/s')}: triad's samples were disturbed (median "
            f"{si(t_med, 'B/s')}) while add, the same 24 B/element pattern in the same run, "
            f"read clean (median {si(a_med, 'B/s')}); rerun on a quiet machine to measure "
            f"triad itself")
    return chosen, note


def real_traffic(dram: Ceiling, stream_dram: Mapping) -> Ceiling:
    """The DRAM rate in real-traffic units (what perf's IMC counts and likwid-perfctr's MEM
    group see), derived from the same run: the larger of the read-only `sum` rate (no
    stores, so counted = real) and the DRAM ceiling's kernel (triad or add: 2 loads +
    1 store) x 32/24 (its write-allocate read). Provenance derived."""
    kernel = "add" if dram.method.startswith("STREAM add") else "triad"
    wa = dram.value * WRITE_ALLOCATE
    parts = [f"{kernel} {si(dram.value, 'B/s')} x 32/24 (its store's write-allocate read "
             f"adds 8 B to the 24 counted) = {si(wa, 'B/s')}"]
    value = wa
    total = (stream_dram.get("sum") or {}).get("bytes_per_s")
    if isinstance(total, (int, float)) and total > 0:
        parts.insert(0, f"read-only sum {bw.STREAM['sum'].formula} {si(total, 'B/s')} "
                        f"(8 B per element, no stores: counted bytes are real)")
        value = max(wa, float(total))
    method = (f"derived from this run's measured DRAM rates: the larger of "
              f"{' and '.join(parts)}; real traffic at the memory controller, write-"
              f"allocate reads included, what hardware counters (perf, likwid-perfctr) "
              f"count: kernels with counter-measured DRAM bytes are judged against it")
    return Ceiling(value=value, level=REAL_TRAFFIC, provenance="derived", source=dram.source,
                   method=method, warnings=dram.warnings)


CACHES = ("L1", "L2", "L3")


def drop_below_dram(ceilings: Mapping[str, Ceiling], limit: float = bw.INVERTED
                    ) -> tuple[dict[str, Ceiling], list[str], dict[str, Ceiling]]:
    """The memory ceilings without a cache level measured below `limit` x DRAM, a note for
    each one dropped (naming both numbers), and the dropped ceilings.

    Dropped, not refused: a probe takes minutes and its other ceilings stand on their own
    (each flagged when disturbed); a profile keeping an L1 at 8.36 MB/s under DRAM's
    5.72 GB/s made `report` blame the kernels' counts (3325x above) instead of the probe.
    The dropped figure stays in extras (bandwidth_sweep, dropped_ceilings). DRAM is the
    reference because its bytes pass through every cache on the way in; two caches out of
    order are only flagged (bw.flag_inversions): noise can swap neighbouring plateaus."""
    dram = ceilings.get("DRAM")
    if dram is None:
        return dict(ceilings), [], {}
    keep, dropped, notes = {}, {}, []
    for level, c in ceilings.items():
        if level in CACHES and c.value < limit * dram.value:
            dropped[level] = c
            notes.append(f"{level} bandwidth dropped from the profile: measured "
                         f"{si(c.value, 'B/s')}, below DRAM's {si(dram.value, 'B/s')}, "
                         f"which is physically impossible (a cache nearer the core is never "
                         f"slower than DRAM): the probe was disturbed; kernels with {level} "
                         f"bytes get no {level} point; rerun on a quiet machine")
        else:
            keep[level] = c
    return keep, notes, dropped
