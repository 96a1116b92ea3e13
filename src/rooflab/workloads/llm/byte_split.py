"""A kernel's byte split built from (key, bytes) pairs that add.

Attention's keys are chosen at run time (MLA prefill's decompressed K/V are activations,
not KV cache), so a dict literal {"activations": q + o, kv_key: kv} silently kept only the
last entry when kv_key == "activations": Q, O and the naive score matrix vanished from
DeepSeek prefill (review s19 r6 F1). Pairs that add cannot drop bytes that way."""

from __future__ import annotations


def added(*pairs: tuple[str, float]) -> dict[str, float]:
    """{key: sum of that key's bytes} over `pairs`; a repeated key adds, never replaces."""
    out: dict[str, float] = {}
    for key, nbytes in pairs:
        out[key] = out.get(key, 0.0) + nbytes
    return out
