"""The H200 NVL's 4-way NVLink bridge (s38 task M): its catalog interconnect, "NVLink 4 (2- or
4-way bridge)", joins up to 4 cards at 900 GB/s per GPU, so rings of up to 4 run over NVLink
(450 GB/s per direction) and larger ones over PCIe Gen5 x16 (32 GT/s x 16 lanes x 128/130 / 8
= 63.0 GB/s per direction). The old code read every NVLink bridge as joining pairs: a ring of
4 H200 NVL ran over PCIe. An H100 NVL's and an A100 PCIe's bridges still join pairs."""

import pytest
from cli_inproc import json_of

from rooflab.hardware.catalog import lookup
from rooflab.model.comm_link import device_ring_link

PCIE5 = 32e9 * 16 * 128 / 130 / 8      # 63.0 GB/s per direction
GRADS = 6_738_415_616 * 2              # llama-2-7b's bf16 gradients, 13.5 GB


def test_ring_links_by_group():
    """H200 NVL: 2, 3 and 4 cards on NVLink 900 / 2 = 450 GB/s; 5 on PCIe 63.0 GB/s (old: 3
    and 4 on PCIe). H100 NVL, A100 80GB PCIe: 2 on NVLink, 3 on PCIe (unchanged)."""
    h200 = lookup("H200 NVL")
    for n in (2, 3, 4):
        link = device_ring_link(h200, n)
        assert (link.level, link.bus_bytes_per_s) == ("NVLink", 450e9)
        assert "joins up to 4 cards" in link.source
    assert device_ring_link(h200, 5).bus_bytes_per_s == pytest.approx(PCIE5)
    for name in ("H100 NVL", "A100 80GB PCIe"):
        dev = lookup(name)
        assert device_ring_link(dev, 2).level == "NVLink"
        three = device_ring_link(dev, 3)
        assert three.level == "PCIe" and "joins only pairs" in three.source


@pytest.mark.parametrize("dp, level, seconds", [
    # ring all-reduce 2(N-1)/N x 13.48 GB: N=4 1.5 x 13.48e9 / 450e9 = 44.9 ms (old: / 63.0e9
    # = 321 ms); N=8 leaves the bridge: 1.75 x 13.48e9 / 63.0e9 = 374 ms (as before)
    (4, "NVLink", 1.5 * GRADS / 450e9),
    (8, "PCIe", 1.75 * GRADS / PCIE5),
])
def test_train_dp(capsys, dp, level, seconds):
    """`train llama-2-7b --on 'H200 NVL' --dp N`: the gradient all-reduce's link and time."""
    doc = json_of(capsys, ["train", "llama-2-7b", "--on", "H200 NVL", "--batch", "1",
                           "--seq", "4096", "--dp", str(dp), "--json"])
    dp_doc = doc["train"]["dp"]
    assert dp_doc["link"]["level"] == level
    assert dp_doc["comm_s"] == pytest.approx(seconds, rel=1e-3)


@pytest.mark.parametrize("tp, level", [(2, "NVLink"), (4, "PCIe")])
def test_train_dp_tp_span(capsys, tp, level):
    """--dp 2 --tp T: each data-parallel ring joins one card of each TP group, its cards
    spread over 2 x T: 4 (one bridge, NVLink) for T = 2, 8 (two bridges, PCIe) for T = 4
    (old: PCIe for both, the bridge read as joining pairs)."""
    doc = json_of(capsys, ["train", "llama-2-7b", "--on", "H200 NVL", "--batch", "1",
                           "--seq", "4096", "--dp", "2", "--tp", str(tp), "--json"])
    assert doc["train"]["dp"]["link"]["level"] == level


def test_scale_rows(capsys):
    """`scale --on 'H200 NVL'`: the 4-GPU row runs on NVLink 450 GB/s (old: PCIe 63.0 GB/s),
    the 8-GPU row on PCIe; the intra-node link names the bridge's 4 cards."""
    doc = json_of(capsys, ["scale", "--on", "H200 NVL", "--json"])
    rows = {p["gpus"]: p for p in doc["points"]}
    assert (rows[4]["link"], rows[4]["link_bytes_per_s"]) == ("NVLink", 450e9)
    assert rows[8]["link"] == "PCIe"
    assert rows[8]["link_bytes_per_s"] == pytest.approx(PCIE5)
    assert "joins up to 4 cards" in doc["links"]["intra"]["source"]
