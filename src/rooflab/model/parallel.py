"""Parallel steps on the roof: data-parallel training, tensor-parallel decode, scale what-ifs.

Seed 002 §2.4: with data parallelism every step ends in a gradient all-reduce, so a link's
bandwidth, not FLOP, can define the step; tensor parallelism adds all-reduces inside every
layer and cuts each device's share of the work (and its reuse). Links are memory ceilings
(levels `NVLink`, `PCIe`, `network`, `loopback`): a step's communication point has
AI = FLOP / bytes over the link and sits under that ceiling on the same chart.

Assumptions (stated on every result):
- Ring all-reduce (nccl-tests PERFORMANCE.md; Patarasuk & Yuan 2009): each rank sends
  2(n-1)/n x S bytes in 2(n-1) steps, so t = 2(n-1) x hop latency + 2(n-1)/n x S / B_bus,
  where B_bus is the bus bandwidth nccl-tests reports. NCCL switches to trees at scale,
  so the latency term is pessimistic for large n; the bandwidth term is the ring's.
- A layer's time is its roofline floor max(FLOP / P, bytes / B_DRAM) (no launch overhead).
- Training FLOP of a linear layer: 6 t k n (forward 2tkn, backward 4tkn: dX and dW).
- Data parallelism is weak scaling: each device keeps its batch; gradients are all-reduced
  once per layer (DDP buckets ~ layers).
- Overlap: a layer's all-reduce starts when its backward is done and the link is free;
  compute never waits for the link (separate streams, no contention for memory).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .ceiling import Roof
from .kernel import Kernel

LINK_LEVELS = ("NVLink", "PCIe", "network", "loopback")
GPU_COUNTS = tuple(2**i for i in range(11))          # 1, 2, 4, ..., 1024

RING = ("ring all-reduce: t = 2(n-1) x hop latency + 2(n-1)/n x bytes / bus bandwidth "
        "(nccl-tests convention)")


# --- links ---------------------------------------------------------------------------------
# Between nodes, when nothing was measured or given: one NDR InfiniBand NIC per GPU (a
# modelling assumption with its source; `rooflab scale` and `rooflab llm` both use it).
NDR_BUS = 50e9
NDR_SOURCE = ("assumed: one 400 Gb/s NDR InfiniBand NIC per GPU = 50 GB/s per direction "
              "(NVIDIA ConnectX-7, nvidia.com/en-us/networking/infiniband-adapters)")


@dataclass(frozen=True)
class Link:
    """A link for all-reduces and sends: bus bandwidth (B/s, nccl-tests' busbw) and hop
    latency.

    hop_latency_s is rooflab's one meaning of link latency: what one ring hop pays (one
    send to the next rank, what a send/recv fit's alpha measures). A ring all-reduce over
    n ranks takes 2(n-1) hops, so it pays 2(n-1) x hop_latency_s (allreduce_latency_s: 8
    ranks, 10 us per hop: 140 us); a pipeline stage's send pays it once."""

    level: str
    bus_bytes_per_s: float
    hop_latency_s: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        if not self.bus_bytes_per_s > 0:
            raise InputError(f"link {self.level}: bandwidth must be > 0; got "
                             f"{self.bus_bytes_per_s!r}")
        if not (self.hop_latency_s >= 0 and math.isfinite(self.hop_latency_s)):
            raise InputError(f"link {self.level}: hop latency must be >= 0 seconds; got "
                             f"{self.hop_latency_s!r}")

    def allreduce_latency_s(self, n: int) -> float:
        """The latency one ring all-reduce over `n` ranks pays: ring_hops(n) x hop."""
        return ring_hops(n) * self.hop_latency_s

    def allreduce_s(self, nbytes: float, n: int) -> float:
        """Ring all-reduce of `nbytes` over `n` ranks on this link (RING): 2(n-1) x hop
        latency + 2(n-1)/n x nbytes / bus bandwidth; 0 on one rank."""
        if n <= 1:
            return 0.0
        return self.allreduce_latency_s(n) + allreduce_link_bytes(nbytes, n) / self.bus_bytes_per_s


def ring_hops(n: int) -> int:
    """Steps of a ring all-reduce over `n` ranks, each one send to the next rank:
    n-1 of reduce-scatter and n-1 of all-gather (nccl-tests PERFORMANCE.md)."""
    return 2 * (n - 1) if n > 1 else 0


def hop_latency_of_allreduce(allreduce_latency_s: float, n: int) -> float:
    """The hop latency behind a latency quoted per all-reduce over `n` ranks (what
    LLM-Viewer-style tools take): allreduce_latency_s / 2(n-1)."""
    return allreduce_latency_s / ring_hops(n) if n > 1 else allreduce_latency_s


def allreduce_latency_words(link: Link, n: int, per_step: int | None = None) -> str:
    """'all-reduce latency 140 us = 14 hops x 10 us': both readings of one number, per
    all-reduce (what LLM tools type) and per hop (what nccl-tests measures). `per_step`:
    the all-reduces a step holds (a DP step: one per layer); a step pays the latency that
    many times, which a reader checking the step by hand needs (review 15v F-a):
    '..., x 16 all-reduces per step (one per layer) = 2.24 ms'."""
    from ..units import fmt_seconds

    one = link.allreduce_latency_s(n)
    text = (f"all-reduce latency {fmt_seconds(one, 4)} = "
            f"{ring_hops(n)} hops x {fmt_seconds(link.hop_latency_s, 4)}")
    if per_step and per_step > 1:
        text += (f", x {per_step} all-reduces per step (one per layer) = "
                 f"{fmt_seconds(per_step * one, 4)}")
    return text


def assumed_nic(hop_latency_s: float = 0.0, why: str = "") -> Link:
    """One NDR InfiniBand NIC (NDR_BUS), the link between nodes nobody measured or gave;
    `why` is added to its source."""
    return Link("network", NDR_BUS, hop_latency_s, NDR_SOURCE + (f"; {why}" if why else ""))


def allreduce_link_bytes(nbytes: float, n: int) -> float:
    """Bytes each rank sends for a ring all-reduce of `nbytes`: 2(n-1)/n x nbytes."""
    return 2.0 * (n - 1) / n * nbytes if n > 1 else 0.0


def link_from_fit(level: str, alpha_s: float, beta_bytes_per_s: float, ranks: int,
                  source: str = "measured alpha/beta") -> Link:
    """A Link from a measured all-reduce fit t = alpha + S/beta at `ranks` ranks.

    Matching the ring model at n0 = ranks: B_bus = beta x 2(n0-1)/n0 (busbw of the
    asymptote) and hop latency = alpha / (2(n0-1))."""
    if ranks < 2:
        raise InputError(f"an all-reduce fit needs >= 2 ranks; got {ranks}")
    return Link(level, beta_bytes_per_s * 2 * (ranks - 1) / ranks,
                max(0.0, alpha_s) / (2 * (ranks - 1)), source)


def link_from_roof(roof: Roof, level: str | None = None, hop_latency_s: float = 0.0) -> Link:
    """The roof's link ceiling (the given level, else the first of NVLink/PCIe/network/
    loopback it has), taken as the all-reduce bus bandwidth."""
    for lv in (level,) if level else LINK_LEVELS:
        c = roof.find_memory(lv)
        if c is not None:
            return Link(lv, c.value, hop_latency_s, f"roof '{roof.name}' {lv} ({c.provenance})")
    raise InputError(f"roof '{roof.name}' has no {level or 'link'} ceiling (it has: "
                     f"{', '.join(roof.levels) or 'none'}); measure one with `rooflab probe "
                     f"--comm --nproc 2 -o comm.json` (then --link-from comm.json) or give "
                     f"the link bandwidth (--link-bw)")


def _fitted(comm: Mapping[str, Any], collective: str, link: str | None = None
            ) -> Mapping[str, Any] | None:
    """The first `collective` entry of a cluster profile's comm block (world-wide when
    `link` is None, else the send/recv pair on that link), or None."""
    for c in comm.get("collectives", []):
        if c.get("collective") != collective:
            continue
        if (link is None and not c.get("pair")) or (link and c.get("link") == link):
            return c
    return None


def fit_entry(extras: Mapping[str, Any], collective: str, link: str | None = None
              ) -> Mapping[str, Any] | None:
    """The measured entry of `collective` in a cluster profile (`profile.extras`) when it
    has an alpha/beta fit, else None: its ranks, pair, link and fit, for saying where a
    link came from (the JSON's provenance)."""
    c = _fitted(extras.get("comm") or {}, collective, link)
    return c if c is not None and c.get("fit") else None


_NO_FIT = {True: "not measured",
           False: "fewer than two message sizes, or times that do not grow with size"}


def _no_comm_error(where: str) -> InputError:
    return InputError(f"{where}: not a cluster profile from `rooflab probe --comm` (it has "
                      f"no extras.comm: a compute profile from `rooflab probe`, or a roof?); "
                      f"measure the links with `rooflab probe --comm --nproc 2 -o comm.json`, "
                      f"or give the link bandwidth (--link-bw)")


def link_from_profile(extras: Mapping[str, Any], collective: str = "all_reduce",
                      where: str = "the profile") -> Link:
    """The measured all-reduce alpha/beta of a cluster profile (`profile.extras`).

    `where` names the file in errors. A compute profile (no comm block) and a cluster
    profile whose collective has no fit are told apart: the fixes differ."""
    comm = extras.get("comm") or {}
    if not comm.get("collectives"):
        raise _no_comm_error(where)
    c = _fitted(comm, collective)
    if c is None or not c.get("fit"):
        label = collective.replace("_", "-")
        raise InputError(f"{where}: the cluster profile's {label} has no alpha/beta fit "
                         f"({_NO_FIT[c is None]}); "
                         f"rerun `rooflab probe --comm` (the default or --full mode measures "
                         f"more sizes), or give the link bandwidth (--link-bw)")
    level = (comm.get("levels") or {}).get("world", "network")
    fit = c["fit"]
    origin = "" if where == "the profile" else f", {where}"
    return link_from_fit(level, fit["alpha_s"], fit["beta_bytes_per_s"], c["ranks"],
                         f"measured {collective.replace('_', '-')} fit over {c['ranks']} "
                         f"ranks: alpha {fit['alpha_s'] * 1e6:.3g} us, beta "
                         f"{fit['beta_bytes_per_s'] / 1e9:.3g} GB/s{origin}")


def link_from_p2p(c: Mapping[str, Any], level: str) -> Link | None:
    """A ring link from a measured send/recv fit: in a ring all-reduce every step is one
    send to the next rank, so its bus bandwidth is the one-way bandwidth (bus factor 1)
    and its hop latency the send's alpha."""
    fit = c.get("fit")
    if not fit:
        return None
    pair = "->".join(str(r) for r in c.get("pair") or ())
    return Link(level, fit["beta_bytes_per_s"], max(0.0, fit["alpha_s"]),
                f"measured send/recv {pair} fit ({c.get('link', '')} link)")


def p2p_link_from_profile(extras: Mapping[str, Any], link: str = "intra-node",
                          where: str = "the profile") -> Link:
    """The measured send/recv fit on `link` ("intra-node" or "inter-node") of a cluster
    profile: a pipeline stage's send takes alpha + bytes / beta."""
    comm = extras.get("comm") or {}
    if not comm.get("collectives"):
        raise _no_comm_error(where)
    c = _fitted(comm, "send_recv", link)
    level = (comm.get("levels") or {}).get(link, "network")
    found = link_from_p2p(c, level) if c else None
    if found is None:
        measured = ", ".join(str(x.get("label")) for x in comm["collectives"])
        raise InputError(f"{where}: the cluster profile has no fitted {link} send/recv "
                         f"(measured: {measured})")
    return found


@dataclass(frozen=True)
class MeasuredLinks:
    """What a cluster profile measured, as ring links: `intra` inside one host, `inter`
    between hosts (None when every rank ran on one host), and the scope they hold for."""

    intra: Link
    inter: Link | None
    ranks: int
    hosts: int
    backend: str

    @property
    def scope(self) -> str:
        return (f"{self.ranks} ranks on {self.hosts} host{'s' * (self.hosts > 1)} "
                f"({self.backend})")


def measured_links(extras: Mapping[str, Any], host: Mapping[str, Any] | None = None,
                   where: str = "the profile") -> MeasuredLinks:
    """The links of a cluster profile from `rooflab probe --comm`.

    On one host the world-wide all-reduce fit is the intra-node link. Across hosts the
    world-wide all-reduce ran at the pace of its slowest link, the network: it becomes
    the inter-node link, and the intra-node send/recv pair's fit the intra-node one (the
    world fit when no pair inside a host was measured)."""
    world = link_from_profile(extras, where=where)
    comm = extras["comm"]
    hosts = len((host or {}).get("hosts") or {}) or (
        2 if (comm.get("levels") or {}).get("world") == "network" else 1)
    backend = str(comm.get("backend", "?"))
    ranks = int(comm.get("world_size") or 0) or world_ranks(extras)
    if hosts < 2:
        return MeasuredLinks(world, None, ranks, hosts, backend)
    pair = _fitted(comm, "send_recv", "intra-node")
    level = (comm.get("levels") or {}).get("intra-node", "PCIe")
    intra = (link_from_p2p(pair, level) if pair else None) or world
    return MeasuredLinks(intra, world, ranks, hosts, backend)


def world_ranks(extras: Mapping[str, Any]) -> int:
    c = _fitted(extras.get("comm") or {}, "all_reduce")
    return int(c["ranks"]) if c else 0


def extrapolation_note(links: MeasuredLinks, largest: int, per_node: int,
                       inter_given: bool) -> str | None:
    """Say which rows of a what-if rest on the measurement and which extrapolate it: the
    ring model carries a fit at n0 ranks to n ranks (latency x 2(n-1)/2(n0-1), bytes x
    (n-1)/n / ((n0-1)/n0)), which a measurement at n ranks might not confirm."""
    if largest <= links.ranks:
        return None
    text = (f"the links were measured over {links.scope}; the rows past {links.ranks} "
            f"devices extrapolate them with the ring model (hop latency "
            f"{links.intra.hop_latency_s * 1e6:.3g} us x 2(n-1), bus bandwidth "
            f"{links.intra.bus_bytes_per_s / 1e9:.3g} GB/s whatever n"
            + (f" inside a node; between nodes {links.inter.hop_latency_s * 1e6:.3g} us and "
               f"{links.inter.bus_bytes_per_s / 1e9:.3g} GB/s" if links.inter else "") + ")")
    if links.inter is None and largest > per_node and not inter_given:
        text += (f"; past {per_node} devices per node the ring crosses an inter-node link "
                 f"that was not measured but assumed (the inter-node figure above; probe "
                 f"across hosts with torchrun --nnodes, or give --inter-bw)")
    return text


def cpu_link_note(links: MeasuredLinks, device: str) -> str | None:
    """A link measured with gloo runs between CPU processes (loopback or TCP), not over a
    GPU's NVLink or InfiniBand: applied to GPUs it is a what-if, and should say so."""
    if links.backend != "gloo":
        return None
    return (f"the link was measured with gloo between CPU processes "
            f"({links.intra.level}), not between {device} devices: NCCL over NVLink or "
            f"InfiniBand is far faster; probe on the GPUs (torchrun ... rooflab probe --comm)")


# the catalog's interconnect words -> link names (units.LINKS); anything else (RoCE
# Ethernet on Gaudi) is a network
LINK_WORDS = (("nvlink", "NVLink"), ("pcie", "PCIe"), ("infinity fabric", "xGMI"),
              ("ici", "ICI"))


def link_from_device(device: Any, level: str = "", hop_latency_s: float = 0.0) -> Link:
    """A Link from a catalog Device (hardware.catalog): vendors quote NVLink as the total
    of both directions, and a ring all-reduce's bus bandwidth is per direction, so half.

    A CPU's interconnect figure is its PCIe lanes in total and an Apple chip's is its
    unified memory: neither joins one device to the next, so they raise InputError."""
    what = ("its memory" if getattr(device, "unified_memory", False) else
            "the CPU's I/O lanes in total" if getattr(device, "kind", "gpu") == "cpu" else "")
    if what:
        raise InputError(f"the catalog has no link between {device.name} devices: its "
                         f"'{device.interconnect}' ({device.interconnect_bytes_per_s / 1e9:g} "
                         f"GB/s) is {what}; give the link's bandwidth with --link-bw (e.g. "
                         f"--link-bw 100Gb/s for one 100 GbE NIC per device; `rooflab probe "
                         f"--comm` measures one)")
    total = float(device.interconnect_bytes_per_s)
    name = device.interconnect.lower()
    lv = level or next((lv for key, lv in LINK_WORDS if key in name), "network")
    return Link(lv, total / 2, hop_latency_s,
                f"catalog {device.name}: {device.interconnect} {total / 1e9:g} GB/s both "
                f"directions, half per direction (nominal)")


# --- data-parallel training step -----------------------------------------------------------
@dataclass(frozen=True)
class Layer:
    """One layer's training work per device per step (forward + backward)."""

    name: str
    flop: float
    act_bytes: float          # activation traffic (scales with the per-device batch)
    weight_bytes: float       # weight + weight-gradient traffic (does not)
    grad_bytes: float         # gradient bytes all-reduced
    precision: str = "bf16"
    backward_share: float = 2 / 3   # backward is ~2x forward (6tkn = 2tkn + 4tkn)

    @property
    def bytes(self) -> float:
        return self.act_bytes + self.weight_bytes


def linear_layer(name: str, tokens: int, k: int, n: int, dtype_bytes: float = 2.0,
                 grad_bytes_per_param: float | None = None, precision: str = "bf16") -> Layer:
    """A k x n linear layer trained on `tokens` tokens per device.

    FLOP = 6 t k n. Compulsory bytes (each operand once per use): forward reads X, W and
    writes Y; backward reads dY, W and writes dX; reads X, dY and writes dW. Activations
    3 b (t k + t n); weights 2 reads + 1 gradient write = 3 b k n."""
    if min(tokens, k, n) < 1:
        raise InputError(f"layer {name}: tokens, k and n must be >= 1")
    g = dtype_bytes if grad_bytes_per_param is None else grad_bytes_per_param
    return Layer(name, 6.0 * tokens * k * n, 3 * dtype_bytes * (tokens * k + tokens * n),
                 3 * dtype_bytes * k * n, g * k * n, precision)


@dataclass(frozen=True)
class LayerTime:
    name: str
    compute_s: float
    memory_s: float
    comm_s: float
    ceiling: str              # the compute ceiling's label or "DRAM"

    @property
    def floor_s(self) -> float:
        return max(self.compute_s, self.memory_s)


@dataclass(frozen=True)
class DPStep:
    """A data-parallel training step on `n` devices."""

    n: int
    overlap: bool
    layers: tuple[LayerTime, ...]
    link: Link | None
    step_s: float
    flop: float                # per device
    link_bytes: float          # per device, sent over the link
    precision: str
    assumptions: tuple[str, ...] = field(default=())

    @property
    def compute_s(self) -> float:
        return sum(lt.floor_s for lt in self.layers)

    @property
    def comm_s(self) -> float:
        return sum(lt.comm_s for lt in self.layers)

    @property
    def exposed_comm_s(self) -> float:
        gap = self.step_s - self.compute_s
        return gap if gap > 1e-12 * self.step_s else 0.0    # float residue is not exposure

    @property
    def time_by_ceiling(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for lt in self.layers:
            out[lt.ceiling] = out.get(lt.ceiling, 0.0) + lt.floor_s
        if self.link is not None and self.comm_s > 0:
            out[self.link.level] = self.comm_s
        return out

    @property
    def binding(self) -> str:
        """The ceiling that holds the step longest: a compute ceiling, DRAM, or the link."""
        return max(self.time_by_ceiling.items(), key=lambda kv: kv[1])[0]

    @property
    def link_ai(self) -> float | None:
        """FLOP per byte over the link (the communication point's AI)."""
        return self.flop / self.link_bytes if self.link_bytes else None

    def point(self) -> Kernel:
        """The step as a kernel whose bytes are the link bytes: drawn against the link
        ceiling (plot_roofline(..., level=link.level))."""
        if self.link is None or not self.link_bytes:
            raise InputError("a single-device step sends nothing over a link; no "
                             "communication point")
        return Kernel(name=f"DP step x{self.n} ({self.link.level})",
                      flop={self.precision: self.flop}, bytes={self.link.level: self.link_bytes},
                      seconds=self.step_s, provenance={"flop": "derived", "bytes": "derived",
                                                       "seconds": "derived"},
                      meta={"model": "data-parallel step", "binding": self.binding})


def layer_time(layer: Layer, roof: Roof, link: Link | None, n: int) -> LayerTime:
    ceiling, _ = roof.compute_for(layer.precision)
    dram = roof.bandwidth("DRAM")
    compute_s, memory_s = layer.flop / ceiling.value, layer.bytes / dram.value
    comm = link.allreduce_s(layer.grad_bytes, n) if link is not None else 0.0
    return LayerTime(layer.name, compute_s, memory_s, comm,
                     ceiling.label if compute_s >= memory_s else "DRAM")


def overlapped_step_s(layers: Sequence[LayerTime], backward_shares: Sequence[float]) -> float:
    """Forward of all layers, then backward in reverse; each layer's all-reduce starts
    when its backward ends and the link is free. The step ends when both are done."""
    t = sum(lt.floor_s * (1 - b) for lt, b in zip(layers, backward_shares, strict=True))
    link_free = 0.0
    for lt, b in zip(reversed(layers), reversed(backward_shares), strict=True):
        t += lt.floor_s * b
        link_free = max(link_free, t) + lt.comm_s
    return max(t, link_free)


def dp_step(layers: Sequence[Layer], roof: Roof, link: Link | None, n: int,
            overlap: bool = True) -> DPStep:
    """A data-parallel training step on `n` devices (see the module's assumptions)."""
    if n < 1:
        raise InputError(f"device count must be >= 1; got {n}")
    if not layers:
        raise InputError("a training step needs at least one layer")
    if n > 1 and link is None:
        raise InputError(f"{n} devices need a link for the gradient all-reduce")
    times = tuple(layer_time(la, roof, link if n > 1 else None, n) for la in layers)
    if overlap:
        step = overlapped_step_s(times, [la.backward_share for la in layers])
    else:
        step = sum(lt.floor_s + lt.comm_s for lt in times)
    grads = sum(la.grad_bytes for la in layers)
    precision = max(layers, key=lambda la: la.flop).precision
    notes = (_ring_per_layer(len(layers), link if n > 1 else None, n),
             "layer time = max(FLOP/P, bytes/B_DRAM)",
             "overlap: all-reduce of layer l runs during backward of layers < l"
             if overlap else "no overlap: all-reduces after the backward pass")
    return DPStep(n, overlap, times, link if n > 1 else None, step,
                  sum(la.flop for la in layers), allreduce_link_bytes(grads, n), precision,
                  notes)


def _ring_per_layer(layers: int, link: Link | None, n: int) -> str:
    """RING with what a step holds: one all-reduce per layer (DDP buckets ~ layers), so
    the step pays the ring's latency `layers` times (review 15v F-a: 1.76 ms + 16 x 140 us
    = 4.0 ms at 8 GPUs, not the 1.9 ms a single all-reduce gives)."""
    text = (f"{RING}; one all-reduce per layer: {layers} per step, each paying the "
            f"latency")
    if link is not None and link.hop_latency_s > 0:
        text += f" ({allreduce_latency_words(link, n, layers)} at {n} devices)"
    return text


# --- tensor-parallel decode step -------------------------------------------------------------
@dataclass(frozen=True)
class TPStep:
    """A tensor-parallel decode step: per-device kernels plus 2 all-reduces per layer."""

    tp: int
    result: Any               # workloads.llm.parallel.TPResult
    flop: float               # per device
    memory_s: float           # floors of the memory-bound kernels
    compute_s: float          # floors of the compute-bound kernels
    link: Link
    precision: str

    @property
    def link_bytes(self) -> float:
        return self.result.allreduces * allreduce_link_bytes(self.result.allreduce_bytes, self.tp)

    @property
    def step_s(self) -> float:
        return self.result.tpot_s

    @property
    def binding(self) -> str:
        parts = {"compute": self.compute_s, "DRAM": self.memory_s, self.link.level:
                 self.result.comm_s}
        return max(parts.items(), key=lambda kv: kv[1])[0]

    @property
    def link_ai(self) -> float | None:
        return self.flop / self.link_bytes if self.link_bytes else None

    def point(self) -> Kernel:
        return Kernel(name=f"TP decode x{self.tp} ({self.link.level})",
                      flop={self.precision: self.flop}, bytes={self.link.level: self.link_bytes},
                      seconds=self.step_s, provenance={"flop": "derived", "bytes": "derived",
                                                       "seconds": "derived"},
                      meta={"model": "tensor-parallel decode step", "binding": self.binding})


# --- scale what-ifs --------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalePoint:
    n: int
    step: DPStep
    efficiency: float         # weak scaling: step(1) / step(n)

    @property
    def speedup(self) -> float:
        """Throughput relative to one device (n x efficiency)."""
        return self.n * self.efficiency


def node_network_link(nic: Link, nics_per_node: int) -> Link:
    """The network as a ring over several nodes sees it: NCCL runs one ring (channel) per
    NIC, each carrying 1/nics of the data, so the inter-node bus bandwidth is the node's NIC
    aggregate, nics x one NIC's (an HGX/DGX H100 node: 8 x 400 Gb/s = 8 x 50 GB/s = 400
    GB/s; NVIDIA puts one NDR NIC at 46-48 GB/s of busbw, NVIDIA/nccl-tests#290). A
    point-to-point send (a --pp stage hop) still goes through one NIC: use `nic` there."""
    if not isinstance(nics_per_node, int) or nics_per_node < 1:
        raise InputError(f"NICs per node must be an integer >= 1; got {nics_per_node!r}")
    if nics_per_node == 1:
        return nic
    return Link(nic.level, nic.bus_bytes_per_s * nics_per_node, nic.hop_latency_s,
                f"{nic.source}; x {nics_per_node} NICs per node, one ring per NIC = "
                f"{nic.bus_bytes_per_s * nics_per_node / 1e9:.3g} GB/s across nodes")


def ring_link(intra: Link, inter: Link) -> Link:
    """The link a flat ring over several nodes runs at: its slowest hop. A ring that leaves
    the node still takes intra-node hops, so PCIe-attached GPUs (T4: 16 GB/s per
    direction) stay PCIe-bound behind a faster NIC; the network's latency applies."""
    if inter.bus_bytes_per_s <= intra.bus_bytes_per_s:
        return inter
    return Link(intra.level, intra.bus_bytes_per_s,
                max(intra.hop_latency_s, inter.hop_latency_s),
                f"{intra.source}; the slowest hop of a ring across nodes (the network, "
                f"{inter.bus_bytes_per_s / 1e9:.3g} GB/s, is faster)")


def bridged_pairs(device: Any) -> bool:
    """An NVLink bridge joins two cards (A100 PCIe, H100 NVL, RTX 3090): a ring over more
    than two of them in a node runs over PCIe."""
    return "bridge" in str(getattr(device, "interconnect", "")).lower()


def host_link_of(device: Any, hop_latency_s: float = 0.0) -> Link | None:
    """The device's PCIe host link as a ring link (per direction, derived), or None."""
    c = getattr(device, "host_link_ceiling", None)
    if c is None:
        return None
    return Link("PCIe", c.value, hop_latency_s,
                f"catalog {device.name}: {device.host_link} {c.value / 1e9:.3g} GB/s per "
                f"direction (derived); its NVLink bridge joins only pairs")


def device_ring_link(device: Any, devices: int, hop_latency_s: float = 0.0) -> Link:
    """The link a ring over `devices` of one catalog device runs on: its interconnect, or,
    for cards joined in pairs by an NVLink bridge, their PCIe host link beyond two."""
    link = link_from_device(device, hop_latency_s=hop_latency_s)
    if devices > 2 and bridged_pairs(device):
        return host_link_of(device, hop_latency_s) or link
    return link


def scale_dp(layers: Sequence[Layer], roof: Roof, intra: Link, inter: Link | None = None, *,
             gpus_per_node: int = 8, counts: Sequence[int] = GPU_COUNTS,
             overlap: bool = True, pair: Link | None = None) -> tuple[ScalePoint, ...]:
    """Predicted data-parallel step time and efficiency for each device count.

    Up to `gpus_per_node` devices the ring runs on `intra`; beyond, it crosses `inter`
    (the slowest link sets a flat ring's pace; hierarchical all-reduce would do better).
    `pair`: a link that joins only two devices (an NVLink bridge), used for n = 2.
    """
    base = dp_step(layers, roof, None, 1, overlap).step_s
    out = []
    for n in counts:
        link = intra if n <= gpus_per_node or inter is None else ring_link(intra, inter)
        if pair is not None and n == 2 and gpus_per_node >= 2:
            link = pair
        step = dp_step(layers, roof, link, n, overlap)
        out.append(ScalePoint(n, step, base / step.step_s))
    return tuple(out)


def comm_binds_at(points: Sequence[ScalePoint]) -> int | None:
    """The smallest device count at which the link is the binding ceiling."""
    return next((p.n for p in points if p.step.link is not None
                 and p.step.binding == p.step.link.level), None)
