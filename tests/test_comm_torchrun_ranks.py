"""A platform engineer launching `rooflab probe --comm` under torchrun: too many ranks for
the host's CPUs are refused as `--nproc` is, one error line per host, not one per rank;
and the measured send/recv fit is readable as a stage link. Fakes only: no rank starts."""

from __future__ import annotations

import pytest
from tests.test_scale_measured_link import cluster as cluster_file

from rooflab.cli import probe_comm
from rooflab.errors import InputError
from rooflab.hardware.profile import load_profile
from rooflab.model.link_fits import p2p_link_from_profile
from rooflab.probe.comm import cluster

TORCHRUN = {"TORCHELASTIC_RUN_ID": "x", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def test_more_local_ranks_than_cpus_are_refused():
    # `torchrun --nproc-per-node 3` on this 2-CPU VM probed 3 ranks taking turns on 2 CPUs
    with pytest.raises(cluster.EveryRankError) as e:
        cluster.check_local_ranks(3, 2)
    assert str(e.value) == (
        "torchrun started 3 ranks on this host, which has 2 CPUs; each rank needs a CPU of "
        "its own (more would measure CPU sharing, not the link): use --nproc-per-node 2 or "
        "fewer, and --nnodes to add hosts")
    assert isinstance(e.value, InputError)      # exit 2, like every bad setting
    cluster.check_local_ranks(2, 2)
    cluster.check_local_ranks(8, 192)
    # one CPU: one rank per host, more hosts
    with pytest.raises(cluster.EveryRankError, match=r"1 CPU; .*use --nproc-per-node 1 "
                                                     r"with --nnodes 2 or more$"):
        cluster.check_local_ranks(2, 1)


def test_run_rank_refuses_before_joining_the_group(monkeypatch):
    pytest.importorskip("torch")
    import torch.distributed as dist

    def must_not_join(*a, **k):
        raise AssertionError("joined the process group")

    monkeypatch.setattr(dist, "init_process_group", must_not_join)
    monkeypatch.setattr(cluster, "_host_cpus", lambda: 2)
    for k, v in {**TORCHRUN, "RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                 "LOCAL_WORLD_SIZE": "4"}.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(cluster.EveryRankError, match="torchrun started 4 ranks"):
        cluster.run_rank("quick")


@pytest.mark.parametrize("local_rank, printed", [("0", True), ("1", False)])
def test_one_error_line_per_host_under_torchrun(local_rank, printed, monkeypatch, tmp_path):
    # every rank met the same refusal and printed it: 8 identical lines from one host
    for k, v in {**TORCHRUN, "RANK": local_rank, "WORLD_SIZE": "3",
                 "LOCAL_RANK": local_rank}.items():
        monkeypatch.setenv(k, v)

    def refuse(*a, **k):
        cluster.check_local_ranks(3, 2)

    monkeypatch.setattr("rooflab.probe.comm.run.probe_comm", refuse)
    out = str(tmp_path / "c.json")
    if printed:
        with pytest.raises(cluster.EveryRankError):
            probe_comm.run(None, "quick", out, False)
    else:
        assert probe_comm.run(None, "quick", out, False) == 2


def test_other_errors_are_printed_by_every_rank(monkeypatch, tmp_path):
    # a failure of one rank only (its device, its file system) is that rank's to say
    for k, v in {**TORCHRUN, "RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}.items():
        monkeypatch.setenv(k, v)

    def fail(*a, **k):
        raise InputError("rank 1's own trouble")

    monkeypatch.setattr("rooflab.probe.comm.run.probe_comm", fail)
    with pytest.raises(InputError, match="rank 1's own trouble"):
        probe_comm.run(None, "quick", str(tmp_path / "c.json"), False)


def test_the_send_recv_fit_is_a_stage_link(tmp_path):
    # a pipeline stage's send of S bytes: alpha + S / beta, from the measured fit (the
    # link ceiling alone, the best sample, would drop the 100 us)
    path = cluster_file(tmp_path / "c.json", p2p=(100e-6, 4e9))
    link = p2p_link_from_profile(load_profile(path).extras)
    assert link.level == "loopback"
    assert link.bus_bytes_per_s == pytest.approx(4e9, rel=1e-9)
    assert link.hop_latency_s == pytest.approx(100e-6, rel=1e-9)
    with pytest.raises(InputError, match="no fitted inter-node send/recv"):
        p2p_link_from_profile(load_profile(path).extras, "inter-node", where="c.json")
