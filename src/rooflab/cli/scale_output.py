"""`rooflab scale`'s output: the --json dict (scale_json), the table (scale_table) and the
lines under it (scale_lines), all from one ScaleRun that cli/scale.py assembles. Pure: the
command prints them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..model.ceiling import Ceiling, Roof
from ..model.parallel import Link, ScalePoint
from .scale_memory import ReplicaMemory


@dataclass(frozen=True)
class ScaleRun:
    """One `rooflab scale` what-if: the options that shape the model, the roof and links it
    runs on, and what it found (one point per device count, 1 to 1024)."""

    roof: Roof
    hidden: int
    blocks: int
    tokens: int
    dtype: str
    layer_count: int            # linear layers in the step: one all-reduce each
    per_node: int
    overlap: bool
    intra: Link
    pair: Link | None           # a bridge joining only 2 cards (NVLink on A100 PCIe)
    inter: Link
    nics_per_node: int | None   # the assumed NICs per node; None for a given/measured link
    points: Sequence[ScalePoint]
    binds: int | None           # the device count where the link starts to bind
    held: Ceiling               # the compute ceiling the layers' math is held to
    notes: Sequence[str]
    memory: ReplicaMemory


def scale_json(run: ScaleRun) -> dict:
    """The --json document (docs/json.md: scale)."""
    from ..model.schema import roof_to_dict

    mem, last = run.memory, run.points[-1]
    # "roof" is a roof object, as in every verb's JSON; "device" names it.
    return {"schema_version": 1, "device": run.roof.name, "roof": roof_to_dict(run.roof),
            "overlap": run.overlap,
            "notes": list(run.notes),
            "links": {"intra": asdict(run.intra), "inter": asdict(run.inter),
                      "nics_per_node": run.nics_per_node,
                      **({"pair": asdict(run.pair)} if run.pair is not None else {})},
            "comm_binds_at": run.binds, "assumptions": list(last.step.assumptions),
            "memory": {"params": mem.params,
                       "weights_grads_bytes": mem.weights_grads_bytes,
                       "adam_bytes": mem.adam_bytes,
                       "device_bytes": mem.device_bytes,
                       "fits": (None if not mem.device_bytes else
                                mem.weights_grads_bytes <= mem.device_bytes),
                       "fits_with_adam": (None if not mem.device_bytes else
                                          mem.adam_bytes <= mem.device_bytes)},
            "points": [_point_dict(p) for p in run.points]}


def _point_dict(p: ScalePoint) -> dict:
    s = p.step
    return {"gpus": p.n, "step_s": s.step_s, "compute_s": s.compute_s, "comm_s": s.comm_s,
            "exposed_comm_s": s.exposed_comm_s, "efficiency": p.efficiency,
            "binding": s.binding, "link": s.link.level if s.link else None,
            "link_bytes_per_s": s.link.bus_bytes_per_s if s.link else None,
            "link_ai": s.link_ai}


def scale_title(run: ScaleRun) -> str:
    """The table's title: the roof, the model's shape, the dtype (and the ceiling the math
    is held to when the roof lacks the dtype's: bf16 on a T4)."""
    from .llm_words import device_word

    precision = run.points[-1].step.precision
    on_unit = "" if run.held.precision == precision else f" (on {run.held.label})"
    return (f"data-parallel step on {run.roof.name}: h={run.hidden}, {run.blocks} blocks, "
            f"{run.tokens} tokens/{device_word(run.roof)}, {run.dtype}{on_unit}")


def scale_table(points: Sequence[ScalePoint], title: str, device: str = "GPU"):
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


def scale_lines(run: ScaleRun) -> list[str]:
    """The lines under the table: the links, their latency, where the link binds, the
    memory per device, then the step's assumptions and the notes."""
    from .llm_words import device_word
    from .scale_memory import memory_line

    intra, inter, pair, last = run.intra, run.inter, run.pair, run.points[-1]
    # a TPU or Gaudi chip, a CPU: not "GPUs" (as `llm --tp` words it)
    dev = device_word(run.roof)
    lines = []
    if pair is not None:
        lines.append(f"2 devices: {pair.level} {pair.bus_bytes_per_s / 1e9:.3g} GB/s "
                     f"({pair.source}; a bridge joins 2 cards)")
    # the inter-node assumption only where a row crosses nodes: a TPU pod's rows all
    # stay on ICI, and an InfiniBand NIC per chip would be a false assumption there
    crosses = any(p.step.link == inter for p in run.points)
    lines.append(f"intra-node link: {intra.level} {intra.bus_bytes_per_s / 1e9:.3g} GB/s "
                 f"({intra.source}); inter-node: "
                 + (f"{inter.bus_bytes_per_s / 1e9:.3g} GB/s ({inter.source})" if crosses
                    else f"not used (every row up to {last.n} stays on {intra.level})"))
    latency = latency_line(intra, inter, run.per_node, last.n, run.layer_count)
    if latency:
        lines.append(latency)
    lines.append(f"the link binds from {run.binds} {dev}s on" if run.binds else
                 f"the link never binds up to {last.n} {dev}s")
    lines.append(memory_line(run.memory, run.dtype))
    lines += [f"assumption: {a}" for a in last.step.assumptions]
    lines += [f"note: {n}" for n in run.notes]
    return lines


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
