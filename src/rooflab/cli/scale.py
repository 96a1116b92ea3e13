"""rooflab scale — data-parallel training from 1 to 1024 GPUs: step time, efficiency, and
the device count where the gradient all-reduce starts to bind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from ..errors import InputError, RooflabError
from ..model.parallel import NDR_SOURCE, Link, MeasuredLinks, assumed_nic
from .options import ON_ENV, on_option

# --on as every verb declares it: ROOFLAB_ON when not given (review 14d J), with the note
# that says so; required here once neither gives one (_require_on).
OnScale = Annotated[str | None, on_option("a cluster profile from `rooflab probe --comm` "
                                          "also gives the measured links")]

HELP = """Predict a data-parallel training step on 1 to 1024 devices: per-device compute
and memory floors from the roof, the gradient all-reduce on the link (ring
model, nccl-tests bus bandwidth), with or without overlap; shows where the
link starts to bind.

The model is a stack of transformer blocks, each four linear layers (QKV h x
3h, output h x h, MLP h x 4h and 4h x h: 12 h^2 parameters), trained on
--tokens tokens per device; every step all-reduces 12 h^2 x blocks gradients
of --dtype.

  rooflab scale --on "H100 SXM" --hidden 4096 --blocks 32 --tokens 4096
  rooflab scale --on comm.json --hidden 1024 --blocks 4 --tokens 512
  rooflab scale --on "H100 SXM" --link-from cluster.json --inter-bw 400Gb/s
  rooflab scale --on "A100 SXM 80GB" --blocks 24 --tokens 512 --no-overlap

The link inside a node, first found of: --link-bw; the all-reduce alpha/beta
that `rooflab probe --comm` measured, from --link-from or from --on when --on
is that cluster profile; the catalog interconnect of --on (half the quoted
both-directions figure; a PCIe card's, and beyond an NVLink bridge's pair, the
PCIe host link's derived rate: Gen4 x16 31.5 GB/s per direction); the roof's
link ceiling. Beyond --per-node devices
the ring crosses the inter-node link: --inter-bw, else the network a cluster
profile measured across hosts, else 50 GB/s (one 400 Gb/s NDR InfiniBand NIC
per GPU) times --nics-per-node (default: one NIC per GPU, as on HGX/DGX
nodes): NCCL runs one ring per NIC, so 8 NICs give 400 GB/s across nodes
(--inter-bw and a measured network are the ring's bus bandwidth as they are).
Rows past the ranks a profile measured are extrapolations, and a
note says so.

Link latency is per ring hop (one send to the next rank): --hop-latency-us
10 (or the older --latency-us 10) costs an all-reduce over 8 GPUs 2 x 7
hops x 10 us = 140 us; a measured link has its own (alpha / 2(n0-1) per
hop). `rooflab llm --hop-latency-us` means the same."""

def _rate(text: str, what: str) -> float:
    from ..units import parse_link_rate

    return parse_link_rate(text, what)   # a bare '--link-bw 900' (bytes/s) is refused


@dataclass(frozen=True)
class Links:
    """The links a what-if runs on: inside a node, one joining only pairs (an NVLink
    bridge) or None, and what a cluster profile measured (None for given/catalog ones)."""

    intra: Link
    pair: Link | None = None
    measured: MeasuredLinks | None = None


def cluster_links(path: str, flag: str) -> MeasuredLinks | None:
    """The measured links of a cluster profile file; None when `path` is another kind of
    profile or roof file (for --on: a compute profile is fine there)."""
    from ..hardware.profile import load_profile
    from ..model.parallel import measured_links

    try:
        prof = load_profile(path)
    except RooflabError:
        if flag == "--on":        # an analysis or bare roof file: load_roof reads its roof
            return None
        raise
    if flag == "--on" and not (prof.extras.get("comm") or {}).get("collectives"):
        return None
    return measured_links(prof.extras, prof.host, where=f"{flag} {path}")


def choose_links(on: str, link_bw: str | None, link_from: str | None,
                 hop_latency_s: float) -> Links:
    """The intra-node link (see HELP for the order), `hop_latency_s` per hop for a given or
    catalog one. A catalog card on an NVLink bridge (A100 PCIe, H100 NVL) has NVLink for
    2 and PCIe beyond."""
    from ..hardware.resolve import load_roof, looks_like_file
    from ..model.parallel import bridged_pairs, host_link_of, link_from_device, link_from_roof

    if link_bw:
        return Links(Link(_given_level(on), _rate(link_bw, "--link-bw"), hop_latency_s,
                          "given (--link-bw)"))
    if link_from:
        measured = cluster_links(link_from, "--link-from")
        return Links(measured.intra, None, measured)
    if looks_like_file(on):
        # A cluster profile as --on: its measured all-reduce, not the link ceiling (the
        # best bus bandwidth of any collective, and no latency).
        measured = cluster_links(on, "--on")
        if measured is not None:
            return Links(measured.intra, None, measured)
    else:
        from ..hardware.catalog import lookup

        dev = lookup(on)
        if dev.interconnect_bytes_per_s:
            link = link_from_device(dev, hop_latency_s=hop_latency_s)
            pcie = host_link_of(dev, hop_latency_s) if bridged_pairs(dev) else None
            return Links(pcie, link) if pcie is not None else Links(link)
    return Links(link_from_roof(load_roof(on), hop_latency_s=hop_latency_s))


def inter_link(inter_bw: str | None, measured: MeasuredLinks | None, hop_latency_s: float) -> Link:
    """Between nodes: --inter-bw, else the network a cluster profile measured across
    hosts, else one NDR InfiniBand NIC per GPU (assumed). `hop_latency_s` is per hop."""
    if inter_bw:
        return Link("network", _rate(inter_bw, "--inter-bw"), hop_latency_s, "given (--inter-bw)")
    if measured is not None and measured.inter is not None:
        return measured.inter
    return assumed_nic(hop_latency_s)


def latency_line(intra: Link, inter: Link, per_node: int, largest: int,
                 per_step: int | None = None) -> str | None:
    """Both readings of the links' latency (None when it is 0): what one all-reduce pays
    in a node and across the largest ring, the hops x hop latency behind it, and (given
    `per_step`, one all-reduce per layer) what a step pays in all."""
    from ..model.parallel import allreduce_latency_words, ring_link

    if not (intra.hop_latency_s or inter.hop_latency_s):
        return None
    inside = min(per_node, largest)
    text = (f"link latency per hop: at {inside} GPUs "
            f"{allreduce_latency_words(intra, inside, per_step)}")
    if largest > per_node:
        text += (f"; at {largest} GPUs "
                 f"{allreduce_latency_words(ring_link(intra, inter), largest, per_step)}")
    return text


def link_notes(chosen: Links, roof_name: str, on: str, largest: int, per_node: int,
               inter_given: bool) -> list[str]:
    """What a measured link does not cover: device counts past the measured ones, and
    GPUs judged on a link measured between CPU processes."""
    from ..hardware.resolve import looks_like_file
    from ..model.parallel import cpu_link_note, extrapolation_note

    m = chosen.measured
    if m is None:
        return []
    out = [extrapolation_note(m, largest, per_node, inter_given)]
    if not looks_like_file(on):
        from ..hardware.catalog import lookup

        if lookup(on).kind != "cpu":
            out.append(cpu_link_note(m, roof_name))
    return [n for n in out if n]


def _given_level(on: str) -> str:
    """What a --link-bw figure is called: a catalog GPU's own link kind (NVLink, PCIe);
    for a CPU, an Apple chip, a TPU or Gaudi the link between machines, `network`; a
    profile file the link it measured (a cluster profile on gloo: `loopback`), else
    `NVLink`."""
    from ..hardware.resolve import load_roof, looks_like_file
    from ..model.parallel import LINK_LEVELS

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
    return "network"


def layers_for(hidden: int, blocks: int, tokens: int, dtype: str):
    from ..model.parallel import linear_layer
    from ..units import dtype_bytes, flop_precision

    b, p = dtype_bytes(dtype), flop_precision(dtype)
    shapes = (("qkv", hidden, 3 * hidden), ("out", hidden, hidden),
              ("up", hidden, 4 * hidden), ("down", 4 * hidden, hidden))
    return [linear_layer(f"block{i}.{name}", tokens, k, n, b, precision=p)
            for i in range(blocks) for name, k, n in shapes]


def scale_table(points, title: str, device: str = "GPU"):
    from rich.table import Table

    from ..units import fmt_seconds

    t = Table(title=title, box=None, pad_edge=False, header_style="bold")
    for h in (f"{device}s", "link", "step", "compute", "comm", "exposed", "eff.", "speedup",
              "binds"):
        t.add_column(h, justify="left" if h in ("link", "binds") else "right", no_wrap=True)
    for p in points:
        s = p.step
        t.add_row(str(p.n), s.link.level if s.link else "-", fmt_seconds(s.step_s),
                  fmt_seconds(s.compute_s), fmt_seconds(s.comm_s),
                  fmt_seconds(s.exposed_comm_s), f"{p.efficiency:.1%}", f"{p.speedup:.1f}",
                  s.binding)
    return t


def _hop_latency_s(hop_us: float | None, old_us: float | None) -> float:
    """--hop-latency-us, or --latency-us (its older spelling, also per hop), in seconds."""
    if hop_us is not None and old_us is not None:
        raise InputError("give one of --hop-latency-us and --latency-us (the same: the "
                         "latency per ring hop, --latency-us is the older spelling)")
    us = hop_us if hop_us is not None else old_us
    return (us or 0.0) * 1e-6


# The element types a data-parallel training step is modelled in (--dtype's help):
# weights, activations and gradients alike; an integer type trains nothing (review 12c #6).
TRAIN_DTYPES = ("bf16", "fp16", "fp32")


def _check_dtype(dtype: str) -> None:
    from ..units import canonical_dtype

    if canonical_dtype(dtype) not in TRAIN_DTYPES:   # an unknown name: its own error
        raise InputError(f"--dtype {dtype}: a training step's weights, activations and "
                         f"gradients are one of {', '.join(TRAIN_DTYPES)}; int and fp8 "
                         f"types are for inference (`rooflab llm --weights`)")


# The most --blocks taken: the step is counted layer by layer (4 per block, 11 device
# counts), so a million blocks ran for minutes with no word (review r3 F7); the deepest
# released LLMs have a few hundred (Llama-3.1-405B: 126).
MAX_BLOCKS = 2000


def _check_blocks(blocks: int) -> None:
    if blocks > MAX_BLOCKS:
        raise InputError(f"--blocks {blocks}: at most {MAX_BLOCKS} (the deepest released "
                         f"LLMs have a few hundred blocks: Llama-3.1-405B 126); is the "
                         f"count right?")


def register(app) -> None:
    @app.command("scale", help=HELP)
    def scale(
        on: OnScale = None,
        hidden: int = typer.Option(4096, "--hidden", min=1, help="Model width h."),
        blocks: int = typer.Option(32, "--blocks", min=1, help="Transformer blocks."),
        tokens: int = typer.Option(4096, "--tokens", min=1, help="Tokens per device per step."),
        dtype: str = typer.Option("bf16", "--dtype", help="Element type of weights, "
                                  "activations and gradients (bf16, fp16, fp32)."),
        link_bw: str = typer.Option(None, "--link-bw", help="Intra-node bus bandwidth "
                                    "with its unit: 450GB/s, or bits as NICs are rated: "
                                    "400Gb/s (= 50 GB/s)."),
        link_from: str = typer.Option(None, "--link-from", help="Cluster profile from "
                                      "`rooflab probe --comm` (its measured all-reduce "
                                      "alpha/beta; across hosts also the network)."),
        inter_bw: str = typer.Option(None, "--inter-bw", help="Inter-node bus bandwidth of "
                                     "the ring, as nccl-tests' busbw across nodes gives it "
                                     "(default: measured across hosts, else --nics-per-node "
                                     "x 50GB/s)."),
        hop_latency_us: float = typer.Option(
            None, "--hop-latency-us", min=0.0, metavar="US",
            help="Link latency per ring hop (one send to the next rank, what nccl-tests and "
                 "a send/recv fit measure), microseconds, of given/catalog links: an "
                 "all-reduce over n devices pays 2(n-1) hops (8 GPUs, 10 us: 140 us). A "
                 "measured link has its own. --latency-us is the older spelling."),
        latency_us: float = typer.Option(None, "--latency-us", min=0.0, hidden=True,
                                         help="The older spelling of --hop-latency-us."),
        per_node: int = typer.Option(8, "--per-node", min=1, help="GPUs per node."),
        nics: int = typer.Option(None, "--nics-per-node", min=1, help="Network NICs per "
                                 "node; a ring across nodes runs one ring per NIC, so it "
                                 "gets their sum (default: one per GPU, as on HGX/DGX)."),
        overlap: bool = typer.Option(True, "--overlap/--no-overlap", help="Overlap the "
                                     "all-reduce with the backward pass."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
    ) -> None:
        from ..hardware.resolve import load_roof
        from ..model.parallel import comm_binds_at, node_network_link, scale_dp
        from .common import console, emit_json
        from .llm_words import device_word

        if on is None:
            raise InputError(f"--on is required: a catalog device (rooflab specs list) or a "
                             f"profile JSON (rooflab probe -o FILE.json), e.g. --on \"H100 "
                             f"SXM\"; or set {ON_ENV} once for every verb")
        if link_bw and link_from:
            raise InputError("give one of --link-bw and --link-from")
        hop_s = _hop_latency_s(hop_latency_us, latency_us)
        _check_dtype(dtype)
        _check_blocks(blocks)
        roof = load_roof(on)
        chosen = choose_links(on, link_bw, link_from, hop_s)
        intra, pair = chosen.intra, chosen.pair
        inter = inter_link(inter_bw, chosen.measured, hop_s)
        # the assumed NIC only: a measured or given busbw already is what the rings get
        assumed_nic = inter.source == NDR_SOURCE
        if assumed_nic:
            inter = node_network_link(inter, nics or per_node)
        points = scale_dp(layers_for(hidden, blocks, tokens, dtype), roof, intra, inter,
                          gpus_per_node=per_node, overlap=overlap, pair=pair)
        binds = comm_binds_at(points)
        # The layers' math is held to this ceiling; a roof without the dtype's (bf16 on a
        # T4) falls back to another, and the user should see which.
        _, note = roof.compute_for(points[-1].step.precision)
        notes = ([note] if note else []) + link_notes(
            chosen, roof.name, on, points[-1].n, per_node, bool(inter_bw))
        from .scale_memory import memory_line, memory_warning, replica_memory

        mem = replica_memory(hidden, blocks, dtype, on)
        unfit = memory_warning(mem)
        if unfit:   # review r3 F5: an 812 GB model was timed on one 80 GB H100, silent
            from .common import warn

            warn(unfit)
        if json_out:
            from ..model.schema import roof_to_dict

            # "roof" is a roof object, as in every verb's JSON; "device" names it.
            emit_json({"schema_version": 1, "device": roof.name, "roof": roof_to_dict(roof),
                       "overlap": overlap,
                       "notes": notes,
                       "links": {"intra": intra.__dict__, "inter": inter.__dict__,
                                 "nics_per_node": (nics or per_node) if assumed_nic else None,
                                 **({"pair": pair.__dict__} if pair is not None else {})},
                       "comm_binds_at": binds, "assumptions": list(points[-1].step.assumptions),
                       "memory": {"params": mem.params,
                                  "weights_grads_bytes": mem.weights_grads_bytes,
                                  "adam_bytes": mem.adam_bytes,
                                  "device_bytes": mem.device_bytes,
                                  "fits": (None if not mem.device_bytes else
                                           mem.weights_grads_bytes <= mem.device_bytes),
                                  "fits_with_adam": (None if not mem.device_bytes else
                                                     mem.adam_bytes <= mem.device_bytes)},
                       "points": [{"gpus": p.n, "step_s": p.step.step_s,
                                   "compute_s": p.step.compute_s, "comm_s": p.step.comm_s,
                                   "exposed_comm_s": p.step.exposed_comm_s,
                                   "efficiency": p.efficiency, "binding": p.step.binding,
                                   "link": p.step.link.level if p.step.link else None,
                                   "link_bytes_per_s": (p.step.link.bus_bytes_per_s
                                                        if p.step.link else None),
                                   "link_ai": p.step.link_ai} for p in points]})
            return
        out = console()
        held = roof.compute_for(points[-1].step.precision)[0]
        # Say the ceiling the math is held to when the roof lacks the dtype's (bf16 on a T4).
        on_unit = "" if held.precision == points[-1].step.precision else f" (on {held.label})"
        # a TPU or Gaudi chip, a CPU: not "GPUs" (as `llm --tp` words it)
        dev = device_word(roof)
        out.print(scale_table(points, f"data-parallel step on {roof.name}: h={hidden}, "
                                      f"{blocks} blocks, {tokens} tokens/{dev}, {dtype}"
                                      f"{on_unit}", dev))
        if pair is not None:
            out.print(f"2 devices: {pair.level} {pair.bus_bytes_per_s / 1e9:.3g} GB/s "
                      f"({pair.source}; a bridge joins 2 cards)")
        # the inter-node assumption only where a row crosses nodes: a TPU pod's rows all
        # stay on ICI, and an InfiniBand NIC per chip would be a false assumption there
        crosses = any(p.step.link == inter for p in points)
        out.print(f"intra-node link: {intra.level} {intra.bus_bytes_per_s / 1e9:.3g} GB/s "
                  f"({intra.source}); inter-node: "
                  + (f"{inter.bus_bytes_per_s / 1e9:.3g} GB/s ({inter.source})" if crosses
                     else f"not used (every row up to {points[-1].n} stays on "
                          f"{intra.level})"))
        line = latency_line(intra, inter, per_node, points[-1].n,
                            len(layers_for(hidden, blocks, tokens, dtype)))
        if line:
            out.print(line)
        out.print(f"the link binds from {binds} {dev}s on" if binds else
                  f"the link never binds up to {points[-1].n} {dev}s")
        out.print(memory_line(mem, dtype))
        for a in points[-1].step.assumptions:
            out.print(f"assumption: {a}")
        for n in notes:
            out.print(f"note: {n}")
