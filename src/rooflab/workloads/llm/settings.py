"""How a model is run: dtypes of weights, activations and KV cache, attention kernel, TP, PP."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ...units import canonical_dtype, dtype_bytes, flop_precision, stored_weight_bytes

WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
# int8: W8A8 (SmoothQuant, compressed-tensors input_activations type int): int8 GEMMs on the
# int8 tensor ceiling; it needs int8 (or int4) weights, the only ones an int8 GEMM takes
ACT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
ATTN = ("flash", "naive")
# stored narrower than the math: read at these widths, dequantized for the matmuls
NARROW = ("fp8", "int8", "int4")
# An int4 KV cache keeps a scale and a zero point (fp16 each) per head and token: LMDeploy's
# online KV quantization is per-head, per-token asymmetric (lmdeploy docs, "INT4/INT8 KV
# Cache"); counted over a group of 128 elements (the head_dim of most models):
# 0.5 + 2 x 2 / 128 = 0.531 B per element
KV_INT4_GROUP = 128
KV_INT4_SCALE_BYTES = 4.0


def is_kept(name: str, keep: tuple[str, ...]) -> bool:
    """Whether kernel `name` is one of the kept modules: the name itself, or a prefixed one
    (a kept down_proj covers the experts' down_proj too)."""
    return any(name == k or name.endswith("_" + k) for k in keep)


def _check(value: str, allowed: tuple[str, ...], what: str) -> str:
    try:
        d = canonical_dtype(value)
    except InputError:
        d = None
    if d not in allowed:
        raise InputError(f"{what}: unknown or unsupported dtype '{value}'; use one of: "
                         f"{', '.join(allowed)}")
    return d


@dataclass(frozen=True)
class Settings:
    """Dtypes and kernels of one inference setup.

    Weight-only quantization (int4, int8) keeps one scale of `scale_dtype` per `group_size`
    weights (GPTQ/AWQ style, group 128 with fp16 scales: 0.5 + 2/128 = 0.516 B per int4
    weight). fp8 weights use a per-tensor scale (no per-weight overhead).
    Matmuls compute at the activation precision: narrower weights are dequantized to it
    (int8 weights with fp8 activations: to fp8); int8 activations need int8/int4 weights
    (W8A8, W4A8) and multiply in int8. Attention, norms and elementwise math run at the
    activation precision too, except int8 activations: those run at `base` (fp16).
    """

    weights: str = "fp16"
    act: str = "fp16"
    kv: str = "fp16"
    attn: str = "flash"
    group_size: int = 128
    scale_dtype: str = "fp16"
    tp: int = 1
    pp: int = 1               # pipeline stages (workloads.llm.pipeline)
    # where the weight format came from when not from --weights: "the config's
    # quantization_config (awq)"; said in describe(), dropped when the weights change
    weights_from: str = ""
    # where the activation dtype came from when not from --act ("the config's
    # quantization_config"), and how the config quantizes them (dynamic | static)
    act_from: str = ""
    act_scheme: str = ""
    # kernels the checkpoint keeps unquantized (lm_head): weights and math at `base`
    keep: tuple[str, ...] = ()
    per_channel: bool = False     # one scale per output channel (worded so, not "group N")
    base: str = "fp16"            # the unquantized dtype: kept modules, int8-act side math

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _check(self.weights, WEIGHT_DTYPES, "--weights"))
        object.__setattr__(self, "act", _check(self.act, ACT_DTYPES, "--act"))
        object.__setattr__(self, "kv", _check(self.kv, KV_DTYPES, "--kv"))
        if self.attn not in ATTN:
            raise InputError(f"--attn must be one of {', '.join(ATTN)}; got '{self.attn}'")
        if self.group_size < 1:
            raise InputError(f"--group (int4/int8 quantization group size) must be >= 1, "
                             f"e.g. 128; got {self.group_size}")
        if self.tp < 1:
            raise InputError(f"--tp must be >= 1; got {self.tp}")
        if not isinstance(self.pp, int) or self.pp < 1:
            raise InputError(f"--pp must be an integer >= 1 (pipeline stages); got "
                             f"{self.pp!r}")
        if self.act == "int8" and self.weights not in ("int8", "int4"):
            # an int8 GEMM multiplies int8 by int8: fp16/fp8 weights have no such kernel
            raise InputError(f"--act int8 (W8A8: int8 GEMMs, SmoothQuant style) needs int8 "
                             f"weights (or int4, W4A8); --weights {self.weights} has no int8 "
                             f"GEMM: add --weights int8, or use --act fp8/fp16")

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight of a matrix, including group-scale overhead for int4/int8."""
        return stored_weight_bytes(self.weights, self.group_size, self.scale_dtype)

    @property
    def act_bytes(self) -> float:
        return dtype_bytes(self.act)

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached element; int4 with its scale and zero point (KV_INT4_GROUP)."""
        extra = KV_INT4_SCALE_BYTES / KV_INT4_GROUP if self.kv == "int4" else 0.0
        return dtype_bytes(self.kv) + extra

    @property
    def precision(self) -> str:
        """The precision matmul FLOP are counted under: the activations'. Weights narrower
        than them are dequantized to it (int4/int8 weights with fp16 activations: fp16;
        int8 weights with fp8 activations, which share no GEMM type: fp8, and on a device
        without fp8 the analysis falls back to fp16 and says so); int8 activations come
        with int8/int4 weights (__post_init__): int8 GEMMs."""
        return flop_precision(self.act)

    @property
    def math_precision(self) -> str:
        """The precision of attention, norms and elementwise math: the activations', but
        int8 activations exist only at the GEMM inputs (quantized per linear), the rest
        runs at `base`: no attention kernel multiplies in int8."""
        return flop_precision(self.base if self.act == "int8" else self.act)

    def for_module(self, name: str) -> Settings:
        """The settings of one linear kernel: a kept (unquantized) module at `base`."""
        if not is_kept(name, self.keep):
            return self
        act = self.base if self.act in NARROW else self.act
        return replace(self, weights=self.base, act=act, keep=(), per_channel=False)

    @property
    def embedding_kept(self) -> bool:
        """Whether the embedding table stays at `base` while the weights are narrow: the
        format is the config's quantization_config, and every quantizer it names replaces
        Linear layers only (llm-compressor's "targets: [Linear]", AutoAWQ/GPTQ's decoder
        blocks, transformers' bitsandbytes/fp8 nn.Linear swap). `--weights int4` by hand
        quantizes the table too (llama.cpp's token_embd style)."""
        return self.weights in NARROW and bool(self.weights_from)

    @property
    def flash(self) -> bool:
        return self.attn == "flash"

    def with_(self, **changes: Any) -> Settings:
        if {"weights", "group_size", "scale_dtype"} & changes.keys():
            changes.setdefault("weights_from", "")   # another format is no longer the config's
            changes.setdefault("per_channel", False)
            changes.setdefault("keep", ())
        w = changes.get("weights")
        if (self.act == "int8" and "act" not in changes and w is not None
                and canonical_dtype(w) not in ("int8", "int4")):
            # an int8 GEMM needs int8 weights: a W8A8 setup re-quantized to fp8 is
            # W8A8-fp8, to fp16 weight-free of quantization (what-if rows, --weights)
            changes["act"] = "fp8" if canonical_dtype(w) == "fp8" else self.base
        if "act" in changes:
            changes.setdefault("act_from", "")
            changes.setdefault("act_scheme", "")
        return replace(self, **changes)

    def describe(self) -> str:
        group = "per channel" if self.per_channel else f"group {self.group_size}"
        scales = ([group, f"{self.scale_dtype} scales"]
                  if self.weights in ("int4", "int8") else [])
        # weight-only quantization moves narrow bytes but multiplies at --act: say so, since
        # a device without an int4 (or fp8) ceiling is then timed right, not on a stand-in
        math = ([f"dequantized to {self.precision} for the math"]
                if self.weights in NARROW and self.precision != flop_precision(self.weights)
                else [])
        modules = ("embedding",) * self.embedding_kept + self.keep
        kept = [f"{', '.join(modules)} kept at {self.base}"] if modules else []
        parts = [x for x in (", ".join(scales), ", ".join(math), *kept) if x]
        w = self.weights + (f" ({'; '.join(parts)})" if parts else "")
        kv_scales = ([f"an fp16 scale and zero point per {KV_INT4_GROUP} elements"]
                     if self.kv == "int4" else [])
        kv_math = ([f"attention math in {self.math_precision}"]
                   if self.kv in NARROW and flop_precision(self.kv) != self.math_precision
                   else [])
        kv = self.kv + (f" ({'; '.join(kv_scales + kv_math)})" if kv_scales or kv_math else "")
        how = [self.act_scheme] if self.act_scheme else []
        if self.act == "int8":
            how.append(f"int8 GEMMs, attention/norms/elementwise in {self.math_precision}")
        act = (self.act + (f" ({'; '.join(how)})" if how else "")
               + (f", from {self.act_from}" if self.act_from else ""))
        origin = f", from {self.weights_from}" if self.weights_from else ""
        return (f"weights {w}{origin}, activations {act}, KV {kv}, {self.attn} attention")


def settings_for(cfg: Any, weights: str | None = None, group: int | None = None,
                 act: str | None = None, kv: str | None = None, **others: Any) -> Settings:
    """Settings for a config: --weights/--group when given, else the format its
    `quantization_config` declares (ModelConfig.quantization: an AWQ int4 checkpoint is
    int4 with its group, not fp16; a W8A8 one also sets the activations, as --act would),
    else fp16 and group 128. --kv defaults to --act; activations taken from the config
    leave the KV cache at fp16, the checkpoint's width (vLLM's kv_cache_dtype "auto")."""
    q = getattr(cfg, "quantization", None)
    if weights is None and q is not None:
        act_from = scheme = ""
        if act is None and q.act:
            act, scheme, act_from = q.act, q.act_scheme, "the config's quantization_config"
        kv = kv or (act if not act_from and act else "fp16")
        return Settings(weights=q.weights,
                        group_size=group if group is not None else q.group_size or 128,
                        scale_dtype=q.scale_dtype,
                        weights_from=f"the config's quantization_config ({q.method})",
                        act=act or "fp16", kv=kv, act_from=act_from, act_scheme=scheme, keep=q.keep,
                        per_channel=q.per_channel and group is None, **others)
    act = act or "fp16"
    return Settings(weights=weights or "fp16", group_size=128 if group is None else group,
                    act=act, kv=kv or act, **others)
