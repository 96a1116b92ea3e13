"""What two `rooflab train --json` steps differ in, from their `train` sections: the step
floor, tokens/s, MFU and memory (review s27 v3-F4: `compare none.json full.json` showed
40 rows of "+0.0 %" and nothing of the 146 -> 190 ms floor or the 45.5 -> 26.5 GB memory
that --recompute full trades). The kernels' own rows stay compare's table."""

from __future__ import annotations

import math
from collections.abc import Mapping

# (key in the summary, where in the train section, the unit the line prints it in)
_FIELDS = (("floor_s", ("floor_s",), "s"),
           ("tokens_per_s", ("tokens_per_s",), "tok/s"),
           ("mfu_at_floor", ("mfu_at_floor",), "%"),
           ("hfu_at_floor", ("hfu_at_floor",), "%"),
           ("memory_bytes", ("memory", "total_bytes"), "B"))
_SETUP = ("batch", "seq", "accumulate", "dtype", "recompute", "attn", "optimizer", "dp",
          "zero", "loss", "clip_grad")
# a file from before --dp, or of one device, has no dp/zero keys: one device, no ZeRO;
# one from before --loss/--clip-grad has neither: the eager loss, no clipping
_SETUP_DEFAULTS = {"dp": 1, "zero": 0, "loss": "eager", "clip_grad": False}


def json_doc(path: str) -> Mapping | None:
    """A .json file's document, None for any other input or an unreadable one (the kernel
    reader refuses those, with its words)."""
    import json

    from ..files import read_text

    if not path.lower().endswith(".json"):
        return None
    try:
        doc = json.loads(read_text(path))
    except (ValueError, OSError):
        return None
    return doc if isinstance(doc, Mapping) else None


def train_section(path: str) -> Mapping | None:
    """The `train` section of a .json file, None for any other input."""
    doc = json_doc(path)
    train = doc.get("train") if doc is not None else None
    return train if isinstance(train, Mapping) else None


def _number(train: Mapping, keys: tuple[str, ...]) -> float | None:
    v: object = train
    for k in keys:
        v = v.get(k) if isinstance(v, Mapping) else None
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def train_move(before: str, after: str) -> dict | None:
    """{"setup": {key: [before, after]} of the settings that differ, name: {"before",
    "after", "ratio"} of each figure both steps carry}; None unless both are train steps."""
    b, a = train_section(before), train_section(after)
    if b is None or a is None:
        return None
    out: dict = {"setup": {}}
    sb, sa = b.get("setup") or {}, a.get("setup") or {}
    for key in _SETUP:
        if not (isinstance(sb, Mapping) and isinstance(sa, Mapping)):
            continue
        x, y = (s.get(key, _SETUP_DEFAULTS.get(key)) for s in (sb, sa))
        if x != y:
            out["setup"][key] = [x, y]
    for name, keys, _ in _FIELDS:
        x, y = _number(b, keys), _number(a, keys)
        if x is not None and y is not None:
            out[name] = {"before": x, "after": y, "ratio": y / x if x else None}
    return out


def train_lines(move: Mapping) -> list[str]:
    """The lines under compare's table: what changed and what it did to the step."""
    from ..units import fmt_seconds, si

    def fmt(v: float, unit: str) -> str:
        if unit == "s":
            return fmt_seconds(v)
        return f"{100 * v:.1f} %" if unit == "%" else si(v, unit)

    lines = []
    if move["setup"]:
        lines.append("train setup: " + ", ".join(f"{k} {b} -> {a}" for k, (b, a)
                                                 in move["setup"].items()))
    figs = []
    for name, _, unit in _FIELDS:
        if name in move:
            m = move[name]
            ratio = (f" ({m['ratio']:.2f}x the first's)"
                     if m["ratio"] is not None and unit != "%" else "")
            label = {"floor_s": "step floor", "tokens_per_s": "tokens/s",
                     "mfu_at_floor": "MFU", "hfu_at_floor": "HFU",
                     "memory_bytes": "memory"}[name]
            figs.append(f"{label} {fmt(m['before'], unit)} -> {fmt(m['after'], unit)}{ratio}")
    if figs:
        lines.append("train step (from the files' `train` sections: derived floors on "
                     "their roofs, not measured): " + "; ".join(figs))
    return lines
