"""`rooflab specs list|show|compare` through cli.main.main, output captured."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.roof_schema import roof_from_dict


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_show_h200_json_has_a_dram_ceiling_of_4_8_tb_s(capsys):
    data = run_json(capsys, "specs", "show", "H200", "--json")
    assert data["schema_version"] == 2
    assert data["device"]["name"] == "NVIDIA H200 SXM"
    dram = [m for m in data["roof"]["memory"] if m["level"] == "DRAM"]
    assert dram[0]["bytes_per_s"] == 4.8e12
    roof = roof_from_dict(data["roof"])  # the JSON vocabulary reads back
    assert roof.find_compute("bf16", "tensor").value == pytest.approx(989.5e12)
    assert data["roof"]["overhead_s"] == 5e-6


def test_list_json_has_thirty_devices_with_roofs(capsys):
    data = run_json(capsys, "specs", "list", "--json")
    assert len(data["devices"]) >= 30
    for dev in data["devices"]:
        assert dev["source"].startswith("https://")
        assert roof_from_dict(dev["roof"]).compute


def test_list_filters_by_kind(capsys):
    data = run_json(capsys, "specs", "list", "--kind", "cpu", "--json")
    assert data["devices"] and {d["kind"] for d in data["devices"]} == {"cpu"}


def test_list_table_prints_ridges(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["specs", "list", "--kind", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA T4" in out and "320 GB/s" in out and "65 TFLOP/s fp16 tensor" in out


def test_show_table_has_every_ceiling_and_the_source(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["specs", "show", "t4"]) == 0
    out = capsys.readouterr().out
    assert "203" in out                       # fp16 tensor ridge 65e12 / 320e9
    assert "t4-tensor-core-datasheet" in out
    assert "sparse" not in out                # the T4 datasheet has no sparse figures


def test_compare_json_has_ridges_per_precision(capsys):
    data = run_json(capsys, "specs", "compare", "t4", "a100", "--json")
    names = [d["name"] for d in data["devices"]]
    assert names == ["NVIDIA T4", "NVIDIA A100 80GB SXM"]
    a100 = {(r["precision"], r["unit"]): r["ridge"] for r in data["devices"][1]["ridges"]}
    assert a100[("fp16", "tensor")] == pytest.approx(153.0, abs=0.1)


def test_compare_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["specs", "compare", "t4", "h200"]) == 0
    out = capsys.readouterr().out
    assert "ridge 203" in out and "ridge 206" in out


@pytest.mark.parametrize("argv", [["specs", "show", "H300"],
                                  ["specs", "compare", "t4", "nope-9000"],
                                  ["specs", "list", "--kind", "fpga"]])
def test_user_mistakes_are_one_line_errors_with_exit_2(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1
    assert captured.out == ""


def test_unknown_name_suggests_close_ones(capsys):
    main(["specs", "show", "H300"])
    err = capsys.readouterr().err
    # H200 and H800 are each one letter away from H300: both lead the suggestions
    suggested = err.split("did you mean: ")[1].split(", ")
    assert set(suggested[:2]) == {"NVIDIA H200 SXM", "NVIDIA H800 SXM"}
