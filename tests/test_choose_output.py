"""`rooflab choose -o FILE`: the ranking written whole (.json as --json, .csv per device)."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main


@pytest.fixture
def kernels(tmp_path):
    # one fp16 stream: 1 GFLOP over 2 GB, memory-bound everywhere
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "stream", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 2e9}}]}))
    return path


def test_choose_writes_every_device_to_csv_and_json(kernels, tmp_path, capsys):
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    among = "H100 SXM,A100,T4"
    assert main(["choose", str(kernels), "--among", among, "--top", "1", "-o", str(out_csv)]) == 0
    assert f"wrote {out_csv}" in capsys.readouterr().err   # stderr (s22 r3 F7)
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["name"] for r in rows] == ["NVIDIA H100 SXM", "NVIDIA A100 80GB SXM", "NVIDIA T4"]
    # 2 GB at 3.35 TB/s (H100 SXM) and at 320 GB/s (T4); the 5 us launch floor is lower
    h100, t4 = float(rows[0]["seconds"]), float(rows[2]["seconds"])
    assert h100 == pytest.approx(2e9 / 3.35e12, rel=1e-9)
    assert t4 == pytest.approx(2e9 / 320e9, rel=1e-9)
    assert float(rows[2]["relative"]) == pytest.approx(t4 / h100)
    assert main(["choose", str(kernels), "--among", among, "--json", "-o", str(out_json)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(out_json.read_text()) == printed


def test_choose_refuses_an_unknown_suffix_before_any_work(kernels, tmp_path, capsys):
    out = tmp_path / "r.png"
    assert main(["choose", str(kernels), "--among", "T4", "-o", str(out)]) == 2
    assert "use .json" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(("device", "link"), [("MI300X", "xGMI"), ("TPU v5p", "ICI"),
                                              ("H100 SXM", "NVLink"), ("Gaudi 3", "network")])
def test_a_catalog_link_is_named_for_what_it_is(device, link):
    # Infinity Fabric and ICI join chips directly, as NVLink does; Gaudi's RoCE is Ethernet
    from rooflab.hardware.catalog import lookup
    from rooflab.model.comm_link import link_from_device

    got = link_from_device(lookup(device))
    assert got.level == link
    # vendors quote both directions; a ring uses one: MI300X 896 GB/s -> 448 GB/s
    assert got.bus_bytes_per_s == lookup(device).interconnect_bytes_per_s / 2
