"""Audit 9, an AMD Instinct / ROCm user: rocprof-compute's MI300 counters, the GPU probe on a
ROCm build of PyTorch (torch.cuda answers, torch.version.hip is set, there is no NVML), and
the MI300X catalog entry against AMD's per-CU rates.

Formulas: ROCm/rocprofiler-compute src/utils/roofline_calc.py (`calc_ai`) and, for MI300's
128-B lines and TCC_BUBBLE, src/rocprof_compute_soc/analysis_configs/gfx942/
(0200_system-speed-of-light.yaml, 1600_L1_cache.yaml).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rooflab.cli.main import main
from rooflab.errors import DeviceError
from rooflab.ingest.rocprof import load_rocprof

# rocprof-compute's pmc_perf.csv on an MI300X (gfx942): `_sum` counters, TCC_EA0_* names,
# TCC_BUBBLE (128-B reads), TCP_TCC_* (L1 -> L2 requests) and an fp8 MFMA counter.
PMC_PERF = """\
Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,\
Scratch_Per_Workitem,Arch_VGPR,Accum_VGPR,SGPR,wave_size,Start_Timestamp,End_Timestamp,\
Correlation_ID,SQ_INSTS_VALU_ADD_F16,SQ_INSTS_VALU_MUL_F16,SQ_INSTS_VALU_FMA_F16,\
SQ_INSTS_VALU_TRANS_F16,SQ_INSTS_VALU_MFMA_MOPS_F8,SQ_INSTS_VALU_MFMA_MOPS_F16,\
TCP_TOTAL_CACHE_ACCESSES_sum,TCP_TCC_READ_REQ_sum,TCP_TCC_WRITE_REQ_sum,\
TCP_TCC_ATOMIC_WITH_RET_REQ_sum,TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum,TCC_REQ_sum,\
TCC_EA0_RDREQ_sum,TCC_EA0_RDREQ_32B_sum,TCC_BUBBLE_sum,TCC_EA0_WRREQ_sum,TCC_EA0_WRREQ_64B_sum
0,fp8_gemm,2,1024,256,0,0,128,128,64,64,1000,11000,0,0,0,0,0,1000000,0,4000,2000,500,10,0,\
3000,3000,500,1000,400,400
1,hgelu,2,1024,256,0,0,32,0,16,64,20000,22000,1,100,200,1000,50,0,0,1000,800,800,0,0,1600,\
800,0,0,800,800
"""


def test_mi300_pmc_perf_counts_fp8_mfma_128b_reads_and_l1_to_l2_requests(tmp_path, capsys):
    p = tmp_path / "pmc_perf.csv"
    p.write_text(PMC_PERF)
    assert main(["rocprof", str(p), "--on", "mi300x", "--json"]) == 0
    ks = {k["name"]: k for k in json.loads(capsys.readouterr().out)["kernels"]}
    gemm = ks["fp8_gemm"]
    # 512 FLOP per MFMA MOP, fp8 included (gfx942 "MFMA FLOPs (F8)")
    assert gemm["flop"] == {"fp8": 512 * 1_000_000}
    # reads: 128 x BUBBLE + 64 x (RDREQ - BUBBLE - RDREQ_32B) + 32 x RDREQ_32B
    #      = 128 000 + 96 000 + 16 000; writes 64 x 400 = 25 600 (old code: 201 600 B)
    assert gemm["bytes"]["DRAM"] == 128 * 1000 + 64 * 1500 + 32 * 500 + 64 * 400 == 265_600
    # L2 = L1->L2 requests, not 128 x TCC_REQ (384 000 B); MI300's 128-B lines (the file has
    # TCC_BUBBLE) make a read request 128 B, a write or atomic 64 B (gfx942 "L1-L2 BW")
    assert gemm["bytes"]["L2"] == 128 * 2000 + 64 * (500 + 10 + 0) == 288_640
    assert gemm["bytes"]["L1"] == 128 * 4000                  # gfx942 "vL1D Cache BW"
    hgelu = ks["hgelu"]
    assert hgelu["flop"] == {"fp16": 64 * (100 + 200 + 2 * 1000 + 50)}   # 150 400
    assert hgelu["bytes"] == {"DRAM": 64 * 800 + 64 * 800, "L2": 128 * 800 + 64 * 800,
                              "L1": 128 * 1000}
    # every HBM byte passes through L2: no kernel shows less L2 than DRAM traffic
    assert all(k["bytes"]["L2"] >= k["bytes"]["DRAM"] for k in ks.values())


def test_mi200_counts_64_byte_lines_and_l2_falls_back_to_tcc_req(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text("Index,KernelName,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F64,TCC_REQ_sum,"
                 "TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum\n"
                 "0,daxpy,0,4000,1000,700,1000,200,500,500\n")
    (k,) = load_rocprof(str(p)).kernels
    assert k.flop == {"fp64": 64 * 2 * 1000}
    assert k.bytes == {"DRAM": 32 * 200 + 64 * 800 + 64 * 500, "L2": 128 * 700}
    # MI200 (no TCC_BUBBLE): 64-B lines, L1->L2 requests 64 B each, as calc_ai counts them
    q = tmp_path / "pmc_perf.csv"
    q.write_text("Dispatch_ID,Kernel_Name,Start_Timestamp,End_Timestamp,SQ_INSTS_VALU_FMA_F64,"
                 "TCP_TOTAL_CACHE_ACCESSES_sum,TCP_TCC_READ_REQ_sum,TCP_TCC_WRITE_REQ_sum,"
                 "TCC_REQ_sum\n0,daxpy,0,4000,1000,900,300,100,700\n")
    (k,) = load_rocprof(str(q)).kernels
    assert k.bytes == {"L2": 64 * (300 + 100), "L1": 64 * 900}


def test_rocprof_compute_workload_folder_and_its_roofline_csv(tmp_path, capsys):
    folder = tmp_path / "workloads" / "app" / "MI300X_A1"
    folder.mkdir(parents=True)
    (folder / "pmc_perf.csv").write_text(PMC_PERF)
    # the folder rocprof-compute wrote stands for its pmc_perf.csv
    assert main(["rocprof", str(folder), "--on", "mi300x", "--json"]) == 0
    names = [k["name"] for k in json.loads(capsys.readouterr().out)["kernels"]]
    assert names == ["fp8_gemm", "hgelu"]
    # its roofline.csv holds the benchmarked peaks, not kernels: say so and what to pass
    roofline = folder / "roofline.csv"
    roofline.write_text("device,HBMBw,L2Bw,L1Bw,LDSBw,MFMAF16Flops,FP32Flops\n"
                        "0,4216.1,14286.3,24653.6,57186.4,700000,150000\n")
    assert main(["rocprof", str(roofline)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {roofline}:1: rocprof-compute's roofline.csv")
    assert "pmc_perf.csv" in err and "Traceback" not in err


def test_rocprofv3_output_folder_stands_for_its_counter_files(tmp_path, capsys,
                                                            rocprofv3_folder):
    (k,) = load_rocprof(rocprofv3_folder).kernels          # the two passes, one dispatch
    assert k.flop == {"fp64": 64 * 1000} and k.bytes == {"DRAM": 64 * 500 + 32 * 500}
    assert k.seconds == pytest.approx(2e-6)                     # the first pass's timestamps
    (tmp_path / "empty").mkdir()
    assert main(["rocprof", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "no pmc_perf.csv (rocprof-compute), results.csv (rocprof) or " \
           "*_counter_collection.csv (rocprofv3)" in err


# --- the GPU probe on a ROCm build of PyTorch ------------------------------------------------

try:   # torch is an optional extra: without it only the probe tests below are skipped
    import torch
except ImportError:
    torch = None

MI300X_PROPS = dict(name="AMD Instinct MI300X", major=9, minor=4,
                    # 304 CUs, what a real MI300X reports (ROCm/ROCm#4203): the catalog entry
                    # has sms = 304 and rejects a device of another count (a partition)
                    gcnArchName="gfx942:sramecc+:xnack-", multi_processor_count=304,
                    total_memory=205_822_885_888, L2_cache_size=4 << 20)


def rocm_torch(available: bool = True):
    """A ROCm wheel (torch.version.cuda None, torch.version.hip set) on an MI300X: the CUDA
    stand-ins of test_probe_gpu_fakecuda.py with AMD's device properties."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import test_probe_gpu_fakecuda as fc

    class RocmCuda(fc.FakeCuda):
        def is_available(self):
            return available

        def get_device_properties(self, dev):
            return SimpleNamespace(**MI300X_PROPS)

    class RocmTorch(fc.FakeTorch):
        def _scaled_mm(self, a, b, **kw):
            # ROCm's hipBLASLt takes e4m3fnuz; some CPU oneDNN builds refuse that dtype
            # ("itensor_view_from_dense expects ... fp8"), so the stand-in multiplies in
            # bf16 what the matrix cores would: the probe's timing logic is what is tested
            if a.dtype == torch.float8_e4m3fnuz:
                out = kw.get("out_dtype") or torch.bfloat16
                return (a.to(torch.bfloat16) @ b.to(torch.bfloat16)).to(out)
            return torch._scaled_mm(a, b, **kw)

    fake = RocmTorch([])
    fake.cuda = RocmCuda([])
    fake.version = SimpleNamespace(cuda=None, hip="6.2.41133-dd7f95766")
    return fake


@pytest.fixture()
def fake_rocm(monkeypatch):
    if torch is None:
        pytest.skip("the GPU probe needs torch")
    import test_probe_gpu_fakecuda as fc

    fake = rocm_torch()
    with fc.dressed_as_gpu(monkeypatch, fake, None):     # no NVML on a ROCm machine
        yield fake


def test_probe_on_rocm_reads_identity_from_torch_and_says_what_it_cannot(fake_rocm):
    from rooflab.probe.gpu import probe_gpu

    p = probe_gpu("cuda:0", "quick", triton=False)
    h = p.host
    assert p.extras["gpu"]["errors"] == {}
    assert (h["backend"], h["hip"], h["cuda"]) == ("rocm", "6.2.41133-dd7f95766", None)
    # 9.4 is the gfx version, not a CUDA compute capability: the arch is kept instead
    assert h["compute_capability"] is None and h["gcn_arch"] == "gfx942"
    # vector L1 is 32 KiB per CU on gfx942 (ROCm hardware specifications), not NVIDIA's
    # 128 KiB per SM; L2 is what the device reports
    assert h["caches"] == {"L1": 304 * 32 * 1024, "L2": 4 << 20}
    assert h["catalog"] == "AMD Instinct MI300X"
    assert "not used on ROCm" in h["clocks_before"]["nvml"]
    # rocBLAS DGEMM runs on the fp64 matrix cores: compared with 163.4, not 81.7 TFLOP/s
    checks = {r["ceiling"]: r for r in p.extras["gpu"]["nominal_checks"]}
    assert "fp64 tensor" in checks and "fp64 vector" not in checks
    assert checks["fp64 tensor"]["nominal"] == pytest.approx(163.4e12)
    assert checks["DRAM"]["nominal"] == pytest.approx(5.3e12)
    # MI300's fp8 GEMM takes e4m3fnuz (PyTorch's ROCm _scaled_mm refuses e4m3fn on gfx942)
    assert not [k for k in p.extras["gpu"]["skipped"] if k.startswith("matmul_fp8")]
    assert p.measured.find_compute("fp8", "tensor").method.startswith("torch._scaled_mm e4m3fnuz")


def test_no_visible_amd_gpu_names_rocm_not_a_cpu_only_build():
    if torch is None:
        pytest.skip("the fake ROCm torch wraps the real one")
    from rooflab.probe.gpu.identity import open_device

    with pytest.raises(DeviceError) as err:
        open_device(rocm_torch(available=False), "cuda:0")
    msg = str(err.value)
    assert "ROCm build" in msg and "HIP 6.2.41133" in msg and "rocm-smi" in msg
    assert "CPU-only" not in msg and "nvidia-smi" not in msg


def test_mi300x_catalog_is_amds_per_cu_rates_times_304_cus_at_2100_mhz(capsys):
    # ROCm docs, "MI300 microarchitecture": FLOPS/clock/CU 128 (fp64 vector), 256 (fp64 and
    # fp32 matrix, fp32 vector), 1024 (tf32), 2048 (fp16, bf16), 4096 (fp8, int8)
    assert main(["specs", "show", "MI300X", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    roof = data.get("roof", data)
    peak = {f"{c['precision']} {c['unit']}": c["flop_per_s"] for c in roof["compute"]}
    rate = {"fp64 vector": 128, "fp64 tensor": 256, "fp32 vector": 256, "fp32 tensor": 256,
            "tf32 tensor": 1024, "fp16 tensor": 2048, "bf16 tensor": 2048,
            "fp8 tensor": 4096, "int8 tensor": 4096}
    for label, per_cu in rate.items():
        assert peak[label] == pytest.approx(per_cu * 304 * 2.1e9, rel=1e-3), label
    dram = {m["level"]: m["bytes_per_s"] for m in roof["memory"]}["DRAM"]
    assert dram == pytest.approx(5.3e12)


@pytest.mark.parametrize("name, cus", [("MI250X", 220), ("MI210", 104)])
def test_cdna2_catalog_is_amds_per_cu_rates_at_1700_mhz(name, cus, capsys):
    # ROCm docs, "MI250 microarchitecture": FLOPS/clock/CU 128 (fp64, fp32 vector), 256 (fp64
    # and fp32 matrix), 1024 (fp16, bf16, int8 matrix); 1.7 GHz peak engine clock
    assert main(["specs", "show", name, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    roof = data.get("roof", data)
    peak = {f"{c['precision']} {c['unit']}": c["flop_per_s"] for c in roof["compute"]}
    rate = {"fp64 vector": 128, "fp64 tensor": 256, "fp32 vector": 128, "fp32 tensor": 256,
            "fp16 tensor": 1024, "bf16 tensor": 1024, "int8 tensor": 1024}
    for label, per_cu in rate.items():
        assert peak[label] == pytest.approx(per_cu * cus * 1.7e9, rel=2e-3), label


def test_probe_on_one_mi250x_gcd_compares_with_half_the_package(fake_rocm, monkeypatch):
    # ROCm shows each of the MI250X's two dies as a GPU named "AMD Instinct MI250X / MI250"
    # with 64 GiB; the datasheet's 3.2768 TB/s and 95.7 TFLOP/s fp64 matrix are the package's
    from rooflab.probe.gpu import probe_gpu

    monkeypatch.setitem(MI300X_PROPS, "name", "AMD Instinct MI250X / MI250")
    monkeypatch.setitem(MI300X_PROPS, "gcnArchName", "gfx90a:sramecc+:xnack-")
    monkeypatch.setitem(MI300X_PROPS, "total_memory", 64 << 30)
    monkeypatch.setitem(MI300X_PROPS, "L2_cache_size", 8 << 20)
    monkeypatch.setitem(MI300X_PROPS, "multi_processor_count", 110)   # one MI250X GCD
    p = probe_gpu("cuda:0", "quick", triton=False)
    assert p.host["catalog"] == "AMD Instinct MI250X, one die"
    assert p.host["caches"]["L1"] == 110 * 16 * 1024            # 16 KiB per CU on gfx90a
    checks = {r["ceiling"]: r for r in p.extras["gpu"]["nominal_checks"]}
    assert checks["DRAM"]["nominal"] == pytest.approx(1.6384e12)          # 3276.8 / 2
    assert checks["fp64 tensor"]["nominal"] == pytest.approx(47.85e12)    # 95.7 / 2
    assert checks["PCIe"]["nominal"] == pytest.approx(16 * 16e9 * 128 / 130 / 8)  # per GCD
    assert p.nominal.find_memory("DRAM").provenance == "derived"
    # the whole package, by name, is unchanged
    from rooflab.probe.gpu.catalog_match import catalog_roof
    roof, name = catalog_roof("AMD Instinct MI250X")
    assert name == "AMD Instinct MI250X" and roof.find_memory("DRAM").value == 3.2768e12


def test_mi300_fp8_dtype_names_are_fp8(capsys):
    # what torch calls MI300's fp8 (float8_e4m3fnuz) is fp8: 2 x 4096^3 FLOP over 3 x 4096^2 B
    assert main(["ai", "matmul", "4096", "4096", "4096", "--dtype", "float8_e4m3fnuz",
                 "--on", "mi300x", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["precision"] == "fp8" and data["flop"] == 2 * 4096 ** 3
    assert data["bytes"] == 3 * 4096 ** 2                      # 1 byte per element
