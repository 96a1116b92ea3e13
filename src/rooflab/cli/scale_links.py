"""`rooflab scale`'s network across nodes and what its output says about links and
latency: which network the rows past a node cross (none for a TPU pod slice), the note
when --hop-latency-us reaches no row, the step at 1 us per hop when no latency is known,
and the gradients' all-reduce type (review r7 F2, F3, F4, F8)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..model.link_fits import PastWords
from ..model.parallel import GPU_COUNTS, Link, ScalePoint

GPUS_PER_NODE = 8     # an HGX/DGX node (--per-node's default where the catalog has none)


def catalog_device(on: str) -> Any:
    """The catalog device --on names, or None for a profile file."""
    from ..hardware.catalog import lookup
    from ..hardware.resolve import looks_like_file

    return None if looks_like_file(on) else lookup(on)


def pod_linked(dev: Any) -> bool:
    """Whether the device's own link joins a whole pod slice (TPU ICI), as `rooflab llm
    --tp` reads it (workloads/llm/links.POD_LINKS): no 8-chip node, no NIC."""
    from ..workloads.llm.links import POD_LINKS

    words = str(getattr(dev, "interconnect", "")).lower().split()
    return dev is not None and any(w in words for w in POD_LINKS)


@dataclass(frozen=True)
class ScaleNet:
    """The network the rows past a node cross: the link (None: no row crosses one, a TPU
    pod slice), its kind (given, measured, assumed), the NICs per node an assumed one
    counts, the devices per node, and whether the device's link joins a whole pod."""

    link: Link | None
    kind: str | None
    nics: int | None
    per_node: int
    pod: bool = False


def scale_network(inter: Link, kind: str, dev: Any, per_node: int | None,
                  nics: int | None) -> ScaleNet:
    """The inter-node link as the rows get it: a TPU's ICI joins the whole pod slice, so
    without --per-node no row crosses a node (review r7 F2: a v5p's rows past 8 went over
    an assumed InfiniBand NIC); an assumed network counts one NIC (or a Gaudi chip's
    scale-out ports) per device of a node; a given or measured one is the ring's as is."""
    from ..model.comm_link import node_network_link
    from ..model.scale_out import devices_per_node, network_unit

    pod = per_node is None and pod_linked(dev)
    if pod:
        if kind == "given" or nics:
            flag = "--inter-bw" if kind == "given" else "--nics-per-node"
            raise InputError(f"{flag} on {dev.name}: its ICI joins a whole pod slice, so "
                             f"no row crosses a node; give --per-node N (the chips a slice "
                             f"holds) for the rows past N to cross the network")
        return ScaleNet(None, None, None, max(GPU_COUNTS), True)
    # the node of the device's systems (model.scale_out: 4 MI300A or MI250X), else 8
    per_node = per_node or (devices_per_node(dev) if dev is not None else GPUS_PER_NODE)
    if kind != "assumed":
        return ScaleNet(inter, kind, None, per_node)
    count = nics or per_node
    # one NIC per device, or a chip's own share (Gaudi's ports, a TPU's DCN): scale_out
    return ScaleNet(node_network_link(inter, count, network_unit(dev)), kind, count, per_node)


def node_note(dev: Any, per_node: int | None) -> list[str]:
    """The note when the node's size comes from the device's systems, not HGX/DGX's 8
    (model.scale_out: 4 MI300A or MI250X on an HPE Cray EX node); none when --per-node
    gave it."""
    from ..model.scale_out import devices_per_node, node_words

    if per_node is not None or dev is None or pod_linked(dev):
        return []
    n = devices_per_node(dev)
    if n == GPUS_PER_NODE:
        return []
    return [f"{n} devices per node, as in one {node_words(dev)}: rows past {n} cross the "
            f"network between nodes (--per-node N for another node)"]


def hop_note(hop_s: float, chosen: Any, net: ScaleNet, largest: int,
             words: PastWords | None = None) -> list[str]:
    """The note when --hop-latency-us reaches no row, or only the rows across nodes: a
    measured link keeps its own hop latency (review r7 F8: `--hop-latency-us 1 --on
    comm.json` changed nothing and said nothing). `largest`: the most devices timed;
    `words`: the verb's (link_fits.PastWords; None: scale's rows)."""
    from ..model.comm_link import ring_link
    from ..model.link_fits import ROW_WORDS
    from ..units import fmt_seconds

    if not hop_s or chosen.kind != "measured":
        return []
    words = words or ROW_WORDS
    given = f"--hop-latency-us {hop_s * 1e6:g}"
    own = f"{fmt_seconds(chosen.intra.hop_latency_s, 4)} per hop inside a node"
    link = net.link
    if link is None or net.kind == "measured":
        across = (f", {fmt_seconds(link.hop_latency_s, 4)} across nodes"
                  if link is not None else "")
        return [f"{given} {words.unchanged}: the measured links keep their own hop latency "
                f"({own}{across}); it applies to given, catalog and assumed links"]
    if largest <= net.per_node:     # no ring reaches the network the latency is for
        return [f"{given} {words.unchanged}: the measured intra-node link keeps its own "
                f"({own}), and a ring of {largest} devices stays inside a node of "
                f"{net.per_node}"]
    if ring_link(chosen.intra, link).hop_latency_s == hop_s:
        return [f"{given} reaches only the {net.kind} inter-node link "
                f"({words.across.format(per_node=net.per_node)}); the measured intra-node "
                f"link keeps its own ({own})"]
    return [f"{given} {words.unchanged}: the measured intra-node link keeps its own ({own}), "
            f"and a ring across nodes pays the larger of the two hop latencies"]


@dataclass(frozen=True)
class LatencySensitivity:
    """The what-if at `hop_s` per hop on every link, when none had a latency: where the
    link would bind and the largest row."""

    hop_s: float
    binds: int | None
    largest: ScalePoint


def latency_sensitivity(layers, roof, chosen: Any, net: ScaleNet, overlap: bool
                        ) -> LatencySensitivity | None:
    """None when some link has a hop latency; else the rows again at 1 us per hop (NCCL's
    low end; `rooflab llm --tp` prints the same what-if, HOP_SENSITIVITY_S): a verdict of
    bandwidth only says how far a latency moves it (review r7 F4: "never binds up to
    1024" became "binds from 512, 42 %" at 1 us)."""
    from ..model.parallel import comm_binds_at, scale_dp
    from ..workloads.llm.parallel import HOP_SENSITIVITY_S

    links = [lk for lk in (chosen.intra, chosen.pair, net.link) if lk is not None]
    if any(lk.hop_latency_s for lk in links):
        return None

    def at(lk: Link | None) -> Link | None:
        return None if lk is None else replace(lk, hop_latency_s=HOP_SENSITIVITY_S)

    by_count = {n: at(lk) for n, lk in (chosen.by_count or {}).items()}
    points = scale_dp(layers, roof, at(chosen.intra), at(net.link),
                      gpus_per_node=net.per_node, overlap=overlap, pair=at(chosen.pair),
                      by_count=by_count)
    return LatencySensitivity(HOP_SENSITIVITY_S, comm_binds_at(points), points[-1])


def grad_words(grads: str, dtype: str) -> str:
    """The assumption line of the gradients' all-reduce type (review r7 F3: it was said in
    --help only). Megatron-LM (arguments.py: "bfloat16 requires gradient accumulation and
    all-reduce to be done in fp32", unless --grad-reduce-in-bf16) and PyTorch AMP + DDP
    (fp32 parameters, so fp32 gradients) all-reduce fp32 when training in bf16; FSDP or
    ZeRO with a bf16 reduce type send 2 B."""
    from ..units import canonical_dtype, dtype_bytes

    text = f"gradients all-reduced in {grads} ({dtype_bytes(grads):g} B/parameter)"
    if grads == "fp32":
        return text
    same = " (--dtype's)" if grads == canonical_dtype(dtype) else ""
    return (text + f"{same}, as FSDP/ZeRO with a "
            f"{grads} reduce type send them; Megatron-LM's default for bf16 training and "
            f"PyTorch AMP + DDP all-reduce fp32 gradients, twice the bytes: --grad-dtype "
            f"fp32")
