"""What if the batch changed: FLOP and activation bytes scale with it, weight bytes stay
(routed experts: as many as the batch's tokens touch). Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from .advice_memory import weight_share as known_weight_share
from .analysis import analyze
from .ceiling import Roof
from .choose import with_launches_s
from .kernel import Kernel
from .opkind import kernel_kind, kind_word
from .retime import GAP_HELD_META, LOWER_BOUND, WhatIf, _apply, _floor
from .whatif_conv import BATCH_FROM, batch_name, image_batch, with_recorded_batch
from .whatif_weights import meta_weights_scaled, shares_words, weight_share_of


def meta_batch(k: Kernel) -> int:
    """The batch a kernel was counted at (meta 'batch', else an image kernel's input N: `ai
    conv2d --n 8` counts batch 8, review s28 R3 F1; else 1), a whole number >= 1; anything else
    is the kernel file's mistake, said as such."""
    value = k.meta.get("batch", image_batch(k) or 1)
    # isfinite: int(inf) raised OverflowError, a traceback (review s23 r4 F2)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            not math.isfinite(value)) or value < 1 or value != int(value):
        raise InputError(f"kernel '{k.name}': meta.batch must be a whole number >= 1 (the "
                         f"batch it was counted at); got {value!r}")
    return int(value)


# `rooflab train`'s parts that --batch holds (meta train_part): their meta batch says
# nothing of what they move, and an old train file's communication row has none (s30 hg)
HELD_PARTS = ("optimizer", "comm")


def batched_moves(moves: Sequence[tuple[Kernel, Kernel]]) -> list[tuple[Kernel, Kernel]]:
    """The (old, new) moves whose meta batch is the step's: a train step's held parts
    (HELD_PARTS) left out, where others remain. A file written by `train --batch 4` before
    the communication row carried its batch read as batch 1 there, and the per-sequence
    line, of one batch 4 -> 8, was dropped (s30 hg)."""
    kept = [m for m in moves if m[0].meta.get("train_part") not in HELD_PARTS]
    return kept or list(moves)


def _comm_words(kernels: Sequence[Kernel]) -> str:
    """What --batch does to a train step's collectives: --dp's held, --tp's grown."""
    dp = any(k.meta.get("train_part") == "comm" and not k.meta.get("tensor_parallel")
             for k in kernels)
    tp = any(k.meta.get("tensor_parallel") for k in kernels)
    return (f"; {TRAIN_COMM_HELD}" if dp else "") + (f"; {TRAIN_TP_GROWS}" if tp else "")


def tp_batched(k: Kernel, batch: int, b0: int) -> Kernel:
    """`train --tp`'s collectives row at another batch: they move the b x s x h
    activations (and the loss's values per token), so its bytes grow batch / b0."""
    r = batch / b0
    return k.with_(bytes={lv: b * r for lv, b in k.bytes.items()},
                   meta={**k.meta, "batch": batch})


def change_batch(roof: Roof, kernels: Sequence[Kernel], batch: int,
                 from_batch: int | None = None, names: Iterable[str] | None = None,
                 share: float | None = None) -> WhatIf:
    """Batch b instead of b0: FLOP and activation bytes scale b/b0, weight bytes stay."""
    if batch < 1:
        raise InputError(f"batch must be >= 1; got {batch}")
    # the batch each kernel was recorded at, where a shape says it (a trace at N = 4 was
    # scaled from batch 1: 8x too slow at --batch 32, review s28 R3 F1)
    kernels, recorded = with_recorded_batch(kernels) if from_batch is None else (
        tuple(kernels), "")
    chosen = [k for k in kernels if names is None or k.name in set(names)]
    unsplit = [k for k in chosen if _unsplit_decode(k, share)]
    # past the ridge an unsplit point's time is a lower bound, no prediction (_at_least)
    past = {k.name: reach for k in unsplit
            if (reach := _ridge_batch(roof, k, from_batch or meta_batch(k))) is not None
            and batch > reach}

    def change(k: Kernel) -> Kernel:
        if k.meta.get("tensor_parallel"):
            return tp_batched(k, batch, from_batch or meta_batch(k))
        if k.meta.get("train_part") in HELD_PARTS:
            # one pass over the parameters per step, whatever the batch (`rooflab train
            # --batch` keeps it; review s27 v3-F6: its FLOP doubled); the collectives move
            # the gradients, as large at any batch (s30: --batch 2 doubled them)
            return k.with_(meta={**k.meta, "batch": batch})
        b0 = from_batch or meta_batch(k)
        r = batch / b0
        s, src = weight_share_of(k, share)
        used.append((k.name, s, src))
        w = weight_ratio(k, r) if share is None else 1.0
        # the meta's split, shape rows and batch follow, so that a chained what-if reads
        # the new share (review s26 r3 F2: batch 1 -> 64 -> 1 kept 21 MB of activations
        # as weights, the norms 15x off)
        meta = {**k.meta, "batch": batch, **meta_weights_scaled(k.meta, w, r),
                **_rows_scaled(k.meta, r, conv=image_batch(k) is not None)}
        # `ai conv2d --n 8`'s name says n8: at --batch 32 it says n32 (session 29)
        return k.with_(name=batch_name(k, b0, batch),
                       flop={p: f * r for p, f in k.flop.items()},
                       bytes={lv: b * (s * w + (1 - s) * r) for lv, b in k.bytes.items()},
                       meta=meta)

    # the generic clause names only the kernels whose split is known: an unsplit decode
    # point holds every byte, and saying its KV grows beside that read as a contradiction
    # (review 19a N5)
    split = [k for k in chosen if k not in unsplit]
    train = any(k.meta.get("train_part") for k in chosen)
    # images, not tokens: every kernel's batch read off an input's N (a conv's, a CNN
    # trace's), none from `rooflab llm` (review s28 R3 F1: the LLM words on a ResNet)
    samples = bool(chosen) and all(BATCH_FROM in k.meta for k in chosen)
    grow = (TRAIN_GROW + _comm_words(chosen) if train and not unsplit
            else SAMPLES_GROW if samples else
            "FLOP and activation (and KV) bytes grow with the batch (seed 004: decode AI ~ "
            "batch)" if not unsplit else
            "FLOP grows with the batch" + (
                "; activation (and KV) bytes grow with it for the kernels with a known "
                "weight share" if split else ""))
    used: list[tuple[str, float, str]] = []
    w = _apply(roof, kernels, change, names, f"batch -> {batch}", "")
    # the shares are known once each moved kernel was changed: say the ones used, as
    # --quantize does (review r8 F2: a conv held whole was on no line)
    w = replace(w, assumption=(
        (f"a training step, {batch} sequences per micro-batch: " if train else "")
        + ("weights (a conv's filters, a linear layer's matrix) are read once for the "
           "whole batch" if samples else "weights are read once for the whole batch (MoE "
           "experts: as many as the batch's tokens touch)")
        + f"; {grow}; {shares_words(used)}"
        + (f"; {recorded}" if recorded else "")
        + _unsplit_words(unsplit, batch, bool(past)) + _past_words(roof, past, batch)))
    return _at_least(w, set(past)) if past else w


# --batch on `rooflab train`'s kernels (meta train_part), as `train --batch` counts them
TRAIN_GROW = ("the forward, backward and recompute FLOP and activation bytes grow with the "
              "batch; the optimizer's pass over the parameters (FLOP and bytes) is one "
              "per step, held")
# and a --dp step's communication row: the gradients it moves do not grow with the batch
TRAIN_COMM_HELD = "the --dp collectives move the gradients, as large at any batch: held"
TRAIN_TP_GROWS = ("the --tp collectives move the b x s x h activations: they grow with the "
                  "batch")


# --batch on kernels whose batch is an input's N (a conv's images)
SAMPLES_GROW = "FLOP and activation bytes grow with the batch"


# Where to get the split a decode point lacks: the kernel file's meta (weight_share_of reads
# it), or the model that counts KV and activations itself.
SPLIT_FIX = ("give the point's meta.weight_bytes (the bytes that are weights; the rest, KV "
             "cache and activations, grows with the batch: `rooflab docs "
             "json#names-a-script-may-write`) or use `rooflab llm --batch`, which counts the "
             "KV cache")


def _unsplit_decode(k: Kernel, share: float | None) -> bool:
    """Whether a kernel is a decode point whose bytes have no weight/KV/activation split:
    its weight share (100 %) comes from its kind alone, so every byte is held fixed as
    the batch grows, the KV cache too (review 18a F10)."""
    kind = kernel_kind(k)[0]
    if share is not None or kind_word(kind) != "decode":
        return False
    nbytes = k.bytes.get("DRAM") or sum(k.bytes.values())
    ai = k.total_flop / nbytes if nbytes else 0.0
    return known_weight_share(k, kind, ai, k.precision) is None


def _ridge_batch(roof: Roof, k: Kernel, b0: int) -> float | None:
    """The batch at which an unsplit decode point's AI (~ batch, its bytes held) reaches
    the ridge of its binding ceiling; None where it has no AI on this roof."""
    points = analyze(roof, [k.with_(seconds=None, samples=())]).primary()
    if not points or points[0].ai <= 0:
        return None
    return b0 * points[0].ridge / points[0].ai


def _past_words(roof: Roof, past: Mapping[str, float], batch: int) -> str:
    """Why an unsplit decode point past the ridge gets a lower bound, not a time: with its
    bytes held the model says the step takes no longer until the ridge; past it the KV
    cache, which grows with the batch and ends batching's gain (seed 004 Day 16: "KV cache
    是 batching 收益的天花板"), decides the time, and without a KV figure the compute floor
    batch x FLOP / peak is all that is sure: the KV cache left out can only lengthen the
    step (review 18a F10: TinyLlama at context 500 has KV equal to its weights at batch
    183). It was refused with exit 2 one batch past the ridge, after a full answer below."""
    if not past:
        return ""
    names = ", ".join(list(past)[:3]) + (f" and {len(past) - 3} more" if len(past) > 3
                                         else "")
    reach = min(past.values())
    return (f"; past the ridge of '{roof.name}' (reached at batch {reach:.0f}) {names} "
            f"takes at least its compute floor at batch {batch}, batch x FLOP / peak with "
            f"its launches: a lower bound, not a prediction, since the KV cache growing "
            f"with the batch decides the step time there and leaving it out can only make "
            f"the step longer")


def _at_least(w: WhatIf, past: set[str]) -> WhatIf:
    """`w` with the moved kernels named in `past` timed at their floor with launches
    (choose.with_launches_s on the new roof), marked as a lower bound (retime.LOWER_BOUND)
    and without a gap-held range: their kept-efficiency time is no prediction there."""
    roof = w.after.roof
    swap: dict[int, Kernel] = {}
    for old, new in w.moves:
        if old.name in past and new.seconds is not None:
            floor = with_launches_s(_floor(roof, new)[0], new.calls, roof.overhead_s)
            meta = {k: v for k, v in new.meta.items() if k not in GAP_HELD_META}
            swap[id(new)] = new.with_(seconds=floor, meta={**meta, LOWER_BOUND: True})
    after = [swap.get(id(k), k) for k in w.after.kernels]
    moves = tuple((old, swap.get(id(new), new)) for old, new in w.moves)
    return replace(w, after=analyze(roof, after), moves=moves)


def _unsplit_words(unsplit: Sequence[Kernel], batch: int, past: bool = False) -> str:
    """The assumption an unsplit decode point's prediction rests on, at the batch asked;
    past: the batch is past the ridge, where _past_words bounds the time from below rather
    than saying it takes no longer."""
    if not unsplit:
        return ""
    names = ", ".join(k.name for k in unsplit[:3]) + (
        f" and {len(unsplit) - 3} more" if len(unsplit) > 3 else "")
    return (f"; {names}: no KV/activation split (weights 100 % of the bytes, read off the "
            f"kind), so this assumes the KV cache and activations are negligible at batch "
            f"{batch}{'' if past else ' and the step takes no longer'}; they are not at "
            f"long contexts (seed 004 Day 16: KV bytes grow with the batch and bend the "
            f"curve): {SPLIT_FIX}")


# meta shape keys that count the batch's rows (a linear's m, tokens x top-k for experts;
# the embedding's tokens; attention's batch): they scale with it
BATCH_ROWS = ("m", "tokens", "batch")


def _rows_scaled(meta: Mapping, r: float, conv: bool = False) -> dict:
    """{'shape': ...} with its BATCH_ROWS keys x r (a conv's n too: its batch; a matmul's
    n is its columns); {} without a shape."""
    shape = meta.get("shape")
    if not isinstance(shape, Mapping):
        return {}
    rows = BATCH_ROWS + (("n",) if conv else ())

    def scaled(v: float) -> float:
        new = v * r   # a whole count stays an int in the JSON (tokens 64, not 64.0)
        return int(new) if isinstance(v, int) and float(new).is_integer() else new

    return {"shape": {key: (scaled(v) if key in rows and isinstance(v, (int, float))
                            and not isinstance(v, bool) else v) for key, v in shape.items()}}


def weight_ratio(k: Kernel, r: float) -> float:
    """How much more of its "weights" a kernel reads at r times the batch: the experts
    touched (expert_weight_ratio), the embedding's rows gathered (gathered_rows_ratio),
    else 1 (read once per step)."""
    return expert_weight_ratio(k, r) * gathered_rows_ratio(k, r)


def gathered_rows_ratio(k: Kernel, r: float) -> float:
    """How many more table rows an embedding gathers at r times the batch: `rooflab llm`'s
    embedding counts its looked-up rows as weights, one per token up to the table (meta
    shape tokens, vocab; max_positions adds learned positions' rows), so they grow with the
    batch (review s26 r3 F5: held as if read once per step, 0.53x at batch 16). 1 for
    other kernels, and for an embedding without a token count."""
    shape = k.meta.get("shape")
    if k.meta.get("op") != "embedding" or not isinstance(shape, Mapping):
        return 1.0
    tokens = shape.get("tokens")
    if not isinstance(tokens, (int, float)) or isinstance(tokens, bool) or tokens <= 0:
        return 1.0
    caps = [c for c in (shape.get("vocab", math.inf), shape.get("max_positions"))
            if isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0]

    def rows(t: float) -> float:
        return sum(min(t, c) for c in caps)

    return rows(tokens * r) / rows(tokens)


def expert_weight_ratio(k: Kernel, r: float) -> float:
    """How much more expert weight a batch r times larger reads: routed-expert kernels of
    `rooflab llm` say experts E and top-k in meta shape (m = tokens x top-k); T tokens touch
    E(1 - (1 - k/E)^T) distinct experts on average (uniform routing). 1 for other kernels."""
    shape = k.meta.get("shape")
    if not isinstance(shape, Mapping):
        return 1.0
    e, top, m = shape.get("experts"), shape.get("top_k"), shape.get("m")
    if not (isinstance(e, (int, float)) and isinstance(top, (int, float))
            and isinstance(m, (int, float)) and e > 0 and 0 < top <= e and m > 0):
        return 1.0
    tokens = m / top

    def distinct(t: float) -> float:
        return e * (1.0 - (1.0 - top / e) ** t)

    return distinct(tokens * r) / distinct(tokens)
