"""Which kernels vLLM runs an AWQ/GPTQ checkpoint with, and so at which activation dtype:
Marlin (bf16) on NVIDIA SM 8.0+, else the fp16-only kernels. Split out of settings.py."""

from __future__ import annotations

from typing import Any

from .settings import checkpoint_dtype

# quantization methods whose vLLM kernels take fp16 activations only (AWQConfig /
# GPTQConfig get_supported_act_dtypes: [torch.half]; "torch.bfloat16 is not supported for
# quantization method awq", vllm-project/vllm#1941): a bf16 checkpoint runs at fp16
FP16_ONLY_METHODS = ("awq", "gptq")


# Marlin's group sizes (vLLM marlin_utils MARLIN_SUPPORTED_GROUP_SIZES; -1: per channel)
MARLIN_GROUPS = (-1, 32, 64, 128)


def marlin(q: Any, roof: Any) -> bool:
    """Whether vLLM runs this AWQ/GPTQ checkpoint with its Marlin kernels, which take bf16:
    on NVIDIA SM 8.0+ a compatible checkpoint is converted by default ("The model is
    convertible to awq_marlin during runtime", AWQMarlinConfig / GPTQMarlinConfig
    .override_quantization_method); GPTQ Marlin takes symmetric weights only (TYPE_MAP
    (4, True), (8, True)). Review 19d N2."""
    from ...hardware.catalog import match_device_name

    if roof is None or q is None:
        return False
    dev = match_device_name(roof.name)
    cc = getattr(dev, "compute_capability", None)
    if dev is None or dev.vendor != "NVIDIA" or not cc or float(cc) < 8.0:
        return False
    group = -1 if q.per_channel else (q.group_size or 128)
    sym_ok = q.method == "awq" or not q.zero_point
    return q.weights in ("int4", "int8") and group in MARLIN_GROUPS and sym_ok


def fp16_only(q: Any, roof: Any = None) -> bool:
    """Whether a config's quantization_config runs at fp16 whatever its torch_dtype: AWQ
    and GPTQ where vLLM has no Marlin kernel for them (marlin)."""
    return (q is not None and getattr(q, "method", "") in FP16_ONLY_METHODS
            and not marlin(q, roof))


def fp16_only_note(cfg: Any, weights: str | None, act: str | None,
                   roof: Any = None) -> tuple[str, ...]:
    """The line that says which kernel a bf16 AWQ/GPTQ checkpoint is timed with: Marlin
    at bf16 on NVIDIA SM 8.0+, else the fp16-only kernels, and how to time the other."""
    q = getattr(cfg, "quantization", None)
    if weights is not None or act is not None or q is None or (
            q.method not in FP16_ONLY_METHODS) or checkpoint_dtype(cfg, roof) != "bf16":
        return ()                 # fp16 anyway: bf16_fallback_note says why on that roof
    if marlin(q, roof):
        return (f"{cfg.name}'s {q.method} weights run at its torch_dtype ({cfg.dtype}): "
                f"vLLM converts them to {q.method}_marlin on this GPU by default, and Marlin "
                f"takes bf16; --act fp16 times the legacy {q.method.upper()} kernel "
                f"(fp16 only)",)
    # Marlin's other needs, said when unmet: a 3-bit GPTQ on an A100 is fp16 for its width
    needs = [x for x, unmet in (("symmetric GPTQ weights (sym: true)", q.zero_point),
                                (f"4- or 8-bit weights (these are {q.weights})",
                                 q.weights not in ("int4", "int8"))) if unmet]
    return (f"{cfg.name}'s torch_dtype is {cfg.dtype}, but its {q.method} weights run with "
            f"fp16 activations: vLLM's {q.method.upper()} kernels take fp16 only "
            f"(vllm-project/vllm#1941), and its Marlin kernels ({q.method}_marlin, bf16 "
            f"too) need an NVIDIA GPU of SM 8.0 or later"
            + "".join(f" and {n}" for n in needs),)
