"""The model a Hugging Face config.json describes, as frozen values: ModelConfig (a
decoder-only transformer, as far as counting FLOP and bytes needs it), its routed experts
(MoE) and its latent attention (MLA). config_parse builds them from the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .quant_config import Quantization
from .stored_weights import StoredWeights


@dataclass(frozen=True)
class MoE:
    """Routed experts: `experts` in total, `top_k` per token, `shared` always-on experts."""

    experts: int
    top_k: int
    intermediate: int
    shared: int = 0
    first_dense: int = 0      # the first layers keep a dense MLP (DeepSeek first_k_dense_replace)
    layer_freq: int = 1       # every layer_freq-th layer after those is MoE
    # the MoE layers by index when the config lists or interleaves them (Llama 4's
    # moe_layers / interleave_moe_layer_step, Qwen-MoE's decoder_sparse_step and
    # mlp_only_layers); empty: first_dense and layer_freq say which
    layers: tuple[int, ...] = ()
    # each expert's gate/up and down projections and the router carry biases (gpt-oss:
    # GptOssExperts.gate_up_proj_bias / down_proj_bias, GptOssTopKRouter.bias)
    bias: bool = False

    def expected_distinct(self, tokens: float) -> float:
        """Expected distinct experts touched by `tokens` routed tokens, uniform routing:
        E * (1 - (1 - k/E)^T) (each expert missed by a token with probability 1 - k/E)."""
        e, k = self.experts, self.top_k
        return e * (1.0 - (1.0 - k / e) ** max(tokens, 0.0))


@dataclass(frozen=True)
class MLA:
    """DeepSeek multi-head latent attention: the cache holds a `kv_lora_rank` latent plus a
    shared `qk_rope_head_dim` RoPE key per token and layer."""

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer, as far as counting FLOP and bytes needs it."""

    name: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_positions: int | None = None
    tied_embeddings: bool = False
    gated_mlp: bool = True
    norm: str = "rmsnorm"              # rmsnorm | layernorm
    norms_per_layer: int = 2
    positions: str = "rope"            # rope | learned
    qkv_bias: bool = False
    out_bias: bool = False             # o_proj and MLP biases (GPT-2)
    # o_proj bias alone (Llama/Qwen3/gpt-oss build o_proj with bias=attention_bias)
    o_bias: bool = False
    # one learned sink logit per query head and layer (gpt-oss GptOssAttention.sinks)
    attention_sinks: bool = False
    sliding_window: int | None = None
    sliding_layers: tuple[int, ...] = ()
    # the sliding layers attend within chunks of sliding_window tokens, not over a sliding
    # window (Llama 4's attention_chunk_size): a token sees its chunk's earlier tokens only
    chunked: bool = False
    # per-head RMSNorms of q and k over head_dim before RoPE (Qwen3Attention's q_norm/k_norm)
    qk_norm: bool = False
    moe: MoE | None = None
    mla: MLA | None = None
    # Gemma-2's attn_logit_softcapping (cap x tanh(scores / cap)): not counted; named in a
    # note under --attn naive, where eager attention runs it as extra passes (eager.py)
    attn_softcap: float | None = None
    # multi-token-prediction modules beside the model (DeepSeek-V3 / GLM-4.5
    # num_nextn_predict_layers): not counted, named in a note with their weights
    mtp_layers: int = 0
    dtype: str = "fp16"                # the checkpoint's dtype (torch_dtype)
    quantization: Quantization | None = None   # quantization_config, when rooflab reads it
    # a GGUF file's tensors as stored (gguf_config): the default weights' exact bytes
    stored: StoredWeights | None = None
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def family(self) -> str:
        parts = ["gpt2-like" if self.positions == "learned" else "llama-like"]
        if self.moe:
            parts.append("moe")
        if self.mla:
            parts.append("mla")
        if self.sliding_window:
            parts.append("sliding-window")
        return "+".join(parts)

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def is_moe_layer(self, layer: int) -> bool:
        m = self.moe
        if m is not None and m.layers:
            return layer in m.layers
        return (m is not None and layer >= m.first_dense
                and (layer - m.first_dense) % m.layer_freq == 0)

    @property
    def moe_layers(self) -> int:
        return sum(self.is_moe_layer(i) for i in range(self.layers))

    def kv_len(self, layer: int, context: int) -> int:
        """Tokens of KV cache layer `layer` keeps at this context (sliding windows and
        chunks cap it: a chunked layer holds up to one chunk, as a sequence reaches it)."""
        if self.sliding_window and layer in self.sliding_layers:
            return min(context, self.sliding_window)
        return context

    def kv_attended(self, layer: int, context: int) -> int:
        """Tokens the newest of `context` tokens attends to in layer `layer`: kv_len, but
        in a chunked layer only its own chunk's, (context - 1) mod chunk + 1 (Llama 4 Scout
        at 12288: 4097, where the cache may hold 8192; review s20 r8 F4)."""
        if self.chunked and self.sliding_window and layer in self.sliding_layers:
            return (context - 1) % self.sliding_window + 1
        return self.kv_len(layer, context)

    def kv_elems_per_token(self) -> int:
        """KV-cache elements per token per layer: K and V of each KV head, or MLA's latent."""
        if self.mla:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    def with_(self, **changes: Any) -> ModelConfig:
        return replace(self, **changes)
