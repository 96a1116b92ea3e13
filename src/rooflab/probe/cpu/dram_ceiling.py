"""The memory ceilings the CPU probe writes, chosen from what it measured. Pure.

- DRAM: the triad sweep's point, or add's rate of the same run when triad's samples were
  disturbed and add's were not (review 16a K: triad best 42.6 GB/s over a median of 22.4,
  add 56.1 GB/s with 3 % spread). Add moves the same 24 B per element (2 loads, 1 store)
  on the same arrays, so it measures the same ceiling.
- DRAM (real traffic): the DRAM rate in the units hardware counters see (write-allocate
  reads included), derived from the same run: the largest of its STREAM kernels' rates,
  each x real/counted bytes (review 16a A, 17a N1), of those consistent with the DRAM
  ceiling (at most 3/2 x it + 10 %: a kernel above was read in another moment of a
  disturbed run and is left out, with a warning, review 19c N1), for bytes that are real
  traffic (model/analysis.py memory_ceiling); the derivation is model/real_traffic.py,
  shared with the thread-scaling rows and with profiles loaded from older files.
- A cache level measured below DRAM is dropped (review 16a L7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ...model import real_traffic as rt
from ...model.ceiling import Ceiling
from ...model.real_traffic import REAL_TRAFFIC
from ...units import fmt_bytes_binary, si
from ..stats import rates_warning, summarize
from . import bandwidth as bw


def _disturbed(c: Ceiling) -> bool:
    """The ceiling's own flag (spread or failed calibration, runner.Rate.warning), or its
    samples failing the same test."""
    return bool(c.warnings) or (len(c.samples) > 1
                                and rates_warning("", c.samples) is not None)


# add replaces a disturbed triad only when its best is this much higher (the probe's 5 %
# spread limit: a smaller difference is within one kernel's own noise)
ADD_MARGIN = 0.05


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
    # only a material difference: add 0.3 % above a mildly disturbed triad is the same
    # figure, and swapping it would only add a note (seen 2026-11-30: 37.2 vs 37.1 GB/s)
    if best <= triad.value * (1 + ADD_MARGIN):
        return triad, None
    t_med = summarize(triad.samples).median if triad.samples else triad.value
    a_med = summarize(samples).median
    ws = add.get("ws_bytes_per_thread")
    at = f" at {fmt_bytes_binary(ws)} per thread" if isinstance(ws, (int, float)) else ""
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


def real_factor(kernel: bw.StreamKernel) -> float:
    """Real bytes over counted bytes of a STREAM kernel (model/real_traffic.py
    real_factor): copy and scale 3/2, add and triad 4/3, sum 1 (review 17a N1)."""
    return rt.real_factor(kernel.loads, kernel.stores)


def real_traffic(dram: Ceiling, stream_dram: Mapping) -> Ceiling:
    """The DRAM rate in real-traffic units (what perf's IMC counts and likwid-perfctr's MEM
    group see), derived from the same run by model/real_traffic.py (the one derivation,
    shared with the thread-scaling rows): the largest real rate among its STREAM kernels
    consistent with the DRAM ceiling (review 19c N1: 17.1 GB/s = triad 12.8 x 4/3 where
    scale's 38.4 was read in a quiet moment of a disturbed run). Warnings: DRAM's, the
    kernels left out (both figures), and the chosen kernel's own when its samples
    disagree (review 17a N13a)."""
    ceiling, name = rt.real_traffic_ceiling(dram, stream_dram)
    # the DRAM ceiling's own kernel's samples are flagged on DRAM already
    own = (rates_warning(f"{REAL_TRAFFIC} ({name})", ceiling.samples)
           if len(ceiling.samples) > 1 and name != rt.own_kernel(dram) else None)
    return replace(ceiling, warnings=ceiling.warnings + (own,)) if own else ceiling


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
