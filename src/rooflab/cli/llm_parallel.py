"""rooflab llm --tp/--pp: the pipeline options checked, the tensor-parallel and stage links
chosen, and the parallel analyses run (cli/llm.py calls these; llm_render shows them)."""

from __future__ import annotations

import math

from ..errors import InputError
from ..units import parse_rate

GPUS_PER_NODE = 8    # an HGX/DGX node, as `rooflab scale --per-node` assumes
POD_LINKS = ("ici",)  # TPU ICI joins a whole pod slice (256 v5e chips), not 8 per node


def _spans_nodes(dev, devices: int) -> bool:
    """Whether `devices` of `dev` leave one node, so that a ring crosses the network."""
    words = str(getattr(dev, "interconnect", "")).lower().split()
    return devices > GPUS_PER_NODE and not any(w in words for w in POD_LINKS)


def _tensor_parallel(cfg, s, roof, req, dev, link_bw: str | None,
                     latency_s: float = 0.0):
    """--tp's all-reduces over --link-bw, else the catalog device's link (a ring past one
    8-GPU node: its slowest hop, the InfiniBand NIC, as `rooflab scale`), each paying
    --link-latency."""
    from ..workloads.llm.parallel import tensor_parallel

    link, src = None, "given (--link-bw)"
    if link_bw:
        link = parse_rate(link_bw, "--link-bw")     # 450GB/s, or bits: 400Gb/s
    elif dev is not None and dev.interconnect_bytes_per_s:
        # One convention with `rooflab scale`: vendors quote both directions, a ring
        # all-reduce's bus bandwidth is per direction.
        from ..model.parallel import Link, device_ring_link, ring_link
        from .scale import NDR_BUS, NDR_SOURCE

        lk = device_ring_link(dev, s.tp)      # an NVLink bridge joins 2 cards; more: PCIe
        if _spans_nodes(dev, s.tp):
            # NVLink joins the GPUs of one node only; a wider ring crosses the network.
            nic = Link("network", NDR_BUS, 0.0,
                       f"{NDR_SOURCE}; --tp {s.tp} spans more than one "
                       f"{GPUS_PER_NODE}-GPU node")
            lk = ring_link(lk, nic)
        link, src = lk.bus_bytes_per_s, lk.source
    return tensor_parallel(cfg, s, roof, batch=req.batch, context=req.decode_context,
                           tp=s.tp, link_bytes_per_s=link, link_source=src,
                           latency_s=latency_s, prompt=req.prompt)


def _check_pp(pp: int, micro_batches: int | None, pp_link_bw: str | None,
              pp_link_latency: float | None) -> None:
    """--pp's options, refused with how to fix them before any work is done."""
    if pp < 1:
        raise InputError(f"--pp must be >= 1 (pipeline stages; 1: no pipeline); got {pp}")
    extras = [name for name, v in (("--micro-batches", micro_batches),
                                   ("--pp-link-bw", pp_link_bw),
                                   ("--pp-link-latency", pp_link_latency)) if v is not None]
    if extras and pp == 1:
        raise InputError(f"{', '.join(extras)}: only with a pipeline; add --pp N (2 or "
                         f"more stages) or drop {extras[0]}")
    if micro_batches is not None and micro_batches < 1:
        raise InputError(f"--micro-batches must be >= 1 (micro-batches of --batch in flight); "
                         f"got {micro_batches}")
    if pp_link_latency is not None and not (pp_link_latency >= 0
                                            and math.isfinite(pp_link_latency)):
        raise InputError(f"--pp-link-latency must be >= 0 microseconds per send (e.g. 5); "
                         f"got {pp_link_latency:g}")


def _stage_link_given(s, link_bw: str | None, link_latency_s: float, pp_link_bw: str | None,
                      pp_link_latency_s: float | None) -> tuple[float | None, str, float]:
    """(bandwidth or None, source, latency) the user gave for the stage link: --pp-link-*,
    else --link-* when there is no --tp for them to describe."""
    alone = s.tp == 1
    latency = pp_link_latency_s if pp_link_latency_s is not None else (
        link_latency_s if alone else 0.0)
    if pp_link_bw:
        return parse_rate(pp_link_bw, "--pp-link-bw"), "given (--pp-link-bw)", latency
    if link_bw and alone:
        return parse_rate(link_bw, "--link-bw"), "given (--link-bw)", latency
    return None, "", latency


def _stage_link(s, roof, dev, given_bw: float | None, given_src: str, latency_s: float):
    """The link between pipeline stages: given, else InfiniBand once TP x PP GPUs leave an
    8-GPU node, else the catalog device's link (per direction), else the roof's."""
    from ..model.parallel import LINK_WORDS, Link, device_ring_link, link_from_roof
    from .scale import NDR_BUS, NDR_SOURCE

    if given_bw:    # named after the link it replaces (a label for the JSON, no more)
        words = str(getattr(dev, "interconnect", "")).lower()
        level = "network" if _spans_nodes(dev, s.tp * s.pp) else next(
            (lv for key, lv in LINK_WORDS if key in words), "network")
        return Link(level, given_bw, latency_s, given_src)
    if _spans_nodes(dev, s.tp * s.pp):
        return Link("network", NDR_BUS, latency_s,
                    f"{NDR_SOURCE}; {s.tp} x {s.pp} GPUs span more than one "
                    f"{GPUS_PER_NODE}-GPU node")
    if dev is not None and dev.interconnect_bytes_per_s:
        return device_ring_link(dev, s.tp * s.pp, latency_s)   # a bridge joins 2 cards
    try:
        return link_from_roof(roof, hop_latency_s=latency_s)
    except InputError:
        raise InputError(f"--pp {s.pp}: roof '{roof.name}' has no NVLink, PCIe or network "
                         f"ceiling for the stage link; give it with --pp-link-bw (e.g. "
                         f"50GB/s for one 400 Gb/s InfiniBand NIC per direction)") from None


def _pipeline(cfg, s, roof, req, dev, tpr, micro_batches: int | None,
              given_bw: float | None, given_src: str, latency_s: float):
    """--pp: the stages (of the TP shard under --tp, each adding its layers' all-reduces)
    on the stage link."""
    from ..workloads.llm.parallel import shard
    from ..workloads.llm.pipeline import pipeline_parallel

    link = _stage_link(s, roof, dev, given_bw, given_src, latency_s)
    per_layer = tpr.comm_s / cfg.layers if tpr else 0.0
    pre_per_layer = tpr.prefill_comm_s / cfg.layers if tpr else 0.0
    longest = max(req.decode_context, req.prompt + req.generate)   # as the footprint's
    return pipeline_parallel(shard(cfg, s.tp), s, roof, pp=s.pp, batch=req.batch,
                             context=req.decode_context, prompt=req.prompt, link=link,
                             micro_batches=micro_batches, tp=s.tp, kv_context=longest,
                             comm_s_per_layer=per_layer,
                             prefill_comm_s_per_layer=pre_per_layer)
