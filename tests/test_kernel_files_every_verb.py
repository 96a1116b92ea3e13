"""Every verb that takes a kernel file reads every profiler's file (audit 10), and the ROCm
loose ends: MI300's fp8 dtype names in torch traces, one MI250X die's roof from a trace,
and the "best achieved" roof's notes for MFMA / tensor-core kernels.

The rocprof CSVs and torch traces are made by hand (as in test_rocprof.py and
test_amd_rocm.py); the ncu files are the NERSC GPP recordings, read in place."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.kernelfile import file_kind, load_kernels
from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall, dtype_of

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"

# rocprof v1 results.csv (pmc columns), saved under a name that says nothing: it is told by
# its KernelName header. saxpy: 64 lanes x 2 x 16384 FMA = 2,097,152 FLOP over 64 x 32768
# read + 64 x 16384 written = 3,145,728 B (AI 2/3) in 10 us; fp8_gemm: 512 x 2,000,000 MFMA
# MOPS = 1.024e9 FLOP over 32 x 10000 + 64 x 40000 + 64 x 8000 = 3,392,000 B in 100 us.
V1 = """\
Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,\
SQ_INSTS_VALU_MFMA_MOPS_F8,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,\
TCC_EA_WRREQ_64B_sum
0,saxpy,2,0,1000,11000,16384,0,32768,0,16384,16384
1,fp8_gemm,2,0,20000,120000,0,2000000,50000,10000,8000,8000
"""
SAXPY_FLOP, SAXPY_BYTES = 64 * 2 * 16384, 64 * 32768 + 64 * 16384
GEMM_FLOP, GEMM_BYTES = 512 * 2_000_000, 32 * 10000 + 64 * 40000 + 64 * 8000


def _v1(tmp_path, name="counters.csv", saxpy_end=11000) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(V1.replace("1000,11000", f"1000,{saxpy_end}"))
    return str(p)




def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


# --- 1. rocprof files through report, compare, plot and whatif ------------------------------

def test_report_reads_a_rocprof_csv_as_rooflab_rocprof_does(tmp_path, capsys):
    # before: "counters.csv:1: missing column(s) name, flop, bytes", exit 2
    p = _v1(tmp_path)
    assert file_kind(p) == "rocprof"
    assert main(["report", p, "--on", "mi300x", "--json"]) == 0
    data = _json(capsys)
    ks = {k["name"]: k for k in data["kernels"]}
    assert ks["saxpy"]["flop"] == {"fp32": SAXPY_FLOP}
    assert ks["saxpy"]["bytes"] == {"DRAM": SAXPY_BYTES}
    assert ks["fp8_gemm"]["flop"] == {"fp8": GEMM_FLOP}
    assert ks["fp8_gemm"]["unit"] == "tensor"
    ai = {(a["kernel"], a["level"]): a["ai"] for a in data["analysis"]}
    assert ai[("saxpy", "DRAM")] == pytest.approx(2 / 3)
    assert ai[("fp8_gemm", "DRAM")] == pytest.approx(GEMM_FLOP / GEMM_BYTES)   # 301.9


def test_compare_two_rocprof_runs(tmp_path, capsys):
    # saxpy 10 us -> 5 us: 2x; fp8_gemm unchanged
    a, b = _v1(tmp_path / "run1", "results.csv"), _v1(tmp_path / "run2", "results.csv", 6000)
    assert main(["compare", a, b, "--json"]) == 0
    data = _json(capsys)
    speed = {m["kernel"]: m["speedup"] for m in data["matches"]}
    assert speed["saxpy"] == pytest.approx(2.0)
    assert speed["fp8_gemm"] == pytest.approx(1.0)


def test_plot_reads_rocprof_folders_and_brings_a_roof(tmp_path, capsys, rocprofv3_folder):
    # a rocprofv3 output folder, no --on: the best the kernel reached is the roof, as
    # `rooflab rocprof out/` says (before: "is a directory; give a file")
    folder = rocprofv3_folder
    svg = tmp_path / "chart.svg"
    assert main(["plot", folder, "-o", str(svg), "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    (k,) = data["kernels"]
    assert k["flop"] == {"fp64": 64 * 1000} and k["bytes"] == {"DRAM": 64 * 500 + 32 * 500}
    assert "best the kernels themselves reached" in err
    assert svg.exists()


def test_whatif_on_a_rocprof_workload_folder(tmp_path, capsys):
    # rocprof-compute's workload folder stands for its pmc_perf.csv; moving the kernels from
    # an MI300X to an MI250X keeps their FLOP and bytes
    folder = tmp_path / "workloads" / "app" / "MI300X_A1"
    folder.mkdir(parents=True)
    (folder / "pmc_perf.csv").write_text(V1.replace("Index,KernelName", "Dispatch_ID,"
                                                                         "Kernel_Name"))
    assert main(["whatif", str(folder), "--on", "mi300x", "--hardware", "mi250x",
                 "--json"]) == 0
    data = _json(capsys)
    after = {k["name"]: k for k in data["after"]["kernels"]}
    assert after["saxpy"]["flop"] == {"fp32": SAXPY_FLOP}
    assert after["fp8_gemm"]["bytes"] == {"DRAM": GEMM_BYTES}


def test_report_reads_a_rocprofv3_folder_of_passes(capsys, rocprofv3_folder):
    assert main(["report", rocprofv3_folder, "--on", "mi300x", "--json"]) == 0
    (k,) = _json(capsys)["kernels"]
    assert k["flop"] == {"fp64": 64_000} and k["seconds"] == pytest.approx(2e-6)


# --- ncu files and torch traces through load_kernels (every verb's reader) -------------------

@pytest.mark.skipif(not FIXTURES.is_dir(), reason="NERSC GPP ncu recordings not present "
                                                  "in ../shared/fixtures")
@pytest.mark.parametrize("name", ["output1.csv", "output1.ncu-rep"])
def test_load_kernels_reads_ncu_files(name):
    # before: load_kernels("output1.csv") -> "missing column(s) name, flop, bytes"
    ks = {k.name: k for k in load_kernels(str(FIXTURES / name))}
    k = ks["sigma_gpp_gpu_34"]
    assert k.flop["fp64"] == pytest.approx(2.596746e12, rel=1e-6)
    assert k.seconds == pytest.approx(30.49, abs=0.01)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="NERSC GPP ncu recordings not present "
                                                  "in ../shared/fixtures")
def test_compare_ncu_csv_and_whatif_on_ncu_rep(capsys):
    one, five = str(FIXTURES / "output1.csv"), str(FIXTURES / "output5.csv")
    assert main(["compare", one, five, "--json"]) == 0
    (m,) = [m for m in _json(capsys)["matches"] if m["kernel"] == "sigma_gpp_gpu_34"]
    assert m["speedup"] == pytest.approx(30.49 / 12.3, rel=0.01)       # docs/ingest.md
    assert main(["whatif", str(FIXTURES / "output1.ncu-rep"), "--on", "rtx 4060 laptop",
                 "--hardware", "l4", "--json"]) == 0
    assert {k["name"] for k in _json(capsys)["after"]["kernels"]} >= {"sigma_gpp_gpu_34"}


# mm fp16 (64x128 @ 128x32) on an MI250X die: 524,288 FLOP, 2 x 14,336 = 28,672 B, 2 us
MI250X_GCD = {"id": 0, "name": "AMD Instinct MI250X / MI250", "totalGlobalMem": 68702699520,
              "computeMajor": 9, "computeMinor": 0, "warpSize": 64}


def _trace(dtype="c10::Half", devices=(MI250X_GCD,), kernel_us=2.0) -> dict:
    op = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1}
    return {"schemaVersion": 1, "deviceProperties": list(devices), "traceEvents": [
        {**op, "name": "aten::mm", "ts": 0, "dur": 50,
         "args": {"Input Dims": [[64, 128], [128, 32]], "Input type": [dtype, dtype],
                  "External id": 7}},
        {"ph": "X", "cat": "kernel", "name": "Cijk_gemm", "pid": 0, "tid": 3, "ts": 10,
         "dur": kernel_us, "args": {"External id": 7}},
    ]}


@pytest.mark.parametrize("name,packed", [("trace.json", False), ("trace.pt.trace.json.gz", True),
                                         ("renamed.json", True)])
def test_torch_traces_in_report_compare_plot_whatif(tmp_path, capsys, name, packed):
    text = json.dumps(_trace()).encode()
    p = tmp_path / name
    p.write_bytes(gzip.compress(text) if packed else text)
    assert file_kind(str(p)) == "torch"
    faster = tmp_path / "faster.json"
    faster.write_text(json.dumps(_trace(kernel_us=1.0)))
    # report without --on: the device the trace names (before: "no roof: pass --on")
    assert main(["report", str(p), "--json"]) == 0
    data = _json(capsys)
    (k,) = data["kernels"]
    assert k["flop"] == {"fp16": 524_288} and k["bytes"] == {"DRAM": 28_672}
    assert data["roof"]["name"] == "AMD Instinct MI250X, one die"
    assert main(["compare", str(p), str(faster), "--json"]) == 0
    (m,) = _json(capsys)["matches"]
    assert m["speedup"] == pytest.approx(2.0)
    assert main(["plot", str(p), "-o", str(tmp_path / "c.svg"), "--json"]) == 0
    assert _json(capsys)["analysis"][0]["ai"] == pytest.approx(524_288 / 28_672)
    assert main(["whatif", str(p), "--on", "mi250x", "--precision", "fp8", "--json"]) == 0
    (after,) = _json(capsys)["after"]["kernels"]
    assert after["flop"] == {"fp8": 524_288}


# --- errors for a file that is none of the formats ------------------------------------------

@pytest.mark.parametrize("name,text", [("notes.txt", "hello, world\n"),
                                       ("table.csv", "a,b\n1,2\n"),
                                       ("other.json", '{"results": [1, 2]}')])
def test_a_file_of_no_known_format_names_the_formats(tmp_path, capsys, name, text):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ParseError, match="rocprof counter CSV"):
        load_kernels(str(p))
    for verb in (["report", str(p), "--on", "h100"], ["plot", str(p), "--on", "h100", "-o",
                                                      str(tmp_path / "x.svg")],
                 ["compare", str(p), str(p)], ["whatif", str(p), "--on", "h100",
                                               "--precision", "fp16"]):
        assert main(verb) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {p}") and "Traceback" not in err
        assert "Nsight Compute CSV or .ncu-rep" in err and "torch.profiler trace" in err


# --- 2. MI300's fp8 dtype names in torch traces ----------------------------------------------

@pytest.mark.parametrize("dtype", ["c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz"])
def test_mi300_fp8_fnuz_ops_are_fp8(dtype):
    # before: no dtype, so no formula: the fp8 mm of an MI300 trace was not counted at all
    assert dtype_of(dtype) == "fp8"
    w = op_work(OpCall("aten::mm", ((64, 128), (128, 32)), (dtype, dtype)))
    assert w.precision == "fp8" and w.flop == 2 * 64 * 128 * 32
    assert w.bytes == 64 * 128 + 128 * 32 + 64 * 32        # one byte per element


# --- 3. one MI250X die's roof from a trace ---------------------------------------------------

def test_torch_trace_of_one_mi250x_die_gets_half_the_package(tmp_path, capsys):
    # ROCm shows each GCD as "AMD Instinct MI250X / MI250" with 64 GiB; the catalog entry is
    # the package (128 GB, 3.2768 TB/s, 47.9 TFLOP/s fp64): one die has half of each
    p = tmp_path / "t.json"
    p.write_text(json.dumps(_trace()))
    assert main(["torch", str(p), "--json"]) == 0
    data = _json(capsys)
    assert "AMD Instinct MI250X, one die" in data["roof_source"]
    mem = {c["level"]: c["bytes_per_s"] for c in data["roof"]["memory"]}
    assert mem == {"DRAM": pytest.approx(1.6384e12)}          # before: 3.2768e12, no PCIe
    fp64 = [c for c in data["roof"]["compute"] if c["precision"] == "fp64"
            and c["unit"] == "vector"]
    assert fp64[0]["flop_per_s"] == pytest.approx(23.95e12)
    # the whole package (a trace without memory, or 128 GB) keeps the package's figures
    whole = dict(MI250X_GCD, totalGlobalMem=128_000_000_000)
    p.write_text(json.dumps(_trace(devices=(whole,))))
    assert main(["torch", str(p), "--json"]) == 0
    mem = {c["level"]: c["bytes_per_s"] for c in _json(capsys)["roof"]["memory"]}
    assert mem == {"DRAM": pytest.approx(3.2768e12)}


# --- 4. the "best achieved" roof of MFMA and tensor-core kernels ----------------------------

def _notes(data: dict) -> str:
    return " ".join([*data.get("notes", []), *data.get("import_notes", [])])


def test_best_achieved_roof_has_the_tensor_ceilings_mfma_kernels_set(tmp_path, capsys):
    # before: every envelope ceiling was "vector", so the fp8 MFMA kernel got "roof 'best
    # achieved (no roof given)' has no fp8 tensor ceiling; using fp8 vector"
    assert main(["rocprof", _v1(tmp_path), "--json"]) == 0
    data = _json(capsys)
    assert "no fp8 tensor ceiling" not in _notes(data)
    compute = {(c["precision"], c["unit"]): c["flop_per_s"] for c in data["roof"]["compute"]}
    assert compute == {("fp8", "tensor"): pytest.approx(GEMM_FLOP / 100e-6),     # 10.24 T
                       ("fp32", "vector"): pytest.approx(SAXPY_FLOP / 10e-6)}    # 210 G
    pct = {a["kernel"]: a["percent_of_roof"] for a in data["analysis"] if a["level"] == "DRAM"}
    assert pct["fp8_gemm"] == pytest.approx(100.0)


def test_best_achieved_roof_of_a_torch_trace_without_a_device(tmp_path, capsys):
    # an fp16 mm (tensor cores) in a trace that names no device: before, "no fp16 tensor
    # ceiling; using fp16 vector"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(_trace(devices=())))
    assert main(["torch", str(p), "--json"]) == 0
    data = _json(capsys)
    assert "best achieved" in data["roof"]["name"]
    assert "no fp16 tensor ceiling" not in _notes(data)
    (c,) = data["roof"]["compute"]
    assert (c["precision"], c["unit"]) == ("fp16", "tensor")
    assert c["flop_per_s"] == pytest.approx(524_288 / 2e-6)
