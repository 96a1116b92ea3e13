"""Review s21 r8 F1: gpu_check.json's `kernel_resources` reads each compiled Triton kernel's
shared memory where that Triton keeps it. Triton 3.x has no `CompiledKernel.shared`; the
size is in `metadata.shared` (a namedtuple). Triton 2.x set `shared` on the kernel, with
`metadata` a dict."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

triton = pytest.importorskip("triton")

from rooflab.probe.gpu import kernels  # noqa: E402


def _compile_for_sm90(fn, signature: dict, warps: int):
    """Offline compile for sm_90, with no GPU (benchmarks/gpu_kernels_sass.py does the same;
    the wheel carries ptxas). Skips where this Triton has no such route."""
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        src = ASTSource(fn=fn, signature=signature, attrs={}, constexprs={})
        return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": warps, "enable_fp_fusion": True})
    except Exception as exc:  # noqa: BLE001 — no offline compile here: nothing to check
        pytest.skip(f"no offline sm_90 compile with triton {triton.__version__}: {exc}")


def test_a_real_compiled_kernels_shared_memory_is_recorded(monkeypatch):
    # The empty kernel uses no shared memory: 0 B, read from metadata. The old code looked
    # for `k.shared`, which this object lacks, and recorded None.
    compiled = _compile_for_sm90(kernels.empty_kernel, {"x_ptr": "*fp32"}, 1)
    monkeypatch.setattr(kernels, "COMPILED", {"empty": compiled})
    got = kernels.resources()
    # Not launched, so no registers or spills yet (the first launch loads the binary).
    assert got == {"triton": triton.__version__,
                   "empty": {"n_regs": getattr(compiled, "n_regs", None),
                             "n_spills": getattr(compiled, "n_spills", None), "shared": 0}}


def test_shared_memory_is_read_from_each_tritons_layout():
    # Triton 3.x: metadata namedtuple only. 131,072 B = Triton 3.9's int8 GEMM tile on sm_90.
    v3 = SimpleNamespace(n_regs=194, n_spills=0, metadata=SimpleNamespace(shared=131072))
    assert kernels.shared_bytes(v3) == 131072
    # Triton 2.x: on the kernel, with a dict beside it; the attribute is preferred.
    v2 = SimpleNamespace(shared=49152, metadata={"shared": 49152, "num_warps": 4})
    assert kernels.shared_bytes(v2) == 49152
    assert kernels.shared_bytes(SimpleNamespace(metadata={"shared": 16384})) == 16384
    # Neither: recorded as unknown, never raised.
    assert kernels.shared_bytes(SimpleNamespace()) is None
