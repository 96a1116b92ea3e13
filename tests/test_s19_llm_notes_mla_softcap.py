"""Notes that say what is counted (review s19 r6 F5, F4): MLA decode is the absorbed form;
Gemma-2's attention logit soft-capping is left out, and under --attn naive what it would
add (three read+write passes of the score matrix, 3 x the softmax rows' bytes)."""

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.analysis import Request, analyze_llm
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.config_parse import parse_config
from rooflab.workloads.llm.settings import settings_for


def _json_notes(capsys, *args):
    assert main(["llm", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]["notes"]


def test_mla_note_in_text_and_json(capsys):
    notes = _json_notes(capsys, "deepseek-v2-lite", "--on", "H100", "--phase", "decode")
    mla = [n for n in notes if n.startswith("MLA:")]
    assert len(mla) == 1
    # 512 + 64 latent; kv_b decompresses 512 -> 16 heads x (128 nope + 128 v) = 4096
    assert "absorbed form" in mla[0] and "576-wide cached latent" in mla[0]
    assert "2 x 512 x 4096 FLOP per cached token and layer" in mla[0]
    assert main(["llm", "deepseek-v2-lite", "--on", "H100", "--phase", "decode"]) == 0
    assert "note: MLA: decode is counted in the absorbed form" in capsys.readouterr().out
    assert not any(n.startswith("MLA:") for n in load_config("llama-2-7b").notes)


def test_softcap_note_under_naive_only():
    cfg = load_config("gemma-2-9b")
    assert cfg.attn_softcap == 50.0
    roof = load_roof("H100")
    req = Request(prompt=4096, generate=1)
    r = analyze_llm(cfg, roof, settings_for(cfg, attn="naive"), req)
    note = [n for n in r.notes if "soft-capping" in n]
    assert len(note) == 1
    # 42 layers x 3 passes x (16 heads x 4096^2 scores x 2 B, read + written) = 135 GB;
    # 135.3 GB / 3.35 TB/s = 40.4 ms
    assert 42 * 3 * 2 * 16 * 4096 ** 2 * 2 == 135_291_469_824
    assert "135 GB per prefill (40.4 ms at DRAM bandwidth)" in note[0]
    flash = analyze_llm(cfg, roof, settings_for(cfg), req)
    assert not any("soft-capping" in n for n in flash.notes)


def test_softcap_field_checked():
    base = dict({"model_type": "gemma2", "hidden_size": 256,
                                  "num_hidden_layers": 2, "num_attention_heads": 4,
                                  "vocab_size": 1000, "intermediate_size": 512})
    assert parse_config({**base, "attn_logit_softcapping": 30}, "x", "x.json").attn_softcap == 30.0
    with pytest.raises(InputError, match="attn_logit_softcapping"):
        parse_config({**base, "attn_logit_softcapping": "50"}, "x", "x.json")
