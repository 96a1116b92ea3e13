"""Run the communication probe in N local processes on 127.0.0.1 (when not under torchrun).

Each rank is a subprocess (`python -m rooflab.probe.comm.worker`) with the env://
rendezvous variables torchrun would set. The launcher watches them: a rank that exits
non-zero, or any rank still running at the deadline, stops the whole probe with a
ProbeError naming the rank and its last stage; every rank is then killed and no cluster
profile is returned (rank 0 writes its result to a temporary file only on success).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError, ProbeError, require
from ...files import load_json
from .cluster import STAGE_ENV, TIMEOUT_ENV

# Seconds a rank may run, per mode: generous multiples of the expected run time.
TIMEOUTS = {"tiny": 90.0, "quick": 600.0, "default": 1800.0, "full": 3600.0}
POLL_S = 0.05


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on the loopback interface right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def rank_env(rank: int, nproc: int, port: int, stage_dir: str, timeout_s: float,
             extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                "WORLD_SIZE": str(nproc), "LOCAL_RANK": str(rank),
                "LOCAL_WORLD_SIZE": str(nproc), STAGE_ENV: stage_dir,
                TIMEOUT_ENV: str(timeout_s), "PYTHONUNBUFFERED": "1"})
    env.update(extra or {})
    return env


def _tail(path: Path, lines: int = 1) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    picked = [ln for ln in text if ln.startswith("rank error:")] or text
    return " | ".join(picked[-lines:])


def _stage_step(folder: Path, rank: int) -> tuple[int, str]:
    """(stage number, stage) a rank last reported; (0, ...) before its first report."""
    try:
        text = (folder / f"rank{rank}.stage").read_text().strip()
    except OSError:
        return 0, "starting (not yet reported)"
    num, _, stage = text.partition("\t")
    return (int(num), stage) if num.isdigit() else (0, text or "starting")


def _stage(folder: Path, rank: int) -> str:
    return _stage_step(folder, rank)[1]


def hung_message(folder: Path, running: list[int], timeout_s: float) -> str:
    """Name the ranks furthest behind: a collective waits for its slowest member, so the
    ranks at the lowest stage are the ones the others wait for."""
    steps = {r: _stage_step(folder, r) for r in running}
    low = min(n for n, _ in steps.values())
    behind = [r for r in running if steps[r][0] == low]
    waiting = [r for r in running if r not in behind]
    msg = (f"communication probe timed out after {timeout_s:g} s: "
           + "; ".join(f"rank {r} stopped progressing after '{steps[r][1]}'" for r in behind))
    if waiting:
        msg += (f" (rank{'s' * (len(waiting) > 1)} {', '.join(map(str, waiting))} "
                f"wait{'s' * (len(waiting) == 1)} for it at '{steps[waiting[0]][1]}')")
    return msg + "; all ranks were stopped and no cluster profile was written"


def _kill(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def launch(nproc: int, mode: str, *, timeout_s: float | None = None,
           env: Mapping[str, str] | None = None,
           progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run `nproc` ranks locally; return rank 0's cluster profile (as a dict)."""
    if nproc < 2:
        raise InputError(f"--nproc must be at least 2 (one rank has no peer); got {nproc}")
    require("torch", "torch", "the communication probe")
    timeout_s = float(timeout_s or TIMEOUTS.get(mode, 600.0))
    with tempfile.TemporaryDirectory(prefix="rooflab-comm-") as tmp:
        folder = Path(tmp)
        out = folder / "cluster.json"
        port = free_port()
        procs, errs = [], []
        try:
            for r in range(nproc):
                err = open(folder / f"rank{r}.err", "w")   # noqa: SIM115 (closed below)
                errs.append(err)
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "rooflab.probe.comm.worker", "--mode", mode,
                     "--out", str(out)],
                    env=rank_env(r, nproc, port, tmp, timeout_s, env),
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err))
            _watch(procs, folder, timeout_s, progress)
        finally:
            _kill(procs)
            for e in errs:
                e.close()
        if not out.exists():
            raise ProbeError("rank 0 finished without writing the cluster profile; "
                             f"its stderr: {_tail(folder / 'rank0.err', 3) or '(empty)'}")
        return load_json(out)


def _watch(procs: list[subprocess.Popen], folder: Path, timeout_s: float,
           progress: Callable[[str], None] | None) -> None:
    deadline = time.monotonic() + timeout_s
    last = ""
    while True:
        codes = [p.poll() for p in procs]
        failed = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
        if failed:
            _kill(procs)
            what = "; ".join(
                f"rank {r} exited with code {c} during '{_stage(folder, r)}'"
                + (f": {_tail(folder / f'rank{r}.err')}" if _tail(folder / f"rank{r}.err")
                   else "") for r, c in failed)
            raise ProbeError(f"communication probe failed: {what}; no cluster profile was "
                             f"written")
        if all(c == 0 for c in codes):
            return
        if time.monotonic() > deadline:
            _kill(procs)
            raise ProbeError(hung_message(
                folder, [r for r, c in enumerate(codes) if c is None], timeout_s))
        stage = _stage(folder, 0)
        if progress and stage != last:
            progress(stage)
            last = stage
        time.sleep(POLL_S)
