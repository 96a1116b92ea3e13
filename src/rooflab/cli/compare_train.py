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
           ("memory_bytes", ("memory", "total_bytes"), "B"),
           # --dp: the whole communication, and the part of it the step floor counts
           ("comm_s", ("dp", "comm_s"), "s"),
           ("comm_exposed_s", ("dp", "exposed_s"), "s"),
           # what each rank sends: 2 (N - 1)/N of the gradients on a ring of N ranks, so
           # an MI250X --dp 4 file's 8 dies send 23.6 GB to 4 H100s' 20.2 GB (s35 A)
           ("comm_bytes", ("dp", "bytes_per_device"), "B"))
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


def comm_exposed(path: str) -> dict[str, float]:
    """{kernel name: exposed seconds} of a `rooflab train --dp` file's communication rows
    (meta train_part "comm"): the part of each that the step floor counts; the row's own
    floor is the whole communication (s29 gA: compare summed the whole, 256 ms, for
    train's 230 ms step). {} for any other file."""
    doc = json_doc(path)
    kernels = doc.get("kernels") if doc is not None else None
    out: dict[str, float] = {}
    for k in kernels if isinstance(kernels, list) else ():
        meta = k.get("meta") if isinstance(k, Mapping) else None
        if isinstance(meta, Mapping) and meta.get("train_part") == "comm":
            exposed = _number(meta, ("exposed_s",))
            if exposed is not None and exposed >= 0:
                out[str(k.get("name"))] = exposed
    return out


def step_floor(floors: Mapping[str, float], exposed: Mapping[str, float]) -> float:
    """The step's floor from its rows' floors as `rooflab train` adds them: each kernel's
    floor, and of a communication row only its exposed part."""
    return sum(exposed.get(name, floor) for name, floor in floors.items())


def comm_label(name: str, before: float | None, after: float | None) -> str:
    """The compare table's name for a communication row: its floor is the whole of it,
    and the step counts the exposed part."""
    from ..units import fmt_seconds

    said = " -> ".join(fmt_seconds(v) if v is not None else "-" for v in (before, after))
    return f"{name} (whole; the step counts {said} exposed)"


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
    # a package's dies make --dp and --tp say other counts than the ranks (_ranks)
    if isinstance(sb, Mapping) and isinstance(sa, Mapping) and _ranks(sb) != _ranks(sa) \
            and any("dp_ranks" in st or "tp_ranks" in st for st in (sb, sa)):
        out["setup"]["ranks"] = [_ranks(sb), _ranks(sa)]
    for name, keys, _ in _FIELDS:
        x, y = _number(b, keys), _number(a, keys)
        if x is not None and y is not None:
            out[name] = {"before": x, "after": y, "ratio": y / x if x else None}
    return out


def _ranks(setup: Mapping) -> int:
    """The ranks a step's setup runs: its dp_ranks x tp_ranks where train wrote them (a
    package of dies, each a rank: `train --on MI250X --dp 4` is 8; workloads/llm/
    train_dies.py), else --dp x --tp. compare set such a file beside `--on H100 --dp 4`
    with no setup line, its ring of 8 unsaid (s35 A)."""
    def whole(key: str) -> int:
        v = setup.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else 1

    if "dp_ranks" in setup or "tp_ranks" in setup:
        return whole("dp_ranks") * whole("tp_ranks")
    return whole("dp") * whole("tp")


def train_lines(move: Mapping) -> list[str]:
    """The lines under compare's table: what changed and what it did to the step."""
    from ..units import fmt_pct, fmt_seconds, fmt_times, per_s, si

    def fmt(v: float, unit: str) -> str:
        if unit == "tok/s":      # events a second as train and llm print them (units.per_s)
            return f"{per_s(v)} tok/s"
        if unit == "s":
            return fmt_seconds(v)
        return fmt_pct(100 * v) if unit == "%" else si(v, unit)   # MFU as train prints it

    lines = []
    if move["setup"]:
        lines.append("train setup: " + ", ".join(f"{k} {b} -> {a}" for k, (b, a)
                                                 in move["setup"].items()))
    figs = []
    for name, _, unit in _FIELDS:
        if name in move:
            m = move[name]
            ratio = (f" ({fmt_times(m['ratio'])} the first's)"
                     if m["ratio"] is not None and unit != "%" else "")
            label = {"floor_s": "step floor", "tokens_per_s": "tokens/s",
                     "mfu_at_floor": "MFU", "hfu_at_floor": "HFU",
                     "memory_bytes": "memory",
                     "comm_s": "communication (whole)",
                     "comm_exposed_s": "communication exposed (in the step floor)",
                     "comm_bytes": "sent per rank"}[name]
            figs.append(f"{label} {fmt(m['before'], unit)} -> {fmt(m['after'], unit)}{ratio}")
    if figs:
        lines.append("train step (from the files' `train` sections: derived floors on "
                     "their roofs, not measured): " + "; ".join(figs))
    return lines
