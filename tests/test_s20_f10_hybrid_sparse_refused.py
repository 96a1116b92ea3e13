"""MiniMax-M1 / Text-01 (attn_type_list: 0 lightning linear attention, 1 softmax) and
DeepSeek-V3.2 (index_topk: DeepSeek sparse attention) are refused naming the field, not
counted as all-dense softmax attention (review s20 r8 F2, F3). MiniMax-M1-80k was counted
with a 327,680 B/token cache where 10 of its 80 layers keep one (40,960 B); V3.2 at 131072
context with 2,300 GFLOP a decode step against about 239."""

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.workloads.llm.config_parse import parse_config

MINIMAX_M1 = {
    "architectures": ["MiniMaxM1ForCausalLM"], "model_type": "minimax_m1",
    "attn_type_list": ([0] * 7 + [1]) * 10, "head_dim": 128, "hidden_size": 6144,
    "intermediate_size": 9216, "num_attention_heads": 64, "num_experts_per_tok": 2,
    "num_hidden_layers": 80, "num_key_value_heads": 8, "num_local_experts": 32,
    "vocab_size": 200064, "torch_dtype": "bfloat16"}

DEEPSEEK_V32 = {
    "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
    "first_k_dense_replace": 3, "hidden_size": 7168, "intermediate_size": 18432,
    "kv_lora_rank": 512, "moe_intermediate_size": 2048, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "vocab_size": 129280, "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048}


def test_minimax_attn_type_list_refused_naming_the_field():
    with pytest.raises(InputError) as e:
        parse_config(MINIMAX_M1, "minimax-m1", where="minimax.json")
    msg = str(e.value)
    assert "'attn_type_list'" in msg and "70 of 80 layers" in msg
    assert "lightning / linear attention" in msg and "rooflab ai attention" in msg


def test_decoder_attention_types_alias_refused_and_all_softmax_list_read():
    alias = {k: v for k, v in MINIMAX_M1.items() if k != "attn_type_list"}
    with pytest.raises(InputError, match="'decoder_attention_types'"):
        parse_config({**alias, "decoder_attention_types": MINIMAX_M1["attn_type_list"]})
    # every layer softmax (1): nothing hybrid about it
    cfg = parse_config({**MINIMAX_M1, "attn_type_list": [1] * 80})
    assert cfg.layers == 80 and cfg.kv_heads == 8


def test_deepseek_v32_index_topk_refused_naming_the_field(tmp_path, capsys):
    with pytest.raises(InputError) as e:
        parse_config(DEEPSEEK_V32, "v32", where="v32.json")
    msg = str(e.value)
    assert "'index_topk' (2048)" in msg and "sparse attention" in msg
    assert "--kv-len 2048" in msg
    # as a CLI user meets it: one error line, exit 2
    p = tmp_path / "config.json"
    p.write_text(json.dumps(DEEPSEEK_V32))
    assert main(["llm", str(p), "--on", "H200"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "index_topk" in err and "Traceback" not in err


def test_index_topk_null_is_dense_mla():
    cfg = parse_config({**DEEPSEEK_V32, "index_topk": None})
    assert cfg.mla is not None and cfg.kv_elems_per_token() == 576
