"""Analytic FLOP and byte counts of ops and of transformer inference (pure functions).

The submodules load on first use, so `import rooflab; rooflab.workloads.ops.matmul(...)`
works without `from rooflab.workloads import ops` and `import rooflab` stays light:

    ops    FLOP and compulsory bytes of single ops (matmul, elementwise, conv, ...)
    count  OpCount, the value those functions return
    llm    transformer inference: configs, decode/prefill steps, footprints, sweeps

(torch_rules, imported by name: the FLOP/byte rules of PyTorch ops shared by the live
counter, bench.torch_count, and the trace rules, ingest.torch_ops.)
"""

from importlib import import_module

_SUBMODULES = ("ops", "count", "llm")

__all__ = list(_SUBMODULES)


def __getattr__(name: str):
    # PEP 562: importing a submodule also binds it here, so this runs once per name
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
