"""Under `ulimit -v` the probe budgets torch's import by the address space it maps (470 MiB,
measured: hardware/address_space.py), not its ~190 MB resident; past the cap the import
aborts the process with std::bad_alloc and no message (fixer fC's run, session 26). The
error then says how to lift *that* limit, not a container's."""

from __future__ import annotations

import sys

import pytest

from rooflab.errors import ProbeError
from rooflab.hardware.address_space import TORCH_ADDRESS_SPACE
from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.memory_limit import MemoryLimit
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.working_set import (
    PROCESS_GROWTH,
    TORCH_BYTES,
    dram_working_set,
    process_growth,
)

MiB = 2**20
DEFAULT = get_mode("default")          # measures bf16/fp16/int8 through torch
GEMM = 3 * 8 * 1024**2                 # its largest fp64 GEMM's three matrices


def test_torch_counts_by_address_space_under_ulimit_v(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert process_growth(DEFAULT) == PROCESS_GROWTH + GEMM + TORCH_BYTES
    assert process_growth(DEFAULT, "address space") == PROCESS_GROWTH + GEMM + 470 * MiB
    assert TORCH_ADDRESS_SPACE == 470 * MiB


def test_a_loaded_torch_is_in_vmsize_already(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", object())
    assert process_growth(DEFAULT, "address space") == PROCESS_GROWTH + GEMM
    # the quick mode imports no torch at all
    assert process_growth(get_mode("quick"), "address space") == PROCESS_GROWTH + 3 * 8 * 512**2


def _host() -> HostInfo:
    return HostInfo("test cpu", "x", None, None, frozenset(), 2, 2,
                    Caches(32 * 2**10, 1 * MiB, 32 * MiB), 64 * 2**30, 16 * 2**30, None,
                    "os", "x86_64")


def test_the_error_names_ulimit_not_docker(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    # 600 MiB of address space left: the 64 MiB floor's arrays fit, torch's 470 MiB do not
    lim = MemoryLimit(limit=2000 * MiB, usage=1400 * MiB, source="ulimit -v",
                      kind="address space")
    with pytest.raises(ProbeError) as e:
        dram_working_set(_host(), DEFAULT, limit=lim, threads=1)
    said = str(e.value)
    assert "ulimit -v" in said and "docker" not in said
    cgroup = MemoryLimit(limit=2000 * MiB, usage=1950 * MiB, source="memory.max")
    with pytest.raises(ProbeError, match="docker run --memory"):
        dram_working_set(_host(), DEFAULT, limit=cgroup, threads=1)
