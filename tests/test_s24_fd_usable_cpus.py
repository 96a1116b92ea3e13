"""Review s24 r2 F11: probe.cpus.usable_cpus counted the affinity mask only, so under
`docker run --cpus=2` on a 64-CPU host `probe --comm --nproc 2` gave each rank 32 torch
threads and a 32-thread CPU probe, and `--nproc 64` passed the check. It now takes the
cgroup CPU quota too: min(mask, ceil(quota / period)), as the CPU probe's 'all' does.
Fake cgroup files under tmp_path and a faked 64-CPU mask: nothing is measured."""

from __future__ import annotations

import os

import pytest

from rooflab.errors import InputError
from rooflab.hardware import cgroup
from rooflab.probe import cpus


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def host64(monkeypatch, tmp_path):
    """A container on a 64-CPU host: the mask is whole, the cgroup files are fakes."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(cgroup, "PROC_CGROUP", tmp_path / "proc")
    monkeypatch.setattr(cgroup, "CGROUP_ROOT", tmp_path / "cg")
    _write(tmp_path / "proc", "0::/\n")      # cgroup v2, the container's own namespace

    def quota(text):
        _write(tmp_path / "cg" / "cpu.max", text)
    return quota


def test_a_two_cpu_quota_gives_two_cpus(host64):
    host64("200000 100000\n")                 # docker --cpus=2
    assert cpus.mask_cpus() == 64
    assert cpus.usable_cpus() == 2            # was 64


def test_fractional_quotas_round_up_to_the_threads_they_keep_busy(host64):
    host64("50000 100000\n")                  # --cpus=0.5: one thread
    assert cpus.usable_cpus() == 1
    host64("150000 100000\n")                 # limits.cpu: 1500m: two threads
    assert cpus.usable_cpus() == 2


def test_no_quota_or_one_above_the_mask_leaves_the_mask(host64):
    host64("max 100000\n")
    assert cpus.usable_cpus() == 64
    host64("12800000 100000\n")               # 128 CPUs of quota on 64 CPUs
    assert cpus.usable_cpus() == 64


def test_comm_ranks_share_the_quota_not_the_mask(host64):
    from rooflab.probe.comm.cluster import gloo_threads
    from rooflab.probe.comm.launch import check_nproc

    host64("200000 100000\n")
    assert gloo_threads(2) == 1               # 2 CPUs / 2 ranks (was 64 // 2 = 32)
    check_nproc(2, cpus.usable_cpus())        # two ranks fit two CPUs of quota
    with pytest.raises(InputError, match="--nproc 64 would start 64 local ranks on 2 CPUs"):
        check_nproc(64, cpus.usable_cpus())   # passed before


def test_the_rank_cpu_probe_gets_its_share(host64, monkeypatch):
    from rooflab.probe import cpu as cpu_pkg
    from rooflab.probe.comm import device

    host64("400000 100000\n")                 # 4 CPUs of quota, 2 local ranks
    seen = {}
    monkeypatch.setattr(cpu_pkg, "probe_cpu",
                        lambda mode, threads: seen.update(mode=mode, threads=threads))
    device.rank_profile(None, "cpu", "quick", 2)
    assert seen == {"mode": "quick", "threads": 2}        # 4 // 2 (was 64 // 2 = 32)
