"""Algorithm and bus bandwidth by the nccl-tests convention (pure; FACTS.md "Communication").

nccl-tests (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md): a collective on a message
of S bytes that takes t seconds has algorithm bandwidth algbw = S / t. Bus bandwidth
rescales algbw by the share of the data every rank must put on its link under the best
algorithm, so that it can be compared with the link's own bandwidth whatever the rank
count: all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, all-to-all (n-1)/n,
broadcast and point-to-point 1.

S is nccl-tests' "size": the all-reduce/broadcast/send buffer, the all-gather *output*
(n pieces of S/n), the reduce-scatter *input* (n pieces of S/n), the all-to-all buffer
each rank sends (n pieces of S/n).
"""

from __future__ import annotations

from ...errors import InputError

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
               "send_recv")

LABELS = {"all_reduce": "all-reduce", "all_gather": "all-gather",
          "reduce_scatter": "reduce-scatter", "all_to_all": "all-to-all",
          "broadcast": "broadcast", "send_recv": "send/recv"}


def check_collective(name: str) -> str:
    key = name.strip().lower().replace("-", "_").replace("/", "_")
    if key in ("sendrecv", "p2p", "send_recv"):
        key = "send_recv"
    if key not in COLLECTIVES:
        raise InputError(f"unknown collective '{name}'; use one of: {', '.join(COLLECTIVES)}")
    return key


def bus_factor(collective: str, n: int) -> float:
    """busbw / algbw for `collective` over `n` ranks (nccl-tests doc/PERFORMANCE.md)."""
    if n < 1:
        raise InputError(f"rank count must be >= 1; got {n}")
    key = check_collective(collective)
    if key == "all_reduce":
        return 2.0 * (n - 1) / n
    if key in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0          # broadcast, send/recv: every byte crosses one link once


def algbw(nbytes: float, seconds: float) -> float:
    """Algorithm bandwidth, B/s: message size over time."""
    if not seconds > 0:
        raise InputError(f"time must be > 0 s; got {seconds!r}")
    return nbytes / seconds


def busbw(collective: str, nbytes: float, seconds: float, n: int) -> float:
    """Bus bandwidth, B/s: algbw x bus_factor(collective, n)."""
    return algbw(nbytes, seconds) * bus_factor(collective, n)


def link_bytes(collective: str, nbytes: float, n: int) -> float:
    """Bytes each rank sends over its link for one collective of size S (bus model):
    S x bus_factor. Ring all-reduce of S bytes: 2(n-1)/n x S per rank."""
    return nbytes * bus_factor(collective, n)
