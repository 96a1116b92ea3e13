"""Working-set sweeps read as plateaus: the one algorithm both probes use.

A bandwidth kernel run over working sets growing in geometric steps shows one plateau per
level of the memory hierarchy that holds the set (FACTS.md: the method of ERT and
gpu-benches' gpu-cache; likwid-bench reads its curves the same way). The plateaus are found
from the curve alone; a level name is attached afterwards by comparing each plateau's sizes
with the cache capacities, and where the drops sit far from the reported capacities a note
says so (a virtual machine may report another CPU's cache sizes).

Pure: sizes and bandwidths in, index ranges, names and notes out. The probes keep what is
theirs: the CPU its per-thread capacities, STREAM's choice of the DRAM point and the reading
of levels noise broke up; the GPU its aligned allocation sizes, timing and byte ranges.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..units import fmt_bytes_binary as fmt_bytes
from ..units import fmt_fraction

LEVELS = ("L1", "L2", "L3", "DRAM")
# Neighbouring points within 12 % of a run's median belong to the same plateau.
PLATEAU_TOLERANCE = 0.12
# Two plateaus this far apart (twice the tolerance) are a real step in the curve; closer,
# where the split falls is decided by noise and drift, not by a cache edge (review 11a F-B:
# Zen 4 L2 and L3 triad differ by ~15 %, and the 12 % rule split them past the L2 size).
REAL_STEP = (1 + PLATEAU_TOLERANCE) ** 2
# A cache plateau must be this much faster than the level outside it to count (GPU).
LEVEL_GAIN = 1.15


def geometric_sizes(lo: float, hi: float, step: float, *, cover: bool = False
                    ) -> tuple[float, ...]:
    """Sizes lo, lo*step, lo*step**2, ... up to hi, or (cover=True) up to the first size
    at or past hi, so that the last point reaches the largest working set asked for."""
    if not (lo > 0 and hi > 0 and step > 1):
        raise ValueError(f"sweep needs sizes > 0 and step > 1; got {lo}, {hi}, {step}")
    span = math.log(hi / lo) / math.log(step)
    if cover:
        count = max(1, math.ceil(span))
    else:
        if hi < lo:
            raise ValueError(f"sweep needs lo <= hi; got {lo}, {hi}")
        count = int(math.floor(span + 1e-9))
    return tuple(lo * step**i for i in range(count + 1))


@dataclass(frozen=True)
class Plateau:
    """Consecutive sweep points [first, last] whose bandwidths agree within a tolerance."""

    first: int
    last: int
    bytes_per_s: float     # median of the member points' values

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def find_plateaus(values: Sequence[float], tol: float = PLATEAU_TOLERANCE,
                  min_points: int = 2) -> tuple[Plateau, ...]:
    """Split a bandwidth-vs-size curve (positive values in size order) into flat runs.

    A point joins the current run while it lies within `tol` (relative, on a log scale so
    a rise and a fall weigh the same) of the run's median; runs shorter than `min_points`
    are transitions between levels and are dropped; neighbouring runs within `tol` of each
    other (split by one noisy point) are merged.
    """
    width = math.log1p(tol)
    runs: list[list[int]] = []
    for i, v in enumerate(values):
        if runs and abs(math.log(v) - math.log(_median(values, runs[-1]))) <= width:
            runs[-1].append(i)
        else:
            runs.append([i])
    merged: list[list[int]] = []
    for r in (r for r in runs if len(r) >= min_points):
        if merged and abs(math.log(_median(values, merged[-1]))
                          - math.log(_median(values, r))) <= width:
            merged[-1] = list(range(merged[-1][0], r[-1] + 1))
        else:
            merged.append(r)
    return tuple(Plateau(r[0], r[-1], _median(values, r)) for r in merged)


def _median(values: Sequence[float], idx: Sequence[int]) -> float:
    return statistics.median(values[j] for j in idx)


# How one of two plateaus in a cache level is kept (key of the plateau and the sizes).
# "widest": the one spanning the largest ratio of working sets, ties to the faster: a GPU
# sweep's short runs sit at either end of a cache level (too little parallelism below it;
# on an H200, 2-3 MiB sets read 20-40 % faster than the 4-57 MiB body of its 60 MiB L2),
# and the level's bandwidth is the body's.
_KEEP = {"longest": ("longer", lambda q, sizes: q.count),
         "fastest": ("faster", lambda q, sizes: q.bytes_per_s),
         "widest": ("wider", lambda q, sizes: (sizes[q.last] / sizes[q.first], q.bytes_per_s))}


def label_plateaus(plateaus: Sequence[Plateau], sizes: Sequence[float],
                   capacities: Mapping[str, float], *, outer: str = "DRAM",
                   keep: str = "longest", min_gain: float | None = None, per: str = ""
                   ) -> tuple[dict[str, Plateau], tuple[str, ...]]:
    """Name each plateau by the cache level that holds it; the ones past every cache are
    `outer`. Returns {level: plateau} in size order and notes.

    `capacities` run from the innermost level out. A plateau belongs to the first level
    whose capacity holds its central working set; the last plateau, when it reaches past
    1.5x the largest capacity, is `outer` whatever its centre (the sweep ends there).
    Without capacities, levels are named by plateau order (the last one is `outer`).
    Plateaus past the caches make one `outer` plateau: their spans are joined (it shows
    where the caches end) and its bandwidth is the furthest one's (the nearer ones are
    transitions). Two plateaus in one cache level: `keep` picks the "longest" (CPU: noise
    makes short runs), the "fastest", or the "widest" (GPU: the span of working sets, _KEEP),
    and a note says so. With `min_gain`, a cache plateau not
    that much faster than the level outside it is that level seen early and is dropped.
    Notes also say where the measured drops lie far (1.5x) from the capacities; `per`
    qualifies their sizes.
    """
    caps = dict(capacities)
    largest = max(caps.values(), default=0.0)
    notes: list[str] = []
    chosen: dict[str, Plateau] = {}
    for i, p in enumerate(plateaus):
        lo, hi = sizes[p.first], sizes[p.last]
        if not caps:
            level = LEVELS[i] if i < min(len(plateaus) - 1, len(LEVELS) - 1) else outer
        elif i == len(plateaus) - 1 and hi > 1.5 * largest:
            level = outer       # the sweep ends in the outer level
        else:
            level = next((lv for lv, cap in caps.items() if math.sqrt(lo * hi) <= cap), outer)
        old = chosen.get(level)
        if old is not None and level == outer:
            p = Plateau(old.first, p.last, p.bytes_per_s)
        elif old is not None:
            notes.append(f"two plateaus fall in {level} ({fmt_bytes(lo)}..{fmt_bytes(hi)}"
                         f"{per}); kept the {_KEEP[keep][0]} one")
            p = max(old, p, key=lambda q: _KEEP[keep][1](q, sizes))
        chosen[level] = p
    if not caps:
        notes.append("the OS reports no cache sizes; levels named by plateau order")
    ordered = sorted(chosen.items(), key=lambda kv: kv[1].first)
    if min_gain:
        floor, kept = 0.0, []
        for level, p in reversed(ordered):
            if level != outer and floor and p.bytes_per_s < min_gain * floor:
                continue
            floor = p.bytes_per_s
            kept.append((level, p))
        ordered = kept[::-1]
    for (level, p), (nxt, q) in zip(ordered, ordered[1:], strict=False):
        cap = caps.get(level)
        edge_lo, edge_hi = sizes[p.last], sizes[q.first]
        if cap is None or not (edge_hi < cap / 1.5 or edge_lo > cap * 1.5):
            continue
        step = p.bytes_per_s / q.bytes_per_s
        if step < REAL_STEP:
            notes.append(
                f"{level}: the bandwidth changes only {fmt_fraction(abs(step - 1))} from {level} "
                f"to {nxt} here (within ~{fmt_fraction(REAL_STEP - 1)}), so the {level} boundary "
                f"could not be located in the sweep; the OS reports {fmt_bytes(cap)}{per}")
        else:
            notes.append(
                f"{level}: the OS reports {fmt_bytes(cap)}{per} but bandwidth falls between "
                f"{fmt_bytes(edge_lo)} and {fmt_bytes(edge_hi)}{per}; a virtual machine may "
                f"report another CPU's cache sizes (the measured plateau is used)")
    return dict(ordered), tuple(notes)
