"""Review s28 R4 F3, F12, F15: the new AMD entries (MI350X, MI355X, MI300A) with their
derived peaks checked by hand, the package-or-die words in scale / whatif / specs, and AMD
words where NVIDIA's were said."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup, match_device_name
from rooflab.model.comm_link import device_ring_link


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _peak(dev, prec, unit="tensor"):
    return dev.roof.find_compute(prec, unit).value


# --- F12: MI350X / MI355X / MI300A ----------------------------------------------------------------
@pytest.mark.parametrize("name, ghz, watts", [("MI355X", 2.4, 1400), ("MI350X", 2.2, 1000)])
def test_cdna4_peaks_are_cus_x_clock_x_flop_per_clock(name, ghz, watts):
    # 8 XCDs x 32 CUs = 256 CUs (ISSCC 2026); fp8 8192 FLOP/clock/CU, fp16 4096, fp4 16384,
    # fp64 vector 128: MI355X fp8 256 x 8192 x 2.4e9 = 5033.2 TFLOP/s
    dev = lookup(name)
    cus = 256
    assert dev.sms == cus and dev.tdp_w == watts
    assert _peak(dev, "fp8") == pytest.approx(cus * 8192 * ghz * 1e9, rel=1e-4)
    assert _peak(dev, "bf16") == pytest.approx(cus * 4096 * ghz * 1e9, rel=1e-4)
    assert _peak(dev, "fp4") == pytest.approx(cus * 16384 * ghz * 1e9, rel=1e-4)
    assert _peak(dev, "fp64", "vector") == pytest.approx(cus * 128 * ghz * 1e9, rel=1e-3)
    # Tom's Hardware (ISC 2025): fp4 with sparsity 20.1 / 18.45 PFLOP/s = 2 x dense
    assert dev.sparse["fp4"] == pytest.approx(2 * _peak(dev, "fp4"), rel=1e-3)
    assert dev.memory_bytes == 288e9 and dev.memory_bytes_per_s == 8e12
    # no sparse bf16 figure was sourced: 2:4 on bf16 is bytes only there
    assert "bf16" not in dev.sparse


def test_mi300a_is_228_cus_of_the_mi300x_rates():
    # ROCm per-CU rates x 228 x 2.1 GHz: bf16 2048 -> 980.6, fp64 vector 128 -> 61.3
    dev, x = lookup("MI300A"), lookup("MI300X")
    assert _peak(dev, "bf16") == pytest.approx(228 * 2048 * 2.1e9, rel=1e-3)
    assert _peak(dev, "fp64", "vector") == pytest.approx(228 * 128 * 2.1e9, rel=1e-3)
    for prec, unit in (("fp8", "tensor"), ("tf32", "tensor"), ("fp64", "tensor")):
        assert _peak(dev, prec, unit) / _peak(x, prec, unit) == pytest.approx(228 / 304,
                                                                              rel=1e-3)
    assert dev.memory_bytes == 128e9 and dev.tdp_w == 550


def test_gfx950_names_match_the_new_entries():
    assert match_device_name("AMD Instinct MI355X").name == "AMD Instinct MI355X"
    assert match_device_name("AMD Instinct MI300A").name == "AMD Instinct MI300A"
    code, out, err = _run("specs", "show", "MI355X")
    assert code == 0, err


def test_cdna4_tp_uses_the_mesh():
    # the 8-GPU mesh: tp 2 one link (128 / 2 = 64 GB/s), tp 8 seven (448)
    dev = lookup("MI355X")
    assert device_ring_link(dev, 2).bus_bytes_per_s == pytest.approx(64e9)
    assert device_ring_link(dev, 8).bus_bytes_per_s == pytest.approx(448e9)


def test_specs_says_a_mesh_figure_is_all_its_links(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")   # one line per cell
    code, out, _ = _run("specs", "show", "MI300X")
    text = " ".join(out.split())
    assert code == 0 and "all 7 links of a full mesh" in text and "64 GB/s per direction" in text


# --- F3: package or die, said ---------------------------------------------------------------------
def test_specs_show_mi250x_gcd_says_it_is_the_package():
    code, out, err = _run("specs", "show", "MI250X GCD")
    assert code == 0
    assert "is read as the package AMD Instinct MI250X" in " ".join(err.split())
    code, out, err = _run("specs", "show", "MI300X")
    assert "read as the package" not in err


def test_scale_on_mi250x_says_each_row_is_a_package():
    code, out, _ = _run("scale", "--on", "MI250X", "--hidden", "1024", "--blocks", "2",
                        "--tokens", "512")
    text = " ".join(out.split())
    assert code == 0 and "each device in these rows is one package" in text
    code, out, _ = _run("scale", "--on", "MI300X", "--hidden", "1024", "--blocks", "2",
                        "--tokens", "512")
    assert "devices to software" not in out


def test_whatif_onto_mi250x_moves_kernels_onto_one_die(tmp_path):
    # a triad on an MI300X: 3 GiB in 0.8 ms; moved to an MI250X die it keeps its fraction of
    # DRAM: time x 5300 / 1638.4 (one die), not x 5300 / 3276.8 (the package)
    f = tmp_path / "pmc_perf.csv"
    f.write_text("Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,"
                 "SQ_INSTS_VALU_FMA_F32,TCC_EA0_RDREQ_sum,TCC_EA0_RDREQ_32B_sum,TCC_BUBBLE_sum,"
                 "TCC_EA0_WRREQ_sum,TCC_EA0_WRREQ_64B_sum\n"
                 "1,triad_kernel,2,0,800000,4194304,16777216,0,16777216,16777216,16777216\n")
    an = tmp_path / "an.json"
    assert _run("-q", "rocprof", str(f), "--on", "mi300x", "-o", str(an))[0] == 0
    code, out, err = _run("-q", "whatif", str(an), "--on", "mi300x", "--hardware", "mi250x",
                          "--json")
    assert code == 0, err
    doc = json.loads(out)
    move = doc["moves"][0]
    assert move["after_s"] / move["before_s"] == pytest.approx(5300 / 1638.4, rel=1e-3)
    assert "each kernel moves onto one die" in doc["assumption"]


# --- F15: AMD words ---------------------------------------------------------------------------
def test_probe_device_hip_says_rocm_calls_it_cuda():
    code, _, err = _run("probe", "--device", "hip:0")
    text = " ".join(err.split())
    assert code == 2 and "use --device cuda:0" in text and "Traceback" not in text


def test_scale_link_bw_on_an_amd_gpu_is_xgmi():
    code, out, err = _run("-q", "scale", "--on", "MI300X", "--hidden", "1024", "--blocks", "2",
                          "--tokens", "512", "--link-bw", "64GB/s", "--json")
    assert code == 0, err
    assert json.loads(out)["links"]["intra"]["level"] == "xGMI"


def test_mfma_advice_says_matrix_cores(tmp_path):
    f = tmp_path / "pmc_perf.csv"
    f.write_text("Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,"
                 "SQ_INSTS_VALU_MFMA_MOPS_BF16,TCC_EA0_RDREQ_sum,TCC_EA0_RDREQ_32B_sum,"
                 "TCC_BUBBLE_sum,TCC_EA0_WRREQ_sum,TCC_EA0_WRREQ_64B_sum\n"
                 "0,Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x16,2,0,1500000,2147483648,"
                 "2097152,0,2097152,2097152,2097152\n")
    an = tmp_path / "an.json"
    assert _run("-q", "rocprof", str(f), "--on", "mi300x", "-o", str(an))[0] == 0
    code, out, _ = _run("report", str(an))
    text = " ".join(out.split())
    assert code == 0 and "on matrix cores (MFMA)" in text and "on tensor cores" not in text
