"""The GPU probe says when something else uses the GPU: other compute processes, utilisation,
memory they hold and clock throttling, read through a fake NVML (read-only calls only), and
the CUDA stand-ins of test_probe_gpu_fakecuda.py for the profile, its notes and the CLI's
early warning."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rooflab.probe.gpu.load import (
    LoadReading,
    busy_warning,
    decode_reasons,
    device_load,
    load_notes,
    read_load,
)

OTHER_PID = 4321


class FakeNvml:
    """pynvml's read-only calls on a device shared with pid 4321 (35 GB); this process holds
    2 GB. Violation counters advance by `throttle_step_ns` at each reading, as the
    cumulative nanosecond counters of nvmlDeviceGetViolationStatus do."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 0, 1, 0

    def __init__(self, pids=(None, OTHER_PID), util=87, reasons=0x4,
                 throttle_step_ns=2_000_000_000):
        self.pids = [os.getpid() if p is None else p for p in pids]
        self.util, self.reasons, self.step = util, reasons, throttle_step_ns
        self.readings = {0: 0, 1: 0}
        self.calls: list[str] = []

    def __getattr__(self, name):
        # Anything that sets state would be a bug: the probe only reads.
        if name.startswith("nvmlDeviceSet") or name.startswith("nvmlDeviceReset"):
            raise AssertionError(f"the probe called {name}")
        raise AttributeError(name)

    def nvmlInit(self):                                   # noqa: N802 — pynvml's names
        self.calls.append("init")

    def nvmlShutdown(self):                               # noqa: N802
        self.calls.append("shutdown")

    def nvmlDeviceGetHandleByUUID(self, uuid):            # noqa: N802
        return "h"

    def nvmlDeviceGetComputeRunningProcesses(self, h):    # noqa: N802
        mem = {OTHER_PID: 35e9, 999: None}
        return [SimpleNamespace(pid=p, usedGpuMemory=mem.get(p, 2e9)) for p in self.pids]

    def nvmlDeviceGetUtilizationRates(self, h):           # noqa: N802
        return SimpleNamespace(gpu=self.util, memory=40)

    def nvmlDeviceGetMemoryInfo(self, h):                 # noqa: N802
        return SimpleNamespace(total=141e9, used=37.5e9, free=103.5e9)

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):  # noqa: N802
        return self.reasons

    def nvmlDeviceGetViolationStatus(self, h, policy):    # noqa: N802
        value = self.readings[policy]
        self.readings[policy] += self.step if policy == 0 else 0   # power only
        return SimpleNamespace(referenceTime=0, violationTime=value)

    def nvmlDeviceGetClockInfo(self, h, which):           # noqa: N802
        return (1755, 3201)[which]

    def nvmlDeviceGetMaxClockInfo(self, h, which):        # noqa: N802
        return (1980, 3201)[which]

    def nvmlSystemGetDriverVersion(self):                 # noqa: N802
        return "575.57.08"

    def nvmlDeviceGetApplicationsClock(self, h, which):   # noqa: N802
        return 1755

    def nvmlDeviceGetTemperature(self, h, which):         # noqa: N802
        return 61

    def nvmlDeviceGetPowerUsage(self, h):                 # noqa: N802
        return 690_000

    def nvmlDeviceGetEnforcedPowerLimit(self, h):         # noqa: N802
        return 700_000


# --- the reading itself ------------------------------------------------------------------


@pytest.mark.parametrize("mask, words", [
    (0, []), (None, []), (0x1, ["gpu idle"]),
    (0x4 | 0x40, ["sw power cap", "hw thermal slowdown"]),
    (0x8 | 0x80, ["hw slowdown", "hw power brake slowdown"]),
    (0x4 | 0x800, ["sw power cap", "other reason bits 0x800"]),
])
def test_throttle_bitmask_decodes_into_words(mask, words):
    # nvml.h: GpuIdle 0x1, SwPowerCap 0x4, HwSlowdown 0x8, HwThermal 0x40, HwPowerBrake 0x80
    assert decode_reasons(mask) == words


def test_reading_excludes_our_pid_and_counts_the_others_memory():
    r = read_load(FakeNvml(), "h", os.getpid())
    assert [(p.pid, p.used_bytes) for p in r.others] == [(OTHER_PID, 35e9)]
    assert r.own_listed and r.own_bytes == 2e9 and r.other_count == 1
    assert r.others_bytes == 35e9                   # the list, not used - ours (35.5 GB)
    assert r.utilization_pct == 87 and r.reasons == 0x4 and r.busy
    assert r.violation_ns == {"power": 0, "thermal": 0} and r.unread == {}


def test_memory_of_others_falls_back_to_used_minus_ours_when_the_list_has_no_sizes():
    r = read_load(FakeNvml(pids=(999,)), "h", os.getpid(), own_bytes=1.5e9)
    # pid 999 is listed without a size; we hold 1.5 GB (torch.cuda.memory_reserved) but
    # are not listed: inside a container NVML lists host pids, so 999 may be us
    assert r.unnamed_self and r.other_count == 0
    assert r.others_bytes == pytest.approx(37.5e9 - 1.5e9)


def test_idle_gpu_gives_no_warning_and_no_note():
    r = read_load(FakeNvml(pids=(), util=0, reasons=0x1, throttle_step_ns=0), "h", 1)
    assert not r.busy and busy_warning(r, "cuda:0") is None
    load = device_load(r, r, 30.0)
    assert load["throttle_reasons"] == ["gpu idle"] and load_notes(load, "cuda:0") == []


def test_early_warning_names_the_processes_and_the_utilisation():
    r = read_load(FakeNvml(pids=(OTHER_PID, 77)), "h", os.getpid())
    assert busy_warning(r, "cuda:0") == (
        "2 other processes use cuda:0 (pid 4321: 35 GB, pid 77: 2 GB), utilisation "
        "87 %: the ceilings will read low; stop (Ctrl-C) and rerun on an idle GPU")
    # kernels running with nobody listed (a MIG/MPS or VM neighbour): still said
    alone = read_load(FakeNvml(pids=(), util=40), "h", os.getpid())
    assert busy_warning(alone, "cuda:0") == (
        "cuda:0 is busy, utilisation 40 %: the ceilings will read low; stop (Ctrl-C) and "
        "rerun on an idle GPU")
    # a stray kernel (below 10 %) is not
    assert busy_warning(read_load(FakeNvml(pids=(), util=5), "h", 1), "cuda:0") is None


def test_a_query_the_driver_refuses_is_recorded_not_guessed():
    nvml = FakeNvml()

    def refuse(h):
        raise RuntimeError("Not Supported")
    nvml.nvmlDeviceGetUtilizationRates = refuse
    r = read_load(nvml, "h", os.getpid())
    assert r.utilization_pct is None
    assert r.unread == {"utilization": "RuntimeError: Not Supported"}
    assert r.to_dict()["unread"] == {"utilization": "RuntimeError: Not Supported"}


def test_without_nvml_or_on_the_cpu_device_the_reason_is_recorded(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.probe.gpu.load import snapshot

    cpu = snapshot(torch, torch.device("cpu"))
    assert not cpu.available and "CPU device" in cpu.why
    monkeypatch.setitem(sys.modules, "pynvml", None)          # nvidia-ml-py not installed
    cuda = SimpleNamespace(type="cuda", index=0)
    fake_torch = SimpleNamespace(version=SimpleNamespace(cuda="12.8", hip=None))
    r = snapshot(fake_torch, cuda)
    assert not r.available and r.why.startswith("NVML unavailable (nvidia-ml-py is not installed")
    assert busy_warning(r, "cuda:0") is None
    assert device_load(r, r, 1.0) == {"available": False, "method": r.why}
    assert load_notes(device_load(r, r, 1.0), "cuda:0") == []


# --- the probe and the CLI on the fake CUDA device ----------------------------------------


def _fakecuda():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import test_probe_gpu_fakecuda as fc
    return fc


@pytest.fixture()
def shared_h200(monkeypatch):
    """probe_gpu("cuda:0") on the CPU dressed as an H200 that pid 4321 also uses; returns
    the fake NVML."""
    pytest.importorskip("torch")
    fc = _fakecuda()
    nvml = FakeNvml()
    with fc.dressed_as_gpu(monkeypatch, fc.FakeTorch([]), nvml):
        yield nvml


def test_profile_records_the_other_process_and_throttling_with_notes(shared_h200):
    from rooflab.probe.gpu import probe_gpu
    from rooflab.report.tables import profile_notes

    p = probe_gpu("cuda:0", "quick", triton=False)
    load = p.extras["device_load"]
    assert load["available"] and load["utilization_before"] == 87
    assert [(q["pid"], q["used_bytes"], q["before"], q["after"])
            for q in load["other_processes"]] == [(OTHER_PID, 35e9, True, True)]
    assert load["memory_others_bytes_before"] == 35e9
    # 0x4 at both readings, and 2 s of power violation between them
    assert load["throttle_reasons"] == ["sw power cap", "power violation"]
    assert load["throttled_s"] == {"power": 2.0, "thermal": 0.0}
    assert load["before"]["clock_event_words"] == ["sw power cap"]
    assert p.host["clocks_before"]["clock_event_reasons"] == 0x4     # the raw mask, as before
    busy, throttled = load["notes"]
    assert busy.startswith("1 other process used cuda:0 while the probe ran (pid 4321: "
                           "35 GB; utilisation 87 % before it started)")
    assert "power limits held the clocks below application clocks for 2.0 s" in throttled
    assert "clock event reasons: sw power cap" in throttled
    # on the measured roof, so the record table's notes show them
    assert p.measured.notes[:2] == (busy, throttled)
    # the fake device's tiny measured ceilings are far below the H200's datasheet: the
    # below-nominal notes (probe/nominal.py) follow the load notes
    # (after the note that the fake's 1 MiB L2 is not the catalog's 50 MiB)
    assert p.measured.notes[2].startswith("device reports L2 1 MiB, catalog 'NVIDIA H200 SXM' "
                                          "50 MiB")
    assert all(n.startswith("far below nominal") for n in p.measured.notes[3:])
    assert p.extras["below_nominal"]["notes"] == list(p.measured.notes[3:])
    assert busy in profile_notes(p) and throttled in profile_notes(p)
    # nothing was set: init/shutdown pairs only around the reads
    assert shared_h200.calls.count("init") == shared_h200.calls.count("shutdown")
    json.dumps(load)                                          # saved with the profile


def test_cli_warns_before_the_probe_and_repeats_the_notes_with_json(shared_h200, capsys,
                                                                   monkeypatch):
    import rooflab.errors as errors
    import rooflab.probe.gpu as gpu
    from rooflab.cli.main import main

    fc = _fakecuda()
    real, real_require = gpu.probe_gpu, errors.require
    order: list[str] = []

    def probe(d, m, p=None):
        order.append("probe")
        return real(d, m, p, triton=False)
    monkeypatch.setattr(gpu, "probe_gpu", probe)
    monkeypatch.setattr(errors, "require", lambda module, *a, **k: fc.FakeTorch([])
                        if module == "torch" else real_require(module, *a, **k))
    import rooflab.cli.common as common
    warn = common.warn
    monkeypatch.setattr(common, "warn", lambda m: (order.append(m), warn(m)))
    assert main(["probe", "--device", "cuda:0", "--quick", "--json"]) == 0
    err = capsys.readouterr().err
    early = ("warning: 1 other process uses cuda:0 (pid 4321: 35 GB), utilisation 87 %: "
             "the ceilings will read low; stop (Ctrl-C) and rerun on an idle GPU")
    assert early in err
    assert order[0].startswith("1 other process uses cuda:0") and order[1] == "probe"
    # --json prints no notes table: the device-load notes go to stderr after the probe
    assert "warning: 1 other process used cuda:0 while the probe ran" in err


def test_rocm_says_nvml_cannot_see_the_device_and_names_amd_smi(monkeypatch):
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_amd_rocm import rocm_torch

    from rooflab.probe.gpu.load import snapshot

    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())   # even a stray pynvml is unused
    r = snapshot(rocm_torch(), SimpleNamespace(type="cuda", index=0))
    assert not r.available and "cannot see an AMD GPU" in r.why
    assert "amd-smi is not read by rooflab" in r.why
    assert LoadReading(False, r.why).to_dict() == {"available": False, "why": r.why}


def test_on_a_jetson_the_hint_names_tegrastats(monkeypatch):
    # nvmlInit fails on a Jetson (no libnvidia-ml) and nvidia-smi does not exist there
    from rooflab.probe.gpu.load import snapshot

    class NoNvml:
        def nvmlInit(self):                                   # noqa: N802 — pynvml's names
            raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", NoNvml())
    cuda = SimpleNamespace(type="cuda", index=0)

    def torch_with(integrated):
        props = SimpleNamespace(is_integrated=integrated)
        return SimpleNamespace(version=SimpleNamespace(cuda="12.6", hip=None),
                               cuda=SimpleNamespace(get_device_properties=lambda d: props))

    orin = snapshot(torch_with(True), cuda)
    assert orin.why.endswith("`tegrastats` shows them (a Jetson has no nvidia-smi)")
    h200 = snapshot(torch_with(False), cuda)
    assert h200.why.endswith("`nvidia-smi` shows them") and "tegrastats" not in h200.why


# --- review 14a #9: gpu_check's idle parent is not another user ----------------------------

def test_expected_pids_are_listed_apart_not_counted_as_others(monkeypatch):
    from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV, expected_pids, snapshot

    parent = 777
    nvml = FakeNvml(pids=(None, parent), util=0, reasons=0)
    r = read_load(nvml, "h", os.getpid(), 2e9, expected=frozenset({parent}))
    assert r.other_count == 0 and not r.busy
    assert [p.pid for p in r.expected] == [parent]
    d = r.to_dict()
    assert d["other_processes"] == []
    assert d["expected_processes"] == [{"pid": parent, "used_bytes": 2e9,
                                        "why": "named in ROOFLAB_EXPECTED_GPU_PIDS"}]
    # Without the name the same parent is another user, as before.
    assert read_load(nvml, "h", os.getpid(), 2e9).other_count == 1
    # A real stranger still counts with the parent named.
    both = read_load(FakeNvml(pids=(None, parent, OTHER_PID), util=0), "h", os.getpid(), 2e9,
                     expected=frozenset({parent}))
    assert both.other_count == 1 and both.others[0].pid == OTHER_PID
    assert expected_pids({EXPECTED_PIDS_ENV: "12, 34,x"}) == {12, 34}
    assert expected_pids({}) == frozenset()
    # snapshot() reads the variable: the CLI child of gpu_check gets it through its env.
    monkeypatch.setenv(EXPECTED_PIDS_ENV, str(parent))
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    props = SimpleNamespace(uuid="u", pci_bus_id=None)
    fake_torch = SimpleNamespace(
        version=SimpleNamespace(hip=None),
        cuda=SimpleNamespace(get_device_properties=lambda dev: props,
                             memory_reserved=lambda dev: 2e9))
    got = snapshot(fake_torch, SimpleNamespace(type="cuda", index=0))
    assert got.available and got.other_count == 0 and [p.pid for p in got.expected] == [parent]
