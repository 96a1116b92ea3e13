"""A `rooflab train --dp` step's communication row (meta train_part "comm") as the file
verbs time it: its whole time moves with the link it runs on, and the part the step waits
for, its exposed time, is worked out again from its collectives and the compute they hide
under, so that a verb's step floor is the kernels' floors plus the exposed part, as `rooflab
train` adds them (s29 gA: summed whole, the rows read 256 ms for train's 230 ms step).

The overlap is workloads/llm/train_dp.py's (PyTorch DDP's 25 MB buckets, Li et al. 2020):
a collective of T seconds over B buckets, each bucket ready after an equal share of its
window W of compute, leaves bucket_exposed_s(T, W, B) exposed, and the gradients' bucket
ready only when the backward ends (the embedding's, last_bucket_s_each of T) all of its
time after it; one with no window (the all-gather after the optimizer step) all of T.
The row's meta lists its collectives
(`collectives`, with the window part each hides under); a file written before that list
existed keeps the share of its time the file says is exposed. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .kernel import Kernel

COMM_PART = "comm"
# the kernels whose floors make a window: a collective hides under one micro-batch's
# forward, or under its backward with the recompute that runs inside it (train_dp.with_dp)
WINDOW_PARTS = {"forward": ("forward",), "backward": ("backward", "recompute")}


def is_comm(k: Kernel) -> bool:
    """Whether k is a training step's communication row (`rooflab train --dp`)."""
    return k.meta.get("train_part") == COMM_PART


def bucket_exposed_s(seconds: float, window_s: float, buckets: int,
                     last_s: float = 0.0) -> float:
    """What a bucketed collective leaves after its window: `buckets` slices, each slice's
    share of the compute (window / buckets) then its share of the link (seconds / buckets),
    the link one slice at a time (model.parallel.overlapped_step_s); at least the last
    bucket's own time. `last_s` of the seconds is a bucket of its own that is ready only
    when the window ends (the input embedding's gradient, written by the backward's last
    kernel, embedding.bwd: DDP buckets in reverse order of model.parameters(), and a
    tensor over bucket_cap_mb gets its own): it queues after the other buckets, all of
    it exposed, and the rest, buckets - 1 of them, spread over the window."""
    from .parallel import LayerTime, overlapped_step_s

    if window_s <= 0:
        return seconds
    last = min(max(0.0, last_s), seconds)
    k = max(1, int(buckets) - (1 if last > 0 else 0))
    rest = seconds - last
    slices = tuple(LayerTime(f"bucket{i}", window_s / k, 0.0, rest / k, "")
                   for i in range(k))
    return max(0.0, overlapped_step_s(slices, [1.0] * k) - window_s) + last


@dataclass(frozen=True)
class Exposure:
    """A communication row's whole time on a roof and the part the step waits for."""

    comm_s: float
    exposed_s: float
    share_held: bool = False    # an older file: the file's exposed share kept (no list)


def part_windows(floors: Iterable[tuple[Kernel, float | None]]) -> dict[str, float]:
    """{"forward": s, "backward": s}: the work floors of a step's forward and of its
    backward with the recompute (meta train_part), summed over the optimizer step."""
    out = dict.fromkeys(WINDOW_PARTS, 0.0)
    for k, f in floors:
        part = k.meta.get("train_part")
        for window, parts in WINDOW_PARTS.items():
            if part in parts and f:
                out[window] += f
    return out


def exposure(k: Kernel, comm_s: float, windows: Mapping[str, float],
             whole_s: float | None = None) -> Exposure:
    """The row's exposed time when its collectives take `comm_s` in all (its floor on the
    link it runs on) and its windows are `windows` (part_windows). Each collective's time
    is the file's scaled by comm_s / the file's comm_s (the link's bandwidth; a hop latency
    the file counted scales with it). Without the list (an older JSON or CSV): comm_s x
    the file's exposed / its whole time, that from meta comm_s, else `whole_s` (the row's
    floor on the roof it was judged on), else comm_s."""
    meta = k.meta
    whole = _number(meta.get("comm_s")) or whole_s or comm_s
    exposed = _number(meta.get("exposed_s"))
    listed = _collectives(meta.get("collectives"))
    if listed is None or not whole:
        share = exposed / whole if whole and exposed is not None else 1.0
        return Exposure(comm_s, comm_s * min(1.0, share), share_held=True)
    scale = comm_s / whole
    micro = max(1, int(_number(meta.get("accumulate")) or 1))
    overlap = meta.get("overlap", True) is not False
    total = 0.0
    for c in listed:
        t = c["seconds_each"] * scale
        w = windows.get(c["window"], 0.0) / micro if overlap else 0.0
        total += bucket_exposed_s(t, w, c["buckets"], c["last_s_each"] * scale) * c["calls"]
    return Exposure(comm_s, total)


def _collectives(value: object) -> list[dict] | None:
    """The meta's collectives, each with seconds_each, calls, window and buckets, and
    last_bucket_s_each (0 in a file written before the embedding's gradient was timed
    apart: its exposure as it was); None where absent or not of that shape (the share is
    held instead)."""
    if not isinstance(value, list) or not value:
        return None
    out = []
    for c in value:
        if not isinstance(c, Mapping):
            return None
        t, n, b = (_number(c.get(x)) for x in ("seconds_each", "calls", "buckets"))
        last = _number(c.get("last_bucket_s_each", 0.0))
        if t is None or n is None or b is None or t < 0 or n < 0 or b < 1 \
                or last is None or not 0 <= last <= t:
            return None
        out.append({"seconds_each": t, "calls": n, "buckets": int(b), "last_s_each": last,
                    "window": str(c.get("window") or "none")})
    return out


def _number(v: object) -> float | None:
    import math

    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def shard_older_optimizer(kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    """An older `rooflab train --dp N --zero 1..3` file (session 28, before the optimizer
    row carried meta `zero`): its optimizer pass already counts one device's 1/N of the
    parameters (train has sharded it since --zero came), which only its communication
    row's meta `zero` and `devices` say. The pass gets the meta a newer file writes, so
    `report` does not advise ZeRO-1 for the sharding the step has. A file of --zero 0 (or
    one device) was not sharded: left as it is, its ZeRO advice stands. The clipping and
    unscale passes stay too: that file counted them over every gradient."""
    comm = next((k for k in kernels if is_comm(k)), None)
    if comm is None:
        return kernels
    z, n = comm.meta.get("zero"), comm.meta.get("devices")
    if not (isinstance(z, int) and isinstance(n, int) and z >= 1 and n >= 2):
        return kernels
    note = (f"ZeRO-{z}: sharded over {n} data-parallel devices already: this pass covers "
            f"one device's 1/{n} of the parameters (read from the communication row of "
            f"an older file)")
    return tuple(k.with_(meta={**k.meta, "zero": z, "devices": n, "note": note})
                 if _older_optimizer(k) else k for k in kernels)


def _older_optimizer(k: Kernel) -> bool:
    name = k.name
    return (k.meta.get("train_part") == "optimizer" and "zero" not in k.meta
            and not name.startswith(("optimizer.clip_grad.", "optimizer.grad_scaler.")))
