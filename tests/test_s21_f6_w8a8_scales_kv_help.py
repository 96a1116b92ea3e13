"""Review s21 r6 F5: --weights int8 --act int8 by hand (W8A8, an int8 GEMM such as vLLM's
cutlass_scaled_mm) scales the weights per output channel, as a compressed-tensors W8A8
config does, not in groups of 128 (1.0156 B per weight, +1.5 % TPOT); --group still asks
for groups. F6: the --kv help said the default is the --act dtype, but --act fp8 keeps
the model's bf16 cache (vLLM's kv_cache_dtype auto)."""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main

# llama-2-7b: 32 layers of 4 x 4096^2 (attention) + 3 x 4096 x 11008 (MLP), lm_head 32000 x 4096
MATRICES = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 32000 * 4096
NORMS = (32 * 2 + 1) * 4096 * 2          # fp16 gammas
EMBEDDING_ROW = 4096                     # one int8 row per decoded token


def _decode(capsys, *extra: str) -> dict:
    assert main(["llm", "llama-2-7b", "--on", "A100 80GB SXM", "--weights", "int8",
                 "--act", "int8", "--phase", "decode", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_w8a8_by_hand_is_per_channel(capsys):
    d = _decode(capsys)
    assert d["settings"]["weight_bytes_per_param"] == pytest.approx(1 + 2 / 4096)
    weights = d["decode"]["bytes_split"]["weights"]
    assert weights == pytest.approx(MATRICES * (1 + 2 / 4096) + NORMS + EMBEDDING_ROW,
                                    rel=1e-9)


def test_w8a8_group_is_still_groups(capsys):
    d = _decode(capsys, "--group", "128")
    assert d["settings"]["weight_bytes_per_param"] == pytest.approx(1 + 2 / 128)


def test_w8a8_setup_line_says_per_channel(capsys):
    assert main(["llm", "llama-2-7b", "--on", "A100 80GB SXM", "--weights", "int8",
                 "--act", "int8", "--phase", "decode"]) == 0
    assert "weights int8 (per channel, fp16 scales)" in capsys.readouterr().out


def test_weight_only_int8_keeps_group_128(capsys):
    assert main(["llm", "llama-2-7b", "--on", "A100 80GB SXM", "--weights", "int8",
                 "--phase", "decode", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["llm"]["settings"]
    assert s["weight_bytes_per_param"] == pytest.approx(1 + 2 / 128)


def test_kv_help_states_the_8bit_activation_rule(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    try:
        main(["llm", "--help"])
    except SystemExit:
        pass
    text = re.sub(r"[\s│]+", " ", capsys.readouterr().out)
    assert "default: the --act dtype;" not in text     # the old text, wrong under fp8
    assert ("(default: the --act dtype when it is 16-bit; under 8-bit activations, --act "
            "fp8/int8 or the config's, the model's torch_dtype, as vLLM's kv_cache_dtype "
            "auto)") in text
