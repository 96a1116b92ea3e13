"""Advice for two kinds of `rooflab train` kernel that the generic memory levers misread
(review s28 fF): the step's collectives (`comm.allreduce`, `comm.zero1..3`: meta
train_part "comm", no FLOP, bytes on the link) and the passes over the gradients before
the optimizer (`optimizer.clip_grad.norm`/`.scale`, `optimizer.grad_scaler.unscale`),
which hold no state to shard. Fusing a collective "with the neighbouring pass" or storing
bf16 gradients "in a narrower type" (they are 16-bit already) was the generic advice.

The collective's levers come from its meta (workloads/llm/train_dp.comm_kernel): the
exposed time under overlap (PyTorch DDP's buckets, Li et al. 2020), every ZeRO
stage's bytes at this N (Rajbhandari et al. 2020, sec. 7.2: stages 1 and 2 move the
all-reduce's volume, stage 3 1.5x), and 16-bit gradients for an fp32 step (DDP's
bf16_compress_hook). Pure: no I/O.
"""

from __future__ import annotations

from ..units import fmt_seconds, si
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
from .kernel import Kernel

GRAD_PASSES = ("optimizer.clip_grad.", "optimizer.grad_scaler.")
# the passes whose work can ride on the optimizer's own read of each gradient
FOLDABLE = {
    "optimizer.clip_grad.scale": (
        "apply the clip coefficient inside the optimizer's update",
        "the optimizer reads every gradient anyway: multiplying by min(1, max_norm / norm) "
        "as it reads them leaves this pass no bytes of its own (apex's FusedLAMB clips "
        "to max_grad_norm inside its update kernel; torch.optim's AdamW has no such "
        "argument, so it takes a custom or fused kernel there)"),
    "optimizer.grad_scaler.unscale": (
        "let the fused optimizer unscale the gradients",
        "torch.optim.AdamW(fused=True) under GradScaler takes the scale into its update "
        "kernel (grad_scale, found_inf) when the loop does not call scaler.unscale_ "
        "itself; a loop that clips must unscale first, and then DeepSpeed's "
        "unscale_and_clip_grads folds both into one multiply"),
}


# by ZeRO stage (1 and 2 read as DDP's all-reduce before s35 N): 0 DDP, 1-2 ZeRO, 3 FSDP;
# the bucket as the row's meta sets it (overlap_how; "25 MB" for every scheme before s38 H,
# where DeepSpeed's is 5e8 elements, 1 GB at bf16, and DDP's first bucket 1 MiB)
_FSDP_HOW = ("FSDP prefetches the weights' all-gathers under the forward and backward and "
             "reduce-scatters the gradients as the backward produces them")


def overlap_how(meta: dict) -> str:
    """How the step's scheme overlaps its gradients' collective with the backward, its
    bucket from meta collectives[0] (train_dp.comm_kernel): 'PyTorch DDP all-reduces 25
    MiB buckets (the first 1 MiB), filled tensor by tensor, ...', 'ZeRO-1/2
    reduce-scatters the gradients in 1 GB buckets (DeepSpeed's reduce_bucket_size, 5e8
    elements), ...'; the defaults' words where the file does not say."""
    zero = meta.get("zero")
    if zero == 3:
        return _FSDP_HOW
    listed = meta.get("collectives")
    c = listed[0] if isinstance(listed, list) and listed and isinstance(listed[0], dict) \
        else {}
    cap, first = _number(c.get("bucket_bytes")), _number(c.get("first_bucket_bytes"))
    filled = ", filled tensor by tensor," if c.get("tensor_runs") else ""
    if zero in (1, 2):
        width = _number(meta.get("grad_bytes")) or 2.0
        elements = f"{(cap or 0) / width:.3g}".replace("e+0", "e").replace("e+", "e")
        size = (f"{si(cap, 'B')} buckets (DeepSpeed's reduce_bucket_size, {elements} "
                f"elements)" if cap else
                "DeepSpeed's reduce_bucket_size buckets (5e8 elements by default)")
        return (f"ZeRO-1/2 reduce-scatters the gradients in {size}{filled} as the backward "
                f"produces them")
    size = f"{cap / 2**20:g} MiB" if cap else "25 MiB"
    size += f" (the first {first / 2**20:g} MiB)" if first and cap and first != cap else ""
    return (f"PyTorch DDP all-reduces {size} gradient buckets{filled} as the backward "
            f"produces them (Li et al. 2020)")


def _meta(kernel: Kernel) -> dict:
    return kernel.meta if isinstance(kernel.meta, dict) else {}


def is_comm(kernel: Kernel) -> bool:
    """A `rooflab train --dp` collectives kernel (meta.train_part "comm")."""
    return _meta(kernel).get("train_part") == "comm"


def is_grad_pass(kernel: Kernel) -> bool:
    """A pass over the gradients before the optimizer step (clipping, fp16's unscale)."""
    return (_meta(kernel).get("train_part") == "optimizer"
            and kernel.name.startswith(GRAD_PASSES))


def _number(v: object) -> float | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    return float(v) if ok else None


def _scaled(p: Point, e: Efficiency, action: str, detail: str, factor: float,
            assumption: str) -> Advice:
    """The point with its link bytes x factor (no FLOP to change)."""
    return _advice(p, e, action, detail, "along slope", flop=p.flop, nbytes=p.bytes * factor,
                   peak=p.peak_flop_per_s, bw=p.bytes_per_s, assumption=assumption)


def comm_advice(p: Point, e: Efficiency, kernel: Kernel) -> list[Advice]:
    """The collectives' levers: overlap with the backward, a ZeRO stage that sends fewer
    bytes, 16-bit gradients on the wire; the link itself in the words."""
    meta = _meta(kernel)
    comm = _number(meta.get("comm_s"))
    if comm is None or comm <= 0 or p.bytes <= 0:
        return []
    out = []
    link = (f"a faster link shortens all of it: this one is {p.level} at "
            f"{si(p.bytes_per_s, 'B/s')} bus bandwidth (a ring past one node runs at its "
            f"network hop: keep --dp within a node's NVLink where it can)")
    hidden = _number(meta.get("exposed_overlap_s"))
    ran = _number(meta.get("exposed_s"))
    # a step that ran overlapped is not told to overlap (its meta note says how much
    # is left exposed: session 29 gA); --no-overlap's is, priced at the overlapped time
    if hidden is not None and hidden < comm and not (ran is not None and ran < comm):
        said = "this step ran --no-overlap: all of it after the backward"
        out.append(_scaled(
            p, e, "overlap it with the backward (gradient buckets)",
            f"{overlap_how(meta)}: the step waits only "
            f"for what is left after the backward, "
            f"{fmt_seconds(hidden)} of its {fmt_seconds(comm)}; {said}", hidden / comm,
            f"each bucket ready as the backward writes its gradients (FSDP's units after "
            f"an equal share of the backward), the buckets queued on "
            f"the link; at least the last bucket stays exposed (smaller buckets shrink that "
            f"tail, larger ones pay fewer per-collective latencies, which the catalog link "
            f"does not carry), and the embedding's gradient over the bucket size, written "
            f"by the backward's last kernel, is a bucket of its own after it; {link}"))
    out += _stage_moves(p, e, meta, comm, link)
    if meta.get("grad_bytes") == 4:
        out.append(_scaled(
            p, e, "reduce the gradients in bf16 (DDP's bf16_compress_hook)",
            "fp32 gradients cast to bf16 for the collective and back: half the bytes on "
            "the link", 0.5,
            "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook "
            "(DeepSpeed: communication_data_type); the casts are not counted, and the sum "
            f"runs in bf16 (less precise); {link}"))
    return out


def _stage_moves(p: Point, e: Efficiency, meta: dict, comm: float,
                 link: str) -> list[Advice]:
    """Another ZeRO stage at this N where it sends fewer bytes, with its memory cost."""
    stages = meta.get("by_zero")
    now = meta.get("zero")
    if not isinstance(stages, dict) or not isinstance(now, int):
        return []
    out = []
    for key, cost in stages.items():
        t = _number(cost.get("comm_s")) if isinstance(cost, dict) else None
        b = _number(cost.get("bytes")) if isinstance(cost, dict) else None
        if t is None or b is None or not t < 0.99 * comm or not key.isdigit():
            continue
        k = int(key)
        memory = ("it shards less, so each device holds more state: check it fits with "
                  f"`rooflab train ... --dp {meta.get('devices')} --zero {k}`"
                  if k < now else "it shards more state, so each device holds less")
        why = ("stage 3 all-gathers the weights in every micro-batch's forward and "
               "backward, 1.5x the all-reduce's volume (Rajbhandari et al. 2020, sec. 7.2)"
               if now == 3 else "stage 2 reduce-scatters every micro-batch's gradients, "
               "stages 0 and 1 once per optimizer step" if now == 2 else
               "the stages move different volumes (Rajbhandari et al. 2020, sec. 7.2)")
        out.append(_scaled(
            p, e, f"--zero {k} instead of --zero {now}",
            f"{si(b, 'B')} sent per device per optimizer step instead of {si(p.bytes, 'B')} "
            f"({fmt_seconds(t)} on the link): {why}", b / p.bytes,
            f"the same devices and link; {memory}; {link}"))
    return out


def amortize_advice(p: Point, e: Efficiency, n: int, subject: str, each: str,
                    more: str = "") -> Advice:
    """--accumulate n for a pass once per optimizer step (the optimizer, a gradient
    pass): 1/n of its FLOP and bytes per token. `more` extends the assumption."""
    return _advice(
        p, e, f"amortize it over {n} micro-batches (rooflab train --accumulate {n})",
        f"{subject} runs once per optimizer step over every {each}, whatever the tokens: "
        f"{n} micro-batches per step pay 1/{n} of it per token; the speed-up is per token "
        f"(throughput)", "along slope", flop=p.flop / n, nbytes=p.bytes / n,
        peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"gradients accumulate in place over {n} micro-batches (the same "
                   f"memory); the step's other kernels unchanged per token" + more)


def grad_pass_advice(p: Point, e: Efficiency, kernel: Kernel, n: int,
                     d: int) -> list[Advice]:
    """A gradient pass before the optimizer: once per optimizer step (amortized by
    --accumulate n), 1/d of the gradients per rank under ZeRO (each clips or unscales its
    shard), and for the scale and the unscale, folded into the optimizer's read."""
    from .advice_optimizer import sharded

    out = [amortize_advice(p, e, n, "it", "gradient")]
    if not sharded(kernel):     # under --zero it passes over its shard already (s29 gA)
        out.append(_advice(
            p, e, f"shard it over {d} data-parallel ranks (ZeRO-1/2: each its 1/{d} of the "
                  f"gradients)",
            f"under ZeRO each rank holds the reduced shard of the gradients it steps, and "
            f"passes over that shard only: bytes and FLOP / {d} per device", "along slope",
            flop=p.flop / d, nbytes=p.bytes / d, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption=f"{d} data-parallel ranks under ZeRO (DeepSpeed's stage 1/2 optimizer, "
                       f"FSDP); a clip's total norm then all-reduces the ranks' partial sums "
                       f"(one scalar, latency not counted); the collectives of the gradients "
                       f"are not counted here (`rooflab train --dp` times them)"))
    fold = FOLDABLE.get(kernel.name)
    if fold is not None:
        out.append(_advice(
            p, e, fold[0], fold[1], "along slope", flop=0.0, nbytes=0.0,
            peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption="the pass is gone: priced at one launch floor, the least a "
                       "kernel is timed at here; the optimizer's own pass reads each "
                       "gradient once as before (its FLOP per element more not counted)"))
    return out
