"""The memory ceilings the CPU probe writes, chosen from what it measured. Pure.

- DRAM: the triad sweep's point, or add's rate of the same run when triad's samples were
  disturbed and add's were not (review 16a K: triad best 42.6 GB/s over a median of 22.4,
  add 56.1 GB/s with 3 % spread). Add moves the same 24 B per element (2 loads, 1 store)
  on the same arrays, so it measures the same ceiling.
- DRAM (real traffic): the DRAM rate in the units hardware counters see (write-allocate
  reads included), derived from the same run: the largest of its STREAM kernels' rates,
  each x real/counted bytes (review 16a A, 17a N1), for bytes that are real traffic
  (model/analysis.py memory_ceiling).
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


def real_factor(kernel: bw.StreamKernel) -> float:
    """Real bytes over counted bytes of a STREAM kernel: each store's line is first read
    (write-allocate: McCalpin's STREAM FAQ; likwid's MEM group counts it), so it moves
    loads + 2 x stores where STREAM counts loads + stores: copy and scale 3/2 (16 -> 24 B),
    add and triad 4/3 (24 -> 32 B), sum 1 (review 17a N1)."""
    return (kernel.loads + 2 * kernel.stores) / (kernel.loads + kernel.stores)


def _real_rates(dram: Ceiling, stream_dram: Mapping) -> list[tuple[str, float, tuple]]:
    """(kernel, real-traffic rate, real-traffic samples) of each STREAM kernel of the run at
    DRAM: the DRAM ceiling's own kernel (triad, or add when dram_from_add chose it) and
    every other kernel in extras.stream.DRAM (copy, scale, add, sum; its triad, or add,
    when the ceiling is that kernel's, is the ceiling itself)."""
    own = "add" if dram.method.startswith("STREAM add") else "triad"
    out = [(own, dram.value * real_factor(bw.STREAM[own]),
            tuple(v * real_factor(bw.STREAM[own]) for v in dram.samples))]
    for name, got in stream_dram.items():
        rate = got.get("bytes_per_s") if isinstance(got, Mapping) else None
        if (name == own or name not in bw.STREAM or not isinstance(rate, (int, float))
                or rate <= 0):
            continue
        f = real_factor(bw.STREAM[name])
        out.append((name, float(rate) * f,
                    tuple(float(v) * f for v in got.get("samples") or ())))
    return out


def real_traffic(dram: Ceiling, stream_dram: Mapping) -> Ceiling:
    """The DRAM rate in real-traffic units (what perf's IMC counts and likwid-perfctr's MEM
    group see), derived from the same run: the largest real rate among its STREAM kernels,
    each counted rate x (loads + 2 stores)/(loads + stores) (real_factor). Taking triad
    alone left copy/scale-shaped loops, whose store share is larger, 15 % above it (review
    17a N1). Provenance derived; the samples are the chosen kernel's, scaled the same way,
    so the record table shows their spread; warnings: DRAM's, and the chosen kernel's own
    when its samples disagree (review 17a N13a)."""
    rates = _real_rates(dram, stream_dram)
    name, value, samples = max(rates, key=lambda r: r[1])
    parts = [f"{n} {si(v / real_factor(bw.STREAM[n]), 'B/s')} x "
             f"{_fraction(real_factor(bw.STREAM[n]))} = {si(v, 'B/s')}" for n, v, _ in rates]
    method = (f"derived from this run's measured DRAM rates: the largest real-traffic rate "
              f"of its STREAM kernels, {name}'s {si(value, 'B/s')} (of {'; '.join(parts)}); "
              f"each counted rate x (loads + 2 stores)/(loads + stores): a store's line is "
              f"first read (write-allocate), so copy and scale move 24 B per 16 counted (x "
              f"3/2), add and triad 32 per 24 (x 4/3), the read-only sum what it counts "
              f"(x 1); real traffic at the memory controller, write-allocate reads "
              f"included, what hardware counters (perf, likwid-perfctr) count: counter-"
              f"measured DRAM bytes and counts that are real traffic (read-only kernels, "
              f"meta byte_count \"real traffic\") are judged against it")
    # the DRAM ceiling's own kernel's samples are flagged on DRAM already
    own = (rates_warning(f"{REAL_TRAFFIC} ({name})", samples)
           if len(samples) > 1 and name != rates[0][0] else None)
    warnings = dram.warnings + ((own,) if own else ())
    return Ceiling(value=value, level=REAL_TRAFFIC, provenance="derived", source=dram.source,
                   method=method, samples=samples, warnings=warnings)


def _fraction(f: float) -> str:
    """3/2, 4/3, 1 as the method text writes them."""
    return {1.5: "3/2", 1.0: "1"}.get(round(f, 6), "4/3")


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
