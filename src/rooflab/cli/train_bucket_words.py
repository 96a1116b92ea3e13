"""`rooflab train --dp`'s words on how the collectives are cut and overlapped, by scheme
(workloads/llm/train_dp_comm.py): DDP's buckets (1 MiB first, then 25 MiB, filled tensor
by tensor), DeepSpeed ZeRO-1/2's 5e8-element buckets (filled tensor by tensor too, each
closed before the tensor that would overflow it), FSDP's one unit per transformer block
(--bucket-mb sets the first two)."""

from __future__ import annotations

from ..units import si


def bucket_size_words(dp) -> str:
    """'25 MiB buckets (PyTorch DDP's bucket_cap_mb)', '1 GB buckets (DeepSpeed's
    reduce_bucket_size, 5e8 elements)' or, under --zero 3, 'FSDP units (...)': the first
    windowed collective's."""
    c = next((c for c in dp.collectives if c.window != "none"), dp.collectives[0])
    if c.bucket_by == "unit":
        return (f"{c.buckets} FSDP units (one per transformer block and the root: "
                f"transformer_auto_wrap_policy)")
    if dp.zero == 0:
        return f"{_size(dp)} buckets (PyTorch DDP's bucket_cap_mb){_tensor_words(c)}"
    elements = f"{c.bucket_bytes / dp.width:.3g}".replace("e+0", "e").replace("e+", "e")
    return f"{_size(dp)} buckets (DeepSpeed's reduce_bucket_size, {elements} elements)"


def _tensor_words(c) -> str:
    """', filled tensor by tensor: 226 of them, the first to 1 MiB' where DDP's buckets
    are counted so (model/ddp_ready.ddp_buckets); '' where by bytes."""
    if not c.tensor_runs:
        return ""
    first = (f", the first to {c.first_bucket_bytes / 2**20:g} MiB"
             if c.first_bucket_bytes != c.bucket_bytes else "")
    return f", filled tensor by tensor: {c.buckets} of them{first}"


def _size(dp) -> str:
    """The gradients' bucket: DDP's in MiB, as bucket_cap_mb is set; DeepSpeed's in B."""
    cap = dp.collectives[0].bucket_bytes
    return f"{cap / 2**20:g} MiB" if dp.zero == 0 else si(cap, "B")


def overlap_line(dp) -> str:
    """The overlap words of the communication line, by scheme; under --no-overlap, that."""
    if not dp.overlap:
        return "--no-overlap: after the compute"
    if dp.zero == 0:
        return f"overlapped with the compute in {bucket_size_words(dp)}"
    if dp.zero in (1, 2):
        return (f"overlapped with the compute: gradients reduce-scattered in "
                f"{bucket_size_words(dp)} during the backward (ZeRO-1/2, as DeepSpeed with "
                f"overlap_comm: true; its default is false below stage 3: --no-overlap); "
                f"the all-gather after the optimizer step has none to hide under")
    return (f"overlapped with the compute (ZeRO-3) by {bucket_size_words(dp)}: each "
            f"block's weights all-gathered, prefetched, under the previous block's forward "
            f"and backward, its gradients reduce-scattered after its backward")


def bucket_hop_words(dp) -> str:
    """With a hop latency: that each launched collective pays it (train_dp_comm.launched);
    '' without."""
    if not dp.link.hop_latency_s:
        return ""
    n = sum(c.launches * c.calls for c in dp.collectives)
    return (f"; each of the {n} collectives launched per step (one a bucket or unit, "
            f"FSDP's backward two a block) pays the hops (2(N-1) an all-reduce, N-1 the "
            f"others)")


def bucket_words(dp) -> tuple[str, ...]:
    """How the overlap is timed, in the scheme: DDP's and DeepSpeed's tensor-filled
    buckets as their gradients are ready, FSDP's equal-share pieces of the window, and
    what is ready only when a window ends (train_dp_comm's docstring), after it."""
    if dp.zero == 3:
        return ("under overlap the FSDP units' collectives are timed one block unit at a "
                "time, each ready after an equal share of its window (the forward's "
                "all-gathers under the forward, the backward's all-gathers and "
                "reduce-scatters under the backward), except the root unit's (the "
                "embedding, the final norm and an untied lm_head): its weights are "
                "all-gathered before the forward's first kernel and its gradients "
                "reduce-scattered after the backward's last, both all exposed; the "
                "root is not resharded after the forward, so the backward does not "
                "all-gather it again",)
    size = _size(dp)
    embedding = (f"the input embedding's gradient (written by the backward's last kernel, "
                 f"embedding.bwd; a tied lm_head's too): over {size} it is a bucket of its "
                 f"own, reduced after the backward ends, all of it exposed; under it, it is "
                 f"in the last bucket")
    if dp.collectives[0].tensor_runs:
        # model/ddp_ready.py: torch launches a bucket's all-reduce once its last gradient
        # is written (s38 B), DeepSpeed its reduce-scatter when the next gradient would
        # overflow it (s38 H); before, each was ready after an equal share of the backward
        when = ("the backward has written its last gradient: after the backward's share "
                "up to that tensor" if dp.zero == 0 else
                "the next gradient would take it past the size (DeepSpeed's "
                "reduce_independent_p_g_buckets_and_remove_grads): after the backward's "
                "share up to that next tensor")
        what = "gradient bucket" if dp.zero == 0 else "bucket of the gradients' reduce-scatter"
        return (f"under overlap each {size} {what} is ready when {when}, taken as the "
                f"gradients' bytes' share (a linear layer's backward is 4 x params x "
                f"tokens FLOP), the buckets queued on the link; the last ready is "
                f"{embedding}",)
    what = ("gradient bucket" if dp.zero == 0
            else "bucket of the gradients' reduce-scatter")
    return (f"under overlap each {size} {what} is taken as ready after an equal share of "
            f"the backward, except {embedding}, which the rule leaves exposed",)


# --bucket-mb's help: the per-scheme defaults it replaces
BUCKET_HELP = ("--dp: the gradient bucket in MiB, each a collective of its own: PyTorch "
               "DDP's bucket_cap_mb under --zero 0 (default 25), DeepSpeed's "
               "reduce_bucket_size and allgather_bucket_size under --zero 1/2 (default "
               "5e8 elements: 954 MiB at bf16); not under --zero 3 (FSDP: one unit per "
               "transformer block)")


# the smallest --bucket-mb: llama-2-7b's 13.5 GB of bf16 gradients in 12,900 buckets
MIN_BUCKET_MB = 1.0


def check_bucket_mb(bucket_mb: float | None, dp: int, zero: int) -> None:
    """--bucket-mb: a finite size of MIN_BUCKET_MB or more, with --dp N > 1 and --zero 0, 1
    or 2."""
    import math

    from ..errors import InputError

    if bucket_mb is None:
        return
    if not bucket_mb > 0 or math.isinf(bucket_mb):
        raise InputError(f"--bucket-mb must be a positive, finite size in MiB (e.g. 25, "
                         f"DDP's default); got {bucket_mb:g}")
    if bucket_mb < MIN_BUCKET_MB:
        # no longer for the time (s36 J: 1e-9 MiB timed 1.4e13 buckets one by one and ran
        # out of memory; model/train_comm.bucket_exposed_s is closed-form since s36 N, 20
        # ms), but for the model: DDP never splits a tensor, so its buckets stop at one a
        # parameter tensor (291 for llama-2-7b) while gradient bytes / cap keeps growing
        raise InputError(f"--bucket-mb {bucket_mb:g} is below the range rooflab takes, "
                         f"{MIN_BUCKET_MB:g} MiB or more (DDP's default is 25, DeepSpeed's "
                         f"5e8 elements; a smaller bucket pays the ring's hops once per "
                         f"bucket): give --bucket-mb {MIN_BUCKET_MB:g} or more")
    if isinstance(dp, int) and dp < 2:
        raise InputError("--bucket-mb: only with data parallelism (the gradients' buckets "
                         "run on the link); add --dp N (2 or more devices) or drop "
                         "--bucket-mb")
    if zero == 3:
        raise InputError("--bucket-mb sets DDP's or DeepSpeed ZeRO-1/2's bucket; under "
                         "--zero 3 FSDP all-gathers and reduce-scatters one unit per "
                         "transformer block: drop --bucket-mb (or use --zero 0, 1 or 2)")


def bucket_provenance(dp) -> dict:
    """`train.dp.bucket`: the gradients' bucket (bytes, how it is set), where it comes
    from: the scheme's default (nominal, its framework's) or --bucket-mb (given)."""
    from ..workloads.llm.train_dp_comm import BUCKET_SOURCES, bucket_cap

    c = dp.collectives[0]
    if c.bucket_by == "unit":
        return {"bytes": None, "by": "unit", "units": c.buckets, "provenance": "nominal",
                "source": BUCKET_SOURCES["unit"]}
    default = bucket_cap(dp.zero, dp.width)[0]
    given = abs(c.bucket_bytes - default) > 1e-6 * default
    return {"bytes": c.bucket_bytes, "by": c.bucket_by,
            "provenance": "given" if given else "nominal",
            "source": "--bucket-mb" if given else BUCKET_SOURCES[c.bucket_by]}
