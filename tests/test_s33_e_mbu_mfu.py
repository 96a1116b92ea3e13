"""Review s33 E: `rooflab llm --tpot-ms` names MBU and MFU (it gave only "% of the roof").

Seed 004's decode step (TinyLlama, T4, batch 1, context 500, TPOT 15 ms), counted bytes
2.07 GB weights + 11.3 MB KV + 3.66 MB activations = 2.084 GB, FLOP 2.16 G:
  MBU = 2.084e9 / 0.015 / 320e9 = 0.434 (the nominal roof), / 270e9 = 0.515 (the measured
  one; the seed's 54 % is its rounded 2.2 GB: 2.2e9 / 0.015 / 270e9 = 0.543)
  MFU = 2.16e9 / 0.015 / 65e12 = 0.0022 (fp16 tensor 65 TFLOP/s), / 50e12 = 0.0029
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

STEP = ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode",
        "--tpot-ms", "15"]


def test_the_json_carries_mbu_and_mfu(capsys):
    assert main([*STEP, "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    d, m = llm["decode"], llm["measured"]
    assert d["bytes"] == pytest.approx(2.084e9, rel=0.002)
    assert m["achieved_bytes_per_s"] == pytest.approx(d["bytes"] / 0.015)
    assert m["mbu"] == pytest.approx(d["bytes"] / 0.015 / 320e9)
    assert m["mbu"] == pytest.approx(0.434, abs=0.001)
    assert m["mfu"] == pytest.approx(d["flop"] / 0.015 / 65e12)
    assert m["mfu"] == pytest.approx(0.00222, abs=0.00001)
    # memory-bound: MBU is the percent of the roof
    assert 100 * m["mbu"] == pytest.approx(m["percent_of_roof"], rel=1e-6)


def test_the_measured_line_names_them_and_the_seeds_page_points_to_it(capsys):
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "seeds.md")
                    .read_text(encoding="utf-8").split())
    assert "The measured line ends with the step's MBU and MFU" in page
    assert "`llm.measured.mbu` and `mfu` carry them" in page
    assert main(STEP) == 0
    out = capsys.readouterr().out
    assert ("measured TPOT 15 ms: 144 GFLOP/s at AI 1.04 = 43 % of the roof, 2.30x the "
            "floor; MBU 43 % (139 GB/s of DRAM 320 GB/s), MFU 0.22 % (of fp16 tensor 65 "
            "TFLOP/s)") in out


def test_a_compute_heavy_batch_has_the_larger_mfu(capsys):
    # llama-2-7b on H100 SXM, batch 256, TPOT 40 ms: FLOP ~ 2 x 6.74 G x 256 = 3.45 T
    # (+ attention), 86.5 TFLOP/s = 8.7 % of 990; bytes 13.2 GB weights + 256 x 302 MB KV
    # = 93.6 GB / 40 ms = 2.34 TB/s = 70 % of 3.35 TB/s
    assert main(["llm", "llama-2-7b", "--on", "H100 SXM", "--batch", "256", "--phase",
                 "decode", "--tpot-ms", "40", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["llm"]["measured"]
    assert m["mfu"] == pytest.approx(0.087, abs=0.001)
    assert m["mbu"] == pytest.approx(0.70, abs=0.005)
