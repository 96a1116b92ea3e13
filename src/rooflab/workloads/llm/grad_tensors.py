"""A model's parameter tensors one by one, in the order PyTorch DDP buckets their gradients
(`rooflab train --dp N`, --zero 0: model/ddp_ready.ddp_buckets; when each bucket is
ready, model/ddp_ready.tensor_exposed_s).

DDP groups gradients into buckets tensor by tensor, never splitting one: the reducer adds
a tensor to the open bucket and closes it once its bytes reach the limit (>=), the first
bucket's limit _DEFAULT_FIRST_BUCKET_BYTES = 1 MiB, the others' bucket_cap_mb = 25 MiB
(torch/csrc/distributed/c10d/reducer.cpp: compute_bucket_assignment_by_size, and
Reducer::rebuild_buckets, which after the first iteration rebuilds them in the order the
gradients became ready; torch/nn/parallel/distributed.py passes the 1 MiB first cap
unless bucket_cap_mb is given). The ready order is taken as the reverse of registration
(Hugging Face's: the embedding, each layer's attention, MLP and norms, the final norm, an
untied lm_head): llama-2-7b's 291 tensors, lm_head's gradient first, the embedding's last.

A layer's tensors as Hugging Face stores them: q, k, v, o (each bias a tensor of its own),
sinks and q/k norms, MLA's projections and its two low-rank norms; a dense MLP's gate, up
and down (and biases); an MoE layer's router and each routed expert's matrices (Mixtral's
and DeepSeek's per-expert tensors; gpt-oss fuses its experts, so its buckets are
counted finer than it has), the shared experts as one MLP; the norms (a LayerNorm's weight
and bias two). Pure: no I/O.
"""

from __future__ import annotations

from .model_config import ModelConfig
from .params import _attention_modules, _mlp_modules, count_params, expert_bias_params


def ready_order(cfg: ModelConfig) -> tuple[int, ...]:
    """Element counts of cfg's parameter tensors in the order their gradients are ready
    (the reverse of registration: module docstring); () where the tensors do not sum to
    count_params' total (a layout this list does not know: the caller buckets by bytes)."""
    out: list[int] = [cfg.vocab * cfg.hidden]
    if cfg.positions == "learned" and cfg.max_positions:
        out.append(cfg.max_positions * cfg.hidden)
    dense = cfg.layers - cfg.moe_layers
    for i in range(cfg.layers):
        out += _attention(cfg) + _mlp(cfg, moe=i >= dense) + _norms(cfg) * cfg.norms_per_layer
    out += _norms(cfg)
    if not cfg.tied_embeddings:
        out.append(cfg.vocab * cfg.hidden)
    if sum(out) != count_params(cfg).total:
        return ()
    return tuple(reversed(out))


def _norms(cfg: ModelConfig) -> list[int]:
    """One norm's tensors: RMSNorm a weight, LayerNorm a weight and a bias."""
    return [cfg.hidden] * (2 if cfg.norm == "layernorm" else 1)


def _attention(cfg: ModelConfig) -> list[int]:
    """One attention block's tensors (params.attention_params' parts, one by one)."""
    mats = list(_attention_modules(cfg).values())
    if cfg.mla:
        m = cfg.mla
        return mats + ([m.q_lora_rank] if m.q_lora_rank else []) + [m.kv_lora_rank]
    q, k, v, o = mats
    biased = cfg.qkv_bias
    out = [q, *([cfg.q_dim] if biased else []), k, *([cfg.kv_dim] if biased else []),
           v, *([cfg.kv_dim] if biased else []), o]
    out += [cfg.hidden] if cfg.out_bias or cfg.o_bias else []
    out += [cfg.heads] if cfg.attention_sinks else []
    out += [cfg.head_dim, cfg.head_dim] if cfg.qk_norm else []
    return out


def _mlp(cfg: ModelConfig, moe: bool) -> list[int]:
    """One layer's MLP tensors: dense (with params.mlp_params' biases), or MoE's router,
    routed experts and shared experts."""
    if not moe or cfg.moe is None:
        out = list(_mlp_modules(cfg, cfg.intermediate).values())
        return out + ([cfg.intermediate, cfg.hidden] if cfg.out_bias else [])
    m = cfg.moe
    e_b, r_b = expert_bias_params(cfg)
    out = [cfg.hidden * m.experts, *([r_b] if r_b else [])]
    for _ in range(m.experts):
        out += list(_mlp_modules(cfg, m.intermediate).values()) + ([e_b] if e_b else [])
    if m.shared:
        out += list(_mlp_modules(cfg, m.intermediate * m.shared).values())
    return out
