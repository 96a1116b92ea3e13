"""s24 h1 F1: the probe sized its DRAM working set for every team size 1..N (suite._probe
passed no `threads`), and pool_bytes counted two huge pages per thread and slot where
bandwidth.ArrayPool rounds each row up to one and adds one per slot. Under a cgroup memory
limit on a many-CPU host the set shrank, or the probe refused to start, where the real
team's arrays fit."""

from __future__ import annotations

import numpy as np
import pytest

from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.memory_limit import MemoryLimit
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import sweep_sizes_for
from rooflab.probe.cpu.working_set import dram_working_set, pool_bytes

MiB, GiB = 2**20, 2**30


def _allocated(arr: np.ndarray) -> int:
    """Bytes of the buffer a view was cut from (placed's raw array)."""
    while arr.base is not None:
        arr = arr.base
    return arr.nbytes


@pytest.mark.parametrize("ws_total, threads", [(64 * MiB, 2), (96 * MiB, 3)])
def test_pool_bytes_is_what_the_real_pool_allocates(ws_total, threads):
    pytest.importorskip("numba")
    spec = get_mode("quick")
    top = sweep_sizes_for(spec, ws_total, threads)[-1]
    pool = bw.ArrayPool(top)   # as suite._measure builds it
    for kernel in bw.STREAM.values():   # every kernel at the sweep's largest size
        pool.get(kernel.arrays - 1, threads, bw.elements_for(kernel, top))
    real = sum(_allocated(pool.rows(j, threads, 64)) for j in range(3))
    # 64 MiB on 2 threads: top 40 MiB a thread; rows of 40, 20 and 13.3 -> 14 MiB (whole
    # 2 MiB huge pages), one huge page per slot: 2 x 74 + 3 x 2 = 154 MiB (HEAD: 170.7)
    # 96 MiB on 3 threads: 32 MiB a thread, the last two points 32 and 40 MiB; rows of
    # 40, 20, 14 MiB: 3 x 74 + 6 = 228 MiB
    assert real == {2: 154, 3: 228}[threads] * MiB
    assert pool_bytes(spec, ws_total, threads) == real


def _host(cpus: int, l3s: int) -> HostInfo:
    return HostInfo("EPYC", "AuthenticAMD", 25, 17, frozenset(), cpus // 2, cpus,
                    Caches(32 * 1024, MiB, 32 * MiB, l3_instances=l3s, source="sysfs"),
                    256 * GiB, 200 * GiB, None, "Linux", "x86_64")


def test_the_set_is_sized_for_the_team_that_runs(monkeypatch):
    # the review's case: 16 CPUs, one 32 MiB L3, 1.5 GiB with 200 MiB used (1336 MiB
    # free). 16 threads: 12 x 32 = 384 MiB, 24 MiB a thread, top point 32 MiB (grid) ->
    # rows 32 + 16 + 10.7 -> 12 MiB: 16 x 60 + 6 = 966 MiB, + 70 MiB fits. Sized for every
    # team 1..16, as _probe asked (the largest is 11 threads': 34.9 MiB a thread, whose
    # sweep runs to the grid's 64 MiB: 11 x (64 + 32 + 22) + 6 = 1304 MiB), the set shrank
    # to 345 MiB with a cache-hit note
    monkeypatch.setattr("rooflab.probe.cpu.affinity.allowed_cpus", lambda: tuple(range(16)))
    spec = get_mode("quick")
    lim = MemoryLimit(1536 * MiB, 200 * MiB, "/sys/fs/cgroup/memory.max")
    assert pool_bytes(spec, 384 * MiB, 16) == 966 * MiB
    assert dram_working_set(_host(16, 1), spec, lim, threads=16) == (384 * MiB, [])


def test_probe_passes_its_team_to_the_working_set(monkeypatch):
    pytest.importorskip("numba")
    from rooflab.probe.cpu import suite

    seen = {}

    class Stop(Exception):
        pass

    def fake(host, spec, limit=..., threads=None):
        seen["threads"] = threads
        raise Stop

    monkeypatch.setattr(suite, "dram_working_set", fake)
    host = _host(16, 1)
    with pytest.raises(Stop):
        suite._probe(get_mode("quick"), (1, 4), host, tuple(range(16)), None, None, None,
                     0.0)
    assert seen["threads"] == 4   # the largest count gets the pool; HEAD passed None
