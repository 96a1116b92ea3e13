"""Strided access and DRAM sectors (seed 000 §5.1 "合并访存"): a GPU moves global memory in
32-byte sectors, so elements read or written at a stride of S elements fetch whole sectors
of which only E bytes per element are used. Useful bandwidth falls by that share, and the
bytes a roofline must count (DRAM bytes = sectors x 32) rise by its inverse.

Model: n elements of E bytes at byte offsets k·S·E (k = 0..n-1) from a 32-B aligned base.
  S·E < 32: consecutive elements share sectors and every sector of the span is touched:
            sectors = ceil(((n - 1)·S·E + E) / 32)
  S·E >= 32: every element sits in sectors of its own: sectors = n·ceil(E / 32)
fp32 (E = 4): stride 1 -> 100 %, 2 -> 50 %, 8 and more -> 12.5 % (one 32-B sector per 4 B).
Caches are not credited: a strided sweep whose skipped elements are used by a later pass
from L2 costs less (a tiled or transposed layout is the fix the efficiency asks for).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

SECTOR_BYTES = 32   # DRAM <-> L2 transfer unit on NVIDIA GPUs since Maxwell (ncu's sector)


@dataclass(frozen=True)
class StridedAccess:
    """Sectors one array's strided accesses touch (provenance: derived)."""

    n: int
    stride: int
    element_bytes: float
    sectors: int

    @property
    def useful_bytes(self) -> float:
        return self.n * self.element_bytes

    @property
    def fetched_bytes(self) -> int:
        return self.sectors * SECTOR_BYTES

    @property
    def efficiency(self) -> float:
        """Useful / fetched bytes (1 when coalesced)."""
        return self.useful_bytes / self.fetched_bytes


def strided(n: int, stride: int, element_bytes: float) -> StridedAccess:
    """The sectors of n elements of element_bytes at a stride of `stride` elements."""
    e = Fraction(element_bytes).limit_denominator(64)   # int4: 1/2 byte
    span = stride * e
    if span >= SECTOR_BYTES:
        sectors = n * math.ceil(e / SECTOR_BYTES)
    else:
        sectors = math.ceil(((n - 1) * span + e) / SECTOR_BYTES)
    return StridedAccess(n, stride, float(e), int(sectors))
