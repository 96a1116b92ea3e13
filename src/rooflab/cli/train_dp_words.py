"""What `rooflab train --dp N --zero S` adds to the output: the link the ring runs on (as
`rooflab scale` chooses it), the collectives' line, the `train.dp` JSON section, the
communication row of the kernel table and file, and the memory verdict under sharding.
The model is workloads/llm/train_dp.py."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.comm_link import Link
from ..model.link_fits import one_count_words
from ..units import fmt_pct, fmt_seconds, si
from ..workloads.llm.train_dp import (
    DDP_SOURCE,
    ZERO_SOURCE,
    comm_kernel,
    link_roof,
    tensor_fields,
)
from .train_bucket_words import (
    bucket_hop_words,
    bucket_provenance,
    bucket_words,
    overlap_line,
)

ZERO_WORDS = {0: "no ZeRO (DDP: every device holds all states)",
              1: "ZeRO-1: optimizer state sharded",
              2: "ZeRO-2: optimizer state and gradients sharded",
              3: "ZeRO-3: optimizer state, gradients and weights sharded"}


# How `rooflab train --dp N` words the notes of a measured link (`rooflab scale`'s speak of
# rows of device counts and --inter-bw, which train has neither of; s31 hg)
TRAIN_WORDS = one_count_words("--dp", "link")


@dataclass(frozen=True)
class DpRing:
    """The ring link of --dp N with its provenance: `kind` the intra-node link's (given,
    measured, catalog, roof: cli/scale.Links.kind), `network` the inter-node link a ring
    past a node crosses (None: it stays in one) and its kind (measured, assumed), and
    what train says of them (scale.link_notes, scale_links.hop_note, in TRAIN_WORDS)."""

    link: Link
    kind: str
    intra: Link
    network: Link | None = None
    network_kind: str | None = None
    per_node: int | None = None
    notes: tuple[str, ...] = ()

    def provenance(self) -> dict:
        """What `train.dp.link` adds to the link as timed, as `rooflab scale --json`'s
        links give it: the intra-node link and the network past a node (None: the ring
        stays in one), each with its kind, and `kind`: that of the one whose bandwidth
        the ring runs at (ring_link keeps the slower one's)."""
        from .scale_output import link_dict

        lk, net = self.link, self.network
        # the level as named for its group ("network (--dp ring)": named_apart, own_link)
        runs_on_net = net is not None and lk.bus_bytes_per_s == net.bus_bytes_per_s and (
            lk.level == net.level or lk.level.startswith(f"{net.level} ("))
        return {"kind": self.network_kind if runs_on_net else self.kind,
                "intra": link_dict(self.intra, self.kind),
                "inter": link_dict(net, self.network_kind), "per_node": self.per_node}


def dp_ring(on: str, n: int, link_bw: str | None, link_from: str | None = None,
            hop_s: float = 0.0) -> DpRing:
    """The ring's link for `n` devices, as `rooflab scale` picks it (cli/scale.py
    choose_links, inter_link; scale_links.scale_network): --link-bw, else the links a
    cluster profile measured (--link-from, or --on as one), else the catalog device's
    interconnect (half its both-directions figure; an NVLink bridge's pair, PCIe beyond
    two), else the roof's link ceiling; past a node (8 devices) a flat ring across the
    network the profile measured, else the one the device's systems carry (assumed,
    model.scale_out: one 400 Gb/s NIC per GPU on HGX/DGX and MI300X platforms, a Gaudi's
    own ports), at its slowest hop. `hop_s`: --hop-latency-us in seconds, per ring hop of
    a given or catalog link (a measured one has its own, and the notes say so)."""
    from ..hardware.resolve import load_roof
    from ..model.comm_link import ring_link
    from .scale_link_choice import choose_links, inter_link, link_notes
    from .scale_links import catalog_device, hop_note, scale_network

    chosen = choose_links(on, link_bw, link_from, hop_s)
    dev = catalog_device(on)
    # one package's dies (an MI250X's --dp 1: its 2 ranks on their 4 die links)
    if n == 1 and chosen.kind == "catalog" and getattr(dev, "software_devices", 1) > 1:
        from ..model.comm_link import xgmi_ring_link

        dies = xgmi_ring_link(dev, 1, hop_s)
        if dies is not None:
            return DpRing(dies, chosen.kind, dies)
    if chosen.by_count and n in chosen.by_count and not link_bw:   # a mesh: (n-1) links
        return DpRing(chosen.by_count[n], chosen.kind, chosen.by_count[n])
    if chosen.pair is not None and n == 2:
        return DpRing(chosen.pair, chosen.kind, chosen.pair)
    if link_bw:
        return DpRing(chosen.intra, chosen.kind, chosen.intra)
    inter, kind = inter_link(None, chosen.measured, hop_s, dev)
    net = scale_network(inter, kind, dev, None, None)
    notes = (link_notes(chosen, load_roof(on).name, on, n, net.per_node, False, TRAIN_WORDS)
             + hop_note(hop_s, chosen, net, n, TRAIN_WORDS))
    if n <= net.per_node or net.link is None:
        return DpRing(chosen.intra, chosen.kind, chosen.intra, per_node=net.per_node,
                      notes=tuple(notes))
    return DpRing(ring_link(chosen.intra, net.link), chosen.kind, chosen.intra, net.link,
                  net.kind, net.per_node, tuple(notes))


def train_ring(on: str, dp: int, tp: int, link_bw: str | None, link_from: str | None = None,
               hop_s: float = 0.0) -> DpRing:
    """The link `rooflab train --dp N --tp M` runs each data-parallel ring on: chosen for
    all N x M devices (a ring leaves the node once they do), under M > 1 each ring on 1/M
    of the node's network (train_tp_words.shared_network) and, inside the node, on the
    links its own N devices have (train_tp_words.group_ring: 1 xGMI link for 2 MI300X);
    dp_ring's for M = 1."""
    ring = dp_ring(on, dp * tp, link_bw, link_from, hop_s)
    if tp > 1:
        from .train_tp_words import group_ring, shared_network

        ring = group_ring(shared_network(ring, tp), on, dp, tp, hop_s)
    return ring


def named_apart(ring: DpRing, tp_link: Link | None) -> DpRing:
    """The ring with its link named for its group, "xGMI (--dp ring)" (units.GROUP_LINKS),
    where the --tp group's link is of its kind at another bandwidth (MI300X --dp 2 --tp 4:
    64 and 192 GB/s): the file then holds each its own ceiling, and `whatif`, `report` and
    `choose` time each row on its own link, as train does (the one "xGMI" ceiling once
    timed the TP row at the ring's bandwidth); as it is otherwise."""
    from dataclasses import replace

    lk = ring.link
    if tp_link is None or lk.level != tp_link.level or (
            lk.bus_bytes_per_s == tp_link.bus_bytes_per_s):
        return ring
    return replace(ring, link=replace(lk, level=f"{lk.level} (--dp ring)"))


def dp_link(on: str, n: int, link_bw: str | None, tp: int = 1) -> Link:
    """The ring link alone (train_ring), for a file's device in `whatif` and `choose`."""
    return train_ring(on, n, tp, link_bw).link


def dp_lines(r) -> list[str]:
    """The text lines under the summary: the collectives, their exposed share and the
    link with its provenance."""
    dp, st = r.dp, r.setup
    each = "; ".join(f"{c.name} ({c.kind} of {si(c.nbytes, 'B')}, {c.calls}x per step): "
                     f"{fmt_seconds(c.seconds * c.calls)}" for c in dp.collectives)
    hidden = overlap_line(dp)
    return [
        f"data parallel: {ranks_of(st)} x --batch {st.batch} = {st.step_tokens * st.dp} "
        f"tokens per optimizer step; {ZERO_WORDS[dp.zero]}",
        f"communication {fmt_seconds(dp.comm_s)} per step ({each}); {hidden}: "
        f"{fmt_seconds(dp.exposed_s)} exposed ({fmt_pct(100 * dp.exposed_s / dp.comm_s)} of "
        f"it), step floor {fmt_seconds(r.timing.floor_s)} compute + "
        f"{fmt_seconds(dp.exposed_s)}{tp_words(r)} = {fmt_seconds(r.floor_s)}; "
        f"{si(dp.link_bytes, 'B')} sent per device",
        f"link: {dp.link.level} {si(dp.link.bus_bytes_per_s, 'B/s')} bus bandwidth"
        f"{hop_words(dp.link)} ({dp.link.source}); ring{ranks_words(dp)}: all-reduce "
        f"2(N-1)/N x bytes, reduce-scatter and all-gather (N-1)/N each"
        f"{bucket_hop_words(dp)}",
    ]


def ranks_of(setup) -> str:
    """'8 devices', or on a package of several dies (train_dies) '8 ranks (--dp 4
    packages x 2 dies)': the data-parallel ranks and the --dp they come from."""
    if setup.dies == 1 or setup.tp > 1:
        return f"{setup.dp} devices"
    n = setup.dp_devices
    return (f"{setup.dp} ranks (--dp {n} package{'s' * (n > 1)} x {setup.dies} dies, one "
            f"rank each)")


def tokens_words(st, per: str) -> str:
    """The summary's tokens: per optimizer step of the --dp ranks, each on its --tp group
    (train_dies: on an MI250X ranks, one per die; --dp and --tp count packages)."""
    if st.dp > 1:
        per = f"{st.step_tokens * st.dp} tokens per optimizer step: {ranks_of(st)} x {per}"
    if st.tp > 1:
        per += f"; each on a group of --tp {st.tp} devices" if st.dies == 1 else (
            f"; each on a group of {st.tp} ranks (--tp {st.tp_devices} packages x "
            f"{st.dies} dies)")
    return per


def setup_more(st) -> dict:
    """What the `train.setup` JSON adds past --dp's keys: --grad-dtype where given without
    --dp (held at it: the memory line), and the ranks on a package of several dies
    (train_dies: every die a rank; its dp and tp are --dp and --tp as given, packages)."""
    grads = {"grad_dtype": st.grad_dtype} if st.grad_dtype and st.dp < 2 else {}
    ranks = {"dies": st.dies, "dp_ranks": st.dp, "tp_ranks": st.tp} if st.dies > 1 else {}
    return {**grads, **ranks}


def dp_flag(ranks: int, setup) -> int:
    """The --dp that gives `ranks` data-parallel ranks: ranks / dies rounded up on a
    package of several dies (without --tp, train_dies), else ranks."""
    return -(-ranks // setup.dies) if setup.tp == 1 else ranks


def ranks_words(dp) -> str:
    """' over 16 ranks (--dp 8 packages x 2 dies, each a rank: N = 16)' where the ring
    runs over more ranks than --dp counts devices (an MI250X: train_dp.dp_ranks); ''
    elsewhere."""
    if dp.ring_ranks == dp.n:
        return ""
    return (f" over {dp.ring_ranks} ranks (--dp {dp.n} package{'s' * (dp.n > 1)} x "
            f"{dp.ring_ranks // dp.n} "
            f"dies, each a rank: N = {dp.ring_ranks})")


def tp_words(r) -> str:
    """' + 17 ms tensor-parallel' under --tp (its collectives on the floor too), else ''."""
    return f" + {fmt_seconds(r.tp.comm_s)} tensor-parallel" if r.tp is not None else ""


def hop_words(link: Link) -> str:
    """', 10 us per ring hop' where the link has a hop latency (--hop-latency-us, or a
    measured fit's), '' where it is bandwidth only."""
    return f", {fmt_seconds(link.hop_latency_s)} per ring hop" if link.hop_latency_s else ""


def dp_dict(r) -> dict:
    """The `train.dp` JSON section."""
    dp = r.dp
    return {"n": dp.n, "ring_ranks": dp.ring_ranks, "zero": dp.zero, "overlap": dp.overlap,
            "link": {"level": dp.link.level, "bus_bytes_per_s": dp.link.bus_bytes_per_s,
                     "hop_latency_s": dp.link.hop_latency_s, "source": dp.link.source},
            "comm_s": dp.comm_s, "allreduce_s": dp.comm_s, "exposed_s": dp.exposed_s,
            "grad_bytes": dp.width,
            "compute_floor_s": r.timing.floor_s,
            "bytes_per_device": dp.link_bytes,
            # the data-parallel ranks' (an MI250X's --dp 4: 8 dies; s34 G: it said 4 x)
            "global_step_tokens": r.setup.step_tokens * r.setup.dp,
            "collectives": [{"name": c.name, "kind": c.kind, "bytes": c.nbytes,
                             "calls": c.calls, "seconds_each": c.seconds,
                             "sent_bytes_each": c.sent, "overlap_window_s": c.window_s,
                             "exposed_s_each": c.exposed_s(dp.overlap),
                             # each a collective of its own, paying the hops (s36 C)
                             "buckets": c.buckets, "launches_each": c.launches,
                             # the bucket's cap and how it is set (train_dp_comm): bytes
                             # (DDP), elements (DeepSpeed), unit (FSDP: one per block),
                             # tensors (DDP, tensor by tensor: s37 B)
                             "bucket_bytes": c.bucket_bytes, "bucket_by": c.bucket_by,
                             **tensor_fields(c),
                             # the embedding's gradient bucket, reduced after the backward
                             # (FSDP: the root unit's, all-gathered before the forward too)
                             "last_bucket_bytes": c.last_bytes,
                             "last_bucket_s_each": c.last_s}
                            for c in dp.collectives],
            # the gradients' bucket and where its size comes from (s36 H)
            "bucket": bucket_provenance(dp),
            "source": f"{ZERO_SOURCE}; {DDP_SOURCE}"}


def add_dp_kernel(data: dict, r) -> None:
    """The communication as one more kernel of the file (part `comm`, bytes the link bytes
    each device sends, no FLOP), on the roof with the link as a ceiling: `report`,
    `whatif`, `plot` and `compare` read it as they read the others. The train section's
    row carries its whole time as floor_s and the exposed part apart."""
    dp = r.dp
    add_comm_kernel(data, link_roof(r.timing.analysis.roof, dp.link),
                    comm_kernel(dp, r.setup.batch, r.setup.storage), dp, exposed_s=dp.exposed_s)


def add_comm_kernel(data: dict, roof, k, group, exposed_s: float) -> None:
    """One group's communication (`group`: the --dp or --tp result, with its link,
    link_bytes and comm_s) as kernel k of the file, judged on `roof` (the file's roof
    with that link as a ceiling), and its row in the train section."""
    from ..model.analysis import analyze
    from ..model.roof_schema import roof_to_dict
    from ..model.schema import kernel_to_dict, points_to_dicts

    a = analyze(roof, [k], levels=(group.link.level,))
    data["roof"] = roof_to_dict(roof)
    data["kernels"].append(kernel_to_dict(k))
    data["analysis"].extend(points_to_dicts(a.points))
    data["train"]["kernels"].append(
        {"name": k.name, "part": "comm", "op": k.meta["op"], "calls": k.calls, "flop": 0.0,
         "bytes": group.link_bytes, "bytes_split": {"weights": 0.0, "activations": 0.0},
         "ai": 0.0, "bound": group.link.level, "floor_s": group.comm_s,
         "exposed_s": exposed_s})


def add_dp_row(table, r) -> None:
    """The communication's row of the kernel table: its whole time, and as its share of
    the floor the exposed part (the rest runs under the backward)."""
    dp = r.dp
    table.add_row(comm_kernel(dp).name, "comm",
                  str(sum(c.calls for c in dp.collectives)), "0", si(dp.link_bytes, "B"),
                  "0", dp.link.level, fmt_seconds(dp.comm_s),
                  f"{fmt_pct(100 * dp.exposed_s / r.floor_s)} exposed")


def zero_fit(mem, setup) -> tuple[int, float] | None:
    """(stage, bytes per device) of the smallest ZeRO stage above the step's that holds
    it at its --dp N: each stage's shards of the unsharded states (train_dp.unsharded)
    plus this micro-batch's activations; None where none does (or the memory is
    unknown)."""
    from ..workloads.llm.train_dp import unshard_factors, unsharded

    if mem.device_bytes is None or setup.dp < 2:
        return None
    whole = unsharded(mem, setup)
    for stage in range(setup.zero + 1, 4):
        fw, fg, fo = unshard_factors(setup.dp, stage)
        total = (whole.weights / fw + whole.grads / fg + whole.optimizer / fo
                 + mem.activations)
        if total <= mem.device_bytes:
            return stage, total
    return None


def dp_memory_words(mem, setup, fewest: tuple[int, str, float] | None = None) -> str:
    """What the memory line says of the sharding: the states per device and, where the
    step does not fit, the smallest --zero stage that holds it at this --dp N, else the
    devices ZeRO-3 needs (from the unsharded states; `fewest`: train_memory.zero3_least's
    smaller footprint)."""
    from ..workloads.llm.train_dp import unsharded
    from ..workloads.llm.train_memory import zero3_devices

    n, each = setup.dp_devices, "device" if setup.dies == 1 else "rank"
    text = (f"{ZERO_WORDS[setup.zero]} over {ranks_of(setup)}: states "
            f"{si(mem.states, 'B')} per {each}")
    if mem.fits is False:
        fit = zero_fit(mem, setup)
        need = zero3_devices(unsharded(mem, setup))
        if fit is not None:
            text += (f"; at --dp {n}, --zero {fit[0]} holds it: {si(fit[1], 'B')} per "
                     f"{each} ({ZERO_WORDS[fit[0]]})")
        elif need is not None:
            text += (f"; no ZeRO stage holds it at --dp {n}: ZeRO-3 needs {need} "
                     f"{each}s at this micro-batch (--dp {dp_flag(need, setup)} --zero 3)"
                     + (f", {fewest[0]} with {fewest[1]}" if fewest else ""))
        else:
            text += (f"; no ZeRO stage holds it at any --dp: the activations alone, "
                     f"{si(mem.activations, 'B')}, exceed one device (--recompute full or a "
                     f"smaller --batch or --seq first"
                     + (f"; ZeRO-3 over {fewest[0]} devices with {fewest[1]}" if fewest
                        else "") + ")")
    elif mem.fits and setup.zero == 3:
        text += "; it fits with ZeRO-3 / FSDP full sharding"
    return text


def dp_notes(setup, dp) -> tuple[str, ...]:
    """The notes --dp adds, in place of the one-device note; `dp`: the step's DPResult."""
    return (f"{ranks_of(setup)} data-parallel, each running --batch {setup.batch}: "
            f"tokens/s is all devices' together, MFU per device (the same as the whole); "
            f"the collectives run on a ring (NCCL switches to trees at scale, so the "
            f"latency term is pessimistic there)",
            *clip_words(setup),
            *bucket_words(dp),
            *grad_words(setup))


def grad_words(setup) -> tuple[str, ...]:
    """--grad-dtype: what it changes (the collectives' gradient bytes and the gradients
    each device holds) and what it leaves at --dtype."""
    if setup.grad_dtype is None:
        return _main_grad_words(setup)
    weights = ("; the weights ZeRO all-gathers stay at --dtype's "
               f"{setup.width} B" if setup.zero else "")
    traffic = (f"the kernels' gradient traffic ({_grad_traffic(setup)}) moves them at "
               f"{setup.grad_width} B too, "
               f"the weights and activations at --dtype {setup.dtype}'s {setup.width} B"
               + (" (Liger's fused lm_head keeps its own dW buffer at --dtype's)"
                  if setup.loss == "fused" else ""))
    if setup.dp < 2:    # no data-parallel collective: held, and reduced where TP reduces
        norms = ("; the TP group's norm-gradient all-reduce (--sequence-parallel, q/k "
                 "norms) moves them at it" if setup.tp > 1 else "")
        return (f"--grad-dtype {setup.grad_dtype}: the gradients are held at "
                f"{setup.grad_width} B each (the memory line's grads, Megatron-LM's "
                f"main_grad buffer){norms}; {traffic}",)
    return (f"--grad-dtype {setup.grad_dtype}: the gradients are reduced and held at "
            f"{setup.grad_width} B each (the collectives and the memory line's grads"
            f"{weights}); {traffic}",)


def _grad_traffic(setup) -> str:
    """The kernels this step counts that move the gradients, in words: the dW (its writes,
    or under a wider main_grad its reads and writes), the optimizer's read and the passes
    before it (fp16's unscale, --clip-grad's)."""
    # wider than the weights: Megatron-LM's main_grad, which the dW GEMM accumulates into
    # (train_ops.dw_passes)
    dw = ("the backward's dW, which reads and writes the main_grad it accumulates into"
          if setup.grad_width > setup.width else "the backward's dW writes")
    said = [dw, "the optimizer's read"]
    said += ["fp16's unscale"] if setup.dtype == "fp16" else []
    said += ["--clip-grad's two passes"] if setup.clip_grad else []
    return ", ".join(said)


def _main_grad_words(setup) -> tuple[str, ...]:
    """Under --tp at bf16 without --grad-dtype: the norm gradients are reduced at
    Megatron-LM's fp32 main_grad (train_tp.norm_grad_width) while the memory line counts
    the gradients at --dtype's 2 B (ZeRO's count): said, with the option that counts
    Megatron-LM's buffer."""
    if setup.tp < 2 or setup.dtype != "bf16":
        return ()
    return ("the memory line holds the gradients at --dtype's 2 B (ZeRO's mixed-precision "
            "count), while Megatron-LM under --bf16 keeps them in an fp32 main_grad buffer, "
            "whose width the norm-gradient all-reduce takes: --grad-dtype fp32 counts that "
            "buffer (4 B per parameter)",)


def clip_words(setup) -> tuple[str, ...]:
    """--clip-grad (or fp16's unscale) under ZeRO: each rank passes over its 1/N shard of
    the gradients, and clip_grad_norm_'s total norm needs the shards' sums all-reduced."""
    if setup.zero < 1 or not (setup.clip_grad or setup.dtype == "fp16"):
        return ()
    said = ("--clip-grad's norm and scale" if setup.clip_grad else "")
    if setup.dtype == "fp16":
        said += (" and " if said else "") + "fp16's unscale"
    norm = ("; the total norm needs the ranks' partial sums of squares all-reduced (one "
            "fp32 scalar per step, as DeepSpeed's ZeRO optimizers and FSDP's "
            "clip_grad_norm_ do): latency-bound, not counted (its 2(N-1) hops of "
            "the link's latency: --hop-latency-us, or a --link-from link's measured "
            "one)" if setup.clip_grad else "")
    return (f"ZeRO-{setup.zero}: {said} pass over each rank's 1/{setup.dp} shard of the "
            f"gradients (the reduced shard it steps), so they count 1/{setup.dp} of the "
            f"parameters{norm}",)
