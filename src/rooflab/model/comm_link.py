"""A link for all-reduces and sends (Link: bus bandwidth and hop latency), the ring
all-reduce model over it (RING), and the links rooflab takes when none was measured: a
roof's link ceiling, a catalog device's interconnect, an assumed NDR NIC, and the link a
ring over several nodes or bridged pairs runs at. Pure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..units import LINKS, fmt_seconds, si
from .ceiling import Roof

# the links link_from_roof looks for, in units.LINKS' order (one list: this one once left out
# xGMI and ICI, so a roof with only an xGMI ceiling was said to have no link)
LINK_LEVELS = LINKS

RING = ("ring all-reduce: t = 2(n-1) x hop latency + 2(n-1)/n x bytes / bus bandwidth "
        "(nccl-tests convention)")


# --- links ---------------------------------------------------------------------------------
# Between nodes, when nothing was measured or given: one NDR InfiniBand NIC per GPU, as
# NVIDIA's nodes carry (a modelling assumption with its source). Other vendors' systems
# carry other networks: model.scale_out holds them, per catalog device, for `rooflab
# scale` and `rooflab llm` alike; this one is its NVIDIA entry and a profile file's.
NDR_BUS = 50e9
NDR_SOURCE = ("assumed: one 400 Gb/s NDR InfiniBand NIC per GPU = 50 GB/s per direction "
              "(NVIDIA ConnectX-7: DGX H100 and DGX B200 carry '8x single-port NVIDIA "
              "ConnectX-7 VPI, up to 400 Gb/s', one per GPU, "
              "nvidia.com/en-us/data-center/dgx-b200)")


@dataclass(frozen=True)
class Link:
    """A link for all-reduces and sends: bus bandwidth (B/s, nccl-tests' busbw) and hop
    latency.

    hop_latency_s is rooflab's one meaning of link latency: what one ring hop pays (one
    send to the next rank, what a send/recv fit's alpha measures). A ring all-reduce over
    n ranks takes 2(n-1) hops, so it pays 2(n-1) x hop_latency_s (allreduce_latency_s: 8
    ranks, 10 us per hop: 140 us); a pipeline stage's send pays it once.

    whole_ring: the figures were fitted to an all-reduce over a whole ring across nodes
    (a cluster profile's world all-reduce measured across hosts), its intra-node hops
    included: a ring across nodes runs at it as it is (ring_link), so the row at the
    measured rank count returns the measurement (review r7 F1)."""

    level: str
    bus_bytes_per_s: float
    hop_latency_s: float = 0.0
    source: str = ""
    whole_ring: bool = False

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
    the all-reduces a step holds (a DP step: one per linear layer); a step pays the latency that
    many times, which a reader checking the step by hand needs (review 15v F-a):
    '..., x 16 all-reduces per step (one per linear layer) = 2.24 ms'."""
    one = link.allreduce_latency_s(n)
    text = (f"all-reduce latency {fmt_seconds(one, 4)} = "
            f"{ring_hops(n)} hops x {fmt_seconds(link.hop_latency_s, 4)}")
    if per_step and per_step > 1:
        text += (f", x {per_step} all-reduces per step (one per linear layer) = "
                 f"{fmt_seconds(per_step * one, 4)}")
    return text


# Intel Gaudi 2/3: of each chip's 24 RoCE ports, 21 join the 8 chips of a node all-to-all
# and 3 leave it (Intel Gaudi docs, Management > Network Configuration): 3 x 200 Gb/s = 75
# GB/s per direction per Gaudi 3 (600 GB/s per 8-chip node), 3 x 100 Gb/s = 37.5 per Gaudi 2
SCALE_OUT_PORTS = 3
_ROCE = re.compile(r"(\d+)\s*x\s*(\d+)\s*GbE\s+RoCE", re.IGNORECASE)


def own_scale_out(device: Any, hop_latency_s: float = 0.0) -> Link | None:
    """The link between nodes a chip brings itself (Gaudi: its 3 scale-out RoCE ports), as
    one chip's share of the node's network (node_network_link multiplies it by the chips
    of a node); None for a device that leaves its node through a NIC (assumed_nic)."""
    m = _ROCE.search(str(getattr(device, "interconnect", "")))
    if m is None or int(m.group(1)) <= SCALE_OUT_PORTS:
        return None
    bus = SCALE_OUT_PORTS * float(m.group(2)) * 1e9 / 8
    return Link("network", bus, hop_latency_s,
                f"assumed: each chip's own {SCALE_OUT_PORTS} scale-out ports of its "
                f"{device.interconnect} = {si(bus, 'B/s')} per direction (Intel Gaudi "
                f"docs, Network Configuration: 21 ports join the chips of a node, "
                f"{SCALE_OUT_PORTS} leave it); no InfiniBand NIC")


def no_latency_words(allreduces: int, options: str, when: str) -> str:
    """The note when no hop latency is known and the all-reduces count bandwidth only;
    one wording for `rooflab llm --tp` and `rooflab scale` (review r7 F4). `options`: how
    to give a latency; `when`: where it can outweigh the bandwidth term."""
    return (f"the all-reduce time counts link bandwidth only, no latency: each of the "
            f"{allreduces} all-reduces per step also pays the collective's latency "
            f"(microseconds each; measure it with `rooflab probe --comm` and use it with "
            f"--link-from FILE, or give it with {options}), which can exceed the bandwidth "
            f"term {when}")


def assumed_nic(hop_latency_s: float = 0.0, why: str = "") -> Link:
    """One NDR InfiniBand NIC (NDR_BUS), NVIDIA's link between nodes, for a roof with no
    catalog device; `why` is added to its source. A catalog device's own network:
    scale_out.assumed_network."""
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
    """The roof's link ceiling (the given level, else the first of units.LINKS it has:
    NVLink, xGMI, ICI, PCIe, network, loopback), taken as the all-reduce bus bandwidth.
    The source says what the ceiling is: a probed one (`rooflab probe --comm`) is the best
    median busbw of any collective (a broadcast's as often as an all-reduce's) and has no
    latency, so an analysis file's roof can give a step half the time its cluster profile
    gives (review r7 F6)."""
    for lv in (level,) if level else LINK_LEVELS:
        c = roof.find_memory(lv)
        if c is not None:
            how = c.method.split(",", 1)[0] if c.method else ""
            what = (f": the probe's best busbw of any collective ({how}), not the "
                    f"all-reduce's fit, no latency; --link-from the cluster profile uses "
                    f"its all-reduce alpha/beta" if "collectives" in c.method else
                    ", taken as the all-reduce's bus bandwidth")
            return Link(lv, c.value, hop_latency_s,
                        f"roof '{roof.name}' {lv} ({c.provenance}){what}")
    raise InputError(f"roof '{roof.name}' has no {level or 'link'} ceiling (it has: "
                     f"{', '.join(roof.levels) or 'none'}); measure one with `rooflab probe "
                     f"--comm --nproc 2 -o comm.json` (then --link-from comm.json) or give "
                     f"the link bandwidth (--link-bw)")



# the catalog's interconnect words -> link names (units.LINKS); anything else (RoCE
# Ethernet on Gaudi) is a network
LINK_WORDS = (("nvlink", "NVLink"), ("pcie", "PCIe"), ("infinity fabric", "xGMI"),
              ("ici", "ICI"))


def link_from_device(device: Any, level: str = "", hop_latency_s: float = 0.0) -> Link:
    """A Link from a catalog Device (hardware.catalog): vendors quote NVLink as the total
    of both directions, and a ring all-reduce's bus bandwidth is per direction, so half.
    A PCIe card (its interconnect its host link) gets the host link's derived rate.

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
    pcie = getattr(device, "host_link_ceiling", None)
    if device.interconnect == getattr(device, "host_link", None) and pcie is not None:
        # a PCIe card's interconnect is its host link: one figure for the one link, the
        # derived per-direction rate (Gen4 x16 31.5 GB/s, not half the datasheet's 64),
        # as beyond an NVLink bridge's pair (host_link_of)
        how = pcie.method.split(": ", 1)[-1].removesuffix(", per direction")
        return Link(lv, pcie.value, hop_latency_s,
                    f"catalog {device.name}: {device.interconnect} {si(pcie.value, 'B/s')} "
                    f"per direction ({pcie.provenance}: {how}; the datasheet's "
                    f"{total / 1e9:g} GB/s is both directions, before line coding)")
    return Link(lv, total / 2, hop_latency_s,
                f"catalog {device.name}: {device.interconnect} {total / 1e9:g} GB/s both "
                f"directions, half per direction (nominal)")



def node_network_link(nic: Link, nics_per_node: int, unit: str = "NIC") -> Link:
    """The network as a ring over several nodes sees it: NCCL runs one ring (channel) per
    NIC, each carrying 1/nics of the data, so the inter-node bus bandwidth is the node's NIC
    aggregate, nics x one NIC's (an HGX/DGX H100 node: 8 x 400 Gb/s = 8 x 50 GB/s = 400
    GB/s; NVIDIA puts one NDR NIC at 46-48 GB/s of busbw, NVIDIA/nccl-tests#290). A
    point-to-point send (a --pp stage hop) still goes through one NIC: use `nic` there.
    `unit`: what carries one ring (a Gaudi chip's scale-out ports: "chip")."""
    if not isinstance(nics_per_node, int) or nics_per_node < 1:
        raise InputError(f"NICs per node must be an integer >= 1; got {nics_per_node!r}")
    if nics_per_node == 1:
        return nic
    return Link(nic.level, nic.bus_bytes_per_s * nics_per_node, nic.hop_latency_s,
                f"{nic.source}; x {nics_per_node} {unit}s per node, one ring per {unit} = "
                f"{si(nic.bus_bytes_per_s * nics_per_node, 'B/s')} across nodes")


def network_binds(intra: Link, inter: Link) -> bool:
    """Whether the inter-node link sets a flat ring's pace across nodes: its bandwidth is
    no faster than the intra-node hops', or its hops are slower to start. When not, the
    ring runs at the intra-node link's figures and the inter-node one changes no number."""
    return (inter.whole_ring or inter.bus_bytes_per_s <= intra.bus_bytes_per_s
            or inter.hop_latency_s > intra.hop_latency_s)


def ring_link(intra: Link, inter: Link) -> Link:
    """The link a flat ring over several nodes runs at: its slowest hop. A ring that leaves
    the node still takes intra-node hops, so PCIe-attached GPUs (T4: 16 GB/s per
    direction) stay PCIe-bound behind a faster NIC. Whichever link's bandwidth binds, the
    ring pays the larger of the two hop latencies: its intra-node hops still pay theirs
    behind a slower network (a network given with no latency once made a ring of 1024
    faster than one of 8, review r3 F6). A network measured as a whole ring (whole_ring: a
    world all-reduce across hosts) is that ring already, intra-node hops included: it is
    taken as it is, not maxed with the intra-node link's figures again (review r7 F1: a
    16-rank fit of 50 us was charged 30 hops x a send's 10 us)."""
    if inter.whole_ring:
        return inter
    latency = max(intra.hop_latency_s, inter.hop_latency_s)
    if inter.bus_bytes_per_s <= intra.bus_bytes_per_s:
        if latency == inter.hop_latency_s:
            return inter
        return Link(inter.level, inter.bus_bytes_per_s, latency,
                    f"{inter.source}; per hop the intra-node link's "
                    f"{fmt_seconds(intra.hop_latency_s, 4)} (the larger: a ring across nodes "
                    f"still takes intra-node hops)")
    return Link(intra.level, intra.bus_bytes_per_s, latency,
                f"{intra.source}; the slowest hop of a ring across nodes (the network, "
                f"{si(inter.bus_bytes_per_s, 'B/s')}, is faster)")


def bridged_pairs(device: Any) -> bool:
    """Whether an NVLink bridge joins the cards (A100 PCIe, H100 NVL, H200 NVL, RTX 3090):
    a ring over more of them in a node than the bridge joins (bridge_group) runs over
    PCIe. An MI210's Infinity Fabric Link bridge joins a hive of 4 link to link (its
    [device.links] mesh), not pairs."""
    link = str(getattr(device, "interconnect", "")).lower()
    return "bridge" in link and "nvlink" in link


_WAYS = re.compile(r"(\d+)-way")


def bridge_group(device: Any) -> int:
    """How many cards the device's NVLink bridge joins, 0 without one: 2 (a bridge joins a
    pair: A100 PCIe, H100 NVL), or the largest 'N-way' its catalog interconnect names (the
    H200 NVL's "NVLink 4 (2- or 4-way bridge)": NVIDIA's datasheet gives 900 GB/s per GPU
    on either bridge, so a ring of up to 4 runs at that figure)."""
    if not bridged_pairs(device):
        return 0
    ways = [int(w) for w in _WAYS.findall(str(device.interconnect))]
    return max([2, *ways])


def bridge_words(device: Any) -> str:
    """What the device's NVLink bridge joins, for a link's source ('' without one)."""
    group = bridge_group(device)
    if not group:
        return ""
    return "its NVLink bridge joins only pairs" if group == 2 else \
        f"its NVLink bridge joins up to {group} cards"


def host_link_of(device: Any, hop_latency_s: float = 0.0) -> Link | None:
    """The device's PCIe host link as a ring link (per direction, derived), or None."""
    c = getattr(device, "host_link_ceiling", None)
    if c is None:
        return None
    why = bridge_words(device)
    return Link("PCIe", c.value, hop_latency_s,
                f"catalog {device.name}: {device.host_link} {si(c.value, 'B/s')} per "
                f"direction (derived){'; ' + why if why else ''}")


# xGMI topologies (a catalog entry's [device.links]): AMD joins the GPUs of a node directly,
# link to link, with no switch, so what a group gets depends on how many links join it.
# mesh: an 8-GPU MI300X/MI325X/MI350 platform is a full mesh, one x16 link from each GPU to
# each of its 7 peers (ROCm/rccl README, "Improving performance on MI300 when using less
# than 8 GPUs" (github.com/ROCm/rccl/pull/1270): "each pair of GPUs are connected with
# dedicated XGMI links in a fully-connected topology ... When using less than 8 GPUs, one can
# only achieve a fraction of the potential bandwidth"). RCCL spreads an all-reduce over
# k GPUs across all k-1 direct links of each GPU, so the bus bandwidth is (k-1) links: 2
# GPUs one link, 8 GPUs all 7. die_links: the MI250X's two dies are joined by 4 links in
# the package, dies of different packages by 1 or 2 (ROCm "MI250 microarchitecture": 50
# GB/s per direction per x16 link; OLCF Frontier user guide: 200 GB/s within an MI250X,
# 50-100 GB/s between GCDs of different MI250X), so a ring that leaves a package runs at
# its slowest hop, one link.
LINK_KEYS = ("link_gbps", "mesh", "die_links")
HIVE_LIMIT = 8   # a mesh of fewer GPUs than a node (MI210's 4-GPU hive) ends inside it
# Intel Gaudi 2/3 (HLS-Gaudi2/3): of each chip's 24 RoCE ports, 21 join its 7 peers all to
# all, 3 to each (21/7 = 3), as a [device.links] mesh of 7 with a link of 3 ports
GAUDI_MESH = ("Intel Gaudi docs, Network Configuration: 21 scale-up ports join 7 other "
              "accelerators 'in an All2All manner, essentially using 21/7=3 scale-up ports "
              "for each connection', 21 x 25 GB/s = 525 GB/s per direction on a Gaudi 3; "
              "docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration")


def _mesh_words(device: Any) -> tuple[str, str, str]:
    """(link level, what one link is, its source) for a catalog device's full mesh: a
    Gaudi's 3 RoCE ports per peer, else an AMD xGMI link."""
    if _ROCE.search(str(getattr(device, "interconnect", ""))):
        return "network", f"link of {SCALE_OUT_PORTS} RoCE ports", GAUDI_MESH
    return ("xGMI", "xGMI link", "RCCL on a fully connected MI300 platform, "
            "github.com/ROCm/rccl/pull/1270")


def link_problem(links: Any) -> str:
    """What is wrong with a catalog entry's [device.links] ('' when nothing): known keys,
    positive numbers, link_gbps with any topology."""
    bad = [k for k in links if k not in LINK_KEYS]
    if bad:
        return f"[device.links] unknown key '{bad[0]}' (allowed: {', '.join(LINK_KEYS)})"
    for k, v in links.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            return f"[device.links] {k} must be a positive number; got {v!r}"
    if links and "link_gbps" not in links:
        return "[device.links] needs link_gbps (one link's rate, both directions, GB/s)"
    return ""


def xgmi_ring_link(device: Any, devices: int, hop_latency_s: float = 0.0,
                   dies: bool = False) -> Link | None:
    """The link a ring over `devices` of a catalog device with an xGMI topology runs at
    (see LINK_KEYS' comment), per direction; None for a device without one. A full mesh:
    min(devices - 1, mesh) links x one link's per-direction rate (MI300X: 2 GPUs 64 GB/s,
    4 GPUs 192, 8 GPUs 448). A package of several dies (MI250X): `devices` counts packages,
    or dies where `dies` (what `rooflab choose` ranks): the dies of one package get
    die_links links (4 x 50 = 200 GB/s), a ring over dies of several packages one link
    (50 GB/s), its slowest hop."""
    links = getattr(device, "links", None) or {}
    if "link_gbps" not in links:
        return None
    one = links["link_gbps"] * 1e9 / 2
    name, each = device.name, f"{links['link_gbps']:g} GB/s both directions"
    if "mesh" in links:
        mesh = int(links["mesh"])
        host = host_link_of(device, hop_latency_s)
        level, link, cite = _mesh_words(device)
        if devices > mesh + 1 and mesh + 1 < HIVE_LIMIT and host is not None:
            # a ring over more GPUs than one hive (4 MI210 on their bridge) joins the
            # hives over PCIe: its slowest hop
            return replace(host, source=f"catalog {name}: {devices} GPUs are more than one "
                           f"hive of {mesh + 1} on its xGMI mesh, so the ring's slowest hop "
                           f"is the {device.host_link} host link, "
                           f"{host.bus_bytes_per_s / 1e9:.3g} GB/s per direction (derived)")
        k = max(1, min(devices - 1, mesh))
        beyond = ""
        if devices > mesh + 1 and mesh + 1 < HIVE_LIMIT:
            # an APU (MI300A) has no host link: the catalog knows no link between meshes
            beyond = (f"; {devices} are more than one mesh of {mesh + 1}, and what joins "
                      f"meshes is not in the catalog: this is the hops inside one")
        return Link(level, k * one, hop_latency_s,
                    f"catalog {name}: a full mesh, one {link} ({each}) from each device to "
                    f"each of its {mesh} peers; a ring over {devices} uses {k} of "
                    f"them per device: {k} x {one / 1e9:g} = {k * one / 1e9:g} GB/s per "
                    f"direction ({cite}){beyond}")
    if "die_links" in links:
        per = max(1, int(getattr(device, "software_devices", 1)))
        n = devices if dies else devices * per
        if n <= per:
            k, how = int(links["die_links"]), f"the {per} dies of one package"
        else:
            # `devices` named what was counted: dies (choose's ranks) or packages (llm's)
            group = (f"{n} dies of {math.ceil(n / per)} packages" if dies else
                     f"{devices} packages, {n} dies (each a device to software)")
            k, how = 1, (f"{group}: its slowest hop, the one link between dies of "
                         f"different packages")
        return Link("xGMI", k * one, hop_latency_s,
                    f"catalog {name}: a ring over {how}, {k} xGMI link{'s' * (k > 1)} "
                    f"({each}) = {k * one / 1e9:g} GB/s per direction (ROCm 'MI250 "
                    f"microarchitecture'; OLCF Frontier user guide: 200 GB/s within an "
                    f"MI250X, 50-100 GB/s between GCDs of different ones)")
    return None


def group_links(device: Any, hop_latency_s: float = 0.0, upto: int = 8) -> dict[int, Link]:
    """{GPUs: link} for rings of 2..`upto` GPUs of one node where the device's xGMI
    topology makes the link depend on the group (xgmi_ring_link), or an NVLink bridge of
    more than 2 (NVLink up to its group, PCIe beyond); {} for any other device,
    whose one link serves every group (`rooflab scale` and `train --dp` rows)."""
    if bridge_group(device) > 2:     # NVLink up to the bridge's 4 cards, PCIe beyond
        return {n: device_ring_link(device, n, hop_latency_s) for n in range(2, upto + 1)}
    if not (getattr(device, "links", None) or {}).get("link_gbps"):
        return {}
    return {n: xgmi_ring_link(device, n, hop_latency_s) for n in range(2, upto + 1)}


def device_ring_link(device: Any, devices: int, hop_latency_s: float = 0.0,
                     dies: bool = False) -> Link:
    """The link a ring over `devices` of one catalog device runs on: its interconnect, or,
    for cards joined by an NVLink bridge, their PCIe host link beyond the bridge's group
    (bridge_group: 2, 4 on an H200 NVL), or,
    for GPUs joined link to link (xgmi_ring_link), the links the group has (`dies`: count
    a package's dies, as xgmi_ring_link)."""
    mesh = xgmi_ring_link(device, devices, hop_latency_s, dies)
    if mesh is not None:
        return mesh
    link = link_from_device(device, hop_latency_s=hop_latency_s)
    group = bridge_group(device)
    if group and devices > group:
        return host_link_of(device, hop_latency_s) or link
    if group > 2:      # the catalog's figure, said to hold for the bridge's whole group
        return replace(link, source=f"{link.source}; {bridge_words(device)}")
    return link

