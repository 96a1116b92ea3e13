"""How many kernels an eager Hugging Face decoder layer launches per decode step, and when
that estimate does not apply (moved out of kernels.py, which re-exports both)."""

from __future__ import annotations

from .model_config import ModelConfig
from .settings import Settings

# Kernels one eager Hugging Face LlamaDecoderLayer launches per decode step (an estimate,
# counted from transformers' modeling_llama.py and integrations/sdpa_attention.py, 5.x):
# 2 LlamaRMSNorm x 8 (to fp32, pow, mean, + eps, rsqrt, x, to fp16, x weight) = 16;
# q/k/v/o 4; apply_rotary_pos_emb 10 (q and k: x cos, neg, cat, x sin, add); the
# DynamicCache's 2 cats; SDPA 1 and its output transpose().contiguous() 1; 2 residual
# adds; gate, up, SiLU, x, down 5 = 41 (43 where repeat_kv copies K and V for GQA: an
# attention mask, older versions). Review 18a F4 counts ~40; seed 004 says 15-25. The
# fused count (Step.launches) is 14 for the same layer with flash attention.
EAGER_HF_LAYER_KERNELS = 41


def eager_estimate_missing(cfg: ModelConfig, s: Settings) -> str:
    """Why EAGER_HF_LAYER_KERNELS does not hold for a run ("" where it does): it counts
    LlamaDecoderLayer, and HF generate runs no TP/PP (review 19d N11: GPT-2's block is ~20,
    Qwen3's q/k norms add 16, Mixtral's expert loop far more)."""
    if s.tp > 1 or s.pp > 1:
        return "HF generate runs no --tp/--pp"
    llama = (cfg.norm == "rmsnorm" and cfg.norms_per_layer == 2 and cfg.positions == "rope"
             and cfg.gated_mlp and not cfg.qk_norm and cfg.moe is None and cfg.mla is None)
    return "" if llama else (f"it was counted for Llama-like layers, not "
                             f"{getattr(cfg, 'model_type', '') or cfg.name}'s")
