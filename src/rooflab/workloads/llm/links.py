"""The links an LLM study's --tp all-reduces and --pp sends run on, chosen with where each
came from: given, measured by `rooflab probe --comm`, the catalog device's, past one node
the network its systems carry (assumed, model.scale_out, as `rooflab scale` takes it), or
the roof's link ceiling (study.run_study takes them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError, RooflabError
from ...model.comm_link import hop_latency_of_allreduce
from ...model.parallel import Link
from ...model.scale_out import assumed_network, devices_per_node, node_network, node_words
from ...units import si

POD_LINKS = ("ici",)  # TPU ICI joins a whole pod slice (256 v5e chips), not 8 per node


def _spans_nodes(dev, devices: int) -> bool:
    """Whether `devices` of `dev` leave one node, so that a ring crosses the network."""
    words = str(getattr(dev, "interconnect", "")).lower().split()
    # the node of the device's systems (scale_out: 8 on HGX/DGX, 4 MI300A or MI250X)
    return devices > devices_per_node(dev) and not any(w in words for w in POD_LINKS)


# --- where a link comes from ----------------------------------------------------------------
@dataclass(frozen=True)
class CommProfile:
    """A cluster profile from `rooflab probe --comm` that --tp/--pp take their links
    from: given with --link-from, or as --on itself."""

    option: str                        # "--link-from" or "--on"
    path: str
    extras: Mapping[str, Any]
    host: Mapping[str, Any]

    @property
    def where(self) -> str:
        return f"{self.option} {self.path}"


def comm_profile(on: str, link_from: str | None) -> CommProfile | None:
    """The cluster profile behind --link-from, else --on when it is one, else None. A
    --link-from that is not a cluster profile is refused later, by the measured-link
    readers (model.parallel), which say what it is instead; an --on that is not one (a
    compute profile, an analysis, a bare roof) just serves its roof, as in `rooflab scale`."""
    from ...hardware.profile import load_profile
    from ...hardware.resolve import looks_like_file
    from ...input_names import shown_path

    if link_from:
        prof = load_profile(link_from)
        return CommProfile("--link-from", shown_path(link_from), prof.extras, prof.host)
    if not looks_like_file(on):
        return None
    try:
        prof = load_profile(on)
    except RooflabError:
        return None
    if not (prof.extras.get("comm") or {}).get("collectives"):
        return None
    return CommProfile("--on", shown_path(on), prof.extras, prof.host)


@dataclass(frozen=True)
class GivenLatency:
    """A latency typed for the --link-* link (the --tp link; without --tp, the stage
    link), in seconds, and the option that gave it. --hop-latency-us is per ring hop,
    rooflab's one meaning (Link.hop_latency_s); the older --link-latency is kept: per
    all-reduce under --tp (2(tp-1) hops, as LLM-Viewer-style tools take it), per send
    (one hop) for the stage link."""

    seconds: float
    option: str                        # "--hop-latency-us" or "--link-latency"

    def hop_s(self, tp: int) -> float:
        """Per ring hop, for a link that `tp` ranks all-reduce over (1: a stage link)."""
        if self.option == "--link-latency":
            return hop_latency_of_allreduce(self.seconds, tp)
        return self.seconds


@dataclass(frozen=True)
class ChosenLink:
    """The link --tp's all-reduces or --pp's sends run on, and its provenance.

    Its latency is the link's hop latency (Link.hop_latency_s): a --tp all-reduce pays
    2(tp-1) hops of it, a --pp send one."""

    link: Link
    kind: str                          # given, measured, catalog, assumed or roof
    latency_from: str = "none"         # the option, "fit" or "none"
    option: str | None = None          # what gave the bandwidth (--link-bw, --on, ...)
    file: str | None = None
    fit: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()

    def provenance(self) -> dict[str, Any]:
        """For the JSON: what the text's source line says, as fields."""
        return {"kind": self.kind, "option": self.option, "file": self.file,
                "fit": dict(self.fit) if self.fit else None,
                "latency_from": self.latency_from}


def _fit_record(extras: Mapping[str, Any], collective: str, link: str | None = None
                ) -> dict[str, Any] | None:
    from ...model.link_fits import fit_entry

    c = fit_entry(extras, collective, link)
    if c is None:
        return None
    comm = extras.get("comm") or {}
    return {"collective": collective, "ranks": c.get("ranks"), "pair": c.get("pair"),
            "link": c.get("link") or None, "alpha_s": c["fit"]["alpha_s"],
            "beta_bytes_per_s": c["fit"]["beta_bytes_per_s"],
            "backend": comm.get("backend"), "mode": comm.get("mode")}


def _gpu_note(links, roof, dev) -> tuple[str, ...]:
    """A gloo link judged on a GPU roof is a what-if, and says so (as `rooflab scale`)."""
    from ...model.link_fits import cpu_link_note

    if dev is None or getattr(dev, "kind", "gpu") == "cpu":
        return ()
    note = cpu_link_note(links, roof.name)
    return (note,) if note else ()


# --- tensor parallel ------------------------------------------------------------------------
def _measured_tp_link(s, roof, dev, comm: CommProfile) -> ChosenLink:
    """--tp's all-reduces on the all-reduce a cluster profile measured (link_from_profile
    via measured_links: bus bandwidth beta x 2(n0-1)/n0, hop latency alpha / 2(n0-1), so
    2(tp-1) x alpha / 2(n0-1) per all-reduce); a ring past one node runs at its slowest
    hop (the measured network, else the device's assumed one), as `rooflab scale`."""
    from ...model.link_fits import extrapolation_note, measured_links, one_count_words
    from ...model.parallel import ring_link

    m = measured_links(comm.extras, comm.host, where=comm.where)
    lk = m.intra
    if _spans_nodes(dev, s.tp):
        # the network measured across hosts, else the device's assumed one (scale_out: a
        # Gaudi's own ports, an MI300X's 400G NIC, ...): one ring per NIC or chip
        inter = m.inter or node_network(dev)
        lk = ring_link(lk, inter)
    # the record is of the collective whose fit the ring runs on: the world all-reduce
    # where it is the whole ring (measured across hosts, review r7), else the send/recv
    collective = ("all_reduce" if m.inter is None or m.intra is m.inter or lk is m.inter
                  else "send_recv")
    # llm has one --tp count and no --inter-bw: scale's row words would misdirect
    words = one_count_words("--tp", "tensor-parallel")
    notes = ((extrapolation_note(m, s.tp, devices_per_node(dev), False, words),)
             + _gpu_note(m, roof, dev))
    return ChosenLink(lk, "measured", "fit", comm.option, comm.path,
                      _fit_record(comm.extras, collective,
                                  None if collective == "all_reduce" else "intra-node"),
                      tuple(n for n in notes if n))


def tp_link(s, roof, dev, comm: CommProfile | None, link_bw: float | None,
            latency: GivenLatency | None = None) -> ChosenLink:
    """--tp's link, first found of: --link-bw (bytes/s, parsed by the CLI); the all-reduce
    a cluster profile measured (--link-from, or --on when it is one); the catalog device's
    link (a ring past one node, scale_out.devices_per_node: its slowest hop, the network
    its systems carry, model.scale_out, as `rooflab scale`); the roof's link ceiling
    (NVLink, PCIe, network or a measured loopback). Hop latency: the given one (--hop-latency-us, or
    --link-latency / 2(tp-1)), else the measured fit's, else 0."""
    chosen = _tp_bandwidth(s, roof, dev, comm, link_bw)
    if latency is None:
        return chosen
    return replace(chosen, link=replace(chosen.link, hop_latency_s=latency.hop_s(s.tp)),
                   latency_from=latency.option)


def _tp_bandwidth(s, roof, dev, comm: CommProfile | None, link_bw: float | None
                  ) -> ChosenLink:
    from ...model.comm_link import device_ring_link, link_from_roof
    from ...model.parallel import ring_link

    if link_bw:
        return ChosenLink(Link(_level_of(dev, s.tp), link_bw, 0.0, "given (--link-bw)"),
                          "given", option="--link-bw")
    if comm is not None:
        return _measured_tp_link(s, roof, dev, comm)
    if dev is not None and dev.interconnect_bytes_per_s:
        # One convention with `rooflab scale`: vendors quote both directions, a ring
        # all-reduce's bus bandwidth is per direction.
        lk = device_ring_link(dev, s.tp)  # past the bridge's 2 (H200 NVL: 4) cards: PCIe
        kind = "catalog"
        if _spans_nodes(dev, s.tp):
            # NVLink joins the GPUs of one node only; a wider ring crosses the network,
            # the one `rooflab scale` assumes for the device (scale_out: a Gaudi leaves
            # by its own ports, not a NIC): one ring per NIC (or chip), their sum
            nic = node_network(dev, why=f"--tp {s.tp} spans more than one {node_words(dev)}")
            lk = ring_link(lk, nic)
            kind = "assumed" if lk is nic else kind
        return ChosenLink(lk, kind)
    return ChosenLink(link_from_roof(roof), "roof")


def _level_of(dev, devices: int) -> str:
    """What a given bandwidth is called (a label for the JSON, no more): the link it
    replaces."""
    from ...model.comm_link import LINK_WORDS

    words = str(getattr(dev, "interconnect", "")).lower()
    if _spans_nodes(dev, devices):
        return "network"
    return next((lv for key, lv in LINK_WORDS if key in words), "network")


@dataclass(frozen=True)
class StageGiven:
    """What the user gave for the stage link: --pp-link-*, else --link-* when there is no
    --tp for them to describe. None: not given."""

    bytes_per_s: float | None = None
    option: str | None = None          # the option that gave the bandwidth
    latency_s: float | None = None
    latency_option: str | None = None


def stage_link_given(s, link_bw: float | None, latency: GivenLatency | None,
                      pp_link_bw: float | None, pp_link_latency_s: float | None) -> StageGiven:
    """The rates as the CLI parsed them (bytes/s), the latencies in seconds per send."""
    alone = s.tp == 1
    lat, lat_opt = ((pp_link_latency_s, "--pp-link-latency") if pp_link_latency_s is not None
                    else (latency.hop_s(1), latency.option)
                    if alone and latency is not None else (None, None))
    if pp_link_bw:
        return StageGiven(pp_link_bw, "--pp-link-bw", lat, lat_opt)
    if link_bw and alone:
        return StageGiven(link_bw, "--link-bw", lat, lat_opt)
    return StageGiven(None, None, lat, lat_opt)


def _measured_stage_link(s, roof, dev, comm: CommProfile, given: StageGiven) -> ChosenLink:
    """The send/recv a cluster profile measured (p2p_link_from_profile: one send takes
    alpha + bytes / beta): inside a node, or between nodes once TP x PP GPUs leave one
    (the inter-node pair when measured, else the device's network, assumed);
    --pp-link-latency (or --hop-latency-us / --link-latency without --tp) replaces the
    measured alpha."""
    from ...model.link_fits import MeasuredLinks, fit_entry, p2p_link_from_profile

    comm_block = comm.extras.get("comm") or {}
    where = "inter-node" if _spans_nodes(dev, s.tp * s.pp) else "intra-node"
    if (where == "inter-node" and comm_block.get("collectives")
            and fit_entry(comm.extras, "send_recv", where) is None):
        # across nodes with no inter-node pair measured: as without a profile
        lat = given.latency_s or 0.0
        return ChosenLink(assumed_network(dev, lat, f"{s.tp} x {s.pp} GPUs span more than "
                                                    f"one {node_words(dev)}, and "
                                                    f"{comm.where} measured no inter-node "
                                                    f"send/recv"),
                          "assumed", given.latency_option or "none")
    lk = p2p_link_from_profile(comm.extras, where, where=comm.where)
    fit = _fit_record(comm.extras, "send_recv", where)
    lk = replace(lk, source=f"{lk.source}: alpha {fit['alpha_s'] * 1e6:.3g} us, beta "
                            f"{si(fit['beta_bytes_per_s'], 'B/s')}, {comm.where}")
    lat_from = "fit"
    if given.latency_s is not None:
        lk, lat_from = replace(lk, hop_latency_s=given.latency_s), given.latency_option
    ranks = int(comm_block.get("world_size") or 0) or 2
    # cpu_link_note reads the backend and the level: the send/recv as a one-host link
    notes = _gpu_note(MeasuredLinks(lk, None, ranks, 1, str(comm_block.get("backend", "?"))),
                      roof, dev)
    return ChosenLink(lk, "measured", lat_from, comm.option, comm.path, fit, notes)


def stage_link(s, roof, dev, given: StageGiven, comm: CommProfile | None = None
                ) -> ChosenLink:
    """The link between pipeline stages, first found of: given; the send/recv a cluster
    profile measured; the device's network (scale_out) once TP x PP GPUs leave an 8-GPU
    node; the catalog
    device's link (per direction); the roof's link ceiling."""
    from ...model.comm_link import device_ring_link, link_from_roof

    lat = given.latency_s or 0.0
    lat_from = given.latency_option or "none"
    if given.bytes_per_s:    # named after the link it replaces (a label for the JSON)
        return ChosenLink(Link(_level_of(dev, s.tp * s.pp), given.bytes_per_s, lat,
                               f"given ({given.option})"), "given", lat_from, given.option)
    if comm is not None:
        return _measured_stage_link(s, roof, dev, comm, given)
    if _spans_nodes(dev, s.tp * s.pp):
        return ChosenLink(assumed_network(dev, lat, f"{s.tp} x {s.pp} GPUs span more than "
                                                    f"one {node_words(dev)}"),
                          "assumed", lat_from)
    if dev is not None and dev.interconnect_bytes_per_s:   # a bridge: 2 cards (H200 NVL 4)
        # a stage sends to one GPU: GPUs joined link to link (xGMI) send over the one
        # link between the two, not the group's ring (comm_link.xgmi_ring_link)
        n = 2 if getattr(dev, "links", None) else s.tp * s.pp
        return ChosenLink(device_ring_link(dev, n, lat), "catalog", lat_from)
    try:
        return ChosenLink(link_from_roof(roof, hop_latency_s=lat), "roof", lat_from)
    except InputError:
        raise InputError(f"--pp {s.pp}: roof '{roof.name}' has no NVLink, PCIe or network "
                         f"ceiling for the stage link (nor a loopback one measured by "
                         f"`rooflab probe --comm`); give it with --pp-link-bw (e.g. 50GB/s "
                         f"for one 400 Gb/s InfiniBand NIC per direction) or measure it "
                         f"(--link-from comm.json)") from None


def latency_words(chosen: ChosenLink, tp: int) -> str:
    """Where --tp's latency per all-reduce came from, for the analysis's note."""
    if chosen.latency_from == "--hop-latency-us":
        from ...model.comm_link import ring_hops
        from ...units import fmt_seconds

        return (f"--hop-latency-us: {ring_hops(tp)} hops x "
                f"{fmt_seconds(chosen.link.hop_latency_s, 4)}")
    if chosen.latency_from != "fit":
        return chosen.latency_from
    fit = chosen.fit or {}
    which = "send/recv" if fit.get("collective") == "send_recv" else "all-reduce"
    return (f"the {which} alpha measured over {fit.get('ranks')} ranks, "
            f"{chosen.option} {chosen.file}; the ring model's 2(tp-1)/2(n0-1) x alpha")
