"""Typed reads of a config.json's fields: an int, an optional int, a flag, the first of
several names, each checked with an error that names the file and the field (a hand-written
"8", 8.5, -4 or "false" would otherwise be miscounted). Pure: a dict in, values out.
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import InputError
from ..ops_common import MAX_SIZE

# HF field names and the older/other names that mean the same thing.
ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "vocab_size": ("vocab_size",),
    "intermediate_size": ("intermediate_size", "n_inner", "ffn_dim"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions", "max_seq_len"),
}
REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def aliased(d: dict[str, Any], key: str) -> Any:
    for alias in ALIASES.get(key, (key,)):
        if d.get(alias) is not None:
            return d[alias]
    return None


def checked_int(v: Any, key: str, where: str, minimum: int = 1) -> int:
    """`v` as an int, or an error naming the file and field: a hand-written config with
    "8" (a string), 8.5, -4 or true would otherwise be miscounted or crash int()."""
    if isinstance(v, int) and not isinstance(v, bool) and v > MAX_SIZE:
        # before isfinite, which converts to float: a 400-digit JSON integer raised
        # OverflowError there, an internal error (review s22 r1 F8)
        raise InputError(f"{where}: field '{key}' is {_big(v)}, larger than rooflab takes "
                         f"(at most 2**63 - 1 = {float(MAX_SIZE):.3g}); is the field right?",
                         field=key)
    ok = (not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
          and v == int(v) and v >= minimum)
    if not ok:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise InputError(f"{where}: field '{key}' must be {what} (a JSON number, no quotes); "
                         f"got {v!r}", field=key)
    if v > MAX_SIZE:
        # the op counts take sizes up to an int64 dimension: past it a head count of 1e308
        # overflowed into an internal error, and hidden_size's error named no file or field
        # (review r1 F11)
        raise InputError(f"{where}: field '{key}' is {float(v):.3g}, larger than rooflab "
                         f"takes (at most 2**63 - 1 = {float(MAX_SIZE):.3g}); is the field "
                         f"right?", field=key)
    _check_width(int(v), key, where)
    return int(v)


# A model's widths, each capped far past any released LLM (the largest bundled: Llama-3.1-
# 405B's hidden 16,384, MLP 53,248, 128 heads; Gemma-2's vocabulary 256,000, head_dim 256):
# without a cap hidden_size 1e9 or vocab_size 1e15 ran and printed petabytes of weights
# (s38 I). num_hidden_layers has its own cap (config_parse.MAX_LAYERS).
_WIDEST = "the largest released LLMs have"
WIDTH_CAPS: dict[tuple[str, ...], tuple[int, str]] = {
    ("hidden_size", "n_embd", "d_model"): (
        2**17, f"{_WIDEST} 16,384-18,432: Llama-3.1-405B, PaLM 540B"),
    ("intermediate_size", "n_inner", "ffn_dim", "intermediate_size_mlp",
     "moe_intermediate_size"): (
        2**20, f"{_WIDEST} an MLP 53,248-73,728 wide: Llama-3.1-405B, PaLM 540B"),
    ("vocab_size",): (2**22, f"{_WIDEST} about 256,000 tokens: Gemma"),
    ("num_attention_heads", "n_head", "num_key_value_heads", "n_head_kv", "num_kv_heads"): (
        2**13, f"{_WIDEST} 128 heads: Llama-3.1-405B, DeepSeek-V3"),
    ("head_dim",): (2**13, f"{_WIDEST} a head_dim of 64-256"),
}
_CAP_OF = {name: cap for names, cap in WIDTH_CAPS.items() for name in names}


def _check_width(v: int, key: str, where: str) -> None:
    """A width field past its cap in WIDTH_CAPS: one line naming the file, the field, the
    bound and why (a typo or a wrong unit, not a model)."""
    cap = _CAP_OF.get(key)
    if cap and v > cap[0]:
        raise InputError(f"{where}: field '{key}' is "
                         f"{f'{v:,}' if v < 10**9 else _big(v)}, more than the {cap[0]:,} "
                         f"rooflab takes ({cap[1]}); is the field right?", field=key)


def _big(v: int) -> str:
    """A huge integer in a few characters: '1e+20', or 'an integer of about 401 digits'
    past floats (from its bits: str() refuses past 4300 digits)."""
    return (f"{float(v):.3g}" if v.bit_length() < 1000
            else f"an integer of about {v.bit_length() * 30103 // 100000 + 1} digits")


def aliased_int(d: dict[str, Any], key: str, where: str) -> int | None:
    """The first of `key`'s aliases set, checked under the name the file gives it (a GPT-2
    config's "n_embd": "768" was called field 'hidden_size'; review s33 E)."""
    for alias in ALIASES.get(key, (key,)):
        if d.get(alias) is not None:
            return checked_int(d[alias], alias, where)
    return None


def opt_int(d: dict[str, Any], key: str, where: str, minimum: int = 1) -> int | None:
    """An optional integer field by its own name: None when absent, null (or 0 where 0
    is not allowed: HF writes 0 for "none" in some fields), else checked."""
    v = d.get(key)
    if v is None or (v == 0 and minimum > 0 and not isinstance(v, bool)):
        return None
    return checked_int(v, key, where, minimum)


def first_int(d: dict[str, Any], keys: tuple[str, ...], where: str,
              zero_is_none: bool = True) -> tuple[str, int] | None:
    """The first of `keys` set in the config, with its checked value; 0 reads as unset
    unless `zero_is_none` is False (then it is refused as any count < 1 is)."""
    for k in keys:
        v = opt_int(d, k, where) if zero_is_none else (
            None if d.get(k) is None else checked_int(d[k], k, where))
        if v is not None:
            return k, v
    return None


def bool_field(d: dict[str, Any], key: str, where: str) -> bool | None:
    """A true/false field; the string "false" would read as true, so it is refused."""
    v = d.get(key)
    if v is None or isinstance(v, bool):
        return v
    raise InputError(f"{where}: field '{key}' must be true or false (JSON booleans, no "
                     f"quotes); got {v!r}", field=key)


def check_required(d: dict[str, Any], where: str) -> None:
    missing = [k for k in REQUIRED if aliased(d, k) is None]
    if missing:
        names = "; ".join(f"{k} (or {', '.join(ALIASES[k][1:])})" if len(ALIASES[k]) > 1 else k
                          for k in missing)
        from .vision_hint import vision_hint

        raise InputError(f"{where}: missing field(s) {names}; rooflab reads decoder-only "
                         f"transformer configs (Llama, Mistral, Qwen2, Gemma-2, Mixtral, "
                         f"DeepSeek-V2, GPT-2) — check that this is the model's config.json"
                         + vision_hint(d.get("model_type"), d.get("architectures")))
