"""s24 h1 F5/F6/F4: under cgroup v1 docker mounts only the container's own memory cgroup,
so a limit on its parent (--cgroup-parent, a pod-level limit, a Slurm job above its step)
was on no visible path: memory_limit() said none and the OOM kill came back. v1's
memory.stat hierarchical_memory_limit carries it. The limit's words name "this process's
cgroup" (a Slurm job or a systemd slice as much as a container), the busy warning's
"1 thread leaves", and docs/probe.md the first touch's real chunk size."""

from __future__ import annotations

from pathlib import Path

from rooflab.hardware.memory_limit import MemoryLimit, memory_limit
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.flags import busy_start_note
from rooflab.probe.cpu.load import MachineLoad

MiB, GiB = 2**20, 2**30
V1_UNLIMITED = "9223372036854771712"


def _v1(tmp_path, limit_in_bytes: str, stat: str):
    """The container's view: /proc/self/cgroup names /docker/abc, but /sys/fs/cgroup/memory
    is that cgroup itself (the path does not exist under the mount)."""
    mount = tmp_path / "cg" / "memory"
    mount.mkdir(parents=True)
    (mount / "memory.limit_in_bytes").write_text(limit_in_bytes + "\n")
    (mount / "memory.usage_in_bytes").write_text(f"{300 * MiB}\n")
    (mount / "memory.stat").write_text(stat)
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text("12:cpuset:/docker/abc\n4:memory:/docker/abc\n")
    return memory_limit(proc, tmp_path / "cg"), mount


def test_a_parent_s_v1_limit_is_read_from_memory_stat(tmp_path):
    # the container unlimited, its parent at 1 GiB: 300 MiB charged, 100 MiB inactive file
    lim, mount = _v1(tmp_path, V1_UNLIMITED,
                     f"cache {200 * MiB}\nhierarchical_memory_limit {GiB}\n"
                     f"total_inactive_file {100 * MiB}\n")
    assert lim == MemoryLimit(GiB, 200 * MiB, f"{mount / 'memory.stat'} "
                              f"hierarchical_memory_limit, a parent's")
    assert lim.free == 824 * MiB
    assert lim.describe() == (f"this process's cgroup allows 1 GiB ({mount / 'memory.stat'} "
                              f"hierarchical_memory_limit, a parent's), 200 MiB of it in use")


def test_the_own_v1_limit_keeps_its_file_when_it_is_the_tightest(tmp_path):
    lim, mount = _v1(tmp_path, str(512 * MiB),
                     f"hierarchical_memory_limit {512 * MiB}\ntotal_inactive_file 0\n")
    assert lim == MemoryLimit(512 * MiB, 300 * MiB, str(mount / "memory.limit_in_bytes"))


def test_no_v1_limit_anywhere_is_none(tmp_path):
    lim, _ = _v1(tmp_path, V1_UNLIMITED, f"hierarchical_memory_limit {V1_UNLIMITED}\n")
    assert lim is None


def test_one_thread_leaves_free():
    # 8 CPUs all busy over 0.25 s; one thread leaves 7 free, the 8th is contended
    load = MachineLoad(1.0, 0.0, None, 8, 8, 1, 0.25, 0.0, 2.0, "fake")
    note = busy_start_note(load)
    assert ("other processes kept 8.0 of the 8 CPUs this process may run on busy, more "
            "than the 7 the probe's 1 thread leaves free (/proc/stat over 0.25 s)") in note
    two = MachineLoad(1.0, 0.0, None, 8, 8, 2, 0.25, 0.0, 2.0, "fake")
    assert "the 6 the probe's 2 threads leave free" in busy_start_note(two)


def test_the_doc_gives_the_first_touch_chunk_the_code_uses():
    doc = " ".join((Path(__file__).parents[1] / "docs" / "probe.md").read_text().split())
    assert bw.TOUCH_CHUNK == 4 * MiB and bw.TOUCH_CALL_S == 0.1
    assert ("first touch starts at 4 MiB of each thread's row a call and sizes later calls "
            "to about 0.1 s each") in doc
    assert "8 MiB of each thread's row" not in doc
    assert "`hierarchical_memory_limit`" in doc
