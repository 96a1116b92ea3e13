"""Review s21 r6 F4 (part): weight-only int2/int3/int6 (GPTQ bits 2/3, EXL2, llama.cpp
Q2/Q3/Q6-style group quantization): bits / 8 B per weight + one fp16 scale per --group
weights (and a zero point of the weight's own width where the method stores one).

Hand numbers, llama-2-7b (hidden 4096, intermediate 11008, 32 layers, vocab 32000):
- matrices per layer 4 x 4096^2 + 3 x 4096 x 11008 = 202,375,168; x 32 = 6,476,005,376;
  + lm_head 4096 x 32000 = 131,072,000 -> 6,607,077,376 matrix weights.
- int3 group 128: 3/8 + 2/128 = 0.390625 B per weight -> 2,580,889,600 B.
- + norm weights at fp16: (2 x 32 + 1) x 4096 x 2 B = 532,480 B
- + the decode step's one embedding row, as the table is stored (s27: its group scales
  too): 4096 x 0.390625 B = 1,600 B
  = 2,581,423,680 B of weights per decode step (batch 1).
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rooflab.cli.main import main
from rooflab.units import stored_weight_bytes
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.settings import settings_for

MATRICES_7B = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 4096 * 32000   # 6,607,077,376
NORMS_7B = (2 * 32 + 1) * 4096 * 2                                          # 532,480 B


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_stored_widths_with_group_scales():
    assert stored_weight_bytes("int3", 128) == pytest.approx(0.375 + 2 / 128)   # 0.390625
    assert stored_weight_bytes("int2", 64) == pytest.approx(0.25 + 2 / 64)      # 0.28125
    assert stored_weight_bytes("int6", 32) == pytest.approx(0.75 + 2 / 32)      # 0.8125


def test_int3_g128_llama2_7b_decode_weight_bytes(capsys):
    code, out, err = _run(capsys, "llm", "llama-2-7b", "--on", "A100 80GB SXM",
                          "--weights", "int3", "--group", "128", "--phase", "decode",
                          "--prompt", "1024", "--context", "1024", "--json")
    assert code == 0, err
    d = json.loads(out)["llm"]
    assert d["settings"]["weights"] == "int3"
    assert d["settings"]["weight_bytes_per_param"] == pytest.approx(0.390625)
    hand = MATRICES_7B * 0.390625 + NORMS_7B + 4096 * 0.390625
    assert hand == 2_581_423_680
    assert d["decode"]["bytes_split"]["weights"] == pytest.approx(hand, rel=1e-12)


def test_int2_int6_setup_line_and_bytes(capsys):
    for w, per in (("int2", 0.25 + 2 / 64), ("int6", 0.75 + 2 / 64)):
        code, out, err = _run(capsys, "llm", "llama-2-7b", "--on", "A100 80GB SXM",
                              "--weights", w, "--group", "64", "--phase", "decode")
        assert code == 0, err
        assert (f"setup: weights {w} (group 64, fp16 scales; dequantized to fp16 for the "
                f"math)") in out
        assert f"lm_head and embedding at {w} too" in out
        # q_proj: 4096 x 4096 weights at `per` B (int2 4.72 MB, int6 13.1 MB)
        mb = 4096 * 4096 * per / 1e6
        assert f"{mb:.3g} MB" in out


def test_gptq_3bit_config_with_zero_points(tmp_path):
    """A GPTQ checkpoint of bits 3, sym false: int3 + an fp16 scale and a packed 3-bit zero
    point per 128: 0.375 + 2/128 + 0.375/128 = 0.3935546875 B (was: not read, fp16)."""
    root = resources.files("rooflab.workloads") / "configs"
    d = json.loads((root / "llama-2-7b.json").read_text())
    p = tmp_path / "gptq3.json"
    p.write_text(json.dumps({**d, "quantization_config": {
        "quant_method": "gptq", "bits": 3, "group_size": 128, "sym": False}}))
    s = settings_for(load_config(str(p)))
    assert s.weights == "int3" and s.zero_point
    assert s.weight_bytes == pytest.approx(0.375 + 2 / 128 + 0.375 / 128)
    assert "int3 (group 128, fp16 scales and zero points" in s.describe()


def test_unknown_width_lists_the_new_ones(capsys):
    code, _, err = _run(capsys, "llm", "llama-2-7b", "--on", "A100", "--weights", "int5")
    assert code == 2
    assert "int6, int4, int3, int2" in err and "Traceback" not in err


def test_help_names_the_widths(capsys):
    code, out, _ = _run(capsys, "llm", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "int6" in flat and "int3" in flat and "int2" in flat


def test_gptq_3bit_bf16_on_an_a100_says_marlin_needs_4_or_8_bits(tmp_path, capsys):
    """A bf16 GPTQ 3-bit checkpoint on an A100 (SM 8.0) runs vLLM's fp16-only GPTQ kernel:
    Marlin takes 4/8-bit weights only, so the note names the width, not the GPU."""
    root = resources.files("rooflab.workloads") / "configs"
    d = json.loads((root / "llama-3-8b.json").read_text())        # torch_dtype bfloat16
    p = tmp_path / "gptq3.json"
    p.write_text(json.dumps({**d, "quantization_config": {
        "quant_method": "gptq", "bits": 3, "group_size": 128, "sym": True}}))
    code, out, err = _run(capsys, "llm", str(p), "--on", "A100 80GB SXM", "--phase", "decode")
    assert code == 0, err
    flat = " ".join((out + err).split())
    assert "weights int3 (group 128, fp16 scales" in flat
    assert "need an NVIDIA GPU of SM 8.0 or later and 4- or 8-bit weights (these are int3)" in flat
