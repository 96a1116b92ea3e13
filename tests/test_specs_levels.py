"""`rooflab specs compare` of a probed profile, level by level (review 14d L6): one row per
measured memory level (L1, L2, L3, DRAM) and compute ceiling, the profile's recorded RAM
(host.memory_bytes), and a ratio column (first / second) for two entries where one is a
file: the node-acceptance table HPC sites build by hand. Hand-built profiles only."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.cli.specs import FileRoof, compare_rows
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model.ceiling import Ceiling, Roof

GIB = 2**30


def _profile(path, levels: dict[str, float], fp64: float, memory_bytes=16 * GIB) -> str:
    """A probed CPU profile with the given measured bandwidths (B/s) and fp64 peak."""
    measured = Roof("AMD EPYC 9654 measured (2 threads)", kind="measured",
                    compute=(Ceiling(fp64, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=tuple(Ceiling(v, level=lv, provenance="measured")
                                 for lv, v in levels.items()))
    host = {"name": "node"} | ({"memory_bytes": memory_bytes} if memory_bytes else {})
    path.write_text(json.dumps(profile_to_dict(MachineProfile(
        host=host, measured=measured, extras={"mode": "quick", "threads": 2},
        created="2026-11-30T09:12:00+00:00"))))
    return path.name


# the review's me.json: L1 591, L2 232, L3 192, DRAM 19.2 GB/s
REVIEW = {"L1": 591e9, "L2": 232e9, "L3": 192e9, "DRAM": 19.2e9}


def _rows(out: str) -> dict[str, list[str]]:
    """The table's body rows by their first cell, cells stripped."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture(autouse=True)
def _wide(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "220")
    monkeypatch.chdir(tmp_path)   # short file names: the title names them
    monkeypatch.delenv("ROOFLAB_ON", raising=False)


def test_two_profiles_one_row_per_level_with_ratio(tmp_path, capsys):
    a = _profile(tmp_path / "a.json", REVIEW, 2.0e12)
    b = _profile(tmp_path / "b.json", {"L1": 600e9, "L2": 240e9, "L3": 160e9,
                                       "DRAM": 20e9}, 2.5e12)
    assert main(["specs", "compare", a, b]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "ratio = a.json (measured) / b.json (measured)" in out
    # first / second: 591/600 = 0.985, 232/240 = 0.967, 192/160 = 1.2, 19.2/20 = 0.96
    assert rows["L1"] == ["591 GB/s", "600 GB/s", "0.985"]
    assert rows["L2"] == ["232 GB/s", "240 GB/s", "0.967"]
    assert rows["L3"] == ["192 GB/s", "160 GB/s", "1.2"]
    assert rows["DRAM"] == ["19.2 GB/s", "20 GB/s", "0.96"]
    # 16 GiB each = 17.2 GB; fp64 2/2.5 = 0.8 (ridges 2e12/19.2e9 = 104, 2.5e12/20e9 = 125)
    assert rows["memory"] == ["17.2 GB", "17.2 GB", "1"]
    assert rows["fp64 vector"] == ["2 TFLOP/s (ridge 104)", "2.5 TFLOP/s (ridge 125)", "0.8"]
    # the levels in the memory hierarchy's order, before the datasheet rows
    names = list(rows)
    assert names.index("L1") < names.index("L2") < names.index("L3") < names.index("DRAM")


def test_profile_beside_its_datasheet(tmp_path, capsys):
    # a healthy node: 400 GB/s of the 9654's 460.8 GB/s (12 x DDR5-4800 x 8 B) = 0.868;
    # fp64 4.75 of 5.4528 TFLOP/s (96 cores x 3.55 GHz all-core boost x 16 FLOP/cycle) = 0.871
    me = _profile(tmp_path / "me.json", REVIEW | {"DRAM": 400e9}, 4.75e12)
    assert main(["specs", "compare", me, "EPYC 9654"]) == 0
    rows = _rows(capsys.readouterr().out)
    # measured / nominal as a percentage, seed 004's 实测 ÷ 标称 (review 18a L6)
    assert rows["DRAM"] == ["400 GB/s", "461 GB/s", "87 %"]
    assert rows["fp64 vector"][2] == "87 %"
    assert rows["L1"] == ["591 GB/s", "-", "-"]     # the datasheet has no L1 bandwidth
    assert rows["memory"] == ["17.2 GB", "6 TB", ""]  # host.memory_bytes, was '-';
    # no ratio against the most RAM the 9654's sockets take
    assert rows["fp32 vector"][0] == "-" and rows["fp32 vector"][2] == "-"
    assert rows["TDP"] == ["-", "360 W", ""]        # datasheet rows: no ratio


def test_catalog_pairs_keep_their_table(capsys):
    # no file: no ratio column and no cache-level rows the catalog has no figure for
    assert main(["specs", "compare", "t4", "h200"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "ratio" not in out and "L1" not in rows
    assert rows["DRAM"] == ["320 GB/s", "4.8 TB/s"]


def test_compare_rows_without_ratio_and_without_memory(tmp_path):
    from rooflab.hardware.resolve import load_roofs

    path = _profile(tmp_path / "m.json", {"L2": 232e9, "DRAM": 19.2e9}, 1e12,
                    memory_bytes=None)
    rows = {r[0]: r[1:] for r in compare_rows([FileRoof(path, load_roofs(path)[0])])}
    assert rows["L2"] == ["232 GB/s"] and rows["memory"] == ["-"]
    assert "L1" not in rows and "L3" not in rows
