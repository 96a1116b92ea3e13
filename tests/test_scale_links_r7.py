"""Review r7 of `rooflab scale`, checked by hand: a profile measured across hosts returns
its own measurement at the measured rank count (F1), TPUs stay on ICI and Gaudi leaves
its node by its own RoCE ports (F2), the gradients' all-reduce type is said and can be
set (F3), a bandwidth-only verdict says so (F4), an assumed network that keeps rows on
NVLink is named (F5), the JSON carries link kinds and per-row hop latency (F7), and the
words fit TPUs and ignored options (F8)."""

from __future__ import annotations

import json

import pytest
from tests.test_scale_measured_link import cluster

from rooflab.cli.main import main
from rooflab.model.comm_link import Link, ring_link

US = 1e-6
H100_BF16 = 989.5e12


def _run(capsys, *args) -> str:
    assert main(["scale", *args]) == 0
    return " ".join(capsys.readouterr().out.split())


def _json(capsys, *args) -> dict:
    assert main(["scale", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _rows(doc) -> dict:
    return {p["gpus"]: p for p in doc["points"]}


# --- F1: a world all-reduce measured across hosts is the ring across nodes ---------------
def _two_hosts(tmp_path):
    """16 ranks on 2 hosts (as torchrun --nnodes 2 --nproc-per-node 8 writes): the world
    all-reduce alpha 800 us, beta 1 GB/s; the intra-node send/recv alpha 100 us, beta
    4 GB/s (its alpha larger than the all-reduce's per-hop share, 800/30 = 26.7 us)."""
    return cluster(tmp_path / "two.json", hosts=("a",) * 8 + ("b",) * 8,
                   ar=(800e-6, 1e9), p2p=(100e-6, 4e9))


def test_the_measured_rank_count_returns_the_measurement(tmp_path, capsys):
    path = _two_hosts(tmp_path)
    doc = _json(capsys, "--on", path, "--hidden", "1024", "--blocks", "1", "--tokens", "512",
                "--dtype", "fp32", "--no-overlap")
    row = _rows(doc)[16]
    grads = 4 * 1024**2 * 4               # each layer's fp32 gradients: qkv, out, up, down
    layer_bytes = [4 * 1024 * 3072, 4 * 1024 * 1024, 4 * 1024 * 4096, 4 * 4096 * 1024]
    assert sum(layer_bytes) == 3 * grads
    # the fit at n0 = 16: each of the 4 all-reduces takes alpha + S / beta
    fit = sum(800e-6 + s / 1e9 for s in layer_bytes)
    assert row["comm_s"] == pytest.approx(fit, rel=1e-9)
    # ... paying the all-reduce's 800/30 us per hop, not the send's 100 us (which the old
    # max() rule charged: 4 x 30 x 100 us = 12 ms of latency instead of 3.2 ms)
    assert row["hop_latency_s"] == pytest.approx(800e-6 / 30, rel=1e-9)
    # and the link line says which reading is used where
    text = _run(capsys, "--on", path, "--hidden", "1024", "--blocks", "1", "--tokens", "512",
                "--dtype", "fp32", "--no-overlap")
    assert ("per hop 26.7 us from the all-reduce (used across nodes: what the measured "
            "all-reduce paid), 100 us from send/recv (used inside a node)") in text
    assert "at 1024 devices all-reduce latency 54.56 ms = 2046 hops x 26.67 us" in text


def test_a_whole_ring_network_is_taken_as_it_is_and_a_given_one_still_maxed():
    intra = Link("NVLink", 150e9, 10 * US)
    world = Link("network", 37.5e9, 50 * US / 30, whole_ring=True)
    assert ring_link(intra, world) is world
    # a faster whole ring too: it is what the measured ranks paid
    fast = Link("network", 500e9, 1 * US, whole_ring=True)
    assert ring_link(intra, fast) is fast
    # a given network keeps the r3 rule: the larger hop latency (never a faster step)
    given = ring_link(intra, Link("network", 37.5e9, 1 * US))
    assert (given.bus_bytes_per_s, given.hop_latency_s) == (37.5e9, 10 * US)


# --- F2: TPU ICI joins the pod slice; Gaudi's own scale-out ports -------------------------
def test_a_tpu_pod_slice_stays_on_ici(capsys):
    doc = _json(capsys, "--on", "TPU v5p", "--hidden", "4096", "--blocks", "32",
                "--tokens", "512")
    rows = _rows(doc)
    assert {p["link"] for n, p in rows.items() if n > 1} == {"ICI"}
    assert doc["links"]["inter"] is None and doc["comm_binds_at"] is None
    # by hand at 16 chips: 32 blocks x 12 x 4096^2 = 6.44 G bf16 gradients = 12.88 GB, over
    # 600 GB/s (half of ICI's 1200 both ways): 2 x 15/16 x 12.88 GB / 600 GB/s = 40.3 ms
    grads = 2 * 32 * 12 * 4096**2
    assert rows[16]["comm_s"] == pytest.approx(2 * 15 / 16 * grads / 600e9, rel=1e-9)
    assert rows[1024]["efficiency"] == pytest.approx(0.749, abs=5e-4)
    text = _run(capsys, "--on", "TPU v5p", "--hidden", "4096", "--blocks", "32",
                "--tokens", "512")
    assert "InfiniBand" not in text and "the link never binds up to 1024 devices" in text
    # a node boundary given: the rows past it cross the assumed network
    assert _rows(_json(capsys, "--on", "TPU v5p", "--per-node", "8"))[16]["link"] == "network"


def test_inter_bw_on_a_pod_slice_asks_for_per_node(capsys):
    assert main(["scale", "--on", "TPU v5p", "--inter-bw", "25GB/s"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --inter-bw on Google TPU v5p") and "--per-node N" in err


def test_gaudi_leaves_its_node_by_its_own_roce_ports(capsys):
    doc = _json(capsys, "--on", "Gaudi 3", "--hidden", "1024", "--blocks", "4",
                "--tokens", "512")
    inter = doc["links"]["inter"]
    # 3 scale-out ports x 200 Gb/s = 75 GB/s per chip, x 8 chips = 600 GB/s per node
    assert inter["bus_bytes_per_s"] == pytest.approx(600e9)
    assert "InfiniBand NIC per GPU" not in inter["source"]
    assert inter["kind"] == "assumed"
    # 16 chips: 2 x 15/16 x 100.7 MB of bf16 gradients at the ring's slowest hop, since
    # s31 the node's 7 peers x 3 ports x 25 GB/s = 525 GB/s (the network's 600 is faster)
    grads = 2 * 4 * 12 * 1024**2
    assert _rows(doc)[16]["comm_s"] == pytest.approx(2 * 15 / 16 * grads / 525e9, rel=1e-9)
    gaudi2 = _json(capsys, "--on", "Gaudi 2")["links"]["inter"]
    assert gaudi2["bus_bytes_per_s"] == pytest.approx(8 * 3 * 100e9 / 8)      # 300 GB/s


# --- F3: the gradients' type ---------------------------------------------------------------
def test_grad_dtype_doubles_the_bytes_and_is_said(capsys):
    args = ("--on", "A100 80GB SXM", "--blocks", "24", "--tokens", "512", "--no-overlap")
    bf16, fp32 = _json(capsys, *args), _json(capsys, *args, "--grad-dtype", "fp32")
    # 24 blocks x 12 x 4096^2 = 4.83 G params; 1024 GPUs over the network between DGX A100
    # nodes, 8 HDR NICs x 25 GB/s = 200 GB/s (s30: slower than NVLink's 300 GB/s, it binds)
    params = 24 * 12 * 4096**2
    assert _rows(bf16)[1024]["comm_s"] == pytest.approx(2 * 1023 / 1024 * 2 * params / 200e9,
                                                        rel=1e-9)
    assert _rows(fp32)[1024]["comm_s"] == pytest.approx(2 * 1023 / 1024 * 4 * params / 200e9,
                                                        rel=1e-9)                # 193.1 ms
    assert _rows(fp32)[1024]["compute_s"] == _rows(bf16)[1024]["compute_s"]    # math: bf16
    row = _rows(fp32)[1024]   # --no-overlap: compute 47.6 ms + comm 193.1 ms
    assert row["efficiency"] == pytest.approx(row["compute_s"] / (row["compute_s"]
                                                                  + row["comm_s"]), rel=1e-9)
    assert row["efficiency"] == pytest.approx(0.198, abs=5e-4)
    assert any(a.startswith("gradients all-reduced in bf16 (2 B/parameter)") and
               "--grad-dtype fp32" in a for a in bf16["assumptions"])
    assert "gradients all-reduced in fp32 (4 B/parameter)" in fp32["assumptions"]
    for bad, words in (("int8", "one of bf16, fp16, fp32"), ("xyz", "unknown dtype 'xyz'")):
        assert main(["scale", *args, "--grad-dtype", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --grad-dtype") and words in err


# --- F4: a bandwidth-only verdict says so ---------------------------------------------------
def test_no_latency_is_said_with_what_1us_per_hop_makes_of_it(capsys):
    text = _run(capsys, "--on", "H100 SXM", "--hidden", "4096", "--blocks", "32",
                "--tokens", "4096")
    assert "the link never binds up to 1024 GPUs" in text
    assert ("link latency: 0 us per hop assumed (none given or measured): the all-reduce time "
            "counts link bandwidth only, no latency: each of the 128 all-reduces per step "
            "also pays the collective's latency") in text
    # the same run at --hop-latency-us 1 (reviewer: binds from 512, 1024 at 381 ms, 42.0 %)
    at1 = _json(capsys, "--on", "H100 SXM", "--hidden", "4096", "--blocks", "32",
                "--tokens", "4096", "--hop-latency-us", "1")
    last = _rows(at1)[1024]
    assert at1["comm_binds_at"] == 512
    assert (f"at 1 us per hop the link binds from 512 GPUs on, 1024 GPUs "
            f"{last['step_s'] * 1e3:.0f} ms a step, {100 * last['efficiency']:.1f} %") in text
    assert last["step_s"] == pytest.approx(0.381, abs=1e-3)
    # a counted latency prints its own line, not this one
    assert "0 per hop assumed" not in _run(capsys, "--on", "H100 SXM", "--hop-latency-us", "1")


# --- F5: the assumed network that keeps the rows on NVLink is named -------------------------
def test_an_assumed_network_faster_than_nvlink_is_named(capsys):
    # a GB200 NVL72 rack's NVLink (900 GB/s a direction) is slower than its 72 x 400 Gb/s
    # ConnectX-7 = 3.6 TB/s across racks (s31: the A800 used here before has HDR since,
    # 8 x 25 = 200 GB/s, no faster than its NVLink)
    text = _run(capsys, "--on", "GB200", "--blocks", "24", "--tokens", "512",
                "--no-overlap")
    assert "not used" not in text
    assert ("inter-node: 3.6 TB/s (assumed: one 400 Gb/s ConnectX-7 NIC per GPU" in text)
    assert ("faster than the NVLink hops, so every row up to 1024 runs at NVLink's pace (a "
            "slower network would bind: --inter-bw)") in text


# --- F7: link kinds and the hop latency each row paid ---------------------------------------
def test_json_links_carry_their_kind_and_rows_their_hop_latency(tmp_path, capsys):
    h100 = _json(capsys, "--on", "H100 SXM", "--hop-latency-us", "2")
    assert (h100["links"]["intra"]["kind"], h100["links"]["inter"]["kind"]) == ("catalog",
                                                                                "assumed")
    assert {p["hop_latency_s"] for p in h100["points"][1:]} == {2e-6}
    given = _json(capsys, "--on", "H100 SXM", "--link-bw", "100GB/s", "--inter-bw", "25GB/s")
    assert (given["links"]["intra"]["kind"], given["links"]["inter"]["kind"]) == ("given",
                                                                                  "given")
    measured = _json(capsys, "--on", _two_hosts(tmp_path), "--per-node", "8")
    assert (measured["links"]["intra"]["kind"], measured["links"]["inter"]["kind"]) == (
        "measured", "measured")
    rows = _rows(measured)
    assert rows[8]["hop_latency_s"] == pytest.approx(100e-6)          # the send's alpha
    assert rows[16]["hop_latency_s"] == pytest.approx(800e-6 / 30)    # the world's share
    pcie = _json(capsys, "--on", "A100 80GB PCIe")
    assert pcie["links"]["pair"]["kind"] == "catalog"
    assert _rows(pcie)[1]["hop_latency_s"] is None


# --- F8: words ------------------------------------------------------------------------------
def test_latency_line_names_devices_and_an_ignored_hop_latency_is_said(tmp_path, capsys):
    text = _run(capsys, "--on", "TPU v5p", "--hop-latency-us", "5")
    assert "link latency per hop: at 1024 devices all-reduce latency 10.23 ms" in text
    path = cluster(tmp_path / "one.json")        # 2 ranks, one host: 300 us per hop
    one = _run(capsys, "--on", path, "--hop-latency-us", "1")
    assert ("note: --hop-latency-us 1 changes no row: the measured intra-node link keeps its "
            "own (300 us per hop inside a node), and a ring across nodes pays the larger of "
            "the two hop latencies") in one
    both = _run(capsys, "--on", _two_hosts(tmp_path), "--hop-latency-us", "1")
    assert ("note: --hop-latency-us 1 changes no row: the measured links keep their own hop "
            "latency (100 us per hop inside a node, 26.67 us across nodes)") in both
    slow = _run(capsys, "--on", path, "--hop-latency-us", "1000")
    assert ("note: --hop-latency-us 1000 reaches only the assumed inter-node link (the rows "
            "past 8)") in slow


# --- F6: a roof's link ceiling says what it is ----------------------------------------------
def test_a_probed_roof_link_ceiling_says_it_is_not_the_all_reduce():
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.model.comm_link import link_from_roof

    c = Ceiling(1.52e9, level="loopback", provenance="measured",
                method="broadcast over 2 ranks, 67108864 B messages, bus bandwidth = algbw "
                       "x 1 (nccl-tests convention); value = highest median over sizes "
                       "and collectives")
    roof = Roof("cluster", "measured", compute=(Ceiling(1e11, precision="fp32"),),
                memory=(c, Ceiling(2e10, level="DRAM")))
    link = link_from_roof(roof)
    assert link.hop_latency_s == 0 and link.bus_bytes_per_s == 1.52e9
    assert ("the probe's best busbw of any collective (broadcast over 2 ranks), not the "
            "all-reduce's fit, no latency; --link-from the cluster profile uses its "
            "all-reduce alpha/beta") in link.source
