"""s26 fC: containers' memory.

1. `llm --on PROFILE` judged a model against the host's RAM recorded in the profile even
   when the probe ran under a container's 4 GiB: the probe now records the limit it ran
   under (host.memory_limit_bytes, memory_limit.memory_cap) and llm uses it, naming it.
2. The cgroup walk maps /proc/self/cgroup's path onto the mount through mountinfo's root
   (a bind-mounted subtree: the leaf under it was missed), ignores paths outside the
   namespace ('..'), and the smallest limit on the path wins (v2: leaf "max", parent set).
3. `ulimit -v` (RLIMIT_AS) bounds the probe's and bench's arrays too, less the address
   space the process has mapped (VmSize, measured once numba's pool has started).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from fake_sysfs import mountinfo_line, write_cgroup

from rooflab.cli.main import main
from rooflab.hardware import address_space as asp
from rooflab.hardware import host
from rooflab.hardware.cgroup import controller_dirs, mount_roots
from rooflab.hardware.memory_limit import (
    MemoryLimit,
    address_space_limit,
    memory_cap,
    memory_limit,
    usable_memory,
)

MiB, GiB = 2**20, 2**30
V1_UNLIMITED = "9223372036854771712"


def _proc(tmp_path, text):
    p = tmp_path / "proc_self_cgroup"
    p.write_text(text)
    return p


# --- 2: the walk -------------------------------------------------------------------------
def test_v2_leaf_max_and_a_parent_s_limit_is_seen(tmp_path):
    # systemd's view (cgroupns=host, a user session): the scope says max, the user slice
    # holds 4 GiB with 1 GiB charged; the slice above says max
    root = tmp_path / "cg"
    write_cgroup(root, "user.slice/user-1000.slice/session-3.scope", memory_max="max",
                 memory_current=str(GiB // 4))
    write_cgroup(root, "user.slice/user-1000.slice", memory_max=str(4 * GiB),
                 memory_current=str(GiB))
    write_cgroup(root, "user.slice", memory_max="max", memory_current=str(2 * GiB))
    proc = _proc(tmp_path, "0::/user.slice/user-1000.slice/session-3.scope\n")
    lim = memory_limit(proc, root, address_space=None, mounts={})
    assert (lim.limit, lim.usage, lim.free) == (4 * GiB, GiB, 3 * GiB)
    assert lim.source == str(root / "user.slice/user-1000.slice/memory.max")


def test_the_smallest_limit_on_the_path_wins_for_the_cap(tmp_path):
    # pod 2 GiB (1.5 GiB used), container 3 GiB (100 MiB used): the fit's cap is the
    # least limit, 2 GiB; the sizing's bound the least free, the pod's 512 MiB
    root = tmp_path / "cg"
    write_cgroup(root, "kubepods/pod1", memory_max=str(2 * GiB),
                 memory_current=str(3 * GiB // 2))
    write_cgroup(root, "kubepods/pod1/ctr", memory_max=str(3 * GiB),
                 memory_current=str(100 * MiB))
    proc = _proc(tmp_path, "0::/kubepods/pod1/ctr\n")
    assert memory_cap(proc, root, address_space=None, mounts={}).limit == 2 * GiB
    assert memory_limit(proc, root, address_space=None, mounts={}).free == 512 * MiB


def test_mountinfo_root_maps_the_path_onto_a_bind_mounted_subtree(tmp_path):
    # docker under v1 (cgroupns=host) bind-mounts /docker/abc at .../memory; the process
    # sits in a child cgroup of it (/docker/abc/job) whose own 512 MiB limit the old walk
    # missed: it tried memory/docker/abc/job, memory/docker/abc, memory/docker, memory
    root = tmp_path / "cg"
    mount = write_cgroup(root, "memory", memory_limit_in_bytes=str(2 * GiB),
                         memory_usage_in_bytes=str(300 * MiB),
                         memory_stat=f"hierarchical_memory_limit {2 * GiB}")
    write_cgroup(root, "memory/job", memory_limit_in_bytes=str(512 * MiB),
                 memory_usage_in_bytes=str(100 * MiB),
                 memory_stat=f"hierarchical_memory_limit {512 * MiB}")
    mounts = mount_roots(mountinfo_line(mount, "/docker/abc", "cgroup") + "\n")
    assert mounts == {str(mount): "/docker/abc"}
    proc = _proc(tmp_path, "4:memory:/docker/abc/job\n")
    lim = memory_limit(proc, root, address_space=None, mounts=mounts)
    assert (lim.limit, lim.usage) == (512 * MiB, 100 * MiB)
    assert lim.source == str(mount / "job" / "memory.limit_in_bytes")
    dirs = [d for d, _ in controller_dirs(proc.read_text(), root, "memory", mounts=mounts)]
    assert dirs == [mount / "job", mount]


def test_mount_roots_reads_this_kind_of_mountinfo():
    text = textwrap.dedent("""\
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        29 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
        """)
    assert mount_roots(text) == {"/sys/fs/cgroup/memory": "/",
                                 "/sys/fs/cgroup/unified": "/"}


def test_a_path_outside_the_namespace_has_no_ancestors_here(tmp_path):
    # '/../sibling': the cgroup is beside the namespace's root, whose mount is no
    # ancestor of it (Go's runtime gives up the same way); '..' must not climb out
    root = tmp_path / "cg"
    write_cgroup(root, memory_max=str(GiB), memory_current=str(MiB))
    proc = _proc(tmp_path, "0::/../sibling\n")
    assert memory_limit(proc, root, address_space=None, mounts={}) is None


def test_a_private_namespace_s_parent_stays_unseen(tmp_path):
    # cgroupns=private (docker's v2 default): the mount is the container's own cgroup;
    # its parent's limit is in no file inside, which docs/probe.md says
    root = tmp_path / "cg"
    write_cgroup(root, memory_max="max", memory_current=str(MiB))
    assert memory_limit(_proc(tmp_path, "0::/\n"), root, address_space=None,
                        mounts={}) is None


# --- 3: `ulimit -v` ----------------------------------------------------------------------
def test_vm_size_with_the_pool_started(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmPeak:\t  600000 kB\nVmSize:\t  552052 kB\n"
                      "VmRSS:\t  174044 kB\n")
    assert asp.vm_size(status.read_text()) == 552052 * 1024
    started = []
    lim = address_space_limit(status=status, soft=2 * GiB,
                              pool=lambda n: started.append(n) or 2)
    assert started == [None]   # the whole pool is started before VmSize is read
    assert lim.kind == "address space" and (lim.limit, lim.usage) == (2 * GiB, 552052 * 1024)
    assert lim.describe() == (f"`ulimit -v` allows this process 2 GiB of address space "
                              f"(RLIMIT_AS; VmSize in {status}, numba's pool of 2 threads "
                              f"started), 539 MiB of it taken")
    assert lim.named == "`ulimit -v` (RLIMIT_AS, address space)"
    # no cap: nothing is started or read
    assert address_space_limit(status=status, soft=None, pool=lambda n: 1 / 0) is None
    assert address_space_limit(status=tmp_path / "none", soft=GiB, pool=lambda n: 0) is None


def test_the_least_free_of_cgroup_and_address_space_bounds_the_arrays(tmp_path):
    root = tmp_path / "cg"
    write_cgroup(root, memory_max=str(4 * GiB), memory_current=str(GiB))
    proc = _proc(tmp_path, "0::/\n")
    space = MemoryLimit(2 * GiB, 600 * MiB, "RLIMIT_AS", kind="address space")
    lim = memory_limit(proc, root, address_space=space, mounts={})
    assert lim is space and usable_memory(20 * GiB, lim) == 1448 * MiB
    assert memory_limit(proc, root, address_space=None, mounts={}).free == 3 * GiB


def test_bench_names_ulimit_v_when_it_binds():
    from rooflab.bench import kernel_runner as kr
    from rooflab.errors import InputError

    k = kr.kernel("load")
    space = MemoryLimit(int(1.5 * GiB), 560 * MiB, "RLIMIT_AS", kind="address space")
    with pytest.raises(InputError) as err:
        kr.check_memory(k, kr.elements(k, GiB), 1, limit=space, avail=20 * GiB)
    # 1536 - 560 - 64 MiB of headroom = 912 MiB a thread
    assert "`ulimit -v` allows this process 1.5 GiB of address space" in str(err.value)
    assert "at most 912 MiB per thread fits" in str(err.value)


def _run_py(code: str, env: dict | None = None, limit: int | None = None):
    def cap():
        if limit:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=full_env, preexec_fn=cap)


def test_vm_size_read_after_start_pool_holds_the_pool():
    pytest.importorskip("numba")
    # numba.get_num_threads() marks the pool launched, but OpenMP starts its threads at
    # the first parallel loop: measured here, 4 threads took 363 MiB of address space
    # then (72 MiB each: an 8 MiB stack and a 64 MiB malloc arena)
    code = textwrap.dedent("""\
        import numba
        from rooflab.hardware import address_space as asp
        def vm():
            return asp.vm_size(open("/proc/self/status").read())
        before = vm()
        assert asp.start_pool(1) == 1   # bench --threads 1: one thread, not the pool
        one = vm() - before
        threads = asp.start_pool()
        started = vm()
        @numba.njit(parallel=True)
        def work(n):
            s = 0.0
            for i in numba.prange(n):
                s += i
            return s
        work(10**6)
        print(threads, one, started - before, vm() - started)
        """)
    out = _run_py(code, {"NUMBA_NUM_THREADS": "4"})
    assert out.returncode == 0, out.stderr[-2000:]
    threads, one, pool, after = map(int, out.stdout.split())
    assert threads == 4 and pool >= 4 * 72 * MiB and pool - one >= 3 * 72 * MiB
    assert after < 64 * MiB, after   # a later parallel kernel: its own code, no new threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")
def test_bench_under_ulimit_v_is_refused_before_allocating(tmp_path):
    pytest.importorskip("numba")
    # before: OpenBLAS failed to start its threads and the run ended "interrupted"
    out = _run_py("import sys; from rooflab.cli.main import main; sys.exit(main(["
                  "'bench', '--kernel', 'load', '--size', '1GiB', '--threads', '1']))",
                  limit=1500 * 1000 * 1024)
    assert out.returncode == 2, out.stderr[-2000:]
    line = [x for x in out.stderr.splitlines() if x.startswith("error:")][0]
    assert line.startswith("error: --size 1 GiB x 1 thread needs 1 GiB of arrays; "
                           "`ulimit -v` allows this process 1.43 GiB of address space")
    assert "smaller --size" in line and out.stdout == ""


# --- 1: llm against the limit the profile was probed under --------------------------------
def test_detect_host_records_the_limit(monkeypatch):
    lim = MemoryLimit(4 * GiB, GiB, "/sys/fs/cgroup/memory.max")
    monkeypatch.setattr(host, "memory_cap", lambda: lim)
    d = host.detect_host().to_dict()
    assert d["memory_limit_bytes"] == 4 * GiB
    assert d["memory_limit_source"] == "/sys/fs/cgroup/memory.max, this process's cgroup"
    monkeypatch.setattr(host, "memory_cap", lambda: None)
    d = host.detect_host().to_dict()
    assert "memory_limit_bytes" in d and d["memory_limit_bytes"] is None


def _profile(tmp_path, **host_extra):
    from dataclasses import replace

    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import MachineProfile, save_profile

    path = tmp_path / "cpu.json"
    roof = replace(lookup_roof("Intel Xeon Platinum 8480+"), name="box measured")
    save_profile(path, MachineProfile(
        host={"name": "box", "memory_bytes": 25_276_059_648,
              "memory_available_bytes": 23_400_000_000, **host_extra},
        nominal=roof, created="2026-12-02T12:00:00+00:00"))
    return str(path)


def _llm(capsys, *args):
    assert main(["llm", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_llm_fits_the_model_in_the_container_s_limit(capsys, tmp_path):
    # TinyLlama at context 639, as test_llm_review18d G: (4 GiB - 2,200,096,768 weights -
    # 13,759,488 prefill activations) / 14,523,392 B a sequence = 2,081,111,040 /
    # 14,523,392 = 143.3 -> 143 (the host's 25.3 GB gave 1587)
    on = _profile(tmp_path, memory_limit_bytes=4 * GiB,
                  memory_limit_source="/sys/fs/cgroup/memory.max, this process's cgroup")
    fp = _llm(capsys, "tinyllama-1.1b", "--on", on, "--phase", "decode")["footprint"]
    assert fp["device_bytes"] == 4 * GiB and fp["max_batch"] == 143
    assert main(["llm", "tinyllama-1.1b", "--on", on, "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"the device memory is the limit {on} was probed under: 4.29 GB "
            f"(/sys/fs/cgroup/memory.max, this process's cgroup), less than the host's "
            f"25.3 GB of RAM") in out
    assert "is the host's RAM as" not in out
    # --memory still wins
    fp = _llm(capsys, "tinyllama-1.1b", "--on", on, "--phase", "decode", "--memory",
              "16GB")["footprint"]
    assert fp["device_bytes"] == 16e9


def test_llm_says_no_limit_where_the_probe_saw_none(capsys, tmp_path):
    on = _profile(tmp_path, memory_limit_bytes=None, memory_limit_source=None)
    fp = _llm(capsys, "tinyllama-1.1b", "--on", on, "--phase", "decode")["footprint"]
    assert fp["device_bytes"] == 25_276_059_648 and fp["max_batch"] == 1587
    assert main(["llm", "tinyllama-1.1b", "--on", on, "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "it was probed under no cgroup or `ulimit -v` limit" in out


def test_the_recorded_cap_starts_no_pool(monkeypatch, tmp_path):
    # detect_host runs in every verb: its cap needs `ulimit -v`'s limit, not VmSize, so
    # it must not start numba's pool (a compile, and threads) as the sizing does
    from rooflab.hardware import memory_limit as ml

    started = []
    monkeypatch.setattr(asp, "rlimit_as", lambda: 2 * GiB)
    monkeypatch.setattr(asp, "start_pool", lambda n=None: started.append(n) or 4)
    real = asp.address_space
    monkeypatch.setattr(ml, "address_space",
                        lambda **kw: real(**{"pool": asp.start_pool, **kw}))
    none = tmp_path / "absent"
    cap = memory_cap(none, tmp_path, mounts={})
    assert (cap.limit, cap.kind, started) == (2 * GiB, "address space", [])
    lim = memory_limit(none, tmp_path, mounts={}, threads=3)
    assert lim.kind == "address space" and started == [3]
