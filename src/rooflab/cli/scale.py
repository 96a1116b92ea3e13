"""rooflab scale — data-parallel training from 1 to 1024 GPUs: step time, efficiency, and
the device count where the gradient all-reduce starts to bind."""

from __future__ import annotations

import typer

from ..errors import InputError

HELP = """Predict a data-parallel training step on 1 to 1024 devices: per-device
compute and memory floors from the roof, the gradient all-reduce on the link (ring model,
nccl-tests bus bandwidth), with or without overlap; shows where the link starts to bind.

The model is a stack of transformer blocks, each four linear layers (QKV h x 3h, output
h x h, MLP h x 4h and 4h x h: 12 h^2 parameters), trained on --tokens tokens per device.

  rooflab scale --on "H100 SXM" --hidden 4096 --blocks 32 --tokens 4096
  rooflab scale --on h100.json --link-from cluster.json --inter-bw 25GB/s
  rooflab scale --on "A100 SXM 80GB" --hidden 1024 --blocks 24 --tokens 512 --no-overlap

Links: --link-bw (bus bandwidth within a node), else the all-reduce alpha/beta measured by
`rooflab probe --comm` (--link-from), else the catalog interconnect of --on (half the
quoted both-directions figure), else the roof's link ceiling. Beyond --per-node devices
the ring crosses --inter-bw (default 50 GB/s: one 400 Gb/s NDR InfiniBand NIC per GPU)."""

NDR_BUS = 50e9
NDR_SOURCE = ("assumed: one 400 Gb/s NDR InfiniBand NIC per GPU = 50 GB/s per direction "
              "(NVIDIA ConnectX-7, nvidia.com/en-us/networking/infiniband-adapters)")


def _rate(text: str, what: str) -> float:
    from ..units import parse_rate

    return parse_rate(text, what)     # 450GB/s, or bits: 400Gb/s (a NIC's rating) = 50 GB/s


def intra_link(on: str, link_bw: str | None, link_from: str | None, latency_s: float):
    return intra_links(on, link_bw, link_from, latency_s)[0]


def intra_links(on: str, link_bw: str | None, link_from: str | None, latency_s: float):
    """(the ring link inside a node, a link joining only pairs or None). A catalog card
    on an NVLink bridge (A100 PCIe, H100 NVL) has NVLink for 2 and PCIe beyond."""
    from ..hardware.resolve import load_roof, looks_like_file
    from ..model.parallel import (
        Link,
        bridged_pairs,
        host_link_of,
        link_from_device,
        link_from_profile,
        link_from_roof,
    )

    if link_bw:
        return (Link(_given_level(on), _rate(link_bw, "--link-bw"), latency_s,
                     "given (--link-bw)"), None)
    if link_from:
        from ..hardware.profile import load_profile

        return link_from_profile(load_profile(link_from).extras), None
    if not looks_like_file(on):
        from ..hardware.catalog import lookup

        dev = lookup(on)
        if dev.interconnect_bytes_per_s:
            link = link_from_device(dev, hop_latency_s=latency_s)
            pcie = host_link_of(dev, latency_s) if bridged_pairs(dev) else None
            return (pcie, link) if pcie is not None else (link, None)
    return link_from_roof(load_roof(on), hop_latency_s=latency_s), None


def _given_level(on: str) -> str:
    """What a --link-bw figure is called: a catalog GPU's own link kind (NVLink, PCIe);
    for a CPU, an Apple chip, a TPU or Gaudi the link between machines, `network`; a
    profile file keeps `NVLink`."""
    from ..hardware.resolve import looks_like_file

    if looks_like_file(on):
        return "NVLink"
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


def scale_table(points, title: str):
    from rich.table import Table

    from ..units import fmt_seconds

    t = Table(title=title, box=None, pad_edge=False, header_style="bold")
    for h in ("GPUs", "link", "step", "compute", "comm", "exposed", "eff.", "speedup",
              "binds"):
        t.add_column(h, justify="left" if h in ("link", "binds") else "right", no_wrap=True)
    for p in points:
        s = p.step
        t.add_row(str(p.n), s.link.level if s.link else "-", fmt_seconds(s.step_s),
                  fmt_seconds(s.compute_s), fmt_seconds(s.comm_s),
                  fmt_seconds(s.exposed_comm_s), f"{p.efficiency:.1%}", f"{p.speedup:.1f}",
                  s.binding)
    return t


def register(app) -> None:
    @app.command("scale", help=HELP)
    def scale(
        on: str = typer.Option(..., "--on", help="Device name or profile file (.json)."),
        hidden: int = typer.Option(4096, "--hidden", min=1, help="Model width h."),
        blocks: int = typer.Option(32, "--blocks", min=1, help="Transformer blocks."),
        tokens: int = typer.Option(4096, "--tokens", min=1, help="Tokens per device per step."),
        dtype: str = typer.Option("bf16", "--dtype", help="Weights/activations/gradients."),
        link_bw: str = typer.Option(None, "--link-bw", help="Intra-node bus bandwidth, "
                                    "e.g. 450GB/s."),
        link_from: str = typer.Option(None, "--link-from", help="Cluster profile from "
                                      "`rooflab probe --comm` (measured alpha/beta)."),
        inter_bw: str = typer.Option(None, "--inter-bw", help="Inter-node bus bandwidth per "
                                     "GPU (default 50GB/s)."),
        latency_us: float = typer.Option(0.0, "--latency-us", min=0.0, help="Per ring-step "
                                         "latency for given/catalog links, microseconds."),
        per_node: int = typer.Option(8, "--per-node", min=1, help="GPUs per node."),
        overlap: bool = typer.Option(True, "--overlap/--no-overlap", help="Overlap the "
                                     "all-reduce with the backward pass."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
    ) -> None:
        from ..hardware.resolve import load_roof
        from ..model.parallel import Link, comm_binds_at, scale_dp
        from .common import console, emit_json

        if link_bw and link_from:
            raise InputError("give one of --link-bw and --link-from")
        roof = load_roof(on)
        intra, pair = intra_links(on, link_bw, link_from, latency_us * 1e-6)
        inter = Link("network", _rate(inter_bw, "--inter-bw") if inter_bw else NDR_BUS,
                     latency_us * 1e-6, "given (--inter-bw)" if inter_bw else NDR_SOURCE)
        points = scale_dp(layers_for(hidden, blocks, tokens, dtype), roof, intra, inter,
                          gpus_per_node=per_node, overlap=overlap, pair=pair)
        binds = comm_binds_at(points)
        # The layers' math is held to this ceiling; a roof without the dtype's (bf16 on a
        # T4) falls back to another, and the user should see which.
        _, note = roof.compute_for(points[-1].step.precision)
        notes = [note] if note else []
        if json_out:
            from ..model.schema import roof_to_dict

            # "roof" is a roof object, as in every verb's JSON; "device" names it.
            emit_json({"schema_version": 1, "device": roof.name, "roof": roof_to_dict(roof),
                       "overlap": overlap,
                       "notes": notes,
                       "links": {"intra": intra.__dict__, "inter": inter.__dict__,
                                 **({"pair": pair.__dict__} if pair is not None else {})},
                       "comm_binds_at": binds, "assumptions": list(points[-1].step.assumptions),
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
        out.print(scale_table(points, f"data-parallel step on {roof.name}: h={hidden}, "
                                      f"{blocks} blocks, {tokens} tokens/GPU, {dtype}"
                                      f"{on_unit}"))
        if pair is not None:
            out.print(f"2 devices: {pair.level} {pair.bus_bytes_per_s / 1e9:.3g} GB/s "
                      f"({pair.source}; a bridge joins 2 cards)")
        out.print(f"intra-node link: {intra.level} {intra.bus_bytes_per_s / 1e9:.3g} GB/s "
                  f"({intra.source}); inter-node: {inter.bus_bytes_per_s / 1e9:.3g} GB/s "
                  f"({inter.source})")
        out.print(f"the link binds from {binds} GPUs on" if binds else
                  "the link never binds up to 1024 GPUs")
        for a in points[-1].step.assumptions:
            out.print(f"assumption: {a}")
        for n in notes:
            out.print(f"note: {n}")
