"""A flat ring across nodes pays its intra-node hops' latency whichever link's bandwidth
binds (review r3 F6): `rooflab scale --on comm.json --inter-bw 0.5GB/s`, a network slower
than the measured 1.18 GB/s loopback, once made 1024 devices 13x faster, because the
ring took the network's 0 ns hop latency and dropped the loopback hops' 617 us."""

from __future__ import annotations

import pytest
from tests.test_scale_measured_link import ARGS, COMPUTE_S, GRAD_BYTES, cluster, scale_json

from rooflab.cli.main import main
from rooflab.model.comm_link import Link, ring_link

US = 1e-6


def test_a_slower_network_keeps_the_intra_node_hop_latency():
    intra = Link("loopback", 1e9, 300 * US)
    slow = Link("network", 0.5e9)                       # given with no latency
    ring = ring_link(intra, slow)
    assert (ring.level, ring.bus_bytes_per_s, ring.hop_latency_s) == ("network", 0.5e9,
                                                                      300 * US)
    # 16 ranks, 1 MB: 2 x 15 hops x 300 us = 9 ms, + 2 x 15/16 x 1e6 B / 0.5 GB/s = 3.75 ms
    assert ring.allreduce_s(1e6, 16) == pytest.approx(9e-3 + 3.75e-3, rel=1e-12)
    # the network's own latency, when larger, is the one paid (as before)
    assert ring_link(intra, Link("network", 0.5e9, 1e-3)).hop_latency_s == 1e-3
    # a faster network: the intra-node bandwidth, the larger latency (as before)
    fast = ring_link(intra, Link("network", 50e9, 5 * US))
    assert (fast.level, fast.bus_bytes_per_s, fast.hop_latency_s) == ("loopback", 1e9,
                                                                      300 * US)


def test_network_binds_by_bandwidth_or_latency():
    from rooflab.model.comm_link import network_binds

    intra = Link("loopback", 1e9, 300 * US)
    assert network_binds(intra, Link("network", 0.5e9))
    assert not network_binds(intra, Link("network", 50e9))
    assert network_binds(intra, Link("network", 50e9, 1e-3))     # its latency binds


def _step_1024(capsys, path, *inter):
    doc = scale_json(capsys, "--on", path, *inter)
    return {p["gpus"]: p for p in doc["points"]}[1024]


def test_a_slower_inter_node_link_never_makes_a_step_faster(tmp_path, capsys):
    # intra-node: the profile's all-reduce fit over 2 ranks, alpha 600 us, beta 1 GB/s:
    # bus 1 GB/s, 300 us per hop
    path = cluster(tmp_path / "comm.json")
    steps = [_step_1024(capsys, path, "--inter-bw", bw)["step_s"]
             for bw in ("0.25GB/s", "0.5GB/s", "0.9GB/s", "1GB/s", "2GB/s", "50GB/s")]
    assert steps == sorted(steps, reverse=True)
    # the assumed NIC (8 x 50 GB/s) is faster than every given one: the loopback rows
    assert _step_1024(capsys, path)["step_s"] == pytest.approx(steps[-1], rel=1e-12)
    # by hand at 0.5 GB/s (no overlap): 4 all-reduces x 2046 hops x 300 us = 2.4552 s,
    # + 2 x 1023/1024 x 50,331,648 B / 0.5 GB/s = 0.201130 s; step = compute + comm
    p = _step_1024(capsys, path, "--inter-bw", "0.5GB/s")
    comm = 4 * 2046 * 300 * US + 2 * 1023 / 1024 * GRAD_BYTES / 0.5e9
    assert p["link"] == "network"
    assert p["comm_s"] == pytest.approx(comm, rel=1e-9)
    assert p["step_s"] == pytest.approx(COMPUTE_S + comm, rel=1e-9)


def test_the_output_says_which_link_sets_the_pace(tmp_path, capsys):
    path = cluster(tmp_path / "comm.json")
    args = ["scale", "--on", path, *ARGS[:-1]]

    def out(*extra):
        assert main([*args, *extra]) == 0
        return " ".join(capsys.readouterr().out.split())

    # a given network the loopback hops outpace is named, with why it changes no row
    fast = out("--inter-bw", "50GB/s")
    assert ("inter-node: 50 GB/s (given (--inter-bw)), faster than the loopback hops, so "
            "every row up to 1024 runs at loopback's pace") in fast
    # the assumed NIC (8 x 50 GB/s) changes no row either, but the note names it ("the
    # inter-node figure above"): the figure is there
    default = out()
    assert ("inter-node: 400 GB/s (assumed: one 400 Gb/s NDR InfiniBand NIC per GPU"
            in default)
    assert ("faster than the loopback hops, so every row up to 1024 runs at loopback's "
            "pace" in default)
    assert "not measured but assumed (the inter-node figure above" in default
    # a slower one binds: its figure, and the latency at 1024 stays 2046 hops x 300 us
    slow = out("--inter-bw", "0.5GB/s")
    assert "inter-node: 500 MB/s (given (--inter-bw))" in slow
    # a CPU profile's rows are devices, not GPUs (review r7 F8)
    assert "at 1024 devices all-reduce latency 613.8 ms = 2046 hops x 300 us" in slow
