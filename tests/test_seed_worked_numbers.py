"""Seed coverage audit: worked numbers of seeds 000 and 004 not pinned elsewhere, through
the commands a user runs, plus two cases where rooflab once did not follow a seed (they were
strict xfails until it did).

Hand calculations are in the comments: 2 FLOP per multiply-add, SI units.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.footprint import kv_bytes_per_sequence
from rooflab.workloads.llm.settings import Settings


def _roof_file(tmp_path, name, kind, flop_per_s, bytes_per_s):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({
        "name": name, "kind": kind,
        "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": flop_per_s,
                     "kind": kind}],
        "memory": [{"level": "DRAM", "bytes_per_s": bytes_per_s, "kind": kind}]}))
    return str(path)


def _ai_json(capsys, args):
    assert main(["ai", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- seed 000 §2.1 and §3.3: the ridge of a GPU given as two numbers -------------------

def test_seed000_ridges_of_a_roof_file(tmp_path, capsys):
    # §2.1: 300 TFLOP/s fp16 over 2 TB/s -> 300e12 / 2e12 = 150 FLOP/byte.
    r300 = _roof_file(tmp_path, "s000_21", "nominal", 300e12, 2e12)
    d = _ai_json(capsys, ["matmul", "4096", "4096", "4096", "--on", r300])
    assert d["ridge"] == 150
    # §3.3: measured 280 TFLOP/s over 1.8 TB/s -> 155.6 (the seed writes "≈ 155", its own
    # plotting script prints "AI=155.6"; the terminal shows 3 figures: 156).
    r280 = _roof_file(tmp_path, "s000_33", "measured", 280e12, 1.8e12)
    d = _ai_json(capsys, ["matmul", "4096", "4096", "4096", "--on", r280])
    assert d["ridge"] == pytest.approx(155.56, abs=0.01)
    # 4096³ fp16: AI 1365 >= 155.6, compute-bound ("低于 155 的 kernel 理论上都是带宽受限")
    assert d["bound"] == "compute"
    # 256³ fp16: AI 85.3 < 155.6, memory-bound on the same roof
    d = _ai_json(capsys, ["matmul", "256", "256", "256", "--on", r280])
    assert d["ai"] == pytest.approx(85.33, abs=0.01) and d["bound"] == "memory"
    # §2.1's slope example: 1000 GB/s at AI 2 = 2000 GFLOP/s. An fp16 elementwise op with
    # 8 FLOP per element, one array in and one out: 8 / (2 + 2) = AI 2.
    r1000 = _roof_file(tmp_path, "s000_21b", "nominal", 300e12, 1000e9)
    d = _ai_json(capsys, ["elementwise", "1e8", "--flop-per-element", "8", "--on", r1000])
    assert d["ai"] == 2 and d["attainable_flop_per_s"] == pytest.approx(2000e9)


# --- seed 000 §3.2: the A100 table it quotes -----------------------------------------------

def test_seed000_a100_table():
    # FP32 19.5 TFLOPS (CUDA core); FP16 78 (CUDA core) / 312 (Tensor Core); INT8 624 TOPS.
    a100 = lookup_roof("A100")
    assert a100.find_compute("fp32", "vector").value == 19.5e12
    assert a100.find_compute("fp16", "vector").value == 78e12
    assert a100.find_compute("fp16", "tensor").value == 312e12
    assert a100.find_compute("int8", "tensor").value == 624e12


# --- seed 000 §5.1: lower precision halves the bytes, int8 halves them again --------------

def test_seed000_lower_precision_halves_bytes_twice(tmp_path, capsys, monkeypatch):
    # An fp32 add: 1e8 FLOP over 8e8 B (read 4 B, write 4 B per element) = AI 0.125.
    # fp16: 4e8 B, AI 0.25; int8: 2e8 B, AI 0.5 ("FP16 比 FP32 少一半字节,INT8 再少一半").
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "ew.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "ew", "flop": {"fp32": 1e8}, "bytes": {"DRAM": 8e8}, "seconds": 500e-6,
         "meta": {"op": "add"}}]}))
    for precision, ai in (("fp16", "0.125 -> 0.25"), ("int8", "0.125 -> 0.5")):
        assert main(["whatif", str(path), "--on", "A100", "--precision", precision]) == 0
        row = next(line for line in capsys.readouterr().out.splitlines() if "│ ew" in line)
        assert ai in row and "memory" in row, precision


# --- seed 004: TinyLlama's KV cache per token ---------------------------------------------

def test_seed004_kv_cache_per_token():
    # "TinyLlama 每个 token 22.5 KB,上下文 500 个 token 时是 11 MB":
    # 22 layers x (K + V) x 4 KV heads x 64 x 2 B = 22 528 B = 22.5 kB per token.
    cfg = load_config("tinyllama-1.1b")
    assert kv_bytes_per_sequence(cfg, Settings(), 1) == 22 * 2 * 4 * 64 * 2 == 22528
    at_500 = kv_bytes_per_sequence(cfg, Settings(), 500)
    assert at_500 == 500 * 22528 == pytest.approx(11.3e6, rel=0.01)
    # "跟 2.2 GB 的权重比可以忽略": 0.5 % of the weights
    assert at_500 / 2.2e9 == pytest.approx(0.0051, abs=0.0001)


# --- seed 004: the measured TPOT on the measured roof -------------------------------------

def test_seed004_tpot_15ms_on_the_measured_roof(tmp_path, capsys):
    # The seed: 2.2e9 FLOP / 15 ms = 147 GFLOP/s at AI 1 under 270 GFLOP/s = 54 %.
    # rooflab's step counts 2.16 GFLOP over 2.084 GB (AI 1.04: the embedding is one row,
    # not 131 MB; KV 11.3 MB and activations are added): 2.16e9 / 0.015 = 144 GFLOP/s
    # under 1.04 x 270 = 281 GFLOP/s = 51 %; floor 2.084e9 / 270e9 = 7.72 ms, 15 / 7.72 =
    # 1.94x. (The seed's own point, 2.2e9 / 2.2e9 / 15 ms, gives 54 % through `report`:
    # tests/test_report.py.)
    nominal = Roof("T4", "nominal", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                   memory=(Ceiling(320e9, level="DRAM"),))
    measured = Roof("T4", "measured",
                    compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                     provenance="measured"),),
                    memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
    prof = tmp_path / "t4.json"
    prof.write_text(json.dumps(profile_to_dict(
        MachineProfile(host={"name": "T4"}, nominal=nominal, measured=measured))))
    assert main(["llm", "tinyllama-1.1b", "--on", str(prof), "--context", "500",
                 "--phase", "decode", "--tpot-ms", "15"]) == 0
    out = capsys.readouterr().out
    assert "TPOT floor 7.72 ms" in out
    assert "measured TPOT 15 ms: 144 GFLOP/s at AI 1.04 = 51 % of the roof, 1.94x the floor" \
        in out


# --- where rooflab once did not follow a seed (strict xfails until it did) -----------------

def test_seed000_mixed_units_weight_the_peak():
    # "如果 kernel 里混合了 Tensor Core 和普通 CUDA Core 操作,那要按实际占比加权":
    # 9 GFLOP fp16 on tensor cores + 1 GFLOP fp32 on CUDA cores, A100: the time-weighted
    # peak is 10e9 / (9e9 / 312e12 + 1e9 / 19.5e12) = 10e9 / 80.1e-6 s = 124.8 TFLOP/s.
    # (rooflab once used 312 TFLOP/s, fp16 carrying most of the FLOP: 2.5x too high.)
    k = Kernel("mixed", {"fp16": 9e9, "fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-3, unit="tensor")
    (p,) = analyze(lookup_roof("A100"), [k], levels=("DRAM",)).points
    assert p.peak_flop_per_s == pytest.approx(124.8e12, rel=0.01)


def test_seed000_elementwise_by_name_is_not_told_to_tile():
    # "有些 kernel 天生就是带宽受限的,比如逐元素操作,计算强度就是上不去": seed 000's own
    # table names its kernels elementwise_add, softmax, with no op column. With
    # meta {"op": "add"} rooflab drops the tiling advice; by name alone it predicts 4x.
    roof = Roof("seed 000 GPU", "measured",
                compute=(Ceiling(280e12, precision="fp16", unit="tensor"),),
                memory=(Ceiling(1800e9, level="DRAM"),))
    k = Kernel("elementwise_add", {"fp16": 2.1e6}, {"DRAM": 8.4e6}, seconds=2.1e6 / 120e9)
    (p,) = analyze(roof, [k]).points
    actions = [a.action for a in advise(p, roof, k)]
    assert not any("tile" in a for a in actions), actions
