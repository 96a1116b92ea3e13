"""Review s28 R4 F7: on ROCm the comm probe names xGMI (not "PCIe") and the GPU probe reads
clocks, power and the compute partition through amdsmi, imported lazily; without amdsmi it
says what was not read. amdsmi is faked here with the return shapes of ROCm/amdsmi's
py-interface (amdsmi_interface.py)."""

from __future__ import annotations

import enum
import sys
import types

import pytest

from rooflab.probe.comm.cluster import gpu_link_active, link_level
from rooflab.probe.gpu.amd_smi import NO_AMDSMI, amdsmi_state, xgmi_active, xgmi_by_name


class _LinkType(enum.IntEnum):
    AMDSMI_LINK_TYPE_INTERNAL = 0
    AMDSMI_LINK_TYPE_XGMI = 1
    AMDSMI_LINK_TYPE_PCIE = 2


class _Clk(enum.IntEnum):
    SYS = 0
    GFX = 0


def _fake_amdsmi(link=_LinkType.AMDSMI_LINK_TYPE_XGMI, gpus=8):
    m = types.ModuleType("amdsmi")
    m.AmdSmiLinkType = _LinkType
    m.AmdSmiClkType = _Clk
    m.calls = []
    m.amdsmi_init = lambda *a: m.calls.append("init")
    m.amdsmi_shut_down = lambda *a: m.calls.append("shut_down")
    handles = [object() for _ in range(gpus)]
    m.amdsmi_get_processor_handles = lambda: handles
    m.amdsmi_get_clock_info = lambda h, kind: {"clk": 1420, "min_clk": 500, "max_clk": 2100,
                                                "clk_locked": False}
    m.amdsmi_get_power_info = lambda h: {"current_socket_power": 712, "average_socket_power":
                                         "N/A", "power_limit": 750}
    m.amdsmi_get_gpu_compute_partition = lambda h: "SPX"
    m.amdsmi_topo_get_link_type = lambda a, b: {"hops": 1, "type": link}
    return m


def test_amdsmi_reads_clock_power_and_partition(monkeypatch):
    fake = _fake_amdsmi()
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    state = amdsmi_state(0)
    # MI300X under load: 1420 MHz of its 2100 boost, 712 W of 750 (the clock behind the gap
    # to the 1307.4 TFLOP/s peak taken at 2100 MHz)
    assert state == {"sm_clock_mhz": 1420, "max_sm_clock_mhz": 2100, "power_w": 712,
                     "power_limit_w": 750, "compute_partition": "SPX"}
    assert fake.calls == ["init", "shut_down"]


def test_without_amdsmi_the_note_says_what_was_not_read(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)   # import raises ImportError
    assert amdsmi_state(0) == {"amdsmi": NO_AMDSMI}
    assert "clocks, power and compute partition not read" in NO_AMDSMI
    assert xgmi_active(0) is None


def test_xgmi_link_is_read_from_amdsmi(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", _fake_amdsmi())
    assert xgmi_active(0) is True
    monkeypatch.setitem(sys.modules, "amdsmi", _fake_amdsmi(_LinkType.AMDSMI_LINK_TYPE_PCIE))
    assert xgmi_active(0) is False


def test_link_level_names_xgmi_on_rocm():
    assert link_level("nccl", False, True, rocm=True) == "xGMI"
    assert link_level("nccl", False, False, rocm=True) == "PCIe"
    # CUDA unchanged; across hosts the network, gloo loopback
    assert link_level("nccl", False, True) == "NVLink"
    assert link_level("nccl", True, True, rocm=True) == "network"
    assert link_level("gloo", False, None, rocm=True) == "loopback"


def _torch(hip: str | None, name: str):
    t = types.SimpleNamespace(version=types.SimpleNamespace(hip=hip))
    t.cuda = types.SimpleNamespace(get_device_name=lambda d: name)
    return t


def test_rocm_without_amdsmi_falls_back_to_the_catalog(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    dev = types.SimpleNamespace(index=0)
    # the MI300X's catalog entry has its xGMI mesh; a Radeon card's name has no entry
    assert gpu_link_active(_torch("6.2.41133", "AMD Instinct MI300X"), dev) == (True, True)
    assert gpu_link_active(_torch("6.2.41133", "AMD Radeon RX 7900 XTX"), dev) == (False, True)
    assert xgmi_by_name("AMD Instinct MI250X / MI250") is True


def test_rocm_read_clocks_merges_amdsmi(monkeypatch):
    from rooflab.probe.gpu.identity import read_clocks

    monkeypatch.setitem(sys.modules, "amdsmi", _fake_amdsmi())
    torch = types.SimpleNamespace(version=types.SimpleNamespace(hip="6.2.41133", cuda=None))
    got = read_clocks(torch, types.SimpleNamespace(type="cuda", index=0))
    assert "not used on ROCm" in got["nvml"]
    assert got["sm_clock_mhz"] == 1420 and got["power_w"] == 712


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3"])
def test_cuda_keeps_nvml(monkeypatch, name):
    import rooflab.probe.comm.cluster as cluster

    monkeypatch.setattr(cluster, "nvlink_active", lambda index: True)
    assert gpu_link_active(_torch(None, name), types.SimpleNamespace(index=0)) == (True, False)


# --- F8: a compute partition is not the whole MI300X -----------------------------------------
@pytest.mark.parametrize("cus", [38, 152])
def test_a_partition_of_an_mi300x_is_not_given_the_whole_roof(cus):
    # CPX: one XCD, 38 of the 304 CUs (1/8 of the compute): the whole chip's 1307.4 TFLOP/s
    # roof would be 8x too high; DPX: 152
    from rooflab.probe.gpu.catalog_match import match_catalog

    m = match_catalog("AMD Instinct MI300X", None, memory_bytes=206_141_652_992 / 8, sms=cus,
                      power_mode=None)
    assert m.roof is None
    assert f"the device has {cus} CUs, AMD Instinct MI300X has 304" in (m.note or m.how)
    whole = match_catalog("AMD Instinct MI300X", None, memory_bytes=206_141_652_992, sms=304,
                          power_mode=None)
    assert whole.entry == "AMD Instinct MI300X"


# --- F9: waves on CUs, the LDS said, the hint a real command -------------------------------
def test_ai_tile_on_mi300x_counts_waves_on_cus():
    # 4096^2 output in 256 x 256 tiles = 256 tiles on 304 CUs: 0.842 of one wave
    import contextlib
    import io

    from rooflab.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["ai", "matmul", "4096", "4096", "4096", "--dtype", "bf16", "--tile",
                     "256x256", "--on", "mi300x"])
    text = " ".join(out.getvalue().split())
    assert code == 0
    assert "256 tiles on 304 CUs" in text and "84.2 % of CU slots busy" in text
    assert "its LDS is 64 KiB per CU on CDNA2/CDNA3" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["ai", "matmul", "4096", "4096", "4096", "--dtype", "bf16", "--tile", "256x256",
              "--on", "mi250x"])
    assert '`rooflab specs show "AMD Instinct MI250X"`' in " ".join(out.getvalue().split())
