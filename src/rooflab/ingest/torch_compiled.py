"""torch.compile'd code in a profiler trace: its regions, their time, and what to say.

A call of a compiled function records `Torch-Compiled Region: F/G` (cpu_op) around a
`## Call CompiledFxGraph <hash> ##` annotation; Inductor's fused kernels inside it are no
aten ops, so they carry no `Input Dims` and no shape rule applies, although the trace was
recorded with record_shapes=True (review 16b #14). The aten ops the generated code calls
(on the CPU its extern addmm/mm/convolution, with their out= tensor) are recorded with
shapes and counted (review r2 F5); a trace with nothing else is the error below.
"""

from __future__ import annotations

from ..units import fmt_seconds

REGION = "Torch-Compiled Region"
GRAPH = "CompiledFxGraph"
HOW_TO_COUNT = ("profile the eager model (without torch.compile) for a per-op roof, or "
                "time the compiled one with rooflab.measure(f, x, flop=..., bytes=...) "
                "(the eager ops' counts overstate the bytes of the fused kernels)")


def compiled_regions(events: list) -> dict[str, tuple[int, float]]:
    """(calls, seconds) by compiled region name; the CompiledFxGraph calls when a trace has
    graph calls but no region events. Empty for eager code."""
    regions: dict[str, tuple[int, float]] = {}
    graphs: dict[str, tuple[int, float]] = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        name = str(e.get("name", ""))
        into = regions if name.startswith(REGION) else graphs if GRAPH in name else None
        if into is None:
            continue
        try:
            seconds = float(e.get("dur", 0.0)) * 1e-6
        except (TypeError, ValueError):
            continue
        key = _short(name)
        calls, total = into.get(key, (0, 0.0))
        into[key] = (calls + 1, total + seconds)
    return regions or graphs


def _short(name: str) -> str:
    """'## Call CompiledFxGraph f4zocob2t5... ##' -> 'CompiledFxGraph f4zocob2'."""
    name = name.strip("# ").removeprefix("Call ")
    head, _, digest = name.partition(" ")
    return f"{head} {digest[:8]}" if head == GRAPH and digest else name


def regions_text(regions: dict[str, tuple[int, float]]) -> str:
    """'Torch-Compiled Region: 0/0 3 calls 106 ms, ...', longest first."""
    top = sorted(regions.items(), key=lambda kv: -kv[1][1])
    return ", ".join(f"{name} {calls} call{'s' if calls > 1 else ''} {fmt_seconds(s)}"
                     for name, (calls, s) in top[:4]) + (", ..." if len(top) > 4 else "")


def compiled_error(regions: dict[str, tuple[int, float]]) -> str:
    """Why a trace of compiled code has nothing to count, and what to do instead."""
    return (f"this trace is of torch.compile'd code ({regions_text(regions)}): Inductor's "
            f"generated kernels call no aten op, so the trace has no op shapes to count; "
            f"{HOW_TO_COUNT}")


def compiled_note(regions: dict[str, tuple[int, float]]) -> str:
    """The note for a trace that mixes counted eager ops with compiled regions."""
    return (f"torch.compile'd regions ({regions_text(regions)}) run Inductor kernels the "
            f"trace holds no shapes for: not counted, except aten ops they call; "
            f"{HOW_TO_COUNT}")
