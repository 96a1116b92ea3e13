"""`rooflab scale -o s.csv` rows carry the model they are of (review s20 x2 F13): --hidden,
--blocks, --tokens, --dtype and the gradients' type, beside the device and the overlap,
so two models' runs on one device are told apart in one spreadsheet; --json has them under
`model`. h = 4096, 32 blocks: 12 h^2 x 32 = 6.44 G parameters, 6 x P x 4096 tokens on the
H100 SXM's bf16 tensor peak of 989.5 TFLOP/s = 160.0 ms a step on one GPU."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main

ON = ["scale", "--on", "H100 SXM", "--tokens", "4096"]


def _rows(tmp_path, name: str, *args: str) -> list[dict]:
    out = tmp_path / name
    assert main([*ON, *args, "-o", str(out)]) == 0
    return list(csv.DictReader(out.open()))


def test_csv_rows_name_their_model(tmp_path, capsys):
    small = _rows(tmp_path, "a.csv", "--hidden", "4096", "--blocks", "32")
    big = _rows(tmp_path, "b.csv", "--hidden", "8192", "--blocks", "80", "--grad-dtype",
                "fp32")
    capsys.readouterr()
    assert len(small) == len(big) == 11                       # 1 to 1024 GPUs
    assert {(r["hidden"], r["blocks"], r["tokens"], r["dtype"], r["grad_dtype"])
            for r in small} == {("4096", "32", "4096", "bf16", "bf16")}
    assert {(r["hidden"], r["blocks"], r["dtype"], r["grad_dtype"]) for r in big} == {
        ("8192", "80", "bf16", "fp32")}
    # the same device and overlap: before, only the numbers told the two runs apart
    assert {r["device"] for r in small + big} == {"NVIDIA H100 SXM"}
    assert float(small[0]["compute_s"]) == pytest.approx(6 * 12 * 4096**2 * 32 * 4096
                                                         / 989.5e12, rel=1e-9)
    assert float(big[0]["compute_s"]) == pytest.approx(6 * 12 * 8192**2 * 80 * 4096
                                                       / 989.5e12, rel=1e-9)


def test_json_has_the_model(capsys):
    assert main([*ON, "--hidden", "4096", "--blocks", "32", "--dtype", "fp16",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"] == {"hidden": 4096, "blocks": 32, "tokens": 4096, "dtype": "fp16",
                            "grad_dtype": "fp16"}
