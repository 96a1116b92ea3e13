"""The ceilings an analysis row was judged by, named in the row (review s19 r2 F16): a
CPU kernel with real-traffic DRAM bytes is judged against the derived "DRAM (real
traffic)" ceiling, not the roof's measured "DRAM", and a row's `level` alone ("DRAM")
sent a script to the wrong `roof.memory[]` entry (another bandwidth, another ridge).

The ceilings are found by the rules analyze() placed the point with
(byte_convention.memory_ceiling, ceiling.kernel_ceiling), and kept only where their
figures are the row's own, so a row never names a ceiling it was not judged by."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .byte_convention import memory_ceiling
from .ceiling import Roof, kernel_ceiling
from .kernel import Kernel
from .placement import Point


def judged_by(p: Point, roof: Roof, kernel: Kernel) -> dict[str, Any]:
    """{"memory_ceiling": "DRAM (real traffic)", "memory_ceiling_kind": "derived",
    "compute_ceiling": "fp64 vector", "compute_ceiling_kind": "measured"} for one row;
    compute_* null for a kernel without FLOP (no compute side, as `ai --json` writes it);
    {} where the rules do not give the row's figures back (a point built elsewhere)."""
    memory, _ = memory_ceiling(roof, kernel, p.level)
    if memory is None or memory.value != p.bytes_per_s:
        return {}
    out: dict[str, Any] = {"memory_ceiling": memory.label,
                           "memory_ceiling_kind": memory.provenance,
                           "compute_ceiling": None, "compute_ceiling_kind": None}
    if p.flop > 0:
        held = kernel_ceiling(roof, kernel.flop, kernel.unit, kernel.precision)
        if held.ceiling.value == p.peak_flop_per_s:
            out["compute_ceiling"] = held.label
            out["compute_ceiling_kind"] = held.ceiling.provenance
    return out


def rows_judged_by(points: Sequence[Point], roof: Roof,
                   kernels: Sequence[Kernel]) -> list[dict[str, Any]]:
    """judged_by of each point, by its kernel_index into `kernels` ({} without one)."""
    held: dict[tuple[int, str], dict[str, Any]] = {}
    out = []
    for p in points:
        i = p.kernel_index
        if not 0 <= i < len(kernels):
            out.append({})
            continue
        key = (i, p.level)
        if key not in held:
            held[key] = judged_by(p, roof, kernels[i])
        out.append(held[key])
    return out
