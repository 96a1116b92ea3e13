"""s24 r2 F1/F8: a cgroup memory limit (docker --memory, k8s limits.memory, Slurm --mem)
bounds the probe's DRAM working set and `bench --kernel --size`; MemAvailable inside a
container is the host's, and past the limit the OOM killer ends the run with no message."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rooflab.errors import InputError, ProbeError
from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.memory_limit import (
    MemoryLimit,
    memory_limit,
    parse_meminfo,
    usable_memory,
)
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import dram_working_set
from rooflab.probe.cpu.working_set import pool_bytes

MiB, GiB = 2**20, 2**30
V1_UNLIMITED = "9223372036854771712"   # what v1 prints for "no limit"


def _write(d, **files):
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name.replace("_", ".", 1)).write_text(text + "\n")


def _proc(tmp_path, text):
    p = tmp_path / "proc_self_cgroup"
    p.write_text(text)
    return p


# --- reading the limit ---------------------------------------------------------------------
def test_v2_limit_less_usage_less_inactive_file(tmp_path):
    root = tmp_path / "cg"
    _write(root / "kubepods" / "pod1" / "ctr", memory_max=str(GiB),
           memory_current=str(300 * MiB),
           memory_stat=f"anon {150 * MiB}\nfile {150 * MiB}\ninactive_file {100 * MiB}")
    _write(root / "kubepods", memory_max="max", memory_current=str(5 * GiB))
    lim = memory_limit(_proc(tmp_path, "0::/kubepods/pod1/ctr\n"), root)
    # 300 MiB charged, 100 MiB of it inactive file cache (reclaimed before an OOM kill)
    assert lim == MemoryLimit(GiB, 200 * MiB, str(root / "kubepods/pod1/ctr/memory.max"))
    assert lim.free == 824 * MiB
    assert lim.describe() == (f"this process's cgroup allows 1 GiB "
                              f"({root / 'kubepods/pod1/ctr/memory.max'}), 200 MiB of it in use")


def test_v2_tightest_ancestor_wins(tmp_path):
    # the pod's 2 GiB holds 100 MiB; its parent's 1 GiB is shared with siblings: 900 MiB used
    root = tmp_path / "cg"
    _write(root / "pod" / "ctr", memory_max=str(2 * GiB), memory_current=str(100 * MiB))
    _write(root / "pod", memory_max=str(GiB), memory_current=str(900 * MiB))
    lim = memory_limit(_proc(tmp_path, "0::/pod/ctr\n"), root)
    assert (lim.limit, lim.usage, lim.free) == (GiB, 900 * MiB, 124 * MiB)
    assert lim.source == str(root / "pod" / "memory.max")


def test_v1_memory_controller_and_the_container_mount(tmp_path):
    root = tmp_path / "cg"
    # a container's view: /proc/self/cgroup names the host path, the mount is its own cgroup
    _write(root / "memory", memory_limit_in_bytes=str(GiB),
           memory_usage_in_bytes=str(400 * MiB),
           memory_stat=f"cache {200 * MiB}\ntotal_inactive_file {150 * MiB}")
    lim = memory_limit(_proc(tmp_path, "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n"
                                       "0::/\n"), root)
    assert (lim.limit, lim.usage) == (GiB, 250 * MiB)
    assert lim.source == str(root / "memory" / "memory.limit_in_bytes")


def test_no_limit_reads_as_none(tmp_path):
    root = tmp_path / "cg"
    _write(root / "memory" / "job", memory_limit_in_bytes=V1_UNLIMITED,
           memory_usage_in_bytes=str(MiB))
    _write(root, memory_max="max", memory_current=str(MiB))
    assert memory_limit(_proc(tmp_path, "4:memory:/job\n"), root) is None
    assert memory_limit(_proc(tmp_path, "0::/\n"), root) is None
    assert memory_limit(tmp_path / "no-such-file", root) is None


def test_usable_is_the_smaller_of_memavailable_and_the_free_limit():
    avail = parse_meminfo("MemTotal:       24684144 kB\nMemAvailable:   20971520 kB\n")[1]
    assert avail == 20 * GiB
    lim = MemoryLimit(GiB, 200 * MiB, "/sys/fs/cgroup/memory.max")
    assert usable_memory(avail, lim) == 824 * MiB
    assert usable_memory(avail, None) == 20 * GiB and usable_memory(None, None) is None


# --- the probe's DRAM working set ----------------------------------------------------------
def _host(avail=20 * GiB) -> HostInfo:
    # this VM: 2 CPUs, one 32 MiB L3; the container sees the host's MemAvailable
    return HostInfo("AMD EPYC", "AuthenticAMD", 25, 1, frozenset(), 2, 2,
                    Caches(32 * 1024, MiB // 2, 32 * MiB, source="sysfs"), 24 * GiB, avail,
                    None, "Linux", "x86_64")


def test_the_unconstrained_quick_set_outgrows_a_1_gib_container():
    # the review's numbers: 12 x 32 MiB = 384 MiB; on 2 threads the sweep's last point is
    # 256 MiB a thread (4 KiB x 2^16), and the pool holds it for 1, 2 and 3 arrays, each
    # row rounded up to 2 MiB huge pages, one more per slot (s24 h1 F1):
    # 2 x (256 + 128 + 86) + 3 x 2 MiB = 946 MiB
    spec = get_mode("quick")
    assert dram_working_set(_host(), spec, None) == (384 * MiB, [])
    assert pool_bytes(spec, 384 * MiB, 2) == 2 * (256 + 128 + 86) * MiB + 3 * 2 * MiB


def test_a_1_gib_limit_shrinks_the_set_until_the_arrays_fit():
    spec = get_mode("quick")
    lim = MemoryLimit(GiB, 200 * MiB, "/sys/fs/cgroup/memory.max")
    ws, (note,) = dram_working_set(_host(), spec, lim, threads=2)
    # 5 % steps in whole MiB: 384, 364, 345, 327, 310, 294, 279, 265 MiB all reach the
    # 256 MiB/thread point (946 MiB of arrays); at 251 MiB (125.5 MiB a thread) the last
    # points are 128 MiB and 1.25 x 128 = 160 MiB: 2 x (160 + 80 + 54) + 3 x 2 = 594 MiB,
    # + 64 MiB of growth + the 512^2 GEMM's 6 MiB = 664 MiB <= the 824 MiB free
    assert ws == 251 * MiB
    assert pool_bytes(spec, ws, 2) == 2 * (160 + 80 + 54) * MiB + 3 * 2 * MiB
    assert note.startswith("DRAM working set shrunk from 384 MiB to 251 MiB: this "
                           "process's cgroup allows 1 GiB (/sys/fs/cgroup/memory.max), "
                           "200 MiB of it in use, and the probe's arrays take 594 MiB")
    assert "below 12x the last-level cache" in note
    # a 2 GiB limit holds the whole 384 MiB set (946 + 70 MiB < 1848 MiB free)
    assert dram_working_set(_host(), spec, MemoryLimit(2 * GiB, 200 * MiB, "m"), 2) == (
        384 * MiB, [])


def test_unknown_caches_keep_one_note_with_the_limit_s_size():
    # no cache sizes: --quick wants 512 MiB; at 256 MiB (128 MiB a thread, on the grid)
    # the arrays are 2 x (160 + 80 + 54) + 3 x 2 = 594 MiB, + 70 MiB <= 824 MiB free
    h = HostInfo("cpu", "GenuineIntel", 6, 85, frozenset(), 2, 2, Caches(source="unknown"),
                 24 * GiB, 20 * GiB, None, "Linux", "x86_64")
    lim = MemoryLimit(GiB, 200 * MiB, "/sys/fs/cgroup/memory.max")
    ws, (note,) = dram_working_set(h, get_mode("quick"), lim, threads=2)
    assert ws == 256 * MiB
    assert note.startswith("the OS reports no cache sizes; DRAM working set shrunk from "
                           "512 MiB to 256 MiB: this process's cgroup allows 1 GiB")
    assert "256 MiB may sit in a large L3" in note and "12x the last-level" not in note


def test_no_room_for_the_minimum_is_one_error_before_allocating():
    lim = MemoryLimit(GiB, 900 * MiB, "/sys/fs/cgroup/memory.max")   # 124 MiB free
    with pytest.raises(ProbeError) as err:
        dram_working_set(_host(), get_mode("quick"), lim, threads=2)
    text = str(err.value)
    # the 64 MiB minimum (2 x 32 MiB LLC) on 2 threads: 2 x (40 + 20 + 14) + 3 x 2 MiB of
    # arrays + 70 MiB = 224 MiB
    assert text.startswith("this process's cgroup allows 1 GiB (/sys/fs/cgroup/memory.max),"
                           " 900 MiB of it in use: too little for the DRAM sweep, which needs "
                           "at least a 64 MiB working set, about 224 MiB")
    assert "raise the limit" in text


def test_default_mode_budgets_torch_and_the_gemm():
    # default: 64 MiB + 3 x 8 x 1024^2 (24 MiB) + torch's 256 MiB = 344 MiB beside the pool
    lim = MemoryLimit(GiB, 200 * MiB, "/sys/fs/cgroup/memory.max")
    ws, (note,) = dram_working_set(_host(), get_mode("default"), lim, threads=2)
    assert pool_bytes(get_mode("default"), ws, 2) + 344 * MiB <= 824 * MiB
    assert "beside 344 MiB for the rest of the probe" in note


# --- bench --kernel --size -------------------------------------------------------------------
def test_bench_size_past_a_cgroup_limit_is_refused():
    from rooflab.bench import kernel_runner as kr

    k = kr.kernel("load")
    n = kr.elements(k, 2 * GiB)
    lim = MemoryLimit(GiB, 100 * MiB, "/sys/fs/cgroup/memory.max")
    with pytest.raises(InputError) as err:
        kr.check_memory(k, n, 1, limit=lim, avail=20 * GiB)
    assert str(err.value).startswith(
        "--size 2 GiB x 1 thread needs 2 GiB of arrays; this process's cgroup allows 1 GiB "
        "(/sys/fs/cgroup/memory.max), 100 MiB of it in use: give a smaller --size (at most "
        "860 MiB per thread fits")   # 924 MiB free - 64 MiB headroom
    # the host's MemAvailable binds where no limit is set; 2 threads need twice the arrays
    with pytest.raises(InputError, match=r"x 2 threads needs 4 GiB of arrays; only 3 GiB of "
                                         r"memory is available \(MemAvailable"):
        kr.check_memory(k, n, 2, limit=None, avail=3 * GiB)
    kr.check_memory(k, n, 1, limit=None, avail=3 * GiB)   # 2 GiB + 64 MiB fits in 3 GiB


def test_bench_allocates_only_the_kernel_s_streams(monkeypatch):
    pytest.importorskip("numba")
    from rooflab.bench import kernel_runner as kr
    from rooflab.probe.cpu import bandwidth as bw

    made = []
    real = bw.rows_of
    monkeypatch.setattr(bw, "rows_of", lambda t, n, fill=1.0: made.append(n) or real(t, n, fill))
    for name, streams in (("load", 1), ("copy", 2), ("stream", 3), ("triad", 4)):
        made.clear()
        kr.numba_call(kr.kernel(name), 64, 1)
        assert len(made) == streams, name   # `load` made 3 arrays: 6 GiB for --size 2GiB


def test_bench_cli_refuses_1000_gib_before_allocating(tmp_path):
    pytest.importorskip("numba")
    from rooflab.hardware.host import meminfo

    avail = meminfo()[1]
    if avail is None or avail > 900 * GiB:
        pytest.skip("needs /proc/meminfo and less than 900 GiB available")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "rooflab", "bench", "--kernel", "load",
                          "--size", "1000GiB", "--threads", "1"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("error: --size 1000 GiB x 1 thread needs 1000 GiB of arrays; ")
    assert "smaller --size" in line and out.stdout == ""
