"""A checkpoint's `quantization_config` (transformers' AWQ / GPTQ / bitsandbytes / fp8 /
compressed-tensors configs) as the weight and activation formats `rooflab llm --weights
--group --act` would state, and the modules it keeps unquantized. Pure: a dict in, a frozen
Quantization (or None and a note) out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Quantization:
    """The weight format a checkpoint's `quantization_config` declares, as `rooflab llm
    --weights/--group` would state it: the default settings for this config."""

    method: str                 # quant_method as the config says it (awq, gptq, fp8, ...)
    weights: str                # int4 | int8 | fp8 | fp4 (mxfp4)
    group_size: int | None = None   # weights per scale (int4/int8); None: one per tensor
    scale_dtype: str = "fp16"
    # W8A8: activations quantized too (fp8 activation_scheme, compressed-tensors
    # input_activations), as `--act` would set them; None: weight-only
    act: str | None = None
    act_scheme: str = ""        # "dynamic" (per token, at run time) or "static" (calibrated)
    # rooflab kernel names the config keeps unquantized (compressed-tensors `ignore`,
    # `modules_to_not_convert`, `llm_int8_skip_modules`, fp8 `ignored_layers`)
    keep: tuple[str, ...] = ()
    per_channel: bool = False   # one scale per output channel (GPTQ/AWQ group_size -1)
    # a packed zero point per group beside the scale: AutoAWQ's zero_point (its default,
    # true) and GPTQ/AutoRound's sym false; review 18d J
    zero_point: bool = False

    @property
    def format(self) -> str:
        """'weights int4, group 128' (fp8: one scale per tensor, no group)."""
        if self.method == "mxfp4":
            return (f"weights mxfp4 (fp4 e2m1 + one e8m0 scale per {self.group_size}: "
                    f"4.25 bits)")
        group = (", per channel" if self.per_channel
                 else f", group {self.group_size}" if self.group_size else "")
        return f"weights {self.weights}{group}"

    def describe(self) -> str:
        return f"{self.format}, from the config's quantization_config ({self.method})"


# bits of a weight-only integer quantizer -> rooflab's weight dtype (GPTQ's bits: 2, 3, 4, 8)
INT_BITS = {2: "int2", 3: "int3", 4: "int4", 8: "int8"}


def quantization(q: Any, hidden: int) -> tuple[Quantization | None, str | None]:
    """The weight format of a `quantization_config` (transformers' AWQ/GPTQ/bitsandbytes/
    fp8/compressed-tensors configs), and a note when it is there but not understood (the
    tables then stay in the checkpoint's dtype, said rather than silent)."""
    if not isinstance(q, dict):
        return None, None
    method = str(q.get("quant_method") or q.get("quant_type") or "unknown").lower()
    found = _quant_format(q, method, hidden)
    if found is not None:
        _, unmapped = _kept(q)
        return found, _unmapped_note(unmapped)
    return None, (f"the config's quantization_config ({method}"
                  + (f", {q.get('bits')} bits" if q.get("bits") is not None else "")
                  + ") is not one rooflab reads (awq, gptq, bitsandbytes, fp8, "
                  "compressed-tensors with 4/8-bit weights): the tables count the weights "
                  "unquantized; give --weights int4/int8/fp8 (and --group) to match it")


# `ignore` entries naming modules outside the language model (Llama 4's
# "re:.*vision_model.*", "re:.*multi_modal_projector.*"): those modules are not counted at
# all, so "counted at the quantized width" was wrong for them (review s20 r8 F8)
OUTSIDE_TEXT = re.compile(r"vision|visual|multi_modal|mm_projector|image|audio|speech")


def _unmapped_note(unmapped: tuple[str, ...]) -> str | None:
    """What the tables do with `ignore` entries that name no per-layer module."""
    outside = [e for e in unmapped if OUTSIDE_TEXT.search(e)]
    inside = [e for e in unmapped if e not in outside]
    said = []
    if outside:
        said.append(f"{', '.join(outside[:4])} name{'s' * (len(outside) == 1)} modules outside "
                    f"the text model (vision encoder, projector), which rooflab does not "
                    f"count at all")
    if inside:
        said.append(f"{', '.join(inside[:4])}: not a module of every layer rooflab tables, "
                    f"so counted at the quantized width")
    return (f"the config's quantization_config leaves unquantized: {'; '.join(said)}"
            if said else None)


def _group(value: Any, hidden: int) -> int | None:
    """A group size; -1 or absent means one scale per output channel: counted as a group of
    `hidden` weights (the input width of most matrices; the scale bytes are negligible
    either way), and worded "per channel" (Quantization.per_channel)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return hidden


def _per_channel(value: Any) -> bool:
    return not (isinstance(value, int) and not isinstance(value, bool) and value > 0)


# Hugging Face module names (the last part of a path) -> rooflab's kernel names
HF_MODULES = {"gate": "router", "kv_a_proj_with_mqa": "kv_a_proj"}
# HF module names that stand for several kernels: gpt-oss keeps "model.layers.*.self_attn"
# (all its projections) unquantized; the embedding table is kept under any
# quantization_config (Settings.embedding_kept), so naming it maps to nothing more
HF_GROUPS = {"self_attn": ("q_proj", "k_proj", "v_proj", "o_proj"),
             "attn": ("q_proj", "k_proj", "v_proj", "o_proj"), "embed_tokens": ()}
LINEARS = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                     "down_proj", "lm_head", "router", "q_a_proj", "q_b_proj", "kv_a_proj",
                     "kv_b_proj"})


def _kept(q: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(kernel names, entries not mapped) of the modules the config leaves unquantized:
    compressed-tensors `ignore`, AWQ/fbgemm `modules_to_not_convert`, bitsandbytes
    `llm_int8_skip_modules`, fp8 `ignored_layers` (vLLM's Fp8Config). An entry maps when it
    names a module of every layer ("lm_head", "re:.*down_proj", "mlp.gate"); one naming a
    single layer ("model.layers.0.mlp.down_proj") cannot be a row of the per-layer tables."""
    entries: list[str] = []
    for key in ("ignore", "modules_to_not_convert", "llm_int8_skip_modules", "ignored_layers"):
        v = q.get(key)
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list):
            entries += [str(e) for e in v]
    kept: list[str] = []
    unmapped: list[str] = []
    for e in entries:
        plain = re.sub(r"[\\^$*()|?+\[\]]", "", e.removeprefix("re:"))
        last = [p for p in plain.split(".") if p]
        name = HF_MODULES.get(last[-1], last[-1]) if last else ""
        if name in HF_GROUPS and not re.search(r"layers?\.\d", plain):
            kept += HF_GROUPS[name]
        elif name in LINEARS and not re.search(r"layers?\.\d", plain):
            kept.append(name)
        else:
            unmapped.append(e)
    return tuple(dict.fromkeys(kept)), tuple(unmapped)


# Quantizers that leave the output projection unquantized unless told otherwise: AutoAWQ
# and GPTQ quantize only the decoder blocks' linears (GPTQ's `lm_head: true`, vLLM's
# lm_head_quantized, opts in), and transformers' bitsandbytes / fp8 quantizers skip the
# output embeddings (get_keys_to_not_convert). compressed-tensors says it in `ignore`.
LM_HEAD_KEPT = frozenset({"awq", "gptq", "autoround", "auto-round", "bitsandbytes", "fp8",
                          "fbgemm_fp8"})


def _lm_head_kept(q: dict[str, Any], method: str) -> bool:
    opted_in = q.get("lm_head") is True or q.get("quant_lm_head") is True
    return method in LM_HEAD_KEPT and not opted_in


def _quant_format(q: dict[str, Any], method: str, hidden: int) -> Quantization | None:
    found = _weight_format(q, method, hidden)
    if found is None:
        return None
    keep, _ = _kept(q)
    if _lm_head_kept(q, method) and "lm_head" not in keep:
        keep = (*keep, "lm_head")
    return replace(found, keep=keep) if keep else found


def _weight_format(q: dict[str, Any], method: str, hidden: int) -> Quantization | None:
    if method in ("awq", "gptq", "autoround", "auto-round"):
        bits = q.get("bits")
        w = INT_BITS.get(bits) if isinstance(bits, int) and not isinstance(bits, bool) else None
        g = q.get("group_size")
        zero = (bool(q.get("zero_point", True)) if method == "awq"
                else not q.get("sym", True))
        return (Quantization(method, w, _group(g, hidden), per_channel=_per_channel(g),
                             zero_point=zero)
                if w else None)
    if method == "fp8":
        # transformers' FineGrainedFP8 / vLLM Fp8Config: activation_scheme "dynamic" (per
        # token) or "static" quantizes activations to fp8 too: fp8 GEMMs (W8A8)
        scheme = str(q.get("activation_scheme") or "").lower()
        if scheme in ("dynamic", "static"):
            return Quantization(method, "fp8", act="fp8", act_scheme=scheme)
        return Quantization(method, "fp8")
    if method == "mxfp4":
        # OCP microscaling fp4 (gpt-oss): blocks of 32 e2m1 values (4 bits) sharing one
        # e8m0 scale (1 byte; the checkpoint's *_scales tensors are uint8): 4 + 8/32 = 4.25
        # bits per weight, settings.FP4_FORMATS' mxfp4 (transformers Mxfp4HfQuantizer
        # swaps the experts only; modules_to_not_convert names the rest). It was labelled
        # int4, the same bytes under another name (review s26 r3 F7)
        return Quantization(method, "fp4", 32, "uint8")
    if method == "fbgemm_fp8":
        # FBGEMM fp8: row-wise fp8 weights, activations quantized per token at run time
        return Quantization(method, "fp8", act="fp8", act_scheme="dynamic")
    if method == "bitsandbytes":
        # bitsandbytes 4-bit (nf4/fp4) keeps one fp32 absmax per block of 64 weights (double
        # quantization, which shrinks those scales further, is not counted); LLM.int8()
        # keeps one fp32 scale per row
        if q.get("load_in_4bit") is True:
            return Quantization(method, "int4", 64, "fp32")
        if q.get("load_in_8bit") is True:
            return Quantization(method, "int8", hidden, "fp32", per_channel=True)
        return None
    if method == "compressed-tensors":
        return _compressed_tensors(q, hidden)
    return None


def _input_acts(g: dict[str, Any]) -> tuple[str | None, str]:
    """compressed-tensors `input_activations` of 8 bits: int8 or fp8 activations (W8A8)."""
    a = g.get("input_activations")
    if not isinstance(a, dict) or a.get("num_bits") != 8:
        return None, ""
    kind = str(a.get("type") or "int").lower()
    act = {"int": "int8", "float": "fp8"}.get(kind)
    return act, ("dynamic" if a.get("dynamic") is True else "static") if act else ""


def _compressed_tensors(q: dict[str, Any], hidden: int) -> Quantization | None:
    """compressed-tensors (llm-compressor): the first config group's weight scheme, and its
    input_activations when 8-bit (W8A8)."""
    groups = q.get("config_groups")
    if not isinstance(groups, dict):
        return None
    for g in groups.values():
        w = g.get("weights") if isinstance(g, dict) else None
        if not isinstance(w, dict):
            continue
        bits, kind = w.get("num_bits"), str(w.get("type") or "int").lower()
        act, scheme = _input_acts(g)
        if kind == "float" and bits == 8:
            return Quantization("compressed-tensors", "fp8", act=act, act_scheme=scheme)
        if kind == "int" and bits in INT_BITS:
            group = (w.get("group_size") if w.get("strategy") == "group" else None)
            return Quantization("compressed-tensors", INT_BITS[bits], _group(group, hidden),
                                act=act, act_scheme=scheme, per_channel=_per_channel(group))
        return None
    return None


def undeclared_dtype(cfg: Any) -> str:
    """The torch dtype a config without torch_dtype runs at: bfloat16 for an mxfp4
    checkpoint (gpt-oss: its non-expert tensors are stored bf16, and vLLM's mxfp4 MoE path
    takes bf16 activations, w4a16), float16 (assumed) otherwise. Review s19 r6 F6."""
    q = getattr(cfg, "quantization", None)
    return "bfloat16" if q is not None and q.method == "mxfp4" else "float16"


def dtype_words(cfg: Any) -> str:
    """The config's dtype for a sentence: its torch_dtype, or the mxfp4 rule's."""
    if getattr(cfg, "dtype", ""):
        return f"torch_dtype ({cfg.dtype})"
    return ("mxfp4 checkpoint (no torch_dtype: bf16, as its other tensors are stored and "
            "vLLM's mxfp4 MoE runs)" if undeclared_dtype(cfg) == "bfloat16" else
            "dtype (no torch_dtype: float16 assumed)")
