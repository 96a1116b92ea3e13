"""What a kernel without FLOP reaches: the bytes/s it moved and their share of its level's
bandwidth ceiling, for every verb's `analysis` rows (model/schema.point_to_dict) and the bench
CSV. model/ may not import report/, so the rule lives here and report/ imports it (one
copy)."""

from __future__ import annotations

from .analysis import Point


def bandwidth_of(p: Point) -> tuple[float | None, float | None]:
    """(bytes/s moved, % of its level's bandwidth ceiling) of an analysed point without
    FLOP (a copy, a sort), else (None, None): with no FLOP there is no FLOP/s, and what the
    kernel reaches is the bandwidth (seed 000 §3.1: a copy reaches 85-92 % of spec). Only
    `report` and the profiler verbs filled it; `bench --json`, the verb that times copies,
    had no % at all for them (review r1_json F8)."""
    if not p.seconds or p.flop > 0:
        return None, None
    moved = p.bytes / p.seconds
    return moved, (100.0 * moved / p.bytes_per_s if p.bytes_per_s > 0 else None)
