"""Review s20 r3 F2: `specs show` / `specs compare` printed the catalog's interconnect
figure (both directions, as vendors quote it) unlabelled beside the host link (per
direction): the T4's one PCIe link read as 32 GB/s and 15.8 GB/s."""

from __future__ import annotations

from rooflab.cli.main import main


def _row(capsys, args, label="interconnect"):
    capsys.readouterr()
    assert main(args) == 0
    return next(x for x in capsys.readouterr().out.splitlines() if label in x)


def test_show_labels_both_directions_and_per_direction(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    # nvidia.toml: NVLink 4 900 GB/s "total, both directions": 450 GB/s each way
    h100 = _row(capsys, ["specs", "show", "H100 SXM"])
    assert "NVLink 4, 900 GB/s both directions (450 GB/s per direction)" in h100
    # a PCIe card: the same link as the host link row, whose per-direction rate is derived
    # (16 lanes x 8 GT/s x 128/130 / 8 = 15.75 GB/s, not 32 / 2)
    t4 = _row(capsys, ["specs", "show", "t4"])
    assert ("PCIe Gen3 x16, 32 GB/s both directions, before line coding (per direction: "
            "the host link below)") in t4
    assert "15.8 GB/s per direction" in _row(capsys, ["specs", "show", "t4"], "│ host link")


def test_compare_says_both_ways_beside_the_one_way_host_link(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    capsys.readouterr()
    assert main(["specs", "compare", "H100 SXM", "t4", "Apple M3 Max (40-core GPU)"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(x for x in lines if "interconnect" in x)
    assert "NVLink 4, 900 GB/s both ways" in row and "PCIe Gen3 x16, 32 GB/s both ways" in row
    # an Apple chip's "interconnect" is its unified memory: no link, no direction
    assert "unified memory, 400 GB/s │" in row
    host = next(x for x in lines if "host link, 1 way" in x)
    assert "63 GB/s" in host and "15.8 GB/s" in host
