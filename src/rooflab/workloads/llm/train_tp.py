"""Tensor parallelism of a training step (`rooflab train --tp N`): Megatron-LM's (Shoeybi
et al. 2019, arXiv:1909.08053) and its sequence parallelism (Korthikanti et al. 2022,
arXiv:2205.05198).

Per device: each layer's attention heads, KV heads and MLP columns split N ways (q, k, v,
gate and up column-parallel, o and down row-parallel), the embedding and the lm_head
vocab-parallel (parallel.shard: the kernels of one device's slice); norms and residual adds
run on every device over all tokens, or, with sequence parallelism, on 1/N of them.

Communication per micro-batch (Megatron's f and g operators, Shoeybi sec. 3, Fig. 3): each
layer all-reduces its b x s x h activation after attention and after the MLP in the forward
and two input gradients in the backward: 4 all-reduces per layer, 6 under --recompute full
(the recomputed forward repeats its 2). The vocab-parallel embedding all-reduces its output
in the forward, the lm_head's input gradient is all-reduced in the backward (2 more), and
the vocab-parallel cross-entropy all-reduces 3 fp32 values per token (the logits' max, the
target logit, the sum of exponentials). With sequence parallelism each all-reduce of the
activation becomes a reduce-scatter and an all-gather (Korthikanti sec. 4.2.2: the same
bytes on a ring). Each is timed on the ring (FACTS.md "Communication": 2(N-1) hops and
2(N-1)/N x bytes over the bus bandwidth for an all-reduce, half of both for the others)
and not overlapped with the compute: it adds to the step floor.

Memory (Korthikanti sec. 4, Table 2): weights, gradients and optimizer state of one
device's slice (the norms' replicated); the activations per layer 10 s b h + 24 s b h / N +
5 a s^2 b / N under TP (layer norms, the attention and MLP inputs and the dropout masks
stay whole), 34 s b h / N + 5 a s^2 b / N with sequence parallelism, here from the model's
own widths (train_memory's terms).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ...model.comm_link import Link, ring_hops
from ..count import OpCount
from .model_config import ModelConfig
from .train_dp import Collective
from .train_dp_comm import ring_s, sent_bytes

MEGATRON_SOURCE = ("Megatron-LM tensor parallelism (Shoeybi et al. 2019, arXiv:1909.08053, "
                   "sec. 3): 2 all-reduces per layer forward, 2 backward")
SP_SOURCE = ("sequence parallelism (Korthikanti et al. 2022, arXiv:2205.05198, sec. 4.2.2): "
             "each all-reduce a reduce-scatter and an all-gather, the same ring bytes")
LOSS_VALUES = 3       # vocab-parallel cross-entropy: max, target logit, sum of exp per token
LOSS_VALUE_BYTES = 4  # fp32 each
# the element-wise kernels sequence parallelism splits over the sequence (norms, the
# residual adds; the final norm too)
SP_KINDS = ("rmsnorm", "layernorm", "add")


def check_tp(cfg: ModelConfig, tp: object) -> None:
    """--tp N: an integer >= 1 that divides the attention heads and the KV heads (Megatron
    splits both; InputError with the divisors that do)."""
    if not isinstance(tp, int) or isinstance(tp, bool) or tp < 1:
        raise InputError(f"--tp must be an integer >= 1 (tensor-parallel devices), e.g. --tp "
                         f"8; got {tp!r}")
    if tp == 1:
        return
    for what, n in (("attention heads", cfg.heads), ("KV heads", cfg.kv_heads)):
        if n % tp:
            ok = [d for d in range(2, n + 1) if cfg.heads % d == 0 and cfg.kv_heads % d == 0]
            raise InputError(f"--tp {tp} must divide the {n} {what} of {cfg.name} (Megatron "
                             f"splits them across the tensor-parallel devices); give --tp "
                             f"{' or '.join(map(str, ok[:6])) if ok else '1'}")


def device_config(cfg: ModelConfig, tp: int) -> ModelConfig:
    """One tensor-parallel device's slice of the model (parallel.shard, after check_tp)."""
    if tp == 1:
        return cfg
    from .parallel import shard

    check_tp(cfg, tp)
    return shard(cfg, tp)


def sp_split(op: OpCount, tp: int) -> OpCount:
    """A norm's or residual add's forward kernel under sequence parallelism: 1/tp of the
    tokens, so 1/tp of its FLOP and activation bytes (the norm's weight read whole)."""
    from .train_ops import op_count

    split = dict(op.bytes_split)
    split["activations"] = split.get("activations", 0.0) / tp
    return op_count(op.name, op.op, op.flop / tp, split, op.precision, op.unit,
                    {**op.shape, "sequence_parallel": tp})


@dataclass(frozen=True)
class TPComm:
    """The tensor-parallel side of a step: N devices, sequence parallelism or not, the
    link, its collectives per optimizer step (none overlapped: all exposed)."""

    n: int
    sequence_parallel: bool
    link: Link
    collectives: tuple[Collective, ...]

    @property
    def comm_s(self) -> float:
        """Every collective's time per optimizer step, all of it on the step's floor."""
        return sum(c.seconds * c.calls for c in self.collectives)

    @property
    def link_bytes(self) -> float:
        """Bytes each device sends per optimizer step."""
        return sum(c.sent * c.calls for c in self.collectives)


def tp_collectives(cfg: ModelConfig, setup, link: Link, dies: int = 1
                   ) -> tuple[Collective, ...]:
    """The collectives of one optimizer step (module docstring): per layer, the
    embedding and lm_head, the loss; each `calls` per optimizer step (x --accumulate).
    `dies`: ranks per device (model.dies.software_devices: an MI250X package is 2 GCDs,
    each a rank), so each ring runs over tp x dies ranks, as `rooflab llm --tp` times it
    (workloads/llm/parallel.TPResult.ring)."""
    n, acc = setup.tp * max(1, dies), setup.accumulate
    act = setup.tokens * cfg.hidden * setup.width       # b x s x h at the activations' dtype
    per_layer = 6 if setup.recompute == "full" else 4

    def one(name: str, kind: str, nbytes: float, calls: int) -> Collective:
        # its one launch's hops (ring_s counts them), which the file keeps apart so that
        # whatif re-times the bandwidth alone (s38 H: it scaled them, 9.69 ms of a
        # --hop-latency-us 10 row train counts in 12.4 ms)
        hops = ring_hops(n) if kind == "all-reduce" else ring_hops(n) // 2
        return Collective(name, kind, nbytes, calls, ring_s(link, nbytes, n, kind), 0.0,
                          sent_bytes(nbytes, n, kind), "none",
                          latency_s=hops * link.hop_latency_s if nbytes > 0 and n > 1
                          else 0.0)

    out = []
    for where, calls in (("layers", per_layer * cfg.layers * acc),
                         ("embedding_lm_head", 2 * acc)):
        if setup.sequence_parallel:
            out += [one(f"tp.reduce_scatter.{where}", "reduce-scatter", act, calls),
                    one(f"tp.all_gather.{where}", "all-gather", act, calls)]
        else:
            out.append(one(f"tp.allreduce.{where}", "all-reduce", act, calls))
    out.append(one("tp.allreduce.loss", "all-reduce", setup.tokens * LOSS_VALUE_BYTES,
                   LOSS_VALUES * acc))
    norms = replicated_norm_params(cfg, setup.sequence_parallel)
    if norms:     # once per optimizer step, after the last micro-batch's backward
        out.append(one("tp.allreduce.norm_grads", "all-reduce",
                       norms * norm_grad_width(setup), 1))
    return tuple(out)


def norm_grad_width(setup) -> int:
    """Bytes per norm gradient tp.allreduce.norm_grads moves: --grad-dtype's where given
    (setup.grad_width), else Megatron-LM's main_grad. _allreduce_layernorm_grads reduces
    param.main_grad, a view of DDP's gradient buffer, whose dtype is `torch.float if
    ddp_config.grad_reduce_in_fp32 else param.dtype`
    (megatron/core/distributed/distributed_data_parallel.py); megatron/training/training.py
    sets grad_reduce_in_fp32 from --accumulate-allreduce-grads-in-fp32, which
    megatron/training/arguments.py (validate_args) turns on for --bf16 ("bfloat16 requires
    gradient accumulation and all-reduce to be done in fp32", unless --grad-reduce-in-bf16)
    and leaves off for --fp16. So: bf16 4 B, fp16 2 B, fp32 and tf32 4 B."""
    if setup.grad_dtype is not None:
        return setup.grad_width
    return 2 if setup.dtype == "fp16" else 4


def replicated_norm_params(cfg: ModelConfig, sequence_parallel: bool) -> int:
    """The norm parameters whose gradients Megatron-LM all-reduces across the TP group
    once per optimizer step (megatron/core/distributed/finalize_model_grads.py,
    _allreduce_layernorm_grads, "All-reduce layernorm grads (for sequence parallelism)":
    every parameter marked `sequence_parallel` (the norms' weights and biases, which see
    only 1/N of the tokens under sequence parallelism), and q_layernorm / k_layernorm
    always under TP; one coalesced all-reduce of the grads as kept, main_grad): with
    --sequence-parallel every norm (2 per layer + the final one, params.count_params'
    norms, q/k norms included), else the q/k norms alone (Qwen3's), else 0."""
    from .params import count_params

    if sequence_parallel:
        return count_params(cfg).norms
    return cfg.layers * 2 * cfg.head_dim if cfg.qk_norm else 0


def with_tp(r, link: Link):
    """A TrainResult (train.run_train's, at setup.tp) with its TPComm; r where tp is 1."""
    from dataclasses import replace

    st = r.setup
    if st.tp < 2:
        return r
    # setup.tp counts ranks: on an MI250X the dies of --tp N packages (train_dies)
    return replace(r, tp=TPComm(st.tp, st.sequence_parallel, link,
                                tp_collectives(r.config, st, link)))


def replicated_bytes(cfg: ModelConfig, sbh: float, w: float, dropout: bool) -> float:
    """A layer's activations Megatron's TP keeps whole on every device (Korthikanti's
    10 s b h at w = 2 with dropout): the attention and MLP inputs, each norm's input and
    the two dropout masks (1 B each)."""
    return w * sbh * (2 + cfg.norms_per_layer) + (2 * sbh if dropout else 0.0)
