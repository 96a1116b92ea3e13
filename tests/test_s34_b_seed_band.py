"""s34 B: a measured --tpot-ms is placed against seed 004's decode band, "decode 那行的预期
在 40% 到 70% 之间" (40-70 % of the measured memory roof), said as a rule of thumb.

On a nominal roof the band is scaled by the seed's measured bandwidth, 75-90 % of nominal:
40 x 0.75 = 30 %, 70 x 0.9 = 63 %. Seed 004's own step (TinyLlama, T4, context 500):
  --tpot-ms 15 on the nominal T4: 2.084 GB / 15 ms / 320 GB/s = 43 %: inside 30-63 %
  --tpot-ms 15 on t4p.json's measured 270 GB/s: 51 %: inside 40-70 %
  --tpot-ms 45 there: 2.084 GB / 45 ms / 270 GB/s = 17 %: below
  llama-2-70b --tp 4 --tpot-ms 12 on H100: 87 % of one device's roof: above 30-63 %
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

REPO = Path(__file__).resolve().parents[1]
SEEDS = Path("/work/shared/seeds")
T4 = ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode"]
HEAD = ("seed 004's rule of thumb, not a measurement: decode reaches about 40-70 % of a "
        "measured memory roof")


def test_the_band_is_the_seeds_sentence():
    seed = sorted(SEEDS.glob("004_*.txt")) if SEEDS.is_dir() else []
    if not seed:
        pytest.skip(f"the seeds are not at {SEEDS}")
    text = seed[0].read_text(encoding="utf-8")
    assert "decode 那行的预期在 40% 到 70% 之间" in text
    assert "实测带宽通常是标称的 75% 到 90%" in text
    from rooflab.cli.llm_band import SEED_BANDWIDTH_SHARE, SEED_DECODE_BAND, decode_band

    assert SEED_DECODE_BAND == (40.0, 70.0) and SEED_BANDWIDTH_SHARE == (0.75, 0.90)
    assert decode_band(nominal=True) == pytest.approx((30.0, 63.0))


def test_inside_on_the_nominal_t4(capsys):
    assert main([*T4, "--tpot-ms", "15"]) == 0
    out = capsys.readouterr().out
    assert (f"{HEAD} (30-63 % of a nominal one like this, bandwidth measuring 75-90 % of "
            f"nominal); 43 % is inside: typical\n") in out
    # one device: the measured line itself is as before
    assert ("measured TPOT 15 ms: 144 GFLOP/s at AI 1.04 = 43 % of the roof, 2.30x the "
            "floor; MBU 43 %") in out


def test_inside_and_below_on_the_seeds_measured_roof(capsys, monkeypatch):
    monkeypatch.chdir(REPO / "examples" / "seeds")
    on = [*T4[:3], "t4p.json", *T4[4:]]
    assert main([*on, "--tpot-ms", "15"]) == 0
    assert f"{HEAD}; 51 % is inside: typical\n" in capsys.readouterr().out
    assert main([*on, "--tpot-ms", "45"]) == 0
    assert (f"{HEAD}; 17 % is below it: usually the GPU waiting on the CPU (launches, "
            f"Python between kernels) or kernels short of the bandwidth (the gap line)"
            in capsys.readouterr().out)
    assert main([*on, "--tpot-ms", "45", "--json"]) == 0
    band = json.loads(capsys.readouterr().out)["llm"]["measured"]["seed_band"]
    assert (band["low_percent"], band["high_percent"], band["where"]) == (40.0, 70.0, "below")
    assert band["percent_of_roof"] == pytest.approx(2.084e9 / 0.045 / 270e9 * 100, rel=2e-3)
    assert band["kind"] == "rule of thumb" and band["roof_kind"] == "measured"


def test_above_under_tp_and_nothing_without_a_tpot(capsys):
    tp = ["llm", "llama-2-70b", "--on", "H100 SXM", "--tp", "4", "--batch", "8"]
    assert main([*tp, "--tpot-ms", "12"]) == 0
    assert "; 87 % is above: good\n" in capsys.readouterr().out
    assert main(T4) == 0
    assert "rule of thumb" not in capsys.readouterr().out
    assert main([*T4, "--ttft-ms", "40"]) == 0     # a prefill is not the seed's decode row
    assert "rule of thumb" not in capsys.readouterr().out


def test_a_compute_bound_decode_is_not_compared(capsys):
    # batch 1024 at context 16: AI 341 > the T4's ridge 203, compute-bound
    args = ["llm", "tinyllama-1.1b", "--on", "T4", "--batch", "1024", "--context", "16",
            "--prompt", "8", "--phase", "decode", "--tpot-ms", "100"]
    assert main(args) == 0
    assert f"{HEAD}; this step is compute-bound, so it is not compared" in (
        capsys.readouterr().out)
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["llm"]["measured"]["seed_band"]["where"] is None
