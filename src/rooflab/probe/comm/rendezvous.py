"""Joining the process group (env:// rendezvous) with a deadline and one-line errors, and
the probe's timeout setting.

torch's env:// rendezvous has no deadline of its own in one case that matters: a rank
other than 0 that reaches a MASTER_PORT held by another program (which accepts the
connection and never answers) waits in the TCPStore client's constructor past the timeout
it was given (tried here, torch 2.13: still waiting after 650 s with an 8 s timeout), while
rank 0 fails at once with EADDRINUSE and a traceback (review s20 r3 F1). So the rendezvous
runs in a helper thread that this rank stops waiting for after `rendezvous_limit()`, and
every failure becomes a ProbeError naming MASTER_ADDR:MASTER_PORT and what to change.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import threading
from typing import Any

from ...errors import InputError, ProbeError

TIMEOUT_ENV = "ROOFLAB_COMM_TIMEOUT"
# How long the ranks wait for each other at the rendezvous (at most; less when the probe's
# timeout is shorter): the launcher (--nproc) starts its ranks together, torchrun once
# its agents met, so they arrive within seconds of each other (PyTorch's import); a
# missing rank 0 is then said in 2 minutes, not after the probe's timeout (10-60 min).
RENDEZVOUS_S = 120.0
# torch's own store timeout lies this far past ours: a store still waiting when this rank
# gives up stays blocked in its thread until the process exits (a store that raised while
# Python shut down aborted the process: "terminate called without an active exception").
STORE_MARGIN_S = 60.0


class EveryRankError(InputError):
    """A setting every rank of the job checks alike and refuses alike (too few or too
    many ranks, a bad ROOFLAB_COMM_TIMEOUT): under torchrun one line per host says it,
    not one per rank."""


def comm_timeout(default: float) -> float:
    """The probe's timeout in seconds: ROOFLAB_COMM_TIMEOUT when set, else `default` (the
    mode's). It limits one step, not the whole run: the launcher (--nproc) stops the probe
    when a rank reaches no new stage for that long, and passes it to its ranks as their
    process-group timeout; under torchrun it is the process-group timeout (a rank waiting
    that long in one collective stops with an error)."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise EveryRankError(f"{TIMEOUT_ENV}={raw!r}: must be a number of seconds above 0 "
                             f"(how long a rank may make no progress before the "
                             f"communication probe stops, e.g. {TIMEOUT_ENV}=300); unset it "
                             f"for the mode's")
    return value


def check_timeout(value: float | None, name: str = "--timeout") -> None:
    """A timeout given in place of ROOFLAB_COMM_TIMEOUT (`--timeout S`, probe_comm's
    timeout_s): a finite number of seconds above 0, or None; refused under its own name
    (review s20 x2 F1: inf reached the ranks, which blamed ROOFLAB_COMM_TIMEOUT)."""
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise InputError(f"{name} must be a number of seconds above 0, not inf or nan (how "
                         f"long a rank may make no progress before the communication probe "
                         f"stops, e.g. {name} 300); got {value:g}")


def rendezvous_limit(timeout_s: float) -> float:
    return min(timeout_s, RENDEZVOUS_S)


def master_address(env: Any = None) -> tuple[str, str]:
    env = os.environ if env is None else env
    return env.get("MASTER_ADDR", "(MASTER_ADDR unset)"), env.get("MASTER_PORT", "?")


def failed_message(exc: BaseException, rank: int, addr: str, port: str) -> str:
    """The one line for a rendezvous that raised: a port in use says which and how to pick
    another; anything else is quoted (its first line) with what to check."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "EADDRINUSE" in str(exc) or "address already in use" in str(exc).lower():
        return (f"cannot start the process group on {addr}:{port}: the port is already in "
                f"use (another program, or an earlier job still running, holds MASTER_PORT "
                f"{port}); pick a free port: MASTER_PORT=N for every rank, or torchrun "
                f"--master-port N")
    if "libuv" in str(exc).lower():
        # a torch build without libuv (Windows) asked for it: MASTER_* are not at fault
        return (f"rank {rank} could not start the process group's store at {addr}:{port}: "
                f"{text}: this PyTorch build has no libuv (PyTorch for Windows); set "
                f"USE_LIBUV=0 for every rank (`rooflab probe --comm --nproc N` sets it for "
                f"its own ranks) and rerun")
    return (f"rank {rank} could not join the process group at {addr}:{port}: {text}; check "
            f"MASTER_ADDR and MASTER_PORT on every rank (rank 0's host, and a port free "
            f"there that every rank can reach)")


def timed_out_message(rank: int, world: int, addr: str, port: str, limit: float) -> str:
    if rank == 0:
        others = world - 1
        return (f"rank 0 waited {limit:g} s at {addr}:{port} for the other {others} "
                f"rank{'s' * (others != 1)} to join the process group, and not all came: "
                f"they failed to start (see their errors), are still starting, or look "
                f"for rank 0 elsewhere (check MASTER_ADDR and MASTER_PORT on every rank); "
                f"no cluster profile was written")
    return (f"rank {rank} found no process group at {addr}:{port} within {limit:g} s: "
            f"rank 0 did not start one there (it failed: another program may hold port "
            f"{port}, see rank 0's error; or it has not started; or MASTER_ADDR and "
            f"MASTER_PORT point elsewhere); no cluster profile was written")


def rendezvous_store(dist, rank: int, world: int, timeout_s: float,
                     limit_s: float | None = None):
    """The env:// rendezvous's store (torch's own handler: torchrun's agent store
    included), or a ProbeError when it fails or does not finish within `limit_s`
    (rendezvous_limit(timeout_s) by default). The store's timeout is then `timeout_s`."""
    addr, port = master_address()
    limit = rendezvous_limit(timeout_s) if limit_s is None else limit_s
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["store"] = next(dist.rendezvous(
                "env://", rank, world,
                timeout=_dt.timedelta(seconds=limit + STORE_MARGIN_S)))[0]
        except BaseException as exc:   # handed to the waiting thread, raised there
            box["error"] = exc

    helper = threading.Thread(target=connect, name="rooflab-rendezvous", daemon=True)
    helper.start()
    helper.join(limit)
    if helper.is_alive():
        raise ProbeError(timed_out_message(rank, world, addr, port, limit))
    if "error" in box:
        raise ProbeError(failed_message(box["error"], rank, addr, port)) from None
    store = box["store"]
    store.set_timeout(_dt.timedelta(seconds=timeout_s))
    return store


def join_group(dist, backend: str, rank: int, world: int, timeout_s: float) -> None:
    """init_process_group over rendezvous_store()'s store: as `init_process_group(backend,
    timeout=...)` with env:// does it (the default group's keys under the "default_pg"
    prefix), with the deadline and the errors above."""
    store = rendezvous_store(dist, rank, world, timeout_s)
    dist.init_process_group(backend, store=dist.PrefixStore("default_pg", store), rank=rank,
                            world_size=world, timeout=_dt.timedelta(seconds=timeout_s))


# What torch.distributed's backends say when a peer is gone or silent (gloo: "[.../gloo/
# transport/tcp/unbound_buffer.cc:129] Timed out waiting 25000ms for send operation to
# complete", "Connection closed by peer"; NCCL: "NCCL error ...", "Watchdog caught
# collective operation timeout").
_GROUP_WORDS = re.compile(r"gloo|nccl|c10d|timed out|timeout|connection (closed|reset)",
                          re.IGNORECASE)


def group_failure(exc: BaseException, rank: int, stage: str, timeout_s: float) -> str | None:
    """The one line for a collective that failed because another rank stopped, hung or
    lost its connection (under torchrun or another env:// launcher no launcher of ours
    watches the ranks: this rank's process-group timeout is what ends the wait); None for
    any other error (a bug: its traceback stays)."""
    text = str(exc).strip()
    if not _GROUP_WORDS.search(text):
        return None
    first = re.sub(r"^\[[^\]]*\]\s*", "", text.splitlines()[0])   # gloo's "[file:line] "
    return (f"rank {rank}: a collective failed during '{stage}' ({first}): another rank "
            f"stopped, hung or lost its connection (its own error or log says which; each "
            f"wait is given {timeout_s:g} s, {TIMEOUT_ENV}); no cluster profile was written")
