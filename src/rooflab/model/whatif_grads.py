"""`rooflab whatif --precision` on a training step's weight-gradient writes (`rooflab
train`: meta weight_gradient, the `.bwd_dw` rows, the embedding's backward, the fused
loss): their `weights` bytes are gradients, not the math's operands, so they do not take
the math's new element size. Gradients held at --grad-dtype apart from the training dtype
(meta grad_bytes differs from the storage's: fp32 main_grad under bf16, Megatron-LM) stay
at it whatever the math runs at; gradients at the training dtype follow it, but never
below 2 B (fp8 and fp4 recipes keep bf16 weight gradients: whatif_precision's
comm_in_precision, the collective's rule). A norm's backward (meta weight_grad_bytes)
writes its dgamma in part of its `weights` bytes, the rest the gamma it reads: only that
part keeps the gradients' width. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping

from ..units import dtype_bytes
from .element_dtype import stored_dtype
from .kernel import Kernel


def grad_width(k: Kernel) -> tuple[float, float] | None:
    """(bytes per gradient element k writes, its storage's) for a weight-gradient kernel
    with a bytes_split, None for any other: meta grad_bytes, else the storage's (a file
    from before train wrote it: its gradients at the training dtype)."""
    split = k.meta.get("bytes_split")
    if not k.meta.get("weight_gradient") or not isinstance(split, Mapping) \
            or not isinstance(split.get("weights"), (int, float)):
        return None
    named = k.meta.get("weight_dtype") or stored_dtype(k) or k.precision
    try:
        storage = float(dtype_bytes(str(named)))
    except (KeyError, ValueError):
        return None
    got = k.meta.get("grad_bytes")
    ok = isinstance(got, (int, float)) and not isinstance(got, bool) and got > 0
    return (float(got) if ok else storage), storage


def grads_kept(old: Kernel, new: Kernel, size: float) -> Kernel:
    """`new` (old under --precision of `size` bytes an element) with old's gradient bytes
    at the width the module docstring gives them: --grad-dtype's where held apart, else
    max(size, 2); old's other parts as `new` has them. `new` itself for other kernels."""
    widths = grad_width(old)
    split = new.meta.get("bytes_split")
    if widths is None or not isinstance(split, Mapping) \
            or not isinstance(split.get("weights"), (int, float)):
        return new
    grad, storage = widths
    held = is_held(grad, storage, old.meta)
    to = grad if held else follows_math(size)
    old_w = old.meta["bytes_split"]["weights"]
    part = _grad_part(old, old_w)
    # the rest of `weights` (a norm's gamma read) as the math's new size has it
    rest = (split["weights"] / old_w * (old_w - part)) if old_w else 0.0
    want = part * to / grad + rest
    delta = want - split["weights"]
    total = sum(new.bytes.values())
    extra = {GRAD_PART: part * to / grad} if GRAD_PART in old.meta else {}
    # the width and whether it is held said even where the bytes came out right (fp32 ->
    # 4 B): a whatif of this one read the old grad_bytes against the new dtype (s36 Q)
    meta = {**new.meta, "bytes_split": {**split, "weights": want}, "grad_bytes": whole(to),
            **extra, **({HELD: True} if held else {})}
    if total <= 0:
        return new
    # the gradient's bytes on each level in its share of the kernel's (one: DRAM)
    return new.with_(bytes={lv: b + delta * b / total for lv, b in new.bytes.items()},
                     meta=meta)


# The meta a kernel whose `weights` bytes are only partly its weight gradient gives that
# part in (`rooflab train`'s norm.bwd: dgamma written; the rest, gamma, read)
GRAD_PART = "weight_grad_bytes"


def _grad_part(k: Kernel, weights: float) -> float:
    """The bytes of k's bytes_split weights that are the gradient it writes: meta
    GRAD_PART where it is a number in [0, weights], else all of them (a dW row's)."""
    got = k.meta.get(GRAD_PART)
    ok = isinstance(got, (int, float)) and not isinstance(got, bool) and 0 <= got <= weights
    return float(got) if ok else float(weights)


def held_apart(k: Kernel) -> bool:
    """Whether a gradient collective (`rooflab train --dp`'s comm row) moves gradients
    held at --grad-dtype apart from the training dtype: meta grad_bytes differs from its
    storage dtype's (meta storage_dtype) bytes. They keep their width under --precision,
    as the dW kernels' do; a file without the marker (from before it) follows the math."""
    storage, got = storage_bytes(k), k.meta.get("grad_bytes")
    if storage is None or isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return is_held(float(got), storage, k.meta)


# The meta a whatif --precision output marks gradients held at --grad-dtype with, where
# their width no longer tells (a bf16 file's fp32 gradients under --precision fp32)
HELD = "grads_held"


def is_held(grad: float, storage: float, meta: Mapping) -> bool:
    """Whether gradients of `grad` bytes under a training dtype of `storage` bytes are held
    apart: marked so (HELD), or wider or narrower than the math's gradients would be (an
    fp8 step's 2 B gradients follow its math: follows_math)."""
    return meta.get(HELD) is True or float(grad) != follows_math(storage)


def storage_bytes(k: Kernel) -> float | None:
    """The bytes of the training dtype a communication row names (meta storage_dtype), None
    without one (a file from before train wrote it) or for a dtype rooflab does not know."""
    named = k.meta.get("storage_dtype")
    try:
        return float(dtype_bytes(named)) if isinstance(named, str) else None
    except (KeyError, ValueError):
        return None


# Gradients not held apart follow the math but stay at least 2 B a value: fp8 and fp4
# recipes write bf16 weight gradients (Transformer Engine) and reduce them in that dtype
MIN_GRAD_BYTES = 2.0


def whole(width: float) -> float | int:
    """A width in bytes as train writes meta grad_bytes: an int where whole (4, not 4.0:
    s36 R, a script comparing a whatif's file with train's saw the type differ)."""
    return int(width) if float(width).is_integer() else width


def follows_math(size: float) -> float:
    """The bytes a gradient (or a weight all-gather's) value moves under --precision of
    `size` bytes an element when its width is not held apart: max(size, 2)."""
    return max(float(size), MIN_GRAD_BYTES)
