"""Review s33 E: seed 004's per-kernel decode table and its self-test Q2 / Q6 are reproduced
by commands that docs/seeds.md now shows (it showed none for them), with the seed's numbers.

Seed 004 (TinyLlama, d = 2048, 4 KV heads x 64 = 256, FFN 5632, vocab 32000; fp16; batch 1,
context 500; bytes / 270 GB/s):
  q_proj 2048 x 2048 x 2 B = 8.39 MB -> 31.1 us;  k_proj 2048 x 256 x 2 B = 1.05 MB -> 3.88 us
  gate_proj 2048 x 5632 x 2 B = 23.1 MB -> 85.4 us;  lm_head 2048 x 32000 x 2 B = 131 MB
  -> 485 us; attention K and V: 2 x 4 x 64 x 500 x 2 B = 512 kB (1.9 us), FLOP 2 x 2 x 32
  x 500 x 64 = 4.1 M (the seed counts one of Q.K^T and P.V: "≈ 2 M").
Q2: 256³ fp16 matmul: 2 x 256³ = 33.6 MFLOP over 3 x 256² x 2 B = 393 kB, AI 256 / 3 = 85.3.
Q6: int4 weights: 0.5 B + an fp16 scale per 128 = 0.515625 B a weight, 0.258 of fp16's 2 B:
  2.07 GB of weights read -> 534 MB; AI 2.16 GFLOP / (534 + 11.3 + 3.66 MB) = 3.94.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rooflab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"
PAGE = " ".join((ROOT / "docs" / "seeds.md").read_text(encoding="utf-8").split())

DECODE_500 = "rooflab llm tinyllama-1.1b --on t4p.json --context 500 --prompt 436 --phase decode"
Q2 = "rooflab ai matmul 256 256 256 --dtype fp16 --on T4"
Q6 = ("rooflab llm tinyllama-1.1b --on T4 --context 500 --prompt 436 --phase decode "
      "--weights int4")


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_page_shows_the_per_kernel_decode_table_with_the_seeds_numbers(
        tmp_path, monkeypatch, capsys):
    assert f"$ {DECODE_500}" in PAGE
    assert "每层各 kernel 的账" in PAGE and "`floor/call`" in PAGE
    if not SEEDS.is_dir():
        pytest.skip("examples/seeds/ is not here (a wheel)")
    shutil.copy(SEEDS / "t4p.json", tmp_path / "t4p.json")
    monkeypatch.chdir(tmp_path)
    d = _json(capsys, DECODE_500.split()[1:])
    rows = {a["kernel"]: a for a in d["analysis"]}
    bw = 270e9

    def per_call(name):
        a = rows[name]
        return a["bytes"] / a["calls"], a["flop"] / a["calls"]

    for name, weights in (("q_proj", 2048 * 2048 * 2), ("k_proj", 2048 * 256 * 2),
                          ("gate_proj", 2048 * 5632 * 2), ("lm_head", 2048 * 32000 * 2)):
        b, f = per_call(name)
        assert f == weights                               # 2 FLOP and 2 B per weight
        assert b == pytest.approx(weights, rel=0.01)      # + the activation vectors
    assert per_call("q_proj")[0] / bw == pytest.approx(31.1e-6, rel=0.01)
    assert per_call("gate_proj")[0] / bw == pytest.approx(85.4e-6, rel=0.01)
    assert per_call("lm_head")[0] / bw == pytest.approx(485e-6, rel=0.01)
    b, f = per_call("attention")
    assert f == pytest.approx(2 * 2 * 32 * 500 * 64, rel=0.01)
    kv = 2 * 4 * 64 * 500 * 2
    assert kv <= b < kv * 1.02 and kv / bw == pytest.approx(1.9e-6, rel=0.01)


def test_the_page_points_to_the_self_test_and_its_commands_print_it(capsys):
    assert "**The self-test (自测).**" in PAGE
    assert f"`{Q2}`" in PAGE and f"`{Q6}`" in PAGE
    assert "33.6 MFLOP, 393 kB and AI 85.3" in PAGE
    assert "decode AI 3.94 instead of 1.04 and TPOT floor 1.71 ms instead of 6.51 ms" in PAGE
    m = _json(capsys, Q2.split()[1:])
    k = m["kernels"][0]
    assert sum(k["flop"].values()) == 2 * 256 ** 3
    assert sum(k["bytes"].values()) == 3 * 256 ** 2 * 2
    fp16 = _json(capsys, Q6.split()[1:-2])["llm"]["decode"]
    int4 = _json(capsys, Q6.split()[1:])["llm"]["decode"]
    assert fp16["ai"] == pytest.approx(1.04, abs=0.005)
    assert int4["ai"] == pytest.approx(3.94, abs=0.005)
    w16, w4 = fp16["bytes_split"]["weights"], int4["bytes_split"]["weights"]
    assert w4 / w16 == pytest.approx(0.515625 / 2, rel=0.002)
    assert fp16["floor_s"] == pytest.approx(6.51e-3, rel=0.002)
    assert int4["floor_s"] == pytest.approx(1.71e-3, rel=0.003)
