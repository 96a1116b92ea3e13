"""The memory of one training step on one device: weights and gradients at --dtype (16-bit
under mixed precision, 4 B under fp32/tf32), the optimizer's fp32 state
(TrainSetup.optimizer_spec) and the activations the backward needs.

Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", section 4.1), whose per-layer count for a GPT-3 layer (16-bit
activations, 4h MLP, dropout) is s b h (34 + 5 a s / h) bytes: attention 11 s b h + 5 a s^2 b,
MLP 19 s b h, the two layer norms 4 s b h. Here the same terms are taken from the model's
own widths (GQA's narrower K and V, a gated MLP's three tensors of its intermediate width,
MoE's routed rows), at 2 B per element (w below; 4 B under --dtype fp32/tf32):

  attention: its input (2sbh), Q, K, V (2sb(q + 2 kv)), the output o_proj reads (2sbq);
    naive attention also keeps softmax's output (2 a s^2 b); flash keeps no s x s tensor,
    only its logsumexp (4 a s b);
  MLP: its input (2sbh) and its intermediates: gated (SwiGLU) gate, up and their product
    (6 s b i), else the activation's input and output (4 s b i); a MoE layer's routed
    experts (top_k of them per token) each keep their gathered input rows (Hugging Face's
    per-expert `hidden_states[top_x]`, Megatron's permuted tokens: 2 s b h x top_k) and
    their outputs, which the product with the routing weights saves for the weights'
    gradient (2 s b h x top_k), and the router's fp32 softmax (4 s b E);
  norms: each norm's input (2sbh per norm);
  dropout masks (1 B per element: 2 s b h per layer, and a s^2 b for naive attention) only
    where `dropout` (GPT-3's count; Llama-style pretraining runs without dropout); naive
    attention's dropout also keeps its output: a s^2 b (2 w + 1) bytes of scores.

With dropout and the GPT-3 shapes this is Korthikanti's 34 s b h + 5 a s^2 b exactly.
Selective recompute drops the 5 a s^2 b (attention's core is recomputed); full recompute
keeps each layer's input (2 s b h) and one layer's activations while it is recomputed.
Outside the layers: the final norm's input, the lm_head's input and the loss's peak over the
logits, LOSS_PEAK_BYTES each, as Hugging Face's causal-LM loss runs it (transformers
loss_utils.ForCausalLMLoss: `logits = logits.float()`, then F.cross_entropy =
log_softmax + nll_loss): the forward holds the 16-bit logits the lm_head returned (2 B),
their fp32 copy (4 B) and log_softmax's saved fp32 output (4 B): 10 B; the backward's first
step holds the saved output (4 B), nll_loss's dense fp32 gradient (4 B) and
log_softmax's input gradient (4 B), the model output freed (as HF's Trainer frees it
before backward): 12 B, the larger. --loss fused (Liger's chunked cross-entropy,
train_loss) keeps one chunk's logits, its dX buffer and the loss vector instead; a loop
that keeps `outputs.logits` through the backward 2 B more. With fp32
logits (--dtype fp32) `.float()` copies nothing: the forward holds 4 + 4 B, the backward
still 12 B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .model_config import ModelConfig
from .params import count_params
from .train import TrainSetup
from .train_dp import zero_state_bytes
from .train_loss import fused_loss_peak_bytes

ACT_BYTES = 2           # 16-bit activations (mixed precision); TrainSetup.width in general
LOSS_PEAK_BYTES = 12    # per logit, the loss's peak on Hugging Face's path (docstring)
ROUTER_BYTES = 4        # the router's fp32 softmax per token and expert


@dataclass(frozen=True)
class TrainMemory:
    """Bytes on one device during the step; device_bytes None where unknown."""

    params: int
    weights: float
    grads: float
    optimizer: float
    activations: float
    per_layer: float             # one layer's saved activations under the step's recompute
    outside_layers: float        # final norm, lm_head input, logits
    device_bytes: float | None

    @property
    def states(self) -> float:
        """Weights, gradients and optimizer state: what no batch or recompute shrinks."""
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> float:
        return self.states + self.activations

    @property
    def fits(self) -> bool | None:
        return None if self.device_bytes is None else self.total <= self.device_bytes


def layer_activation_bytes(cfg: ModelConfig, batch: int, seq: int, attn: str = "flash",
                           recompute: str = "none", dropout: bool = False,
                           width: float = ACT_BYTES) -> float:
    """One layer's saved activations in bytes (module docstring); width: bytes per
    activation element (2 mixed precision, 4 fp32)."""
    sbh = seq * batch * cfg.hidden
    full = _layer_full(cfg, batch, seq, attn, dropout, width)
    if recompute == "full":
        return width * sbh
    if recompute == "selective" and attn == "naive":
        return full - _scores_bytes(cfg, batch, seq, dropout, width)
    return full


def _layer_full(cfg: ModelConfig, b: int, s: int, attn: str, dropout: bool,
                w: float) -> float:
    sb, h = s * b, cfg.hidden
    if cfg.mla:
        m = cfg.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        qkv, o = cfg.heads * (2 * qk + m.v_head_dim), cfg.heads * m.v_head_dim
    else:
        qkv, o = cfg.q_dim + 2 * cfg.kv_dim, cfg.q_dim
    attention = w * sb * (h + qkv + o)
    attention += (_scores_bytes(cfg, b, s, dropout, w) if attn == "naive"
                  else 4 * cfg.heads * sb)
    mlp = w * sb * h + sb * _mlp_bytes(cfg, w)
    norms = w * sb * h * cfg.norms_per_layer
    masks = 2 * sb * h if dropout else 0     # after attention and after the MLP, 1 B each
    return attention + mlp + norms + masks


def _mlp_bytes(cfg: ModelConfig, w: float) -> float:
    """Saved MLP intermediates per token (bytes), averaged over dense and MoE layers; a MoE
    layer's also its routed rows' gathered inputs and outputs and the router's softmax
    (module docstring)."""
    per = 3 if cfg.gated_mlp else 2
    dense = w * per * cfg.intermediate
    if not cfg.moe or not cfg.moe_layers:
        return dense
    moe = cfg.moe
    routed = w * per * moe.intermediate * (moe.top_k + moe.shared)
    routed += 2 * w * moe.top_k * cfg.hidden + ROUTER_BYTES * moe.experts
    share = cfg.moe_layers / cfg.layers
    return share * routed + (1 - share) * dense


def _scores_bytes(cfg: ModelConfig, b: int, s: int, dropout: bool, w: float) -> float:
    """Naive attention's s x s tensors: softmax's output (w B), with dropout also its mask
    (1 B) and output (w B): at w = 2 Korthikanti's 5 a s^2 b."""
    return cfg.heads * s * s * b * (2 * w + 1 if dropout else w)


def train_memory(cfg: ModelConfig, setup: TrainSetup, device_bytes: float | None,
                 dropout: bool = False) -> TrainMemory:
    """One device's memory; under --tp N its slice of the model (train_tp)."""
    if setup.tp > 1:
        return _tp_memory(cfg, setup, device_bytes, dropout)
    params = count_params(cfg).total
    b, s, w = setup.batch, setup.seq, setup.width
    per_layer = layer_activation_bytes(cfg, b, s, setup.attn, setup.recompute, dropout, w)
    acts = per_layer * cfg.layers
    if setup.recompute == "full":   # one layer's whole set, live while it is recomputed
        acts += _layer_full(cfg, b, s, setup.attn, dropout, w)
    outside = 2 * w * s * b * cfg.hidden + loss_peak_bytes(cfg, setup)
    return _memory(params, setup, per_layer, acts, outside, device_bytes)


def _memory(params: int, setup: TrainSetup, per_layer: float, acts: float, outside: float,
            device_bytes: float | None) -> TrainMemory:
    state = setup.optimizer_spec()[0]
    w = setup.width
    # --dp N --zero S: each device holds its shard of the states (train_dp, ZeRO Fig. 1)
    weights, grads, opt = zero_state_bytes(params, w, state, setup.dp, setup.zero,
                                           setup.grad_width)
    return TrainMemory(params=params, weights=weights, grads=grads,
                       optimizer=opt, activations=acts + outside,
                       per_layer=per_layer, outside_layers=outside,
                       device_bytes=device_bytes)


def _tp_memory(cfg: ModelConfig, setup: TrainSetup, device_bytes: float | None,
               dropout: bool) -> TrainMemory:
    """Under --tp N (Korthikanti et al. 2022, Table 2): the device's slice of the
    weights, gradients and state; per layer its slice of the split activations and the
    replicated ones whole (10 s b h + 24 s b h / N + 5 a s^2 b / N at GPT-3's shapes), all
    of them / N with --sequence-parallel (34 s b h / N + 5 a s^2 b / N); the lm_head's
    logits and the loss over its 1/N of the vocabulary."""
    from .train_tp import device_config, replicated_bytes

    n, sp = setup.tp, setup.sequence_parallel
    dev = device_config(cfg, n)
    b, s, w = setup.batch, setup.seq, setup.width
    sbh = s * b * cfg.hidden
    seq_share = 1 / n if sp else 1.0    # what SP leaves of a replicated tensor
    full = _layer_full(dev, b, s, setup.attn, dropout, w)
    full -= replicated_bytes(cfg, sbh, w, dropout) * (1 - seq_share)
    per_layer = full
    if setup.recompute == "full":       # the layer's input, 1/N of it under SP
        per_layer = w * sbh * seq_share
    elif setup.recompute == "selective" and setup.attn == "naive":
        per_layer = full - _scores_bytes(dev, b, s, dropout, w)
    acts = per_layer * cfg.layers + (full if setup.recompute == "full" else 0.0)
    outside = 2 * w * sbh * seq_share + loss_peak_bytes(dev, setup)
    return _memory(count_params(dev).total, setup, per_layer, acts, outside, device_bytes)


def loss_peak_bytes(cfg: ModelConfig, setup: TrainSetup) -> float:
    """The loss's peak over the logits: 12 B per logit on Hugging Face's eager path
    (module docstring); --loss fused (train_loss): one chunk's logits, the dX buffer and
    the fp32 loss vector."""
    tokens = setup.batch * setup.seq
    if setup.loss == "fused":
        return fused_loss_peak_bytes(tokens, cfg.vocab, cfg.hidden, setup.width)
    return LOSS_PEAK_BYTES * tokens * cfg.vocab


def largest_batch(cfg: ModelConfig, setup: TrainSetup, device_bytes: float) -> int:
    """The largest --batch whose step fits (0: none); the activations grow in proportion
    to the batch, the states do not."""
    one = train_memory(cfg, replace(setup, batch=1), device_bytes)
    free = device_bytes - one.states
    n = max(0, int(free // one.activations)) if one.activations > 0 else 0
    # --loss fused: its chunk of logits rounds up to a power of two of tokens, so the
    # proportion can overshoot; step down to a batch that fits
    while setup.loss == "fused" and n > 0 and not train_memory(
            cfg, replace(setup, batch=n), device_bytes).fits:
        n -= 1
    return n


def zero3_devices(mem: TrainMemory) -> int | None:
    """Devices that ZeRO-3 / FSDP full sharding needs to hold the step: each keeps 1/N of
    the weights, gradients and optimizer state and its own micro-batch's activations
    (Rajbhandari et al. 2020, sec. 5.3: 16 Psi / N per device with AdamW), so N = the
    smallest with states / N + activations <= the device (the gathered layer's weights
    and communication buffers not counted); None where the activations alone exceed it."""
    if mem.device_bytes is None or mem.activations >= mem.device_bytes:
        return None
    return max(1, math.ceil(mem.states / (mem.device_bytes - mem.activations)))


def zero3_least(cfg: ModelConfig, setup: TrainSetup,
                device_bytes: float) -> tuple[int, str, float] | None:
    """(devices, the settings, state bytes each) of the smallest ZeRO-3 / FSDP sharding at
    the smallest activation footprint: --recompute full, --batch 1 (--accumulate keeping
    the tokens per step), or both, the fewest changes on a tie; None where no change of
    these needs fewer devices than the step as given (review s27 v3-F8: 25 H100s for
    llama-2-7b at batch 4 x 4096, where --recompute full needs 2)."""
    setup = replace(setup, dp=1, zero=0)     # counted from the unsharded states
    now = zero3_devices(train_memory(cfg, setup, device_bytes))
    tries = []
    if setup.recompute != "full":
        tries.append(("--recompute full", replace(setup, recompute="full")))
    if setup.batch > 1:
        keep = f" --accumulate {setup.batch * setup.accumulate}"
        tries.append(("--batch 1" + keep, replace(setup, batch=1)))
        if setup.recompute != "full":
            tries.append((f"--recompute full --batch 1{keep}",
                          replace(setup, batch=1, recompute="full")))
    best = None
    for words, tried in tries:
        mem = train_memory(cfg, tried, device_bytes)
        n = zero3_devices(mem)
        if n is not None and (best is None or n < best[0]):
            best = (n, words, mem.states / n)
    return best if best is not None and (now is None or best[0] < now) else None
