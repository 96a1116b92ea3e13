"""probe_comm: the communication probe from Python, under torchrun or launching its ranks."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ...hardware.profile import MachineProfile, profile_from_dict


def under_torchrun() -> bool:
    """True when this process is one rank of a torchrun (or any env:// launcher) job."""
    return "TORCHELASTIC_RUN_ID" in os.environ or all(
        k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


def default_nproc() -> int:
    """One rank per visible GPU when there are two or more, else 2 CPU ranks (gloo)."""
    try:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        gpus = 0
    return gpus if gpus >= 2 else 2


def probe_comm(nproc: int | None = None, mode: str = "quick", *,
               timeout_s: float | None = None, env: Mapping[str, str] | None = None,
               progress: Callable[[str], None] | None = None) -> MachineProfile | None:
    """Measure the collectives and every rank's roof; return the cluster profile.

    Under torchrun this process is one rank (nproc is ignored) and only rank 0 gets the
    profile (the others get None). Otherwise `nproc` ranks are started on 127.0.0.1 and
    the profile comes back from rank 0. `timeout_s` (else ROOFLAB_COMM_TIMEOUT, else the
    mode's) is how long a rank may reach no new stage, and wait in one collective, before
    the probe stops; not a limit on the whole run. Raises ProbeError naming the rank when one dies
    or hangs (nothing is returned then), InputError for bad arguments, MissingDependency
    without torch (or numba, for CPU ranks)."""
    from .collectives import get_plan
    from .needs import check_needs
    from .rendezvous import check_timeout

    get_plan(mode)
    check_timeout(timeout_s, "timeout_s")
    # every package the ranks import is checked before any starts (needs.py): not numba
    # after 30 s of collectives
    if under_torchrun():
        from .cluster import dist_env, run_rank
        from .launch import TIMEOUTS
        from .rendezvous import TIMEOUT_ENV

        check_needs(mode, dist_env()["local_world"])
        # timeout_s given here, else ROOFLAB_COMM_TIMEOUT as set, else the mode's
        if timeout_s or not os.environ.get(TIMEOUT_ENV, "").strip():
            os.environ[TIMEOUT_ENV] = str(timeout_s or TIMEOUTS.get(mode, 600.0))
        return run_rank(mode, record_load=True)
    from .launch import launch

    check_needs(mode, nproc or default_nproc(), env)
    data = launch(nproc or default_nproc(), mode, timeout_s=timeout_s, env=env,
                  progress=progress)
    return profile_from_dict(data, "cluster profile from rank 0")
