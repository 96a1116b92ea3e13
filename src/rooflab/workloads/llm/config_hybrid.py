"""Refuse hybrid configs whose layers are not all attention: Mamba / state-space layers
(Jamba: attn_layer_period, mamba_*), linear attention (Qwen3-Next: layer_types
"linear_attention", linear_*), recurrent blocks. rooflab llm counts every layer as
softmax attention with a KV cache growing with the context; on Qwen3-Next that counted
48 full-attention layers where 12 keep a KV cache (98.3 kB per token against 24.6 kB,
with a parameter count that still looked right), on Jamba 32 where 4 do (review s18 r3
F2). Counting those layers (a constant-size state per sequence, their own projections
and scans) is a model of its own; a clear refusal beats a silently wrong count.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError

# layer_types values that are softmax attention with a KV cache, the kinds the count
# handles: transformers' "full_attention", "sliding_attention" (Gemma 2/3, gpt-oss,
# Qwen2/3) and "chunked_attention" (Llama 4; its chunk is read from attention_chunk_size)
ATTENTION_KINDS = frozenset({"full_attention", "sliding_attention", "chunked_attention",
                             "attention", "global", "local", "sliding_window"})
# fields of configs with layers that are not softmax attention, by the prefix or name
# transformers' configs use (JambaConfig: attn_layer_period/offset, mamba_*;
# Qwen3NextConfig: full_attention_interval, linear_num_key_heads, linear_key_head_dim,
# linear_value_head_dim, linear_conv_kernel_dim; Mamba2/FalconH1: ssm_*, mamba_*;
# NemotronH: hybrid_override_pattern; Zamba: layers_block_type; RecurrentGemma:
# block_types)
HYBRID_PREFIXES = ("mamba", "ssm_", "linear_num_", "linear_key_", "linear_value_",
                   "linear_conv_", "linear_attn")
HYBRID_FIELDS = ("attn_layer_period", "attn_layer_offset", "full_attention_interval",
                 "hybrid_override_pattern", "layers_block_type", "block_types",
                 "attn_layer_indices")
# per-layer attention kinds as 0/1 lists: MiniMax-Text-01 / M1's attn_type_list (0 a
# lightning, i.e. linear, attention layer with a fixed-size state, 1 softmax; vLLM's
# MiniMaxText01 reads it, or its alias decoder_attention_types, as the hybrid marker)
TYPE_LISTS = ("attn_type_list", "decoder_attention_types")
# DeepSeek sparse attention (DeepSeek-V3.2's DSA): a lightning indexer picks each query's
# index_topk keys; counting it as dense MLA gives ~10x its decode attention FLOP and KV
# reads at 128k (review s20 r8 F3)
SPARSE_FIELDS = ("index_topk",)
_INSTEAD = ("rooflab llm counts every layer as softmax attention with a KV cache that grows "
            "with the context, which would overcount the KV cache and the attention rows; "
            "time the attention layers with `rooflab ai attention` and the projections "
            "with `rooflab ai matmul`")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_all_attention(d: dict[str, Any], where: str) -> None:
    """InputError naming the field when the config says some layers are not attention."""
    arch = ", ".join(map(str, d.get("architectures") or ())) or str(d.get("model_type") or "")
    named = f"'{arch}' " if arch else ""
    types = d.get("layer_types")
    if isinstance(types, list):
        other = [(i, str(t)) for i, t in enumerate(types)
                 if str(t) not in ATTENTION_KINDS and "sliding" not in str(t)]
        if other:
            kinds = sorted({t for _, t in other})
            raise InputError(
                f"{where}: {named}is a hybrid model: layer_types has {len(other)} of "
                f"{len(types)} layers of kind {', '.join(repr(k) for k in kinds)} (the first: "
                f"layer {other[0][0]}), not softmax attention; {_INSTEAD}")
    _check_type_list(d, where, named)
    sparse = [k for k in SPARSE_FIELDS if d.get(k) is not None]
    if sparse:
        raise InputError(
            f"{where}: {named}uses sparse attention: its config has '{sparse[0]}' "
            f"({_shown(d[sparse[0]])}): each query attends to the top-{_shown(d[sparse[0]])} "
            f"cached tokens an indexer picks (DeepSeek sparse attention), plus the indexer's "
            f"own keys in the cache; rooflab counts dense attention over the whole context, "
            f"which would overcount decode attention and KV reads many times at long "
            f"context; time the attention with `rooflab ai attention --kv-len "
            f"{_shown(d[sparse[0]])}` and the projections with `rooflab ai matmul`")
    # the period / interval fields first: they say which layers are which
    keys = [k for k in HYBRID_FIELDS if k in d] + sorted(k for k in d if isinstance(k, str)
                                                        and k.startswith(HYBRID_PREFIXES))
    if keys:
        raise InputError(
            f"{where}: {named}is a hybrid model: its config has '{keys[0]}' "
            f"({_shown(d[keys[0]])}), a field of Mamba / linear-attention / recurrent layers, "
            f"so not every layer is softmax attention; {_INSTEAD}")


def _check_type_list(d: dict[str, Any], where: str, named: str) -> None:
    """attn_type_list (MiniMax): refused when any layer is not softmax attention (1)."""
    for key in TYPE_LISTS:
        kinds = d.get(key)
        if not isinstance(kinds, list) or not kinds:
            continue
        other = [i for i, t in enumerate(kinds) if t != 1]
        if other:
            raise InputError(
                f"{where}: {named}is a hybrid model: its config has '{key}' with "
                f"{len(other)} of {len(kinds)} layers of kind {kinds[other[0]]!r} (the "
                f"first: layer {other[0]}; 0 is lightning / linear attention with a "
                f"fixed-size state, 1 softmax attention), so not every layer is softmax "
                f"attention; {_INSTEAD}")
