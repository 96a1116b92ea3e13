"""The optional packages the communication probe's ranks import, checked before any rank
starts: torch for the collectives, and numba where a rank's own roof is the CPU probe (gloo
ranks outside tiny mode, device.rank_profile). A rank that found numba missing only at its
last stage had already measured every collective (review s19 r3 F1: 30 s, then nothing)."""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Mapping

from ...errors import MissingDependency, install_command, install_reason

PURPOSE = "the communication probe"


class MissingPackages(MissingDependency):
    """Several optional packages missing at once: one line names them all and one command
    installs every extra they come in (install_command's comma-separated extras)."""

    def __init__(self, modules: tuple[str, ...], extras: tuple[str, ...], purpose: str):
        extra = ",".join(extras)
        named = " and ".join(f"'{m}'" for m in modules)
        reasons = [install_reason(e) for e in extras if install_reason(e)]
        # the command ends its line (copyable as is); a reason goes on the next one
        super(MissingDependency, self).__init__(
            f"the Python packages {named} are not installed (needed for {purpose}); install "
            f"them with: {install_command(extra)}" + "".join(f"\n{r}" for r in reasons))
        self.module = modules[0]
        self.extra = extra


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):   # a None left in sys.modules, a broken parent
        return False


# device nodes a CUDA/ROCm torch sees its GPUs through (Linux, containers, WSL2): without
# one, the ranks are CPU ranks, known without importing torch (seconds on a busy machine)
GPU_NODES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dxg")


def ranks_on_cpu(local_ranks: int, env: Mapping[str, str] | None = None) -> bool:
    """Whether the ranks will time on the CPU (gloo), as cluster.pick_backend decides in
    them; True without torch (no CUDA torch to see a GPU with) or without a GPU device
    node. `env`: what the ranks get on top of this process's environment (probe_comm's
    env, launch.rank_env), so a backend forced there is the ranks' (review s19 x1 F11)."""
    forced = {**os.environ, **(env or {})}.get("ROOFLAB_COMM_BACKEND")
    if forced:
        return forced != "nccl"
    if not any(glob.glob(pattern) for pattern in GPU_NODES):
        return True
    try:
        import torch
    except ImportError:
        return True
    from .cluster import pick_backend

    return pick_backend(torch, local_ranks)[0] != "nccl"


def check_needs(mode: str, local_ranks: int, env: Mapping[str, str] | None = None) -> None:
    """Raise MissingDependency naming every extra the ranks will need and lack (module doc);
    `env` as ranks_on_cpu's."""
    missing = [] if _installed("torch") else [("torch", "torch")]
    if mode != "tiny" and not _installed("numba") and ranks_on_cpu(local_ranks, env):
        missing.append(("numba", "cpu"))
    if len(missing) == 1:
        module, extra = missing[0]
        why = PURPOSE if module == "torch" else f"{PURPOSE}: each CPU rank's own roof"
        raise MissingDependency(module, extra, why)
    if missing:
        raise MissingPackages(tuple(m for m, _ in missing), tuple(e for _, e in missing),
                              f"{PURPOSE}; numba for each CPU rank's own roof")
