"""The lines `rooflab llm` prints about dtypes the options set by implication: --act fp8
alone quantizes the weights too, and an 8-bit --act leaves the KV cache at the model's
dtype. Split out of settings.py. Also check_group: --group where the weights keep no
group scales."""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...units import GROUP_SCALED, canonical_dtype
from .settings import FP4_FORMATS, Settings, _is, _sixteen


def act_sets_weights_note(cfg: Any, weights: str | None, act: str | None
                          ) -> tuple[str, ...]:
    """The line that says --act fp8 (or nvfp4/mxfp4) alone quantized the weights too."""
    fmt = str(act or "").strip().lower()
    if weights is None and fmt in FP4_FORMATS and not getattr(cfg, "quantization", None):
        return (f"--act {fmt} sets {fmt} weights too (W4A4: an fp4 GEMM multiplies e2m1 "
                f"weights by e2m1 activations, each block with its scale)",)
    if weights is not None or not _is(act, "fp8") or getattr(cfg, "quantization", None):
        return ()
    return ("--act fp8 sets fp8 weights too (W8A8, as vLLM's quantization=\"fp8\" runs: an "
            "fp8 GEMM takes fp8 weights, Fp8LinearMethod); give --weights int4 or int8 "
            "for those formats, dequantized to fp8 for the math",)


def kv_default_note(act: str | None, kv: str | None, s: Settings) -> tuple[str, ...]:
    """The line that says an 8-bit --act left the KV cache at the model's dtype."""
    if kv is not None or act is None or _sixteen(act) or s.kv != s.base:
        return ()
    return (f"--act {s.act_format or canonical_dtype(act)} leaves the KV cache at {s.kv}, "
            f"the model's dtype, as vLLM's kv_cache_dtype \"auto\" does with quantized "
            f"activations; --kv fp8 for an 8-bit cache (kv_cache_dtype=\"fp8\": half the KV "
            f"bytes)",)


def check_group(s: Settings, group: int | None) -> None:
    """--group given where the resolved weights keep no scale per group (bf16/fp8, or a
    GGUF file's fixed ggml blocks): it changed nothing and was said nowhere, while the
    JSON still carried it as group_size (review s28 R1 #3); whatif refuses it too."""
    if group is None or (s.stored is None and (s.weights in GROUP_SCALED
                                               or s.weights == "fp4")):
        return
    keep = "one scale per tensor" if s.weights == "fp8" else "no scales"
    why = ("a ggml type's block size is fixed (Q4_K: 256 weights in 144 B)"
           if s.stored is not None else f"{s.weights} weights keep {keep}")
    raise InputError(f"--group {group} goes with int2-int8 (or nvfp4/mxfp4) weights, "
                     f"weights per scale; here {why}: add --weights int4, or drop --group")
