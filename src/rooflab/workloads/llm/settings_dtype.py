"""The dtype a config runs at when no --weights/--act says (checkpoint_dtype, as vLLM's
dtype "auto"), and the words and warnings about it. Split out of settings.py, which
re-exports these names."""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...model.fp4_formats import FP4_FORMATS, block_words
from ...units import FLOAT_PRECISIONS, canonical_dtype
from .quant_config import dtype_words, undeclared_dtype

# 4-bit float weights (e2m1) and their block scales, by the name --weights takes, are
# model/fp4_formats.py's FP4_FORMATS (one table for llm and whatif, s27; imported here, and
# re-exported by settings.py, its old home): NVFP4 an fp8 e4m3 scale per 16 (0.5625 B),
# OCP MXFP4 an e8m0 byte per 32 (0.53125 B, as gpt-oss's config is read). As weights
# alone they are dequantized to --act for the math; --act nvfp4/mxfp4 (W4A4) multiplies
# them in fp4 on Blackwell's fp4_tensor ceiling (a roof without one holds the GEMMs to fp8,
# ceiling.PRECISION_FALLBACK, and says so). s21 r6 F4.

# llama.cpp's quantized KV caches (-ctk/-ctv TYPE, llama-server --cache-type-k): ggml blocks
# of 32 values with an fp16 scale (ggml-common.h: block_q8_0 32 int8 + 2 B = 34 B, 1.0625 B
# a value; block_q4_0 16 + 2 = 18 B, 0.5625; block_q4_1 an fp16 min too, 20 B; block_iq4_nl
# 18 B), by the name --kv takes -> the class its values are attended in and bytes per value.
# s26 v1-F5: the docs sent q8_0 to --kv int8, 1 B a value (6.25 % too few KV bytes).
GGML_KV = {"q8_0": ("int8", 34 / 32), "q4_0": ("int4", 18 / 32), "q4_1": ("int4", 20 / 32),
           "iq4_nl": ("int4", 18 / 32)}


def ggml_kv(kv: Any, fmt: str) -> tuple[Any, str]:
    """(--kv class, ggml format) for Settings: --kv q8_0 -> ("int8", "q8_0"); a format
    whose class `kv` no longer is (a what-if's with_(kv="fp8")) is dropped."""
    name = str(kv).strip().lower()
    if name in GGML_KV:
        return GGML_KV[name][0], name
    return kv, fmt if fmt in GGML_KV and GGML_KV[fmt][0] == kv else ""


def ggml_kv_words(fmt: str) -> str:
    """"llama.cpp's ggml blocks of 32 with an fp16 scale: 1.0625 B a value" (q8_0)."""
    extra = " and min" if fmt == "q4_1" else ""
    return (f"llama.cpp's ggml blocks of 32 with an fp16 scale{extra}: "
            f"{GGML_KV[fmt][1]:.5g} B a value")


# Model types whose fp32 configs vLLM's dtype "auto" runs in bf16, not fp16 (Gemma's
# activations overflow fp16; vLLM config._get_and_verify_dtype special-cases gemma2/3).
BF16_WHEN_FP32 = ("gemma2", "gemma3", "gemma3_text")


def checkpoint_dtype(cfg: Any, roof: Any = None) -> str:
    """The dtype a config's torch_dtype runs at when no --weights/--act is given,
    as vLLM's dtype "auto": bfloat16 -> bf16, float16 -> fp16, float32 -> fp16 (bf16 for
    Gemma 2/3); bf16 on a roof with fp16 but no bf16 ceiling (T4, V100) -> fp16, as vLLM
    falls back (bf16_fallback_note says so), fp32 for Gemma 2/3 there. Review 18d H: a
    bf16 Llama-3.1-8B timed as fp16 on a Xeon 8480+ missed its AMX-BF16 ceiling (TTFT
    2.11 s, not 0.30 s)."""
    raw = str(getattr(cfg, "dtype", "") or undeclared_dtype(cfg)).lower().removeprefix("torch.")
    no_fp16 = getattr(cfg, "model_type", "") in BF16_WHEN_FP32
    bf16 = raw in ("bfloat16", "bf16") or (raw in ("float32", "fp32", "float") and no_fp16)
    if bf16 and roof is not None and "bf16" not in roof.precisions and (
            "fp16" in roof.precisions):
        # vLLM refuses fp16 for Gemma 2/3 (_FLOAT16_NOT_SUPPORTED_MODELS: "Numerical
        # instability"): on a T4 its dtype auto picks float32 (review 19d N6)
        return "fp32" if no_fp16 else "fp16"
    return "bf16" if bf16 else "fp16"


def bf16_fallback_note(cfg: Any, roof: Any) -> tuple[str, ...]:
    """A line when the config's bf16 runs as fp16 because the roof has no bf16 math."""
    there = checkpoint_dtype(cfg, roof)
    if checkpoint_dtype(cfg) != "bf16" or there == "bf16":
        return ()
    if there == "fp32":
        return (f"{cfg.name}'s {dtype_words(cfg)} runs as fp32: roof '{roof.name}' "
                f"has no bf16 ceiling, and vLLM refuses fp16 for {cfg.model_type} "
                f"(numerical instability), so its dtype auto picks float32; give --act "
                f"bf16 to time it on a stand-in",)
    return (f"{cfg.name}'s {dtype_words(cfg)} runs as fp16: roof '{roof.name}' "
            f"has no bf16 ceiling (vLLM's dtype auto falls back the same way); give "
            f"--act bf16 to time it on a stand-in",)


def _sixteen(dtype: str | None) -> bool:
    """Whether a --weights/--act value is an unquantized float, bf16, fp16 or fp32: one
    given alone sets the other (review 19d N6: --act fp32 left fp16 weights). A bad one
    is Settings' to refuse, with its option's name."""
    return _is(dtype, "bf16", "fp16", "fp32")


def _is(dtype: str | None, *names: str) -> bool:
    """Whether a --weights/--act value is one of names (a bad one is Settings' to refuse)."""
    try:
        return dtype is not None and canonical_dtype(dtype) in names
    except InputError:
        return False


def unknown_torch_dtype(cfg: Any) -> str | None:
    """The config's torch_dtype when it names no float dtype HF writes (float16, bfloat16,
    float32, float8_*, "auto"...): checkpoint_dtype runs it as fp16, which the setup line
    and a warning must say (review r3 F3: "float17" read as derived from the config)."""
    raw = getattr(cfg, "dtype", "")
    key = str(raw).strip().lower().removeprefix("torch.")
    if not raw or key == "auto":
        return None
    try:
        known = canonical_dtype(key) in FLOAT_PRECISIONS
    except InputError:
        known = False
    return None if known else str(raw)


def unknown_dtype_warning(cfg: Any, s: Any) -> str | None:
    """The warning for an unknown torch_dtype the settings took their dtype from."""
    raw = unknown_torch_dtype(cfg)
    if raw is None or not s.dtype_from:   # --weights and --act gave every dtype
        return None
    return (f"unknown torch_dtype '{raw}' in {getattr(cfg, 'name', 'the config')}: assumed "
            f"float16; give --weights/--act (e.g. --weights bf16 for a bfloat16 checkpoint)")


def _dtype_from(cfg: Any, base: str) -> str:
    """Where a config's default dtype comes from, in words for the setup line; `base` is
    what it runs as on the roof (bf16 on a card without bf16: fp16, bf16_fallback_note)."""
    raw = getattr(cfg, "dtype", "")
    if not raw:   # gpt-oss (mxfp4): bf16, as its checkpoint and vLLM run (undeclared_dtype)
        return "no torch_dtype in the config (" + (
            f"bf16: an mxfp4 checkpoint, its other tensors bf16, as vLLM runs it"
            f"{'' if base == 'bf16' else '; no bf16 on this roof'})"
            if undeclared_dtype(cfg) == "bfloat16" else "float16 assumed)")
    if unknown_torch_dtype(cfg) is not None:
        return f"the config's unknown torch_dtype ({raw}): float16 assumed"
    moved = (", no bf16 on this roof" if base != checkpoint_dtype(cfg) else
             ", as vLLM runs this model type" if "32" in raw and base == "bf16" else "")
    return f"the config's torch_dtype ({raw}{moved})"


def _fp4_act(act: str | None, weights: str | None, q: Any, others: dict
             ) -> tuple[str | None, str | None]:
    """--act nvfp4|mxfp4 (W4A4) as act "fp4" and its format in `others`; alone it sets the
    same fp4 weights (as --act fp8 alone sets fp8 weights), unless the config's own
    quantization_config is fp4 (gpt-oss's mxfp4 experts, their kept modules with them)."""
    fmt = str(act).strip().lower() if act is not None else ""
    if fmt not in FP4_FORMATS:
        if _is(act, "fp4"):
            raise InputError(f"--act fp4: say which format, nvfp4 or mxfp4 "
                             f"({block_words('nvfp4', 'activations')}; "
                             f"{block_words('mxfp4', 'activations')})")
        return act, weights
    others["act_format"] = fmt
    if weights is None and not (q is not None and q.weights == "fp4"):
        weights = fmt
    return "fp4", weights


def _check_fp4_act(s: Any) -> None:
    """W4A4: fp4 GEMMs take fp4 weights (NVFP4/MXFP4 block-scaled MMAs multiply e2m1 by
    e2m1); the activations' format defaults to the weights'."""
    fmt = s.act_format or (s.weight_format if s.weight_format in FP4_FORMATS else "nvfp4")
    if s.weights != "fp4":
        raise InputError(f"--act {fmt} (W4A4: fp4 GEMMs) needs fp4 weights; --weights "
                         f"{s.weight_format} has no fp4 GEMM: add --weights {fmt} (or drop "
                         f"--weights: --act {fmt} alone sets {fmt} weights), or use --act "
                         f"fp8/{s.base}")
    if fmt not in FP4_FORMATS:
        raise InputError(f"--act: unknown fp4 format '{fmt}'; use nvfp4 or mxfp4")
    object.__setattr__(s, "act_format", fmt)
