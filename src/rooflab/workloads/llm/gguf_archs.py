"""The GGUF architectures whose headers need more than the common `{arch}.*` keys, as
llama.cpp writes them (convert_hf_to_gguf.py) and reads them (llama-model.cpp):

  * deepseek2 (DeepSeek-V2/V2-Lite/V3/R1, Kimi-K2): MLA and MoE. The current converter
    stores MLA as one compressed "KV head": head_count_kv 1, key_length = kv_lora_rank +
    qk_rope (576), value_length = kv_lora_rank (512), and the per-head sizes in
    key_length_mla = qk_nope + qk_rope (192) and value_length_mla = v_head_dim (128); it
    splits kv_b_proj into attn_k_b and attn_v_b (llama.cpp multiplies by them directly:
    the absorbed decode). Files from before that change have no *_mla keys, key_length
    192, value_length 128, head_count_kv = the heads and one attn_kv_b; llama.cpp runs
    them without MLA (is_mla false), caching each head's K and V.
  * gpt-oss: MoE whose sliding (128-token) and full layers alternate, the first sliding
    (llama.cpp set_swa_pattern(2)), with attention sinks and biased experts, its experts
    stored as MXFP4 (ggml type 39: 32 weights in 17 B, an e8m0 scale and 16 B of e2m1).
  * llama4: MoE layers every interleave_moe_layer_step-th (the others dense, their width
    feed_forward_length; the experts' and the shared expert's expert_feed_forward_length);
    llama.cpp fixes the chunked attention at 8192 tokens on 3 of every 4 layers (the 4th
    full, NoPE) unless the header says attention.sliding_window 0 (MobileLLM: none).
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from .gguf_header import ArrayLength, GgufHeader

# llama.cpp's Llama 4 chunk (LLM_ARCH_LLAMA4: n_swa = 8192, "currently it's the same for
# Scout and Maverick"; not a GGUF key)
LLAMA4_CHUNK = 8192
# gguf.ExpertGatingFuncType.SIGMOID: DeepSeek-V3's router (V2's softmax is the default)
SIGMOID = 2


def header_int(h: GgufHeader, key: str, required: bool = True,
               minimum: int = 1) -> int | None:
    """An integer metadata value >= minimum (a per-layer array: all alike), or an error
    naming the file and the key."""
    v = h.metadata.get(key)
    if v is None:
        if required:
            raise InputError(f"{h.path}: metadata key '{key}' is missing; rooflab needs it "
                             f"to count the model (the file may be damaged, or from a "
                             f"converter that leaves it out)")
        return None
    if isinstance(v, list) and v and len(set(v)) == 1:
        v = v[0]
    elif isinstance(v, (list, ArrayLength)):
        raise InputError(f"{h.path}: metadata key '{key}' differs from layer to layer; "
                         f"rooflab counts one value for every layer")
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise InputError(f"{h.path}: metadata key '{key}' must be {what}; got {v!r}")
    return v


def arch_fields(h: GgufHeader, arch: str) -> dict[str, Any]:
    """config.json fields of the architectures below, over the common ones (None: drop
    the common one)."""
    if arch == "deepseek2":
        return _deepseek2(h)
    if arch == "gpt-oss":
        # the window alternates, the first layer sliding, as transformers' layer_types
        # (sliding_window_pattern 2: every second layer full)
        return {"sliding_window": header_int(h, "gpt-oss.attention.sliding_window"),
                "sliding_window_pattern": 2}
    if arch == "llama4":
        return _llama4(h)
    return {}


def _deepseek2(h: GgufHeader) -> dict[str, Any]:
    a = "deepseek2"
    heads = header_int(h, f"{a}.attention.head_count")
    rope = header_int(h, f"{a}.rope.dimension_count")
    mla = is_mla(h)
    # the per-head sizes: *_mla in the current layout, key/value_length in the old one
    qk = header_int(h, f"{a}.attention.key_length" + "_mla" * mla)
    v = header_int(h, f"{a}.attention.value_length" + "_mla" * mla)
    if qk <= rope:
        raise InputError(f"{h.path}: the header's query/key head size {qk} is not larger "
                         f"than its RoPE part {rope} ({a}.rope.dimension_count): the MLA "
                         f"keys are damaged")
    sigmoid = (h.metadata.get(f"{a}.expert_gating_func") == SIGMOID
               or any(t.name.endswith("exp_probs_b.bias") for t in h.tensors))
    return {"model_type": "deepseek_v3" if sigmoid else "deepseek_v2",
            # MLA's heads are all query heads; the cache is the latent (ModelConfig.mla)
            "num_key_value_heads": heads, "head_dim": None,
            "kv_lora_rank": header_int(h, f"{a}.attention.kv_lora_rank"),
            "q_lora_rank": header_int(h, f"{a}.attention.q_lora_rank", required=False),
            "qk_rope_head_dim": rope, "qk_nope_head_dim": qk - rope, "v_head_dim": v,
            "n_shared_experts": header_int(h, f"{a}.expert_shared_count", False, 0),
            "first_k_dense_replace": header_int(h, f"{a}.leading_dense_block_count", False,
                                                0),
            "num_nextn_predict_layers": header_int(h, f"{a}.nextn_predict_layers", False,
                                                   0)}


def is_mla(h: GgufHeader) -> bool:
    """A deepseek2 file in llama.cpp's MLA layout (its loader's is_mla: both *_mla keys)."""
    return all(h.metadata.get(f"deepseek2.attention.{k}_length_mla") for k in ("key",
                                                                             "value"))


def _llama4(h: GgufHeader) -> dict[str, Any]:
    a = "llama4"
    window = h.metadata.get(f"{a}.attention.sliding_window")
    return {"intermediate_size": header_int(h, f"{a}.expert_feed_forward_length"),
            "intermediate_size_mlp": header_int(h, f"{a}.feed_forward_length"),
            "moe_intermediate_size": None, "sliding_window": None,
            "interleave_moe_layer_step": header_int(h, f"{a}.interleave_moe_layer_step"),
            "attention_chunk_size": None if window == 0 else LLAMA4_CHUNK}


def arch_notes(h: GgufHeader, arch: str, heads: int) -> list[str]:
    """What llama.cpp does with these files that the count says otherwise."""
    if arch == "deepseek2" and not is_mla(h):
        k = header_int(h, "deepseek2.attention.key_length")
        v = header_int(h, "deepseek2.attention.value_length")
        kv = header_int(h, "deepseek2.attention.head_count_kv", required=False) or heads
        return [f"this DeepSeek-2 GGUF predates llama.cpp's MLA layout (no "
                f"deepseek2.attention.key_length_mla; one attn_kv_b, not attn_k_b and "
                f"attn_v_b): llama.cpp runs it without MLA, caching {kv} heads' K and V, "
                f"{kv} x ({k} + {v}) = {kv * (k + v):,} values a token and layer, where "
                f"the KV lines here count the MLA latent; re-convert it with a current "
                f"convert_hf_to_gguf.py for the latent cache"]
    if arch == "llama4" and h.metadata.get("llama4.attention.sliding_window") != 0:
        return [f"llama.cpp fixes Llama 4's attention chunk at {LLAMA4_CHUNK} tokens (not a "
                f"GGUF key) on 3 of every 4 layers, the 4th attending to the whole context"]
    return []
