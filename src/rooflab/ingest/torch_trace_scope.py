"""Which of a trace's ops are the work to count, not the model's construction (review s28
R3 F4: `rooflab torch --run` profiles the whole script, and a ResNet-50's nn.init and
BatchNorm resets, 477 of its 825 calls, took the time shares, the report's top 10 and
choose's launch count).

Two rules, the first that applies:
- a marked range: where the trace holds `torch.profiler.record_function("rooflab")` ranges
  (MARK), only the ops inside them are counted, the rest left out and said;
- construction: otherwise the parameter-initialisation ops (INIT_OPS: nn.init's in-place
  uniform_ and normal_, BatchNorm's fill_ and zero_, the empty tensors nn.Parameter wraps,
  the zeros / ones of its running-statistics buffers)
  called at the top level of a thread before its first op that holds matrix work (a conv,
  a matmul, attention) are left out and said: a script builds its model before the first
  forward pass, and those calls are counted the same for 1 forward or 100.
Ops inside a forward pass are never construction: only those before the first matrix op.
The script's inputs (torch.randn(...), an aten::randn with its normal_ inside) stay: they
are the script's own ops, as the note on ops without a formula names them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..units import fmt_seconds
from .torch_trace_events import TraceEvents, _Op

# the record_function name that marks the ops to count
MARK = "rooflab"
_MARK_CATEGORIES = ("user_annotation",)
INIT_OPS = frozenset({f"aten::{n}" for n in (
    "uniform_", "normal_", "fill_", "zero_", "erfinv_", "empty", "zeros", "ones", "full")})
# matrix work: the first root op holding one starts the forward pass
_MATRIX_PREFIXES = ("aten::conv", "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                    "aten::matmul", "aten::linear", "aten::einsum", "aten::_convolution",
                    "aten::scaled_dot_product", "aten::_scaled_dot_product",
                    "aten::cudnn_convolution", "aten::mkldnn_convolution")


def marked_ranges(events: Iterable) -> list[tuple[float, float]]:
    """(start, end) in us of each record_function(MARK) range on the host."""
    out = []
    for e in events:
        if (isinstance(e, dict) and e.get("ph") == "X" and e.get("name") == MARK
                and str(e.get("cat", "")).lower() in _MARK_CATEGORIES):
            try:
                start = float(e["ts"])
                out.append((start, start + float(e["dur"])))
            except (KeyError, TypeError, ValueError):
                continue
    return out


def _matrix(op: _Op) -> bool:
    return op.name.startswith(_MATRIX_PREFIXES) or any(_matrix(c) for c in op.children)


def _flat(ops: Iterable[_Op]) -> list[_Op]:
    out: list[_Op] = []
    for op in ops:
        out.append(op)
        out += _flat(op.children)
    return out


def scope_roots(roots: list[_Op], ranges: list[tuple[float, float]],
                ev: TraceEvents) -> tuple[list[_Op], str]:
    """The root ops to count and a note on those left out ('' for none). The left-out ops
    leave ev too (its ops, and the device time of their External ids), so nothing of them
    reads as "linked to no op"."""
    if ranges:
        kept = [r for r in roots if any(a <= r.ts <= b for a, b in ranges)]
        why = (f"only the ops inside record_function(\"{MARK}\") ({len(ranges)} range(s)) "
               f"are counted")
    else:
        first: dict[tuple, float] = {}
        for r in roots:
            if _matrix(r):
                first[r.thread] = min(first.get(r.thread, r.ts), r.ts)
        kept = [r for r in roots if not (r.name in INIT_OPS and r.thread in first
                                         and r.ts + r.dur <= first[r.thread])]
        why = ("model construction left out: the parameter initialisation before the first "
               "forward op")
    if len(kept) == len(roots):
        return roots, ""
    keep = {id(r) for r in kept}
    dropped = _flat(r for r in roots if id(r) not in keep)
    gone = {id(op) for op in dropped}
    exts = {op.ext for op in dropped if op.ext is not None}
    ev.ops[:] = [op for op in ev.ops if id(op) not in gone]
    for table in (ev.kernel_s, ev.kernel_n, ev.host_s, ev.kernel_names):
        for ext in exts & set(table):
            del table[ext]
    tops = [r for r in roots if id(r) not in keep]
    names: dict[str, int] = {}
    for r in tops:
        names[r.name] = names.get(r.name, 0) + 1
    listed = ", ".join(f"{n.removeprefix('aten::')} {c}" for n, c in
                       sorted(names.items(), key=lambda kv: -kv[1])[:4])
    seconds = sum(r.dur for r in tops) * 1e-6
    how = ("" if ranges else f"; to count only the step, run it inside `with "
           f"torch.profiler.record_function(\"{MARK}\"):`")
    return kept, (f"{why}: {len(tops)} top-level call(s) left out ({listed}; "
                  f"{fmt_seconds(seconds)} of CPU time){how}")
