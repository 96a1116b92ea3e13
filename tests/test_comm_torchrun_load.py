"""Under torchrun the cluster profile records the other work on rank 0's host too
(extras.machine_load), from every rank's own CPU time gathered through torch.distributed:
before, only `--nproc` (our launcher, which reaps the ranks) recorded it."""

from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from rooflab.hardware.profile import MachineProfile, load_profile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.comm import cluster, hostload, run
from rooflab.probe.comm.launch import LAUNCHER_SCOPE, with_machine_load
from rooflab.probe.cpu import load
from rooflab.probe.cpu.load import CpuTicks, LoadSources, Snapshot

SOURCES = LoadSources(ticks_per_s=100.0, machine_cpus=2, affinity=lambda: None,
                      platform="linux")
# rank 0's window: 2 s; 300 busy ticks at 100 ticks/s = 3.0 CPU-s on 2 CPUs; steal 2 ticks.
# Rank 0's own os.times delta (1.9 - 0.7 = 1.2 s) is not what is subtracted: the ranks' is.
BEFORE = Snapshot(10.0, 0.7, CpuTicks(1000, 50, 2, "all CPUs"))
AFTER = Snapshot(12.0, 1.9, CpuTicks(1300, 52, 2, "all CPUs"))
# two ranks on rank 0's host "a" (1.3 + 1.1 = 2.4 s), one on host "b" (not judged)
OWN = [("a", 1.3), ("a", 1.1), ("b", 5.0)]
NOTE = ("other processes used 15 % of the CPUs while the probe ran (and the load average "
        "was 0.4 on 2 CPUs before it started): measured ceilings read low; rerun on a "
        "quiet machine")


def test_host_load_subtracts_every_rank_on_rank0s_host():
    ml = hostload.host_load(BEFORE, AFTER, OWN, "a", 0.4, SOURCES)
    assert ml.window_s == pytest.approx(2.0)
    assert ml.own_cpu_s == pytest.approx(2.4)          # host a's ranks, not rank 0 alone
    assert ml.other_cpu_s == pytest.approx(0.6)        # 3.0 busy - 2.4 ranks
    assert ml.other_cpu_share == pytest.approx(0.15)   # 0.6 of 2 s x 2 CPUs
    assert ml.steal_share == pytest.approx(0.005)      # 0.02 s of 4 CPU-s
    assert (ml.cpus, ml.threads, ml.machine_cpus) == (2, 2, 2)
    assert ml.contended_share == pytest.approx(0.15)
    assert ml.loadavg_1m_before == 0.4
    assert ("over 2.00 s minus the CPU time of the 2 ranks on this host (each rank's "
            "os.times, children included, gathered), as a share of wall time x 2 CPUs"
            in ml.method)


def test_host_ranks_cpu_s_counts_only_that_host():
    assert hostload.host_ranks_cpu_s(OWN, "a") == (2, pytest.approx(2.4))
    assert hostload.host_ranks_cpu_s(OWN, "b") == (1, 5.0)
    assert hostload.host_ranks_cpu_s(OWN, "c") == (0, 0)


def test_host_sources_count_every_cpu_of_the_host():
    # the other local ranks may be pinned to CPUs outside rank 0's affinity
    stat = "cpu 100 0 50 900 0 0 0 0 0 0\ncpu0 60 0 30 400 0 0 0 0 0 0\n" \
           "cpu1 40 0 20 500 0 0 0 0 0 0\n"
    snap = load.snapshot(LoadSources(read_stat=lambda: stat,
                                     affinity=hostload.HOST_SOURCES.affinity))
    assert hostload.HOST_SOURCES.affinity() is None
    assert snap.ticks == CpuTicks(150, 0, 2, "all CPUs")


def test_scope_names_the_host_and_the_hosts_not_judged():
    assert hostload.torchrun_scope("a", ["a", "a"]) == (
        "ranks on a (torchrun), from the first to the last measurement")
    assert hostload.torchrun_scope("a", ["a", "c", "b", "c"]) == (
        "ranks on a (torchrun), from the first to the last measurement; ranks on the "
        "other hosts (b, c) are not judged")
    assert hostload.torchrun_scope("a", ["a", "b"]).endswith(
        "; ranks on the other host (b) are not judged")


def _profile() -> MachineProfile:
    roof = Roof(name="3 x cpu", kind="measured",
                compute=(Ceiling(value=1e9, precision="fp32", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(value=1e9, level="DRAM", provenance="measured"),),
                notes=("backend gloo: no GPU visible: gloo on the CPU",))
    return MachineProfile(host={"name": "3 x cpu", "kind": "cluster"}, measured=roof,
                          extras={"wall_s": 3.0})


def test_with_host_load_records_it_as_the_launcher_does():
    p = hostload.with_host_load(_profile(), BEFORE, AFTER, OWN, "a", 0.4, SOURCES)
    ml = p.extras["machine_load"]
    assert ml["other_cpu_share"] == pytest.approx(0.15)
    assert ml["own_cpu_s"] == pytest.approx(2.4)
    assert ml["notes"] == [NOTE]
    assert ml["scope"] == ("ranks on a (torchrun), from the first to the last measurement; "
                           "ranks on the other host (b) are not judged")
    # first among the roof's notes, which `rooflab probe --comm` prints as `note:` lines
    assert p.measured.notes == (NOTE, "backend gloo: no GPU visible: gloo on the CPU")
    assert p.extras["wall_s"] == 3.0


def test_the_launcher_keeps_its_scope():
    quiet = load.machine_load(BEFORE, AFTER, 2, None, SOURCES)
    data = with_machine_load({"measured": {"notes": ["x"]}}, quiet)
    assert data["extras"]["machine_load"]["scope"] == LAUNCHER_SCOPE == (
        "all local ranks, from their start to their exit")
    # the launcher subtracts its own (reaped children's) CPU time, and says so
    assert "minus the probe's own CPU time (os.times, children included)" in quiet.method


def test_only_the_torchrun_path_asks_the_ranks_for_the_load(monkeypatch):
    # the launcher (--nproc) measures the load itself: its ranks must not add it again
    # (its worker calls run_rank(mode))
    pytest.importorskip("torch", reason="probe_comm checks the ranks' torch before they run")
    assert inspect.signature(cluster.run_rank).parameters["record_load"].default is False
    seen = []
    monkeypatch.setattr("rooflab.probe.comm.cluster.run_rank",
                        lambda mode, **kw: seen.append((mode, kw)))
    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                 "MASTER_PORT": "29500"}.items():
        monkeypatch.setenv(k, v)
    run.probe_comm(mode="tiny")
    assert seen == [("tiny", {"record_load": True})]


RANK_SCRIPT = textwrap.dedent("""
    import sys
    from rooflab.hardware.profile import save_profile
    from rooflab.probe.comm.run import probe_comm
    profile = probe_comm(mode="tiny")
    if profile is not None:
        save_profile(sys.argv[1], profile)
""")


@pytest.mark.slow
def test_a_real_torchrun_job_records_the_load_of_rank0s_host(tmp_path):
    pytest.importorskip("torch", reason="the communication probe needs torch")
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    out = tmp_path / "cluster.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                        "TORCHELASTIC_RUN_ID", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
         "2", str(script), str(out)], env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    profile = load_profile(str(out))
    ml = profile.extras["machine_load"]
    assert ml["scope"] == (f"ranks on {socket.gethostname()} (torchrun), from the first to "
                           f"the last measurement")
    cpus = os.cpu_count()
    assert ml["cpus"] == ml["machine_cpus"] == cpus       # all the host's CPUs
    assert ml["threads"] == min(cpus, 2 * max(1, cpus // 2))
    assert 0 < ml["window_s"] < profile.extras["wall_s"]
    assert ml["own_cpu_s"] > 0                            # both ranks worked in the window
    # the ranks and the others cannot have used more than the CPUs had (ticks are 10 ms)
    busy = ml["own_cpu_s"] + ml["other_cpu_s"]
    assert busy <= ml["window_s"] * cpus + 0.05
    assert 0 <= ml["other_cpu_share"] <= 1
    assert ml["other_cpu_share"] == pytest.approx(ml["other_cpu_s"] / (ml["window_s"] * cpus))
    assert "minus the CPU time of the 2 ranks on this host" in ml["method"]
    assert list(profile.measured.notes[:len(ml["notes"])]) == ml["notes"]
    # each rank's CPU seconds travel in the gather, not into the profile's rank records
    assert all("own_cpu_s" not in r for r in profile.extras["ranks"])
