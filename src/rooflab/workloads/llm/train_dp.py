"""Data-parallel training (`rooflab train --dp N --zero S`): ZeRO's memory per device, the
step's collectives on a ring link and how much of them the compute hides.

Memory per device (Rajbhandari et al. 2020, "ZeRO", Fig. 1 and sec. 5.1), Psi parameters,
w bytes per weight and gradient (2 mixed precision, 4 fp32), K optimizer bytes per
parameter (12 for mixed-precision AdamW):

  stage 0 (DDP):              (w + w + K) Psi
  stage 1 (optimizer state):   w Psi + w Psi + K Psi / N
  stage 2 (+ gradients):       w Psi + (w + K) Psi / N
  stage 3 (+ weights):        (w + w + K) Psi / N

The paper's 7.5B model on 64 devices (K = 12, w = 2): 120, 31.4, 16.6 and 1.9 GB.

The step's collectives, their buckets per scheme (DDP's 25 MiB, DeepSpeed ZeRO-1/2's 5e8
elements, FSDP's one unit per transformer block) and what the compute hides of them:
train_dp_comm.py. --no-overlap serializes every collective.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ...model.comm_link import Link
from .train_dp_comm import Collective, dp_collectives

ZERO_STAGES = (0, 1, 2, 3)
DDP_SOURCE = ("PyTorch DDP: gradients all-reduced in buckets (1 MiB first, then 25 MiB, "
              "filled tensor by tensor) during the backward (Li et al. 2020, PyTorch "
              "Distributed, sec. 3.2.3)")
ZERO_SOURCE = "Rajbhandari et al. 2020, ZeRO, Fig. 1, sec. 5.1 and 7.2"


def check_dp(dp: object, zero: object) -> None:
    """--dp N (>= 1) and --zero S (0..3, only with N > 1): InputError with the fix."""
    if not isinstance(dp, int) or isinstance(dp, bool) or dp < 1:
        raise InputError(f"--dp must be an integer >= 1 (data-parallel devices, each running "
                         f"--batch), e.g. --dp 8; got {dp!r}")
    if not isinstance(zero, int) or isinstance(zero, bool) or zero not in ZERO_STAGES:
        raise InputError(f"--zero must be one of 0, 1, 2, 3 (ZeRO stage: 1 shards the "
                         f"optimizer state, 2 also the gradients, 3 also the weights); got "
                         f"{zero!r}")
    if zero and dp < 2:
        raise InputError(f"--zero {zero} shards over data-parallel devices: give --dp N with "
                         f"N >= 2 (e.g. --dp 8 --zero {zero}); on one device there is "
                         f"nothing to shard over")


def zero_state_bytes(params: float, width: float, k: float, n: int, stage: int,
                     grad_width: float | None = None) -> tuple[float, float, float]:
    """(weights, gradients, optimizer state) bytes per device under ZeRO `stage` over `n`
    data-parallel devices (module docstring): 16-bit or fp32 weights and gradients of
    `width` bytes (the gradients `grad_width`'s where given: --grad-dtype), `k` optimizer
    bytes per parameter."""
    g_width = width if grad_width is None else grad_width
    w, g, o = width * params, g_width * params, k * params
    return (w / n if stage >= 3 else w, g / n if stage >= 2 else g,
            o / n if stage >= 1 else o)


def unshard_factors(n: int, stage: int) -> tuple[int, int, int]:
    """What each of (weights, gradients, optimizer) was divided by under `stage`."""
    return (n if stage >= 3 else 1, n if stage >= 2 else 1, n if stage >= 1 else 1)


@dataclass(frozen=True)
class DPResult:
    """The data-parallel side of a step: N devices, ZeRO stage, the link, its collectives
    and how much of them the step waits for."""

    n: int
    zero: int
    overlap: bool
    link: Link
    collectives: tuple[Collective, ...]
    width: int = 2            # bytes per gradient element (2 mixed precision, 4 fp32;
    #                           --grad-dtype's)
    accumulate: int = 1       # micro-batches per optimizer step: a window is one's
    # (stage, bytes each device sends, seconds, hop rounds) of every ZeRO stage at this N:
    # what `rooflab report` prices a stage move with (model/advice_comm.py), and what
    # whatif --hardware re-times each stage's hop latency from (Collective.hop_rounds)
    stages: tuple[tuple[int, float, float, int], ...] = ()
    # the ranks the ring runs over: n x dies where a device is a package of several (an
    # MI250X without --tp: 2 ranks each, with_dp); 0: n
    ranks: int = 0

    @property
    def ring_ranks(self) -> int:
        return self.ranks or self.n

    @property
    def comm_s(self) -> float:
        """Every collective's time per optimizer step."""
        return sum(c.seconds * c.calls for c in self.collectives)

    @property
    def exposed_s(self) -> float:
        """The part of comm_s the step waits for (the compute hides the rest)."""
        return sum(c.exposed_s(self.overlap) * c.calls for c in self.collectives)

    @property
    def link_bytes(self) -> float:
        """Bytes each device sends per optimizer step."""
        return sum(c.sent * c.calls for c in self.collectives)


def with_dp(r, link: Link, overlap: bool = True, bucket_mb: float | None = None):
    """A TrainResult (train.run_train's, at setup.dp and setup.zero) with its DPResult:
    the windows are one micro-batch's forward and its backward with the recompute that
    runs inside it; `bucket_mb`: --bucket-mb (default each scheme's: train_dp_comm)."""
    from dataclasses import replace

    from .grad_tensors import ready_order
    from .params import count_params, norm_params
    from .train_tp import device_config

    st = r.setup
    if st.dp < 2:
        return r
    forward_s = r.part_s("forward") / st.accumulate
    backward_s = (r.part_s("backward") + r.part_s("recompute")) / st.accumulate
    # under --tp N the device's slice: each data-parallel ring reduces 1/N of the model
    dev = device_config(r.config, st.tp)
    counted = count_params(dev)
    params = counted.total
    ranks = dp_ranks(r)

    # FSDP's root unit: what no block's unit wraps (the embedding, the final norm, an
    # untied lm_head)
    root = counted.embedding + counted.lm_head + norm_params(dev)

    tensors = ready_order(dev)    # DDP buckets them one by one (grad_tensors.py)

    def at(stage: int) -> tuple[Collective, ...]:
        return dp_collectives(params, st.width, ranks, stage, st.accumulate, link,
                              forward_s, backward_s, st.grad_width, counted.embedding, root,
                              layers=dev.layers, bucket_mb=bucket_mb, tensors=tensors)

    stages = tuple((k, sum(c.sent * c.calls for c in cs), sum(c.seconds * c.calls for c in cs),
                    sum(c.hop_rounds * c.calls for c in cs))
                   for k, cs in ((k, at(k)) for k in ZERO_STAGES))
    return replace(r, dp=DPResult(st.dp_devices, st.zero, overlap, link, at(st.zero),
                                  st.grad_width, st.accumulate, stages, ranks))


def dp_ranks(r) -> int:
    """The ranks of the data-parallel ring: setup.dp, which counts ranks. On a catalog
    package of several dies (an MI250X: 2 GCDs, each a rank to ROCm) the CLI gives the
    step one die's roof and --dp N packages as N x 2 ranks (train_dies.per_rank), each
    holding the whole gradient under DDP: the all-reduce sends 2(2N-1)/2N of it per rank
    (review s33 J4: a ring of N packages was timed before), as `--tp N` rings count 2N
    dies (train_tp.tp_collectives)."""
    return r.setup.dp


def own_link(roofs, link: Link, group: str = "--dp ring") -> Link:
    """The link named for its `group`, "loopback (--dp ring)" (units.GROUP_LINKS), where one
    of `roofs` has its level at another bandwidth, so that link_roof gives its row a
    ceiling of its own; as it is otherwise. A cluster profile's loopback ceiling is its
    best send/recv (3.98 GB/s) and its ring the all-reduce fit's (1 GB/s): on the one
    "loopback" the file's row read 913 ms at the ceiling where train timed 3.38 s (s38 H;
    whatif --hardware the same, s38 C: cli/whatif_train.apart_links)."""
    import math
    from dataclasses import replace

    have = (r.find_memory(link.level) for r in roofs)
    if any(c is not None and not math.isclose(c.value, link.bus_bytes_per_s, rel_tol=1e-9)
           for c in have):
        return replace(link, level=f"{link.level} ({group})")
    return link


def link_roof(roof, link: Link, group: str = "--dp ring"):
    """The roof with the link as a memory ceiling (bus bandwidth, the link's source), its
    method naming the `group` that runs on it (LINK_METHODS), so the communication kernel
    has a ceiling in the file `report` and `whatif` read. A level the roof has already: as
    it is, but a train link ceiling of the other group (one link, one bandwidth) says
    both."""
    from dataclasses import replace

    from ...model.ceiling import Ceiling
    from ...model.train_links import LINK_METHODS, SHARED_LINK_METHOD

    have = roof.find_memory(link.level)
    if have is not None:
        other = [g for g, m in LINK_METHODS.items() if m == have.method and g != group]
        if not other:
            return roof
        return replace(roof, memory=tuple(replace(c, method=SHARED_LINK_METHOD)
                                          if c is have else c for c in roof.memory))
    c = Ceiling(link.bus_bytes_per_s, level=link.level, provenance="nominal",
                source=link.source, method=LINK_METHODS[group])
    return replace(roof, memory=roof.memory + (c,))


def comm_kernel(dp: DPResult, batch: int = 1, storage: str | None = None):
    """The step's collectives as one kernel: the bytes each device sends over the link,
    no FLOP; meta op `allreduce` and train_part `comm` (what the other parts carry), and
    the micro-batch's `batch` the other rows carry (whatif --batch holds the row: the
    gradients do not grow with the batch). `storage`: the training dtype (meta
    storage_dtype), so whatif --precision tells fp32 --grad-dtype gradients, which keep
    their width, from gradients at the training dtype (model/whatif_grads.held_apart)."""
    from ...model.kernel import Kernel

    calls = sum(c.calls for c in dp.collectives)
    return Kernel(name=comm_name(dp), bytes={dp.link.level: dp.link_bytes}, calls=calls,
                  provenance={"bytes": "derived"},
                  meta={"op": "allreduce" if dp.zero == 0 else "collective",
                        "train_part": "comm", "batch": batch, "devices": dp.n,
                        "zero": dp.zero,
                        "exposed_s": dp.exposed_s, "comm_s": dp.comm_s,
                        # under overlap, whether or not this step ran so (--no-overlap)
                        "exposed_overlap_s": sum(c.exposed_s(True) * c.calls
                                                 for c in dp.collectives),
                        "grad_bytes": dp.width,
                        **({"storage_dtype": storage} if storage else {}),
                        # what a file verb times the overlap again from on another roof
                        # or after a what-if (model/train_comm.exposure): each collective
                        # with the part of a micro-batch it hides under
                        "overlap": dp.overlap, "accumulate": dp.accumulate,
                        # and what each carries, at what width (whatif --precision
                        # moves each part by its rule: model/whatif_comm_parts)
                        "collectives": [{"name": c.name, "kind": c.kind, "calls": c.calls,
                                         "seconds_each": c.seconds, "window": c.window,
                                         "buckets": c.buckets,
                                         "launches_each": c.launches,
                                         "last_bucket_s_each": c.last_s,
                                         "latency_s_each": c.latency_s,
                                         # how whatif --precision recounts the buckets
                                         "last_bucket_bytes": c.last_bytes,
                                         "bucket_bytes": c.bucket_bytes,
                                         "bucket_by": c.bucket_by,
                                         **tensor_fields(c),
                                         **collective_parts(c, storage, dp.width)}
                                        for c in dp.collectives],
                        # hop_rounds: each stage's launches in rounds of N-1 ring hops
                        # (train_comm._stages_on prices them on another link)
                        "by_zero": {str(k): {"bytes": b, "comm_s": t, "hop_rounds": h}
                                    for k, b, t, h in dp.stages},
                        "model": "ring collectives: " + ", ".join(
                            f"{c.name} ({c.kind}) x {c.calls}" for c in dp.collectives),
                        "note": comm_note(dp)})


def tensor_fields(c: Collective) -> dict:
    """DDP's tensor-by-tensor buckets as whatif --precision counts them again
    (model/train_comm.rebucketed): the gradients' [bytes, how many in a row] in ready order
    and the first bucket's limit; {} for a collective bucketed otherwise."""
    if not c.tensor_runs:
        return {}
    return {"tensor_runs": [[b, n] for b, n in c.tensor_runs],
            "first_bucket_bytes": c.first_bucket_bytes}


def collective_parts(c: Collective, storage: str | None, grad_width: float) -> dict:
    """A collective's `bytes`, `sent_bytes_each`, and where the training dtype is known its
    `parts` (the weights it all-gathers, the gradients it reduces: ZeRO-3's backward both)
    and their `element_bytes` (whatif_comm_parts.part_widths); {} of those two without."""
    out = {"bytes": c.nbytes, "sent_bytes_each": c.sent}
    if not storage:
        return out
    from ...model.whatif_comm_parts import part_widths

    widths = part_widths(storage, grad_width)
    if c.kind == "all-gather + reduce-scatter":    # ZeRO-3's backward: weights, then grads
        # the blocks' weights (the root's are not gathered again: train_dp_comm)
        w = c.weight_bytes if c.weight_bytes >= 0 else \
            c.nbytes * widths["weights"] / (widths["weights"] + widths["gradients"])
        parts = {"weights": w, "gradients": c.nbytes - w}
    else:
        parts = {"gradients" if c.name.endswith(".grads") else "weights": c.nbytes}
    return {**out, "parts": parts, "element_bytes": {p: widths[p] for p in parts}}


def comm_note(dp: DPResult) -> str:
    """The comm row's words in `report`: its floor is the whole communication, the step's
    floor only the exposed part (a file verb that summed the rows got 256 ms for the 230 ms
    step of llama-2-7b --dp 8 --zero 1 on H100: session 29 gA)."""
    from ...units import fmt_seconds

    whole, exposed = fmt_seconds(dp.comm_s), fmt_seconds(dp.exposed_s)
    if dp.exposed_s >= dp.comm_s:
        return (f"this row is the whole communication, {whole} per optimizer step, all of it "
                f"exposed (run after the backward): `rooflab train`'s step floor counts "
                f"all {whole}")
    return (f"this row is the whole communication, {whole} per optimizer step; the step "
            f"already overlaps it with the backward ({OVERLAP_WORDS[min(dp.zero, 3)]}), "
            f"which leaves {exposed} exposed: `rooflab train`'s step floor counts "
            f"{exposed} of it, not {whole}")


# by ZeRO stage: DDP's all-reduce buckets, ZeRO-1/2's bucketed reduce-scatter, FSDP's units
# (ZeRO-1/2 was worded as DDP's before s35 N)
OVERLAP_WORDS = {0: "PyTorch DDP's gradient buckets, each all-reduced once its gradients "
                    "are written",
                 1: "ZeRO-1/2's bucketed reduce-scatter of the gradients",
                 2: "ZeRO-1/2's bucketed reduce-scatter of the gradients",
                 3: "FSDP's prefetched all-gathers and bucketed reduce-scatters"}


def shard_meta(name: str, setup) -> dict:
    """The meta of the optimizer part's kernels under ZeRO (train._timed): the stage and
    the devices, and a note that the pass already covers one device's 1/N shard, so that
    `report` does not advise the sharding the step has (session 29 gA); {} without ZeRO."""
    if setup.zero < 1:
        return {}
    n, z = setup.dp, setup.zero
    what = ("the parameters (its shard of the fp32 master weights and optimizer state)"
            if not name.startswith(("optimizer.clip_grad.", "optimizer.grad_scaler."))
            else "the gradients (its reduced shard)")
    return {"zero": z, "devices": n,
            "note": f"ZeRO-{z}: sharded over {n} data-parallel devices already: this pass "
                    f"covers one device's 1/{n} of {what}"}


def comm_name(dp: DPResult) -> str:
    return "comm.allreduce" if dp.zero == 0 else f"comm.zero{dp.zero}"


def unsharded(mem, setup):
    """A train_memory.TrainMemory as one device without ZeRO would hold it: what the
    "does not fit" advice (zero3_devices) counts devices from."""
    from dataclasses import replace

    fw, fg, fo = unshard_factors(setup.dp, setup.zero)
    return replace(mem, weights=mem.weights * fw, grads=mem.grads * fg,
                   optimizer=mem.optimizer * fo)
