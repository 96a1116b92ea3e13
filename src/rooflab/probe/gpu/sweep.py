"""Working-set sweeps and plateau detection.

A read kernel run over working sets growing in geometric steps shows one plateau of
bandwidth per level of the memory hierarchy that holds the set (FACTS.md: the method of
ERT and gpu-benches' gpu-cache). Plateaus are found from the curve alone; a level name is
attached afterwards by comparing each plateau's sizes with the cache capacities.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..stats import rates
from ..timer import TimingPlan
from .timing import DeviceTimer, time_calls

# Neighbouring points within 12 % of a segment's median belong to the same plateau.
PLATEAU_TOLERANCE = 0.12
# A cache plateau must be this much faster than the level outside it to count.
LEVEL_GAIN = 1.15


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
    """A run of sweep points whose bandwidth stays within the tolerance."""

    first_bytes: float
    last_bytes: float
    bytes_per_s: float           # median of the points' medians
    points: int


def sweep_sizes(lo: float, hi: float, step: float, align: int = 4096) -> tuple[int, ...]:
    """Working sets from lo to hi (bytes) in geometric steps, each a multiple of `align`."""
    if not (lo > 0 and hi >= lo and step > 1):
        raise ValueError(f"sweep needs 0 < lo <= hi and step > 1; got {lo}, {hi}, {step}")
    n = int(math.floor(math.log(hi / lo) / math.log(step) + 1e-9)) + 1
    sizes = [max(align, int(round(lo * step ** i / align)) * align) for i in range(n)]
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
    plateaus: list[Plateau] = []
    run: list[tuple[float, float]] = []

    def close() -> None:
        if len(run) >= min_points:
            plateaus.append(Plateau(run[0][0], run[-1][0],
                                    statistics.median(v for _, v in run), len(run)))

    for size, value in pts:
        if run:
            med = statistics.median(v for _, v in run)
            if abs(value - med) > tolerance * med:
                close()
                run = []
        run.append((size, value))
    if run:
        close()
    return tuple(plateaus)


def label_plateaus(plateaus: Sequence[Plateau], capacities: Mapping[str, float],
                   outer: str = "DRAM") -> dict[str, Plateau]:
    """Name plateaus by level: each goes to the smallest cache that holds its largest set.

    A plateau reaching past every cache (beyond 1.5x the largest) is the `outer` level. When
    several plateaus fall into one cache level the fastest wins (below a cache's capacity a
    sweep can be slower for lack of parallelism, never faster); for the outer level the one
    reaching the largest sets wins (the others are transitions). A cache plateau must beat the
    level outside it by LEVEL_GAIN, or it is the outer level seen early and is dropped.
    """
    caps = sorted(capacities.items(), key=lambda kv: kv[1])
    largest = caps[-1][1] if caps else 0.0
    found: dict[str, Plateau] = {}
    for p in plateaus:
        if p.last_bytes > 1.5 * largest:
            level = outer
        else:
            level = next((name for name, cap in caps if p.last_bytes <= cap * 1.1), outer)
        old = found.get(level)
        if old is None or (p.last_bytes > old.last_bytes if level == outer
                           else p.bytes_per_s > old.bytes_per_s):
            found[level] = p
    order = [name for name, _ in caps] + [outer]
    floor = 0.0
    for name in reversed(order):
        p = found.get(name)
        if p is None:
            continue
        if floor and p.bytes_per_s < LEVEL_GAIN * floor:
            del found[name]
            continue
        floor = p.bytes_per_s
    return found


def sweep_to_dict(points: Sequence[SweepPoint], found: Mapping[str, Plateau]) -> dict:
    """The sweep for the profile's extras: every point's samples and the plateaus named."""
    return {
        "points": [{"working_set_bytes": p.working_set_bytes, "bytes_per_call": p.bytes_per_call,
                    "bytes_per_s": p.bytes_per_s, "samples": list(p.samples)} for p in points],
        "plateaus": {name: {"first_bytes": p.first_bytes, "last_bytes": p.last_bytes,
                            "bytes_per_s": p.bytes_per_s, "points": p.points}
                     for name, p in found.items()},
    }
