"""How a model is run: dtypes of weights, activations and KV cache, attention kernel, TP, PP."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ...units import (
    GROUP_SCALED,
    canonical_dtype,
    dtype_bytes,
    flop_precision,
    stored_weight_bytes,
)
from .settings_dtype import (  # noqa: F401 (FP4_FORMATS: its old home, imported from here)
    FP4_FORMATS,
    GGML_KV,
    _check_fp4_act,
    _dtype_from,
    _fp4_act,
    _is,
    _sixteen,
    checkpoint_dtype,
    ggml_kv,
    ggml_kv_words,
)
from .stored_weights import StoredWeights, ggml_weights, uniform, weight_class

WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int6", "int4", "int3", "int2", "fp4")
# int8: W8A8 (SmoothQuant, compressed-tensors input_activations type int): int8 GEMMs on the
# int8 tensor ceiling; it needs int8 (or int4) weights, the only ones an int8 GEMM takes.
# fp4: W4A4 (--act nvfp4|mxfp4), fp4 GEMMs; it needs fp4 weights (Settings.act_format)
ACT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "fp4")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
ATTN = ("flash", "naive")
# stored narrower than the math: read at these widths, dequantized for the matmuls
NARROW = ("fp8", "int8", "int6", "int4", "int3", "int2", "fp4")
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
        # fp4 is typed by its format (settings_for): nvfp4, mxfp4
        shown = [x for x in allowed if x != "fp4"] + list(FP4_FORMATS) * ("fp4" in allowed)
        shown += list(GGML_KV) * (what == "--kv")
        raise InputError(f"{what}: unknown or unsupported dtype '{value}'; use one of: "
                         f"{', '.join(shown)}")
    return d


@dataclass(frozen=True)
class Settings:
    """Dtypes and kernels of one inference setup.

    Weight-only quantization (int2/int3/int4/int6/int8) keeps one scale of `scale_dtype` per
    `group_size` weights (GPTQ/AWQ style, group 128 with fp16 scales: 0.5 + 2/128 = 0.516 B
    per int4 weight, 0.375 + 2/128 = 0.391 B per int3 one). fp8 weights use a per-tensor
    scale (no per-weight overhead).
    Matmuls compute at the activation precision: narrower weights are dequantized to it
    (int8 weights with fp8 activations: to fp8); int8 activations need int8/int4 weights
    (W8A8, W4A8) and multiply in int8. 8-bit activations exist at the GEMM inputs only:
    norms, RoPE, the residual stream, SwiGLU, logits and attention stay at `base` (`wide`),
    in bytes and in math; attention runs in fp8 only with fp8 activations and an fp8 cache.
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
    # int4/int8 groups also store a packed zero point (AWQ zero_point, GPTQ sym false):
    # int4 0.5 + 2/128 + 0.5/128 = 0.520 B per weight (review 18d J); --weights int4
    # alone is symmetric (scales only)
    zero_point: bool = False
    # where `base` came from when no --weights/--act gave it: "the config's torch_dtype
    # (bfloat16)"; said in describe() and the JSON (review 19d N9)
    dtype_from: str = ""
    # query tokens per sequence in a decode step (--decode-tokens): 1 is plain decode; N > 1
    # is a speculative verify step of N - 1 drafts (vLLM num_speculative_tokens) or
    # LLM-Viewer's n_parallel_decode: N x the FLOP, the KV cache read once (review s21 r6 F3)
    decode_tokens: int = 1
    # exact bytes per weight of each matrix in llama.cpp's ggml types: a GGUF file's tensor
    # table, or one type given to --weights (q4_k); `weights` then names its math's class
    # (int4 for Q4_K) and group_size/scale_dtype are not used
    stored: StoredWeights | None = None
    # --act nvfp4 | mxfp4 (act "fp4"): the GEMM inputs' block format, each activation 0.5 B
    # plus its block scale (FP4_FORMATS); "" with any other --act
    act_format: str = ""
    # --kv q8_0 | q4_0 | q4_1 | iq4_nl (llama.cpp's cache types, GGML_KV): its ggml block
    # bytes; `kv` then names its values' class (int8, int4)
    kv_format: str = ""

    def __post_init__(self) -> None:
        ggml = ggml_weights(self.weights) if self.stored is None else None
        if ggml is not None:     # Settings(weights="q4_k"): that type's blocks, as settings_for
            object.__setattr__(self, "stored", uniform(ggml))
            object.__setattr__(self, "weights", weight_class(ggml))
        object.__setattr__(self, "weights", _check(self.weights, WEIGHT_DTYPES, "--weights"))
        object.__setattr__(self, "act", _check(self.act, ACT_DTYPES, "--act"))
        kv, kv_format = ggml_kv(self.kv, self.kv_format)
        object.__setattr__(self, "kv_format", kv_format)
        object.__setattr__(self, "kv", _check(kv, KV_DTYPES, "--kv"))
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
        n = self.decode_tokens
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise InputError(f"--decode-tokens must be an integer >= 1 (query tokens per "
                             f"sequence in a decode step; 1 = plain decode, K + 1 for a "
                             f"speculative verify of K draft tokens); got {n!r}")
        if self.act == "fp4":
            _check_fp4_act(self)
        if self.act == "int8" and self.weights not in ("int8", "int4"):
            # an int8 GEMM multiplies int8 by int8: fp16/fp8 weights have no such kernel
            raise InputError(f"--act int8 (W8A8: int8 GEMMs, SmoothQuant style) needs int8 "
                             f"weights (or int4, W4A8); --weights {self.weights} has no int8 "
                             f"GEMM: add --weights int8, or use --act fp8/fp16")

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight of a matrix, including group-scale overhead for int4/int8 and
        the packed zero point (the weight's own width per group) where there is one."""
        if self.stored is not None:
            return self.stored.default
        per = stored_weight_bytes(self.weights, self.group_size, self.scale_dtype)
        if self.weights == "fp4":        # units counts no block scale for fp4
            per += dtype_bytes(self.scale_dtype) / self.group_size
        if self.zero_point and self.weights in GROUP_SCALED:
            per += dtype_bytes(self.weights) / self.group_size
        return per

    @property
    def table_bytes(self) -> float:
        """Bytes per weight of the token-embedding table when the weights are narrow."""
        return self.stored.table if self.stored is not None else self.weight_bytes

    @property
    def vector_bytes(self) -> float:
        """Bytes per element of norm weights and biases: the activation width, or as a
        GGUF file stores them (F32: 4 B)."""
        v = self.stored.vector if self.stored is not None else None
        return self.wide_bytes if v is None else v

    @property
    def weight_format(self) -> str:
        """--weights as typed: 'nvfp4' / 'mxfp4' for fp4 with that format's scales, the
        ggml type (q4_k, Q4_K_M) for llama.cpp weights."""
        if self.stored is not None:
            return self.stored.label
        if self.weights != "fp4":
            return self.weights
        return next((name for name, fmt in FP4_FORMATS.items()
                     if fmt == (self.group_size, self.scale_dtype)), "fp4")

    @property
    def act_bytes(self) -> float:
        """Bytes per GEMM input element: --act's, an fp4 format's block scale included
        (nvfp4 0.5 + 1/16 = 0.5625 B; its per-tensor fp32 scale is not counted)."""
        if self.act != "fp4":
            return dtype_bytes(self.act)
        group, scale = FP4_FORMATS[self.act_format]
        return dtype_bytes("fp4") + dtype_bytes(scale) / group

    @property
    def wide(self) -> str:
        """The dtype of every activation but a GEMM's input: `base` when the activations
        are fp8/int8. Those exist only at the GEMM inputs: vLLM's Fp8LinearMethod returns
        its output in the model dtype (apply_fp8_linear out_dtype=input.dtype), and the
        residual stream, norms, RoPE, SiLU-mul and logits stay in it (review s21 r6 F2:
        all of them at 1 byte made a 32k fp8 prefill 30 % short)."""
        return self.base if self.act in NARROW else self.act

    @property
    def wide_bytes(self) -> float:
        return dtype_bytes(self.wide)

    @property
    def comm_bytes(self) -> float:
        """Bytes per element of what TP all-reduces and PP stage transfers carry: the
        residual stream, at `wide` (RowParallelLinear all-reduces the GEMM's output in the
        model dtype; review 18d C)."""
        return self.wide_bytes

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached element; int4 with its scale and zero point (KV_INT4_GROUP),
        a ggml cache type its block's bytes (GGML_KV)."""
        if self.kv_format:
            return GGML_KV[self.kv_format][1]
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
        """The precision of norms, softmax and elementwise math: `wide`'s (8-bit
        activations exist only at the GEMM inputs, quantized per linear)."""
        return flop_precision(self.wide)

    @property
    def attention_precision(self) -> str:
        """The precision of the attention matmuls: fp8 with fp8 activations and an fp8
        KV cache (FlashAttention-3's fp8 path, vLLM kv_cache_dtype="fp8" with its query
        quantized), else `wide`'s: a bf16 cache is attended to in bf16 whatever the GEMMs
        take, and no attention kernel multiplies in int8."""
        if self.act == "fp8" and self.kv == "fp8":
            return flop_precision("fp8")
        return self.math_precision

    def for_module(self, name: str) -> Settings:
        """The settings of one linear kernel: a kept (unquantized) module at `base`."""
        if not is_kept(name, self.keep):
            return self if self.stored is None else replace(self, stored=self.stored.only(name))
        return self.unquantized()

    def unquantized(self) -> Settings:
        """Weights and math at `base`: a module the serving engine holds unquantized."""
        act = self.base if self.act in NARROW else self.act
        return replace(self, weights=self.base, act=act, keep=(), per_channel=False,
                       stored=None, act_format="")

    @property
    def embedding_kept(self) -> bool:
        """Whether the embedding table stays at `base` while the weights are narrow: the
        format is the config's quantization_config, and every quantizer it names replaces
        Linear layers only (llm-compressor's "targets: [Linear]", AutoAWQ/GPTQ's decoder
        blocks, transformers' bitsandbytes/fp8 nn.Linear swap). `--weights int4` by hand
        quantizes the table too (llama.cpp's token_embd style)."""
        return self.weights in NARROW and bool(self.weights_from) and self.stored is None

    @property
    def flash(self) -> bool:
        return self.attn == "flash"

    def with_(self, **changes: Any) -> Settings:
        if {"weights", "group_size", "scale_dtype"} & changes.keys():
            changes.setdefault("weights_from", "")   # another format is no longer the config's
            changes.setdefault("per_channel", False)
            changes.setdefault("keep", ())
            changes.setdefault("zero_point", False)
            changes.setdefault("stored", None)
        w = changes.get("weights")
        if self.act == "fp4" and "act" not in changes and w is not None and w != "fp4":
            # fp4 GEMMs need fp4 weights: a W4A4 setup re-quantized to fp8/int4 weights
            # runs its GEMMs as that weight-only setup does, at the model dtype
            changes["act"], changes["act_format"] = self.base, ""
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
        zeros = " and zero points" if self.zero_point else ""
        # MX's shared scale is an e8m0 exponent byte (OCP MX v1.0), stored as uint8: the
        # bytes count 1 B, the words name the format (review s21 x1 F7)
        sdt = "e8m0" if self.weight_format == "mxfp4" else self.scale_dtype
        scales = ([group, f"{sdt} scales{zeros}"]
                  if self.weights in (*GROUP_SCALED, "fp4") and self.stored is None else [])
        # weight-only quantization moves narrow bytes but multiplies at --act: say so, since
        # a device without an int4 (or fp8) ceiling is then timed right, not on a stand-in;
        # fp4 weights are unless --act nvfp4/mxfp4 multiplies them in fp4 (W4A4)
        math = ([f"dequantized to {self.precision} for the math"]
                if self.weights in NARROW and self.precision != flop_precision(self.weights)
                else [])
        modules = ("embedding",) * self.embedding_kept + self.keep
        kept = [f"{', '.join(modules)} kept at {self.base}"] if modules else []
        parts = [x for x in (", ".join(scales), ", ".join(math), *kept) if x]
        if self.stored is not None:    # a ggml type's blocks hold their own scales
            st = self.stored
            parts = [st.words, *[f"from {st.source}"] * bool(st.source), *parts]
        w = self.weight_format + (f" ({'; '.join(parts)})" if parts else "")
        kv_scales = ([ggml_kv_words(self.kv_format)] if self.kv_format else
                     [f"an fp16 scale and zero point per {KV_INT4_GROUP} elements"]
                     if self.kv == "int4" else [])
        kv_math = ([f"attention math in {self.attention_precision}"]
                   if self.kv in NARROW and flop_precision(self.kv) != self.attention_precision
                   else [])
        kv = (self.kv_format or self.kv) + (
            f" ({'; '.join(kv_scales + kv_math)})" if kv_scales or kv_math else "")
        how = [self.act_scheme] if self.act_scheme else []
        if self.act in NARROW:
            same = self.attention_precision == self.math_precision
            how.append(f"{self.act} GEMMs{'' if same else ' and attention'}, "
                       f"{'attention/' if same else ''}norms/elementwise in "
                       f"{self.math_precision}")
        act = ((self.act_format or self.act) + (f" ({'; '.join(how)})" if how else "")
               + (f", from {self.act_from}" if self.act_from else ""))
        origin = f", from {self.weights_from}" if self.weights_from else ""
        dtype = f", {self.base} from {self.dtype_from}" if self.dtype_from else ""
        spec = (f", {self.decode_tokens} query tokens per sequence in a decode step"
                if self.decode_tokens > 1 else "")
        return (f"weights {w}{origin}, activations {act}, KV {kv}, {self.attn} attention"
                f"{spec}{dtype}")


def settings_for(cfg: Any, weights: str | None = None, group: int | None = None,
                 act: str | None = None, kv: str | None = None, roof: Any = None,
                 **others: Any) -> Settings:
    """Settings for a config: --weights/--group when given, else the format its
    `quantization_config` declares (ModelConfig.quantization: an AWQ int4 checkpoint is
    int4 with its group, not fp16; a W8A8 one also sets the activations, as --act would),
    else the checkpoint's dtype (checkpoint_dtype: bf16 for a bfloat16 config) and group
    128; a 16-bit --act without --weights (or --weights without --act) sets both. --kv
    defaults to a 16-bit --act, else (8-bit activations, from --act or from the config)
    to the checkpoint's width (vLLM's kv_cache_dtype "auto": _kv_default)."""
    for flag, value, allowed in (("--act", act, ACT_DTYPES), ("--kv", kv, KV_DTYPES)):
        if value is not None and not value.strip():   # '' (an unset $VAR) is no default
            _check(value, allowed, flag)
    q = getattr(cfg, "quantization", None)
    act, weights = _fp4_act(act, weights, q, others)
    given_base = others.pop("base", None)
    base = given_base or checkpoint_dtype(cfg, roof)
    if not given_base and weights is None and act is None:
        others.setdefault("dtype_from", _dtype_from(cfg, base))
    from .quant_kernels import fp16_only

    if base == "bf16" and weights is None and act is None and fp16_only(q, roof):
        base = "fp16"                  # fp16_only_note says why
        others["dtype_from"] = f"{q.method}'s fp16-only kernels (torch_dtype {cfg.dtype})"
    if weights is None and q is not None:
        act_from = scheme = ""
        if act is None and q.act:
            act, scheme, act_from = q.act, q.act_scheme, "the config's quantization_config"
        kv = kv or _kv_default(act, base)
        return Settings(weights=q.weights,
                        group_size=group if group is not None else q.group_size or 128,
                        scale_dtype=q.scale_dtype,
                        weights_from=f"the config's quantization_config ({q.method})",
                        act=act or base, kv=kv, act_from=act_from, act_scheme=scheme,
                        keep=q.keep, per_channel=q.per_channel and group is None,
                        zero_point=q.zero_point,
                        base=base, **others)
    stored = _ggml_stored(cfg, weights, group)
    if stored is not None:
        # llama.cpp: the file's (or --weights q4_k's) bytes; a float file runs in its type
        math = weight_class(stored.main_type)
        base = math if math in ("fp32", "fp16", "bf16") and not given_base else base
        act = act or base
        if weights is None and "dtype_from" in others:     # a GGUF file names no dtype
            others["dtype_from"] = "llama.cpp's defaults (f16 KV cache and GPU math)"
        return Settings(weights=math, stored=stored, act=act, kv=kv or _kv_default(act, base),
                        base=base, **others)
    fp4 = FP4_FORMATS.get(str(weights).strip().lower()) if weights is not None else None
    if fp4 is not None:
        others.setdefault("scale_dtype", fp4[1])
        weights, group = "fp4", fp4[0] if group is None else group
    elif _is(weights, "fp4"):
        raise InputError("--weights fp4: say which format, nvfp4 (an fp8 scale per 16 "
                         "weights, 0.5625 B) or mxfp4 (an e8m0 scale per 32, 0.53125 B)")
    # a 16-bit --weights or --act without the other sets both: the model runs in it;
    # --act fp8 alone sets fp8 weights, W8A8 as vLLM's quantization="fp8" runs it
    # (Fp8LinearMethod quantizes the weights): no engine multiplies bf16 weights at the
    # fp8 rate (review 19d N3)
    act = act or (weights if _sixteen(weights) else base)
    if weights is None:
        weights = act if _sixteen(act) or _is(act, "fp8") else base
    elif _is(act, "fp8") and not _is(weights, *NARROW):
        raise InputError(f"--act fp8 (W8A8: fp8 GEMMs) needs fp8 weights (or int8/int4, "
                         f"dequantized to fp8); --weights {weights} has no fp8 GEMM: drop "
                         f"--weights (--act fp8 alone sets fp8 weights), or use --act "
                         f"{canonical_dtype(weights) if _sixteen(weights) else 'bf16'}")
    # W8A8 by hand: an int8 GEMM (vLLM cutlass_scaled_mm, SmoothQuant) scales its weights
    # per output channel, as a compressed-tensors W8A8 config says (review s21 r6 F5);
    # --group asks for groups
    per_channel = group is None and _is(act, "int8") and _is(weights, "int8")
    group = (cfg.hidden if per_channel else 128) if group is None else group
    return Settings(weights=weights, group_size=group, per_channel=per_channel,
                    act=act, kv=kv or _kv_default(act, base), base=base, **others)


def _ggml_stored(cfg: Any, weights: str | None, group: int | None) -> StoredWeights | None:
    """A GGUF file's stored weights (no --weights), or one ggml type --weights names."""
    if weights is None:
        return getattr(cfg, "stored", None)
    found = ggml_weights(weights)
    if found is not None and group is not None:
        raise InputError(f"--group {group} with --weights {weights}: a ggml type's block "
                         f"size is fixed (Q4_K: 256 weights in 144 B); drop --group")
    return uniform(found) if found is not None else None


def _kv_default(act: str | None, base: str) -> str:
    """The KV cache's dtype when --kv is not given: the activations' when they are an
    unquantized float (--act fp16 runs the model, cache included, in fp16), else the
    model's own dtype (vLLM's kv_cache_dtype "auto" is "the model data type" under
    quantization="fp8" too; an fp8 cache is kv_cache_dtype="fp8", rooflab's --kv fp8).
    Before review s18 r3 F3 --act fp8/int8 made the cache 8-bit as well: half the KV bytes
    and twice the batch that fits, which vLLM's default does not give."""
    return act if act and _sixteen(act) else base
