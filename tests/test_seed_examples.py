"""docs/seeds.md's commands, run on the inputs shipped in examples/seeds/, print the page's
numbers (review 12a #9: the page ran on files a user could not see)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def run(capsys, *args):
    code = main([str(SEEDS / a) if (SEEDS / a).is_file() else a for a in args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), err


def test_every_file_the_page_names_is_shipped():
    page = (Path(__file__).resolve().parents[1] / "docs" / "seeds.md").read_text()
    for name in ("seed000.csv", "seed000roof.json",
                 "seed000_ncu.csv", "seed000_ncu_timed.csv", "conv.json", "ew.json",
                 "pts.json", "t4p.json", "k.json"):
        assert name in page and (SEEDS / name).is_file(), name


def test_seed000_ncu_untimed_and_timed(capsys):
    code, out, _ = run(capsys, "ncu", "seed000_ncu.csv", "--on", "A100", "--json")
    assert code == 0
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # a 1024^3 fp32 GEMM: 2 x 1024^3 FLOP over 8,388,608 + 4,194,304 B = AI 170.7
    assert pts["sgemm"]["ai"] == pytest.approx(2 * 1024**3 / 12_582_912)
    assert pts["sgemm"]["seconds"] is None
    code, out, _ = run(capsys, "report", "seed000_ncu_timed.csv", "--on", "A100")
    assert code == 0
    # copyKernel: 800 MB / 450 us = 1.78 TB/s = 87 % of the A100's 2.039 TB/s (seed 000 §3.1)
    assert "moves 1.78 TB/s = 87% of DRAM bandwidth" in out


def test_seed000_table_on_its_roof(capsys):
    code, out, _ = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json", "--json")
    assert code == 0
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # 280 TFLOP/s / 1.8 TB/s: ridge 155.6; elementwise_add AI 0.25 -> 450 GFLOP/s, 120 = 27 %
    assert pts["elementwise_add"]["attainable_flop_per_s"] == pytest.approx(0.25 * 1.8e12)
    assert pts["elementwise_add"]["percent_of_roof"] == pytest.approx(120e9 / 450e9 * 100)
    assert pts["gemm_1024"]["ai"] == pytest.approx(175)
    assert pts["gemm_1024"]["percent_of_roof"] == pytest.approx(4200e9 / 280e12 * 100)
    # the seed's roof is fp16 Tensor Core (§3.3), its table fp32 (§2.2): the fallback is said
    code, out, err = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json")
    assert code == 0 and "has no fp32 ceiling; using fp16 tensor" in out + " ".join(err.split())


def test_seed000_whatif_precision_and_fusion(capsys):
    code, out, _ = run(capsys, "whatif", "conv.json", "--on", "A100", "--precision", "fp16")
    assert code == 0
    assert "│ conv │ 20 -> 40 │ 200 us │ 51.6 us │ 3.87x │ memory (was compute) │" in out
    code, out, _ = run(capsys, "whatif", "ew.json", "--on", "A100", "--fuse", "relu,add,mul")
    assert code == 0 and "total: 750 us -> 250 us (3.00x)" in out


def test_seed004_record_table_and_ridge_band(tmp_path, capsys):
    md = tmp_path / "r.md"
    code, _, _ = run(capsys, "report", "pts.json", "--on", "t4p.json", "-o", str(md))
    assert code == 0
    text = md.read_text()
    for row in ("| DRAM bandwidth | 320 GB/s | 270 GB/s | 84% |",
                "| fp16 tensor peak | 65 TFLOP/s | 50 TFLOP/s | 77% |",
                "| ridge fp16 / DRAM | 203 | 185 | 91% |",
                "| decode b=1: FLOP/s | 320 GFLOP/s | 147 GFLOP/s | 54 % of the measured roof |"):
        assert row in text, row
    code, out, _ = run(capsys, "report", "k.json", "--on", "t4p.json")
    assert code == 0
    assert ("read with care: gemm_ai190: AI 190 lies between the ridges of the two roofs (185 "
            "on this one, 203 nominal, fp16 tensor / DRAM)") in out
