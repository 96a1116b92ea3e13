"""Words that stop misreadings (review s19 r6 F3, F7): `llm list` says what "active"
counts and gives MLA's cached latent instead of 16 KV heads; the what-if table's weights
column is the stored model, not the step's read."""

import json

from rooflab.cli.main import main


def _text(capsys, *args):
    assert main(["llm", *args]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_list_caption_and_mla_latent(capsys):
    out = _text(capsys, "list")
    # DeepSeek-V2-Lite: 2,661,150,208 active with the 209,715,200-parameter embedding
    # table; its card's 2.4 B leaves the table out (2,451,435,008)
    assert "the whole embedding table included" in out
    assert "DeepSeek-V2-Lite 2.4B, gpt-oss-20b 3.6B" in out
    row = out.split("deepseek-v2-lite")[1][:160]     # its table row
    assert "16/latent 576" in row                 # 512 kv_lora_rank + 64 rope, one per token
    assert main(["llm", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["configs"]}
    assert rows["deepseek-v2-lite"]["kv_latent"] == 576
    assert rows["deepseek-v2-lite"]["active_params"] == 2_661_150_208
    assert rows["mistral-7b"]["kv_latent"] is None


def test_whatif_column_says_stored(capsys):
    out = _text(capsys, "qwen3-30b-a3b", "--on", "H100", "--phase", "decode", "--whatif")
    assert "weights stored" in out
    # the stored model (61.1 GB at bf16), beside a step that reads 6.08 GB
    assert "as given │ 1.06 │ 1.84 ms │ 1.00x │ 61.1 GB" in out
