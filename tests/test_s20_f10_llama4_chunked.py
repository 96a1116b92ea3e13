"""Llama 4's chunked attention counted as it runs (review s20 r8 F4): a RoPE layer's token
attends to the keys of its own attention_chunk_size chunk only (transformers'
chunked_overlay: kv // chunk == q // chunk), not to a sliding window of that many.

Llama-4-Scout: 48 layers, 40 heads, 8 KV heads of 128, chunk 8192; no_rope_layers has
every 4th layer 0 (NoPE, full attention): 12 full, 36 chunked.
  Prefill of 32768: one causal triangle per chunk, 4 x 8192 x 8193 / 2 scores a head;
  a score is 2 x (128 + 128) FLOP: 36 x 40 x 512 x 4 x 33,558,528 = 98,968,126,095,360
  FLOP (a sliding window gave 173.18 T).
  Decode at context 12288 (the new token included): the token sits at position 12287 of
  chunk 1 and sees 12287 - 8192 + 1 = 4096 keys: 40 x 512 x 4096 = 83,886,080 FLOP a
  layer, and 4096 x 2 x 8 x 128 x 2 B = 16,777,216 B of KV read (not 8192's).
  The KV memory still holds a whole chunk per chunked layer: at 32768 tokens
  (12 x 32768 + 36 x 8192) x 4096 B = 2,818,572,288 B.
"""

from rooflab.workloads.llm.config_parse import parse_config
from rooflab.workloads.llm.footprint import kv_bytes_per_sequence
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.settings import settings_for
from rooflab.workloads.llm.sweep import kv_equals_weights_context

SCOUT = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "tie_word_embeddings": False,
    "text_config": {
        "attention_chunk_size": 8192, "head_dim": 128, "hidden_act": "silu",
        "hidden_size": 5120, "interleave_moe_layer_step": 1, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "max_position_embeddings": 262144,
        "model_type": "llama4_text", "moe_layers": list(range(48)),
        "no_rope_layers": [1, 1, 1, 0] * 12, "num_attention_heads": 40,
        "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
        "num_local_experts": 16, "torch_dtype": "bfloat16", "vocab_size": 202048}}


def _attention(step):
    return {o.op.name: o for o in step.ops if o.op.op == "attention"}


def test_prefill_counts_one_triangle_per_chunk():
    cfg = parse_config(SCOUT, "scout")
    assert cfg.chunked and cfg.sliding_window == 8192 and len(cfg.sliding_layers) == 36
    rows = _attention(prefill_step(cfg, settings_for(cfg), 1, 32768))
    chunked = rows["attention (chunk 8192)"]
    assert chunked.calls == 36
    assert chunked.calls * chunked.op.flop == 98_968_126_095_360
    assert rows["attention"].calls == 12       # NoPE layers: the full causal triangle
    assert rows["attention"].op.flop == 40 * 512 * 32768 * 32769 / 2


def test_decode_sees_its_own_chunk_only():
    cfg = parse_config(SCOUT, "scout")
    s = settings_for(cfg)
    rows = _attention(decode_step(cfg, s, 1, 12288))
    chunked = rows["attention (chunk 8192)"].op
    assert chunked.flop == 83_886_080
    assert chunked.bytes_split["kv"] == 16_777_216
    assert rows["attention"].op.flop == 40 * 512 * 12288
    # the first token of a chunk sees itself alone; the last of one sees the whole chunk
    assert _attention(decode_step(cfg, s, 1, 8193))["attention (chunk 8192)"].op.flop == 40 * 512
    assert _attention(decode_step(cfg, s, 1, 16384))["attention (chunk 8192)"].op.flop == (
        40 * 512 * 8192)
    # the memory keeps a whole chunk for those layers
    assert kv_bytes_per_sequence(cfg, s, 32768) == 2_818_572_288


def test_kv_equals_weights_solved_on_the_saw():
    """The KV read falls at each chunk edge; the crossing is on the first chunk whose top
    reaches the weights, and kv(c) crosses there."""
    cfg = parse_config(SCOUT, "scout")
    s = settings_for(cfg)
    c = kv_equals_weights_context(cfg, s, 1)
    assert c is not None
    weights = decode_step(cfg, s, 1, 1).bytes_split["weights"]

    def kv(n):
        return decode_step(cfg, s, 1, n).bytes_split["kv"]

    k = int(c - 1) // 8192
    assert kv(k * 8192) < weights <= kv((k + 1) * 8192)        # first chunk top past it
    assert kv(int(c)) <= weights <= kv(int(c) + 1)
    # by hand: kv(c) = K0 + A c + B ((c - 1) mod 8192 + 1), K0 = the new token's K and V
    # written in 48 layers (48 x 4096 B), A = 12 full layers x 4096 B, B = 36 x 4096 B.
    # A chunk's top is K0 + A 8192 (k + 1) + B 8192: the first past the weights (32.28 GB
    # at batch 1) is chunk 77, where c = lo + (W - kv(lo)) / (A + B), lo = 77 x 8192 + 1
    # (a sliding window of 8192 put it at (W - K0 - B 8192) / A, about 632,092)
    k0, a, b = 48 * 4096, 12 * 4096, 36 * 4096
    assert k == 77
    lo = 77 * 8192 + 1
    assert c == lo + (weights - (k0 + a * lo + b)) / (a + b)
