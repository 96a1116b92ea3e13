"""Audit 10: NVIDIA SM counts, the GH200's GPU memory sizes, the Jetson power mode.

1. Every NVIDIA GPU entry but the GB200 gives its SM count (`sms`: what torch's
   multi_processor_count reports), each with its source in the entry's notes. The GPU probe
   sizes a MIG slice by it (slice SMs / card SMs) and rejects an entry whose count is not
   the device's; where two entries share a count (H100 SXM, H200, both GH200s: 132), the
   device's memory decides.
2. The GH200 comes as 96 GB HBM3 ("GH200 480GB" to the driver: 480 GB is the Grace CPU's
   LPDDR5X) and 144 GB HBM3e at 4.9 TB/s; a size list names GPU memory sizes only.
3. On a Jetson the probe reads the nvpmodel power mode from /var/lib/nvpmodel/status and
   /etc/nvpmodel.conf (fake trees here) and says when the mode caps the GPU below the clock
   the catalog's peaks assume.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_probe_gpu_jetson as tj  # noqa: E402  (the fake Orin and its probe helper)

from rooflab.cli.main import main  # noqa: E402
from rooflab.errors import HardwareNotFound  # noqa: E402
from rooflab.hardware.catalog import all_devices, lookup  # noqa: E402
from rooflab.probe.gpu import board as gpu_board  # noqa: E402
from rooflab.probe.gpu.board import power_mode, power_mode_note  # noqa: E402
from rooflab.probe.gpu.catalog_match import match_catalog  # noqa: E402

GIB = float(1 << 30)
GH96, GH144 = "NVIDIA GH200 Grace Hopper", "NVIDIA GH200 Grace Hopper 144GB"

# --- 1. SM counts ----------------------------------------------------------------------------

# Whitepapers / datasheets (cores / cores per SM): V100 5120/64, T4 2560/64, A10 9216/128,
# A30 3584/64, A100 6912/64, L4 7424/128, L40(S) and RTX 6000 Ada 18176/128, RTX 3090
# 10496/128, RTX A6000 10752/128, RTX 4090 16384/128, RTX 4060 3072/128, RTX 5090
# 21760/128, H100 PCIe 14592/128, H100 SXM 16896/128; third-party where NVIDIA gives none
# (A10G, H20, B200, H100 NVL), as each entry's notes say.
SMS = {
    "NVIDIA V100 SXM2 32GB": 80, "NVIDIA T4": 40, "NVIDIA A10": 72, "NVIDIA A10G": 80,
    "NVIDIA A30": 56, "NVIDIA A100 40GB PCIe": 108, "NVIDIA A100 40GB SXM": 108,
    "NVIDIA A100 80GB PCIe": 108, "NVIDIA A100 80GB SXM": 108, "NVIDIA A800 80GB PCIe": 108,
    "NVIDIA A800 80GB SXM": 108, "NVIDIA L4": 58, "NVIDIA L40": 142, "NVIDIA L40S": 142,
    "NVIDIA GeForce RTX 3090": 82, "NVIDIA RTX A6000": 84, "NVIDIA GeForce RTX 4090": 128,
    "NVIDIA GeForce RTX 4060": 24, "NVIDIA GeForce RTX 4060 Laptop GPU": 24,
    "NVIDIA GeForce RTX 5090": 170, "NVIDIA RTX 6000 Ada": 142, "NVIDIA H100 PCIe": 114,
    "NVIDIA H100 SXM": 132, "NVIDIA H100 NVL": 132, "NVIDIA H800 SXM": 132,
    "NVIDIA H200 SXM": 132, "NVIDIA H200 NVL": 132, "NVIDIA H20": 78, GH96: 132, GH144: 132,
    "NVIDIA B200": 148,
}
# FP32 lanes per SM by compute capability (CUDA C++ Programming Guide throughput table).
FP32_PER_SM = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.9": 128, "9.0": 128,
               "10.0": 128, "12.0": 128}


def test_every_nvidia_gpu_but_the_gb200_gives_its_sm_count_with_a_source():
    nvidia = {d.name: d for d in all_devices()
              if d.vendor == "NVIDIA" and d.kind == "gpu" and "Jetson" not in d.name}
    assert {n: d.sms for n, d in nvidia.items() if d.sms} == SMS
    assert nvidia["NVIDIA GB200 Grace Blackwell"].sms is None     # no figure found: none
    for name, sms in SMS.items():
        assert any(f"{sms} SMs" in note for note in nvidia[name].notes), name


@pytest.mark.parametrize("name", sorted(SMS))
def test_the_sm_count_and_the_fp32_peak_imply_a_real_clock(name):
    # fp32 = SMs x lanes x 2 FLOP x clock: a wrong count gives an impossible clock
    # (H100 SXM: 67e12 / (132 x 128 x 2) = 1.983 GHz; V100: 15.7e12 / (80 x 64 x 2) = 1.533)
    d = lookup(name)
    ghz = d.roof.find_compute("fp32", "vector").value / (
        d.sms * FP32_PER_SM[d.compute_capability] * 2) / 1e9
    assert 1.4 <= ghz <= 2.55, (name, ghz)


def test_a_fake_h200_1g_slice_gets_its_share_by_sms():
    # nvidia-smi mig -lgip on an H200: MIG 1g.18gb has 16 SMs of the card's 132.
    # bf16 tensor 989.5e12 x 16 / 132 = 119.94e12 (was 989.5e12 / 7 = 141.36e12);
    # DRAM 4800e9 x 1 / 8 = 600e9.
    m = match_catalog("NVIDIA H200 MIG 1g.18gb", "9.0", sms=16, power_mode=None)
    c = {x.label: x for x in m.roof.compute + m.roof.memory}
    assert c["bf16 tensor"].value == pytest.approx(989.5e12 * 16 / 132)
    assert c["bf16 tensor"].value == pytest.approx(119.939e12, rel=1e-5)
    assert c["bf16 tensor"].method == "MIG 1g.18gb: 16 of 132 SMs x 989.5 TFLOP/s"
    assert c["bf16 tensor"].provenance == "derived"
    assert c["DRAM"].value == pytest.approx(600e9)
    # a slice reporting more SMs than the card's 132 is no slice of it
    assert match_catalog("NVIDIA H200 MIG 1g.18gb", "9.0", sms=140,
                         power_mode=None).roof is None


def test_a_wrong_sm_count_now_rules_out_a_datacenter_name_match():
    m = match_catalog("NVIDIA H100 PCIe", "9.0", sms=132, power_mode=None)
    assert m.roof is None
    assert "the device has 132 SMs, NVIDIA H100 PCIe has 114" in m.note
    assert match_catalog("NVIDIA H100 PCIe", "9.0", sms=114, power_mode=None).entry \
        == "NVIDIA H100 PCIe"


def test_entries_sharing_an_sm_count_are_told_apart_by_memory():
    # H100 SXM, H200 and both GH200s have 132 SMs: the count cannot decide, memory does.
    # 'NVIDIA GH200' names both superchips; 153,008,209,920 bytes (142.5 GiB) is over 10 %
    # more than 96 GB (105.6e9 bytes) and fits only 144 GB (at most 25 % under it).
    big = match_catalog("NVIDIA GH200", "9.0", memory_bytes=153_008_209_920, sms=132,
                        power_mode=None)
    assert big.entry == GH144 and big.how.startswith("matched by the device memory")
    assert "142.50 GiB" in big.how and "132 SMs" in big.how
    assert {c.label: c.value for c in big.roof.memory}["DRAM"] == 4.9e12
    # 'GH200' is the 96 GB part's alias: the name chose it, the memory overruled it
    assert (f"the device name 'NVIDIA GH200' names {GH96}, but the device has 142.50 GiB, "
            f"more than {GH96}'s 96 GB") in big.how
    small = match_catalog("NVIDIA GH200", "9.0", memory_bytes=95.6 * GIB, sms=132,
                          power_mode=None)
    assert small.entry == GH96 and small.how == "matched by the device name 'NVIDIA GH200'"
    # the names the driver reports need no memory; H100 and H200 stay apart by name
    assert match_catalog("NVIDIA GH200 480GB", "9.0", sms=132, power_mode=None).entry == GH96
    assert match_catalog("NVIDIA GH200 144G HBM3e", "9.0", sms=132,
                         power_mode=None).entry == GH144
    assert match_catalog("NVIDIA H100 80GB HBM3", "9.0", memory_bytes=79.2 * GIB, sms=132,
                         power_mode=None).entry == "NVIDIA H100 SXM"
    assert match_catalog("NVIDIA H200", "9.0", memory_bytes=139.8 * GIB, sms=132,
                         power_mode=None).entry == "NVIDIA H200 SXM"


# --- 2. GH200 sizes ---------------------------------------------------------------------------

def test_the_144gb_gh200_is_its_own_entry():
    d = lookup("gh200 144gb")
    assert d.name == GH144 and d.memory_bytes == 144e9 and d.memory_bytes_per_s == 4.9e12
    assert d.roof.find_compute("bf16", "tensor").value == lookup("H100 SXM").roof.find_compute(
        "bf16", "tensor").value == 989.5e12
    assert d.source == "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/"
    # ridge fp8 1979e12 / 4.9e12 = 403.9 (the 96 GB part: 1979e12 / 4e12 = 494.75)
    assert d.ridge("fp8", "tensor") == pytest.approx(403.878, rel=1e-4)


@pytest.mark.parametrize("query, name", [
    ("GH200 480GB", GH96), ("NVIDIA GH200 480GB", GH96), ("gh200 96gb", GH96),
    ("gh200 144gb", GH144), ("NVIDIA GH200 144G HBM3e", GH144),
    ("gh200", GH96), ("grace hopper", GH96),     # the first part, as before the 144GB
])
def test_gh200_names_resolve(query, name):
    assert lookup(query).name == name


def test_a_gh200_size_error_lists_gpu_memory_sizes_only(capsys):
    with pytest.raises(HardwareNotFound) as err:
        lookup("gh200 120gb")
    message = str(err.value)
    assert "gh200 comes as 96GB or 144GB in the catalog" in message
    assert "480" not in message
    assert main(["specs", "show", "gh200 120gb"]) == 2
    assert "480" not in capsys.readouterr().err


def test_specs_show_gh200_144gb(capsys):
    assert main(["specs", "show", "gh200 144gb"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert GH144 in out and "144 GB at 4.9 TB/s" in out


def test_specs_list_still_fits_80_columns(capsys, monkeypatch):
    # an 80-column terminal (a pipe or log gets PIPE_WIDTH, one line per row: review 18c F12)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["specs", "list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert GH144 in out


# --- 3. the Jetson power mode -------------------------------------------------------------------

# An AGX Orin 64GB /etc/nvpmodel.conf, abridged: PARAM blocks first (their MAX_FREQ lines
# name sysfs paths, not limits), then one block per mode; "< PM_CONFIG DEFAULT=... >" last.
CONF = """\
< PARAM TYPE=CLOCK NAME=GPU >
FREQ_TABLE /sys/devices/gpu.0/devfreq/17000000.ga10b/available_frequencies
MAX_FREQ /sys/devices/gpu.0/devfreq/17000000.ga10b/max_freq

< POWER_MODEL ID=0 NAME=MAXN >
TPC_POWER_GATING TPC_PG_MASK 0
GPU MIN_FREQ 0
GPU MAX_FREQ -1

< POWER_MODEL ID=1 NAME=MODE_15W >
TPC_POWER_GATING TPC_PG_MASK 240
GPU MIN_FREQ 0
GPU MAX_FREQ 420750000

< POWER_MODEL ID=2 NAME=15W >
# a comment line
TPC_POWER_GATING TPC_PG_MASK 0
GPU MIN_FREQ 0
GPU MAX_FREQ 612000000

< POWER_MODEL ID=3 NAME=MAXN_CAPPED >
GPU MAX_FREQ 1300500000

< PM_CONFIG DEFAULT=2 >
"""


def _nvpmodel(tmp_path: Path, status: str | None, conf: str | None = CONF):
    s, c = tmp_path / "status", tmp_path / "nvpmodel.conf"
    if status is not None:
        s.write_text(status)
    if conf is not None:
        c.write_text(conf)
    return s, c


def test_the_power_mode_is_read_from_status_and_conf(tmp_path):
    s, c = _nvpmodel(tmp_path, "pmode:0002 fmode:quiet\n")
    mode = power_mode(s, c)
    assert (mode["id"], mode["name"], mode["gpu_max_freq_mhz"], mode["tpc_pg_mask"]) \
        == (2, "15W", 612.0, 0)
    assert f"{s} (pmode:0002)" in mode["source"] and "POWER_MODEL ID=2 NAME=15W" in mode["source"]
    # MAXN's -1 is no cap; the PARAM block's "MAX_FREQ /sys/..." is never read as one
    s, c = _nvpmodel(tmp_path, "pmode:0000")
    assert power_mode(s, c)["gpu_max_freq_mhz"] is None
    s, c = _nvpmodel(tmp_path, "pmode:0001")
    assert power_mode(s, c)["gpu_max_freq_mhz"] == 420.75
    assert power_mode(s, c)["tpc_pg_mask"] == 240


def test_absent_or_unreadable_files_say_nothing(tmp_path):
    s, c = _nvpmodel(tmp_path, None, None)
    assert power_mode(s, c) is None                       # not a Jetson: nothing
    s, c = _nvpmodel(tmp_path, "garbage\n", None)
    assert power_mode(s, c) is None
    s, c = _nvpmodel(tmp_path, "pmode:0002", None)        # the id, nothing invented
    mode = power_mode(s, c)
    assert (mode["id"], mode["name"], mode["gpu_max_freq_mhz"]) == (2, None, None)
    assert power_mode_note(mode, 1300.0) is None
    s, c = _nvpmodel(tmp_path, "pmode:0007")               # no block for ID 7
    assert power_mode(s, c)["name"] is None


def test_the_note_gives_the_caps_share_of_the_catalog_clock(tmp_path):
    s, c = _nvpmodel(tmp_path, "pmode:0002")
    note = power_mode_note(power_mode(s, c), 1300.0)
    # 612 / 1300 = 47.08 %
    assert note.startswith("power mode 15W caps the GPU at 612 MHz, 47 % of the 1300 MHz "
                           "the nominal roof assumes")
    s, c = _nvpmodel(tmp_path, "pmode:0001")
    note = power_mode_note(power_mode(s, c), 1300.0)
    # 420.75 / 1300 = 32.4 %; mask 240 = 0b11110000: four TPCs gated
    assert "caps the GPU at 420.75 MHz, 32 % of the 1300 MHz" in note
    assert "power-gates 4 TPC(s) (TPC_PG_MASK 0xf0; 2 SMs each)" in note
    s, c = _nvpmodel(tmp_path, "pmode:0003")               # 1300.5 MHz: not below 1300
    assert power_mode_note(power_mode(s, c), 1300.0) is None


def test_the_catalog_match_carries_the_power_mode_note(tmp_path):
    s, c = _nvpmodel(tmp_path, "pmode:0002")
    m = match_catalog("Orin", "8.7", board=tj.AGX_DEVKIT, sms=16, power_mode=power_mode(s, c))
    assert m.entry == "NVIDIA Jetson AGX Orin 64GB"
    note = m.roof.notes[-1]
    assert note.startswith("power mode 15W caps the GPU at 612 MHz, 47 % of the 1300 MHz")
    assert note in m.how
    # the Orin NX 16GB's roof assumes 1173 MHz (MAXN_SUPER): 612 / 1173 = 52 %
    m = match_catalog("Orin", "8.7", board=tj.NX_DEVKIT, memory_bytes=14.15 * GIB, sms=8,
                      power_mode=power_mode(s, c))
    assert m.entry == "NVIDIA Jetson Orin NX 16GB"
    assert "612 MHz, 52 % of the 1173 MHz" in m.roof.notes[-1]
    # no mode, or a datacenter card: nothing added
    assert not any("power mode" in n for n in match_catalog(
        "Orin", "8.7", board=tj.AGX_DEVKIT, sms=16, power_mode=None).roof.notes)
    h100 = match_catalog("NVIDIA H100 PCIe", "9.0", power_mode=power_mode(s, c))
    assert not any("power mode" in n for n in h100.roof.notes)


def test_the_probe_records_the_mode_and_notes_the_cap(monkeypatch, tmp_path):
    s, c = _nvpmodel(tmp_path, "pmode:0002 fmode:quiet\n")
    monkeypatch.setattr(gpu_board, "NVPMODEL_STATUS", s)
    monkeypatch.setattr(gpu_board, "NVPMODEL_CONF", c)
    prof = tj._probe_orin(monkeypatch, tmp_path, tj.AGX_DEVKIT)
    assert prof.host["power_mode"]["name"] == "15W"
    assert prof.host["power_mode"]["gpu_max_freq_mhz"] == 612.0
    assert prof.host["catalog"] == "NVIDIA Jetson AGX Orin 64GB"
    want = "power mode 15W caps the GPU at 612 MHz, 47 % of the 1300 MHz"
    assert any(n.startswith(want) for n in prof.nominal.notes)
    assert any(want in n for n in prof.measured.notes)       # via the board-model match


def test_the_probe_says_nothing_without_nvpmodel_files(monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_board, "NVPMODEL_STATUS", tmp_path / "absent-status")
    monkeypatch.setattr(gpu_board, "NVPMODEL_CONF", tmp_path / "absent.conf")
    prof = tj._probe_orin(monkeypatch, tmp_path, tj.AGX_DEVKIT)
    assert "power_mode" not in prof.host
    assert not any("power mode" in n for n in prof.nominal.notes + prof.measured.notes)
