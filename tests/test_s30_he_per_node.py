"""Devices per node and the NIC per device, per system (session 30 he): an MI300A's or
MI250X's HPE Cray EX node holds 4 packages, not 8, so rings past 4 cross the Slingshot
network (25 GB/s per package); DGX A100 has one 200 Gb/s HDR NIC per GPU, DGX B300 one
800 Gb/s ConnectX-8; `rooflab report --on` passes its device to the rocprof reader."""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.model.scale_out import assumed_network, devices_per_node, scale_out_of

DATA = Path(__file__).parent / "data" / "rocprof_occupancy"


def _json(capsys, *argv):
    assert main(["-q", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cray_ex_nodes_hold_four_packages():
    assert devices_per_node(lookup("MI300A")) == 4
    assert devices_per_node(lookup("MI250X")) == 4
    assert devices_per_node(lookup("MI300X")) == 8
    assert devices_per_node(lookup("H100 SXM")) == 8
    assert devices_per_node(None) == 8


def test_scale_on_mi300a_crosses_the_network_past_four(capsys):
    doc = _json(capsys, "scale", "--on", "MI300A", "--hidden", "1024", "--blocks", "2",
                "--tokens", "512")
    # 4 NICs x 200 Gb/s / 8 = 100 GB/s across nodes; inside, 3 xGMI links x 64 = 192 GB/s
    assert doc["links"]["inter"]["bus_bytes_per_s"] == pytest.approx(4 * 200e9 / 8)
    assert doc["links"]["intra"]["bus_bytes_per_s"] == pytest.approx(3 * 64e9)
    text = json.dumps(doc)
    assert "4 devices per node" in text and "EX255a" in text


def test_scale_per_node_still_overrides(capsys):
    # s31: MI300A's mesh ends at 4, so --per-node 8 there is refused; MI250X's dies join
    doc = _json(capsys, "scale", "--on", "MI250X", "--hidden", "1024", "--blocks", "2",
                "--tokens", "512", "--per-node", "8")
    # 8 NICs x 25 GB/s
    assert doc["links"]["inter"]["bus_bytes_per_s"] == pytest.approx(200e9)
    assert "4 devices per node" not in json.dumps(doc)


def test_llm_tp8_on_mi300a_runs_on_the_slingshot_ring(capsys):
    doc = _json(capsys, "llm", "llama-3-70b", "--on", "MI300A", "--tp", "8", "--batch", "1",
                "--phase", "decode")
    text = json.dumps(doc)
    # the ring's slowest hop: 4 NICs x 25 GB/s = 100 GB/s (xGMI inside: 192 GB/s)
    assert "x 4 NICs per node, one ring per NIC = 100 GB/s across nodes" in text
    assert "more than one HPE Cray EX255a node of 4 MI300A APUs" in text


def test_llm_tp_on_mi250x_names_packages_and_dies(capsys):
    doc = _json(capsys, "llm", "llama-3-70b", "--on", "MI250X", "--tp", "16", "--batch", "1",
                "--phase", "decode")
    text = json.dumps(doc)
    assert "a ring over 16 packages, 32 dies (each a device to software)" in text


def test_nvidia_nics_per_system():
    # DGX A100: 200 Gb/s HDR = 25 GB/s; DGX B300: 800 Gb/s ConnectX-8 = 100 GB/s
    a100 = assumed_network(lookup("A100 80GB SXM"))
    assert a100.bus_bytes_per_s == 25e9 and "ConnectX-6" in a100.source
    assert "nvidia-dgx-a100-datasheet" in a100.source
    assert scale_out_of(type("D", (), {"name": "NVIDIA B300"})()).bytes_per_s == 100e9
    # H100 and PCIe cards keep the NDR default
    assert assumed_network(lookup("H100 SXM")).bus_bytes_per_s == 50e9
    assert assumed_network(lookup("L40S")).bus_bytes_per_s == 50e9


def test_report_passes_on_to_rocprof(capsys, monkeypatch):
    monkeypatch.chdir(DATA)
    assert main(["-q", "report", "results.csv", "--on", "mi300x"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # before: "...but not which GPU ran it: name it (--on mi300x)", --on given or not
    assert "HIP's calculator for gfx942" in out and "gemm_mfma_bf16 25.0 % (VGPRs)" in out
    assert "not which GPU ran it" not in out
