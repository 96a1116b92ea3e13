"""`rooflab probe --device cuda` on an NVIDIA Jetson (Orin), on the CPU dressed as one.

What a Jetson does differently from a discrete card, faked as the H200 of
test_probe_gpu_fakecuda.py is: torch names the GPU just "Orin" (the same for AGX Orin,
Orin NX and Orin Nano), the board names itself in /proc/device-tree/model (NUL-terminated),
NVML is missing (no libnvidia-ml: nvmlInit raises), the GPU clock is in sysfs devfreq (Hz),
the device reports itself integrated, and host and GPU share one DRAM: no PCIe to measure.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_probe_gpu_fakecuda as fc  # noqa: E402

from rooflab.probe.gpu import board as gpu_board  # noqa: E402
from rooflab.probe.gpu import catalog_match, identity  # noqa: E402
from rooflab.probe.gpu.board import board_model, devfreq_clocks  # noqa: E402
from rooflab.probe.gpu.catalog_match import match_catalog  # noqa: E402
from rooflab.probe.gpu.memory import UNIFIED_COPY  # noqa: E402

AGX_DEVKIT = "NVIDIA Jetson AGX Orin Developer Kit"
NANO_SUPER = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
NX_DEVKIT = "NVIDIA Jetson Orin NX Engineering Reference Developer Kit"


class NvmlMissing(Exception):
    """What pynvml raises on a Jetson: NVMLError_LibraryNotFound."""


def _jetson_nvml():
    def init():
        raise NvmlMissing("NVML Shared Library Not Found")
    return SimpleNamespace(nvmlInit=init, nvmlShutdown=lambda: None)


class OrinCuda(fc.FakeCuda):
    def get_device_properties(self, dev):
        # What torch reports on a Jetson AGX Orin 64GB: "Orin", sm_87, integrated, 16 SMs (the
        # catalog match checks them); memory is the whole board's shared DRAM.
        return SimpleNamespace(name="Orin", major=8, minor=7, multi_processor_count=16,
                               total_memory=64_000_000_000, L2_cache_size=4 << 20,
                               is_integrated=1, uuid="0a1b2c3d-0000-0000-0000-000000000000")


class OrinTorch(fc.FakeTorch):
    def __init__(self, log: list):
        super().__init__(log)
        self.cuda = OrinCuda(log)


def _board(tmp_path: Path, text: str | None) -> Path:
    path = tmp_path / "device-tree-model"
    if text is not None:
        path.write_bytes(text.encode() + b"\0")        # the device tree's trailing NUL
    return path


def _devfreq(root: Path, node: str, cur_hz: int, max_hz: int, min_hz: int = 306000000):
    d = root / node
    d.mkdir(parents=True)
    for name, hz in (("cur_freq", cur_hz), ("max_freq", max_hz), ("min_freq", min_hz)):
        (d / name).write_text(f"{hz}\n")
    (d / "governor").write_text("nvhost_podgov\n")
    return d


@pytest.fixture()
def jetson(monkeypatch, tmp_path):
    """probe_gpu("cuda:0") on a fake AGX Orin: board model file, devfreq, no NVML."""
    monkeypatch.setattr(gpu_board, "BOARD_MODEL", _board(tmp_path, AGX_DEVKIT))
    sysfs = tmp_path / "sys"
    _devfreq(sysfs, "class/devfreq/17000000.ga10b", 1300500000, 1300500000)
    monkeypatch.setattr(gpu_board, "SYSFS", sysfs)
    with fc.dressed_as_gpu(monkeypatch, OrinTorch([]), _jetson_nvml()):
        yield tmp_path


def _probe_orin(monkeypatch, tmp_path, board, cuda=None):
    """probe_gpu("cuda:0") on a fake Orin with this board model (None: no device tree),
    no devfreq node and no NVML; `cuda` replaces the AGX's CUDA stand-in."""
    from rooflab.probe.gpu import probe_gpu

    monkeypatch.setattr(gpu_board, "BOARD_MODEL", _board(tmp_path, board))
    monkeypatch.setattr(gpu_board, "SYSFS", tmp_path / "no-sys")
    fake = OrinTorch([])
    if cuda is not None:
        fake.cuda = cuda([])
    with fc.dressed_as_gpu(monkeypatch, fake, _jetson_nvml()):
        return probe_gpu("cuda:0", "quick", triton=False)


# --- identity: the board model decides where "Orin" cannot --------------------------------

def test_board_model_drops_the_nul_and_is_none_without_a_device_tree(tmp_path):
    assert board_model(_board(tmp_path, AGX_DEVKIT)) == AGX_DEVKIT
    assert board_model(tmp_path / "absent") is None


@pytest.mark.parametrize("board, entry", [(AGX_DEVKIT, "NVIDIA Jetson AGX Orin 64GB"),
                                          (NANO_SUPER, "NVIDIA Jetson Orin Nano 8GB")])
def test_orin_is_matched_by_the_board_model(board, entry):
    m = match_catalog("Orin", "8.7", board=board)
    assert m.entry == entry and m.roof is not None and m.unified_memory
    assert m.how.startswith(f"matched by the board model '{board}'")
    assert "PCIe" not in {c.level for c in m.roof.memory}    # no host link on a Jetson


def test_orin_alone_is_never_guessed():
    m = match_catalog("Orin", "8.7", board=None)
    assert m.roof is None and m.entry is None
    assert "not guessed" in m.note and "there is no board model" in m.note
    for name in ("AGX Orin 64GB", "Orin NX 16GB", "Orin Nano 8GB"):
        assert name in m.note


def test_a_board_model_the_catalog_lacks_decides_nothing():
    # No NX developer-kit alias: the NX 16GB and the NX 8GB share the carrier; without
    # the device's memory nothing tells them apart.
    m = match_catalog("Orin", "8.7", board=NX_DEVKIT)
    assert m.roof is None and "the board model does not tell them apart" in m.note
    assert "no device memory was given" in m.note


# --- the device's memory decides between modules of one name ------------------------------
# torch's total_memory on a Jetson is the module's binary size less carve-outs: 14.15 GiB
# on an Orin NX 16GB (deviceQuery: 15189422080 bytes), about 7.4 GiB on an 8 GB module.
# The rule: the nominal size nearest at or above the reading, at most 25 % above it; a tie
# between modules with different roofs at that size picks nothing.
GIB = 1 << 30


def _mods(*names):
    return [SimpleNamespace(name=n, memory_bytes=gb * 1e9) for n, gb in names]


ORINS = _mods(("AGX 64", 64), ("AGX 32", 32), ("NX 16", 16), ("NX 8", 8), ("Nano 8", 8),
              ("Nano 4", 4))


@pytest.mark.parametrize("reported, picked", [
    (15.3 * GIB, "NX 16"),          # 15.3 / 16 = 0.956
    (15189422080, "NX 16"),         # 14.15 GiB, the deviceQuery reading: 0.884
    (16 * GIB, "NX 16"),            # at most the nominal size, never above it
    (3.4 * GIB, "Nano 4"),          # 0.85: a 4 GB module's larger share of carve-out
    (12.0 * GIB, "NX 16"),          # 12 / 16 = 0.75: the edge of the 25 %
    (11.9 * GIB, None),             # under 0.75 x 16 and above 8: no size fits
    (16.5 * GIB, None),             # above 16 GiB and under 0.75 x 32 = 24
    (7.4 * GIB, None),              # Nano 8GB or NX 8GB: different roofs, a tie
    (0, None), (None, None),
])
def test_pick_by_memory_takes_the_size_nearest_above(reported, picked):
    got = catalog_match.pick_by_memory(ORINS, reported, others=())
    assert (got.name if got else None) == picked


def test_a_tie_is_broken_only_by_narrowing_the_candidates_first():
    # the name (board) must say NX or Nano before the memory is asked
    assert catalog_match.pick_by_memory(_mods(("NX 16", 16), ("NX 8", 8)), 7.4 * GIB).name == "NX 8"
    nano = _mods(("Nano 8", 8), ("Nano 4", 4))
    assert catalog_match.pick_by_memory(nano, 7.4 * GIB).name == "Nano 8"


def test_off_catalog_products_of_a_size_block_the_pick():
    agx = _mods(("NVIDIA Jetson AGX Orin 64GB", 64), ("NVIDIA Jetson AGX Orin 32GB", 32))
    # 61 GiB: the 64GB or the AGX Orin Industrial (64 GB, 1.185 GHz); 30 GiB: the 32GB
    # module or the 2022 developer kit (32 GB with the 64GB's GPU)
    assert catalog_match.pick_by_memory(agx, 61 * GIB) is None
    assert catalog_match.pick_by_memory(agx, 30 * GIB) is None
    assert catalog_match.pick_by_memory(agx, 61 * GIB, others=()).name.endswith("64GB")
    # a product with the same roof is no rival
    same = (("Jetson AGX Orin Developer Kit (2022, 32 GB)", 32, "NVIDIA Jetson AGX Orin 64GB"),)
    assert catalog_match.pick_by_memory(agx[:1], 30 * GIB, others=same).name.endswith("64GB")


@pytest.mark.parametrize("board, reported, entry", [
    # the NX developer kit names no size: the memory decides
    (NX_DEVKIT, 15.3 * GIB, "NVIDIA Jetson Orin NX 16GB"),
    (NX_DEVKIT, 7.4 * GIB, "NVIDIA Jetson Orin NX 8GB"),
    # no device tree (a container): 'Orin' alone, decided where one size holds one roof
    (None, 15189422080, "NVIDIA Jetson Orin NX 16GB"),
    (None, 3.4 * GIB, "NVIDIA Jetson Orin Nano 4GB"),
    # a 4 GB Nano on the Nano developer kit's carrier: the board's alias names the 8GB,
    # its memory cannot be that: the memory overrules the alias
    (NANO_SUPER, 3.4 * GIB, "NVIDIA Jetson Orin Nano 4GB"),
    (NANO_SUPER, 7.4 * GIB, "NVIDIA Jetson Orin Nano 8GB"),
    # the 2022 AGX developer kit: 32 GB with the 64GB's GPU, so the alias stands
    (AGX_DEVKIT, 30.6 * GIB, "NVIDIA Jetson AGX Orin 64GB"),
    (AGX_DEVKIT, 61.4 * GIB, "NVIDIA Jetson AGX Orin 64GB"),
])
def test_the_device_memory_decides_where_the_names_do_not(board, reported, entry):
    m = match_catalog("Orin", "8.7", memory_bytes=reported, board=board)
    assert m.entry == entry and m.roof is not None and m.unified_memory
    if board in (None, NX_DEVKIT) or (board == NANO_SUPER and reported < 4 * GIB):
        assert m.how.startswith(f"matched by the device memory: {reported / GIB:.2f} GiB")
    if board == NANO_SUPER and reported < 4 * GIB:
        assert "names NVIDIA Jetson Orin Nano 8GB, but this device's 3.40 GiB" in m.how


@pytest.mark.parametrize("board, reported", [
    (None, 7.4 * GIB),              # Orin Nano 8GB or Orin NX 8GB: the name must tell
    (None, 61.4 * GIB),             # AGX Orin 64GB or the Industrial
    (None, 30.6 * GIB),             # AGX Orin 32GB or the 2022 developer kit
    (NX_DEVKIT, 10 * GIB),          # no NX has 10 GB
    (AGX_DEVKIT, 14 * GIB),         # the alias's module cannot report 14 GiB, nor any AGX
    ("NVIDIA Jetson AGX Orin Industrial", 61.4 * GIB),   # names another product
])
def test_the_memory_never_guesses(board, reported):
    m = match_catalog("Orin", "8.7", memory_bytes=reported, board=board)
    assert m.roof is None and m.entry is None and "not guessed" in m.note
    assert f"nor does the device memory ({reported / GIB:.2f} GiB)" in m.note


def test_a_gpu_matched_by_name_ignores_the_board():
    m = match_catalog("NVIDIA H200", "9.0", board=AGX_DEVKIT)
    assert m.entry.startswith("NVIDIA H200") and "device name" in m.how
    assert not m.unified_memory


# --- clocks from sysfs devfreq when NVML is missing ---------------------------------------

def test_devfreq_reads_the_gpu_node_and_not_the_others(tmp_path):
    _devfreq(tmp_path, "class/devfreq/15340000.vic", 998400000, 998400000)   # not the GPU
    _devfreq(tmp_path, "class/devfreq/17000000.gpu", 918000000, 1173000000)  # L4T R36 name
    clocks = devfreq_clocks(tmp_path)
    assert clocks["sm_clock_mhz"] == 918.0 and clocks["max_sm_clock_mhz"] == 1173.0
    assert clocks["governor"] == "nvhost_podgov" and "17000000.gpu" in clocks["clocks_source"]


def test_devfreq_under_gpu0_is_read_too(tmp_path):
    _devfreq(tmp_path, "devices/gpu.0/devfreq/57000000.gpu", 76800000, 921600000)
    assert devfreq_clocks(tmp_path)["sm_clock_mhz"] == pytest.approx(76.8)


def test_devfreq_says_when_it_found_nothing(tmp_path):
    clocks = devfreq_clocks(tmp_path)
    assert clocks["clocks_source"].startswith("not read: no GPU devfreq node")
    assert "sm_clock_mhz" not in clocks


# --- the whole probe on a Jetson ------------------------------------------------------------

def test_probe_runs_without_nvml_and_reads_clocks_from_sysfs(jetson):
    from rooflab.probe.gpu import probe_gpu

    p = probe_gpu("cuda:0", "quick", triton=False)
    assert p.extras["gpu"]["errors"] == {}
    h = p.host
    assert h["name"] == "Orin" and h["compute_capability"] == "8.7" and h["integrated"]
    assert h["board_model"] == AGX_DEVKIT and h["unified_memory"]
    assert h["catalog"] == "NVIDIA Jetson AGX Orin 64GB" and "board model" in h["catalog_match"]
    for clocks in (h["clocks_before"], h["clocks_after"]):
        assert clocks["nvml"].startswith("unavailable: NVML Shared Library Not Found")
        assert clocks["sm_clock_mhz"] == pytest.approx(1300.5)
        assert "17000000.ga10b" in clocks["clocks_source"]
    assert not p.extras["device_load"]["available"]      # NVML load reading: said, not fatal
    # How the roof was found is on the measured roof, so the record table prints it.
    assert any(n.startswith("nominal roof 'NVIDIA Jetson AGX Orin 64GB': matched by the "
                            f"board model '{AGX_DEVKIT}'") for n in p.measured.notes)


def test_the_host_copy_is_dram_to_dram_and_never_judged_as_pcie(jetson):
    from rooflab.probe.gpu import probe_gpu

    p = probe_gpu("cuda:0", "quick", triton=False)
    gpu = p.extras["gpu"]
    assert p.measured.find_memory("PCIe") is None
    assert gpu["measurements"]["h2d_pinned"]["label"] == UNIFIED_COPY
    assert gpu["measurements"]["d2h_pinned"]["label"] == UNIFIED_COPY
    assert "no PCIe on unified memory" in gpu["skipped"]["host_link"]
    assert "PCIe" not in {r["ceiling"] for r in gpu["nominal_checks"]}
    assert not any("PCIe" in n or "slot" in n for n in p.extras["below_nominal"]["notes"])


def test_an_orin_without_a_board_model_gets_no_nominal_and_no_pcie(monkeypatch, tmp_path):
    p = _probe_orin(monkeypatch, tmp_path, None)
    assert p.nominal is None and p.host["catalog"] is None and p.host["board_model"] is None
    assert "not guessed" in p.host["catalog_note"]
    assert any(n.startswith("no nominal roof: ") for n in p.measured.notes)
    # integrated (device property) is enough to know there is no PCIe link
    assert p.host["unified_memory"] and p.measured.find_memory("PCIe") is None
    assert p.host["clocks_before"]["clocks_source"].startswith("not read")


def test_cli_probe_on_a_jetson_prints_no_pcie(jetson, capsys):
    import rooflab.errors as errors
    import rooflab.probe.gpu as gpu
    from rooflab.cli.main import main

    real, real_require = gpu.probe_gpu, errors.require
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "probe_gpu", lambda d, m, p=None: real(d, m, p, triton=False))
        mp.setattr(errors, "require", lambda module, *a, **k: OrinTorch([])
                   if module == "torch" else real_require(module, *a, **k))
        assert main(["probe", "--device", "cuda:0", "--quick", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "PCIe bandwidth" not in printed
    assert "matched by the board model" in printed and "no PCIe on unified memory" in printed


class OrinNxCuda(OrinCuda):
    def get_device_properties(self, dev):
        # An Orin NX 16GB as torch sees it: "Orin", 8 SMs, 14.15 GiB (deviceQuery's reading)
        return SimpleNamespace(**{**vars(super().get_device_properties(dev)),
                                  "multi_processor_count": 8, "total_memory": 15189422080})


def test_a_roof_matched_by_memory_says_so_in_the_notes(monkeypatch, tmp_path):
    """The NX developer kit's board names no size: the memory picks NX 16GB, a weaker
    match than a name, so the measured roof's notes say how (as for a board match)."""
    p = _probe_orin(monkeypatch, tmp_path, NX_DEVKIT, OrinNxCuda)
    assert p.host["catalog"] == "NVIDIA Jetson Orin NX 16GB"
    assert p.host["catalog_match"].startswith("matched by the device memory")
    assert any(n.startswith("nominal roof 'NVIDIA Jetson Orin NX 16GB': matched by the "
                            "device memory: 14.15 GiB") for n in p.measured.notes)


# --- the SM count tells apart the modules a board or a size cannot -------------------------
# torch's multi_processor_count: 16 on AGX Orin 64GB (and the 2022 32 GB developer kit, its
# GPU), 14 on AGX Orin 32GB, 8 on both Orin NX and the Orin Nano 8GB, 4 on the Nano 4GB.
AGX_32 = "NVIDIA Jetson AGX Orin 32GB"
AGX_64 = "NVIDIA Jetson AGX Orin 64GB"


def test_an_agx_32gb_module_on_the_developer_kit_carrier_is_not_the_64gb():
    m = match_catalog("Orin", "8.7", memory_bytes=30.6 * GIB, board=AGX_DEVKIT, sms=14)
    assert m.entry == AGX_32 and m.roof is not None and m.unified_memory
    assert m.how.startswith("matched by the device memory: 30.60 GiB")
    assert (f"the board model '{AGX_DEVKIT}' names {AGX_64}, but the device has 14 SMs, "
            f"{AGX_64} has 16") in m.how
    assert "the device's 14 SMs" in m.how


@pytest.mark.parametrize("board, reported, sms, entry", [
    (AGX_DEVKIT, 30.6 * GIB, 16, AGX_64),     # the 2022 kit: 32 GB, the 64GB's GPU
    (AGX_DEVKIT, 61.4 * GIB, 16, AGX_64),
    (None, 30.6 * GIB, 14, AGX_32),           # no device tree: the SMs rule out the 2022 kit
    (None, 30.6 * GIB, 16, AGX_64),           # ... and the 32GB module: the kit's roof
    (NANO_SUPER, 3.4 * GIB, 4, "NVIDIA Jetson Orin Nano 4GB"),
    (NANO_SUPER, 7.4 * GIB, 8, "NVIDIA Jetson Orin Nano 8GB"),
    (NX_DEVKIT, 15.3 * GIB, 8, "NVIDIA Jetson Orin NX 16GB"),
])
def test_the_sm_count_agrees_with_the_module_picked(board, reported, sms, entry):
    m = match_catalog("Orin", "8.7", memory_bytes=reported, board=board, sms=sms)
    assert m.entry == entry and m.roof is not None


@pytest.mark.parametrize("board, reported, sms, says", [
    (AGX_DEVKIT, 61.4 * GIB, 14, f"names {AGX_64}, but the device has 14 SMs"),
    (None, 61.4 * GIB, 16, "its 16 SMs fit 1 of them"),     # 64GB or the Industrial (16)
    (None, 7.4 * GIB, 8, "its 8 SMs fit 3 of them"),        # Nano 8GB or NX 8GB
    (NANO_SUPER, 7.4 * GIB, 4, "names NVIDIA Jetson Orin Nano 8GB, but the device has 4 SMs"),
    (None, 30.6 * GIB, 12, "its 12 SMs fit 0 of them"),
])
def test_the_sm_count_never_makes_a_guess(board, reported, sms, says):
    m = match_catalog("Orin", "8.7", memory_bytes=reported, board=board, sms=sms)
    assert m.roof is None and m.entry is None and "not guessed" in m.note and says in m.note


def test_a_name_match_with_another_sm_count_is_not_used():
    m = match_catalog("Jetson AGX Orin 64GB", "8.7", sms=14)
    assert m.roof is None
    assert (f"the device name 'Jetson AGX Orin 64GB' names {AGX_64}, but the device has 14 "
            f"SMs, {AGX_64} has 16") in m.note
    # an unknown SM count (None) or an entry without one checks nothing
    assert match_catalog("Jetson AGX Orin 64GB", "8.7").entry == AGX_64
    assert match_catalog("NVIDIA H200", "9.0", sms=132).entry.startswith("NVIDIA H200")


# --- the board model is the integrated GPU's, not a discrete card's -------------------------

@pytest.mark.parametrize("integrated, entry", [(True, AGX_64), (None, AGX_64), (False, None)])
def test_the_board_model_is_used_only_on_an_integrated_gpu(integrated, entry):
    # a card the catalog lacks, in a Jetson's PCIe slot (or any machine with a device
    # tree); its compute capability (8.6) and SM count (26) would rule the AGX out too:
    # without them, the device's own "not integrated" does
    m = match_catalog("NVIDIA RTX A2000 12GB", None, board=AGX_DEVKIT, integrated=integrated)
    assert m.entry == entry
    if integrated is False:
        assert m.roof is None and f"the board model '{AGX_DEVKIT}' is not used" in m.note
    discrete = match_catalog("NVIDIA RTX A2000 12GB", "8.6", memory_bytes=11.7 * GIB,
                             board=AGX_DEVKIT, sms=26, integrated=integrated)
    assert discrete.roof is None
    orin = match_catalog("Orin", "8.7", board=AGX_DEVKIT, integrated=integrated)
    assert orin.entry == (AGX_64 if integrated is not False else None)


def test_integrated_is_none_where_torch_does_not_report_it():
    assert identity._integrated(SimpleNamespace()) is None
    assert identity._integrated(SimpleNamespace(is_integrated=0)) is False
    assert identity._integrated(SimpleNamespace(is_integrated=1)) is True


class Agx32Cuda(OrinCuda):
    def get_device_properties(self, dev):
        # An AGX Orin 32GB module: 14 SMs, about 30 GiB
        return SimpleNamespace(**{**vars(super().get_device_properties(dev)),
                                  "multi_processor_count": 14,
                                  "total_memory": int(30.6 * GIB)})


class DiscreteCuda(OrinCuda):
    def get_device_properties(self, dev):
        # A discrete card the catalog lacks, in a Jetson's PCIe slot
        return SimpleNamespace(**{**vars(super().get_device_properties(dev)),
                                  "name": "NVIDIA RTX A2000 12GB", "major": 8, "minor": 6,
                                  "multi_processor_count": 26, "is_integrated": 0,
                                  "total_memory": int(11.7 * GIB)})


@pytest.mark.parametrize("cuda, entry", [(Agx32Cuda, AGX_32), (DiscreteCuda, None)])
def test_the_probe_passes_the_sm_count_and_integration(monkeypatch, tmp_path, cuda, entry):
    p = _probe_orin(monkeypatch, tmp_path, AGX_DEVKIT, cuda)
    assert p.host["board_model"] == AGX_DEVKIT and p.host["catalog"] == entry
    if entry is None:
        assert p.nominal is None and "is not used" in p.host["catalog_note"]
    else:
        assert "the device has 14 SMs" in p.host["catalog_match"]
