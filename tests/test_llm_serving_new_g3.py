"""gpt-oss / Llama 4 as a serving engineer reads them (session 16 review G3): the decode
table's attention rows sit together before o_proj, the kernel tables carry gpt-oss's
biases (so that the prefill's weight bytes equal the checkpoint's, less the embedding
table and the sinks), --json carries the text's notes, and the memory line does not
promise per-token KV growth the sliding windows cap. Numbers counted by hand."""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.settings import settings_for

DATA = Path(__file__).parent / "data" / "llm_configs"
OSS = str(DATA / "gpt-oss-120b.json")
MXFP4 = 4.25 / 8          # bytes a parameter: 4-bit values + one 8-bit scale per 32


def names(step):
    return [o.op.name for o in step.ops]


@pytest.mark.parametrize("attn", ["flash", "naive"])
def test_window_attention_rows_follow_the_full_ones_before_o_proj(attn):
    cfg = load_config(OSS)
    n = names(decode_step(cfg, settings_for(cfg, attn=attn), 1, 576))
    if attn == "flash":
        i = n.index("attention")
        assert n[i:i + 3] == ["attention", "attention (window 128)", "o_proj"]
    else:
        i = n.index("attn_scores")
        assert n[i:i + 7] == ["attn_scores", "softmax", "attn_values",
                              "attn_scores (window 128)", "softmax (window 128)",
                              "attn_values (window 128)", "o_proj"]


def test_gpt_oss_biases_are_in_the_kernel_bytes():
    cfg = load_config(OSS)
    s = settings_for(cfg)
    ops = {o.op.name: o for o in decode_step(cfg, s, 1, 576).ops}
    w = {k: o.op.bytes_split.get("weights", 0.0) for k, o in ops.items()}
    # top-4 experts: 2880 x 2880 mxfp4 + a 2880-wide fp16 bias each
    assert w["expert_down_proj"] == pytest.approx(4 * (2880 * 2880 * MXFP4 + 2880 * 2))
    assert w["expert_down_proj"] == 17_648_640
    assert w["o_proj"] == 4096 * 2880 * 2 + 2880 * 2 == 23_598_720      # bf16 + o bias
    assert w["router"] == 2880 * 128 * 2 + 128 * 2 == 737_536
    # an 8192-token prefill touches all 128 experts: its table reads every weight but the
    # embedding table (a 8192-row gather) and the 36 x 64 attention sinks (fp16)
    pre = prefill_step(cfg, s, 1, 8192)
    table = sum(o.split("weights") for o in pre.ops if o.op.name != "embedding")
    assert table == pytest.approx(weight_bytes(cfg, s) - 201088 * 2880 * 2 - 36 * 64 * 2,
                                  rel=1e-7)


def test_llm_json_carries_the_notes(capsys):
    assert main(["llm", OSS, "--on", "H100", "--phase", "decode", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["llm"]["notes"]
    assert any("attention sinks" in n for n in notes)
    assert main(["llm", str(DATA / "llama-4-scout-17b-16e.json"), "--on", "H100",
                 "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["llm"]["notes"]
    assert any("attention_chunk_size 8192" in n for n in notes)
    assert any("text_config" in n for n in notes)


def test_memory_line_says_the_windows_cap_the_kv(capsys):
    # context 639 (512 + 128 - 1): 18 full layers x 639 + 18 window layers x 128 tokens,
    # 2 x 8 KV heads x 64 x 2 B = 2048 B a token and layer -> 28,274,688 B a sequence;
    # 73,728 B a token (36 layers) x 639 would be 47.1 MB
    assert main(["llm", OSS, "--on", "H100", "--phase", "decode", "--batch", "4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (18 * 639 + 18 * 128) * 2048 == 28_274_688
    assert ("KV 113 MB (28.3 MB per sequence: 73.7 kB per token until the sliding windows "
            "fill, then only the full layers' cache grows)") in out


def test_decode_floor_at_batch_1_is_bytes_over_bandwidth():
    # H100 SXM 3.35 TB/s; bytes: attention weights 36 x (2 x 4096 + 2 x 512) x 2880 x 2 B
    # + biases, top-4 experts, router, lm_head, KV of 18 x 576 + 18 x 128 tokens read
    cfg = load_config(OSS)
    step = decode_step(cfg, settings_for(cfg), 1, 576)
    attn = 36 * ((2 * 4096 + 2 * 512) * 2880 * 2 + (4096 + 2 * 512 + 2880) * 2)
    experts = 36 * 4 * ((2 * 2880 * 2880 + 2880 * 2880) * MXFP4 + (3 * 2880) * 2)
    router = 36 * 737_536
    lm_head = 201088 * 2880 * 2
    norms = (72 + 1) * 2880 * 2
    weights = attn + experts + router + lm_head + norms + 2880 * 2     # + one embedding row
    assert sum(o.split("weights") for o in step.ops) == pytest.approx(weights, rel=1e-9)
    assert sum(o.kv_read for o in step.ops) == (18 * 576 + 18 * 128) * 2048


def test_model_line_gives_the_card_active_count(capsys):
    # 116.83 G total; a token: top-4 experts + attention + router + norms + lm_head
    # 5,711,982,912, less the 201,088 x 2880 embedding table = 5,132,849,472 (card: 5.13 B)
    assert main(["llm", OSS, "--on", "H100", "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "5.71 G active per token (5.13 G without the embedding table)" in out
    assert 5_711_982_912 - 201088 * 2880 == 5_132_849_472
