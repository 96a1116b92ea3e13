"""`probe --comm --timeout S` is a stall limit, not a deadline for the whole run (review s20
x2 F1): a healthy quick run under load (both ranks busy in their device roof) was stopped
at 40 s as "stopped progressing". Now a rank that reaches a new stage within S seconds
keeps the probe going however long it runs, a rank that stops stops it, and inf, nan or
<= 0 is refused naming --timeout (inf passed and the ranks blamed ROOFLAB_COMM_TIMEOUT,
which --timeout replaces: a bad variable no longer refuses a run that gives --timeout)."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest

from rooflab.errors import InputError, ProbeError
from rooflab.probe.comm import launch as launch_mod
from rooflab.probe.comm import run as run_mod
from rooflab.probe.comm.launch import _watch

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


def _rank(folder, rank: int, stages: int, every_s: float, then_sleep_s: float = 0.0):
    """A stand-in rank: writes stages 2..stages+1 (as cluster.py's _stage_writer does), one
    every `every_s` seconds, then sleeps `then_sleep_s` (a hang) and exits 0."""
    code = (f"import time\n"
            f"for i in range(2, {stages + 2}):\n"
            f"    time.sleep({every_s})\n"
            f"    open(r'{folder}/rank{rank}.stage', 'w').write(f'{{i}}\\tall-reduce {{i}} KiB')\n"
            f"time.sleep({then_sleep_s})\n")
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_run_longer_than_the_timeout_that_keeps_moving_finishes(tmp_path):
    # 10 stages 0.5 s apart: 5 s in all, with a 3 s timeout. As a whole-run deadline it
    # stopped the run at 3 s ("stopped progressing"); as a stall limit no rank ever waited
    # more than 0.5 s (plus its start) for its next stage.
    for r in (0, 1):
        (tmp_path / f"rank{r}.stage").write_text("1\tstarting")
    procs = [_rank(tmp_path, r, 10, 0.5) for r in (0, 1)]
    t0 = time.monotonic()
    try:
        _watch(procs, tmp_path, 3.0, None)
    finally:
        launch_mod._kill(procs)
    assert time.monotonic() - t0 >= 5.0
    assert [p.returncode for p in procs] == [0, 0]


def test_a_rank_that_stops_moving_stops_the_probe_after_the_timeout(tmp_path):
    # rank 1 reaches stage 3 at ~0.4 s and hangs; rank 0 goes on to stage 6 (~1 s) and
    # then waits for it: stopped at ~0.4 + 2 s, rank 1 named as the one behind
    for r in (0, 1):
        (tmp_path / f"rank{r}.stage").write_text("1\tstarting")
    procs = [_rank(tmp_path, 0, 5, 0.2, 60), _rank(tmp_path, 1, 2, 0.2, 60)]
    t0 = time.monotonic()
    with pytest.raises(ProbeError) as err:
        _watch(procs, tmp_path, 2.0, None)
    took = time.monotonic() - t0
    assert 2.0 < took < 15
    assert str(err.value) == (
        "communication probe timed out after 2 s: rank 1 stopped progressing after "
        "'all-reduce 3 KiB' (rank 0 waits for it at 'all-reduce 6 KiB'): no new stage in "
        "2 s (a hang; or, on a busy machine, a stage slower than that: give a larger "
        "--timeout); all ranks were stopped and no cluster profile was written")
    assert all(p.poll() is not None for p in procs)


@pytest.fixture
def fake_probe(monkeypatch):
    """probe_comm replaced: records the timeout it was given and stops there, so no rank
    starts (and the CLI's checks before it are what is tested)."""
    for k in TORCHRUN_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.delenv("ROOFLAB_COMM_TIMEOUT", raising=False)
    seen: list[float | None] = []

    def probe_comm(nproc, mode, *, timeout_s=None, progress=None, **_):
        seen.append(timeout_s)
        raise ProbeError("stopped by the test")

    monkeypatch.setattr(run_mod, "probe_comm", probe_comm)
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **k: None)
    return seen


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-5"])
def test_a_timeout_that_is_no_finite_positive_number_is_refused_by_name(
        value, fake_probe, tmp_path, capsys):
    from rooflab.cli.main import main

    rc = main(["probe", "--comm", "--nproc", "2", "--quick", "--timeout", value,
               "-o", str(tmp_path / "c.json")])
    shown = {"inf": "inf", "nan": "nan", "0": "0", "-5": "-5"}[value]
    assert rc == 2 and fake_probe == []
    err = capsys.readouterr().err.strip()
    if value in ("inf", "nan"):   # refused as typed since s34 F (cli/finite_options.py)
        assert err.splitlines()[0] == (f"error: --timeout must be a finite number such as "
                                       f"2.5; got '{value}'")
        return
    assert err == (
        f"error: --timeout must be a number of seconds above 0, not inf or nan (how long a "
        f"rank may make no progress before the communication probe stops, e.g. --timeout "
        f"300); got {shown}")


def test_timeout_given_replaces_a_bad_variable(fake_probe, monkeypatch, tmp_path, capsys):
    pytest.importorskip("torch", reason="`probe --comm` checks that torch is installed first")
    from rooflab.cli.main import main

    monkeypatch.setenv("ROOFLAB_COMM_TIMEOUT", "abc")
    rc = main(["probe", "--comm", "--nproc", "2", "--quick", "--timeout", "30",
               "-o", str(tmp_path / "c.json")])
    assert fake_probe == [30.0]          # reached the probe with 30 s, the variable unread
    assert rc == 2 and capsys.readouterr().err.strip() == "error: stopped by the test"
    # without --timeout the variable is still checked, and refused by its own name
    rc = main(["probe", "--comm", "--nproc", "2", "--quick", "-o", str(tmp_path / "c.json")])
    assert rc == 2 and fake_probe == [30.0]
    assert "error: ROOFLAB_COMM_TIMEOUT='abc': must be a number" in capsys.readouterr().err


def test_probe_comm_refuses_an_infinite_timeout_before_any_rank(monkeypatch):
    for k in TORCHRUN_VARS:
        monkeypatch.delenv(k, raising=False)
    started = []
    monkeypatch.setattr(launch_mod, "launch", lambda *a, **k: started.append(a))
    with pytest.raises(InputError, match=r"^timeout_s must be a number of seconds above 0, "
                                         r"not inf or nan .*; got inf$"):
        run_mod.probe_comm(2, "quick", timeout_s=math.inf)
    assert started == []


def test_help_says_what_the_timeout_limits(monkeypatch, capsys):
    from rooflab.cli.main import main

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["probe", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert ("--comm: a rank that makes no progress (reaches no new stage, or waits in one "
            "collective) for S seconds stops the probe; a hang detector, not a limit on the "
            "whole run") in text
