"""`rooflab scale -o FILE` like every other verb (review s20 r5 F8: `error: No such option:
-o`): .json is the --json document, .csv one row per device count; written whole, after
the path was checked before any work; missing folders are made (review F10, README)."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main

# h = 4096, 32 blocks: 12 h^2 x 32 = 6.44 G parameters; 6 x P x 4096 tokens on the H100
# SXM's bf16 tensor peak of 989.5 TFLOP/s = 160.0 ms; the ring all-reduce of 2 B/param
# (12.9 GB) on 2 GPUs over NVLink's 450 GB/s: 2(n-1)/n x 12.9 GB / 450 GB/s = 28.6 ms
ARGS = ["scale", "--on", "H100 SXM", "--hidden", "4096", "--blocks", "32", "--tokens", "4096"]
PARAMS = 12 * 4096**2 * 32
COMPUTE_S = 6 * PARAMS * 4096 / 989.5e12
COMM_2_S = 2 * (2 - 1) / 2 * PARAMS * 2 / 450e9
COUNTS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def test_o_json_is_the_json_document(tmp_path, capsys):
    assert main([*ARGS, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    out = tmp_path / "s.json"
    assert main([*ARGS, "-o", str(out)]) == 0
    cap = capsys.readouterr()
    said = cap.out
    assert cap.err.rstrip().endswith(f"wrote {out}")       # stderr, as every verb (s22 r3 F7)
    assert "data-parallel step on NVIDIA H100 SXM" in said
    written = json.loads(out.read_text())
    for doc in (printed, written):
        doc.pop("generator")                                # names its own command line
    assert written == printed
    assert [p["gpus"] for p in written["points"]] == COUNTS
    assert written["points"][0]["compute_s"] == pytest.approx(COMPUTE_S, rel=1e-9)
    assert written["points"][1]["comm_s"] == pytest.approx(COMM_2_S, rel=1e-9)


def test_o_csv_has_one_row_per_device_count(tmp_path, capsys):
    out = tmp_path / "new" / "folder" / "s.csv"       # missing folders are made
    assert main([*ARGS, "--json", "-o", str(out)]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)                             # stdout stays the document
    assert f"wrote {out}" in cap.err
    rows = list(csv.DictReader(out.open()))
    assert [int(r["gpus"]) for r in rows] == COUNTS
    assert {r["device"] for r in rows} == {"NVIDIA H100 SXM"}
    assert {r["overlap"] for r in rows} == {"True"}
    assert float(rows[0]["compute_s"]) == pytest.approx(COMPUTE_S, rel=1e-9)
    assert float(rows[1]["comm_s"]) == pytest.approx(COMM_2_S, rel=1e-9)   # 28.6 ms
    assert rows[1]["link"] == "NVLink" and float(rows[1]["link_bytes_per_s"]) == 450e9
    assert rows[0]["link"] == ""                          # one GPU: no all-reduce
    for row, point in zip(rows, doc["points"], strict=True):
        assert float(row["step_s"]) == point["step_s"]
        assert float(row["efficiency"]) == point["efficiency"]


def test_bad_o_is_refused_before_any_work(tmp_path, capsys):
    assert main([*ARGS, "-o", str(tmp_path / "s.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: -o {tmp_path / 's.txt'}: unknown suffix '.txt'; use "
                          f".json, .csv")
    assert list(tmp_path.iterdir()) == []
    assert main([*ARGS, "-o", str(tmp_path)]) == 2          # a folder
    assert "is a directory" in capsys.readouterr().err
    link = tmp_path / "cluster.json"                       # an input named as the output
    link.write_text("{}")
    assert main([*ARGS, "--link-from", str(link), "-o", str(link)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert link.read_text() == "{}"
