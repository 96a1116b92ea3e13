"""One training step of a transformer on the roof: forward (the prefill kernels at q_len =
seq, with the lm_head and the loss on every position), backward, activation recompute
and the optimizer step, each kernel at max(FLOP / P, bytes / B) (timing.time_step, as
`rooflab llm`); MFU by PaLM's model FLOPs, HFU with the recomputed FLOP.

    from rooflab.workloads.llm import load_config
    from rooflab.workloads.llm.train import TrainSetup, run_train
    r = run_train(load_config("tinyllama-1.1b"), load_roof("H100"),
                  TrainSetup(batch=1, seq=1024))
    r.floor_s, r.tokens_per_s, r.mfu_at_floor, r.mfu(step_s=0.02)

Model FLOPs (PaLM, Chowdhery et al. 2022, appendix B): 6 N + 12 L H Q T per token, N the
parameters a token's matmuls use (all but the input embedding table and learned
positions; a tied lm_head counted; MoE: the active experts), L layers, H heads, Q the head
dimension, T the sequence (a sliding-window layer: its window). PaLM counts the full T x T
scores (ATTENTION_FLOPS "full", the default: the historical MFU, as PaLM, nanoGPT's
`estimate_mfu`, torchtitan and Narayanan et al. 2021 publish it); "causal" counts the half
the causal kernels compute, as Megatron-LM's `num_floating_point_operations` does now
("Only half of the attention matrix is non-zero"). Under "full" the MFU at the floor can
pass 100 % at long sequences (the numerator counts scores no kernel computes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ..count import OpCount
from .kernel_ops import linear
from .kernels import Step, StepOp, prefill_step
from .model_config import ModelConfig
from .params import count_params
from .settings import Settings
from .timing import StepTiming, fallback_notes
from .train_clip import grad_pass_meta, grad_passes
from .train_dies import rank_roof
from .train_loss import FUSED_BWD, LOSSES, fuse_loss, fused_meta
from .train_ops import as_training as _as_training
from .train_ops import backward, dgamma_meta, loss, op_count, recomputed
from .train_peak import with_peak

RECOMPUTE = ("none", "selective", "full")
# bf16, fp16: mixed precision (16-bit weights, gradients and activations, fp32 optimizer
# state); fp32: none (everything IEEE fp32, TF32 off: a CPU step, or a GPU one with
# allow_tf32 off); tf32: fp32 storage with the matmuls on TF32 tensor cores
# (torch.set_float32_matmul_precision("high"))
DTYPES = ("bf16", "fp16", "fp32", "tf32")
MIXED = ("bf16", "fp16")
# --grad-dtype: the gradients' type under --dp (cli/comm_options.TRAIN_DTYPES)
GRAD_DTYPES = ("bf16", "fp16", "fp32")
ATTENTION_FLOPS = ("full", "causal")
# Mixed-precision optimizer state per parameter beside the 16-bit weights and gradients
# (ZeRO, Rajbhandari et al. 2020, section 3.1: "mixed-precision Adam ... K = 12": an fp32
# master copy, momentum and variance; 2 + 2 + 12 = 16 B per parameter). SGD with
# momentum keeps the fp32 master and one fp32 momentum: 8 B.
OPTIMIZERS = {
    # name: (state bytes per parameter, bytes the step moves per parameter, FLOP per
    # parameter, words). AdamW reads the 16-bit gradient (2), master, m and v (12) and
    # writes master, m, v (12) and the 16-bit weight copy (2): 28 B. Its math per
    # parameter: m (3), v (4), the bias-corrected update with sqrt and eps (5), weight
    # decay (2), the update (1): 15 FLOP. SGD: reads grad (2), master and momentum (8),
    # writes master, momentum (8) and the 16-bit copy (2): 20 B; 6 FLOP (momentum 2,
    # weight decay 2, update 2).
    "adamw": (12, 28, 15, "AdamW, mixed precision: fp32 master, m and v (12 B/param, ZeRO "
                          "paper's K = 12; 16 B/param with the bf16 weights and "
                          "gradients); the step reads 14 and writes 14 B/param"),
    "sgd": (8, 20, 6, "SGD with momentum, mixed precision: fp32 master and momentum "
                      "(8 B/param; 12 B/param with the 16-bit weights and gradients); the "
                      "step reads 10 and writes 10 B/param"),
}
# Without mixed precision (--dtype fp32, tf32) the fp32 weights are the master copy: no
# separate one. AdamW keeps m and v (8 B/param); its step reads p, g, m, v (4 B each, 16)
# and writes p, m, v (12): 28 B/param. SGD keeps the momentum (4 B); reads p, g, buf (12),
# writes p, buf (8): 20 B. The FLOP are mixed precision's. With the 4 B weights and
# gradients: 16 and 12 B/param, the same totals as mixed precision's.
OPTIMIZERS_FP32 = {
    "adamw": (8, 28, 15, "AdamW, fp32 (no mixed precision): m and v (8 B/param; 16 B/param "
                         "with the fp32 weights, their own master copy, "
                         "and gradients); the step reads p, g, m, v (16) and writes p, m, v "
                         "(12 B/param)"),
    "sgd": (4, 20, 6, "SGD with momentum, fp32 (no mixed precision): the momentum (4 "
                      "B/param; 12 B/param with the fp32 weights and gradients); the step "
                      "reads p, g, momentum (12) and writes p, momentum (8 B/param)"),
}


@dataclass(frozen=True)
class TrainSetup:
    """The step's options: per-device micro-batch and sequence, dtype of the weights,
    gradients and activations (DTYPES: mixed precision or fp32), attention kernel,
    recompute, optimizer."""

    batch: int = 1
    seq: int = 2048
    dtype: str = "bf16"
    attn: str = "flash"
    recompute: str = "none"
    optimizer: str = "adamw"
    accumulate: int = 1          # micro-batches per optimizer step (gradient accumulation)
    attention_flops: str = "full"
    dp: int = 1                  # data-parallel devices, each running --batch (train_dp)
    zero: int = 0                # ZeRO stage over them (train_dp.zero_state_bytes)
    loss: str = "eager"          # eager (HF: logits in memory) | fused (Liger, train_loss)
    clip_grad: bool = False      # clip_grad_norm_'s two passes (train_clip)
    # --dp: the type the gradients are held and reduced in (None: the storage dtype's)
    grad_dtype: str | None = None
    tp: int = 1                  # tensor-parallel devices (train_tp: Megatron-LM's)
    sequence_parallel: bool = False   # Korthikanti et al. 2022's, under --tp N > 1
    # ranks per --dp/--tp device: a catalog package's dies (an MI250X: 2, each a rank on
    # its own die, train_dies.per_rank); dp and tp above then count ranks, not packages
    dies: int = 1

    def __post_init__(self) -> None:
        for name, v, what, eg in (("--batch", self.batch, "sequences per micro-batch", 8),
                                  ("--seq", self.seq, "tokens per sequence", 2048),
                                  ("--accumulate", self.accumulate, "micro-batches per "
                                   "optimizer step", 8)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InputError(f"{name} must be an integer >= 1 ({what}), e.g. "
                                 f"{name} {eg}; got {v!r}")
        _one_of(self.recompute, RECOMPUTE, "--recompute")
        _one_of(self.optimizer, tuple(OPTIMIZERS), "--optimizer")
        _one_of(self.dtype, DTYPES, "--dtype")
        _one_of(self.attn, ("flash", "naive"), "--attn")
        _one_of(self.attention_flops, ATTENTION_FLOPS, "--attention-flops")
        _one_of(self.loss, LOSSES, "--loss")
        if self.grad_dtype is not None:
            _one_of(self.grad_dtype, GRAD_DTYPES, "--grad-dtype")
        if not isinstance(self.clip_grad, bool):
            raise InputError(f"--clip-grad is a flag (true or false); got {self.clip_grad!r}")
        from .train_dp import check_dp

        check_dp(self.dp, self.zero)
        self._check_tp()
        from .size_limits import check_sizes

        check_sizes(self)     # dies; devices, --seq, tokens per step in range (s36 J)

    def _check_tp(self) -> None:
        """--tp N (>= 1), --sequence-parallel only with N > 1, no --loss fused under TP
        (Liger's chunked loss is not vocab-parallel): InputError with the fix."""
        tp = self.tp
        if not isinstance(tp, int) or isinstance(tp, bool) or tp < 1:
            raise InputError(f"--tp must be an integer >= 1 (tensor-parallel devices), "
                             f"e.g. --tp 8; got {tp!r}")
        if self.sequence_parallel and tp < 2:
            raise InputError("--sequence-parallel splits the norms' tokens over the "
                             "tensor-parallel devices: give --tp N with N >= 2 (e.g. --tp 8 "
                             "--sequence-parallel), or drop it")
        if tp > 1 and self.loss == "fused":
            raise InputError(f"--loss fused with --tp {tp}: Liger's chunked lm_head and "
                             f"cross-entropy is not vocab-parallel (Megatron's "
                             f"vocab_parallel_cross_entropy is what --tp models); drop "
                             f"--loss fused or --tp")

    @property
    def dp_devices(self) -> int:
        """--dp as given: packages where a package is several dies (dies > 1 and no TP:
        each of its dies a data-parallel rank), else dp."""
        return self.dp // self.dies if self.tp == 1 else self.dp

    @property
    def tp_devices(self) -> int:
        """--tp as given: packages where a package is several dies (the TP group's ranks
        are all their dies), else tp."""
        return self.tp // self.dies if self.tp > 1 else 1

    @property
    def tokens(self) -> int:
        """Tokens per micro-batch (one forward and backward)."""
        return self.batch * self.seq

    @property
    def step_tokens(self) -> int:
        """Tokens per optimizer step: the micro-batch's x --accumulate."""
        return self.tokens * self.accumulate

    @property
    def mixed(self) -> bool:
        """Mixed precision: 16-bit weights, gradients and activations, fp32 optimizer
        state with a master copy of the weights."""
        return self.dtype in MIXED

    @property
    def storage(self) -> str:
        """The dtype weights, gradients and activations are stored at (tf32: fp32)."""
        return self.dtype if self.mixed else "fp32"

    @property
    def width(self) -> int:
        """Bytes per weight, gradient and activation element."""
        return 2 if self.mixed else 4

    @property
    def grad_width(self) -> int:
        """Bytes per gradient element the --dp collectives move and each device holds:
        --grad-dtype's (fp32 4, bf16/fp16 2), else width."""
        if self.grad_dtype is None:
            return self.width
        return 4 if self.grad_dtype == "fp32" else 2

    def optimizer_spec(self) -> tuple[int, int, int, str]:
        """(state B/param, B/param the step moves, FLOP/param, words): OPTIMIZERS under
        mixed precision, OPTIMIZERS_FP32 without."""
        return (OPTIMIZERS if self.mixed else OPTIMIZERS_FP32)[self.optimizer]

    def settings(self) -> Settings:
        d = self.storage
        return Settings(weights=d, act=d, kv=d, attn=self.attn, base=d)


def _one_of(value: str, allowed: tuple[str, ...], option: str) -> None:
    if value not in allowed:
        raise InputError(f"{option} must be one of {', '.join(allowed)}; got '{value}'")


@dataclass(frozen=True)
class TrainStep:
    """The step's kernels by part (forward, recompute, backward, optimizer), in run order."""

    forward: tuple[StepOp, ...]
    recompute: tuple[StepOp, ...]
    backward: tuple[StepOp, ...]
    optimizer: tuple[StepOp, ...]

    @property
    def ops(self) -> tuple[StepOp, ...]:
        return self.forward + self.recompute + self.backward + self.optimizer

    def part_of(self, name: str) -> str:
        for part in ("forward", "recompute", "backward", "optimizer"):
            if any(o.op.name == name for o in getattr(self, part)):
                return part
        raise KeyError(name)


def build_train_step(cfg: ModelConfig, setup: TrainSetup) -> TrainStep:
    """The step's kernels on one device: under --tp N its slice of the model
    (train_tp.device_config), the norms and residual adds on 1/N of the tokens with
    --sequence-parallel."""
    from .train_tp import SP_KINDS, device_config, sp_split

    cfg = device_config(cfg, setup.tp)
    s = setup.settings()
    pre = prefill_step(cfg, s, setup.batch, setup.seq)
    fwd = []
    for o in pre.ops:
        if o.op.name == "lm_head":    # training scores every position, not the last only
            o = StepOp(linear("lm_head", setup.tokens, cfg.hidden, cfg.vocab, s), 1, "model")
        op = _math(_as_training(o.op), setup)
        if setup.sequence_parallel and op.op in SP_KINDS:
            op = sp_split(op, setup.tp)
        fwd.append(StepOp(op, o.calls, o.scope))
    # the loss reads the logits at the model dtype (a fused cross-entropy upcasts in
    # registers)
    fwd.append(StepOp(loss(setup.tokens, cfg.vocab, s.wide_bytes, s.math_precision), 1,
                      "model"))
    rec = [StepOp(recomputed(o.op), o.calls, o.scope) for o in fwd
           if _recomputed(o, setup)]
    # --grad-dtype: the dW the backward writes, the optimizer's read of it and the passes
    # over it move the gradients' bytes (fp32 main_grad under bf16: 4 B, not 2)
    g = (setup.grad_width / setup.width, setup.accumulate)    # and each dW's += (s36 N)
    bwd = [StepOp(b, o.calls, o.scope) for o in reversed(fwd) for b in backward(o.op, *g)]
    if setup.loss == "fused":    # Liger's chunked lm_head + cross-entropy (train_loss)
        fwd, bwd = fuse_loss(fwd, bwd, setup.width)
    params = count_params(cfg).total
    if setup.zero >= 1:      # ZeRO-1..3: each device steps its 1/N shard (padded up)
        params = -(-params // setup.dp)
    _, moved, flop, _ = setup.optimizer_spec()
    moved += setup.grad_width - setup.width     # the spec reads the gradient at width
    # a streaming element-wise pass over every parameter: report's lever table knows the
    # kind (fusion, multi-tensor apply), as it knows no "optimizer"
    opt = op_count(f"optimizer.{setup.optimizer}", "elementwise", flop * params,
                   {"weights": moved * params}, "fp32", "vector",
                   {"params": params, "bytes_per_param": moved, "flop_per_param": flop})
    n = setup.accumulate      # forward + backward per micro-batch, the optimizer once
    fwd, rec, bwd = ([StepOp(o.op, o.calls * n, o.scope) for o in part]
                     for part in (fwd, rec, bwd))
    grads = grad_passes(params, setup.grad_width, setup.dtype, setup.clip_grad)
    return TrainStep(tuple(fwd), tuple(rec), tuple(bwd), grads + (StepOp(opt, 1, "model"),))


def _math(op: OpCount, setup: TrainSetup) -> OpCount:
    """--dtype tf32: the fp32 matmuls (linears, attention; their backward and recompute
    inherit it) on the TF32 tensor ceiling; the rest stays fp32 (TF32 is a matmul mode)."""
    if setup.dtype != "tf32" or op.unit != "tensor" or op.precision != "fp32":
        return op
    return replace(op, precision="tf32")


def _recomputed(o: StepOp, setup: TrainSetup) -> bool:
    """Full: the whole forward of every layer again (Megatron's full recompute keeps each
    layer's input); selective (Korthikanti et al. 2022): attention's core only, which
    flash attention's backward recomputes already (no kernel added)."""
    if setup.recompute == "full":
        return o.scope == "layer"
    if setup.recompute == "selective":
        return o.op.op in ("attention_scores", "softmax", "attention_values")
    return False


def palm_flop_per_token(cfg: ModelConfig, seq: int,
                        attention: str = "full") -> tuple[float, float, int]:
    """(6 N, the attention term, N) of PaLM's model FLOPs per token (module docstring);
    attention "causal": each query's keys as the causal kernels count them (on average
    (T + 1) / 2, a window's rows capped at the window)."""
    pc = count_params(cfg)
    n = pc.active - pc.embedding + (cfg.vocab * cfg.hidden if cfg.tied_embeddings else 0)
    if cfg.mla:
        m = cfg.mla
        qk, v = m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim
    else:
        qk = v = cfg.head_dim
    attn = 0.0
    for layer in range(cfg.layers):
        w = cfg.sliding_window if layer in cfg.sliding_layers else None
        keys = causal_keys(seq, w) if attention == "causal" else min(seq, w or seq)
        # 12 L H Q T when qk = v = Q: 2 matmuls x 2 FLOP x 3 (forward, 2x backward)
        attn += 6.0 * cfg.heads * (qk + v) * keys
    return 6.0 * n, attn, n


def causal_keys(seq: int, window: int | None) -> float:
    """Keys per query on average under a causal mask (query i sees min(i + 1, window))."""
    w = min(window or seq, seq)
    return (w * (w + 1) / 2 + (seq - w) * w) / seq


@dataclass(frozen=True)
class TrainResult:
    """A step on one roof: its timing (timing.StepTiming over all kernels), MFU's model
    FLOPs, the recomputed FLOP HFU adds, and the roof's peak for both."""

    config: ModelConfig
    setup: TrainSetup
    step: TrainStep
    timing: StepTiming
    model_flop: float           # PaLM's, per step
    recompute_flop: float       # the recompute kernels' and flash backward's S = Q K^T
    n_params: int               # PaLM's N
    peak_flop_per_s: float
    peak_label: str
    notes: tuple[str, ...]
    dp: Any = None              # train_dp.DPResult under --dp N > 1
    tp: Any = None              # train_tp.TPComm under --tp N > 1

    @property
    def comm_exposed_s(self) -> float:
        """The communication the step waits for: --dp's exposed part, --tp's all of it
        (not overlapped)."""
        return ((self.dp.exposed_s if self.dp is not None else 0.0)
                + (self.tp.comm_s if self.tp is not None else 0.0))

    @property
    def floor_s(self) -> float:
        """The kernels' floors, plus under --dp the communication the compute leaves
        exposed and under --tp its collectives."""
        return self.timing.floor_s + self.comm_exposed_s

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second per optimizer step (--accumulate micro-batches), of all --dp
        devices together."""
        return self.setup.step_tokens * self.setup.dp / self.floor_s

    @property
    def with_launches_s(self) -> float:
        """timing's floor with the launches, plus the exposed communication (--dp)."""
        return self.timing.with_launches_s + self.comm_exposed_s

    @property
    def counted_flop(self) -> float:
        return self.timing.step.flop

    @property
    def mfu_at_floor(self) -> float:
        return self.mfu(self.floor_s)

    def mfu(self, step_s: float) -> float:
        return self.model_flop / step_s / self.peak_flop_per_s

    def hfu(self, step_s: float) -> float:
        return (self.model_flop + self.recompute_flop) / step_s / self.peak_flop_per_s

    def part_s(self, part: str) -> float:
        names = {o.op.name for o in getattr(self.step, part)}
        return sum(p.floor_s for p in self.timing.points if p.kernel in names)


# The optimizer's state is fp32 whatever the math runs at (mixed precision): `whatif
# --precision fp8` and `--quantize` on a training file leave it (kernels.py's marks).
OPTIMIZER_HELD = "the optimizer's master weights and state stay fp32 under mixed precision"


# The dW kernels' mark (meta weight_gradient): `whatif --quantize` leaves the gradients
# they write at the training dtype (review s27 v3-F7: int4 dW writes were counted).
WEIGHT_GRADIENT = ("writes the weight gradient (its `weights` bytes) at the gradients' dtype "
                   "(--grad-dtype's, else the training dtype)")


def _timed(step: Step, ts: TrainStep, roof, setup: TrainSetup) -> StepTiming:
    """timing.time_step's analysis, each kernel's meta naming its part of the step and the
    optimizer's marked as held at fp32 (and under ZeRO, as sharded already)."""
    from ...model.analysis import analyze
    from .train_dp import shard_meta

    kernels = []
    for k in step.kernels():
        part = ts.part_of(k.name)
        meta = {**k.meta, "train_part": part}
        if part == "optimizer":
            meta.update(weight_dtype="fp32", held_unquantized=OPTIMIZER_HELD,
                        model_dtype_parts=["weights", "activations", "kv"])
            # the gradient passes (clip, fp16 unscale) at the gradients' dtype
            meta.update(grad_pass_meta(k.name, step.weight_dtype))
            meta.update(shard_meta(k.name, setup))
        elif part == "backward" and (k.name.endswith(".bwd_dw") or k.name == FUSED_BWD
                                     or k.meta.get("op") == "embedding"):
            # its `weights` bytes are the dW it writes (fused: scales), not weights it reads
            meta["weight_gradient"] = WEIGHT_GRADIENT
            meta["grad_bytes"] = setup.grad_width   # whatif --precision keeps it (whatif_grads)
        elif part == "backward" and k.meta.get("op") in ("rmsnorm", "layernorm"):
            # its `weights`: gamma read and dgamma written; dgamma keeps the grads' width
            meta.update(dgamma_meta(k.meta.get("bytes_split"), setup.width,
                                    setup.grad_width, WEIGHT_GRADIENT))
        meta.update(fused_meta(k.name))     # --loss fused: whatif --quantize leaves it
        kernels.append(k.with_(meta=meta))
    return StepTiming(step=step, analysis=analyze(roof, kernels, levels=("DRAM",)))


def run_train(cfg: ModelConfig, roof, setup: TrainSetup) -> TrainResult:
    """The step's kernels on the roof, with MFU's and HFU's numerators."""
    roof, setup = rank_roof(cfg, roof, setup)   # an MI250X: one rank's, on one die
    ts = build_train_step(cfg, setup)
    step = Step(phase="train", batch=setup.batch, q_len=setup.seq, context=setup.seq,
                ops=ts.ops, layers=cfg.layers, weight_dtype=setup.storage)
    timing = _timed(step, ts, roof, setup)
    per_token, attn, n = palm_flop_per_token(cfg, setup.seq, setup.attention_flops)
    flash_redo = sum(o.flop for o in ts.forward if o.op.op == "attention") * 0.5
    # fp32: the fp32 tensor ceiling where the roof has one (MI300X's matrix cores), else
    # fp32 vector (the matmuls' own, TF32 off); tf32: the TF32 tensor ceiling
    peak, peak_note = roof.compute_for(setup.dtype, "tensor")
    notes = with_peak(fallback_notes(timing), peak_note)
    # MFU per device: 1/tp of the model FLOPs (each device runs 1/tp of every matmul)
    return TrainResult(cfg, setup, ts, timing,
                       (per_token + attn) * setup.step_tokens / setup.tp,
                       sum(o.flop for o in ts.recompute) + flash_redo, n, peak.value,
                       peak.label, notes)

