"""`rooflab llm --compare` without `--on` (its first device is the roof of the tables), and
each device tabled once (`--on T4 --compare T4,A100` printed the T4 row twice)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def _json(capsys, *args):
    assert main(["llm", "tinyllama-1.1b", "--phase", "decode", "--context", "500", *args,
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def _labels(llm):
    return [row["label"] for row in llm.get("hardware", [])]


def test_compare_without_on_uses_its_first_device(capsys):
    llm = _json(capsys, "--compare", "T4,A100,H100")
    assert _labels(llm) == ["NVIDIA T4", "NVIDIA A100 80GB SXM", "NVIDIA H100 SXM"]
    # the same floors as --on T4 --compare A100,H100
    ref = _json(capsys, "--on", "T4", "--compare", "A100,H100")
    assert [r["tpot_s"] for r in llm["hardware"]] == [r["tpot_s"] for r in ref["hardware"]]
    assert llm["totals"] == ref["totals"]
    assert any(n.startswith("no --on: the tables") and "T4" in n for n in llm["notes"])
    assert not any(n.startswith("no --on") for n in ref.get("notes", []))
    # the memory of each device is still known (T4 16 GB: the --on path's catalog entry)
    assert [r["memory_bytes"] for r in llm["hardware"]][0] == 16e9


def test_the_on_device_named_again_is_tabled_once(capsys):
    llm = _json(capsys, "--on", "T4", "--compare", "T4,A100")
    assert _labels(llm) == ["NVIDIA T4", "NVIDIA A100 80GB SXM"]
    assert any("T4 (NVIDIA T4) already tabled" in n for n in llm["notes"])


def test_one_catalog_entry_under_two_names_is_tabled_once(capsys):
    llm = _json(capsys, "--compare", "T4,A100,nvidia-t4,a100")
    assert _labels(llm) == ["NVIDIA T4", "NVIDIA A100 80GB SXM"]
    note = next(n for n in llm["notes"] if n.startswith("--compare:"))
    assert "nvidia-t4 (NVIDIA T4)" in note and "a100 (NVIDIA A100 80GB SXM)" in note
    # the first name is --on here, not a duplicate of itself
    assert "T4 (NVIDIA T4)," not in note


def test_a_measured_profile_is_not_the_catalog_entry(capsys, tmp_path):
    path = tmp_path / "t4_measured.json"
    path.write_text(json.dumps({"schema_version": 1, "roof": {
        "name": "NVIDIA T4", "kind": "measured",
        "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 50e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 270e9}]}}))
    llm = _json(capsys, "--on", str(path), "--compare", "T4")
    assert len(llm["hardware"]) == 2
    assert llm["hardware"][0]["tpot_s"] > llm["hardware"][1]["tpot_s"]   # 270 < 320 GB/s


def test_text_without_on(capsys):
    assert main(["llm", "tinyllama-1.1b", "--phase", "decode", "--compare",
                 "T4,A100,H100"]) == 0
    out = capsys.readouterr().out
    assert "hardware swap" in out
    assert out.count("│ NVIDIA T4 ") == 1
    assert "note: no --on: the tables, floors and memory line are on T4" in out


@pytest.mark.parametrize("args", [[], ["--compare", ","]])
def test_neither_on_nor_compare_is_refused(capsys, args):
    assert main(["llm", "tinyllama-1.1b", *args]) == 2
    err = capsys.readouterr().err
    assert "--on is required" in err or "--compare takes device names" in err
