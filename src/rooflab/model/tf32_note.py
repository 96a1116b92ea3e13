"""The TF32 note for fp32 convolutions moved onto a GPU that has a tf32 tensor ceiling
(an NVIDIA GPU since Ampere): PyTorch runs them on TF32 by default
(torch.backends.cudnn.conv.fp32_precision "tf32", the older cudnn.allow_tf32 True), so
the fp32 vector ceiling they are held to there is 8x too low on an A100 (review s28 R3
F7: a CPU trace moved by `whatif --hardware` / `choose` said nothing of it, while `ai
conv2d` does). Matmuls stay fp32 by default (cuda.matmul.allow_tf32 False): no note for
them. Depthwise convs run FMA, never TF32 (whatif_conv.is_depthwise). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..units import fmt_fraction, fmt_rate
from .ceiling import Roof
from .kernel import Kernel
from .opkind import kernel_kind
from .whatif_conv import is_depthwise


def tf32_convs(kernels: Sequence[Kernel]) -> list[Kernel]:
    """The fp32 conv kernels (forward and backward) PyTorch would run on TF32 on CUDA: meta
    or name kind conv, fp32 FLOP, not depthwise, no tensor unit already."""
    out = []
    for k in kernels:
        kind = kernel_kind(k)[0]
        if (kind.startswith("conv") and k.flop.get("fp32", 0.0) > 0
                and not is_depthwise(k) and k.unit != "vector"):
            out.append(k)
    return out


def tf32_note(kernels: Sequence[Kernel], roof: Roof) -> str | None:
    """A line for a roof with a tf32 tensor ceiling and fp32 convs among the kernels, saying
    what share of the FLOP they are and the two ceilings; None otherwise."""
    tf32 = next((c for c in roof.compute if c.precision == "tf32" and c.unit == "tensor"),
                None)
    convs = tf32_convs(kernels)
    if tf32 is None or not convs:
        return None
    fp32 = max((c.value for c in roof.compute if c.precision == "fp32"), default=None)
    total = sum(k.total_flop for k in kernels) or 1.0
    share = sum(k.flop["fp32"] for k in convs) / total
    held = f"the fp32 ceiling ({fmt_rate(fp32, 'fp32')})" if fp32 else "an fp32 ceiling"
    return (f"{len(convs)} fp32 conv kernel(s), {fmt_fraction(share)} of the FLOP, are held to "
            f"{held} on {roof.name}, but PyTorch runs fp32 convs on TF32 by default there "
            f"({tf32.label} {fmt_rate(tf32.value, 'tf32')}): their times are upper bounds; "
            f"they hold only with torch.backends.cudnn.conv.fp32_precision = 'ieee' (or "
            f"cudnn.allow_tf32 = False)")


def tf32_devices_note(kernels: Sequence[Kernel], roofs: Sequence[Roof]) -> str | None:
    """One line for `choose`: the devices among `roofs` with a tf32 tensor ceiling, each
    with it, where fp32 convs are among the kernels; None otherwise."""
    convs = tf32_convs(kernels)
    tf32 = [(r.name, c) for r in roofs
            for c in r.compute if c.precision == "tf32" and c.unit == "tensor"]
    if not convs or not tf32:
        return None
    total = sum(k.total_flop for k in kernels) or 1.0
    share = sum(k.flop["fp32"] for k in convs) / total
    where = ", ".join(f"{name} ({fmt_rate(c.value, 'tf32')})" for name, c in tf32)
    return (f"{len(convs)} fp32 conv kernel(s), {fmt_fraction(share)} of the FLOP, are timed at "
            f"the fp32 ceiling, but PyTorch runs fp32 convs on TF32 tensor cores by default on "
            f"{where}: their times there are upper bounds (they hold only with "
            f"torch.backends.cudnn.conv.fp32_precision = 'ieee')")
