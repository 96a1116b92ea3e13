"""Short text for a notebook cell's value, the small values: a Ceiling (`t4.compute[0]`)
and an OpCount (`ops.matmul(...)`, docs/python.md §3). A Point's text is its Analysis row
(model/display.point_text).

Without these a frozen dataclass prints every field on one line: a catalog Ceiling its
datasheet URL (~250 characters), an OpCount its shape, split and byte model (~360; review
s24 r3 F5). Each is one line in the units the tables use, with the number's provenance,
and names the fields that hold the rest. Pure functions of the values (duck-typed, so
workloads/ is not imported here); model/display.py has the `pretty` hook.
"""

from __future__ import annotations

from ..units import fmt_ai, fmt_rate, si
from .display import _percent
from .provenance import DERIVED
from .sample_spread import spread_short


def ceiling_text(c) -> str:
    """'Ceiling fp16 tensor: 65 TFLOP/s (nominal); see .source'; a probed one with its
    samples: 'Ceiling DRAM: 14.2 GB/s (measured), 9 samples, IQR 2.1 %; see .method,
    .samples' (the spread as a Kernel's display gives it: the range under 4 samples)."""
    value = fmt_rate(c.value, c.precision) if c.is_compute else si(c.value, "B/s")
    parts = [f"Ceiling {c.label}: {value} ({c.provenance})"]
    n = len(c.samples)
    if n:
        parts.append(f"{n} sample{'s' if n != 1 else ''}")
    if c.iqr_rel is not None:
        parts.append(f"{spread_short(n)} {_percent(c.iqr_rel * 100)} %")
    if c.warnings:
        parts.append(f"{len(c.warnings)} warning{'s' if len(c.warnings) != 1 else ''} "
                     f"(.warnings)")
    more = [f".{f}" for f in ("source", "method", "samples") if getattr(c, f)]
    return ", ".join(parts) + (f"; see {', '.join(more)}" if more else "")


def opcount_text(op) -> str:
    """'OpCount 'matmul_4096x4096x4096_fp16': 137 GFLOP fp16 tensor, 101 MB, AI 1365
    FLOP/B (derived; compulsory traffic)': one op's FLOP (its precision and the unit it
    runs on), bytes and AI, derived by rooflab's formulas under the byte model named by
    its first clause (the whole of it in .byte_model)."""
    math = f"{op.precision} {op.unit}" if op.unit else op.precision
    model = op.byte_model.partition(":")[0]
    return (f"OpCount '{op.name}': {si(op.flop, 'FLOP')} {math}, {si(op.bytes, 'B')}, "
            f"AI {fmt_ai(op.ai)} FLOP/B ({DERIVED}; {model})")
