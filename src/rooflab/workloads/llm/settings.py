"""How a model is run: dtypes of weights, activations and KV cache, attention kernel, TP, PP."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ...units import canonical_dtype, dtype_bytes, flop_precision, stored_weight_bytes

WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
ACT_DTYPES = ("fp32", "bf16", "fp16", "fp8")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
ATTN = ("flash", "naive")
# stored narrower than the math: read at these widths, dequantized for the matmuls
NARROW = ("fp8", "int8", "int4")


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
    Matmuls compute at the activation precision (weights are dequantized on the fly),
    except when weights and activations share an 8-bit dtype.
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

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight of a matrix, including group-scale overhead for int4/int8."""
        return stored_weight_bytes(self.weights, self.group_size, self.scale_dtype)

    @property
    def act_bytes(self) -> float:
        return dtype_bytes(self.act)

    @property
    def kv_bytes(self) -> float:
        return dtype_bytes(self.kv)

    @property
    def precision(self) -> str:
        """The precision matmul FLOP are counted under."""
        if self.weights == self.act or (self.weights in ("fp8", "int8") and self.act == "fp8"):
            return flop_precision(self.weights)
        return flop_precision(self.act)

    @property
    def flash(self) -> bool:
        return self.attn == "flash"

    def with_(self, **changes: Any) -> Settings:
        if {"weights", "group_size", "scale_dtype"} & changes.keys():
            changes.setdefault("weights_from", "")   # another format is no longer the config's
        return replace(self, **changes)

    def describe(self) -> str:
        scales = ([f"group {self.group_size}", f"{self.scale_dtype} scales"]
                  if self.weights in ("int4", "int8") else [])
        # weight-only quantization moves narrow bytes but multiplies at --act: say so, since
        # a device without an int4 (or fp8) ceiling is then timed right, not on a stand-in
        math = ([f"dequantized to {self.precision} for the math"]
                if self.weights in NARROW and self.precision != flop_precision(self.weights)
                else [])
        w = self.weights + (f" ({', '.join(scales)}{'; ' if scales and math else ''}"
                            f"{', '.join(math)})" if scales or math else "")
        kv = self.kv + (f" (attention math in {self.precision})"
                        if self.kv in NARROW and flop_precision(self.kv) != self.precision
                        else "")
        origin = f", from {self.weights_from}" if self.weights_from else ""
        return (f"weights {w}{origin}, activations {self.act}, KV {kv}, {self.attn} "
                f"attention")


def settings_for(cfg: Any, weights: str | None = None, group: int | None = None,
                 **others: Any) -> Settings:
    """Settings for a config: --weights/--group when given, else the format its
    `quantization_config` declares (ModelConfig.quantization: an AWQ int4 checkpoint is
    int4 with its group, not fp16), else fp16 and group 128."""
    q = getattr(cfg, "quantization", None)
    if weights is None and q is not None:
        return Settings(weights=q.weights,
                        group_size=group if group is not None else q.group_size or 128,
                        scale_dtype=q.scale_dtype,
                        weights_from=f"the config's quantization_config ({q.method})",
                        **others)
    return Settings(weights=weights or "fp16", group_size=128 if group is None else group,
                    **others)
