"""`rooflab scale`'s output: the --json dict (scale_json), the table (scale_table) and the
lines under it (scale_lines), all from one ScaleRun that cli/scale.py assembles, and -o's
file (write_scale). Pure but for write_scale: the command prints them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.ceiling import Ceiling, Roof
from ..model.parallel import Link, ScalePoint
from ..model.schema import SCHEMA_VERSION
from ..units import si
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
    inter: Link | None          # None: no row crosses a node (a TPU pod slice)
    nics_per_node: int | None   # the assumed NICs per node; None for a given/measured link
    points: Sequence[ScalePoint]
    binds: int | None           # the device count where the link starts to bind
    held: Ceiling               # the compute ceiling the layers' math is held to
    notes: Sequence[str]
    memory: ReplicaMemory
    measured: bool = False      # the links come from a `probe --comm` profile
    intra_kind: str = "catalog"  # given, measured, catalog or roof (llm's link_provenance)
    inter_kind: str | None = "assumed"   # given, measured or assumed; None: no network
    pod: bool = False           # the device's link joins a whole pod slice (TPU ICI)
    grads: str = ""             # the gradients' all-reduce type, an assumption line
    sensitivity: Any = None     # scale_links.LatencySensitivity when no latency is known


def scale_json(run: ScaleRun) -> dict:
    """The --json document (docs/json.md: scale)."""
    from ..model.roof_schema import roof_to_dict

    mem = run.memory
    # "roof" is a roof object, as in every verb's JSON; "device" names it.
    return {"schema_version": SCHEMA_VERSION, "device": run.roof.name,
            "roof": roof_to_dict(run.roof),
            "overlap": run.overlap, "model": model_dict(run),
            "notes": list(run.notes),
            "links": {"intra": link_dict(run.intra, run.intra_kind),
                      "inter": link_dict(run.inter, run.inter_kind),
                      "nics_per_node": run.nics_per_node,
                      **({"pair": link_dict(run.pair, "catalog")}
                         if run.pair is not None else {})},
            "comm_binds_at": run.binds, "assumptions": _assumptions(run),
            "memory": {"params": mem.params,
                       "weights_grads_bytes": mem.weights_grads_bytes,
                       "adam_bytes": mem.adam_bytes,
                       "device_bytes": mem.device_bytes,
                       "fits": (None if not mem.device_bytes else
                                mem.weights_grads_bytes <= mem.device_bytes),
                       "fits_with_adam": (None if not mem.device_bytes else
                                          mem.adam_bytes <= mem.device_bytes)},
            "points": [_point_dict(p) for p in run.points]}


def model_dict(run: ScaleRun) -> dict:
    """The model the step is of: --hidden, --blocks, --tokens (per device), --dtype and the
    gradients' type (--grad-dtype, else --dtype's), as canonical names."""
    from ..units import canonical_dtype

    dtype = canonical_dtype(run.dtype)
    return {"hidden": run.hidden, "blocks": run.blocks, "tokens": run.tokens,
            "dtype": dtype, "grad_dtype": run.memory.grad_dtype or dtype}


# -o FILE.csv: one row per device count, the --json document's points with the device, the
# overlap setting and the model they ran under (what a spreadsheet of several runs needs per
# row: without the model, two models' runs on one device were the same rows; review s20 x2
# F13)
CSV_COLUMNS = ("device", "overlap", "hidden", "blocks", "tokens", "dtype", "grad_dtype",
               "gpus", "step_s", "compute_s", "comm_s", "exposed_comm_s", "efficiency",
               "binding", "link", "link_bytes_per_s", "hop_latency_s", "link_ai")
SUFFIXES = (".json", ".csv")


def write_scale(path: str, doc: dict) -> None:
    """-o FILE by suffix: .json as --json prints it, .csv one row per device count; written
    whole or not at all (files.write_atomic), after cli/scale.py checked the path."""
    from ..files import csv_text, write_atomic, write_json

    if Path(path).suffix.lower() == ".json":
        write_json(path, doc)
        return
    rows = [{"device": doc["device"], "overlap": doc["overlap"], **doc["model"], **p}
            for p in doc["points"]]
    write_atomic(path, csv_text(rows, CSV_COLUMNS))


def link_dict(link: Link | None, kind: str | None) -> dict | None:
    """A link for the JSON, with its provenance kind (given, measured, catalog, assumed,
    roof: the words of `rooflab llm --json`'s link_provenance.kind; review r7 F7)."""
    if link is None:
        return None
    return {"level": link.level, "bus_bytes_per_s": link.bus_bytes_per_s,
            "hop_latency_s": link.hop_latency_s, "source": link.source, "kind": kind}


def _assumptions(run: ScaleRun) -> list[str]:
    """The step's assumptions, the gradients' all-reduce type, then the model."""
    return (list(run.points[-1].step.assumptions) + ([run.grads] if run.grads else [])
            + [model_words(run)])


def model_words(run: ScaleRun) -> str:
    """What scale's model is and leaves out, said with its counts: `rooflab train gpt2`
    counts 124 M parameters and 876 GFLOP a 1024-token step where h=768 x 12 blocks here are
    84.9 M and 522 GFLOP (no embeddings, LM head or attention scores; review s34 C)."""
    block = 12 * run.hidden ** 2
    flop = 6 * run.memory.params * run.tokens
    return (f"model: {run.blocks} blocks of 12 h^2 = {si(block)} parameters (QKV h x 3h, "
            f"output h x h, MLP h x 4h and 4h x h: 4 linear layers, each all-reduced on "
            f"its own), {si(run.memory.params)} in all; "
            f"6 FLOP per parameter per token, {si(flop, 'FLOP')} a step per device; no "
            f"embeddings, LM head, attention scores, norms or optimizer step, no GQA or "
            f"SwiGLU: a real model's step from its config is `rooflab train CONFIG --on "
            f"DEVICE --dp N`")


def _point_dict(p: ScalePoint) -> dict:
    s = p.step
    return {"gpus": p.n, "step_s": s.step_s, "compute_s": s.compute_s, "comm_s": s.comm_s,
            "exposed_comm_s": s.exposed_comm_s, "efficiency": p.efficiency,
            "binding": s.binding, "link": s.link.level if s.link else None,
            "link_bytes_per_s": s.link.bus_bytes_per_s if s.link else None,
            # the hop latency the row paid: after ring_link it can be neither link's
            "hop_latency_s": s.link.hop_latency_s if s.link else None,
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

    from ..sides import share_text
    from ..units import fmt_seconds

    t = Table(title=title, box=None, pad_edge=False, header_style="bold")
    for h in (f"{device}s", "link", "step", "compute", "comm", "exposed", "eff.", "speedup",
              "binds"):
        # fold, never "…": a narrow terminal keeps every digit (s22 r3 F6)
        t.add_column(h, justify="left" if h in ("link", "binds") else "right", overflow="fold")
    for p in points:
        s = p.step
        t.add_row(str(p.n), s.link.level if s.link else "-", fmt_seconds(s.step_s),
                  fmt_seconds(s.compute_s), fmt_seconds(s.comm_s),
                  # 0.011 % and 0.0017 on a slow network, not '0.0%' and '0.0' (s28 R2 F8)
                  fmt_seconds(s.exposed_comm_s), share_text(100 * p.efficiency),
                  _speedup(p.speedup),
                  s.binding)
    return t


def _speedup(x: float) -> str:
    """The speed-up column: one decimal from 1 up (1020.8 of 1024 devices), two significant
    figures under it: 16 GPUs on 1 GbE run at 0.0017 of one GPU's pace, not '0.0'."""
    return f"{x:.1f}" if x >= 1 else f"{x:.2g}"


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
        # a pair on a mesh's one link (xGMI, a Gaudi's RoCE ports: comm_link's "a full
        # mesh" source) is no bridge (a Gaudi 2-chip row said "a bridge joins 2 cards")
        mesh = (pair.level == "xGMI" or "a full mesh" in pair.source
                or "bridge joins up to" in pair.source)    # an H200 NVL's 4-way bridge
        upto = re.search(r"bridge joins up to (\d+)", pair.source)   # 2-4 devices
        lines.append(f"2{'-' + upto[1] if upto else ''} devices: {pair.level} "
                     f"{si(pair.bus_bytes_per_s, 'B/s')} "
                     f"({pair.source}{')' if mesh else '; a bridge joins 2 cards)'}")
    lines.append(f"intra-node link: {intra.level} {si(intra.bus_bytes_per_s, 'B/s')} "
                 f"({intra.source}); inter-node: " + _inter_words(run))
    latency = (latency_line(intra, inter, run.per_node, last.n, run.layer_count, dev)
               or no_latency_line(run, dev))
    if latency:
        lines.append(latency)
    lines.append(f"the link binds from {run.binds} {dev}s on" if run.binds else
                 f"the link never binds up to {last.n} {dev}s")
    lines.append(memory_line(run.memory, run.dtype))
    lines += [f"assumption: {a}" for a in _assumptions(run)]
    lines += [f"note: {n}" for n in run.notes]
    return lines


def _inter_words(run: ScaleRun) -> str:
    """The inter-node link as the rows use it. A TPU pod slice has none (its ICI joins
    every chip; an InfiniBand NIC per chip would be a false assumption). Whenever a row
    crosses a node the figure is named with its source, and when the intra-node hops are
    the slower, with why it changes no row: an assumed network is what keeps those rows
    on the intra-node link (review r7 F5: "not used" hid an H100-era 400 GB/s fabric
    assumed for an A100; review r3 F6 for a given one)."""
    from ..model.comm_link import network_binds

    intra, inter, last = run.intra, run.inter, run.points[-1]
    if inter is None or last.n <= run.per_node:
        why = (f": {intra.level} joins a whole pod slice, no node boundary (--per-node N "
               f"puts one)" if run.pod else "")
        return f"not used (every row up to {last.n} stays on {intra.level}){why}"
    figure = f"{si(inter.bus_bytes_per_s, 'B/s')} ({inter.source})"
    if network_binds(intra, inter):
        return figure
    return (f"{figure}, faster than the {intra.level} hops, so every row up to "
            f"{last.n} runs at {intra.level}'s pace"
            + (" (a slower network would bind: --inter-bw)"
               if run.inter_kind == "assumed" else ""))


def latency_line(intra: Link, inter: Link | None, per_node: int, largest: int,
                 per_step: int | None = None, dev: str = "GPU") -> str | None:
    """Both readings of the links' latency (None when it is 0): what one all-reduce pays
    in a node and across the largest ring, the hops x hop latency behind it, and (given
    `per_step`, one all-reduce per layer) what a step pays in all. `dev`: what a device
    is called (a TPU chip, a CPU: "device")."""
    from ..model.parallel import allreduce_latency_words, ring_link

    if not (intra.hop_latency_s or (inter is not None and inter.hop_latency_s)):
        return None
    inside = min(per_node, largest)
    text = (f"link latency per hop: at {inside} {dev}s "
            f"{allreduce_latency_words(intra, inside, per_step)}")
    if largest > per_node and inter is not None:
        text += (f"; at {largest} {dev}s "
                 f"{allreduce_latency_words(ring_link(intra, inter), largest, per_step)}")
    return text


def no_latency_line(run: ScaleRun, dev: str) -> str | None:
    """When no link has a hop latency: the verdict is bandwidth only, 0 per hop assumed,
    in `rooflab llm`'s words (comm_link.no_latency_words), and what 1 us per hop would
    make of it (review r7 F4)."""
    from ..model.comm_link import no_latency_words
    from ..sides import share_text
    from ..units import fmt_seconds

    sens = run.sensitivity
    if sens is None:
        return None
    big = sens.largest
    binds = (f"the link binds from {sens.binds} {dev}s on" if sens.binds else
             f"the link still never binds up to {big.n} {dev}s")
    return ("link latency: 0 us per hop assumed (none given or measured): "
            + no_latency_words(run.layer_count, "--hop-latency-us US per ring hop",
                               "at many devices (2(n-1) hops each)")
            + f"; at {sens.hop_s * 1e6:g} us per hop {binds}, {big.n} {dev}s "
              f"{fmt_seconds(big.step.step_s)} a step, {share_text(100 * big.efficiency)}")
