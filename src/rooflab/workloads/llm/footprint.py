"""Memory footprint: weights + KV cache + activations against device memory (decimal GB).

The prefill activations are a workspace reserved once, for one prompt in flight, not once
per sequence: a serving engine sizes its KV pool as memory - weights - the peak of one
profile run (vLLM Worker.determine_num_available_blocks / profile_run at
max_num_batched_tokens), and the decode step's own activations per sequence are a few
hidden vectors (kB) against a cache of MB (review 18d B). The sampler's fp32 logits of
the decode batch (batch x vocab x 4 B) are reserved too, per sequence: vLLM's profile run
samples a dummy max_num_seqs batch (GPUModelRunner._dummy_sampler_run), so the largest
batch pays its own row of logits beside its KV (H1: 763 -> 758 on Llama-3-8B, H100)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...units import dtype_bytes
from .model_config import ModelConfig
from .params import count_params, module_params
from .settings import NARROW, Settings, is_kept


@dataclass(frozen=True)
class Footprint:
    """Bytes resident on one device for `batch` sequences of `context` tokens: weights,
    the batch's KV cache and one prompt's prefill workspace (`activations`, once)."""

    batch: int
    context: int
    weights: float
    kv: float
    activations: float
    device_bytes: float | None = None
    # K and V (or MLA's latent) one token adds to one sequence's cache across the layers
    # held here, before any sliding window fills; kv = batch x context x this when no
    # layer has a window (kv_bytes_per_token)
    kv_per_token: float = 0.0
    # the sampler's fp32 logits of the decode batch, batch x vocab x 4 B (0 on a pipeline
    # stage without the LM head)
    logits: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.kv + self.activations + self.logits

    @property
    def fits(self) -> bool | None:
        return None if self.device_bytes is None else self.total <= self.device_bytes

    @property
    def kv_per_sequence(self) -> float:
        return self.kv / self.batch

    @property
    def max_batch(self) -> int | None:
        """The largest batch whose KV and decode logits fit beside the weights and the one
        prefill workspace: floor((memory - weights - activations) / (KV + logits per
        sequence)) (0 when the weights and workspace alone do not fit; None when the
        device memory is unknown)."""
        if self.device_bytes is None:
            return None
        free = self.device_bytes - self.weights - self.activations
        per_seq = self.kv_per_sequence + self.logits / self.batch
        return max(0, math.floor(free / per_seq)) if per_seq > 0 else None


def weight_bytes(cfg: ModelConfig, s: Settings) -> float:
    """Matrices at the weight dtype, except those stored unquantized (unquantized_params)
    at the checkpoint's own width (Settings.base); norm weights and biases at the
    activation dtype. The embedding table is a matrix here, group or block scales
    included (nvfp4: vocab x hidden x 0.5625 B), the bytes its gathered rows are read at
    (kernel_ops.embedding_bytes_per_param; s27: fp4's rows were a bare 0.5 B)."""
    p = count_params(cfg)
    if s.stored is not None:   # llama.cpp: each matrix as its tensors are stored
        mats = sum(n * s.stored.of(name) for name, n in module_params(cfg).items())
        return (mats + p.embedding * s.table_bytes + p.vector * s.vector_bytes
                + absorbed_copy_bytes(cfg, s))
    full = unquantized_params(cfg, s)
    return ((p.matrix - full) * s.weight_bytes + full * dtype_bytes(s.base)
            + p.vector * s.wide_bytes + absorbed_copy_bytes(cfg, s))


def absorbed_copy_bytes(cfg: ModelConfig, s: Settings) -> float:
    """MLA under quantized weights: the 16-bit W_UK / W_UV copies vLLM keeps for decode
    beside the quantized kv_b_proj (kernels.MLA_ABSORBED): layers x heads x (qk_nope +
    v_head) x kv_lora_rank x base bytes (DeepSeek-V3 bf16: 61 x 128 x 256 x 512 x 2 B =
    2.05 GB). 0 without MLA or quantized weights."""
    m = cfg.mla
    # llama.cpp's weights (a GGUF file, a ggml --weights type) have no copy: its MLA
    # multiplies by attn_k_b / attn_v_b as stored (llama-model.cpp, is_mla)
    if m is None or s.weights not in NARROW or s.stored is not None:
        return 0.0
    return (cfg.layers * cfg.heads * (m.qk_nope_head_dim + m.v_head_dim) * m.kv_lora_rank
            * dtype_bytes(s.base))


def unquantized_params(cfg: ModelConfig, s: Settings) -> int:
    """Matrix parameters a quantized checkpoint stores at full width: the modules it keeps
    (Settings.keep: lm_head, router, as kernels.py times them), and the embedding table
    where the config's quantization_config leaves it unquantized (Settings.embedding_kept).
    A tied lm_head kept keeps the one shared table."""
    if s.weights not in NARROW:     # nothing is quantized: nothing kept apart
        return 0
    kept = sum(n for name, n in module_params(cfg).items() if is_kept(name, s.keep))
    table = s.embedding_kept or (cfg.tied_embeddings and is_kept("lm_head", s.keep))
    return kept + (count_params(cfg).embedding if table else 0)


def kv_bytes_per_token_layer(cfg: ModelConfig, s: Settings) -> float:
    """K and V of each KV head (or MLA's compressed latent) of one token in one layer."""
    return cfg.kv_elems_per_token() * s.kv_bytes


def kv_bytes_per_token(cfg: ModelConfig, s: Settings) -> float:
    """What one token adds to one sequence's cache over all layers (seed 004: TinyLlama
    2 x 22 layers x 4 KV heads x 64 x 2 B = 22,528 B). Sliding-window layers stop growing
    once their window is full; kv_bytes_per_sequence counts that."""
    return kv_bytes_per_token_layer(cfg, s) * cfg.layers


def kv_bytes_per_sequence(cfg: ModelConfig, s: Settings, context: int) -> float:
    """K and V (or MLA's latent) of `context` tokens in every layer; sliding-window layers
    keep only their window."""
    per_token = kv_bytes_per_token_layer(cfg, s)
    return per_token * sum(cfg.kv_len(i, context) for i in range(cfg.layers))


def activation_bytes_per_sequence(cfg: ModelConfig, s: Settings, prompt: int) -> float:
    """Peak transient activations of one prompt's prefill (the workspace reserved once):
    the widest layer's input and output alive together, the naive score matrix when
    attention is not fused, and fp32 logits of the last position."""
    widths = [cfg.hidden, cfg.q_dim + 2 * cfg.kv_dim, 2 * cfg.intermediate]
    if cfg.moe:
        widths.append(2 * cfg.moe.intermediate * (cfg.moe.top_k + cfg.moe.shared))
    live = prompt * (cfg.hidden + max(widths)) * s.wide_bytes
    scores = 0 if s.flash else cfg.heads * prompt * prompt * s.wide_bytes
    return live + scores + cfg.vocab * 4.0


def decode_logits_bytes(cfg: ModelConfig, s: Settings, batch: int) -> float:
    """The sampler's fp32 logits of a decode batch: batch x vocab x 4 B (vLLM samples in
    fp32 whatever the model's dtype; Llama-3's 128,256 x 4 = 513,024 B a sequence). Under
    --tp `cfg` is one rank's shard, and the sampler sees the gathered logits: tp shards
    of ceil(vocab / tp), the whole vocabulary (LogitsProcessor._gather_logits). A verify
    step of Settings.decode_tokens = N query tokens scores N positions a sequence (the
    rejection sampler's target logits), so N rows each (review s21 x1 F1)."""
    return batch * s.decode_tokens * cfg.vocab * s.tp * 4.0


def footprint(cfg: ModelConfig, s: Settings, *, batch: int, context: int, prompt: int,
              device_bytes: float | None = None) -> Footprint:
    return Footprint(batch=batch, context=context, weights=weight_bytes(cfg, s),
                     kv=batch * kv_bytes_per_sequence(cfg, s, context),
                     activations=activation_bytes_per_sequence(cfg, s, prompt),
                     device_bytes=device_bytes, kv_per_token=kv_bytes_per_token(cfg, s),
                     logits=decode_logits_bytes(cfg, s, batch))
