"""A `rooflab train --dp` step's communication row (meta train_part "comm") as the file
verbs time it: its whole time moves with the link it runs on, and the part the step waits
for, its exposed time, is worked out again from its collectives and the compute they hide
under, so that a verb's step floor is the kernels' floors plus the exposed part, as `rooflab
train` adds them (s29 gA: summed whole, the rows read 256 ms for train's 230 ms step).

The overlap is workloads/llm/train_dp.py's (Li et al. 2020): PyTorch DDP's buckets (1 MiB
first, then 25 MiB, filled tensor by tensor: meta tensor_runs), each ready when the backward
has written its last gradient, and DeepSpeed ZeRO-1/2's (5e8 elements, filled so too), each
when the next gradient would overflow it, queued on the link one at a time
(model/ddp_ready.py); the other pieces (FSDP's units, a file's buckets without tensor_runs),
a collective of T seconds over B buckets each ready after an equal share of its window W,
leave bucket_exposed_s(T, W, B) exposed, and the gradients' bucket ready only when the
backward ends (the embedding's, last_bucket_s_each of T) all of its time after it; one with
no window (the all-gather after the optimizer step) all of T. The row's meta lists its
collectives
(`collectives`, with the window part each hides under); a file written before that list
existed keeps the share of its time the file says is exposed. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .ddp_ready import ddp_buckets, tensor_exposed_s
from .kernel import Kernel

COMM_PART = "comm"
# tensor_runs past this many tensors are not of the shape (_runs): the row's own bucket count
# times it, as a count of 0 does
MAX_TENSORS = 10_000_000
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
    it exposed, and the rest, buckets - 1 of them, spread over the window.

    Closed form of that schedule (s36 N; it built one slice per bucket, 11 s at --bucket-mb
    0.1): k equal slices of w = window/k compute and c = rest/k link, slice j's collective
    ready at j x w, end the link at max over j of (j w + (k - j + 1) c), linear in j, so at
    j = 1 or k: max(w + k c, k w + c); the step ends at that or k w, the window. To the
    loop's rounding (it summed w k times: 1e-13 of T + W; this, 1 ulp)."""
    if window_s <= 0:
        return seconds
    last = min(max(0.0, last_s), seconds)
    k = max(1, int(buckets) - (1 if last > 0 else 0))
    w, c = window_s / k, (seconds - last) / k
    return max(0.0, max(w + c * k, w * k + c) - window_s) + last


@dataclass(frozen=True)
class Exposure:
    """A communication row's whole time on a roof and the part the step waits for."""

    comm_s: float
    exposed_s: float
    share_held: bool = False    # an older file: the file's exposed share kept (no list)
    # exposed were the row overlapped (meta exposed_overlap_s), whether or not it is
    # (--no-overlap); None where not worked out (the share held)
    overlap_s: float | None = None


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
    is the file's bandwidth part scaled by comm_s / the file's (the link's bandwidth), its
    hop latency (latency_s_each, s36: each bucket pays it) kept; a file without that
    field scales the whole. Without the list (an older JSON or CSV): comm_s x
    the file's exposed / its whole time, that from meta comm_s, else `whole_s` (the row's
    floor on the roof it was judged on), else comm_s."""
    meta = k.meta
    whole = _number(meta.get("comm_s")) or whole_s or comm_s
    exposed = _number(meta.get("exposed_s"))
    listed = _collectives(meta.get("collectives"))
    if listed is None or not whole:
        share = exposed / whole if whole and exposed is not None else 1.0
        return Exposure(comm_s, comm_s * min(1.0, share), share_held=True)
    # the hop latency the file counted (latency_s_each, each bucket's) is kept; the rest,
    # the bandwidth part, moves with the link (comm_s: the row's bytes over it)
    lat = sum(c["latency_s_each"] * c["calls"] for c in listed)
    scale = comm_s / (whole - lat) if whole > lat else comm_s / whole
    micro = max(1, int(_number(meta.get("accumulate")) or 1))
    overlap = meta.get("overlap", True) is not False
    total = hidden = 0.0
    for c in listed:
        t = _retimed(c["seconds_each"], c["latency_s_each"], scale)
        # the last bucket paid one launch's hops
        last = c["last_s_each"] and _retimed(c["last_s_each"],
                                             c["latency_s_each"] / c["launches"], scale)
        w = windows.get(c["window"], 0.0) / micro
        if c["runs"]:     # DDP's, DeepSpeed's buckets, each ready when filled (ddp_ready)
            both = tensor_exposed_s(t, w, c["runs"], c["limits"],
                                    c["latency_s_each"], c["rule"]) * c["calls"]
        else:
            both = bucket_exposed_s(t, w, c["buckets"], min(last, t)) * c["calls"]
        total += both if overlap else t * c["calls"]
        hidden += both
    # the whole is the bandwidth part and the hops, as train's comm_s (s38 C: whatif and
    # choose said 44.9 ms of a row whose 226 buckets' hops train counts in 58.5 ms)
    return Exposure(comm_s + lat, total, overlap_s=hidden)


def on_link(k: Kernel, bus_bytes_per_s: float, hop_s: float, ranks: int | None = None) -> Kernel:
    """Row k as it runs on another link, of `bus_bytes_per_s` and `hop_s` per ring hop, over
    `ranks` ranks (None: its meta devices): the hop latency belongs to the link, so each
    launch pays that link's hops (all-reduce 2(n-1), all-gather/reduce-scatter n-1) in
    place of the file's latency_s_each (s36 N: `choose --among MI300X` kept an H100 file's
    --hop-latency-us 10, 30.4 ms, where `train --on MI300X` counts none), and the rest of
    each one's time, meta comm_s and by_zero at the link's bandwidth (_stages_on). A link
    of the file's bandwidth on the file's ring is taken as the file's own: k as it is."""
    from .comm_link import ring_hops

    meta, listed = k.meta, _collectives(k.meta.get("collectives"))
    whole = _number(meta.get("comm_s"))
    n = int(ranks or _number(meta.get("devices")) or 2)
    if listed is None or not whole or bus_bytes_per_s <= 0:
        return k
    lat = sum(c["latency_s_each"] * c["calls"] for c in listed)
    row_bytes = sum(k.bytes.values())
    # the bandwidth part at the link's bandwidth, the row's bytes (re-ringed) over it (s36
    # R: an H100 file --hardware MI300X kept NVLink's 7.33 ms where train says 17.2 ms)
    bw = row_bytes / bus_bytes_per_s
    same_ring = ranks is None or ranks == _number(meta.get("devices"))
    if same_ring and math.isclose(bw, whole - lat, rel_tol=1e-9):
        return k
    f = bw / (whole - lat) if whole > lat else 1.0
    old_sent = _sent(meta)
    out, new_total = [], 0.0
    for raw, c in zip(meta["collectives"], listed, strict=True):
        hops = ring_hops(n) if raw.get("kind") == "all-reduce" else ring_hops(n) // 2
        new = c["launches"] * hops * hop_s if c["seconds_each"] > 0 else 0.0
        per_old, per_new = c["latency_s_each"] / c["launches"], new / c["launches"]
        fields = {"latency_s_each": new,
                  "seconds_each": (c["seconds_each"] - c["latency_s_each"]) * f + new}
        if c["last_s_each"]:
            fields["last_bucket_s_each"] = max(0.0, c["last_s_each"] - per_old) * f + per_new
        if (sent := _number(raw.get("sent_bytes_each"))) is not None and old_sent > 0:
            # re-ringed: each one's bytes sent as the row's (choose_train_ranks.row_on)
            fields["sent_bytes_each"] = sent * row_bytes / old_sent
        out.append({**raw, **fields})
        new_total += new * c["calls"]
    new_meta = {**meta, "collectives": out, "comm_s": bw + new_total}
    if isinstance(meta.get("by_zero"), Mapping):
        new_meta["by_zero"] = _stages_on(meta, row_bytes, (bus_bytes_per_s, (n - 1) * hop_s),
                                         (lat, new_total), new_meta["comm_s"])
    return k.with_(meta=new_meta)


def _stages_on(meta: Mapping, sent: float, link: tuple[float, float],
               lats: tuple[float, float], comm_s: float) -> Mapping:
    """Meta by_zero (each ZeRO stage's bytes and comm_s) on_link's link, `link` its (bus
    B/s, seconds a round of N-1 hops takes on the new ring): each stage's bytes x the
    re-ring's `sent` / the file's, at the bus bandwidth, plus its hop latency: its
    hop_rounds x a round (train_dp_comm.Collective.hop_rounds), or in a file without them
    what its comm_s was past its bytes' time x new / old of the row's (`lats`), none where
    the file had none (a stage's launches are its own: ZeRO-1's 28 are not DDP's 226, whose
    latency each stage once took: s37 B); the row's own stage: `sent` and `comm_s`,
    exactly. As it is where a stage is not {bytes, comm_s > 0}."""
    stages, whole = meta["by_zero"], _number(meta.get("comm_s")) or 0.0
    old_sent, (bus, round_s) = _sent(meta), link
    if not whole_stages(stages) or old_sent <= 0 or whole <= lats[0]:
        return stages
    old_bw, ring = old_sent / (whole - lats[0]), sent / old_sent

    def retime(key: str, b: float, t: float) -> tuple[float, float]:
        rounds = _number(stages[key].get("hop_rounds"))
        rounds = _file_rounds(meta, key) if rounds is None else rounds
        if rounds is not None and rounds >= 0:
            hops = rounds * round_s
        else:
            hops = max(0.0, t - b / old_bw) * lats[1] / lats[0] if lats[0] > 0 else 0.0
        return b * ring, b * ring / bus + hops

    return restaged(stages, meta.get("zero"), retime, (sent, comm_s))


def _file_rounds(meta: Mapping, key: str) -> float | None:
    """Stage `key`'s hop rounds where by_zero gives none (a file from before s37 B): the
    row's own stage's from its collectives (each launch of an all-reduce two rounds of N-1
    hops, of the others one), and under ZeRO-1 or -2 the other's (the same DeepSpeed
    buckets; ZeRO-2 reduce-scatters each micro-batch, ZeRO-1 once a step); None for the
    others (DDP's buckets and FSDP's units are not in the row: unpriced_stages)."""
    own, listed = str(meta.get("zero")), meta.get("collectives")
    if not isinstance(listed, list) or not (key == own or {key, own} == {"1", "2"}):
        return None
    micro = _number(meta.get("accumulate")) or 1.0
    total = 0.0
    for c in listed:
        launches = _number(c.get("launches_each")) or _number(c.get("buckets"))
        calls = _number(c.get("calls"))
        if not launches or calls is None:
            return None
        if key != own and c.get("kind") == "reduce-scatter":
            calls = micro if key == "2" else 1.0
        total += launches * (2 if c.get("kind") == "all-reduce" else 1) * calls
    return total


def unpriced_stages(k: Kernel, hop_s: float) -> list[str]:
    """The ZeRO stages of row k's by_zero whose hops on a link of `hop_s` a hop on_link
    cannot price: a file without hop_rounds (before s37 B) and without hop latency (none
    to scale), the stages _file_rounds cannot derive; they keep their bandwidth time
    alone, and whatif says so. [] where each is priced."""
    stages, listed = k.meta.get("by_zero"), _collectives(k.meta.get("collectives"))
    if hop_s <= 0 or not whole_stages(stages) or listed is None \
            or sum(c["latency_s_each"] for c in listed) > 0:
        return []
    return [key for key, v in stages.items()
            if _number(v.get("hop_rounds")) is None and _file_rounds(k.meta, key) is None]


def whole_stages(stages: object) -> bool:
    """Whether meta by_zero is a whole table: each stage {bytes > 0, comm_s > 0}."""
    return isinstance(stages, Mapping) and all(
        isinstance(v, Mapping) and (_number(v.get("bytes")) or 0) > 0
        and (_number(v.get("comm_s")) or 0) > 0 for v in stages.values())


def restaged(stages: Mapping, zero: object, retime, own: tuple[float, float] | None
             ) -> dict:
    """A whole by_zero table (whole_stages) with each stage's (bytes, comm_s) as
    `retime(key, bytes, comm_s)` gives them, and the row's own stage (`zero`) `own` (its
    bytes and comm_s, exactly) where given: one walk for whatif's --hardware (_stages_on)
    and --precision (whatif_comm_parts.stages_in_precision)."""
    out = {}
    for key, v in stages.items():
        b, t = retime(key, float(v["bytes"]), float(v["comm_s"]))
        out[key] = {**v, "bytes": b, "comm_s": t}
    now = str(zero)
    if own is not None and now in out:
        out[now] = {**out[now], "bytes": own[0], "comm_s": own[1]}
    return out


def _sent(meta: Mapping) -> float:
    """The bytes a row's collectives send in all (sent_bytes_each x calls)."""
    return sum((_number(c.get("sent_bytes_each")) or 0.0) * (_number(c.get("calls")) or 0.0)
               for c in meta.get("collectives", ()) if isinstance(c, Mapping))


def _retimed(seconds: float, latency: float, scale: float) -> float:
    """A time of `latency` hop latency and the rest bandwidth, the rest x scale."""
    lat = min(max(0.0, latency), seconds)
    return (seconds - lat) * scale + lat


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
        lat = _number(c.get("latency_s_each", 0.0))   # 0 before s36: scaled with the rest
        if t is None or n is None or b is None or t < 0 or n < 0 or b < 1 \
                or last is None or not 0 <= last <= t or lat is None or not 0 <= lat <= t:
            return None
        # collectives launched per call (FSDP's backward: two a block unit); s36 C's file
        # had one a bucket
        launches = _number(c.get("launches_each")) or b
        cap = _number(c.get("bucket_bytes")) or 0.0
        # tensor by tensor, DDP's (s37 on) and DeepSpeed's (s38 H): timed bucket by bucket
        # as they become ready
        by = c.get("bucket_by")
        runs = _runs(c.get("tensor_runs")) if by in ("tensors", "elements") and cap > 0 \
            else None
        out.append({"seconds_each": t, "calls": n, "buckets": int(b), "last_s_each": last,
                    "latency_s_each": lat, "launches": max(1.0, launches),
                    "window": str(c.get("window") or "none"), "runs": runs,
                    "rule": "deepspeed" if by == "elements" else "ddp",
                    "limits": (_number(c.get("first_bucket_bytes")) or cap, cap)})
    return out


def _number(v: object) -> float | None:
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


def rebucketed(c: Mapping, out: dict, f: float, fg: float) -> dict:
    """`out`, the collective `c` after whatif --precision scaled its bytes by `f` (its
    gradients' by `fg`) and its time by `f`, with its buckets counted again by how its
    scheme sets them (bucket_by, train_dp_comm): "bytes" (DDP's bucket_cap_mb) as many as
    the new bytes fill, "tensors" (DDP's, tensor by tensor: ddp_buckets) as the tensors
    at their new width fill them (llama-2-7b bf16 -> fp32: 226 -> 226), "elements"
    (DeepSpeed's reduce_bucket_size), "unit" (FSDP's blocks) and "call" (a --tp
    collective, one launch a call) as many as before, their bytes following the width;
    the hop latency (latency_s_each) with the count, the rest of the time with the bytes.
    A file without bucket_by: the latency x f (s36 C)."""
    lat, t = _number(c.get("latency_s_each")) or 0.0, _number(c.get("seconds_each"))
    by, n = c.get("bucket_by"), _number(c.get("buckets"))
    if t is None or n is None or n < 1:
        return out
    if by not in ("bytes", "elements", "unit", "tensors", "call"):
        if lat:
            out["latency_s_each"] = min(lat * f, out["seconds_each"])
        return out
    new_n = int(n)
    if by == "bytes" and (_number(c.get("bucket_bytes")) or 0) > 0:
        cap, new_b = float(c["bucket_bytes"]), float(out.get("bytes", 0.0))
        last = (_number(c.get("last_bucket_bytes")) or 0.0) * fg
        new_n = (1 + max(1, math.ceil((new_b - last) / cap)) if last > cap
                 else max(1, math.ceil(new_b / cap)))
        out["last_bucket_bytes"] = last if last > cap else 0.0
        if last <= cap:
            out["last_bucket_s_each"] = 0.0
    elif by == "elements" and (_number(c.get("bucket_bytes")) or 0) > 0:
        out["bucket_bytes"] = float(c["bucket_bytes"]) * f
        if runs := _runs(c.get("tensor_runs")):     # the same tensors, as many buckets
            out["tensor_runs"] = [[b * f, n] for b, n in runs]
            out["first_bucket_bytes"] = out["bucket_bytes"]
    elif by == "tensors" and (runs := _runs(c.get("tensor_runs"))):
        new_n = _retensored(c, out, runs, fg)
    # each launch pays the link's hops: their count moves with the buckets'
    launches = _number(c.get("launches_each")) or n
    per = lat / launches
    new_lat = per * (launches + new_n - n)
    out.update(buckets=new_n, latency_s_each=new_lat,
               seconds_each=max(0.0, t - lat) * f + new_lat)
    if "launches_each" in c:
        out["launches_each"] = int(launches + new_n - n)
    last_s = _number(c.get("last_bucket_s_each")) or 0.0
    if last_s and _number(out.get("last_bucket_s_each")):
        # its bandwidth part with its gradients' bytes, its one launch's hops kept
        out["last_bucket_s_each"] = min(max(0.0, last_s - per) * fg + per,
                                        out["seconds_each"])
    return out


def _runs(value: object) -> list[tuple[float, int]] | None:
    """Meta tensor_runs ([bytes, how many in a row], ...), None where not of that shape."""
    if not isinstance(value, list) or not value:
        return None
    out = []
    for r in value:
        if not (isinstance(r, list) and len(r) == 2 and (_number(r[0]) or 0) > 0
                and isinstance(r[1], int) and not isinstance(r[1], bool) and r[1] >= 1):
            return None
        out.append((float(r[0]), r[1]))
    # past any model's tensors (an MoE's are tens of thousands): a hand-edited count, each
    # tensor past the cap its own bucket, would hold whatif for minutes (s38 L)
    return out if sum(n for _, n in out) <= MAX_TENSORS else None


def _retensored(c: Mapping, out: dict, runs: list[tuple[float, int]], fg: float) -> int:
    """DDP's tensor-by-tensor buckets of `c` with its gradients `fg` x as wide: their count
    (ddp_buckets under the file's first and later limits), `out`'s tensor_runs and the
    embedding's bucket (its own past the cap: last_bucket_bytes) set to match."""
    cap = _number(c.get("bucket_bytes")) or 0.0
    first = _number(c.get("first_bucket_bytes")) or cap
    new_runs = [(b * fg, n) for b, n in runs]
    out["tensor_runs"] = [[b, n] for b, n in new_runs]
    last = (_number(c.get("last_bucket_bytes")) or 0.0) * fg
    out["last_bucket_bytes"] = last if last > cap else 0.0
    if last <= cap:
        out["last_bucket_s_each"] = 0.0
    return ddp_buckets(new_runs, (first, cap)) if cap > 0 else int(c["buckets"])
