"""`rooflab whatif --precision` on a training step's communication row, collective by
collective (`rooflab train`: meta train_part comm, its meta `collectives` each with
`bytes`, `sent_bytes_each` and `parts`: the bytes of what it carries, `element_bytes`: their
widths). What each part carries decides its new width:

* weights (ZeRO's all-gathers of the --dtype copy the step runs on): the math's size, but
  never below 2 B (fp8 and fp4 recipes keep bf16 weights and cast them per GEMM, as they
  keep bf16 gradients: whatif_grads);
* gradients (DDP's all-reduce, ZeRO's reduce-scatter, --tp's norm-gradient all-reduce):
  held at --grad-dtype apart from the training dtype (fp32 under bf16, Megatron-LM's
  main_grad) they keep their width; else the math's size, never below 2 B;
* activations (--tp's collectives between the layers): an all-gather carries a GEMM's
  input, which moves to the math's size (fp8 halves it, fp32 doubles it); a reduce
  (all-reduce, reduce-scatter) sums GEMM outputs, which 8-bit recipes keep at 16 bits
  (`rooflab llm --act fp8`'s convention: 8-bit activations at the GEMM inputs only), so
  never below 2 B;
* anything else (the vocab-parallel loss's fp32 statistics) keeps its width.

Each collective's bandwidth time scales with its bytes; its hop latency with its bucket
count (model/train_comm.rebucketed: DDP's 25 MiB buckets grow in number with the bytes,
DeepSpeed's 5e8-element buckets and FSDP's units do not), so the file verbs time the
overlap again from the new list (model/train_comm.exposure). Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping

from ..units import dtype_bytes
from .kernel import Kernel
from .whatif_grads import HELD, follows_math, is_held, storage_bytes, whole

# what `whatif --precision` says of a train file's communication rows (module docstring)
COMM_WORDS = ("; a gradient collective (train --dp) moves gradients of at least 2 B a "
              "value: fp8 and fp4 recipes keep bf16 gradients; gradients held at "
              "--grad-dtype apart from the training dtype keep their width (--tp's fp32 "
              "norm gradients too); ZeRO's weight all-gathers move weights of at least 2 B; "
              "--tp's activations follow the math in its all-gathers (GEMM inputs) and "
              "keep at least 2 B in its reductions (GEMM outputs), the loss's fp32 "
              "statistics as they are")
REDUCES = ("all-reduce", "reduce-scatter")


def listed_parts(k: Kernel) -> list[dict] | None:
    """The row's collectives with their parts (each with bytes > 0, sent_bytes_each,
    calls, parts and element_bytes numbers > 0), None where any lacks them (a file from
    before they were written: whatif_precision's one rule for the row)."""
    listed = k.meta.get("collectives")
    if not isinstance(listed, list) or not listed:
        return None
    for c in listed:
        if not isinstance(c, Mapping):
            return None
        parts, widths = c.get("parts"), c.get("element_bytes")
        if not (_pos(c.get("sent_bytes_each"), zero=True) and _pos(c.get("calls"), zero=True)
                and isinstance(parts, Mapping) and isinstance(widths, Mapping) and parts
                and all(_pos(v, zero=True) and _pos(widths.get(p)) for p, v in parts.items())):
            return None
    return listed


def comm_parts_in_precision(k: Kernel, size: float, held: bool,
                            dtype: str | None = None) -> Kernel | None:
    """k with each collective's parts at the width the module docstring gives them under
    --precision of `size` bytes an element; `held`: its gradients held at --grad-dtype
    apart from the training dtype (whatif_grads.held_apart), as are gradients whose own
    width is not the training dtype's (meta storage_dtype) or a collective marks held.
    `dtype`: the precision's name, the row's training dtype after (meta storage_dtype).
    None where the row does not list its parts."""
    listed = listed_parts(k)
    if listed is None:
        return None
    new_list, old_sent, new_sent, grads = [], 0.0, 0.0, None
    storage = storage_bytes(k)
    for c in listed:
        kept = held or (storage is not None and "gradients" in c["element_bytes"]
                        and is_held(c["element_bytes"]["gradients"], storage, c))
        widths = {p: _width(p, float(w), str(c.get("kind", "")), size, kept)
                  for p, w in c["element_bytes"].items()}
        parts = {p: float(v) * widths[p] / float(c["element_bytes"][p])
                 for p, v in c["parts"].items()}
        old_b = sum(float(v) for v in c["parts"].values())
        f = sum(parts.values()) / old_b if old_b > 0 else 1.0
        fg = widths["gradients"] / float(c["element_bytes"]["gradients"]) \
            if "gradients" in widths else f
        grads = widths.get("gradients", grads)
        new_list.append({**_scaled(c, parts, widths, f, fg), **({HELD: True} if kept else {})})
        old_sent += float(c["sent_bytes_each"]) * float(c["calls"])
        new_sent += new_list[-1]["sent_bytes_each"] * float(c["calls"])
    r = new_sent / old_sent if old_sent > 0 else 1.0
    meta = {**k.meta, "collectives": new_list}
    if _pos(k.meta.get("comm_s")):
        meta["comm_s"] = sum(_num(c.get("seconds_each")) * float(c["calls"]) for c in new_list)
    if grads is not None and "grad_bytes" in k.meta:
        meta["grad_bytes"] = whole(grads)
        # the row's gradients, held or following the math, read so by a whatif of this
        # file's output (s36 Q: a bf16 row's fp32 gradients read as held there)
        meta.update({HELD: True} if held else {})
    if dtype and storage is not None:
        meta["storage_dtype"] = dtype
        moving = sum((_num(c.get("seconds_each")) - _num(c.get("latency_s_each")))
                     * float(c["calls"]) for c in new_list)
        meta["by_zero"] = stages_in_precision(k.meta, size, storage, grads, meta, new_sent,
                                              new_sent / moving if moving > 0 else None)
    return k.with_(bytes={lv: b * r for lv, b in k.bytes.items()}, meta=meta)


def stages_in_precision(old: Mapping, size: float, storage: float, grads: float | None,
                        new: Mapping, sent: float, bw: float | None) -> object:
    """The row's meta by_zero (each ZeRO stage's bytes and comm_s at this N) under
    --precision, as `rooflab train` writes it at the new dtype: each stage's gradients
    (stage 0 all of its bytes B0; stage 1 B0 / 2, a reduce-scatter; stages 2 and 3 one a
    micro-batch, accumulate x B0 / 2) at `grads` bytes a value (the row's new width), the
    rest (weights all-gathered) at follows_math(size) for `storage` bytes. comm_s: the
    bytes at the link's `bw` (the row's bytes over its collectives' time less their hop
    latencies), plus the stage's hop latencies (what was past its bytes' time), x the
    gradients' width at stage 0 (DDP's bucket count follows the bytes; DeepSpeed's
    element buckets and FSDP's units do not); in proportion without `bw`. The row's own
    stage: its new bytes `sent` and comm_s. As it is where it is not a whole table."""
    from .train_comm import restaged, whole_stages

    stages, g_old = old.get("by_zero"), old.get("grad_bytes")
    if grads is None or not _pos(g_old) or not whole_stages(stages):
        return stages
    acc = old.get("accumulate") if _pos(old.get("accumulate")) else 1
    b0 = float(stages.get("0", {}).get("bytes", 0.0))
    fg, fw = grads / float(g_old), follows_math(size) / storage

    def retime(key: str, b: float, t: float) -> tuple[float, float]:
        g = {"0": b0, "1": b0 / 2}.get(key, acc * b0 / 2)
        nb = min(g, b) * fg + max(b - g, 0.0) * fw
        hops = max(t - b / bw, 0.0) * (fg if key == "0" else 1.0) if bw else None
        return nb, t * nb / b if hops is None else nb / bw + hops

    own = (sent, new["comm_s"]) if _pos(new.get("comm_s")) else None
    return restaged(stages, old.get("zero"), retime, own)


def _width(part: str, was: float, kind: str, size: float, held: bool) -> float:
    """A part's bytes per element under --precision of `size` (module docstring)."""
    if part == "weights" or (part == "activations" and kind in REDUCES):
        return follows_math(size)
    if part == "activations":
        return size
    if part == "gradients":
        return was if held else follows_math(size)
    return was


def _scaled(c: Mapping, parts: dict, widths: dict, f: float, fg: float) -> dict:
    """The collective `c` with its new parts and widths, bytes, bytes sent and time (x
    `f`); the embedding's gradient bucket (last_bucket_s_each) x `fg`, its gradients'."""
    out = {**c, "parts": parts, "element_bytes": widths,
           "sent_bytes_each": float(c["sent_bytes_each"]) * f}
    if _pos(c.get("bytes"), zero=True):
        out["bytes"] = float(c["bytes"]) * f
    if _pos(c.get("seconds_each"), zero=True):
        out["seconds_each"] = float(c["seconds_each"]) * f
        if _pos(c.get("last_bucket_s_each"), zero=True):
            out["last_bucket_s_each"] = min(float(c["last_bucket_s_each"]) * fg,
                                            out["seconds_each"])
    # the bucket count and the hops it pays, by how the file's scheme sets its buckets
    from .train_comm import rebucketed

    return rebucketed(c, out, f, fg)


def part_widths(storage: str, grad_width: float) -> dict[str, float]:
    """{role: bytes per element} of a train step's collectives: weights and activations
    at the training dtype `storage`, gradients at `grad_width` (--grad-dtype's)."""
    w = float(dtype_bytes(storage))
    return {"weights": w, "activations": w, "gradients": float(grad_width)}


def _num(v: object) -> float:
    return float(v) if _pos(v, zero=True) else 0.0


def _pos(v: object, zero: bool = False) -> bool:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    return ok and (v >= 0 if zero else v > 0)
