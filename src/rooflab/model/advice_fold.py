"""Fold an inference BatchNorm into the convolution before it (review s28 R3 F11): with
running statistics, y = γ(x - μ)/σ + β is a per-channel scale and shift, which the conv
before it can apply to its weights and bias once, ahead of time (torch.ao.quantization.
fuse_modules, torch.fx's fuse, torch.compile's inference freezing, TensorRT). The kernel
and all of its bytes go; the conv's epilogue adds the folded bias it adds anyway. The
most common CNN inference optimisation, and "fuse with the neighbouring pass: 2x" undersold
it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..units import fmt_pct, fmt_seconds, fmt_times, si
from ..workloads.torch_rules.layer import batchnorm_per_element
from .advice_core import Advice, Efficiency
from .analysis import Point
from .element_dtype import element_bytes
from .kernel import Kernel
from .opkind import kernel_kind

# the eval-only batch norm ops: their name says inference
_EVAL_NAMES = ("_native_batch_norm_legit_no_training",)


def inference_batchnorm(kernel: Kernel | None) -> int | None:
    """The channel count of an inference-mode batch norm kernel, None for any other: a
    torch trace's batch norm (meta op batchnorm, shapes [input, ...]) counted at the eval
    rule's 4 FLOP per element (7 in training: torch_rules.layer.batchnorm_per_element), or
    one whose name says no_training."""
    if kernel is None or kernel_kind(kernel)[0] not in ("batchnorm", "batch_norm"):
        return None
    shapes = kernel.meta.get("shapes")
    x = shapes[0] if isinstance(shapes, Sequence) and shapes else None
    if not (isinstance(x, Sequence) and len(x) >= 2
            and all(isinstance(d, int) and d > 0 for d in x)):
        return None
    elements = 1
    for d in x:
        elements *= d
    per = kernel.total_flop / (elements * kernel.calls)
    eval_name = any(n in kernel.name for n in _EVAL_NAMES)
    return int(x[1]) if eval_name or abs(per - batchnorm_per_element(False)) < 1e-9 else None


def fold_advice(p: Point, e: Efficiency, kernel: Kernel | None) -> Advice | None:
    """Fold an inference batch norm into the conv before it: this kernel goes, launches and
    bytes; what stays is the per-channel bias the conv reads in its epilogue (C elements a
    call), its new_seconds. None for other kernels.

    The speed-up is the recorded step's, not the kernel's: a pass that disappears has no
    finite speed-up of its own (its 61.7 us over the bias read's 0.25 ns printed
    "2.46e+05x predicted"; session 29), while the step it belongs to, the kernels its time
    share (p.time_share) is of, loses its time: 1 / (1 - share + share x left / time),
    1.07x for a 6.4 % batch norm. A kernel alone in its file (share 1, or none known) is
    its own step: the kernel's ratio, as before."""
    channels = inference_batchnorm(kernel)
    if channels is None or e.seconds <= 0 or p.bytes_per_s <= 0:
        return None
    size = element_bytes(kernel, kernel.precision) or 4.0
    left = channels * size * kernel.calls
    t = left / p.bytes_per_s
    share = p.time_share if p.time_share is not None and 0 < p.time_share < 1 else 1.0
    step = 1.0 / (1.0 - share + share * t / e.seconds)
    of_step = (f"{fmt_pct(share)} of the recorded time: the step {fmt_times(step)} faster"
               if share < 1 else "the kernel alone is recorded: its own speed-up")
    return Advice(
        kernel=p.kernel,
        action="fold it into the preceding conv's weights and bias (the kernel goes)",
        detail=(f"an inference BatchNorm (running statistics) is a per-channel scale and "
                f"shift: scaled into the conv's filter and bias once, ahead of time, it "
                f"leaves no kernel: its {fmt_seconds(e.seconds)} and {si(p.bytes, 'B')} go, "
                f"{of_step} (torch.ao.quantization.fuse_modules([[conv, bn]]) or torch.fx "
                f"fusion, torch.compile with freezing, TensorRT; conv+BN+ReLU fold together)"),
        shrinks="along slope", new_ai=0.0, new_flop_per_s=0.0, new_seconds=t,
        speedup=step,
        assumption=(f"a conv runs just before it on the same tensor (a CNN's conv-BN pair; "
                    f"a BatchNorm after an add or a pool cannot fold); what stays is the "
                    f"folded bias, {channels} channels x {size:g} B a call, read by the "
                    f"conv's epilogue; "
                    + (f"the speed-up is the whole recorded step's ({fmt_seconds(e.seconds)} "
                       f"of its {fmt_seconds(e.seconds / share)} go), not this kernel's, "
                       f"which has no finite one" if share < 1 else
                       "the speed-up is this kernel's: the step around it is not recorded")))
