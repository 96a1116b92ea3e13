"""The network between nodes, per vendor (session 30, AMD loose ends 1): each catalog device
names what its systems carry, with the source, and `rooflab llm` and `rooflab scale` take
the same one (a Gaudi past a node went over an InfiniBand NIC in llm, its own RoCE ports
in scale: 400 against 600 GB/s)."""

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.model.comm_link import NDR_SOURCE
from rooflab.model.scale_out import NVIDIA, assumed_network, network_unit


def _json(capsys, *argv):
    assert main(["-q", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _scale_inter(capsys, on, *extra):
    doc = _json(capsys, "scale", "--on", on, "--hidden", "1024", "--blocks", "2",
                "--tokens", "512", *extra)
    return doc["links"]["inter"]


def test_nvidia_keeps_the_ndr_words_and_no_amd_claim():
    # one text for NVIDIA devices and a profile file's roof; before, NVIDIA's source
    # spoke for MI300X clusters too
    assert NVIDIA.source() == NDR_SOURCE
    assert "MI300X" not in NDR_SOURCE and "ConnectX-7" in NDR_SOURCE
    h100 = assumed_network(lookup("H100 SXM"))
    assert (h100.bus_bytes_per_s, h100.source) == (50e9, NDR_SOURCE)


def test_mi300x_names_its_platform_nics(capsys):
    inter = _scale_inter(capsys, "MI300X")
    # one 400 Gb/s NIC per GPU = 50 GB/s, x 8 per node = 400 GB/s: the number is unchanged
    assert inter["bus_bytes_per_s"] == pytest.approx(8 * 400e9 / 8)
    src = inter["source"]
    assert "NDR InfiniBand" not in src
    assert "Pollara 400" in src and "Thor 2" in src and "rocm.docs.amd.com" in src


def test_mi250x_and_mi300a_take_a_slingshot_nic_each(capsys):
    for on in ("MI250X", "MI300A"):
        link = assumed_network(lookup(on))
        assert link.bus_bytes_per_s == 200e9 / 8          # 25 GB/s per package
        assert "Slingshot" in link.source and "docs.cscs.ch" in link.source
    # 4 packages per HPE Cray EX node (scale_out.devices_per_node, session 30 he) x 25 GB/s
    assert _scale_inter(capsys, "MI250X")["bus_bytes_per_s"] == pytest.approx(100e9)


def test_tpu_past_its_slice_takes_the_dcn(capsys):
    # v5p: 50 Gb/s DCN per chip = 6.25 GB/s, x 8 chips given per node = 50 GB/s
    inter = _scale_inter(capsys, "TPU v5p", "--per-node", "8")
    assert inter["bus_bytes_per_s"] == pytest.approx(8 * 50e9 / 8)
    assert "DCN" in inter["source"] and "InfiniBand" not in inter["source"]
    # v5e: 2 x 100 Gb/s per 8-chip host = 25 Gb/s per chip
    assert assumed_network(lookup("TPU v5e")).bus_bytes_per_s == 25e9 / 8
    assert network_unit(lookup("TPU v5e")) == "chip"


def test_llm_and_scale_agree_on_gaudi_past_a_node(capsys):
    scale = _scale_inter(capsys, "Gaudi 3")
    par = _json(capsys, "llm", "llama-3-70b", "--on", "Gaudi 3", "--tp", "16",
                "--batch", "16")["llm"]["parallel"]
    # 3 scale-out ports x 200 Gb/s = 75 GB/s per chip, x 8 chips = 600 GB/s across nodes;
    # the ring's slowest hop since s31 is inside the node: 7 peers x 75 GB/s = 525 GB/s
    assert scale["bus_bytes_per_s"] == pytest.approx(600e9)
    assert par["link_bytes_per_s"] == pytest.approx(525e9)
    assert "the network, 600 GB/s, is faster" in par["link"] and "NDR" not in par["link"]
    assert par["link_provenance"]["kind"] == "catalog"
    # 160 all-reduces of 262,144 B over 16 chips: 160 x 2 x 15/16 x 262,144 / 525 GB/s
    assert par["comm_s"] == pytest.approx(160 * 2 * 15 / 16 * 262144 / 525e9)


def test_a_gaudi_stage_send_leaves_by_one_chips_ports(capsys):
    doc = _json(capsys, "llm", "llama-3-8b", "--on", "Gaudi 3", "--tp", "8", "--pp", "2",
                "--batch", "1")["llm"]
    link = doc["pipeline"]["link"]
    assert link["bytes_per_s"] == pytest.approx(3 * 200e9 / 8)     # 75 GB/s, not 50
