"""Where decode AI stops tracking the batch: the per-sequence bytes (KV cache and
activations) one more sequence adds to a step, and the batch at which each of them -- and
the two together -- equal the weight bytes read once per step. AI = batch x FLOP per
sequence / (weights + batch x per-sequence bytes), so AI / batch halves where the
per-sequence bytes equal the weights. At a short context the activations, not the KV
cache, come first (tinyllama on a T4 at context 16: 3.66 MB of activations against 383 kB
of KV per sequence; review r2 F1). Pure: reads a BatchSweep.
"""

from __future__ import annotations

import math


def per_sequence_bytes(sw) -> tuple[float, float]:
    """(KV, activation) bytes one sequence adds to a decode step, read off the sweep's
    largest batch: each sequence reads its own cache and moves its own activations, so
    both grow in proportion to the batch while the weights are read once per step."""
    p = sw.points[-1]
    split = p.timing.step.bytes_split
    return split["kv"] / p.batch, split["activations"] / p.batch


def _row_bytes(sw) -> float:
    """Weight bytes one more sequence adds to a step: the embedding rows it looks up."""
    p = sw.points[-1]
    rows = sum(o.split("weights") for o in p.timing.step.ops if o.op.op == "embedding")
    return rows / p.batch


def _weights_known(sw) -> list[tuple[float, float]]:
    """(batch, weight bytes) pairs the sweep knows: its points, and the KV = weights batch,
    where the weights are that batch's KV bytes (a MoE's weights grow with the experts
    its tokens touch; a dense model's only by the embedding rows looked up)."""
    known = {float(p.batch): p.weight_bytes for p in sw.points}
    b = sw.kv_equals_weights_batch
    if math.isfinite(b) and b > 0:
        known.setdefault(b, b * per_sequence_bytes(sw)[0])
    return sorted(known.items())


def equals_weights_batch(sw, per_sequence: float) -> float | None:
    """The batch b at which b x `per_sequence` bytes equal the step's weight bytes W(b).

    Between the batches the sweep knows (_weights_known), W(b) is the next known batch's
    weights less its embedding rows: exact for a dense model (only the rows grow with the
    batch), an upper bound for a MoE (the experts touched only grow, and are nearly all
    touched within tens of tokens), where a straight line between a sweep of 1,4 and the
    KV batch would be 40 % low (deepseek-v2-lite). Past the last known batch, W grows by
    the rows alone. None when no batch gets there."""
    row = _row_bytes(sw)
    if per_sequence <= row:
        return None
    known = _weights_known(sw)
    lo = -math.inf
    for b_next, w_next in [*known, (math.inf, None)]:
        b_ref, w_ref = (b_next, w_next) if w_next is not None else known[-1]
        # per_sequence x b = w_ref - row x (b_ref - b)
        b = (w_ref - row * b_ref) / (per_sequence - row)
        if lo < b <= b_next:
            return b
        lo = b_next
    return None


def bend_batches(sw) -> dict[str, float | None]:
    """The JSON's view of the bend (`llm --json` sweep): per-sequence bytes and the batches
    at which KV, activations and the two together equal the weights (None: no batch)."""
    kv, act = per_sequence_bytes(sw)
    return {"kv_bytes_per_sequence": kv, "activation_bytes_per_sequence": act,
            "activations_equal_weights_batch": equals_weights_batch(sw, act),
            "kv_and_activations_equal_weights_batch": equals_weights_batch(sw, kv + act)}
