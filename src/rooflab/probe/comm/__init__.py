"""The communication probe (issue 8): collectives over torch.distributed, their bus
bandwidth (nccl-tests convention) and alpha/beta fits, and the cluster profile.

    rooflab probe --comm --nproc 2          # N local ranks on 127.0.0.1 (gloo / NCCL)
    torchrun --nproc-per-node 8 -m rooflab probe --comm

`probe_comm(nproc, mode)` returns the cluster MachineProfile. torch is imported only when
a probe runs.
"""

from __future__ import annotations

from .busbw import COLLECTIVES, algbw, bus_factor, busbw, link_bytes
from .fit import AlphaBeta, fit_alpha_beta
from .run import probe_comm, under_torchrun

__all__ = ["COLLECTIVES", "AlphaBeta", "algbw", "bus_factor", "busbw", "fit_alpha_beta",
           "link_bytes", "probe_comm", "under_torchrun"]
