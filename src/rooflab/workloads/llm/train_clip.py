"""The passes over the gradients before the optimizer step: `--clip-grad` and fp16's loss
scaler. Each is a memory-bound element-wise pass over every parameter's gradient, at the
gradient's width (2 B under mixed precision, 4 B under fp32/tf32), with fp32 math
(PyTorch's opmath for 16-bit element-wise kernels); one launch each, as the optimizer pass
is counted (a multi-tensor apply).

  * `--clip-grad`: torch.nn.utils.clip_grad_norm_ (foreach, the default on CUDA):
    torch._foreach_norm reads every gradient once for the per-tensor norms (2 FLOP per
    element: square, add), then torch._foreach_mul_ scales them in place by
    min(1, max_norm / (total_norm + 1e-6)) (reads and writes each, 1 FLOP per element; it
    runs whether or not the norm exceeds max_norm, so that no host sync is needed). The
    total norm over the per-tensor norms and the coefficient are a few scalar kernels, not
    counted.
  * `--dtype fp16`: GradScaler.unscale_ (torch._amp_foreach_non_finite_check_and_unscale_)
    reads each gradient, multiplies it by 1 / scale, checks it for inf and NaN and writes
    it back (2 FLOP per element). GradScaler.step runs it whether or not the gradients are
    clipped (the AMP recipe calls it before clip_grad_norm_, step() otherwise), so it is
    counted for every fp16 step; bf16 needs no loss scaling. The scale's update and the
    found-inf sync are scalars, not counted.

Gradient zeroing is no kernel: optimizer.zero_grad() sets the gradients to None (PyTorch
>= 2.0, set_to_none=True), and the backward's first write allocates them.
"""

from __future__ import annotations

from .kernels import StepOp
from .train_ops import op_count

CLIP_NORM, CLIP_SCALE = "optimizer.clip_grad.norm", "optimizer.clip_grad.scale"
UNSCALE = "optimizer.grad_scaler.unscale"
# (name, FLOP per element, gradient passes: reads + writes)
_PASSES = {UNSCALE: (2, 2), CLIP_NORM: (2, 1), CLIP_SCALE: (1, 2)}
# whatif --precision words the held group by its first kernel's mark: these come first,
# so the words cover the optimizer's fp32 state too
GRAD_HELD = ("the optimizer part: the passes over the gradients before the step (clipping, "
             "fp16's unscale) move them at the training dtype, and the optimizer keeps its "
             "fp32 master weights and state under mixed precision")


def grad_passes(params: int, width: int, dtype: str, clip: bool) -> tuple[StepOp, ...]:
    """The gradient passes before the optimizer, in run order: fp16's unscale, then the
    clip's norm and scale (module docstring); () for a bf16/fp32 step without --clip-grad."""
    names = ([UNSCALE] if dtype == "fp16" else []) + ([CLIP_NORM, CLIP_SCALE] if clip
                                                      else [])
    ops = []
    for name in names:
        flop, passes = _PASSES[name]
        ops.append(StepOp(op_count(name, "elementwise", flop * params,
                                   {"weights": passes * width * params}, "fp32", "vector",
                                   {"params": params, "bytes_per_param": passes * width,
                                    "flop_per_param": flop, "grad_bytes": width}),
                          1, "model"))
    return tuple(ops)


def grad_pass_meta(name: str, storage: str) -> dict:
    """The meta of a gradient pass beside the optimizer's (train._timed marks the optimizer
    part): held, at the gradients' dtype, not the optimizer's fp32 state; {} for any other
    kernel."""
    if name not in _PASSES:
        return {}
    return {"weight_dtype": storage, "held_unquantized": GRAD_HELD}


def grad_pass_words(dtype: str, clip: bool) -> str:
    """The note on what the step counts between the backward and the optimizer."""
    said = []
    if dtype == "fp16":
        said.append("fp16's GradScaler.unscale_ (reads and writes every gradient, checks "
                    "inf/NaN; GradScaler.step runs it whether or not you clip)")
    if clip:
        said.append("--clip-grad: clip_grad_norm_'s norm (reads every gradient) and scale "
                    "(reads and writes every gradient)")
    counted = ("counted before the optimizer: " + "; ".join(said)) if said else \
        "no gradient clipping counted (--clip-grad counts clip_grad_norm_'s two passes)"
    return (counted + "; gradient zeroing is no kernel (zero_grad() sets the gradients to "
            "None, PyTorch >= 2.0); no dropout kernels counted")
