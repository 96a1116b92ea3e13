"""real_traffic_basis: a probed CPU roof with its DRAM ceiling at its real-traffic rate, the
basis efficiencies are taken against when kernels move to a datasheet roof (--hardware), and
the words saying so (split from model/retime.py, which imports both). Pure.
"""

from __future__ import annotations

from dataclasses import replace

from .ceiling import Roof
from .real_traffic import REAL_TRAFFIC


def real_traffic_basis(basis: Roof, target: Roof) -> Roof | None:
    """`basis` with its DRAM ceiling at its DRAM (real traffic) rate, to take efficiencies
    against when the kernels move to a datasheet roof; None where no conversion applies.

    A datasheet (catalog) DRAM figure is the channels' rate, channels x transfers x 8 B:
    real-traffic units, the bytes the memory controller moves. A probed CPU roof judges
    STREAM-counted bytes (hand counts, ai, the zoo) against its STREAM-counted DRAM, which
    leaves the write-allocate read out (a triad counts 24 of the 32 B it moves, so ~3/4 of
    the real rate), and counter bytes against its real-traffic one. Carrying a fraction of
    the counted rate onto the datasheet rate mixed the units: the same loop moved 23.45x
    from a kernel file and 17.59x from perf onto an EPYC 9654 (460.8 / 19.6 vs 460.8 /
    26.2; review 17a N12). Taking every kernel's efficiency against the real-traffic rate
    puts both on the datasheet's units, so the same loop gets one factor (17.59x); the
    kernel's own counted/real ratio is the same code's on both machines, so it cancels.
    A target with its own real-traffic ceiling (another probed profile) or a basis
    without one (a GPU, an older profile) compares like with like already."""
    real, dram = basis.find_memory(REAL_TRAFFIC), basis.find_memory("DRAM")
    if (real is None or dram is None or target.kind != "nominal"
            or target.find_memory("DRAM") is None
            or target.find_memory(REAL_TRAFFIC) is not None):
        return None
    memory = tuple(replace(c, value=real.value) if c is dram else c for c in basis.memory)
    return replace(basis, memory=memory)


def real_traffic_line(basis: Roof, target: Roof) -> str:
    """What real_traffic_basis does, in the words efficiency_basis adds; '' where it does
    nothing."""
    if real_traffic_basis(basis, target) is None:
        return ""
    from ..units import fmt_times, si

    real, dram = basis.find_memory(REAL_TRAFFIC), basis.find_memory("DRAM")
    return (f"; DRAM efficiencies taken against {basis.name}'s {REAL_TRAFFIC} "
            f"{si(real.value, 'B/s')}, not its STREAM-counted DRAM {si(dram.value, 'B/s')}: "
            f"{target.name}'s DRAM {si(target.find_memory('DRAM').value, 'B/s')} is a "
            f"datasheet channel rate, in real-traffic units (a STREAM triad counts about 3/4 "
            f"of what the channels move), so a STREAM-counted kernel's predicted factor "
            f"against the counted rate would be {fmt_times(real.value / dram.value)} high")
