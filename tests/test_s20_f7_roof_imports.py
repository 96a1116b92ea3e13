"""Review s20 r6 (other tools' roofs): ERT's L4 plateau (F1), likwid-bench's scalar
peakflops (F2), the precision warning on an fp64-only roof (F3), rocprof-compute's FP8Flops
column (F4) and misspelt Low/High headers (F5), and the advice for other tools' outputs
given to `specs import` (F6) or `--on` (F7). Excerpts in each tool's real format."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.ert_roofs import ert_roofs
from rooflab.hardware.import_roofs import bench_ceilings, parse_likwid_bench
from rooflab.hardware.resolve import load_roofs
from rooflab.hardware.rocprof_roofline import load_roofline_csv


def run(*args: str) -> int:
    return main([str(a) for a in args])


# ERT 1.1.0 roofline.json (ebugger/Empirical-Roofline-Toolkit, Results/roofline.titan...
# layout) carrying the five plateaus of the real Results.p100.01/Run.018/.../sum: ERT's
# Scripts/summary.py names plateaus L1..Ln, the last DRAM, so four cache plateaus give L4
ERT_L4 = {
    "empirical": {
        "gbytes": {"data": [["L1", 176.44], ["L2", 102.18], ["L3", 45.7], ["L4", 22.9],
                            ["DRAM", 18.3]],
                   "metadata": {"FLOPS": 2}},
        "gflops": {"data": [["GFLOPs", 105.34]], "metadata": {"FLOPS": 16}},
        "metadata": {"ERT_VERSION": "1.1.0", "HOSTNAME": ["titan-batch7.ccs.ornl.gov", [], []],
                     "MPI_PROCS": 4, "OPENMP_THREADS": 4, "CONFIG": {}}},
    "spec": {"gbytes": {"data": []}, "gflops": {"data": []}},
}


def test_ert_l4_plateau_is_read_and_said_not_refused(tmp_path, capsys):
    (measured,) = ert_roofs(ERT_L4, "ert.json")
    got = {c.level: c.value for c in measured.memory}
    assert got == pytest.approx({"L1": 176.44e9, "L2": 102.18e9, "L3": 45.7e9,
                                 "DRAM": 18.3e9}, rel=1e-12)
    said = "L4 22.9 GB/s (empirical.gbytes.data[3]) not used"
    assert said in measured.find_memory("DRAM").method
    assert any(said in n and "count plateaus" in n for n in measured.notes)
    # `specs import` keeps it in the DRAM ceiling's method (it saves methods, not notes)
    path = tmp_path / "ert.json"
    path.write_text(json.dumps(ERT_L4))
    out = tmp_path / "r.json"
    assert run("specs", "import", path, "-o", out) == 0
    doc = json.loads(out.read_text())
    dram = next(m for m in doc["memory"] if m["level"] == "DRAM")
    assert dram["bytes_per_s"] == pytest.approx(18.3e9) and said in dram["method"]
    assert run("specs", "show", path) == 0
    capsys.readouterr()


def test_ert_unknown_level_error_says_how_to_fix():
    data = json.loads(json.dumps(ERT_L4))
    data["empirical"]["gbytes"]["data"][3] = ["LLC", 22.9]
    with pytest.raises(ParseError) as err:
        ert_roofs(data, "ert.json")
    text = str(err.value)
    assert "empirical.gbytes.data[3]: level 'LLC'" in text
    assert "remove ['LLC', 22.9] from empirical.gbytes.data" in text


# likwid-bench 5 summaries (bench/likwid-bench.c's layout), 8 threads
BENCH = """\
--------------------------------------------------------------------------------
LIKWID MICRO BENCHMARK
Test: {kernel}
--------------------------------------------------------------------------------
Using 1 work groups
Using 8 threads
--------------------------------------------------------------------------------
Time:\t\t\t1.967633e+00 sec
Size (Byte):\t\t256000
Size per thread:\t32000
Number of Flops:\t268435456000
MFlops/s:\t\t{mflops}
Data volume (Byte):\t33554432000
MByte/s:\t\t17053.43
--------------------------------------------------------------------------------
"""
TRIAD = BENCH.format(kernel="triad", mflops="1336.44").replace(
    "Size (Byte):\t\t256000", "Size (Byte):\t\t128000000").replace(
    "Size per thread:\t32000", "Size per thread:\t16000000").replace(
    "MByte/s:\t\t17053.43", "MByte/s:\t\t21382.92")


@pytest.mark.parametrize("kernel,unit", [
    ("peakflops", "scalar"), ("peakflops_sp", "scalar"), ("peakflops_fma", "scalar"),
    ("peakflops_sse", "vector"), ("peakflops_avx", "vector"), ("peakflops_avx_fma", "vector"),
    ("peakflops_avx512_fma", "vector"), ("peakflops_sp_avx512", "vector"),
    ("peakflops_sve256_fma", "vector"), ("peakflops_neon_fma", "vector"),
    ("peakflops_amd_zen_avx_fma_add", "vector")])
def test_likwid_peakflops_unit_by_the_kernel_name(kernel, unit):
    runs = parse_likwid_bench(BENCH.format(kernel=kernel, mflops="35105.20"), "p.txt")
    (c,) = bench_ceilings(runs, None, "p.txt")
    assert (c.precision, c.unit) == ("fp32" if "_sp" in kernel else "fp64", unit)


def test_plain_peakflops_is_the_scalar_ceiling_beside_the_avx_one(tmp_path, capsys):
    text = (BENCH.format(kernel="peakflops", mflops="35105.20")
            + BENCH.format(kernel="peakflops_avx_fma", mflops="136427.46"))
    got = {(c.precision, c.unit): c.value
           for c in bench_ceilings(parse_likwid_bench(text, "p.txt"), None, "p.txt")}
    assert got == pytest.approx({("fp64", "scalar"): 35105.20e6,
                                 ("fp64", "vector"): 136427.46e6}, rel=1e-12)
    # the scalar run alone: a roof whose only peak is scalar, so a vectorised dgemm at
    # 200 GFLOP/s is held by 'fp64 scalar', not shown above an 'fp64 vector' roof
    (tmp_path / "triad.txt").write_text(TRIAD)
    (tmp_path / "ps.txt").write_text(BENCH.format(kernel="peakflops", mflops="35105.20"))
    out = tmp_path / "ps.json"
    assert run("specs", "import", f"{tmp_path / 'triad.txt'}@DRAM", tmp_path / "ps.txt",
               "--llc", "8MiB", "-o", out) == 0
    (c,) = json.loads(out.read_text())["compute"]
    assert (c["precision"], c["unit"]) == ("fp64", "scalar")
    assert c["flop_per_s"] == pytest.approx(35105.20e6, rel=1e-12)
    assert "scalar" in c["method"]
    capsys.readouterr()


def test_precision_warning_matches_an_fp64_only_roof(tmp_path, capsys):
    data = json.loads(json.dumps(ERT_L4))
    del data["empirical"]["gbytes"]["data"][3]   # the L4 pair: F1's, not this test's
    ert = tmp_path / "ert.json"
    ert.write_text(json.dumps(data))
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds\ndgemm,2e12,1e10,80\n")
    assert run("report", k, "--on", ert, "--json") == 0
    cap = capsys.readouterr()
    warning = next(line for line in cap.err.splitlines() if "precision not given" in line)
    # ERT's roof has fp64 alone: the kernel is held to fp64, and the warning says so
    assert "held to the fp32 peak" not in warning
    assert "a roof with no fp32 peak" in warning and "slowest float peak" in warning
    doc = json.loads(cap.out)
    (point,) = doc["analysis"]
    # 2e12 FLOP / 80 s = 25 GFLOP/s against the fp64 vector 105.34 GFLOP/s: 23.7 %
    assert point["compute_ceiling_precision"] == "fp64"
    assert point["attainable_flop_per_s"] == pytest.approx(105.34e9)


# rocprof-compute's real MI355X --roof-only header and row (quoted in rocprofiler-compute's
# tests), hbmBwHigh spelt as the tool writes it
MI355X = (
    "device,HBMBw,HBMBwLow,hbmBwHigh,MALLBw,L2Bw,L1Bw,LDSBw,FP8Flops,FP16Flops,BF16Flops,"
    "FP32Flops,FP64Flops,I8Ops,MFMAF4Flops,MFMAF6Flops,MFMAF8Flops,MFMAF16Flops,"
    "MFMABF16Flops,MFMAF32Flops,MFMAF64Flops,MFMAI8Ops\n"
    "0,6237.3418,6233.0127,6241.6709,8496.8027,34513.656,38008.023,54161.102,81253.758,"
    "38558.672,5764.7715,150419.81,76324.766,81175.656,9769632,8810305,2456336.2,1229004.5,"
    "616227.75,154634.66,77521.898,1228687.2\n")
# the header ROCm/rocm-amdgpu-bench roofline.cpp writes (hbmBwHigh, MFMAFI8OpsLow)
CPP_HEADER = (
    "device,HBMBw,HBMBwLow,hbmBwHigh,MALLBw,MALLBwLow,MALLBwHigh,L2Bw,L2BwLow,L2BwHigh,"
    "L1Bw,L1BwLow,L1BwHigh,LDSBw,LDSBwLow,LDSBwHigh,FP8Flops,FP8FlopsLow,FP8FlopsHigh,"
    "FP32Flops,FP32FlopsLow,FP32FlopsHigh,FP64Flops,FP64FlopsLow,FP64FlopsHigh,"
    "MFMAF8Flops,MFMAF8FlopsLow,MFMAF8FlopsHigh,MFMABF16Flops,MFMABF16FlopsLow,"
    "MFMABF16FlopsHigh,MFMAF16Flops,MFMAF16FlopsLow,MFMAF16FlopsHigh,MFMAF32Flops,"
    "MFMAF32FlopsLow,MFMAF32FlopsHigh,MFMAF64Flops,MFMAF64FlopsLow,MFMAF64FlopsHigh,"
    "MFMAI8Ops,MFMAFI8OpsLow,MFMAI8OpsHigh")


def test_fp8flops_column_is_the_fp8_vector_ceiling(tmp_path):
    path = tmp_path / "roofline.csv"
    path.write_text(MI355X)
    roof = load_roofline_csv(str(path))
    assert roof.find_compute("fp8", "vector").value == pytest.approx(81253.758e9)
    assert roof.find_compute("fp8", "tensor").value == pytest.approx(2456336.2e9)
    (left,) = [n for n in roof.notes if n.startswith("left out")]
    assert "FP8Flops" not in left
    # MFMAF4Flops is the fp4 tensor ceiling since fp4 became a precision (session 26)
    assert "LDSBw 54.2 TB/s" in left and "MFMAF4Flops" not in left and "MFMAF6Flops" in left
    # F5: the DRAM ceiling keeps the interval of the tool's own 'hbmBwHigh'
    assert "95 % confidence 6233.01-6241.67 GB/s" in roof.find_memory("DRAM").method


def test_misspelt_low_high_headers_give_their_intervals(tmp_path):
    cols = CPP_HEADER.split(",")
    means = {"HBMBw": 4260.5, "L2Bw": 14620.0, "FP64Flops": 90100.0, "MFMAI8Ops": 2150000.0}
    cells = ["0"]
    for col in cols[1:]:
        base = re.sub(r"(?i)(low|high)$", "", col).replace("MFMAFI8Ops", "MFMAI8Ops")
        base = next((m for m in means if m.lower() == base.lower()), None)
        if base is None:
            cells.append("0")
            continue
        factor = 0.99 if col.lower().endswith("low") else 1.01 \
            if col.lower().endswith("high") else 1.0
        cells.append(f"{means[base] * factor:g}")
    path = tmp_path / "roofline.csv"
    path.write_text(CPP_HEADER + "\n" + ",".join(cells) + "\n")
    roof = load_roofline_csv(str(path))
    assert "95 % confidence 4217.89-4303.11 GB/s" in roof.find_memory("DRAM").method
    assert "95 % confidence 2.1285e+06-2.1715e+06 GOP/s" in \
        roof.find_compute("int8", "tensor").method
    assert not [n for n in roof.notes if "does not know" in n]   # Low/High are no columns


def test_a_column_this_reader_does_not_know_is_named(tmp_path):
    path = tmp_path / "roofline.csv"
    path.write_text("device,HBMBw,FP64Flops,L0TexBw,L0TexBwLow,L0TexBwHigh\n"
                    "0,4000,80000,123.5,120,127\n")
    notes = " ".join(load_roofline_csv(str(path)).notes)
    assert "L0TexBw 123.5 (a column this reader does not know)" in notes
    assert "L0TexBwLow" not in notes


# other tools' outputs, as they print them
STREAM = """\
-------------------------------------------------------------
STREAM version $Revision: 5.10 $
-------------------------------------------------------------
This system uses 8 bytes per array element.
-------------------------------------------------------------
Function    Best Rate MB/s  Avg time     Min time     Max time
Copy:           24321.6     0.052789     0.052628     0.053062
Scale:          16718.5     0.076779     0.076562     0.077040
Add:            18398.2     0.104651     0.104358     0.105040
Triad:          18490.9     0.104192     0.103836     0.104590
-------------------------------------------------------------
"""
ADVISOR = """\
Name,Bandwidth,Type,Device
DRAM Bandwidth (single node),85832856271,memory,CPU
DRAM Bandwidth,175273218366,memory,CPU
L3 Bandwidth,579993235472,memory,CPU
DP Vector FMA Peak,1349734446677,compute,CPU
Scalar Add Peak,87528623391,compute,CPU
"""
NVBANDWIDTH = """\
nvbandwidth Version: v0.4
Built from Git version:

Device 0: NVIDIA H100 80GB HBM3

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0
 0     55.64
"""
ERT_SUM = """\
    11.03 GFLOPs

  1458.88 Weight

   176.44 L1
   102.18 L2
    45.70 L3
    22.90 L4
    18.30 DRAM

META_DATA
ERT_VERSION  1.1.0
MPI_PROCS      1
OPENMP_THREADS 1
FLOPS          1
"""


def _command(err: str) -> list[str]:
    """The `rooflab specs import ...` line an error gives, as argv after 'rooflab'."""
    m = re.search(r"`rooflab (specs import [^`]+)`", err)
    assert m, err
    return shlex.split(m[1])


def test_specs_import_names_each_tools_command(tmp_path, capsys):
    files = {"stream.txt": STREAM, "nvbw.txt": NVBANDWIDTH, "sum": ERT_SUM,
             "roofline.csv": MI355X}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    said = {}
    for name in files:
        assert run("specs", "import", tmp_path / name) == 2
        said[name] = capsys.readouterr().err
        assert "likwid-bench -t triad" not in said[name]   # the old advice, wrong for all
        assert said[name].count("\n") == 1 and "Traceback" not in said[name]
    assert "pass it to --on" in said["roofline.csv"]
    assert "--dram 18490.9MB/s" in said["stream.txt"]
    assert "nvbandwidth" in said["nvbw.txt"] and "--on h100" in said["nvbw.txt"]
    # Advisor's roofs CSV is imported as it is since session 26 (no line to retype), into
    # the same SI values the typed line gave
    (tmp_path / "advisor.csv").write_text(ADVISOR)
    out = tmp_path / "adv.json"
    assert run("specs", "import", tmp_path / "advisor.csv", "-o", out) == 0
    roof = load_roofs(str(out))[0]
    assert roof.find_memory("DRAM").value == 175273218366
    assert roof.find_memory("L3").value == 579993235472
    assert roof.find_compute("fp64", "vector").value == 1349734446677
    out = tmp_path / "sum.json"
    assert "L4 left out" in said["sum"] and "roofline.json" in said["sum"]
    # a 1-FLOP run's GFLOPs is no compute peak (review s20 x1 F4): PEAK, for the user to type
    argv = _command(said["sum"])
    assert argv[argv.index("--fp64") + 1] == "PEAK"
    assert run(*[("105.34GFLOP/s" if a == "PEAK" else a) for a in argv[:-1]], out) == 0
    roof = load_roofs(str(out))[0]
    assert {c.level: c.value for c in roof.memory} == pytest.approx(
        {"L1": 176.44e9, "L2": 102.18e9, "L3": 45.70e9, "DRAM": 18.30e9})
    capsys.readouterr()


def test_on_a_tool_output_says_import_it_first(tmp_path, capsys):
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nk,2e9,3.2e10,0.5,fp64\n")
    (tmp_path / "triad.txt").write_text(TRIAD)
    (tmp_path / "sum").write_text(ERT_SUM)
    (tmp_path / "stream.txt").write_text(STREAM)
    (tmp_path / "advisor.csv").write_text(ADVISOR)
    for name in ("triad.txt", "sum", "stream.txt", "advisor.csv"):
        assert run("report", k, "--on", tmp_path / name) == 2
        err = capsys.readouterr().err
        assert "invalid JSON" not in err and "Traceback" not in err
        assert "import it first with `rooflab specs import" in err, err
        assert err.rstrip().endswith("then --on roof.json")
    # likwid-bench: the very file at a level, and the command builds a roof
    assert run("report", k, "--on", tmp_path / "triad.txt") == 2
    argv = _command(capsys.readouterr().err)
    assert f"{tmp_path / 'triad.txt'}@DRAM" in argv
