"""Review s23 r2 F6 and r3 F9 (identity part): the GPU probe's profile recorded the
machine's host name (`host.hostname`), which nothing reads and which a shared, checked-in
profile should not carry (the CPU probe's profile has none); and `probe --device
torch-cpu` named the CPU from /proc/cpuinfo itself ("aarch64" on Graviton, "AMD64 Family
25 Model 97 ..." on Windows) where `rooflab probe` names it with hardware.host.detect_host.
"""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from rooflab.hardware.host import Caches, HostInfo  # noqa: E402
from rooflab.probe.gpu.identity import identify  # noqa: E402

GRAVITON = HostInfo(
    cpu_model="Neoverse-V1", vendor="0x41", family=None, model=0xD40, flags=frozenset(),
    cores=64, threads=64,
    caches=Caches(l1d=64 << 10, l2=1 << 20, l3=32 << 20, source="sysfs"),
    memory_bytes=128 << 30, memory_available_bytes=120 << 30, hypervisor=None,
    os="Linux 6.1", machine="aarch64")


@pytest.fixture
def graviton(monkeypatch):
    monkeypatch.setattr("rooflab.hardware.host.detect_host", lambda *a, **k: GRAVITON)


def test_torch_cpu_device_is_named_and_sized_as_rooflab_probe_sees_the_host(graviton):
    host = identify(torch, SimpleNamespace(type="cpu", index=None))
    assert host["name"] == "PyTorch CPU device (Neoverse-V1)"
    assert host["memory_bytes"] == float(128 << 30)
    assert host["l1_bytes"] == float(64 << 10) and host["l2_bytes"] == float(1 << 20)
    n = torch.get_num_threads()
    # per-core L1/L2 scale with the threads used, the shared L3 counts once
    assert host["caches"] == {"L1": float(64 << 10) * n, "L2": float(1 << 20) * n,
                              "L3": float(32 << 20)}


def test_the_profile_host_records_no_host_name(graviton):
    host = identify(torch, SimpleNamespace(type="cpu", index=None))
    assert "hostname" not in host
    assert socket.gethostname() not in {str(v) for v in host.values()}
    # what the profile does keep about the software
    assert host["torch"] == torch.__version__ and host["python"]
