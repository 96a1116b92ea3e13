"""Review s23 r3 F7: install hints that work where the user is. numba/llvmlite publish no
riscv64 wheels, so `pip install 'rooflab[cpu]'` there tries an LLVM source build: the
missing-numba message says so. The `gpu` extra carries triton on Linux only, so the GPU
probe's "triton is not importable" names Triton's Windows port on Windows."""

from __future__ import annotations

import sys

from rooflab.errors import MissingDependency, install_reason
from rooflab.probe.gpu import context


def test_the_cpu_extra_on_risc_v_says_numba_has_no_wheels(monkeypatch):
    monkeypatch.setattr("platform.machine", lambda: "riscv64")
    assert "numba has no RISC-V wheels" in install_reason("cpu")
    assert "numba has no RISC-V wheels" in str(MissingDependency("numba", "cpu", ""))
    monkeypatch.setattr("platform.machine", lambda: "x86_64")
    assert install_reason("cpu") == ""


def test_the_triton_hint_names_the_windows_port_on_windows(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    assert context._triton_install() == "pip install triton-windows (Triton's Windows port)"
    monkeypatch.setattr(sys, "platform", "linux")
    assert context._triton_install() == "pip install 'rooflab[gpu]'"
