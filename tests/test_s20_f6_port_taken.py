"""Review s20 r3 F1/F3 through the launcher and the CLI: a MASTER_PORT held by another
program is one `error:` line and exit 2 on rank 0 (a traceback and exit 70 before), and
ROOFLAB_COMM_TIMEOUT sets the launcher's deadline and the ranks' timeout (the launcher
overwrote it with the mode's). Imports no module new in s20, so it runs against HEAD."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_s20_f6_rendezvous import _env, _held_port  # one port and rank-environment helper

from rooflab.errors import InputError, ProbeError
from rooflab.probe.comm import launch as launch_mod

TIMEOUT_ENV = "ROOFLAB_COMM_TIMEOUT"


def test_comm_timeout_env_replaces_the_launchers_deadline(monkeypatch):
    pytest.importorskip("torch", reason="launch() checks for torch")
    seen = {}

    class Rank:
        def __init__(self, args, env, **_):
            seen.setdefault("env", []).append(env[TIMEOUT_ENV])

        def poll(self):
            return 0

        def wait(self, timeout=None):
            return 0

        def kill(self):
            pass

    def watch(procs, folder, timeout_s, progress):
        seen["deadline"] = timeout_s
        raise ProbeError("stop here")

    monkeypatch.setattr(launch_mod.subprocess, "Popen", Rank)
    monkeypatch.setattr(launch_mod, "_watch", watch)
    monkeypatch.setattr(launch_mod, "usable_cpus", lambda: 2)
    monkeypatch.setenv(TIMEOUT_ENV, "45")
    with pytest.raises(ProbeError):
        launch_mod.launch(2, "quick")
    # quick's 600 s before: the launcher overwrote the variable with the mode's value
    assert seen == {"env": ["45.0", "45.0"], "deadline": 45.0}
    for bad in ("abc", "0", "-5", "inf"):
        monkeypatch.setenv(TIMEOUT_ENV, bad)
        with pytest.raises(InputError, match="must be a number of seconds above 0"):
            launch_mod.launch(2, "quick")


def test_cli_refuses_a_bad_timeout_before_the_busy_warning(capsys, tmp_path, monkeypatch):
    from rooflab.cli.main import main

    for key in ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv(TIMEOUT_ENV, "ten")
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy",
                        lambda: pytest.fail("warned before the bad setting"))
    assert main(["probe", "--comm", "--nproc", "2", "-o", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ROOFLAB_COMM_TIMEOUT='ten': must be a number of seconds")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_env_launch_with_the_port_taken_rank_0_says_so_and_exits_2(tmp_path):
    # the reviewer's repro, rank 0: a traceback and exit 70 before
    pytest.importorskip("torch", reason="the communication probe needs torch")
    held, port = _held_port()
    try:
        out = tmp_path / "port0.json"
        run = subprocess.run([sys.executable, "-m", "rooflab", "probe", "--comm", "--quick",
                              "-o", str(out)], env=_env(port, 0), capture_output=True,
                             text=True, timeout=240)
    finally:
        held.close()
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == (
        f"error: cannot start the process group on 127.0.0.1:{port}: the port is already in "
        f"use (another program, or an earlier job still running, holds MASTER_PORT {port}); "
        f"pick a free port: MASTER_PORT=N for every rank, or torchrun --master-port N")
    assert "Traceback" not in run.stderr and not out.exists()


def test_cli_run_passes_a_timeout_to_the_probe(monkeypatch, tmp_path):
    pytest.importorskip("torch", reason="`probe --comm` checks that torch is installed first")
    # for a `--timeout S` option of `probe --comm` (cli/probe.py passes it to run)
    from rooflab.cli import probe_comm

    seen = {}

    def fake(nproc, mode, **kw):
        seen.update(kw)
        raise ProbeError("stop here")
    monkeypatch.setattr("rooflab.probe.comm.run.probe_comm", fake)
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **k: None)
    for key in ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", TIMEOUT_ENV):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(ProbeError):
        probe_comm.run(2, "quick", str(tmp_path / "c.json"), False, timeout_s=45.0)
    assert seen["timeout_s"] == 45.0
    with pytest.raises(InputError, match="--timeout must be a number of seconds above 0"):
        probe_comm.run(2, "quick", str(tmp_path / "c.json"), False, timeout_s=0.0)
