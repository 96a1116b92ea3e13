"""s31 hh: the NVIDIA GB300 (one Blackwell Ultra GPU of a GB300 NVL72 rack) in the catalog,
and its network: the NVL72 rack of 72 GPUs, one 800 Gb/s ConnectX-8 per GPU. Hand-computed
values; each test fails on the code before it (no GB300 entry: `lookup("GB300")` found
nothing, and scale_out took a GB300 name for the B300's 8-GPU node).

Per GPU = NVIDIA's GB300 NVL72 rack table / 72 (fp4 1080 PF dense; fp8 720, bf16 360,
tf32 180 PF with sparsity; fp32 6 PF; fp64 100 TF), 288 GB HBM3e at 8 TB/s, NVLink 5 1.8
TB/s (the entry's notes name the copies read)."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from rooflab.cli.main import main
from rooflab.hardware.catalog import all_devices, device_to_dict, lookup, match_device_name
from rooflab.model.scale_out import (
    assumed_network,
    devices_per_node,
    node_network,
    node_words,
    scale_out_of,
)

GB300 = "NVIDIA GB300 Grace Blackwell Ultra"
PTS = str(REPO / "examples" / "seeds" / "pts.json")


@pytest.mark.parametrize("typed", ["GB300", "gb300", "GB300 NVL72", "Grace Blackwell Ultra",
                                   "NVIDIA GB300"])
def test_gb300_names_resolve_to_it(typed):
    assert lookup(typed).name == GB300


def test_b300_and_gb200_names_are_unchanged():
    # "GB300" holds "B300": the plain B300 names still mean the HGX part
    assert lookup("B300").name == "NVIDIA B300"
    assert lookup("Blackwell Ultra").name == "NVIDIA B300"
    assert lookup("GB200").name == "NVIDIA GB200 Grace Blackwell"
    # what the driver reports
    assert match_device_name("NVIDIA GB300").name == GB300
    assert match_device_name("NVIDIA B300 SXM6 AC").name == "NVIDIA B300"


def test_the_catalog_holds_90_devices():
    assert len(all_devices()) == 90   # + the H200 NVL (s36 V)


def test_dense_peaks_are_the_rack_table_over_72():
    roof = lookup("GB300").roof

    def peak(prec, unit="tensor"):
        return roof.find_compute(prec, unit).value

    assert peak("fp4") == 15000e12           # 1080 PF / 72
    assert peak("fp8") == 5000e12            # 720 PF sparse / 72 / 2
    assert peak("bf16") == peak("fp16") == 2500e12   # 360 PF sparse / 72 / 2
    assert peak("tf32") == 1250e12           # 180 PF sparse / 72 / 2
    assert peak("fp32", "vector") == 83.3e12  # 6 PF / 72 = 83.33
    assert peak("fp64", "vector") == peak("fp64") == 1.39e12   # 100 TF / 72 = 1.389
    assert roof.find_compute("int8", "tensor") is None   # sources disagree: none entered
    assert roof.top_float_compute().value == 15000e12


def test_sparse_is_twice_dense_and_fp4_sparse_is_not_stored():
    d = lookup("GB300")
    assert d.sparse == {"tf32": 2500e12, "bf16": 5000e12, "fp16": 5000e12, "fp8": 10000e12}
    # 1440 PF / 72 = 20 PFLOP/s is not 2 x 15: not kept
    assert "fp4" not in d.sparse


def test_memory_links_power_and_identity():
    d = lookup("GB300")
    assert d.memory_bytes == 288e9 and d.memory_bytes_per_s == 8e12
    assert d.interconnect == "NVLink 5" and d.interconnect_bytes_per_s == 1.8e12
    assert d.tdp_w == 1400
    assert d.compute_capability == "10.3"           # sm_103, as the B300
    assert d.host_link_ceiling is None              # NVLink-C2C to its Grace, no PCIe
    assert d.sms is None and device_to_dict(d)["sms"] is None   # no count found: none
    notes = " ".join(d.notes)
    assert "third-party" in notes and "no int8 ceiling" in notes and "no SM count" in notes
    assert d.source.startswith("https://developer.nvidia.com/blog/inside-nvidia-blackwell-ultra")


def test_ridge_points_by_hand():
    d = lookup("GB300")
    assert d.ridge("bf16", "tensor") == pytest.approx(2500e12 / 8e12)   # 312.5 FLOP/B
    assert d.ridge("fp4", "tensor") == pytest.approx(15000e12 / 8e12)   # 1875
    assert d.ridge("fp32", "vector") == pytest.approx(83.3e12 / 8e12)   # 10.41


def test_specs_show_gb300(capsys):
    assert main(["specs", "show", "GB300"]) == 0
    out = capsys.readouterr().out
    assert GB300 in out and "288 GB at 8 TB/s" in out and "1400 W" in out
    assert "2.5 PFLOP/s" in out and "312" in out and "1875" in out
    assert main(["specs", "show", "GB300", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert GB300 in text and "1.5e+16" in text


# --- the network: the NVL72 rack, one 800G ConnectX-8 per GPU -----------------------------
def test_gb300_node_is_the_nvl72_rack_with_800g_nics():
    dev = lookup("GB300")
    assert devices_per_node(dev) == 72
    # 800 Gb/s / 8 = 100 GB/s per GPU (B300's 8-GPU node gave 8 x 100 = 800 GB/s)
    assert assumed_network(dev).bus_bytes_per_s == 100e9
    # 72 x 800 Gb/s / 8 = 7.2 TB/s across racks (GB200: 72 x 400 Gb/s / 8 = 3.6 TB/s)
    assert node_network(dev).bus_bytes_per_s == 7.2e12
    assert "ConnectX-8" in assumed_network(dev).source
    assert node_words(dev) == "GB300 NVL72 rack of 72 GPUs in one NVLink domain"
    # the B300 keeps its 8-GPU DGX node; the name "GB300" no longer falls to it
    b300 = lookup("B300")
    assert devices_per_node(b300) == 8 and node_network(b300).bus_bytes_per_s == 800e9
    assert scale_out_of(dev) is not scale_out_of(b300)


def test_scale_on_gb300_keeps_the_rack_on_nvlink(capsys):
    code = main(["-q", "scale", "--on", "GB300", "--hidden", "8192", "--blocks", "80",
                 "--tokens", "4096"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0
    row64 = next(ln for ln in text.splitlines() if ln.startswith("  64 "))
    assert row64.split()[1] == "NVLink"            # was "network": an 8-GPU node
    # compute per step: 6 x 64.4 G params x 4096 tokens / 2.5 PFLOP/s = 633 ms
    assert row64.split()[4:6] == ["633", "ms"]
    assert "72 devices per node, as in one GB300 NVL72 rack" in text
    assert "inter-node: 7.2" in text and "x 72 NICs per node" in text


def test_choose_ranks_gb300_first_of_the_blackwells(capsys):
    assert main(["choose", PTS, "--among", "GB300,B300,B200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    devices = doc["devices"] if isinstance(doc, dict) else doc
    assert [d["name"] for d in devices] == [GB300, "NVIDIA B300", "NVIDIA B200"]
    assert [d["rank"] for d in devices] == [1, 2, 3]


def test_choose_ties_gb300_with_gb200_on_the_same_8_tb_s(capsys):
    # pts.json is DRAM-bound on both (8 TB/s each): the same ranked time, one shared place
    assert main(["choose", PTS, "--among", "GB300,GB200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    devices = doc["devices"] if isinstance(doc, dict) else doc
    assert devices[0]["ranked_s"] == devices[1]["ranked_s"]
    assert devices[0]["rank"] == devices[1]["rank"] == 1
