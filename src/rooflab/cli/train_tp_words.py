"""What `rooflab train --tp N` adds to the output: the link its collectives run on (chosen
as `rooflab llm --tp` chooses it: workloads/llm/links.tp_link), the kernel table's rows,
the summary lines, the `train.tp` JSON section and the communication kernel of the file.
The model is workloads/llm/train_tp.py."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..units import fmt_pct, fmt_seconds, si
from ..workloads.llm.train_tp import MEGATRON_SOURCE, SP_SOURCE


@dataclass(frozen=True)
class _Group:
    """What links.tp_link reads of `rooflab llm`'s settings: the TP degree."""

    tp: int
    pp: int = 1


def tp_link(on: str, roof, tp: int, link_bw: float | None = None,
            link_from: str | None = None, hop_s: float = 0.0):
    """The TP group's link (links.ChosenLink), as `rooflab llm --tp`: --tp-link-bw, else
    the all-reduce a cluster profile measured (--link-from, or --on as one), else the
    catalog device's interconnect, else the roof's link ceiling; --hop-latency-us per ring
    hop. Refuses a group wider than one node (the TP group stays on NVLink)."""
    from ..model.scale_out import devices_per_node, node_words
    from ..workloads.llm.links import GivenLatency, comm_profile
    from ..workloads.llm.links import tp_link as chosen_link
    from .llm_words import catalog_device

    dev = catalog_device(on, roof)
    if dev is not None and tp > devices_per_node(dev):
        raise InputError(f"--tp {tp} is wider than one {node_words(dev)}: Megatron keeps a "
                         f"tensor-parallel group inside a node (its 4 all-reduces per layer "
                         f"need NVLink); give --tp {devices_per_node(dev)} or less and "
                         f"scale out with --dp")
    latency = GivenLatency(hop_s, "--hop-latency-us") if hop_s else None
    try:
        chosen = chosen_link(_Group(tp), roof, dev, comm_profile(on, link_from), link_bw,
                             latency)
    except InputError as e:    # llm's --link-bw is train's --tp-link-bw (--dp has its own)
        raise InputError(str(e).replace("(--link-bw)", "(--tp-link-bw)")) from None
    if chosen.option != "--link-bw":
        return chosen
    from dataclasses import replace

    return replace(chosen, link=replace(chosen.link, source="given (--tp-link-bw)"),
                   option="--tp-link-bw")


def shared_network(ring, tp: int):
    """The --dp ring (train_dp_words.DpRing) under --tp N: a node's network carries the
    data-parallel rings of its N tensor-parallel ranks at once (each reduces its own 1/N of
    the gradients), so each ring gets 1/N of the node's network, its slowest hop where it
    binds (comm_link.ring_link); a ring that stays in the node is left as it is."""
    from dataclasses import replace

    from ..model.comm_link import ring_link

    net = ring.network
    if net is None or net.whole_ring:
        return ring
    share = min(tp, ring.per_node or tp)
    net = replace(net, bus_bytes_per_s=net.bus_bytes_per_s / share,
                  source=f"{net.source}; shared by the data-parallel rings of the node's "
                         f"{share} tensor-parallel ranks: 1/{share} each")
    return replace(ring, link=ring_link(ring.intra, net), network=net)


def group_ring(ring, on: str, dp: int, tp: int, hop_s: float = 0.0):
    """The --dp ring (train_dp_words.DpRing, chosen for all dp x tp devices) as one
    data-parallel group runs it under --tp N: Megatron-LM places the TP group innermost (its
    N devices together in a node), so each of the N data-parallel rings joins the --dp
    devices of one TP rank, k = min(dp, node / N) of them in a node. On a full mesh (an
    MI300X node: one xGMI link to each peer) a ring over k gets the k-1 links among them
    (comm_link.xgmi_ring_link: 2 devices one link, 64 GB/s), the N rings on disjoint links
    at once; k = 1 (one device of each ring per node): every hop crosses the network. On a
    switch each device's link carries its one ring, as chosen. A given or measured link
    (kind other than catalog) is the ring's as it is."""
    from dataclasses import replace

    from ..model.comm_link import ring_link
    from .scale_link_choice import choose_links

    if ring.kind != "catalog":
        return ring
    in_node = min(dp, max(1, (ring.per_node or dp * tp) // tp))
    place = (f"--dp {dp} x --tp {tp}: each data-parallel ring joins the {dp} devices of one "
             f"TP rank, one per TP group (TP innermost, each group's {tp} devices together "
             f"in a node, as Megatron-LM places them)")
    by_count = choose_links(on, None, None, hop_s).by_count
    if not by_count:      # a switch: each device keeps its link for its one ring
        intra = replace(ring.intra, source=f"{ring.intra.source}; {place}; each device's "
                        f"link carries its one ring, the {tp} rings at once")
        link = intra if ring.network is None else ring_link(intra, ring.network)
        return replace(ring, link=link, intra=intra)
    if in_node == 1:      # no two devices of a ring share a node: all its hops cross it
        net = ring.network
        return replace(ring, link=replace(net, source=f"{net.source}; {place}: a node holds "
                                          f"one device of each ring, so every hop crosses "
                                          f"the network"))
    intra = by_count[in_node]
    if _bridged(on):      # an H200 NVL's 4-way bridge: the ring's cards span dp x tp of them
        intra = by_count[min(dp * tp, max(by_count))]
    at_once = (f", the {tp} rings on disjoint links at once" if "a full mesh" in intra.source
               else "")
    intra = replace(intra, source=f"{intra.source}; {place}: {in_node} of them in a node"
                                  f"{at_once}")
    link = intra if ring.network is None else ring_link(intra, ring.network)
    return replace(ring, link=link, intra=intra)


def _bridged(on: str) -> bool:
    """Whether --on names a catalog card on an NVLink bridge (model.comm_link.bridge_group)."""
    from ..model.comm_link import bridge_group
    from .scale_links import catalog_device

    return bridge_group(catalog_device(on)) > 0


def tp_link_options(tp: int, link_bw: str | None, link_latency_us: float | None,
                     hop_us: float | None) -> dict:
    """--tp-link-bw (parsed, bytes/s) and --link-latency (per all-reduce, taken per ring
    hop as / 2(tp-1), as `rooflab llm`): only with --tp N > 1."""
    import math

    from ..model.comm_link import hop_latency_of_allreduce
    from ..units import parse_link_rate
    from .comm_options import check_hop_us, hop_latency_s

    given = [name for name, v in (("--tp-link-bw", link_bw),
                                  ("--link-latency", link_latency_us)) if v is not None]
    if given and not (isinstance(tp, int) and tp > 1):
        raise InputError(f"{', '.join(given)}: only with tensor parallelism (its "
                         f"all-reduces run on the link); add --tp N (2 or more) or drop "
                         f"{given[0]}")
    if link_latency_us is not None and hop_us is not None:
        raise InputError("give one of --hop-latency-us (per ring hop) and --link-latency "
                         "(per all-reduce); --link-latency US is --hop-latency-us "
                         "US / 2(tp-1)")
    if link_latency_us is not None and not (link_latency_us >= 0
                                            and math.isfinite(link_latency_us)):
        raise InputError(f"--link-latency must be >= 0 and finite, in microseconds per "
                         f"all-reduce (e.g. 20); got {link_latency_us:g}")
    check_hop_us(link_latency_us, "--link-latency", "per all-reduce")
    hop_s = (hop_latency_of_allreduce(link_latency_us * 1e-6, tp)
             if link_latency_us is not None else hop_latency_s(hop_us))
    return dict(link_bw=None if link_bw is None else parse_link_rate(link_bw, "--tp-link-bw"),
                hop_s=hop_s, latency_option="--link-latency"
                if link_latency_us is not None else "--hop-latency-us")


def on_tp(r, on: str, roof, link: dict | None, options: dict | None):
    """Under --tp N, its collectives on the TP group's link (workloads/llm/train_tp.py;
    the link as `rooflab llm --tp` picks it): (the result with them, the links.ChosenLink);
    else (r, None)."""
    if r.setup.tp < 2:
        return r, None
    from dataclasses import replace

    from ..workloads.llm.train_dp import own_link
    from ..workloads.llm.train_tp import with_tp

    given = options or {}     # tp_link_options'
    # the link is chosen per package (--tp as given; train_dies), the ring over its dies
    chosen = tp_link(on, roof, r.setup.tp_devices, given.get("link_bw"),
                     (link or {}).get("link_from"), given.get("hop_s", 0.0))
    if given.get("hop_s"):
        chosen = replace(chosen, latency_from=given.get("latency_option", "--hop-latency-us"))
    # its own ceiling where the roof's of its level is another bandwidth (own_link)
    chosen = replace(chosen, link=own_link((r.timing.analysis.roof,), chosen.link,
                                           "--tp group"))
    return with_tp(r, chosen.link), chosen


def tp_lines(r) -> list[str]:
    """The text lines under the summary: the collectives with their bytes, counts and
    times, and the link."""
    tp, st = r.tp, r.setup
    each = "; ".join(f"{c.name} ({c.kind} of {si(c.nbytes, 'B')}, {c.calls}x per step): "
                     f"{fmt_seconds(c.seconds * c.calls)}" for c in tp.collectives)
    sp = (", sequence parallel (norms and residual adds on 1/"
          f"{tp.n} of the tokens)" if tp.sequence_parallel else "")
    lk = tp.link
    hop = f", {fmt_seconds(lk.hop_latency_s)} per ring hop" if lk.hop_latency_s else ""
    # on a package of several dies (train_dies) every die a rank: --tp counts packages
    unit, dies = ("devices", "") if st.dies == 1 else ("ranks", f" packages x {st.dies} dies")
    return [
        f"tensor parallel: {tp.n} {unit} per model replica{sp}; {st.dp * tp.n} {unit} in "
        f"all (--dp {st.dp} x --tp {st.tp_devices}{dies}); heads, KV heads, MLP columns "
        f"and the vocabulary split {tp.n} ways",
        f"tensor-parallel communication {fmt_seconds(tp.comm_s)} per step ({each}); not "
        f"overlapped with the compute: all of it on the step floor "
        f"({fmt_pct(100 * tp.comm_s / r.floor_s)} of it); {si(tp.link_bytes, 'B')} sent per "
        f"device",
        f"tensor-parallel link: {lk.level} {si(lk.bus_bytes_per_s, 'B/s')} bus bandwidth"
        f"{hop} ({lk.source}); ring: all-reduce 2(N-1)/N x bytes, reduce-scatter and "
        f"all-gather (N-1)/N each",
    ]


def tp_dict(r, chosen=None) -> dict:
    """The `train.tp` JSON section; `chosen`: the link's provenance (links.ChosenLink)."""
    tp = r.tp
    lk = tp.link
    link = {"level": lk.level, "bus_bytes_per_s": lk.bus_bytes_per_s,
            "hop_latency_s": lk.hop_latency_s, "source": lk.source}
    if chosen is not None:
        link.update(chosen.provenance())
    return {"degree": tp.n, "sequence_parallel": tp.sequence_parallel, "link": link,
            "comm_s": tp.comm_s, "exposed_s": tp.comm_s, "overlap": False,
            "bytes_per_device": tp.link_bytes, "compute_floor_s": r.timing.floor_s,
            "collectives": [{"name": c.name, "kind": c.kind, "bytes": c.nbytes,
                             "calls": c.calls, "seconds_each": c.seconds,
                             "sent_bytes_each": c.sent, "seconds": c.seconds * c.calls}
                            for c in tp.collectives],
            "source": MEGATRON_SOURCE + (f"; {SP_SOURCE}" if tp.sequence_parallel else "")}


def tp_kernel(r):
    """The TP collectives as one kernel of the file (train_part `comm`, bytes each device
    sends on the link, no FLOP), each collective with window "none": the file verbs
    (model/train_comm.exposure) time all of it as exposed, as train does."""
    from ..model.kernel import Kernel

    tp = r.tp
    return Kernel(name="comm.tp", bytes={tp.link.level: tp.link_bytes},
                  calls=sum(c.calls for c in tp.collectives),
                  provenance={"bytes": "derived"},
                  meta={"op": "collective", "train_part": "comm", "batch": r.setup.batch,
                        "devices": tp.n, "tensor_parallel": tp.n,
                        "sequence_parallel": tp.sequence_parallel,
                        "exposed_s": tp.comm_s, "comm_s": tp.comm_s,
                        "exposed_overlap_s": tp.comm_s, "overlap": False,
                        "accumulate": r.setup.accumulate,
                        # the training dtype and what each collective carries
                        # (whatif --precision: model/whatif_comm_parts)
                        "storage_dtype": r.setup.storage,
                        "collectives": [{"name": c.name, "kind": c.kind, "calls": c.calls,
                                         "seconds_each": c.seconds, "window": "none",
                                         "buckets": 1, "launches_each": 1,
                                         "bucket_by": "call",
                                         "latency_s_each": c.latency_s,
                                         **tp_parts(c, r.setup)}
                                        for c in tp.collectives],
                        "model": "ring collectives: " + ", ".join(
                            f"{c.name} ({c.kind}) x {c.calls}" for c in tp.collectives),
                        "note": f"tensor parallelism over {tp.n} devices: its collectives "
                                f"sit between the layers' matmuls, not overlapped: the "
                                f"step floor counts all {fmt_seconds(tp.comm_s)}"})


def tp_parts(c, setup) -> dict:
    """A TP collective's bytes, bytes sent, and what it carries at what width: the
    layers' and the embedding's activations at the training dtype, the norms' weight
    gradients at main_grad's width (train_tp.norm_grad_width), the loss's fp32 statistics
    (`loss`, kept as they are by whatif --precision)."""
    from ..workloads.llm.train_tp import LOSS_VALUE_BYTES, norm_grad_width

    if c.name.endswith(".norm_grads"):
        part, width = "gradients", float(norm_grad_width(setup))
    elif c.name.endswith(".loss"):
        part, width = "loss", float(LOSS_VALUE_BYTES)
    else:
        part, width = "activations", float(setup.width)
    return {"bytes": c.nbytes, "sent_bytes_each": c.sent, "parts": {part: c.nbytes},
            "element_bytes": {part: width}}


def add_tp_kernel(data: dict, r) -> None:
    """The TP communication as one more kernel of the file, on the roof with the link as a
    ceiling (train_dp_words.add_dp_kernel's way); all of its time exposed."""
    from ..model.roof_schema import roof_from_dict
    from ..workloads.llm.train_dp import link_roof
    from .train_dp_words import add_comm_kernel

    tp = r.tp
    add_comm_kernel(data, link_roof(roof_from_dict(data["roof"]), tp.link, "--tp group"),
                    tp_kernel(r), tp, exposed_s=tp.comm_s)


def add_tp_rows(table, r) -> None:
    """The kernel table's rows of the TP collectives: one per collective, its bytes sent
    per device, the link and its time (all of it exposed)."""
    tp = r.tp
    for c in tp.collectives:
        table.add_row(c.name, "comm", str(c.calls), "0", si(c.sent * c.calls, "B"), "0",
                      tp.link.level, fmt_seconds(c.seconds * c.calls),
                      fmt_pct(100 * c.seconds * c.calls / r.floor_s))


def tp_notes(setup) -> tuple[str, ...]:
    """The notes --tp adds."""
    if setup.tp < 2:
        return ()
    n = setup.tp
    sp = ("; with --sequence-parallel the layers' all-reduces are reduce-scatters and "
          "all-gathers (the same ring bytes) and the norms, residual adds and their "
          "activations are split too; the norms' weight gradients are all-reduced across "
          "the group once per step (tp.allreduce.norm_grads: Megatron-LM's "
          "_allreduce_layernorm_grads, at its main_grad's width: fp32 under bf16, as "
          "Megatron-LM accumulates and reduces bf16 gradients, else --dtype's, or "
          "--grad-dtype's); the backward's re-gather "
          "of the saved norm output is not counted"
          if setup.sequence_parallel else "")
    return (f"--tp {n}: Megatron-LM tensor parallelism, each device 1/{n} of every layer's "
            f"heads and MLP columns and of the vocabulary (embedding, lm_head, loss); the "
            f"tables, floors, MFU (of 1/{n} of the model FLOPs) and memory are one "
            f"device's; its collectives run on the TP group's link one after another with "
            f"the compute (no overlap){sp}",)
