"""A lost CUDA context, and leaving probe stages out.

An illegal memory access (a wrong Triton index, a bad `_scaled_mm` call) is sticky: the
process's CUDA context is gone and every later CUDA call in it raises the same error. After
a stage raises, one synchronize tells the two cases apart; once the context is lost the
later stages are skipped with the reason (their tracebacks would only repeat the first),
and ROOFLAB_GPU_SKIP_STAGES lets a fresh process run without the stage that lost it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ...errors import InputError

SKIP_ENV = "ROOFLAB_GPU_SKIP_STAGES"
# Not a stage: every stage runs without its Triton kernels (torch's figures stay).
TRITON = "triton"
# How torch and Triton word a CUDA runtime error: torch raises RuntimeError "CUDA error:
# an illegal memory access was encountered" (torch.AcceleratorError, a RuntimeError, since
# torch 2.8); Triton's driver "Triton Error [CUDA]: ..."; the driver API's names
# CUDA_ERROR_*.
CUDA_ERROR_MARKS = ("CUDA error", "Triton Error [CUDA]", "CUDA_ERROR_", "cudaError")


def looks_like_cuda_error(exc: BaseException) -> bool:
    """A CUDA runtime error by its type's name or its message (not an OOM, not Python's)."""
    return (type(exc).__name__ == "AcceleratorError"
            or any(mark in str(exc) for mark in CUDA_ERROR_MARKS))


def context_lost(torch, dev) -> str | None:
    """After a step raised: None while the device still answers a synchronize (or on
    PyTorch's CPU device, which has no context to lose), else the first line of the CUDA
    error the synchronize raised."""
    if getattr(dev, "type", None) != "cuda":
        return None
    try:
        torch.cuda.synchronize(dev)
    except Exception as exc:  # noqa: BLE001 — anything else is not a lost context
        if looks_like_cuda_error(exc):
            return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return None


def lost_reason(stage: str, line: str) -> str:
    """What `skipped` says of each stage after the one that lost the context."""
    return f"CUDA context lost in {stage}: {line}; a fresh process is needed"


def rerun_hint(stage: str, line: str, device: str) -> str:
    """Which stage lost the context and how to run the probe without it (the one stderr
    line of `rooflab probe`, and its error when nothing was measured)."""
    return (f"CUDA context lost in '{stage}' ({line}); the later stages were skipped: "
            f"rerun without it: {SKIP_ENV}='{stage}' rooflab probe --device {device} ...")


def skip_stages(names: Iterable[str], environ: Mapping[str, str] | None = None
                ) -> frozenset[str]:
    """The stages ROOFLAB_GPU_SKIP_STAGES leaves out ("compute: vector,memory: sweep";
    "triton" for no Triton kernels); an unknown name is refused with the list."""
    raw = (os.environ if environ is None else environ).get(SKIP_ENV, "")
    words = [w.strip() for w in raw.split(",") if w.strip()]
    known = (*names, TRITON)
    unknown = [w for w in words if w not in known]
    if unknown:
        raise InputError(f"{SKIP_ENV}: unknown stage {', '.join(repr(w) for w in unknown)}; "
                         f"the stages are {', '.join(repr(k) for k in known)} (comma-"
                         f"separated); fix or unset it")
    return frozenset(words)
