"""What installs and runs off x86-64 Linux (review s23 r3 F7, F8, F9): the extras' markers
and the OS classifiers in pyproject.toml, the `probe --comm` ranks' USE_LIBUV on Windows
and what a libuv-less rendezvous failure says, and the CPUs the ranks share out where the
OS has no os.sched_getaffinity (macOS, Windows)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from packaging.requirements import Requirement  # pytest's own dependency

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10: the core's tomli
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

# pip's marker environment on each OS (the values `platform.system()` and `.machine()` give)
LINUX = {"platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.12",
         "sys_platform": "linux"}
LINUX_ARM = {**LINUX, "platform_machine": "aarch64"}
WINDOWS = {"platform_system": "Windows", "platform_machine": "AMD64",
           "python_version": "3.12", "sys_platform": "win32"}
MAC = {"platform_system": "Darwin", "platform_machine": "arm64", "python_version": "3.12",
       "sys_platform": "darwin"}


def _installed(extra: str, env: dict) -> set[str]:
    """The packages `pip install 'rooflab[extra]'` asks for on that OS."""
    out = set()
    for line in PROJECT["optional-dependencies"][extra]:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({**env, "extra": extra}):
            out.add(req.name)
    return out


def test_gpu_extra_asks_for_triton_on_linux_only():
    # triton publishes Linux wheels only: `rooflab[gpu]` failed on Windows and macOS
    assert _installed("gpu", LINUX) == {"torch", "triton", "nvidia-ml-py"}
    assert _installed("gpu", LINUX_ARM) == {"torch", "triton", "nvidia-ml-py"}
    assert _installed("gpu", WINDOWS) == {"torch", "nvidia-ml-py"}
    assert _installed("gpu", MAC) == {"torch", "nvidia-ml-py"}
    # the test extra kept its own, narrower marker
    assert "triton" not in _installed("test", LINUX_ARM)


def test_classifiers_name_the_operating_systems():
    classifiers = PROJECT["classifiers"]
    assert {"Operating System :: POSIX :: Linux", "Operating System :: MacOS",
            "Operating System :: Microsoft :: Windows"} <= set(classifiers)
    assert "Programming Language :: Python :: 3.10" in classifiers   # requires-python
    assert PROJECT["requires-python"] == ">=3.10"
    # an SPDX `license` excludes License :: classifiers (setuptools >= 77 refuses both)
    assert isinstance(PROJECT["license"], str)
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert len(classifiers) == len(set(classifiers))


def test_install_doc_says_what_installs_on_windows():
    text = (REPO / "docs" / "install.md").read_text()
    section = text.split("## Other platforms", 1)[1]
    assert "- **Windows**:" in section
    assert "triton is installed on Linux only" in section
    assert "USE_LIBUV=0" in section


def test_local_ranks_on_windows_do_without_libuv(monkeypatch):
    from rooflab.probe.comm.launch import rank_env

    monkeypatch.delenv("USE_LIBUV", raising=False)
    assert "USE_LIBUV" not in rank_env(1, 2, 29500, "/stage", 30.0)   # Linux: torch's own
    with monkeypatch.context() as m:
        m.setattr(os, "name", "nt")
        env = rank_env(1, 2, 29500, "/stage", 30.0)
        monkeypatch.setenv("USE_LIBUV", "1")   # the user's own choice stands
        mine = rank_env(1, 2, 29500, "/stage", 30.0)
    assert (env["USE_LIBUV"], env["RANK"], env["MASTER_PORT"]) == ("0", "1", "29500")
    assert mine["USE_LIBUV"] == "1"


def test_libuv_failure_is_not_blamed_on_master_addr():
    from rooflab.probe.comm.rendezvous import failed_message

    exc = RuntimeError("use_libuv was requested but PyTorch was build without libuv support")
    line = failed_message(exc, 0, "127.0.0.1", "29500")
    assert line == (
        "rank 0 could not start the process group's store at 127.0.0.1:29500: use_libuv was "
        "requested but PyTorch was build without libuv support: this PyTorch build has no "
        "libuv (PyTorch for Windows); set USE_LIBUV=0 for every rank (`rooflab probe --comm "
        "--nproc N` sets it for its own ranks) and rerun")
    assert "MASTER_ADDR" not in line
    # any other failure keeps its advice
    other = failed_message(RuntimeError("connection refused"), 1, "10.0.0.1", "29500")
    assert "check MASTER_ADDR and MASTER_PORT" in other


@pytest.fixture
def no_affinity(monkeypatch):
    """macOS and Windows: no os.sched_getaffinity; os.cpu_count() is 8 logical CPUs."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)


def test_gloo_ranks_share_every_cpu_without_an_affinity_call(no_affinity):
    from rooflab.probe.comm import cluster

    # 8 CPUs among 2 local ranks: 4 torch threads each (it was 1 on macOS and Windows)
    assert cluster.gloo_threads(2) == 4
    assert cluster.gloo_threads(3) == 2
    assert cluster.gloo_threads(16) == 1


def test_gloo_threads_follow_the_affinity_mask(monkeypatch):
    from rooflab.probe.comm import cluster

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert cluster.gloo_threads(2) == 3   # taskset's 6 CPUs, not the host's 64


def test_rank_roof_and_gloo_count_the_same_cpus(no_affinity, monkeypatch):
    import rooflab.probe.cpu as cpu_probe
    from rooflab.probe.comm import cluster, device

    seen = {}
    monkeypatch.setattr(cpu_probe, "probe_cpu",
                        lambda mode, threads: seen.setdefault("threads", threads))
    device.rank_profile(None, "cpu", "quick", 2)
    assert seen["threads"] == cluster.gloo_threads(2) == 4
