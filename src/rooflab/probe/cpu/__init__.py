"""The CPU probe: this machine's measured roofline (issue 3).

`probe_cpu(mode, threads, progress) -> MachineProfile`; `sweep_points(profile)` gives the
intensity sweep for charts. numba is imported only when a probe runs.
"""

from __future__ import annotations

from .assemble import sweep_points
from .suite import probe_cpu

__all__ = ["probe_cpu", "sweep_points"]
