"""rooflab scale — data-parallel training from 1 to 1024 GPUs: step time, efficiency, and
the device count where the gradient all-reduce starts to bind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperCommand

from ..errors import InputError, RooflabError
from .comm_options import (
    TRAIN_DTYPES,
    GradDtypeOpt,
    LinkFromOpt,
    grad_dtype,
    hop_latency_opt,
    hop_latency_s,
)
from .options import ON_ENV, on_option

if TYPE_CHECKING:
    from collections.abc import Mapping

    # the model is imported where used: its numpy cost `scale --help` 0.25 s of CPU
    from ..model.link_fits import MeasuredLinks, PastWords
    from ..model.parallel import Link

# --on as every verb declares it: ROOFLAB_ON when not given (review 14d J), with the note
# that says so; required here once neither gives one (_require_on).
OnScale = Annotated[str | None, on_option("a cluster profile from `rooflab probe --comm` "
                                          "also gives the measured links")]
# --hop-latency-us as train's, naming the hidden older spelling scale still takes
HopLatencyScale = hop_latency_opt(" --latency-us is the older spelling.")

HELP = """Predict a data-parallel training step on 1 to 1024 devices: per-device compute
and memory floors from the roof, the gradient all-reduce on the link (ring
model, nccl-tests bus bandwidth), with or without overlap; shows where the
link starts to bind.

The model is a stack of transformer blocks, each four linear layers (QKV h x
3h, output h x h, MLP h x 4h and 4h x h: 12 h^2 parameters), trained on
--tokens tokens per device; every step all-reduces 12 h^2 x blocks gradients
of --dtype, or of --grad-dtype (Megatron-LM's bf16 default: fp32).

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
profile measured across hosts (its world all-reduce, a ring across nodes already,
as it is), else 50 GB/s (one 400 Gb/s NDR InfiniBand NIC
per GPU) times --nics-per-node (default: one NIC per GPU, as on HGX/DGX
nodes): NCCL runs one ring per NIC, so 8 NICs give 400 GB/s across nodes
(--inter-bw and a measured network are the ring's bus bandwidth as they are).
Other systems carry other networks, each named with its source: an MI300X-class
GPU one 400 Gb/s NIC (50 GB/s), an MI250X or MI300A one 200 Gb/s Slingshot NIC
(25 GB/s); a Gaudi leaves its node by its own 3 scale-out RoCE ports (75 GB/s a
Gaudi 3); a TPU's ICI joins a whole pod slice, so no row crosses a node unless
--per-node is given, and past it slices talk over the data-center network
(v5p: 50 Gb/s per chip); any other device (a CPU) one 400 Gb/s NIC of no brand.
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
    from ..model.link_fits import measured_links

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
                 hop_latency_s: float, per_node: int | None = None) -> Links:
    """The intra-node link (see HELP for the order), `hop_latency_s` per hop for a given or
    catalog one. A catalog card on an NVLink bridge (A100 PCIe, H100 NVL) has NVLink for
    2 and PCIe beyond. `per_node` (--per-node): the node whose rows a mesh's groups cover
    (MI210 hives past 4 join over PCIe; an MI300A's mesh ends at 4: refused past it)."""
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


# --hop-latency-us's and --grad-dtype's parsing and the training dtypes: one copy, which
# `rooflab train --dp` shares (cli/comm_options.py)
_hop_latency_s = hop_latency_s
_grad_dtype = grad_dtype


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


def _scale_inputs(on: str | None, dtype: str, blocks: int, link_bw: str | None,
                  link_from: str | None, inter_bw: str | None, hop_latency_us: float | None,
                  latency_us: float | None, per_node: int | None, nics: int | None):
    """The checks of the options, then the roof and the links: (roof, chosen intra-node
    links, ScaleNet: the inter-node link with its kind, NICs and the node size)."""
    from ..hardware.resolve import load_roof
    from .comm_options import check_link_from
    from .options import say_name_note_now
    from .scale_links import catalog_device, scale_network

    if on is None:
        raise InputError(f"--on is required: a catalog device (rooflab specs list) or a "
                         f"profile JSON (rooflab probe -o FILE.json), e.g. --on \"H100 "
                         f"SXM\"; or set {ON_ENV} once for every verb")
    check_link_from(link_bw=link_bw, link_from=link_from)
    hop_s = _hop_latency_s(hop_latency_us, latency_us)
    _check_dtype(dtype)
    _check_blocks(blocks)
    roof = load_roof(on)
    chosen = choose_links(on, link_bw, link_from, hop_s, per_node)
    dev = catalog_device(on)
    inter, kind = inter_link(inter_bw, chosen.measured, hop_s, dev)
    say_name_note_now(on)    # which device a family name chose, before the table
    return roof, chosen, scale_network(inter, kind, dev, per_node, nics)


def _scale_run(on: str | None, hidden: int, blocks: int, tokens: int, dtype: str,
               link_bw: str | None, link_from: str | None, inter_bw: str | None,
               hop_latency_us: float | None, latency_us: float | None, per_node: int | None,
               nics: int | None, overlap: bool, grad_dtype: str | None = None):
    """The what-if: the block's layers (built once) on every device count, and the memory
    a replica holds (its parameters from the same block shapes)."""
    from ..model.parallel import comm_binds_at, dp_block_layers, dp_block_params, scale_dp
    from .scale_links import catalog_device, grad_words, hop_note, latency_sensitivity, node_note
    from .scale_memory import replica_memory
    from .scale_output import ScaleRun

    roof, chosen, net = _scale_inputs(on, dtype or "bf16", blocks, link_bw, link_from,
                                      inter_bw, hop_latency_us, latency_us, per_node, nics)
    dtype, picked = _default_dtype(dtype, roof)
    grads = _grad_dtype(grad_dtype, dtype)
    # the gradients' type only when given: the --dtype's otherwise (the call as before)
    layers = dp_block_layers(hidden, blocks, tokens, dtype, *((grads,) if grad_dtype else ()))
    points = scale_dp(layers, roof, chosen.intra, net.link, gpus_per_node=net.per_node,
                      overlap=overlap, pair=chosen.pair, by_count=chosen.by_count)
    # The layers' math is held to this ceiling; a roof without the dtype's (bf16 on a
    # T4) falls back to another, and the user should see which.
    held, note = roof.compute_for(points[-1].step.precision)
    hop_s = _hop_latency_s(hop_latency_us, latency_us)
    notes = [*picked, *([note] if note else []), *package_words(roof),
             *node_note(catalog_device(on), per_node)] + link_notes(
        chosen, roof.name, on, points[-1].n, net.per_node, bool(inter_bw)) + hop_note(
        hop_s, chosen, net, points[-1].n)
    return ScaleRun(roof=roof, hidden=hidden, blocks=blocks, tokens=tokens, dtype=dtype,
                    layer_count=len(layers), per_node=net.per_node, overlap=overlap,
                    intra=chosen.intra, pair=chosen.pair, inter=net.link,
                    nics_per_node=net.nics, measured=chosen.measured is not None,
                    points=points,
                    binds=comm_binds_at(points), held=held, notes=notes,
                    memory=replica_memory(dp_block_params(hidden, blocks), dtype, on, grads),
                    intra_kind=chosen.kind, inter_kind=net.kind, pod=net.pod,
                    grads=grad_words(grads, dtype),
                    sensitivity=latency_sensitivity(layers, roof, chosen, net, overlap))


def package_words(roof) -> list[str]:
    """The note for a package of several dies (MI250X): every row's device is the package,
    as the catalog gives it, while PyTorch sees each die as a device (review s28 R4 F3)."""
    from ..model.dies import software_devices

    dies = software_devices(roof)
    if dies <= 1:
        return []
    return [f"{roof.name} is {dies} devices to software: each device in these rows is one "
            f"package, its {dies} dies' memory, bandwidth and compute together (the catalog's "
            f"figures), as `rooflab llm --on` takes it; PyTorch and torchrun see {dies} "
            f"devices per package (a node of 4 MI250X is 8), each with 1/{dies} of each"]


def _default_dtype(dtype: str | None, roof) -> tuple[str, list[str]]:
    """--dtype, else bf16, else fp16 where the roof has fp16 tensor math and no bf16 (a T4,
    a V100): mixed-precision training there runs fp16 with loss scaling, as torch.autocast
    does on those GPUs, not bf16 at the fp32 rate. (dtype, the note saying so)."""
    if dtype is not None:
        return dtype, []
    if roof.find_compute("bf16") is None and roof.find_compute("fp16", "tensor") is not None:
        return "fp16", [f"fp16 (the default is bf16): roof '{roof.name}' has no bf16 math, so "
                        f"mixed-precision training runs fp16 with loss scaling there; give "
                        f"--dtype bf16 to time bf16 at the rate it falls back to"]
    return "bf16", []


def model_given(model: str, on: str | None) -> str:
    """scale's model is --hidden/--blocks, no config: `rooflab scale llama-2-7b` got typer's
    bare "unexpected extra argument" (review s33 F5). Where a real model's step is."""
    hw = on if on and " " not in on else f"'{on}'" if on else "HW"
    return (f"scale takes no model ('{model}'): its model is --hidden H --blocks L, "
            f"transformer blocks of 12 h^2 parameters (no GQA, no SwiGLU; default --hidden "
            f"4096 --blocks 32); for a real model's data-parallel step: `rooflab train "
            f"{model} --on {hw} --dp N`")


class _UsageWithoutModel(TyperCommand):
    """scale's usage line without the hidden MODEL that only model_given reads."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [p for p in super().collect_usage_pieces(ctx) if p != "[MODEL]"]


def register(app) -> None:
    @app.command("scale", help=HELP, cls=_UsageWithoutModel)
    def scale(
        model: str = typer.Argument(None, hidden=True, show_default=False, metavar="MODEL"),
        on: OnScale = None,
        hidden: int = typer.Option(4096, "--hidden", min=1, help="Model width h."),
        blocks: int = typer.Option(32, "--blocks", min=1, help="Transformer blocks."),
        tokens: int = typer.Option(4096, "--tokens", min=1, help="Tokens per device per step."),
        dtype: str = typer.Option(None, "--dtype", help="Element type of weights, "
                                  "activations and gradients (bf16, fp16, fp32; default "
                                  "bf16, fp16 on a GPU without bf16 math such as a T4)."),
        grad_dtype: GradDtypeOpt = None,
        link_bw: str = typer.Option(None, "--link-bw", help="Intra-node bus bandwidth "
                                    "with its unit: 450GB/s, or bits as NICs are rated: "
                                    "400Gb/s (= 50 GB/s)."),
        link_from: LinkFromOpt = None,
        inter_bw: str = typer.Option(None, "--inter-bw", help="Inter-node bus bandwidth of "
                                     "the ring, as nccl-tests' busbw across nodes gives it "
                                     "(default: measured across hosts, else --nics-per-node "
                                     "x 50GB/s)."),
        hop_latency_us: HopLatencyScale = None,
        latency_us: float = typer.Option(None, "--latency-us", min=0.0, hidden=True,
                                         help="The older spelling of --hop-latency-us."),
        per_node: int = typer.Option(None, "--per-node", min=1, help="GPUs per node "
                                     "(default 8, as HGX/DGX; 4 on an MI300A or MI250X, as "
                                     "their HPE Cray EX nodes; a TPU's ICI joins a whole "
                                     "pod slice, so no row crosses a node unless given)."),
        nics: int = typer.Option(None, "--nics-per-node", min=1, help="Network NICs per "
                                 "node; a ring across nodes runs one ring per NIC, so it "
                                 "gets their sum (default: one per GPU, as on HGX/DGX)."),
        overlap: bool = typer.Option(True, "--overlap/--no-overlap", help="Overlap the "
                                     "all-reduce with the backward pass."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
        output: str = typer.Option(None, "--output", "-o", help="Write the result: .json "
                                   "(as --json) or .csv (one row per device count)."),
    ) -> None:
        from .common import check_output, console, emit_json, warn
        from .llm_words import device_word
        from .scale_memory import memory_warning
        from .scale_output import (
            SUFFIXES,
            scale_json,
            scale_lines,
            scale_table,
            scale_title,
            write_scale,
        )

        if model is not None:
            raise InputError(model_given(model, on))
        # before any work, as every verb's -o: a suffix scale cannot write, a path that
        # cannot be written, or an input file named as the output
        check_output(output, SUFFIXES, inputs=[on, link_from])
        run = _scale_run(on, hidden, blocks, tokens, dtype, link_bw, link_from, inter_bw,
                         hop_latency_us, latency_us, per_node, nics, overlap, grad_dtype)
        unfit = memory_warning(run.memory)
        if unfit:   # review r3 F5: an 812 GB model was timed on one 80 GB H100, silent
            warn(unfit)
        doc = scale_json(run) if json_out or output else None
        if output:
            write_scale(output, doc)
        if json_out:
            emit_json(doc)
        else:
            out = console()
            out.print(scale_table(run.points, scale_title(run), device_word(run.roof)))
            for line in scale_lines(run):
                out.print(line)
        if output:   # said last, as the other verbs do; on stderr (s22 r3 F7)
            from .common import wrote

            wrote(output)
