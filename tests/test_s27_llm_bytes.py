"""s27 fC: `rooflab llm` byte counts the s26 notes left alone (notes/note26_final.md):
element_dtype and a kernel's stored bytes per weight, the embedding rows under --weights
int4, llm.settings.kv_format, biases in the weights split, a --pp stage's kinds of layers.
Every value is a hand calculation; imports sit in the tests so each fails on its own."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.kernel import Kernel
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.settings import Settings, settings_for

INT4_G128 = 0.5 + 2 / 128          # 0.515625 B: an int4 weight and its fp16 scale per 128


def _by_name(step):
    return {o.op.name: o for o in step.ops}


def _llm_json(capsys, *args: str) -> dict:
    assert main(["llm", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# 1. element_dtype reads meta weight_bytes_per_param ------------------------------------

def test_a_kernels_stored_bytes_per_weight_are_read_from_meta():
    from rooflab.model.element_dtype import stored_weight_bytes, weight_bytes_per_element

    # a what-if dropped weight_dtype (meta_in_dtype does so when no dtype has the scaled
    # size) but kept the stored bytes: Q8_0's 34 B per 32 = 1.0625 B, not the fp16 math's 2
    k = Kernel("down_proj", {"fp16": 1e9}, {"DRAM": 1e8},
               meta={"op": "linear", "weight_bytes_per_param": 34 / 32})
    assert stored_weight_bytes(k) == 1.0625
    assert weight_bytes_per_element(k, "fp16") == (
        1.0625, "1.0625 B a weight as stored (meta weight_bytes_per_param)")
    # junk and bools are no size
    for junk in (True, -1, "0.5", 0):
        bad = Kernel("g", {"fp16": 1e9}, {"DRAM": 1e8}, meta={"weight_bytes_per_param": junk})
        assert stored_weight_bytes(bad) is None
        assert weight_bytes_per_element(bad, "fp16")[0] == 2.0


def test_an_llm_q4_k_kernel_says_its_stored_bytes_and_keeps_its_4_bit_verdict():
    """--weights q4_k: weight_dtype int4 (the math's class) and 144 B per 256 = 0.5625 B
    stored. The size stays the class's bare 0.5: the advice sets it against bare widths
    (int4's 0.5 B target, "already 4-bit" at <= 0.5); the words carry the stored bytes."""
    from rooflab.model.element_dtype import weight_bytes_per_element
    from rooflab.model.weight_traffic import weight_size

    cfg = load_config("tinyllama-1.1b")
    q = next(k for k in decode_step(cfg, Settings(weights="q4_k"), 1, 576).kernels()
             if k.name == "q_proj")
    assert q.meta["weight_bytes_per_param"] == 144 / 256 == 0.5625
    said = ("weight dtype int4 (meta), stored at 0.5625 B a weight with its scales (meta "
            "weight_bytes_per_param)")
    assert weight_bytes_per_element(q, "fp16") == (0.5, said)
    assert weight_size(q, "fp16") == (0.5, said)
    # bytes and dtype agreeing (fp16 weights, 2 B): nothing more to say
    f = next(k for k in decode_step(cfg, Settings(), 1, 576).kernels() if k.name == "q_proj")
    assert weight_bytes_per_element(f, "fp16") == (2.0, "weight dtype fp16 (meta)")


# 2. the embedding rows under --weights int4 ---------------------------------------------

def test_int4_embedding_rows_carry_their_group_scales():
    """TinyLlama (hidden 2048) under --weights int4, group 128: a gathered row is 2048 x
    0.515625 = 1,056 B (it was 2048 x 0.5 = 1,024), as the table is stored (32,000 rows:
    33,792,000 B in the footprint and the layer weights, unchanged)."""
    from rooflab.workloads.llm.footprint import weight_bytes
    from rooflab.workloads.llm.layer_weights import layer_weights

    cfg = load_config("tinyllama-1.1b")
    s = Settings(weights="int4")
    assert s.weight_bytes == INT4_G128
    emb = _by_name(decode_step(cfg, s, 1, 576))["embedding"].op
    assert emb.bytes_split["weights"] == 2048 * INT4_G128 == 1056
    pre = _by_name(prefill_step(cfg, s, 1, 512))["embedding"].op
    assert pre.bytes_split["weights"] == 512 * 1056 == 540_672
    assert layer_weights(cfg, s).embedding_bytes == 32_000 * 1056 == 33_792_000
    # the footprint: 22 layers x 2048 x (2 x 2048 + 2 x 256 + 3 x 5632) = 968,884,224
    # matrix weights, embedding and lm_head 32,000 x 2048 each: 1,099,956,224 x 0.515625
    # = 567,164,928 B, and 45 RMSNorm gammas x 2048 x 2 B = 184,320 B
    assert weight_bytes(cfg, s) == 567_164_928 + 184_320
    # the meta whatif reads
    k = next(k for k in decode_step(cfg, s, 1, 576).kernels() if k.name == "embedding")
    assert k.meta["weight_bytes_per_param"] == INT4_G128


def test_llm_int4_embedding_equals_whatif_quantize_int4_group_128():
    """One rule: the fp16 step's embedding (2048 x 2 = 4,096 B of rows) quantized by
    whatif --quantize int4 --group 128 reads 4,096 x 0.515625 / 2 = 1,056 B, as llm
    --weights int4 counts it."""
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.whatif_weights import quantize_weights

    cfg = load_config("tinyllama-1.1b")
    fp16 = [k for k in decode_step(cfg, Settings(), 1, 576).kernels() if k.name == "embedding"]
    w = quantize_weights(load_roof("T4"), fp16, "int4", group=128)
    (_, after), = w.moves
    assert after.meta["bytes_split"]["weights"] == 1056
    int4 = _by_name(decode_step(cfg, Settings(weights="int4"), 1, 576))["embedding"].op
    assert int4.bytes_split["weights"] == after.meta["bytes_split"]["weights"]


def test_the_notes_say_how_the_table_is_counted(capsys):
    d = _llm_json(capsys, "tinyllama-1.1b", "--on", "T4", "--weights", "int4")
    said = [n for n in d["llm"]["notes"] if "gathered rows" in n]
    assert said == [
        "--weights int4: the embedding's gathered rows are counted as the table is stored, "
        "0.515625 B a weight with its group scales, as the matrices (and whatif --quantize "
        "int4 --group 128); llama.cpp quantizes token_embd with its block scales too"]
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--weights", "int4"]) == 0
    out = capsys.readouterr().out
    assert "note: --weights int4: the embedding's gathered rows are counted as" in out
    # the setup line says the table is quantized at all, and what checkpoints do instead
    assert ("lm_head and embedding at int4 too; AWQ/GPTQ/fp8 checkpoints keep them at "
            "16-bit: give the checkpoint's config.json") in out
    # fp4 by hand: the rows with their block scales, said
    d = _llm_json(capsys, "tinyllama-1.1b", "--on", "T4", "--weights", "nvfp4")
    assert [n for n in d["llm"]["notes"] if "gathered rows" in n] == [
        "--weights nvfp4: the embedding's gathered rows are counted as the table is stored, "
        "0.5625 B a weight with its block scales, as the matrices (and whatif "
        "--quantize/--precision nvfp4)"]
    # 16-bit weights, or a GGUF type's own blocks: nothing to say
    d = _llm_json(capsys, "tinyllama-1.1b", "--on", "T4")
    assert not [n for n in d["llm"]["notes"] if "gathered rows" in n]
    d = _llm_json(capsys, "tinyllama-1.1b", "--on", "T4", "--weights", "q4_k")
    assert not [n for n in d["llm"]["notes"] if "gathered rows" in n]


# 3. llm.settings.kv_format ----------------------------------------------------------------

@pytest.mark.parametrize("kv, cls, fmt, per", [
    ("q8_0", "int8", "q8_0", 34 / 32),          # block_q8_0: 32 int8 + an fp16 scale
    ("q4_0", "int4", "q4_0", 18 / 32),
    ("int4", "int4", "int4", 0.5 + 4 / 128),    # LMDeploy: fp16 scale and zero per 128
    ("fp16", "fp16", "fp16", 2.0),
])
def test_the_json_names_the_kv_format_beside_its_class(capsys, kv, cls, fmt, per):
    d = _llm_json(capsys, "tinyllama-1.1b", "--on", "T4", "--kv", kv)
    st = d["llm"]["settings"]
    assert (st["kv"], st["kv_format"], st["kv_bytes_per_value"]) == (cls, fmt, per)
    # TinyLlama caches 22 x 2 x 4 x 64 = 11,264 values a token: q8_0 11,968 B
    assert d["llm"]["footprint"]["kv_bytes_per_token"] == pytest.approx(11_264 * per)


def test_the_text_names_q8_0():
    cfg = load_config("tinyllama-1.1b")
    assert "KV q8_0 (llama.cpp's ggml blocks of 32 with an fp16 scale: 1.0625 B a value" \
        in settings_for(cfg, kv="q8_0").describe()


# 4. biases are weights ----------------------------------------------------------------------

def test_gpt_oss_20b_bias_bytes_by_hand():
    """gpt-oss-20b, each of 24 layers: q/k/v biases 4,096 + 2 x 512 and o's 2,880
    (8,000), 32 experts' gate_up 2 x 2,880 and down 2,880 (32 x 8,640 = 276,480), the
    router's 32: 284,512 parameters, 569,024 B in bf16; 24 layers 13,656,576 B."""
    from rooflab.workloads.llm.layer_weights import layer_weights
    from rooflab.workloads.llm.params import layer_bias_params

    cfg = load_config("gpt-oss-20b")
    assert layer_bias_params(cfg, moe=True) == 8_000 + 276_480 + 32 == 284_512
    s = settings_for(cfg)
    assert s.vector_bytes == 2.0
    w = layer_weights(cfg, s)
    assert w.layer.bias_bytes == 569_024
    assert w.bias_bytes == 24 * 569_024 == 13_656_576
    assert w.to_dict()["bias_bytes"] == 13_656_576
    assert "norms 11.5 kB; biases 569 kB of the attention and FFN bytes)" in w.describe()[0]
    # ... and they ride in the kernels' weights: q_proj kept at bf16 (2880 x 4096 x 2 B)
    # plus its bias (4096 x 2 B); an expert GEMM at batch 1 touches top-4 experts, each
    # 2880 x 2880 mxfp4 weights (0.53125 B) plus 2880 bias values (2 B)
    ops = _by_name(decode_step(cfg, s, 1, 576))
    assert ops["q_proj"].op.bytes_split["weights"] == 2880 * 4096 * 2 + 4096 * 2
    assert ops["expert_gate_proj"].op.bytes_split["weights"] == pytest.approx(
        4 * (2880 * 2880 * 0.53125 + 2880 * 2), rel=1e-12)
    assert "biases" in ops["q_proj"].op.byte_model


def test_a_model_without_biases_says_none():
    from rooflab.workloads.llm.layer_weights import layer_weights

    cfg = load_config("llama-3-8b")
    w = layer_weights(cfg, settings_for(cfg))
    assert w.bias_bytes == 0 and "biases" not in w.describe()[0]
    # GPT-2: qkv 3 x 768, out 768, fc 3,072, proj 768 = 6,912 a layer, fp16 2 B
    g = load_config("gpt2")
    assert layer_weights(g, settings_for(g)).layer.bias_bytes == 6_912 * 2


# 5. a --pp stage's kinds of layers ------------------------------------------------------------

def test_gemma2_stages_say_their_window_and_full_layers(capsys):
    """Gemma-2-9B at 8,192 tokens over 2 stages: its even layers slide (window 4,096).
    Stage 0 (layers 0-20) holds 11 window + 10 full layers, stage 1 (21-41) 10 + 11. KV a
    layer and sequence: 2 x 8 heads x 256 x 2 B = 8,192 B a token; full 8,192 tokens =
    67,108,864 B, window 4,096 = 33,554,432 B. Weights a layer (bf16): 3,584 x (4,096 +
    2 x 2,048 + 4,096) + 3 x 3,584 x 14,336 + 4 x 3,584 norms = 198,195,200 x 2 B."""
    args = ("gemma-2-9b", "--on", "H100", "--pp", "2", "--context", "8192")
    d = _llm_json(capsys, *args)
    stages = d["llm"]["pipeline"]["stages"]
    layer = 198_195_200 * 2
    want = [[("window 4096", 11, 33_554_432), ("full", 10, 67_108_864)],
            [("full", 11, 67_108_864), ("window 4096", 10, 33_554_432)]]
    for st, kinds in zip(stages, want, strict=True):
        got = [(k["attention"], k["layers"], k["kv_bytes_per_layer"]) for k in st["layer_kinds"]]
        assert got == kinds
        assert all(k["mlp"] == "dense" and k["weights_bytes_per_layer"] == [layer, layer]
                   for k in st["layer_kinds"])
    assert main(["llm", *args]) == 0
    out = capsys.readouterr().out
    assert ("stage 0: layers 0-20 + embedding (11 window 4096 + 10 full; KV a layer 33.6 MB "
            "/ 67.1 MB a sequence at 8192 tokens)") in out
    assert ("stage 1: layers 21-41 + final_norm + lm_head (10 window 4096 + 11 full; KV a "
            "layer 33.6 MB / 67.1 MB a sequence at 8192 tokens)") in out


def test_a_dense_then_moe_stage_says_both_and_a_uniform_model_nothing(capsys):
    """DeepSeek-V2-Lite: layer 0 dense, 26 MoE; llama-3-8b: one kind, no words."""
    assert main(["llm", "deepseek-v2-lite", "--on", "H100", "--pp", "2"]) == 0
    out = capsys.readouterr().out
    assert "stage 0: layers 0-13 + embedding (1 dense + 13 MoE; a layer's weights " in out
    assert "stage 1: layers 14-26 + final_norm + lm_head (13 MoE)," in out
    assert main(["llm", "llama-3-8b", "--on", "H100", "--pp", "2"]) == 0
    assert "stage 0: layers 0-15 + embedding, " in capsys.readouterr().out


def test_a_gguf_files_layers_differ_by_their_bytes(tmp_path):
    """The tiny GGUF's two layers store 376,064 and 333,824 B (s26_gguf_files' count):
    one kind of layer, its weights the least and the most of them."""
    pytest.importorskip("gguf")
    from s26_gguf_files import TINY_LAYER_BYTES, write_tiny_llama

    from rooflab.workloads.llm.pipeline import layer_kinds

    cfg = load_config(str(write_tiny_llama(tmp_path / "tiny.gguf")))
    (kind,) = layer_kinds(cfg, settings_for(cfg), range(cfg.layers), 64)
    assert (kind.attention, kind.mlp, kind.layers) == ("full", "dense", 2)
    assert kind.weights_bytes == (min(TINY_LAYER_BYTES), max(TINY_LAYER_BYTES)) \
        == (333_824, 376_064)
