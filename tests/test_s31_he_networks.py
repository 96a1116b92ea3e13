"""s31 he: the scale-out table and node sizes checked against the systems' documents.
Hand-computed values; each test fails on the code before it (which gave A800, A100 PCIe
and GB200 the 400 Gb/s NDR default and 8 per node, had no B300 device, held a Gaudi's
intra-node link to all 24 ports halved, kept MI210 at 8 per node on 400 Gb/s, and gave an
MI300A's APUs 5..8 under --per-node 8 the 4-APU xGMI figure)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.model.comm_link import device_ring_link
from rooflab.model.scale_out import assumed_network, devices_per_node, node_network

SCALE = ["scale", "--hidden", "4096", "--blocks", "32", "--tokens", "4096"]


@pytest.fixture
def run(capsys):
    def _scale(*args: str):
        code = main(["-q", *SCALE, *args])
        out = capsys.readouterr()
        return SimpleNamespace(exit_code=code, output=out.out + out.err)
    return _scale


@pytest.mark.parametrize("name", ["A800", "A800 PCIe", "A100 PCIe", "A100 40GB PCIe"])
def test_a800_and_a100_pcie_get_hdr_200g(name):
    # 200 Gb/s / 8 = 25 GB/s per GPU; x 8 per node = 200 GB/s (was 50 and 400)
    dev = lookup(name)
    assert assumed_network(dev).bus_bytes_per_s == 25e9
    assert node_network(dev).bus_bytes_per_s == 200e9
    assert "DGX A100" in assumed_network(dev).source


def test_gb200_node_is_the_nvl72_rack():
    dev = lookup("GB200")
    assert devices_per_node(dev) == 72
    # 72 ConnectX-7 x 400 Gb/s / 8 = 72 x 50 GB/s = 3.6 TB/s across racks
    assert node_network(dev).bus_bytes_per_s == 3.6e12
    assert "ConnectX-7" in assumed_network(dev).source


def test_gb200_scale_keeps_64_on_nvlink(run):
    out = run("--on", "GB200").output
    row64 = next(ln for ln in out.splitlines() if ln.startswith("  64 "))
    assert row64.split()[1] == "NVLink"          # was "network": 8-GPU node
    assert "72 devices per node, as in one GB200 NVL72 rack" in out


def test_b300_is_a_catalog_device_with_its_network():
    dev = lookup("B300")
    assert dev.name == "NVIDIA B300"
    assert dev.roof.find_compute("fp4", "tensor").value == 13125e12
    assert dev.roof.find_compute("bf16", "tensor").value == 2250e12
    assert dev.roof.find_compute("fp8", "tensor").value == 4500e12
    # 800 Gb/s / 8 = 100 GB/s per GPU, x 8 = 800 GB/s per node
    assert node_network(dev).bus_bytes_per_s == 800e9


def test_gaudi3_intra_node_is_3_ports_per_peer():
    dev = lookup("Gaudi 3")
    # one peer: 3 ports x 200 Gb/s / 8 = 75 GB/s; a ring of 8: 7 peers x 75 = 525 GB/s
    # (was 24 x 200 Gb/s / 8 = 600 GB/s whatever the count)
    assert device_ring_link(dev, 2).bus_bytes_per_s == 75e9
    assert device_ring_link(dev, 8).bus_bytes_per_s == 525e9
    assert "21/7=3" in device_ring_link(dev, 8).source
    # Gaudi 2: 7 x 3 x 100 Gb/s / 8 = 262.5 GB/s
    assert device_ring_link(lookup("Gaudi 2"), 8).bus_bytes_per_s == 262.5e9


def test_gaudi3_scale_row_8_takes_525(run):
    out = run("--on", "Gaudi 3").output
    assert "intra-node link: network 525 GB/s" in out


def test_mi210_node_is_one_hive_of_4(run):
    dev = lookup("MI210")
    assert devices_per_node(dev) == 4
    # 4 x 200 Gb/s / 8 = 100 GB/s across hives (was 8 x 400 Gb/s / 8 = 400 GB/s)
    assert node_network(dev).bus_bytes_per_s == 100e9
    out = run("--on", "MI210").output
    row8 = next(ln for ln in out.splitlines() if ln.startswith("   8 "))
    assert row8.split()[1] == "network"          # was PCIe, as one 8-card node


def test_mi210_per_node_8_joins_hives_over_pcie(run):
    out = run("--on", "MI210", "--per-node", "8").output
    row8 = next(ln for ln in out.splitlines() if ln.startswith("   8 "))
    assert row8.split()[1] == "PCIe"


def test_mi300a_per_node_past_its_mesh_is_refused(run):
    res = run("--on", "MI300A", "--per-node", "8")
    assert res.exit_code == 2
    assert "--per-node 8 on AMD Instinct MI300A" in res.output
    assert "--per-node 4 or fewer" in res.output
    assert run("--on", "MI300A", "--per-node", "4").exit_code == 0


def test_mi300a_ring_past_one_mesh_says_so():
    link = device_ring_link(lookup("MI300A"), 8)
    assert link.bus_bytes_per_s == 192e9            # 3 x 64 GB/s, the hops in one mesh
    assert "more than one mesh of 4" in link.source
