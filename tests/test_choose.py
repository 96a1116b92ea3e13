"""Hardware choice: rank roofs for a kernel set by predicted time at the roof (seed 002)."""

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.choose import flop_per_joule, kernel_time, rank

# MEM: bandwidth-rich, CMP: compute-rich.
MEM = Roof("MEM", compute=(Ceiling(1e14, precision="fp16", unit="tensor"),),
           memory=(Ceiling(4e12, level="DRAM"),))
CMP = Roof("CMP", compute=(Ceiling(4e14, precision="fp16", unit="tensor"),),
           memory=(Ceiling(1e12, level="DRAM"),))
DECODE = Kernel("decode", {"fp16": 2e9}, {"DRAM": 2e9})          # AI 1
GEMM = Kernel("gemm", {"fp16": 2e12}, {"DRAM": 2e9}, unit="tensor")  # AI 1000
CANDIDATES = [("MEM", MEM, 700.0), ("CMP", CMP, 350.0)]


def test_memory_bound_work_prefers_bandwidth():
    # decode on MEM: max(2e9 / 1e14, 2e9 / 4e12) = 5e-4 s; on CMP: max(5e-6, 2e-3) = 2e-3 s.
    ranked = rank([DECODE], CANDIDATES)
    assert [c.name for c in ranked] == ["MEM", "CMP"]
    assert ranked[0].seconds == pytest.approx(5e-4) and ranked[1].seconds == pytest.approx(2e-3)
    assert ranked[0].binding == "DRAM" and ranked[0].binding_share == pytest.approx(1.0)
    # 2e9 FLOP / 5e-4 s / 700 W = 5.714e9 FLOP/J.
    assert flop_per_joule(ranked[0], [DECODE]) == pytest.approx(2e9 / 5e-4 / 700)
    assert ranked[0].energy_j == pytest.approx(700 * 5e-4)


def test_compute_bound_work_prefers_flops():
    # gemm on MEM: max(2e12 / 1e14, 2e9 / 4e12) = 0.02 s; on CMP: max(5e-3, 2e-3) = 5e-3 s.
    ranked = rank([GEMM], CANDIDATES)
    assert [c.name for c in ranked] == ["CMP", "MEM"]
    assert ranked[0].seconds == pytest.approx(5e-3)
    assert ranked[0].binding == "fp16 tensor"


def test_mixed_set_and_binding_share():
    # MEM: 5e-4 + 0.02 = 0.0205 s; CMP: 2e-3 + 5e-3 = 7e-3 s (fp16 tensor binds 5/7).
    ranked = rank([DECODE, GEMM], CANDIDATES)
    assert ranked[0].name == "CMP" and ranked[0].seconds == pytest.approx(7e-3)
    assert ranked[0].binding_share == pytest.approx(5 / 7)


def test_launch_floor_binds_tiny_kernels():
    roof = Roof("R", compute=MEM.compute, memory=MEM.memory, overhead_s=5e-6)
    kt, _ = kernel_time(roof, Kernel("tiny", {"fp16": 1e3}, {"DRAM": 1e3}, calls=1000))
    assert kt.binding == "launch" and kt.seconds == pytest.approx(5e-3)   # 1000 x 5 us


def test_missing_level_falls_back_to_dram_with_a_note():
    kt, note = kernel_time(MEM, Kernel("l2only", {"fp16": 1.0}, {"L2": 4e12}))
    assert kt.seconds == pytest.approx(1.0) and "judged against DRAM" in note


def test_cli_ranks_catalog_devices(tmp_path, capsys):
    catalog = pytest.importorskip("rooflab.hardware.catalog")
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [{"name": "decode", "flop": {"fp16": 2e9},
                                             "bytes": {"DRAM": 2e9}}]}))
    assert main(["choose", str(path), "--among", "H100,H200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["devices"]
    h100, h200 = catalog.lookup("H100"), catalog.lookup("H200")
    # Bytes-bound: time ratio = bandwidth ratio (same compute on both).
    assert data[0]["name"] == h200.name
    assert data[1]["relative"] == pytest.approx(h200.memory_bytes_per_s /
                                                h100.memory_bytes_per_s, rel=1e-6)
    assert data[0]["binding"] == "DRAM" and data[0]["tdp_w"] == h200.tdp_w
    assert main(["choose", str(path), "--kind", "phone"]) == 2
