"""The links `rooflab scale` runs on, chosen from its options (split from cli/scale.py, which
re-exports them): inside a node (given, measured by a cluster profile, the catalog's, the
roof's), between nodes (given, measured or assumed), and the notes on what a measured link
does not cover. `rooflab train --dp/--tp` chooses its links with them too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError, RooflabError

if TYPE_CHECKING:
    from collections.abc import Mapping

    # the model is imported where used: its numpy cost `scale --help` 0.25 s of CPU
    from ..model.link_fits import MeasuredLinks, PastWords
    from ..model.parallel import Link


def _rate(text: str, what: str) -> float:
    from ..units import parse_link_rate

    return parse_link_rate(text, what)   # a bare '--link-bw 900' (bytes/s) is refused


@dataclass(frozen=True)
class Links:
    """The links a what-if runs on: inside a node, one joining only pairs (an NVLink
    bridge) or None, and what a cluster profile measured (None for given/catalog ones).
    `kind`: where the intra-node link came from, as `rooflab llm --json`'s
    link_provenance.kind: given, measured, catalog or roof."""

    intra: Link
    pair: Link | None = None
    measured: MeasuredLinks | None = None
    kind: str = "catalog"
    # {devices: link} where a node's link depends on the group (an xGMI mesh:
    # comm_link.group_links); the rows of up to a node take theirs from it
    by_count: Mapping[int, Link] | None = None


def cluster_links(path: str, flag: str) -> MeasuredLinks | None:
    """The measured links of a cluster profile file; None when `path` is another kind of
    profile or roof file (for --on: a compute profile is fine there)."""
    from ..hardware.profile import load_profile
    from ..input_names import shown_path
    from ..model.link_fits import measured_links

    try:
        prof = load_profile(path)
    except RooflabError:
        if flag == "--on":        # an analysis or bare roof file: load_roof reads its roof
            return None
        raise
    if flag == "--on" and not (prof.extras.get("comm") or {}).get("collectives"):
        return None
    return measured_links(prof.extras, prof.host, where=f"{flag} {shown_path(path)}")


def choose_links(on: str, link_bw: str | None, link_from: str | None,
                 hop_latency_s: float, per_node: int | None = None) -> Links:
    """The intra-node link (cli/scale.py's HELP gives the order), `hop_latency_s` per hop
    for a given or catalog one. A catalog card on an NVLink bridge (A100 PCIe, H100 NVL)
    has NVLink for 2 and PCIe beyond (an H200 NVL's 4-way bridge: NVLink up to 4, its
    groups as a mesh's). `per_node` (--per-node): the node whose rows a mesh's groups
    cover (MI210 hives past 4 join over PCIe; an MI300A's mesh ends at 4: refused past
    it)."""
    from ..hardware.resolve import load_roof, looks_like_file
    from ..model.comm_link import (
        bridged_pairs,
        group_links,
        host_link_of,
        link_from_device,
        link_from_roof,
    )
    from ..model.parallel import Link

    if link_bw:
        return Links(Link(_given_level(on), _rate(link_bw, "--link-bw"), hop_latency_s,
                          "given (--link-bw)"), kind="given")
    if link_from:
        measured = cluster_links(link_from, "--link-from")
        return Links(measured.intra, None, measured, "measured")
    if looks_like_file(on):
        # A cluster profile as --on: its measured all-reduce, not the link ceiling (the
        # best bus bandwidth of any collective, and no latency).
        measured = cluster_links(on, "--on")
        if measured is not None:
            return Links(measured.intra, None, measured, "measured")
    else:
        from ..hardware.catalog import lookup
        from ..model.scale_out import devices_per_node

        dev = lookup(on)
        node = devices_per_node(dev)     # 4 on an MI300A's or MI250X's HPE Cray EX node
        if per_node and getattr(dev, "links", None):
            node = _mesh_node(dev, per_node)
        groups = group_links(dev, hop_latency_s, upto=node)
        if groups:     # xGMI: a pair shares one link, a node's ring uses them all
            return Links(groups[node], groups[2], by_count=groups)
        if dev.interconnect_bytes_per_s:
            link = link_from_device(dev, hop_latency_s=hop_latency_s)
            pcie = host_link_of(dev, hop_latency_s) if bridged_pairs(dev) else None
            return Links(pcie, link) if pcie is not None else Links(link)
    return Links(link_from_roof(load_roof(on), hop_latency_s=hop_latency_s), kind="roof")


def _mesh_node(dev, per_node: int) -> int:
    """--per-node on a device joined link to link: the node its rows cover, refused past a
    mesh that nothing else in the catalog joins (an MI300A: no host link)."""
    from ..model.comm_link import host_link_of
    from ..model.scale_out import node_words

    mesh = int(dev.links.get("mesh", 0))
    if mesh and per_node > mesh + 1 and host_link_of(dev) is None:
        raise InputError(f"--per-node {per_node} on {dev.name}: its xGMI mesh joins at most "
                         f"{mesh + 1} ({mesh} links each, one {node_words(dev)}) and the "
                         f"catalog knows no link between meshes in one node, so devices "
                         f"{mesh + 2}..{per_node} would be given the {mesh + 1}-device "
                         f"figure; use --per-node {mesh + 1} or fewer (the rows past it "
                         f"cross the network), or give that node's link with --link-bw")
    return per_node


def inter_link(inter_bw: str | None, measured: MeasuredLinks | None, hop_latency_s: float,
               device=None) -> tuple[Link, str]:
    """Between nodes, with its kind (given, measured or assumed): --inter-bw, else the
    network a cluster profile measured across hosts, else the network the device's systems
    carry (assumed, model.scale_out: a Gaudi's own scale-out ports, an MI300X's 400G NIC,
    a TPU's DCN share, else one NDR InfiniBand NIC per GPU), as `rooflab llm` assumes it.
    `hop_latency_s` is per hop; `device` the catalog device of --on (None for a file)."""
    from ..model.parallel import Link
    from ..model.scale_out import assumed_network

    if inter_bw:
        return (Link("network", _rate(inter_bw, "--inter-bw"), hop_latency_s,
                     "given (--inter-bw)"), "given")
    if measured is not None and measured.inter is not None:
        return measured.inter, "measured"
    return assumed_network(device, hop_latency_s), "assumed"


def link_notes(chosen: Links, roof_name: str, on: str, largest: int, per_node: int,
               inter_given: bool, words: PastWords | None = None) -> list[str]:
    """What a measured link does not cover: device counts past the measured ones, and
    GPUs judged on a link measured between CPU processes. `words`: the verb's
    (link_fits.PastWords; None: scale's rows)."""
    from ..hardware.resolve import looks_like_file
    from ..model.link_fits import ROW_WORDS, cpu_link_note, extrapolation_note

    m = chosen.measured
    if m is None:
        return []
    out = [extrapolation_note(m, largest, per_node, inter_given, words or ROW_WORDS)]
    if not looks_like_file(on):
        from ..hardware.catalog import lookup

        if lookup(on).kind != "cpu":
            out.append(cpu_link_note(m, roof_name))
    return [n for n in out if n]


def _given_level(on: str) -> str:
    """What a --link-bw figure is called: a catalog GPU's own link kind (NVLink, PCIe, xGMI);
    for a CPU, an Apple chip, a TPU or Gaudi the link between machines, `network`; a
    profile file the link it measured (a cluster profile on gloo: `loopback`), else
    `NVLink`."""
    from ..hardware.resolve import load_roof, looks_like_file
    from ..model.comm_link import LINK_LEVELS

    if looks_like_file(on):
        roof = load_roof(on)
        return next((lv for lv in LINK_LEVELS if roof.find_memory(lv) is not None), "NVLink")
    from ..hardware.catalog import lookup

    dev = lookup(on)
    text = dev.interconnect.lower()
    if dev.kind == "gpu" and "nvlink" in text:
        return "NVLink"
    if dev.kind == "gpu" and "pcie" in text:
        return "PCIe"
    if dev.kind == "gpu" and "infinity fabric" in text:
        return "xGMI"      # an AMD GPU's own link (review s28 R4 F15: it read "network")
    return "network"
