"""The kernels of one training step, counted from the forward's (kernels.build_step's
prefill): each forward kernel's backward, the recomputed forward, the loss and the
optimizer step. Pure functions of OpCounts; train.py assembles the step.

Backward rules (said once; docs/train.md):
  * a matmul Y = A B has two in its backward, dA = dY B^T and dB = A^T dY, each of the
    forward's shape: 2x its FLOP; each reads one saved operand and dY and writes one
    gradient, so together 2x the forward's bytes. A linear's are two rows, `.bwd_dx`
    (reads W and dY, writes dX) and `.bwd_dw` (reads the saved X and dY, writes dW at the
    gradients' width, --grad-dtype's else the weights', in the `weights` bytes: it does
    not grow with the batch; an fp32 gradient under bf16 is Megatron-LM's main_grad, which
    the dW GEMM accumulates into: read and written, dw_passes).
  * flash attention's backward is FlashAttention-2's (Dao 2023, Algorithm 2): five
    matmuls to the forward's two, the scores S = Q K^T recomputed from Q, K and the saved
    logsumexp: 2.5x the forward FLOP; it reads Q, K, V, O, dO and the logsumexp and writes
    dQ, dK, dV (2x the forward's bytes plus the logsumexp).
  * naive attention's two matmuls follow the matmul rule; its softmax's backward reads
    P and dP and writes dS (1.5x the forward's bytes).
  * norms: read x, dy (and gamma), write dx (and dgamma): 1.5x the forward's activation
    bytes, 2x its weight bytes (dgamma's at the gradients' width); 2x its FLOP (an
    assumption: these kernels are memory-bound).
  * element-wise: RoPE's backward is the inverse rotation and the residual add's the sum
    of the two branches' gradients (the forward's bytes and FLOP); an activation of k
    inputs reads dY and its k saved inputs and writes k gradients ((2k+1)/(k+1) x the
    forward's bytes), 2x its FLOP.
  * the embedding's backward scatter-adds dY into the gathered rows of the table's
    gradient (read and written: 2x the forward's weight bytes, at the gradients' width).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..count import OpCount

BYTE_MODEL = ("training step: compulsory traffic; a backward kernel reads what its forward "
              "saved, the output gradient and the weights, and writes the input gradients "
              "(and the weight gradients, in `weights`)")
# FLOP per element of the cross-entropy loss: log-softmax over the vocabulary (max,
# subtract, exp, sum: ops.softmax's 4) forward; softmax minus one-hot backward (exp,
# scale, subtract: 3)
LOSS_FLOP, LOSS_BWD_FLOP = 4, 3
LSE_BYTES = 4            # FlashAttention's saved logsumexp: one fp32 per head and query


def op_count(name: str, op: str, flop: float, split: Mapping[str, float], precision: str,
             unit: str | None, shape: Mapping | None = None) -> OpCount:
    split = {k: float(v) for k, v in split.items() if v}
    return OpCount(name=name, op=op, flop=float(flop), bytes=sum(split.values()),
                   precision=precision, unit=unit, bytes_split=split, byte_model=BYTE_MODEL,
                   shape=dict(shape or {}))


def as_training(op: OpCount) -> OpCount:
    """A forward kernel of the prefill count as training runs it: K and V are activations
    (no KV cache: the `kv` bytes move to `activations`), and flash attention also writes
    its logsumexp for the backward."""
    split = dict(op.bytes_split)
    kv = split.pop("kv", 0.0)
    split["activations"] = split.get("activations", 0.0) + kv
    if op.op == "attention" and op.shape.get("flash"):
        split["activations"] += _lse_bytes(op)
    return op_count(op.name, op.op, op.flop, split, op.precision, op.unit, op.shape)


def _lse_bytes(op: OpCount) -> float:
    sh = op.shape
    return LSE_BYTES * sh["batch"] * sh["heads"] * sh["q_len"]


def recomputed(op: OpCount) -> OpCount:
    """The same forward kernel run again before the backward (activation recompute)."""
    return op_count(f"{op.name}.recompute", op.op, op.flop, op.bytes_split, op.precision,
                    op.unit, op.shape)


def backward(op: OpCount, grad_scale: float = 1.0, micro: int = 1) -> tuple[OpCount, ...]:
    """The backward kernels of one (training) forward kernel, by the module docstring's
    rules; () for one without a backward. `grad_scale`: bytes per weight-gradient element
    over the weights' (--grad-dtype fp32 under bf16: 2): the dW a linear, a norm or the
    embedding writes is held at the gradients' type (Megatron-LM accumulates it into its
    fp32 main_grad), while the weights they read stay at theirs. `micro`: --accumulate's
    micro-batches, whose dW add into the gradient (accumulated)."""
    return tuple(accumulated(b, micro, grad_scale) for b in _backward(op, grad_scale))


def accumulated(op: OpCount, micro: int, grad_scale: float) -> OpCount:
    """A backward kernel under --accumulate `micro`, per call: a dW that writes its
    gradient (a linear's at the weights' width, a norm's dgamma) adds into it in micro - 1
    of the step's micro-batches, reading it first (C += X^T dY, beta 1): (micro - 1) /
    micro of its gradient bytes read more per call, micro - 1 reads per step (s36 N: not
    counted before, a note said so). llama-2-7b q_proj.bwd_dw, bf16, --accumulate 4: 33.6
    MB written + 3/4 x 33.6 MB read per call. A main_grad dW (dw_passes 2) reads it every
    micro-batch already; the embedding's scatter-add, too (2 x grad_scale)."""
    split = op.bytes_split
    if micro <= 1 or "weights" not in split:
        return op
    if op.name.endswith(".bwd_dw") and dw_passes(grad_scale) == 1:
        written = split["weights"]
    elif op.op in ("rmsnorm", "layernorm"):
        written = split["weights"] * grad_scale / (1 + grad_scale)   # gamma read, dgamma
    else:
        return op
    more = {**split, "weights": split["weights"] + written * (micro - 1) / micro}
    return op_count(op.name, op.op, op.flop, more, op.precision, op.unit, op.shape)


def _backward(op: OpCount, grad_scale: float = 1.0) -> tuple[OpCount, ...]:
    kind = op.op
    split = op.bytes_split
    if kind == "linear":
        return _linear_backward(op, grad_scale)
    if kind == "attention":        # flash (the naive path's kinds follow)
        lse = _lse_bytes(op) if op.shape.get("flash") else 0.0
        acts = 2 * (split.get("activations", 0.0) - lse) + lse
        return (_bwd(op, ".bwd", 2.5 * op.flop, {"activations": acts}),)
    if kind in ("attention_scores", "attention_values"):
        return (_bwd(op, ".bwd", 2 * op.flop, _scaled(split, 2)),)
    if kind == "softmax":
        return (_bwd(op, ".bwd", 2 * op.flop, _scaled(split, 1.5)),)
    if kind in ("rmsnorm", "layernorm"):
        return (_bwd(op, ".bwd", 2 * op.flop,
                     {"activations": 1.5 * split.get("activations", 0.0),
                      "weights": (1 + grad_scale) * split.get("weights", 0.0)}),)
    if kind in ("add", "rope"):
        return (_bwd(op, ".bwd", op.flop, split),)
    if kind == "embedding":
        sh = op.shape
        flop = sh["tokens"] * sh["hidden"] * (2 if "max_positions" in sh else 1)
        return (_bwd(op, ".bwd", flop, {"activations": split.get("activations", 0.0),
                                        "weights": 2 * grad_scale
                                        * split.get("weights", 0.0)}),)
    if kind == "loss":
        sh = op.shape
        logits = sh["tokens"] * sh["vocab"]
        return (_bwd(op, ".bwd", LOSS_BWD_FLOP * logits,
                     {"activations": 2 * logits * sh["logit_bytes"]}),)
    k = op.shape.get("inputs", 1)    # act, act_mul and any other element-wise kind
    return (_bwd(op, ".bwd", 2 * op.flop, _scaled(split, (2 * k + 1) / (k + 1))),)


def _linear_backward(op: OpCount, grad_scale: float = 1.0) -> tuple[OpCount, OpCount]:
    """dX reads W and dY and writes dX; dW reads X and dY and writes dW (and the bias
    gradient, the sum of dY over the rows): each moves the forward's bytes, at one width
    (training runs X, Y and W at --dtype), dW's at the gradients' (x grad_scale)."""
    sh, split = op.shape, op.bytes_split
    mm = 2.0 * sh["m"] * sh["k"] * sh["n"]
    bias = op.flop - mm                 # m x n: the bias add forward, its sum backward
    acts, weights = split.get("activations", 0.0), split.get("weights", 0.0)
    return (_bwd(op, ".bwd_dx", mm, {"weights": weights, "activations": acts}),
            _bwd(op, ".bwd_dw", mm + bias, {"weights": dw_passes(grad_scale) * grad_scale
                                            * weights, "activations": acts}))


def dw_passes(grad_scale: float) -> int:
    """Times a dW GEMM moves its gradient: a gradient wider than the weights (fp32 under
    bf16, grad_scale 2) is Megatron-LM's main_grad, which the wgrad GEMM accumulates into
    (gradient_accumulation_fusion: wgrad_gemm_accum_fp32, C += X^T dY, the buffer zeroed
    once per step): read and written, 2; a gradient at the weights' width is written, 1.
    llama-2-7b's q_proj.bwd_dw at --seq 4096, --grad-dtype fp32: 33.6 + 33.6 MB of X and
    dY, 4 + 4 B x 16.8 M of main_grad = 201 MB per layer (the write alone: 134 MB)."""
    return 2 if grad_scale > 1 else 1


def dgamma_meta(split: Mapping | None, width: float, grad_width: float, mark: str) -> dict:
    """A norm backward's weight-gradient meta (model/whatif_grads.GRAD_PART): its `weights`
    are gamma read (width) and dgamma written (grad_width), 1 + grad_scale of the
    forward's, so dgamma is grad_width / (width + grad_width) of them; {} for none."""
    w = (split or {}).get("weights")
    if not isinstance(w, (int, float)) or w <= 0:
        return {}
    return {"weight_gradient": mark, "grad_bytes": grad_width,
            "weight_grad_bytes": w * grad_width / (width + grad_width)}


def _bwd(op: OpCount, suffix: str, flop: float, split: Mapping[str, float]) -> OpCount:
    return op_count(op.name + suffix, op.op, flop, split, op.precision, op.unit,
                    {**op.shape, "backward_of": op.name})


def _scaled(split: Mapping[str, float], factor: float) -> dict[str, float]:
    return {key: v * factor for key, v in split.items()}


def loss(tokens: int, vocab: int, logit_bytes: float, precision: str) -> OpCount:
    """Cross-entropy over every position's logits: reads them, writes one fp32 loss per
    token."""
    logits = tokens * vocab
    return op_count("loss", "loss", LOSS_FLOP * logits,
                    {"activations": logits * logit_bytes + 4 * tokens}, precision, "vector",
                    {"tokens": tokens, "vocab": vocab, "logit_bytes": logit_bytes})
