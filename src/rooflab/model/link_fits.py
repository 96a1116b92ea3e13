"""Links from a cluster profile (`rooflab probe --comm`): its all-reduce and send/recv
alpha/beta fits as ring links, which host they hold inside and between, and the notes that
say where a what-if carries them past what was measured. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..units import fmt_fraction, si
from .comm_link import Link, link_from_fit


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


# A fit that misses one of its own samples by more than this is flagged (`!`) where it is
# shown and where a what-if uses it: Hockney fits are judged by their residual (review r3 F1).
RESIDUAL_WARN = 0.25
# Two readings of one hop that differ by more than this are flagged (review r3 F7).
HOP_RATIO_WARN = 1.5


def fit_doubt(fit: Mapping[str, Any]) -> str:
    """'' for a fit within RESIDUAL_WARN of all its samples, else words that say how far it
    misses them, for the link line of every verb that uses it."""
    worst = fit.get("max_rel_residual")
    if worst is None or worst <= RESIDUAL_WARN:
        return ""
    return (f"; ! the fit misses its own samples by up to {fmt_fraction(worst)} (over "
            f"{fmt_fraction(RESIDUAL_WARN)}): the times built on it are rough, rerun the probe on "
            f"a quiet host or in --full mode")


def hop_readings(comm: Mapping[str, Any], ar_hop_s: float, across_hosts: bool = False
                 ) -> str:
    """Both measured readings of one ring hop when the profile has a send/recv fit: the
    all-reduce alpha / 2(n0-1) (what --tp uses: it is what a measured all-reduce paid,
    software cost per call included) and the send/recv alpha (one send); `!` past
    HOP_RATIO_WARN apart. `across_hosts`: the all-reduce spanned hosts, so it is used for
    the rings across nodes and the intra-node send/recv inside one (measured_links), and
    the words say which is used where (review r7 F1: they said the all-reduce's was used
    while the intra-node rows paid the send's)."""
    c = next((x for x in comm.get("collectives", []) if x.get("collective") == "send_recv"
              and x.get("fit")), None)
    if c is None:
        return ""
    p2p = max(0.0, c["fit"]["alpha_s"])
    if across_hosts:
        text = (f"; per hop {ar_hop_s * 1e6:.3g} us from the all-reduce (used across nodes: "
                f"what the measured all-reduce paid), {p2p * 1e6:.3g} us from send/recv "
                f"(used inside a node)")
    else:
        text = (f"; per hop {ar_hop_s * 1e6:.3g} us from the all-reduce (used: what a "
                f"measured all-reduce paid), {p2p * 1e6:.3g} us from send/recv")
    lo, hi = sorted((ar_hop_s, p2p))
    if lo <= 0 or hi / lo > HOP_RATIO_WARN:
        text += (f" ! they differ by more than {HOP_RATIO_WARN:g}x, so the latency past the "
                 f"measured ranks is uncertain by that much")
    return text


_NO_FIT = {True: "not measured",
           False: "fewer than two message sizes, or times that do not grow with size"}


def _comm_of(extras: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """A cluster profile's comm block, or InputError where `extras` has none."""
    comm = extras.get("comm") or {}
    if not comm.get("collectives"):
        raise InputError(f"{where}: not a cluster profile from `rooflab probe --comm` (it "
                         f"has no extras.comm: a compute profile from `rooflab probe`, or a "
                         f"roof?); measure the links with `rooflab probe --comm --nproc 2 -o "
                         f"comm.json`, or give the link bandwidth (--link-bw)")
    return comm


def link_from_profile(extras: Mapping[str, Any], collective: str = "all_reduce",
                      where: str = "the profile", across_hosts: bool = False) -> Link:
    """The measured all-reduce alpha/beta of a cluster profile (`profile.extras`).

    `where` names the file in errors. A compute profile (no comm block) and a cluster
    profile whose collective has no fit are told apart: the fixes differ. `across_hosts`:
    the all-reduce spanned hosts, so the link is a whole ring across nodes (whole_ring)."""
    comm = _comm_of(extras, where)
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
    link = link_from_fit(level, fit["alpha_s"], fit["beta_bytes_per_s"], c["ranks"])
    hops = (hop_readings(comm, link.hop_latency_s, across_hosts)
            if collective == "all_reduce" else "")
    return replace(link, whole_ring=across_hosts,
                   source=f"measured {collective.replace('_', '-')} fit over "
                   f"{c['ranks']} ranks: alpha {fit['alpha_s'] * 1e6:.3g} us, beta "
                   f"{si(fit['beta_bytes_per_s'], 'B/s')}{origin}{fit_doubt(fit)}{hops}")


def link_from_p2p(c: Mapping[str, Any], level: str) -> Link | None:
    """A ring link from a measured send/recv fit: in a ring all-reduce every step is one
    send to the next rank, so its bus bandwidth is the one-way bandwidth (bus factor 1)
    and its hop latency the send's alpha."""
    fit = c.get("fit")
    if not fit:
        return None
    pair = "->".join(str(r) for r in c.get("pair") or ())
    return Link(level, fit["beta_bytes_per_s"], max(0.0, fit["alpha_s"]),
                f"measured send/recv {pair} fit ({c.get('link', '')} link){fit_doubt(fit)}")


def p2p_link_from_profile(extras: Mapping[str, Any], link: str = "intra-node",
                          where: str = "the profile") -> Link:
    """The measured send/recv fit on `link` ("intra-node" or "inter-node") of a cluster
    profile: a pipeline stage's send takes alpha + bytes / beta."""
    comm = _comm_of(extras, where)
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
    comm = _comm_of(extras, where)
    hosts = len((host or {}).get("hosts") or {}) or (
        2 if (comm.get("levels") or {}).get("world") == "network" else 1)
    world = link_from_profile(extras, where=where, across_hosts=hosts > 1)
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


@dataclass(frozen=True)
class PastWords:
    """How a verb names what the link notes are about: what extrapolates a measurement
    ({ranks}: the ranks measured, {n}: the devices asked for), where its output shows the
    assumed network and how to give one, what a --hop-latency-us that reaches nothing
    changes, and the devices past a node ({per_node}). The defaults are `rooflab scale`'s,
    whose rows are device counts; `rooflab train --dp N` has one count and no --inter-bw
    (train_dp_words.TRAIN_WORDS)."""

    extrapolate: str = "the rows past {ranks} devices extrapolate"
    network: str = "the inter-node figure above"
    fix: str = "probe across hosts with torchrun --nnodes, or give --inter-bw"
    unchanged: str = "changes no row"
    across: str = "the rows past {per_node}"


# `rooflab scale`'s words
ROW_WORDS = PastWords()


def one_count_words(option: str, line: str) -> PastWords:
    """The words of a verb with one device count (`train --dp N`, `llm --tp N`) and no
    --inter-bw: `option` names the count, `line` the output line that names the network."""
    return PastWords(extrapolate=option + " {n} extrapolates",
                     network=f"the network the {line} line names",
                     fix="probe across hosts with torchrun --nnodes",
                     unchanged="changes nothing",
                     across="past {per_node} devices per node")


def extrapolation_note(links: MeasuredLinks, largest: int, per_node: int,
                       inter_given: bool, words: PastWords = ROW_WORDS) -> str | None:
    """Say which rows of a what-if rest on the measurement and which extrapolate it: the
    ring model carries a fit at n0 ranks to n ranks (latency x 2(n-1)/2(n0-1), bytes x
    (n-1)/n / ((n0-1)/n0)), which a measurement at n ranks might not confirm. `words`:
    the verb's (PastWords)."""
    if largest <= links.ranks:
        return None
    past = words.extrapolate.format(ranks=links.ranks, n=largest)
    text = (f"the links were measured over {links.scope}; {past} them with the ring model "
            f"(hop latency {links.intra.hop_latency_s * 1e6:.3g} us x 2(n-1), bus bandwidth "
            f"{si(links.intra.bus_bytes_per_s, 'B/s')} whatever n"
            + (f" inside a node; between nodes {links.inter.hop_latency_s * 1e6:.3g} us and "
               f"{si(links.inter.bus_bytes_per_s, 'B/s')}" if links.inter else "") + ")")
    if links.inter is None and largest > per_node and not inter_given:
        text += (f"; past {per_node} devices per node the ring crosses an inter-node link "
                 f"that was not measured but assumed ({words.network}; {words.fix})")
    return text


def cpu_link_note(links: MeasuredLinks, device: str) -> str | None:
    """A link measured with gloo runs between CPU processes (loopback or TCP), not over a
    GPU's NVLink or InfiniBand: applied to GPUs it is a what-if, and should say so."""
    if links.backend != "gloo":
        return None
    return (f"the link was measured with gloo between CPU processes "
            f"({links.intra.level}), not between {device} devices: NCCL over NVLink or "
            f"InfiniBand is far faster; probe on the GPUs (torchrun ... rooflab probe --comm)")
