"""What the notes and --json say of latent attention, MTP modules and a Llama 4 fp8
checkpoint's vision entries (review s20 r8 F5-F8).

F5/F6: an MLA model caches kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576 elements a
token and layer; "128 KV heads of 56" (hidden 7168 / 128 heads) described heads that do
not exist. kimi_k2 is DeepseekV3ForCausalLM: counted as checked.
F7: DeepSeek-V3 (bf16 here, no quantization_config) has num_nextn_predict_layers 1. Its
MTP module is one MoE layer: MLA q_a 7168 x 1536 + q_b 1536 x 128 x 192 + kv_a 7168 x 576
+ kv_b 512 x 128 x 256 + o 128 x 128 x 7168 = 187,105,280, its q_a/kv_a norms 2048;
256 experts + 1 shared of 3 x 7168 x 2048 = 11,318,329,344; router 7168 x 256 = 1,835,008;
two norms 14,336: 11,507,286,016 parameters, 23,014,572,032 B at 2 B ("23 GB"); plus
eh_proj 2 x 7168 x 7168 x 2 B = 205,520,896 B and three norms 3 x 7168 x 2 B = 43,008 B
("206 MB"): 23,220,135,936 B ("23.2 GB"). Not added to the parameters (671.03 G).
F8: "re:.*vision_model.*" names a module outside the text model: not "counted at the
quantized width" (the vision encoder is not counted at all).
"""

from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.analysis import Request, analyze_llm
from rooflab.workloads.llm.config_parse import parse_config
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.quant_config import quantization
from rooflab.workloads.llm.result_json import result_to_dict
from rooflab.workloads.llm.settings import settings_for

DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "first_k_dense_replace": 3, "hidden_size": 7168, "intermediate_size": 18432,
    "kv_lora_rank": 512, "max_position_embeddings": 163840, "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
    "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 129280}


def _result(cfg):
    return analyze_llm(cfg, load_roof("H200"), settings_for(cfg),
                       Request(batches=1, context=4096, prompt=1024))


def test_unchecked_mla_note_names_the_latent_not_fake_heads():
    cfg = parse_config({**DEEPSEEK_V3, "model_type": "deepseek_v9"}, "dsx")
    note = next(n for n in cfg.notes if "not one rooflab has checked" in n)
    assert "latent cache of kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576" in note
    assert "KV heads" not in note


def test_kimi_k2_is_checked():
    cfg = parse_config({**DEEPSEEK_V3, "model_type": "kimi_k2", "n_routed_experts": 384,
                        "num_attention_heads": 64, "num_key_value_heads": 64,
                        "first_k_dense_replace": 1, "vocab_size": 163840}, "kimi")
    assert not any("not one rooflab has checked" in n for n in cfg.notes)


def test_json_model_has_kv_latent_and_mla_dims():
    model = result_to_dict(_result(parse_config(DEEPSEEK_V3, "dsv3")))["llm"]["model"]
    assert model["kv_latent"] == 576
    assert model["mla"] == {"kv_lora_rank": 512, "qk_rope_head_dim": 64,
                            "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}
    plain = result_to_dict(_result(parse_config(
        {**DEEPSEEK_V3, "kv_lora_rank": None, "num_nextn_predict_layers": 0}, "mha")))
    assert plain["llm"]["model"]["kv_latent"] is None and plain["llm"]["model"]["mla"] is None


def test_mtp_note_gives_its_weights_and_counts_stay_the_main_models():
    cfg = parse_config(DEEPSEEK_V3, "dsv3")
    assert cfg.mtp_layers == 1
    assert round(count_params(cfg).total / 1e9, 2) == 671.03
    notes = _result(cfg).notes
    mtp = [n for n in notes if n.startswith("num_nextn_predict_layers 1")]
    assert len(mtp) == 1
    assert "23.2 GB of weights (one MoE decoder layer 23 GB + eh_proj and norms 206 MB)" in mtp[0]
    assert "not counted" in mtp[0] and "speculative" in mtp[0]
    none = _result(parse_config({**DEEPSEEK_V3, "num_nextn_predict_layers": 0}, "d")).notes
    assert not any(n.startswith("num_nextn_predict_layers") for n in none)


def test_vision_ignore_entries_are_said_to_be_outside_the_text_model():
    q = {"quant_method": "compressed-tensors", "format": "float-quantized",
         "config_groups": {"group_0": {
             "targets": ["Linear"],
             "weights": {"num_bits": 8, "type": "float", "strategy": "channel",
                         "symmetric": True, "dynamic": False},
             "input_activations": {"num_bits": 8, "type": "float", "strategy": "token",
                                   "dynamic": True, "symmetric": True}}},
         "ignore": ["re:.*self_attn.*", "re:.*router.*", "re:.*vision_model.*",
                    "re:.*multi_modal_projector.*", "language_model.lm_head"]}
    found, note = quantization(q, 5120)
    assert found is not None and set(found.keep) >= {"q_proj", "router", "lm_head"}
    assert "re:.*vision_model.*, re:.*multi_modal_projector.* name modules outside the " \
           "text model" in note
    assert "quantized width" not in note
    # an entry for one layer only is still said to be counted at the quantized width
    _, note = quantization({**q, "ignore": ["model.layers.0.mlp.down_proj"]}, 5120)
    assert "model.layers.0.mlp.down_proj: not a module of every layer" in note
    assert "counted at the quantized width" in note
