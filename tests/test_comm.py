"""Communication probe, pure parts: nccl-tests bus-bandwidth conventions, the alpha/beta
fit, the sweep plans, the launcher's watch over dying and hanging ranks (plain Python
processes, no torch), and the error without torch."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from rooflab.errors import InputError, MissingDependency, ProbeError
from rooflab.probe.comm import algbw, bus_factor, busbw, fit_alpha_beta, link_bytes
from rooflab.probe.comm.collectives import PLANS, CollectiveResult, SizeResult, memory_cap
from rooflab.probe.comm.launch import _watch, free_port, rank_env


# --- nccl-tests doc/PERFORMANCE.md conventions ----------------------------------------------
def test_bus_factors_by_hand():
    # all-reduce 2(n-1)/n: n=2 -> 2*1/2 = 1; n=8 -> 2*7/8 = 1.75
    assert bus_factor("all_reduce", 2) == 1.0
    assert bus_factor("all-reduce", 8) == 1.75
    # all-gather, reduce-scatter, all-to-all (n-1)/n: n=8 -> 7/8 = 0.875; n=4 -> 0.75
    for name in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_factor(name, 8) == 0.875
        assert bus_factor(name, 4) == 0.75
    # broadcast and point-to-point move every byte across one link once: 1
    assert bus_factor("broadcast", 8) == 1.0
    assert bus_factor("send_recv", 2) == 1.0
    assert bus_factor("sendrecv", 16) == 1.0


def test_busbw_matches_nccl_tests_arithmetic():
    # 1 GiB all-reduce in 10 ms on 8 ranks: algbw = 1073741824 / 0.01 = 107.37 GB/s,
    # busbw = 107.37 x 1.75 = 187.9 GB/s
    assert algbw(2**30, 0.01) == pytest.approx(107.374e9, rel=1e-4)
    assert busbw("all_reduce", 2**30, 0.01, 8) == pytest.approx(187.904e9, rel=1e-4)
    # all-gather of a 64 MiB output in 1 ms over 4 ranks: 67.1 GB/s x 3/4 = 50.3 GB/s
    assert busbw("all_gather", 64 * 2**20, 1e-3, 4) == pytest.approx(50.33e9, rel=1e-3)
    # a ring all-reduce sends 2(n-1)/n of the buffer per rank: 100 MB on 4 ranks -> 150 MB
    assert link_bytes("all_reduce", 100e6, 4) == pytest.approx(150e6)


def test_bad_collective_and_time():
    with pytest.raises(InputError, match="unknown collective 'gather'.*all_reduce"):
        bus_factor("gather", 2)
    with pytest.raises(InputError, match="time must be > 0"):
        algbw(10, 0.0)
    with pytest.raises(InputError, match=">= 1"):
        bus_factor("all_reduce", 0)


# --- alpha/beta --------------------------------------------------------------------------
def test_fit_recovers_alpha_beta_exactly():
    # t = 20 us + S / 10 GB/s at 1 KiB .. 16 MiB
    sizes = [2**k for k in range(10, 25, 2)]
    times = [20e-6 + s / 10e9 for s in sizes]
    fit = fit_alpha_beta(sizes, times)
    assert fit.alpha_s == pytest.approx(20e-6, rel=1e-9)
    assert fit.beta_bytes_per_s == pytest.approx(10e9, rel=1e-9)
    assert fit.max_rel_residual < 1e-9
    # n_1/2 = alpha x beta = 20e-6 x 10e9 = 200 kB
    assert fit.half_bytes == pytest.approx(200e3)
    assert fit.seconds(1e6) == pytest.approx(20e-6 + 1e-4)


def test_fit_negative_alpha_is_pinned_and_said():
    # small message faster than the line through the large ones: alpha < 0 -> 0
    fit = fit_alpha_beta([1e3, 1e6, 2e6], [1e-9, 1.0e-3, 2.2e-3])
    assert fit.alpha_s == 0.0 and "pinned" in fit.note
    assert fit.beta_bytes_per_s > 0


def test_fit_needs_two_sizes_and_growth():
    with pytest.raises(InputError, match="two message sizes"):
        fit_alpha_beta([1e3, 1e3], [1e-5, 2e-5])
    with pytest.raises(InputError, match="does not grow"):
        fit_alpha_beta([1e3, 1e6], [1e-3, 1e-4])


def test_collective_result_busbw_and_fit():
    rows = (SizeResult(1000, 4, (1.1e-5, 1.0e-5, 1.2e-5)),
            SizeResult(1_000_000, 2, (1.1e-4, 1.2e-4, 1.3e-4)))
    res = CollectiveResult("all_reduce", 4, rows)
    # factor 2*3/4 = 1.5; median of the second size 1.2e-4 s -> 1e6/1.2e-4 x 1.5 = 12.5 GB/s
    assert res.busbw(rows[1]) == pytest.approx(12.5e9)
    assert res.busbw(rows[1], best=True) == pytest.approx(1e6 / 1.1e-4 * 1.5)
    fit = res.fit
    # two points, exact line: 1/beta = (1.2e-4 - 1.1e-5)/(999000); alpha = 1.1e-5 - 1000/beta
    inv_b = (1.2e-4 - 1.1e-5) / 999_000
    assert fit.beta_bytes_per_s == pytest.approx(1 / inv_b)
    assert fit.alpha_s == pytest.approx(1.1e-5 - 1000 * inv_b)
    d = res.to_dict()
    assert d["fit"]["beta_bus_bytes_per_s"] == pytest.approx(1.5 / inv_b)
    assert d["rows"][0]["samples"] == [1.1e-5, 1.0e-5, 1.2e-5]


def test_plans_reach_256_mib_and_tiny_is_small():
    for name in ("quick", "default", "full"):
        assert PLANS[name].sizes[0] == 1024 and PLANS[name].sizes[-1] >= 256 * 2**20
    assert PLANS["tiny"].sizes[-1] <= 16 * 2**20
    # 2 local ranks, 1 GiB available: buffers 2 x S per rank in half of it -> S <= 128 MiB
    assert memory_cap(PLANS["quick"], 2**30, 2) == 2**30 / 2 / 4
    assert memory_cap(PLANS["tiny"], 2**30, 2) is None


# --- the launcher's watch: plain Python processes stand in for ranks --------------------------
def _procs(*codes: str) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", c]) for c in codes]


def test_watch_names_the_rank_that_died(tmp_path):
    (tmp_path / "rank1.stage").write_text("7\tall-reduce 4 KiB")
    procs = _procs("import time; time.sleep(30)", "import sys; sys.exit(3)")
    t0 = time.monotonic()
    with pytest.raises(ProbeError, match=r"rank 1 exited with code 3 during 'all-reduce 4 KiB'"
                                         r".*no cluster profile"):
        _watch(procs, tmp_path, 20.0, None)
    assert time.monotonic() - t0 < 10
    assert all(p.poll() is not None for p in procs)      # the survivor was killed


def test_watch_times_out_naming_the_hung_rank(tmp_path):
    # rank 1 stopped at stage 2; rank 0 reached stage 3 and waits for it in a collective
    (tmp_path / "rank0.stage").write_text("3\texchanging host names")
    (tmp_path / "rank1.stage").write_text("2\tjoined the process group")
    procs = _procs("import time; time.sleep(30)", "import time; time.sleep(30)")
    with pytest.raises(ProbeError, match=r"timed out after 1 s: rank 1 stopped progressing "
                                         r"after 'joined the process group' \(rank 0 waits "
                                         r"for it at 'exchanging host names'\).*no cluster"):
        _watch(procs, tmp_path, 1.0, None)
    assert all(p.poll() is not None for p in procs)


def test_rank_env_is_loopback():
    env = rank_env(1, 2, free_port(), "/tmp/x", 30.0)
    assert env["MASTER_ADDR"] == "127.0.0.1"
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == ("1", "2", "1")


def test_without_torch_names_the_extra(monkeypatch):
    from rooflab.probe.comm import probe_comm

    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependency, match=r"rooflab\[torch\]"):
        probe_comm(2, "tiny")


def test_one_process_is_refused():
    from rooflab.probe.comm.launch import launch

    with pytest.raises(InputError, match="at least 2"):
        launch(1, "tiny")


# --- intra- vs inter-node, told apart by host name (pure parts of cluster.py) --------------
def test_pairs_and_link_names_by_host():
    from rooflab.probe.comm.cluster import link_level, p2p_pairs

    assert p2p_pairs(["a", "a", "b", "b"]) == [((0, 1), "intra-node"), ((0, 2), "inter-node")]
    assert p2p_pairs(["a", "b"]) == [((0, 1), "inter-node")]
    assert p2p_pairs(["a", "a"]) == [((0, 1), "intra-node")]
    assert link_level("gloo", False, None) == "loopback"
    assert link_level("nccl", False, True) == "NVLink"
    assert link_level("nccl", False, False) == "PCIe"
    assert link_level("nccl", True, True) == "network"     # a ring across hosts


def test_link_ceilings_per_level_take_the_best_bus_bandwidth():
    from rooflab.probe.comm.cluster import link_ceilings

    world = CollectiveResult("all_reduce", 4, (SizeResult(1 << 20, 1, (1e-3, 2e-3)),))
    intra = CollectiveResult("send_recv", 4, (SizeResult(1 << 20, 1, (1e-4, 1e-4)),),
                             pair=(0, 1), link="intra-node")
    inter = CollectiveResult("send_recv", 4, (SizeResult(1 << 20, 1, (4e-4, 5e-4)),),
                             pair=(0, 2), link="inter-node")
    got = {c.level: c for c in link_ceilings(
        [world, intra, inter], {"world": "network", "intra-node": "NVLink",
                                "inter-node": "network"})}
    # the highest median (review r3 F3), not the best sample: network: the all-reduce's
    # median is 2^20 / 1.5e-3 x 2*3/4 = 1.049 GB/s, the inter-node pair's 2^20 / 4.5e-4 x 1
    # = 2.330 GB/s: the pair's is the ceiling, with its samples
    assert got["network"].value == pytest.approx(2**20 / 4.5e-4)
    assert got["network"].samples == pytest.approx((2**20 / 4e-4, 2**20 / 5e-4))
    assert got["NVLink"].value == pytest.approx(2**20 / 1e-4)     # median of 1e-4, 1e-4
    assert all(c.provenance == "measured" for c in got.values())


def test_cli_errors_before_any_rank_starts(capsys):
    from rooflab.cli.main import main

    assert main(["probe", "--comm", "-o", "chart.png"]) == 2
    assert "must be a .json cluster profile" in capsys.readouterr().err
    assert main(["probe", "--comm", "--nproc", "1"]) == 2
    assert "at least 2" in capsys.readouterr().err
