"""The data-parallel link options `rooflab scale` and `rooflab train --dp` share, declared
and parsed once: --link-from (a cluster profile's measured links), --hop-latency-us (a
given or catalog link's latency per ring hop) and --grad-dtype (the element type the
gradients are reduced in). Imports nothing of the model (cli/app.py builds every verb's
help without numpy)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import InputError

# The element types a data-parallel training step is modelled in (--dtype's help):
# weights, activations and gradients alike; an integer type trains nothing (review 12c #6).
TRAIN_DTYPES = ("bf16", "fp16", "fp32")

GradDtypeOpt = Annotated[str | None, typer.Option(
    "--grad-dtype", help="Element type the gradients are held (the memory) and "
    "all-reduced in (default: --dtype's; Megatron-LM's bf16 default and PyTorch AMP+DDP "
    "hold and reduce fp32: --grad-dtype fp32).")]
LinkFromOpt = Annotated[str | None, typer.Option(
    "--link-from", help="Cluster profile from `rooflab probe --comm` (its measured "
    "all-reduce alpha/beta; across hosts also the network).")]


def hop_latency_opt(also: str = ""):
    """--hop-latency-us, with `also` after its help (`rooflab scale`: its hidden older
    spelling, --latency-us, which its --help named before s31)."""
    return Annotated[float | None, typer.Option(
        "--hop-latency-us", min=0.0, metavar="US",
        help="Link latency per ring hop (one send to the next rank, what nccl-tests and a "
             "send/recv fit measure), microseconds, of given/catalog links: an all-reduce "
             "over n devices pays 2(n-1) hops (8 GPUs, 10 us: 140 us). A measured link has "
             "its own." + also)]


HopLatencyOpt = hop_latency_opt()


def link_latency_opt(also: str = ""):
    """--link-latency, the older per-operation spelling of --hop-latency-us for --tp's
    all-reduces (`rooflab llm`, `rooflab train`), with `also` after its help."""
    return Annotated[float | None, typer.Option(
        "--link-latency", metavar="US",
        help="the older spelling, per operation: the latency of one whole --tp all-reduce "
             "in microseconds (taken as --hop-latency-us US / 2(tp-1))" + also)]


def hop_latency_s(hop_us: float | None, old_us: float | None = None) -> float:
    """--hop-latency-us, or `scale`'s --latency-us (its older spelling, also per hop), in
    seconds (0 where neither is given: bandwidth only)."""
    if hop_us is not None and old_us is not None:
        raise InputError("give one of --hop-latency-us and --latency-us (the same: the "
                         "latency per ring hop, --latency-us is the older spelling)")
    us = hop_us if hop_us is not None else old_us
    check_hop_us(us, "--hop-latency-us" if hop_us is not None else "--latency-us")
    return (us or 0.0) * 1e-6


# the largest latency a ring hop takes, in microseconds: 1 s per hop is a typo (s36 N:
# --hop-latency-us 1e30 timed a step of 1e24 s), not a link (NVLink ~ 2-5 us, IB ~ 5-20 us)
MAX_HOP_US = 1e6


def check_hop_us(us: float | None, option: str, per: str = "per ring hop") -> None:
    """A hop latency in microseconds past MAX_HOP_US: an InputError naming `option`."""
    if us is not None and us > MAX_HOP_US:
        raise InputError(f"{option} {us:g} is past the range rooflab takes, 0 to "
                         f"{MAX_HOP_US:g} microseconds {per} (1 s; a link's is microseconds: "
                         f"NVLink ~ 2-5, InfiniBand ~ 5-20): give it in microseconds, e.g. "
                         f"{option} 10")


def grad_dtype(given: str | None, dtype: str) -> str:
    """--grad-dtype (the gradients' all-reduce type), else --dtype's: bf16/fp16/fp32."""
    from ..units import canonical_dtype

    if given is None:
        return canonical_dtype(dtype)
    try:
        known = canonical_dtype(given)
    except InputError as e:
        raise InputError(f"--grad-dtype: {e}") from None
    if known not in TRAIN_DTYPES:
        raise InputError(f"--grad-dtype {given}: gradients are all-reduced in one of "
                         f"{', '.join(TRAIN_DTYPES)} (Megatron-LM's bf16 default: fp32)")
    return known


def check_link_from(link_from: str | None, link_bw: str | None) -> None:
    """--link-from measures the link --link-bw would give: one of them."""
    if link_bw and link_from:
        raise InputError("give one of --link-bw and --link-from")
