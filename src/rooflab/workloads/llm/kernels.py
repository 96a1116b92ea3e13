"""Per-kernel FLOP and bytes of one decode step or one prefill, from a ModelConfig.

Byte model: compulsory traffic (each input read once, each output written once), split into
`weights` (parameters), `activations` and `kv` (KV-cache reads and writes; kv_written tells
them apart: a projection writes, attention reads). Weights are read
once per step for the whole batch (LLM-Viewer's weight/activation/KV split, Kipply's
"Transformer Inference Arithmetic"). One multiply-add is 2 FLOP everywhere, lm_head included.

Conventions, said once:
  * decode: `context` is the number of tokens in the KV cache that the new token attends to
    (itself included); the new token's K and V are written by k_proj/v_proj (counted as kv).
  * attention under GQA reads each KV head once (flash) — not once per query head.
  * causal prefill under flash counts the unmasked scores, P(P+1)/2 per head (about half);
    naive (eager) attention computes, writes and re-reads the dense, masked P x P scores.
  * MLA decode runs in the compressed latent space with the up-projections absorbed
    (DeepSeek-V2 paper, arXiv:2405.04434, section 2.1.2); MLA prefill decompresses K and V.
  * norms, softmax, element-wise ops and the embedding come from workloads.ops (RMSNorm 4
    FLOP/element, LayerNorm 7, softmax 4), re-split into weights / activations / kv; RoPE
    counts 3 FLOP/element, an activation 2 (+1 for the gating multiply), a residual add 1.
  * attention FLOP are the two matmuls, 4*d per computed score (FlashAttention's count,
    as ops.attention); the naive path adds a softmax kernel.
  * prefill's lm_head runs on the last position of each sequence only.
  * Qwen3's q_norm / k_norm are RMSNorms of each head over head_dim (rows = tokens x heads,
    one head_dim gamma), counted as the norm kernel is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ...model.kernel import Kernel
from ..count import OpCount
from .eager import EAGER_HF_LAYER_KERNELS  # noqa: F401 (its old home: tests import it here)
from .kernel_ops import attention, elementwise, embedding, linear, norm
from .model_config import ModelConfig
from .settings import Settings, is_kept

# what a what-if reads off each kernel of a step (its meta marks), MLA's absorbed kernels
# among them: step_marks.py
from .step_marks import (
    MLA_ABSORBED,
    absorbed_kept,
    absorbed_settings,
    kernel_marks,
    out_shares,
    per_param,
)

# ACT_FLOP: 2 per element whatever hidden_act says (silu, gelu_new; not read): the row is
# memory-bound on every roof, so tanh-GELU's ~8 or SiLU's ~4 would move no floor
ROPE_FLOP, ACT_FLOP, GATE_FLOP = 3, 2, 1


@dataclass(frozen=True)
class StepOp:
    """One kernel of a step: `op` counts a single call; it runs `calls` times per step."""

    op: OpCount
    calls: int
    scope: str = "layer"      # layer (once per layer using it) | model (once per step)

    @property
    def flop(self) -> float:
        return self.op.flop * self.calls

    @property
    def bytes(self) -> float:
        return self.op.bytes * self.calls

    def split(self, key: str) -> float:
        return self.op.bytes_split.get(key, 0.0) * self.calls

    @property
    def kv_write(self) -> float:
        """KV-cache bytes written, all calls (kv_written)."""
        return kv_written(self.op) * self.calls

    @property
    def kv_read(self) -> float:
        """KV-cache bytes read, all calls: the kv bytes that are not written."""
        return self.split("kv") - self.kv_write

    def kernel(self) -> Kernel:
        return self.op.scaled(self.calls).kernel(calls=self.calls)


@dataclass(frozen=True)
class Step:
    """All kernels of one decode step (batch x 1 token) or one prefill (batch x prompt)."""

    phase: str
    batch: int
    q_len: int
    context: int
    ops: tuple[StepOp, ...]
    layers: int = 1
    weight_dtype: str | None = None     # Settings.weights, for tools that re-quantize
    # Settings.keep and .base: kernels whose weights stay unquantized (lm_head), and at what
    kept: tuple[str, ...] = ()
    kept_dtype: str = "fp16"
    # (kernel, bytes per weight as stored: group scales, zero points and a ggml type's
    # blocks included) of the kernels with weights, so that whatif --quantize scales from
    # the bytes the step counted (review s26 r3 F3: int4 group 32 read as a bare 0.5 B)
    per_param: tuple[tuple[str, float], ...] = ()
    # (linear, share of its activations bytes that is its output, at the model dtype):
    # whatif --precision fp8 narrows the GEMM input only, as llm --act fp8 (s26 v1-F2)
    out_share: tuple[tuple[str, float], ...] = ()
    # kernels held at 16-bit whatever the weights (MLA_ABSORBED as vLLM runs them); none
    # under llama.cpp's weights, whose attn_k_b / attn_v_b are stored and re-quantized as
    # any matrix (Settings.stored; review s27 v2-F3)
    held: tuple[str, ...] = MLA_ABSORBED

    @property
    def flop(self) -> float:
        return sum(o.flop for o in self.ops)

    @property
    def bytes(self) -> float:
        return sum(o.bytes for o in self.ops)

    @property
    def bytes_split(self) -> dict[str, float]:
        keys = ("weights", "activations", "kv")
        return {k: sum(o.split(k) for o in self.ops) for k in keys}

    @property
    def kv_read_bytes(self) -> float:
        """KV-cache bytes the step reads (attention over the cache); with kv_write_bytes
        they make bytes_split["kv"]."""
        return sum(o.kv_read for o in self.ops)

    @property
    def kv_write_bytes(self) -> float:
        """KV-cache bytes the step writes: the new tokens' K and V (MLA: latent), the part
        that grows the cache."""
        return sum(o.kv_write for o in self.ops)

    @property
    def ai(self) -> float:
        return self.flop / self.bytes

    @property
    def launches(self) -> int:
        """Kernel launches per step, one per kernel call (a fused implementation's count;
        eager PyTorch launches more: RMSNorm and RoPE are several small ops each)."""
        return sum(o.calls for o in self.ops)

    def per_layer_kernels(self) -> float:
        """Kernel launches per transformer layer."""
        return sum(o.calls for o in self.ops if o.scope == "layer") / self.layers

    def eager_launches(self) -> int:
        """Launches per step of eager HF generate, an estimate: EAGER_HF_LAYER_KERNELS per
        layer plus the step's kernels outside the layers (embedding, final norm, lm_head,
        counted as in `launches`; generate's own sampling kernels are not counted)."""
        layer_calls = sum(o.calls for o in self.ops if o.scope == "layer")
        return EAGER_HF_LAYER_KERNELS * self.layers + self.launches - layer_calls

    def kernels(self) -> tuple[Kernel, ...]:
        """The ops as Kernels; meta carries the step's batch and weight dtype so that
        `rooflab whatif --batch/--quantize` on an llm JSON scales from them (without them
        it assumes batch 1 and weights in the math precision)."""
        extra = {"batch": self.batch}
        if self.weight_dtype:
            extra["weight_dtype"] = self.weight_dtype
        kept = {"batch": self.batch, "weight_dtype": self.kept_dtype}
        per, out = dict(self.per_param), dict(self.out_share)
        return tuple(k.with_(meta={**k.meta, **(kept if is_kept(k.name, self.kept) else extra),
                                   **kernel_marks(k.name, k.meta.get("op"), per, out,
                                                  is_kept(k.name, self.kept),
                                                  k.name in self.held)})
                     for k in (o.kernel() for o in self.ops))

    def op(self, name: str) -> StepOp:
        for o in self.ops:
            if o.op.name == name:
                return o
        raise KeyError(name)


def kv_written(op: OpCount) -> float:
    """KV-cache bytes one call writes. A projection's kv bytes are its output (k_proj,
    v_proj: the new tokens' K and V; MLA's kv_a_proj: the latent), stored into the cache;
    every other op's kv bytes are the cache read (attention). LLM-Viewer's
    store_kv_cache / load_kv_cache."""
    return op.bytes_split.get("kv", 0.0) if op.op == "linear" else 0.0


def _attention_block(cfg: ModelConfig, s: Settings, batch: int, q_len: int, kv_len: int,
                     prefill: bool, window: int | None) -> list[OpCount]:
    """q/k/v projections, RoPE, attention, o_proj for one layer."""
    t = batch * q_len
    h = cfg.hidden
    causal = True
    if cfg.mla is None:
        rope = ([elementwise("rope", t * (cfg.q_dim + cfg.kv_dim), s, flop_per_element=ROPE_FLOP,
                             op="rope")] if cfg.positions == "rope" else [])
        ops = [linear("q_proj", t, h, cfg.q_dim, s, bias=cfg.qkv_bias),
               linear("k_proj", t, h, cfg.kv_dim, s, bias=cfg.qkv_bias, out_kv=True),
               linear("v_proj", t, h, cfg.kv_dim, s, bias=cfg.qkv_bias, out_kv=True)]
        if cfg.qk_norm:   # Qwen3: RMSNorm of each head's q and k over head_dim, one gamma
            ops += [norm("q_norm", t * cfg.heads, cfg.head_dim, cfg, s),
                    norm("k_norm", t * cfg.kv_heads, cfg.head_dim, cfg, s)]
        ops += rope
        ops += attention("", batch=batch, heads=cfg.heads, q_len=q_len, kv_len=kv_len,
                         qk_dim=cfg.head_dim, v_dim=cfg.head_dim,
                         kv_token_bytes=2 * cfg.kv_dim * s.kv_bytes, s=s, causal=causal,
                         **_masked(cfg, window))
        return ops + [linear("o_proj", t, cfg.q_dim, h, s, bias=cfg.out_bias or cfg.o_bias)]
    m = cfg.mla
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    if m.q_lora_rank:
        ops = [linear("q_a_proj", t, h, m.q_lora_rank, s),
               norm("q_a_norm", t, m.q_lora_rank, cfg, s),
               linear("q_b_proj", t, m.q_lora_rank, cfg.heads * qk, s)]
    else:
        ops = [linear("q_proj", t, h, cfg.heads * qk, s)]
    latent = m.kv_lora_rank + m.qk_rope_head_dim
    ops += [linear("kv_a_proj", t, h, latent, s, out_kv=True),
            norm("kv_a_norm", t, m.kv_lora_rank, cfg, s),
            elementwise("rope", t * (cfg.heads + 1) * m.qk_rope_head_dim, s,
                        flop_per_element=ROPE_FLOP, op="rope")]
    if prefill:   # decompress the latent into per-head K (nope part) and V, then attend
        ops.append(linear("kv_b_proj", t, m.kv_lora_rank,
                          cfg.heads * (m.qk_nope_head_dim + m.v_head_dim), s))
        ops += attention("", batch=batch, heads=cfg.heads, q_len=q_len, kv_len=kv_len,
                         qk_dim=qk, v_dim=m.v_head_dim, s=s, causal=causal, **_masked(cfg, window),
                         kv_token_bytes=cfg.heads * (qk + m.v_head_dim) * s.wide_bytes,
                         kv_is_cache=False)
    else:         # absorbed: q_nope through W_UK, attend over the latent, out through W_UV
        # each head has its own W_UK / W_UV slice: `heads` distinct weight slices are read,
        # 16-bit copies under quantized weights (MLA_ABSORBED)
        sa = absorbed_settings(s)
        ops.append(linear("q_absorb", t * cfg.heads, m.qk_nope_head_dim, m.kv_lora_rank, sa,
                          weight_rows=cfg.heads))
        ops += attention("", batch=batch, heads=cfg.heads, q_len=q_len, kv_len=kv_len,
                         qk_dim=latent, v_dim=m.kv_lora_rank, s=s, causal=causal,
                         kv_token_bytes=latent * s.kv_bytes, **_masked(cfg, window))
        ops.append(linear("v_absorb", t * cfg.heads, m.kv_lora_rank, m.v_head_dim, sa,
                          weight_rows=cfg.heads))
    return ops + [linear("o_proj", t, cfg.heads * m.v_head_dim, h, s)]


def _mlp(cfg: ModelConfig, s: Settings, t: float, width: int, prefix: str = "",
         weight_rows: float = 1.0, routed: float | None = None) -> list[OpCount]:
    """gate/up -> act(*) -> down. `routed`: tokens x top_k going through the experts."""
    rows = routed if routed is not None else t
    kw: dict = dict(weight_rows=weight_rows)
    if routed is not None and cfg.moe:   # gpt-oss's experts carry biases (MoE.bias)
        kw.update(experts=cfg.moe.experts, top_k=cfg.moe.top_k, bias=cfg.moe.bias)
    if cfg.gated_mlp:
        return [linear(f"{prefix}gate_proj", rows, cfg.hidden, width, s, **kw),
                linear(f"{prefix}up_proj", rows, cfg.hidden, width, s, **kw),
                elementwise(f"{prefix}act_mul", rows * width, s, inputs=2,
                            flop_per_element=ACT_FLOP + GATE_FLOP, op="act_mul"),
                linear(f"{prefix}down_proj", rows, width, cfg.hidden, s, **kw)]
    kw["bias"] = kw.get("bias") or cfg.out_bias
    return [linear(f"{prefix}up_proj", rows, cfg.hidden, width, s, **kw),
            elementwise(f"{prefix}act", rows * width, s, flop_per_element=ACT_FLOP, op="act"),
            linear(f"{prefix}down_proj", rows, width, cfg.hidden, s, **kw)]


def _moe_block(cfg: ModelConfig, s: Settings, t: float) -> list[OpCount]:
    """Router, the experts the batch's tokens touch (expected count), shared experts."""
    moe = cfg.moe
    touched = moe.expected_distinct(t)
    ops = [linear("router", t, cfg.hidden, moe.experts, s, bias=moe.bias)]
    ops += _mlp(cfg, s, t, moe.intermediate, "expert_", weight_rows=touched,
                routed=t * moe.top_k)
    if moe.shared:
        ops += _mlp(cfg, s, t, moe.intermediate * moe.shared, "shared_")
    return ops


def build_step(cfg: ModelConfig, s: Settings, *, phase: str, batch: int, q_len: int,
               context: int) -> Step:
    """All kernels of one step. decode: q_len=1, context=tokens in the cache; prefill:
    q_len=context=prompt length."""
    t = batch * q_len
    prefill = phase == "prefill"
    h = cfg.hidden
    model_ops: list[StepOp] = []
    model_ops.append(StepOp(embedding(t, cfg, s), 1, "model"))
    # attention, grouped by the KV length each layer sees (sliding-window layers differ)
    groups = Counter(_layer_attention(cfg, i, context, prefill) for i in range(cfg.layers))
    layer_ops: list[StepOp] = []
    for (kv_len, window), n in sorted(groups.items(), key=lambda kv: -(kv[0][1] or 1e18)):
        # tagged beside full layers, or where every layer's window caps decode (Mistral)
        kind = "chunk" if cfg.chunked else "window"    # Llama 4: chunks of its RoPE layers
        tag = f" ({kind} {window})" if window and (len(groups) > 1 or kv_len < context) else ""
        # projections are the same in every layer: listed once; a window's attention rows
        # go right after the full layers' (before o_proj), where the kernel runs
        rows = [StepOp(_renamed(op, op.name + tag), n) if _is_attn(op) else
                StepOp(op, cfg.layers)
                for op in _attention_block(cfg, s, batch, q_len, kv_len, prefill, window)
                if _is_attn(op) or not layer_ops]
        at = [i + 1 for i, o in enumerate(layer_ops) if _is_attn(o.op)] if tag else []
        pos = at[-1] if at else len(layer_ops)
        layer_ops[pos:pos] = rows
    layer_ops = _dedupe(layer_ops)
    layer_ops.append(StepOp(elementwise("residual_add", t * h, s, inputs=2, op="add"),
                            2 * cfg.layers))
    layer_ops.append(StepOp(norm("norm", t, h, cfg, s), cfg.norms_per_layer * cfg.layers))
    dense = cfg.layers - cfg.moe_layers
    if dense:
        layer_ops += [StepOp(op, dense) for op in _mlp(cfg, s, t, cfg.intermediate)]
    if cfg.moe_layers:
        layer_ops += [StepOp(op, cfg.moe_layers) for op in _moe_block(cfg, s, t)]
    model_ops.append(StepOp(norm("final_norm", t, h, cfg, s), 1, "model"))
    # prefill: the last position's logits; decode: every query token's (a speculative
    # verify step scores each of its --decode-tokens)
    model_ops.append(StepOp(linear("lm_head", batch if prefill else t, h, cfg.vocab, s), 1,
                            "model"))
    return Step(phase=phase, batch=batch, q_len=q_len, context=context,
                ops=tuple(model_ops[:1] + layer_ops + model_ops[1:]), layers=cfg.layers,
                weight_dtype=s.weights,
                # the embedding table a quantization_config leaves unquantized is read at
                # s.base (embedding_rows): its meta says so, as whatif --quantize reads it
                kept=s.keep + ("embedding",) * s.embedding_kept + absorbed_kept(cfg, s),
                kept_dtype=s.base, per_param=per_param(model_ops + layer_ops, s),
                out_share=out_shares(model_ops + layer_ops, s),
                held=MLA_ABSORBED if s.stored is None else ())


def _layer_attention(cfg: ModelConfig, layer: int, context: int, prefill: bool
                     ) -> tuple[int, int | None]:
    """(KV tokens read, sliding window or None) of one layer's attention."""
    w = cfg.sliding_window if layer in cfg.sliding_layers else None
    if w is None or w >= context:
        return context, None
    return (context, w) if prefill else (cfg.kv_attended(layer, context), w)


def _masked(cfg: ModelConfig, window: int | None) -> dict[str, int | None]:
    """attention()'s mask keyword: a sliding window, or Llama 4's chunks."""
    return {"chunk": window} if cfg.chunked else {"window": window}


def _is_attn(op: OpCount) -> bool:
    return op.op.startswith("attention") or op.op == "softmax"


def _renamed(op: OpCount, name: str) -> OpCount:
    if name == op.name:
        return op
    return OpCount(name=name, op=op.op, flop=op.flop, bytes=op.bytes, precision=op.precision,
                   unit=op.unit, bytes_split=op.bytes_split, byte_model=op.byte_model,
                   shape=op.shape)


def _dedupe(ops: list[StepOp]) -> list[StepOp]:
    seen: dict[str, StepOp] = {}
    for o in ops:
        seen.setdefault(o.op.name, o)
    return list(seen.values())


def decode_step(cfg: ModelConfig, s: Settings, batch: int, context: int) -> Step:
    """One decode step: Settings.decode_tokens query tokens per sequence (1: plain decode)
    against `context` cached tokens, those new ones included."""
    return build_step(cfg, s, phase="decode", batch=batch, q_len=s.decode_tokens,
                      context=context)


def prefill_step(cfg: ModelConfig, s: Settings, batch: int, prompt: int) -> Step:
    return build_step(cfg, s, phase="prefill", batch=batch, q_len=prompt, context=prompt)
