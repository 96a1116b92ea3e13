"""What makes a model fit the devices it does not (`rooflab choose`, `llm` and `whatif`
say it alike), and the least memory a `rooflab llm` document's model could need on one
device by dtypes alone. Moved out of cli/choose.py, whose table prints both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def fit_remedy(names: list[str], verb: str = "rooflab llm ",
               hopeless: Sequence[str] = ()) -> str:
    """What makes the model fit the devices it does not: --tp/--pp split it over more of
    them, but a unified-memory device (a Jetson module) has no link to a second one, where
    `rooflab llm --tp` stops with "the catalog has no link": only narrower dtypes help, and
    on the `hopeless` ones not even those (int4 weights and fp8 KV still too big).
    `verb` leads the advice (empty inside `rooflab llm`'s own output)."""
    from ..hardware.catalog import is_unified_memory

    unified = [n for n in names if is_unified_memory(n)]
    fixable = [n for n in unified if n not in hopeless]
    stuck = [n for n in unified if n in hopeless]
    split = f"{verb}--tp N or --pp N, or smaller --weights"
    one = "smaller --weights or --kv fp8: one module, no link to split over"
    none = ("not even --weights int4 --kv fp8 fits one module: a smaller model, or a "
            "device with more memory")
    if not unified:
        return split
    if not stuck and len(unified) == len(names):
        return f"{verb}with {one}" if verb else one
    if not fixable and len(unified) == len(names):
        return none
    parts = [split] if len(unified) < len(names) else []
    parts += [f"on {', '.join(fixable)} only {one}"] if fixable else []
    parts += [f"on {', '.join(stuck)} {none}"] if stuck else []
    return "; ".join(parts)


def least_bytes(llm: Mapping) -> float | None:
    """The smallest footprint an `rooflab llm --json` document's model could reach on one
    device by dtypes alone: int4 weights (one fp16 scale per --group of the document, 128
    by default) and fp8 KV, activations and the decode logits (fp32 whatever the dtypes)
    as they are; None when the document lacks the figures. Parameters are its weight
    bytes / bytes per parameter (norm weights, a few kB, counted as matrices: an upper
    bound)."""
    from ..units import dtype_bytes, stored_weight_bytes

    fp, st = llm.get("footprint"), llm.get("settings")
    try:
        params = fp["weights_bytes"] / st["weight_bytes_per_param"]
        kv = fp["kv_bytes"] * min(1.0, dtype_bytes("fp8") / dtype_bytes(st["kv"]))
        # at the document's --group, as `rooflab llm` tries int4 (quantized_fit)
        int4 = stored_weight_bytes("int4", int(st.get("group_size") or 128))
        # the sampler's fp32 logits stay fp32 (absent from documents before they counted)
        logits = float(fp.get("decode_logits_bytes") or 0.0)
        return params * int4 + kv + fp["activations_bytes"] + logits
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
