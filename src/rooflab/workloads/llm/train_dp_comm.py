"""A data-parallel training step's collectives (`rooflab train --dp N --zero S`, with_dp in
train_dp.py): what each moves, in how many buckets, and its time on a ring link.

Communication per device, ring collectives (nccl-tests PERFORMANCE.md): an all-reduce of S
bytes sends 2(N-1)/N S in 2(N-1) hops, a reduce-scatter or an all-gather (N-1)/N S in N-1
hops. Stage 0 all-reduces the gradients once per optimizer step (DDP's no_sync under
--accumulate). Stages 1 and 2 reduce-scatter the gradients and all-gather the updated
weights after the sharded optimizer step: the all-reduce's volume (ZeRO sec. 7.2). Stage 2
keeps only its shard of the gradients, so every micro-batch's are reduce-scattered
(DeepSpeed reduces each micro-step under ZeRO-2). Stage 3 also all-gathers the weights in
every micro-batch's forward and again in its backward (ZeRO sec. 7.2.2: 3 (N-1)/N Psi),
but for the root unit's: PyTorch FSDP does not reshard the root after the forward
(FSDP1 _post_forward_reshard: "Do not free the root's parameters in the post-forward";
fully_shard: the root's reshard_after_forward is False), so its backward gathers
(Psi - root) again (llama-2-7b --dp 4: 13.5 GB less the root's 524 MB).

Granularity, per scheme (each bucket a collective of its own, paying the ring's hops):
  * --zero 0, PyTorch DDP: buckets of bucket_cap_mb = 25 MiB of gradient bytes (Li et al.
    2020, "PyTorch Distributed", sec. 3.2.3), filled tensor by tensor, the first to 1 MiB
    (grad_tensors.py); llama-2-7b: 13.5 GB in 226 buckets (506 by bytes alone).
  * --zero 1/2, DeepSpeed: reduce_bucket_size = 5e8 elements for the gradients' reduction
    and allgather_bucket_size = 5e8 elements for the weights' all-gather after the
    optimizer step (deepspeed/runtime/zero/config.py defaults): 1 GB at bf16. The
    gradients fill them tensor by tensor in ready order, each bucket closed before the
    tensor that would take it past the size (stage_1_and_2.py
    reduce_independent_p_g_buckets_and_remove_grads; model/ddp_ready.py): llama-2-7b's
    6.74 G gradients are 14 buckets of 0.89-0.99 GB; its weights 14 all-gathers.
  * --zero 3, FSDP with transformer_auto_wrap_policy: one unit per transformer block and
    the root unit (the embedding, the final norm, an untied lm_head): the forward
    all-gathers L + 1 units, the backward all-gathers the L blocks and reduce-scatters
    L + 1 units' gradients; block i+1's all-gather overlaps block i's compute.
--bucket-mb sets the bucket of the first two (DDP's bucket_cap_mb; DeepSpeed's two bucket
sizes, given in MiB at the gradients' and the weights' width).

Overlap: a DDP bucket filled tensor by tensor is ready when the backward has written its
last gradient, a DeepSpeed one when the next would overflow it, at the backward's share of
work done by then, taken as the gradients' bytes (model/ddp_ready.py: a linear layer's
backward FLOP are 4 x params x tokens); the pieces of the other schemes (FSDP's units,
buckets by bytes without the tensors) each after an equal share of their window (FSDP's
forward the same in reverse); the link one bucket at a time
(model/train_comm.bucket_exposed_s). The input embedding's gradient is written by the
backward's last kernel: over the 25 MiB cap it is a bucket of its own (llama-2-7b: 262 MB,
0.87 ms at --dp 4 on NVLink 450 GB/s), reduced after the backward, all exposed; under it,
it is in the last bucket, which is ready only then too. FSDP's root is all-gathered
before the forward's first kernel (PyTorch's FSDP notes: "the 1st all-gather will not be
able to overlap with anything") and reduce-scattered after the backward's last: both
exposed. The all-gather after the optimizer step (stages 1, 2) has nothing to hide under.
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...model.comm_link import Link, ring_hops
from ...model.ddp_ready import ddp_buckets, tensor_exposed_s
from ...model.train_comm import bucket_exposed_s

BUCKET_BYTES = 25 * 2**20     # PyTorch DDP's bucket_cap_mb = 25 (MiB)
# torch.distributed._DEFAULT_FIRST_BUCKET_BYTES: the limit of DDP's first bucket, the
# first gradients ready, unless bucket_cap_mb is given (grad_tensors.py)
FIRST_BUCKET_BYTES = 2**20
# DeepSpeed ZeRO-1/2's reduce_bucket_size and allgather_bucket_size, in elements
DEEPSPEED_BUCKET_ELEMENTS = 500_000_000
BUCKET_SOURCES = {
    "bytes": "PyTorch DDP bucket_cap_mb = 25 MiB (Li et al. 2020, sec. 3.2.3)",
    "elements": "DeepSpeed zero_optimization reduce_bucket_size = allgather_bucket_size "
                "= 5e8 elements (deepspeed/runtime/zero/config.py)",
    "unit": "PyTorch FSDP transformer_auto_wrap_policy: one unit per transformer block "
            "and the root unit",
    "tensors": "PyTorch DDP bucket_cap_mb = 25 MiB, filled tensor by tensor in the "
               "gradients' ready order, the first bucket to _DEFAULT_FIRST_BUCKET_BYTES = "
               "1 MiB (torch/csrc/distributed/c10d/reducer.cpp "
               "compute_bucket_assignment_by_size, Reducer::rebuild_buckets)"}


def ring_s(link: Link, nbytes: float, n: int, kind: str) -> float:
    """A ring collective of `nbytes` over `n` ranks: all-reduce 2(n-1) hops and 2(n-1)/n x
    nbytes sent (Link.allreduce_s); reduce-scatter or all-gather half of both."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    if kind == "all-reduce":
        return link.allreduce_s(nbytes, n)
    return (ring_hops(n) // 2) * link.hop_latency_s + sent_bytes(nbytes, n, kind) \
        / link.bus_bytes_per_s


def sent_bytes(nbytes: float, n: int, kind: str) -> float:
    """Bytes each rank sends: all-reduce 2(n-1)/n x nbytes, the others (n-1)/n x nbytes."""
    if n <= 1:
        return 0.0
    return (2.0 if kind == "all-reduce" else 1.0) * (n - 1) / n * nbytes


@dataclass(frozen=True)
class Collective:
    """One collective of the step: what it moves, how often per optimizer step, its time
    each (ring_s) and the compute it can hide under (the window, per call; 0: none)."""

    name: str
    kind: str                 # all-reduce, reduce-scatter, all-gather
    nbytes: float             # the tensor's bytes (per call)
    calls: int
    seconds: float            # per call
    window_s: float           # compute it overlaps with, per call
    sent: float               # bytes each device sends, per call
    # the part of a micro-batch the window is (model/train_comm.WINDOW_PARTS), so a file
    # verb can time the overlap again on another roof or after a what-if
    window: str = "none"
    # the piece outside the window: the gradients' bucket ready only when the backward
    # ends (the embedding's over the bucket; FSDP's root unit's), or FSDP's root weights
    # all-gathered before the forward starts (module docstring): its bytes and its part
    # of `seconds`, per call; 0: none
    last_bytes: float = 0.0
    last_s: float = 0.0
    # the hop latency in `seconds`, per call (launched), which a file verb keeps as it
    latency_s: float = 0.0    # re-times the bandwidth part on another link
    bucket_bytes: float = BUCKET_BYTES   # the bucket's cap (module docstring)
    # how the bucket is set: "bytes" (DDP), "elements" (DeepSpeed: its bytes follow the
    # width), "unit" (FSDP: `units` pieces, the root's the last one)
    bucket_by: str = "bytes"
    units: int = 0
    weight_bytes: float = -1.0   # of nbytes, the weights' (FSDP's backward); -1: by kind
    # buckets filled tensor by tensor (DDP's: bucket_by "tensors"; DeepSpeed's: "elements"
    # with these): the gradients' (bytes, how many in a row) in ready order, the first
    # bucket's limit, and the count ddp_buckets gives (grad_tensors.py); (), 0: by bytes
    tensor_runs: tuple[tuple[float, int], ...] = ()
    first_bucket_bytes: float = 0.0
    tensor_buckets: int = 0

    @property
    def buckets(self) -> int:
        if self.units > 0:
            return self.units
        if self.tensor_buckets > 0:
            return self.tensor_buckets
        if self.last_bytes > 0:
            return 1 + max(1, math.ceil((self.nbytes - self.last_bytes) / self.bucket_bytes))
        return max(1, math.ceil(self.nbytes / self.bucket_bytes))

    @property
    def launches(self) -> int:
        """Collectives launched per call: one a bucket; FSDP's backward two a block unit
        (its all-gather and its reduce-scatter) and one for the root (reduce-scatter)."""
        if self.kind == "all-gather + reduce-scatter":
            return 2 * self.buckets - (1 if self.last_bytes > 0 else 0)
        return self.buckets

    @property
    def hop_rounds(self) -> int:
        """Per call, the hops its launches pay in rounds of N-1 (an all-reduce launch two,
        a reduce-scatter or all-gather one): what whatif prices a ZeRO stage's hop latency
        with on another link, whose file had none to scale (model/train_comm._stages_on)."""
        return self.launches * (2 if self.kind == "all-reduce" else 1)

    def exposed_s(self, overlap: bool) -> float:
        """Per call: what is left after its window (module docstring's bucket rule; one
        function with the file verbs', model/train_comm.py)."""
        if not overlap or self.window_s <= 0:
            return self.seconds
        if self.tensor_runs:
            return tensor_exposed_s(self.seconds, self.window_s, self.tensor_runs,
                                    (self.first_bucket_bytes, self.bucket_bytes),
                                    self.latency_s, self.fill)
        return bucket_exposed_s(self.seconds, self.window_s, self.buckets, self.last_s)

    @property
    def fill(self) -> str:
        """How its tensors fill the buckets (model/ddp_ready.RULES): DeepSpeed's "elements"
        buckets close before the tensor that would overflow them, DDP's after."""
        return "deepspeed" if self.bucket_by == "elements" else "ddp"


def bucket_cap(zero: int, width: float, bucket_mb: float | None = None) -> tuple[float, str]:
    """(bytes, how it is set) of a bucket of `width`-byte values under --zero `zero`
    (module docstring); `bucket_mb`: --bucket-mb, MiB."""
    if zero == 0:
        return (bucket_mb * 2**20 if bucket_mb else BUCKET_BYTES), "bytes"
    if bucket_mb:
        return bucket_mb * 2**20, "elements"
    return DEEPSPEED_BUCKET_ELEMENTS * width, "elements"


def tensor_runs(elements: Sequence[int], width: float) -> tuple[tuple[float, int], ...]:
    """Tensors of `elements` each at `width` bytes as (bytes, how many in a row)."""
    out: list[list] = []
    for e in elements:
        if out and out[-1][0] == e * width:
            out[-1][1] += 1
        else:
            out.append([e * width, 1])
    return tuple((float(b), int(c)) for b, c in out)


def dp_collectives(params: int, width: int, n: int, zero: int, accumulate: int, link: Link,
                   forward_s: float, backward_s: float, grad_width: int | None = None,
                   embedding_params: int = 0, root_params: int = 0, layers: int = 0,
                   bucket_mb: float | None = None, tensors: Sequence[int] = ()
                   ) -> tuple[Collective, ...]:
    """The collectives of one optimizer step (module docstring); forward_s and backward_s:
    one micro-batch's forward and backward (with its recompute) on the device, the windows
    they hide under. The gradients move at `grad_width` bytes each (--grad-dtype; default
    `width`), the weights ZeRO all-gathers at `width` (the --dtype copy the step runs on).
    `embedding_params`: the input embedding's (its gradient's bucket, reduced last);
    `root_params`: FSDP's root unit's under --zero 3 (default the embedding's), `layers`
    its block units (0: 25 MB pieces); `bucket_mb`: --bucket-mb; `tensors`: the element
    counts of the parameter tensors in ready order (grad_tensors.ready_order), which DDP
    buckets one by one (() : by bytes)."""
    g_width = width if grad_width is None else grad_width
    size, grads = width * params, g_width * params
    windows = {"forward": forward_s, "backward": backward_s, "none": 0.0}

    def one(name: str, kind: str, calls: int, window: str) -> Collective:
        b = grads if name.endswith(".grads") else size
        cap, by = bucket_cap(zero, g_width if b is grads else width, bucket_mb)
        # a bucket of its own only over the cap; a smaller table shares the last
        # bucket, which the equal-share rule already leaves exposed
        tail = g_width * embedding_params if b is grads else 0.0
        tail = tail if tail > cap else 0.0
        c = Collective(name, kind, b, calls, ring_s(link, b, n, kind), windows[window],
                       sent_bytes(b, n, kind), window, tail,
                       min(ring_s(link, tail, n, kind), ring_s(link, b, n, kind)),
                       bucket_bytes=cap, bucket_by=by)
        # the gradients' buckets tensor by tensor: DDP's, DeepSpeed's reduce-scatter
        return launched(by_tensor(c, tensors, g_width, bucket_mb)
                        if b is grads and window != "none" else c, link, n)

    if zero == 0:
        return (one("allreduce.grads", "all-reduce", 1, "backward"),)
    if zero in (1, 2):
        rs = one("reduce_scatter.grads", "reduce-scatter", accumulate if zero == 2 else 1,
                 "backward")
        return (rs, one("all_gather.weights", "all-gather", 1, "none"))
    root = root_params or embedding_params
    return fsdp_collectives(size, grads, n, accumulate, link, (forward_s, backward_s),
                            width * root, g_width * root, layers)


def by_tensor(c: Collective, tensors: Sequence[int], width: float,
              bucket_mb: float | None) -> Collective:
    """The gradients' collective `c` bucketed tensor by tensor (ddp_buckets): DDP's
    all-reduce, its first bucket's limit 1 MiB, or under --bucket-mb its cap (torch passes
    bucket_cap_mb for both when it is given); DeepSpeed's reduce-scatter by its own rule
    under its one limit, still bucket_by "elements" (whatif --precision keeps its count);
    c as it is without the tensors."""
    if not tensors:
        return c
    runs = tensor_runs(tensors, width)
    if c.bucket_by == "elements":
        return replace(c, tensor_runs=runs, first_bucket_bytes=c.bucket_bytes,
                       tensor_buckets=ddp_buckets(runs, (c.bucket_bytes,), "deepspeed"))
    first = c.bucket_bytes if bucket_mb else FIRST_BUCKET_BYTES
    return replace(c, bucket_by="tensors", tensor_runs=runs, first_bucket_bytes=first,
                   tensor_buckets=ddp_buckets(runs, (first, c.bucket_bytes)))


def fsdp_collectives(size: float, grads: float, n: int, accumulate: int, link: Link,
                     windows: tuple[float, float], root_w: float, root_g: float,
                     layers: int = 0) -> tuple[Collective, ...]:
    """ZeRO-3 / FSDP's two collectives per micro-batch (module docstring): `layers` block
    units and the root (`root_w` bytes of weights, `root_g` of gradients), which has no
    compute on one side of it: its weights are all-gathered before the forward's first
    kernel, its gradients reduce-scattered after the backward's last, and the backward
    does not all-gather it again (not resharded after the forward). Both are timed as the
    piece outside the window (last_bytes, last_s): for the forward that is the backward's
    schedule reversed in time, which leaves the same part exposed."""
    forward_s, backward_s = windows
    units = layers + 1 if layers > 0 else 0
    ag_f = ring_s(link, size, n, "all-gather")
    fwd = Collective("all_gather.weights_fwd", "all-gather", size, accumulate, ag_f,
                     forward_s, sent_bytes(size, n, "all-gather"), "forward", root_w,
                     min(ring_s(link, root_w, n, "all-gather"), ag_f),
                     bucket_by="unit" if units else "bytes", units=units)
    # the backward's all-gather (the blocks') and reduce-scatter share the link: one queue
    gathered = max(0.0, size - root_w)
    both = ring_s(link, gathered, n, "all-gather") + ring_s(link, grads, n, "reduce-scatter")
    bwd = Collective("all_gather_reduce_scatter.bwd", "all-gather + reduce-scatter",
                     gathered + grads, accumulate, both, backward_s,
                     sent_bytes(gathered + grads, n, "all-gather"), "backward", root_g,
                     min(ring_s(link, root_g, n, "reduce-scatter"), both),
                     bucket_by="unit" if units else "bytes", units=units,
                     weight_bytes=gathered)
    return launched(fwd, link, n), launched(bwd, link, n)


def launched(c: Collective, link: Link, n: int) -> Collective:
    """c with the hops paid per launch (Collective.launches; ring_s counted one, FSDP's
    backward two): llama-2-7b --dp 4 --hop-latency-us 10, DDP's 226 buckets x 6 hops x
    10 us = 13.6 ms, not 60 us."""
    if link.hop_latency_s <= 0 or n <= 1 or c.nbytes <= 0:
        return c
    each = (ring_hops(n) if c.kind == "all-reduce" else ring_hops(n) // 2) \
        * link.hop_latency_s
    counted = 2 if c.kind == "all-gather + reduce-scatter" else 1
    return replace(c, seconds=c.seconds + (c.launches - counted) * each,
                   latency_s=c.launches * each)
