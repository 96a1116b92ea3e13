"""Working-set sweeps on the device: sizes the allocator likes, timing each set, and the
plateaus of the curve in bytes (probe/plateaus.py finds and names them for both probes).

A read kernel run over working sets growing in geometric steps shows one plateau of
bandwidth per level of the memory hierarchy that holds the set (FACTS.md: the method of
ERT and gpu-benches' gpu-cache).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .. import plateaus as P
from ..plateaus import LEVEL_GAIN, PLATEAU_TOLERANCE
from ..stats import rates
from ..timer import TimingPlan
from .timing import DeviceTimer, time_calls


@dataclass(frozen=True)
class SweepPoint:
    """One working set: its size (bytes), bytes moved per call and rate samples (B/s)."""

    working_set_bytes: float
    bytes_per_call: float
    samples: tuple[float, ...]

    @property
    def bytes_per_s(self) -> float:
        return statistics.median(self.samples)


@dataclass(frozen=True)
class Plateau:
    """A run of sweep points whose bandwidth stays within the tolerance, by bytes."""

    first_bytes: float
    last_bytes: float
    bytes_per_s: float           # median of the points' medians
    points: int


def sweep_sizes(lo: float, hi: float, step: float, align: int = 4096) -> tuple[int, ...]:
    """Working sets from lo to hi (bytes) in geometric steps, each a multiple of `align`
    (whole pages for the allocator)."""
    sizes = [max(align, int(round(s / align)) * align) for s in P.geometric_sizes(lo, hi, step)]
    return tuple(dict.fromkeys(sizes))


def run_sweep(sizes: Sequence[int], make_op: Callable[[int], tuple[Callable[[], object], float]],
              timer: DeviceTimer, plan: TimingPlan,
              progress: Callable[[float], None] | None = None) -> tuple[SweepPoint, ...]:
    """Time make_op(size)'s call at each size with warm caches (no flush between calls).

    make_op returns (fn, bytes moved by one call of fn).
    """
    warm = timer.without_flush()
    points = []
    for i, size in enumerate(sizes):
        fn, nbytes = make_op(size)
        timing = time_calls(fn, warm, plan)
        points.append(SweepPoint(float(size), float(nbytes), rates(nbytes, timing.samples)))
        del fn
        if progress:
            progress((i + 1) / len(sizes))
    return tuple(points)


def find_plateaus(points: Sequence[tuple[float, float]], tolerance: float = PLATEAU_TOLERANCE,
                  min_points: int = 2) -> tuple[Plateau, ...]:
    """Split a (working set, bandwidth) curve into flat runs of at least `min_points`."""
    pts = sorted((float(s), float(v)) for s, v in points if v > 0)
    sizes = [s for s, _ in pts]
    return tuple(Plateau(sizes[p.first], sizes[p.last], p.bytes_per_s, p.count)
                 for p in P.find_plateaus([v for _, v in pts], tolerance, min_points))


def label_plateaus(plateaus: Sequence[Plateau], capacities: Mapping[str, float],
                   outer: str = "DRAM") -> dict[str, Plateau]:
    """Name plateaus by level (P.label_plateaus): the widest of several in one cache wins
    (the short runs at a level's ends are too little parallelism, or, on an H200, small
    sets reading faster than the body of the L2: plateaus.py, _KEEP),
    and a cache plateau must beat the level outside it by LEVEL_GAIN, or it is the outer
    level seen early and is dropped."""
    # Each plateau becomes the index range (2k, 2k+1) over its own first and last sizes.
    ps = sorted(plateaus, key=lambda p: p.first_bytes)
    sizes = [b for p in ps for b in (p.first_bytes, p.last_bytes)]
    spans = [P.Plateau(2 * k, 2 * k + 1, p.bytes_per_s) for k, p in enumerate(ps)]
    caps = dict(sorted(capacities.items(), key=lambda kv: kv[1]))
    found, _notes = P.label_plateaus(spans, sizes, caps, outer=outer, keep="widest",
                                     min_gain=LEVEL_GAIN)
    return {level: Plateau(sizes[q.first], sizes[q.last], q.bytes_per_s,
                           sum(p.points for k, p in enumerate(ps)
                               if q.first <= 2 * k and 2 * k + 1 <= q.last))
            for level, q in found.items()}


def sweep_to_dict(points: Sequence[SweepPoint], found: Mapping[str, Plateau]) -> dict:
    """The sweep for the profile's extras: every point's samples and the plateaus named."""
    return {
        "points": [{"working_set_bytes": p.working_set_bytes, "bytes_per_call": p.bytes_per_call,
                    "bytes_per_s": p.bytes_per_s, "samples": list(p.samples)} for p in points],
        "plateaus": {name: {"first_bytes": p.first_bytes, "last_bytes": p.last_bytes,
                            "bytes_per_s": p.bytes_per_s, "points": p.points}
                     for name, p in found.items()},
    }
