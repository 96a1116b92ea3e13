"""Gradient buckets filled tensor by tensor, and when each one is ready: PyTorch DDP's
(`rooflab train --dp N`, --zero 0) and DeepSpeed ZeRO-1/2's (--zero 1/2, overlap_comm), as
`rooflab train` times them and the file verbs re-time them (model/train_comm.exposure).

DDP launches a bucket's all-reduce once its last gradient is written, and a gradient is
written when the backward reaches its tensor: so bucket j is ready after the part of the
backward spent up to its last tensor, not after an equal share j/B of it (sessions 36-37's
rule, model/train_comm.bucket_exposed_s, which FSDP's units keep). DeepSpeed's stage 1/2
fills its reduce bucket in the same gradient-ready order, from each parameter's gradient
hook (stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads), but closes it
before a tensor that would take it past reduce_bucket_size, and launches it then: at the
next tensor's hook, the last bucket after the backward (rule "deepspeed"; DDP's "ddp").
The buckets are then queued on the link one at a time, each taking its bytes' share of the
collective's bandwidth time plus one launch's hops. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

RULES = ("ddp", "deepspeed")


def ddp_buckets(runs: Sequence[tuple[float, int]], limits: Sequence[float],
                rule: str = "ddp") -> int:
    """How many buckets are filled from gradients of (bytes, how many in a row) in ready
    order. "ddp", PyTorch DDP: a tensor joins the open bucket, which closes once its bytes
    reach its limit (>=, so it may end past it), the first bucket limits[0], each later
    the last of `limits` (reducer.cpp compute_bucket_assignment_by_size; grad_tensors.py).
    llama-2-7b at bf16 under [1 MiB, 25 MiB]: lm_head's 262 MB alone, each layer's 7
    matrices (32 MiB and 86 MiB, each past 25 MiB) one a bucket with the norms before them,
    the embedding's 262 MB last: 1 + 32 x 7 + 1 = 226 (by bytes, 13.5 GB / 25 MiB: 506).
    "deepspeed", ZeRO-1/2: the bucket is closed before a tensor that would take it past
    the limit, a tensor past it alone (module docstring). llama-2-7b at bf16 under 1 GB
    (5e8 elements): 14 buckets of 0.89-0.99 GB, lm_head's 262 MB and 2 layers' 405 MB
    each the first, the embedding's 262 MB in the last (by bytes, 13.5 GB / 1 GB: 14)."""
    return len(filled(tuple((float(b), int(n)) for b, n in runs), tuple(limits), rule))


@lru_cache(maxsize=64)
def filled(runs: tuple[tuple[float, int], ...], limits: tuple[float, ...],
           rule: str = "ddp") -> tuple[tuple[float, float], ...]:
    """ddp_buckets' buckets in ready order, each (its bytes, the gradients' bytes written
    when it is launched: DDP's through its last tensor, DeepSpeed's through the next one,
    the last bucket all of them). Cached: whatif and choose time one file's row many
    times, and an MoE model has tens of thousands of tensors."""
    out: list[tuple[float, float]] = []
    size = done = 0.0
    for b, count in runs:
        left = count
        # a run fills in bulk, a bucket at a time: a hand-edited file's run of 1e9
        # tensors took minutes tensor by tensor (s38 L)
        while left > 0:
            cap = limits[min(len(out), len(limits) - 1)]
            k = _to_close(size, b, cap, rule)
            if k > left:   # the run ends with the bucket open
                size, done, left = size + left * b, done + left * b, 0
                break
            left -= k
            if rule == "deepspeed":   # closed before the k-th, which opens the next
                size, done = size + (k - 1) * b, done + (k - 1) * b
                out.append((size, done + b))
                size, done = b, done + b
            else:
                out.append((size + k * b, done + k * b))
                size, done = 0.0, done + k * b
    return tuple(out + ([(size, done)] if size > 0 else []))


def _to_close(size: float, b: float, cap: float, rule: str) -> int:
    """How many more tensors of `b` bytes the open bucket of `size` takes until it closes:
    DDP's the k-th, the first to reach `cap` (size + k b >= cap, k >= 1); DeepSpeed's
    before the k-th, the first past it (size + k b > cap with size + (k-1) b > 0, so an
    empty bucket always takes one). The float guess is checked by the loop's own sums."""
    if rule == "deepspeed":
        k = max(1 if size > 0 else 2, math.floor((cap - size) / b) + 1)
        while k > (1 if size > 0 else 2) and size + (k - 1) * b > cap:
            k -= 1
        while not size + k * b > cap:
            k += 1
        return k
    k = max(1, math.ceil((cap - size) / b))
    while k > 1 and size + (k - 1) * b >= cap:
        k -= 1
    while size + k * b < cap:
        k += 1
    return k


def queued_exposed_s(window_s: float, buckets: Sequence[tuple[float, float]]) -> float:
    """What a collective of (ready_s, link_s) buckets, in order, leaves after its window:
    the link one bucket at a time, bucket j starting once it is ready and the link is
    free (t_free = max(t_free, ready_j) + link_j); exposed max(0, t_end - window_s).
    Equal buckets (ready at j W / k, each c) give bucket_exposed_s' closed form."""
    t_free = 0.0
    for ready, link in buckets:
        t_free = max(t_free, ready) + link
    return max(0.0, t_free - window_s)


def tensor_exposed_s(seconds: float, window_s: float, runs: Sequence[tuple[float, int]],
                     limits: Sequence[float], latency_s: float = 0.0,
                     rule: str = "ddp") -> float:
    """Per call, what a bucketed collective of `seconds` (of which `latency_s` the
    launches' hops, one launch a bucket) leaves after a backward of `window_s`, its
    gradients (bytes, how many in a row) in ready order bucketed under `limits` by `rule`
    (ddp_buckets).

    Bucket j is ready at W x the share of the backward's work done when it is launched
    (filled), taken as its share of the gradients' bytes: a linear layer's backward is 4
    x params x tokens FLOP (dX and dW, 2 each), so the FLOP follow the bytes, and the comm
    row carries only the tensors' bytes (meta tensor_runs), which whatif re-times without
    the kernels. Attention's and the elementwise kernels' backward fall inside each layer,
    whose tensors all have the same bytes layer after layer. The input embedding, last in
    ready order, does no matmul (an index-add, embedding.bwd, the backward's last kernel):
    its bytes are left out of the share, so its bucket is ready only at the backward's
    end (all its time exposed, as before). A tied lm_head's matmul runs at the backward's
    start, before any tensor is ready: its bytes lead the share (untied, its own tensor,
    as big as the embedding, is the first in ready order). Each bucket's link time: one
    launch's hops plus its bytes' share of the rest."""
    if window_s <= 0 or seconds <= 0 or not runs:
        return max(0.0, seconds)
    sizes = filled(tuple((float(b), int(n)) for b, n in runs), tuple(limits), rule)
    total, embedding = sum(b for b, _ in sizes), float(runs[-1][0])
    lat = min(max(0.0, latency_s), seconds)
    each, rest = lat / len(sizes), seconds - lat
    # a tied embedding: the first tensor in ready order is the final norm, not an lm_head
    lead = embedding if float(runs[0][0]) != embedding else 0.0
    busy = max(total - embedding + lead, 1e-300)
    return queued_exposed_s(window_s, [(window_s * min(1.0, (lead + done) / busy),
                                        each + rest * b / total) for b, done in sizes])
