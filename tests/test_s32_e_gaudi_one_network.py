"""Gaudi past one node: `rooflab llm --tp` and `rooflab scale` on one network (session 32,
helper E item 3). Both take model.scale_out (a Gaudi leaves its node by each chip's own 3
scale-out RoCE ports, 8 chips per node) and comm_link's mesh (21 scale-up ports, 3 to each
of 7 peers). By hand, per direction:
  Gaudi 3: a link of 3 x 200 GbE = 75 GB/s; a ring over k <= 8 chips uses min(k-1, 7)
           links: 2 -> 75, 4 -> 225, 8 and 16 -> 525 GB/s; the network 8 x 75 = 600 GB/s
           is faster, so 16 chips run at the mesh's 525
  Gaudi 2: 3 x 100 GbE = 37.5 GB/s: 2 -> 37.5, 4 -> 112.5, 8 and 16 -> 262.5; network
           8 x 37.5 = 300 GB/s
and the 2-chip row of `rooflab scale` is one link of the mesh, not "a bridge" (it said so).
"""

import json

import pytest

from rooflab.cli.main import main

BY_HAND = {"gaudi3": ({2: 75e9, 4: 225e9, 8: 525e9, 16: 525e9}, 600e9),
           "gaudi2": ({2: 37.5e9, 4: 112.5e9, 8: 262.5e9, 16: 262.5e9}, 300e9)}
SCALE = ["--hidden", "4096", "--blocks", "8", "--tokens", "512"]


def _json(capsys, *argv):
    assert main(["-q", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("chip", sorted(BY_HAND))
def test_llm_tp_and_scale_rows_run_on_the_same_links(capsys, chip):
    rings, network = BY_HAND[chip]
    doc = _json(capsys, "scale", "--on", chip, *SCALE)
    rows = {p["gpus"]: p["link_bytes_per_s"] for p in doc["points"]}
    assert doc["links"]["inter"]["bus_bytes_per_s"] == pytest.approx(network)
    for tp, bw in rings.items():
        llm = _json(capsys, "llm", "llama-2-70b", "--on", chip, "--tp", str(tp), "--batch",
                    "1", "--phase", "decode")["llm"]["parallel"]
        assert llm["link_bytes_per_s"] == pytest.approx(bw) == pytest.approx(rows[tp]), tp
    assert f"the network, {network / 1e9:g} GB/s, is faster" in llm["link"]
    # scale's 2-chip row: one link of the mesh, no bridge (old: "a bridge joins 2 cards")
    assert main(["scale", "--on", chip, *SCALE]) == 0
    text = " ".join(capsys.readouterr().out.split())
    line = text[text.index(f"2 devices: network {rings[2] / 1e9:g} GB/s"):
                text.index("intra-node link")]
    assert "a full mesh" in line and "a bridge joins 2 cards" not in line
    # an NVLink bridge still is one
    assert main(["scale", "--on", "A100 80GB PCIe", *SCALE]) == 0
    assert "a bridge joins 2 cards" in " ".join(capsys.readouterr().out.split())
