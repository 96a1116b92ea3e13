"""`rooflab train --tp N --dp M`: each data-parallel ring is over the M devices of one TP rank
(session 33, helper B item 1).

Megatron-LM places the TP group innermost, its N devices together in a node, so the
data-parallel group of a device is the M devices holding the same TP rank, one per TP group:
a ring over M, not over M x N. Before, the ring's link was chosen for all M x N devices: on
an MI300X (a full xGMI mesh, one link of 128 GB/s both directions, 64 per direction, to each
of its 7 peers) `--tp 4 --dp 2` read "a ring over 8 uses 7 of them per device: 7 x 64 = 448
GB/s".

By hand (llama-2-7b, --batch 1 --seq 4096, bf16 gradients, MI300X):
  one device's gradients under --tp 4: 1 684 803 584 params x 2 B = 3 369 607 168 B
  a ring over 2 on its one link (k - 1 = 1 link): 1 x 64 GB/s = 64 GB/s
  all-reduce: 2(2-1)/2 x 3 369 607 168 B / 64e9 B/s = 52.65 ms   (old: / 448e9 = 7.52 ms)
  --tp 2 --dp 8: 8 x 2 devices leave the 8-device node; a node holds 4 devices of each
  ring, so its intra-node hops use the 3 links among them: 3 x 64 = 192 GB/s, slower than
  the network's share (8 NICs x 50 GB/s / 2 rings = 200 GB/s): 192 GB/s   (old: the node's
  448 GB/s vs 200: 200 GB/s, network)
  --tp 8 --dp 2: a node holds one device of each ring: every hop crosses the network,
  8 x 50 / 8 rings = 50 GB/s
  H100 SXM (NVSwitch): each device keeps its NVLink, 900 / 2 = 450 GB/s, for its one ring.
"""

import json

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-7b", "--batch", "1", "--seq", "4096"]


def _train(capsys, on, tp, dp):
    assert main(["-q", "train", *ARGS, "--on", on, "--tp", str(tp), "--dp", str(dp),
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]


def test_mi300x_tp4_dp2_ring_over_2_on_one_link(capsys):
    dp = _train(capsys, "MI300X", 4, 2)["dp"]
    assert dp["link"]["bus_bytes_per_s"] == pytest.approx(64e9)     # was 448e9
    grads = dp["collectives"][0]["bytes"]
    assert grads == pytest.approx(1_684_803_584 * 2)
    assert dp["comm_s"] == pytest.approx(2 * (2 - 1) / 2 * grads / 64e9)   # 52.65 ms
    src = dp["link"]["source"]
    assert "a ring over 2 uses 1 of them per device: 1 x 64 = 64 GB/s" in src
    assert "github.com/ROCm/rccl/pull/1270" in src       # the RCCL citation kept
    assert ("each data-parallel ring joins the 2 devices of one TP rank, one per TP group "
            "(TP innermost") in src
    assert "the 4 rings on disjoint links at once" in src


def test_mi300x_tp2_dp8_intra_hops_bind(capsys):
    link = _train(capsys, "MI300X", 2, 8)["dp"]["link"]
    assert link["bus_bytes_per_s"] == pytest.approx(3 * 64e9)    # was 200e9 (network)
    # named apart from the TP group's xGMI (a ring over 2: 64 GB/s)
    assert link["level"] == "xGMI (--dp ring)"
    assert "4 of them in a node" in link["source"]


def test_mi300x_tp8_dp2_every_hop_crosses_the_network(capsys):
    link = _train(capsys, "MI300X", 8, 2)["dp"]["link"]
    assert link["level"] == "network"
    assert link["bus_bytes_per_s"] == pytest.approx(8 * 50e9 / 8)
    assert "a node holds one device of each ring, so every hop crosses the network" in \
        link["source"]


def test_h100_switch_keeps_its_whole_link_for_its_one_ring(capsys):
    link = _train(capsys, "H100", 4, 2)["dp"]["link"]
    assert link["bus_bytes_per_s"] == pytest.approx(900e9 / 2)
    assert "each device's link carries its one ring, the 4 rings at once" in link["source"]


def test_printed_link_line(capsys):
    assert main(["train", *ARGS, "--on", "MI300X", "--tp", "4", "--dp", "2"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "link: xGMI (--dp ring) 64 GB/s bus bandwidth" in text
    assert "a ring over 8 uses 7" not in text
    assert "communication 52.7 ms per step" in text
