"""Run the communication probe in N local processes on 127.0.0.1 (when not under torchrun).

Each rank is a subprocess (`python -m rooflab.probe.comm.worker`) with the env://
rendezvous variables torchrun would set. The launcher watches them: a rank that exits
non-zero, or one that reaches no new stage for the timeout (a stall, not a limit on the
whole run), stops the whole probe with a ProbeError naming the rank and its last stage;
every rank is then killed and no cluster profile is returned (rank 0 writes its result
to a temporary file only on success).
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
from ..cpu.flags import machine_load_notes
from ..cpu.load import LoadSources, MachineLoad, loadavg_1m, machine_load, snapshot
from ..cpus import usable_cpus
from .cluster import STAGE_ENV
from .rendezvous import TIMEOUT_ENV, comm_timeout

# Seconds a rank may spend in one stage without reaching the next, per mode: generous
# multiples of the expected time of the whole run, so of any stage too. `--timeout` or
# ROOFLAB_COMM_TIMEOUT (rendezvous.comm_timeout) replaces them, the launcher's stall limit
# and the ranks' process-group timeout alike (review s20 r3 F3: it was overwritten here).
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
    if os.name == "nt":
        # PyTorch's Windows builds have no libuv, which torch 2.4-2.6's TCPStore asks for
        # by default: "use_libuv was requested but PyTorch was build without libuv
        # support" (pytorch#139990; review s23 r3 F8). The user's own USE_LIBUV stands.
        env.setdefault("USE_LIBUV", "0")
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
    return (msg + f": no new stage in {timeout_s:g} s (a hang; or, on a busy machine, a "
            f"stage slower than that: give a larger --timeout); all ranks were stopped and "
            f"no cluster profile was written")


def _kill(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def check_nproc(nproc: int, cpus: int) -> None:
    """Refuse a rank count that cannot measure a link, before any process starts.

    Each local rank is a Python process with PyTorch (a few hundred MB) that also runs
    its own compute probe on all its threads: ranks beyond the CPUs only time each other
    waiting for a CPU (and --nproc 100000 once started that many processes)."""
    if nproc < 2:
        raise InputError(f"--nproc must be at least 2 (one rank has no peer); got {nproc}")
    if nproc > cpus:
        raise InputError(
            f"--nproc {nproc} would start {nproc} local ranks on {cpus} CPUs; each rank "
            f"needs a CPU of its own (more would measure CPU sharing, not the link), so "
            f"use --nproc {'2' if cpus == 2 else f'2..{cpus}'}, or torchrun to spread "
            f"ranks over several hosts"
            if cpus >= 2 else
            f"--nproc {nproc} would start {nproc} local ranks on 1 CPU; the communication "
            f"probe needs at least 2 CPUs here (one per rank), or torchrun across hosts")


def _terminate_as_interrupt() -> Callable[[], None]:
    """SIGTERM (kill, timeout, a batch scheduler) raises KeyboardInterrupt in the main
    thread while the ranks run, so the `finally` that kills them runs: without it the
    launcher died alone and its ranks probed on for the rest of their deadline. The
    handler is rooflab.interrupts', which remembers the signal, so the CLI exits 143 for a
    SIGTERM, not 130 as for Ctrl-C (review s22 r2 F1). Returns the function that puts the
    previous handler back."""
    from ...interrupts import terminate_as_interrupt

    return terminate_as_interrupt()


def launch(nproc: int, mode: str, *, timeout_s: float | None = None,
           env: Mapping[str, str] | None = None,
           progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run `nproc` ranks locally; return rank 0's cluster profile (as a dict)."""
    check_nproc(nproc, usable_cpus())
    require("torch", "torch", "the communication probe")
    timeout_s = float(timeout_s or comm_timeout(TIMEOUTS.get(mode, 600.0)))
    with tempfile.TemporaryDirectory(prefix="rooflab-comm-") as tmp:
        folder = Path(tmp)
        out = folder / "cluster.json"
        port = free_port()
        procs, errs = [], []
        sources = LoadSources()
        loadavg, before = loadavg_1m(sources), snapshot(sources)
        stop = _terminate_as_interrupt()
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
            # The ranks were reaped by poll(), so os.times() counts their CPU time as ours.
            load = machine_load(before, snapshot(sources), ranks_cpus(nproc, usable_cpus()),
                                loadavg, sources)
        finally:
            _kill(procs)
            stop()
            for e in errs:
                e.close()
        if not out.exists():
            raise ProbeError("rank 0 finished without writing the cluster profile; "
                             f"its stderr: {_tail(folder / 'rank0.err', 3) or '(empty)'}")
        return with_machine_load(load_json(out), load)


def ranks_cpus(nproc: int, cpus: int) -> int:
    """CPUs the local ranks keep busy: each runs on cpus // nproc threads (cluster.py)."""
    return min(cpus, nproc * max(1, cpus // nproc))


LAUNCHER_SCOPE = "all local ranks, from their start to their exit"


def with_machine_load(data: dict[str, Any], load: MachineLoad,
                      scope: str = LAUNCHER_SCOPE) -> dict[str, Any]:
    """The cluster profile with the other work measured during the run, as the CPU probe
    records it (extras.machine_load), its notes first among the roof's notes. `scope`
    says which ranks and which time it covers (the launcher's or, under torchrun, rank
    0's host's, hostload.py)."""
    notes = machine_load_notes(load)
    data.setdefault("extras", {})["machine_load"] = load.to_dict() | {
        "notes": notes, "scope": scope}
    if notes and isinstance(data.get("measured"), dict):
        data["measured"]["notes"] = notes + list(data["measured"].get("notes") or [])
    return data


def _watch(procs: list[subprocess.Popen], folder: Path, timeout_s: float,
           progress: Callable[[str], None] | None) -> None:
    """Wait for the ranks. `timeout_s` is a stall limit, each rank's own: a rank whose stage
    number has not changed for that long stops the probe, however long the whole run takes
    (review s20 x2 F1: a deadline for the whole run stopped healthy runs on a busy machine
    as "stopped progressing" while both ranks were busy in their device roof)."""
    moved = {r: (_stage_step(folder, r)[0], time.monotonic()) for r in range(len(procs))}
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
        if _stalled(folder, moved, [r for r, c in enumerate(codes) if c is None], timeout_s):
            _kill(procs)
            raise ProbeError(hung_message(
                folder, [r for r, c in enumerate(codes) if c is None], timeout_s))
        stage = _stage(folder, 0)
        if progress and stage != last:
            progress(stage)
            last = stage
        time.sleep(POLL_S)


def _stalled(folder: Path, moved: dict[int, tuple[int, float]], running: list[int],
             timeout_s: float) -> bool:
    """True when a running rank's stage number stayed the same for `timeout_s`; `moved`
    (rank -> (stage number, when it was first seen)) is brought up to date."""
    now = time.monotonic()
    for r in running:
        num = _stage_step(folder, r)[0]
        if num != moved[r][0]:
            moved[r] = (num, now)
    return any(now - moved[r][1] > timeout_s for r in running)
