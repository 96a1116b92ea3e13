"""Roofs from other tools (review 14d K): ERT's roofline.json as --on, likwid-bench output
and typed numbers through `rooflab specs import`, and a profile's roof at N threads as
`--on me.json@1t` (review 14d D)."""

from __future__ import annotations

import copy
import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.hardware.import_roofs import (
    bench_ceilings,
    parse_flop_rate,
    parse_likwid_bench,
)
from rooflab.hardware.resolve import load_roofs, split_threads

# ERT 1.1.0's own result for Edison, laid out as the published file is
# (ebugger/Empirical-Roofline-Toolkit, Empirical_Roofline_Tool-1.1.0/Results/
# roofline.edison.nersc.gov.01.json), its numbers exactly as written there; the CONFIG
# cut to the keys that matter here.
ERT_EDISON = {
    "empirical": {
        "gbytes": {
            "data": [["L1", 1723.23], ["L2", 1075.5599999999999],
                     ["L3", 669.08000000000004], ["DRAM", 83.0]],
            "metadata": {"TIMESTAMP_DATA": [1443587480.04, 1443587486.03],
                         "OPENMP_THREADS": 6, "FLOPS": 1,
                         "TIMESTAMP_DB": 1443588476.4006851, "MPI_PROCS": 4}},
        "gflops": {
            "data": [["GFLOPs", 355.79000000000002]],
            "metadata": {"TIMESTAMP_DATA": [1443587830.9100001], "OPENMP_THREADS": 12,
                         "FLOPS": 4, "TIMESTAMP_DB": 1443588476.400177, "MPI_PROCS": 2}},
        "metadata": {
            "ERT_VERSION": "1.1.0", "HOSTNAME": "edison",
            "CONFIG": {"ERT_SPEC_GBYTES_L1": ["1843.20"], "ERT_SPEC_GBYTES_DRAM": ["102.40"],
                       "ERT_SPEC_GFLOPS": ["460.40"], "ERT_FLOPS": ["1,2,4,8,16"],
                       "ERT_MPI_PROCS": ["2,4,6,8,12"], "ERT_OPENMP_THREADS": ["1-24"]},
            "UNAME": ["Linux", "nid02819", "3.0.101-0.35.1_1.0502.8640-cray_ari_s",
                      "#1 SMP Wed Feb 18 05:08:48 UTC 2015", "x86_64", "x86_64"]}},
    "spec": {"gbytes": {"data": [["L1", 1843.2], ["DRAM", 102.40000000000001]]},
             "gflops": {"data": [["GFLOPs", 460.39999999999998]]}},
}

# the layout of a later ERT 1.1.0 result (same repository, Results.p100.01/Run.018/
# roofline.json): procs and threads in empirical.metadata, HOSTNAME a list, spec empty
ERT_P100 = {
    "empirical": {
        "gbytes": {"data": [["L1", 1002.83], ["L2", 541.98], ["L3", 290.41], ["DRAM", 68.76]],
                   "metadata": {"FLOPS": 1, "TIMESTAMP_DB": 1560425105.979865}},
        "gflops": {"data": [["GFLOPs", 288.33]],
                   "metadata": {"FLOPS": 16, "TIMESTAMP_DB": 1560425105.979378}},
        "metadata": {"ERT_VERSION": "1.1.0",
                     "HOSTNAME": ["kcadmin-UniServer-R5200-G3", [], ["127.0.1.1"]],
                     "OPENMP_THREADS": 2, "MPI_PROCS": 4, "CONFIG": {}}},
    "spec": {"gbytes": {"data": []}, "gflops": {"data": []}},
}

# likwid-bench's summary as bench/likwid-bench.c (RRZE-HPC/likwid) prints it: the header
# ("LIKWID MICRO BENCHMARK", "Test: %s", "Using %d threads") and one ownprintf per line,
# tab-separated; triad: 2 FLOP and 32 bytes per update (3 loads + 1 store of 8 B)
TRIAD = """\
--------------------------------------------------------------------------------
LIKWID MICRO BENCHMARK
Test: triad
--------------------------------------------------------------------------------
Using 1 work groups
Using 4 threads
--------------------------------------------------------------------------------
Cycles:\t\t\t4963497646
CPU Clock:\t\t2400001062
Cycle Clock:\t\t2400001062
Time:\t\t\t2.068123e+00 sec
Iterations:\t\t128
Iterations per thread:\t32
Inner loop executions:\t1953125
Size (Byte):\t\t1000000000
Size per thread:\t250000000
Number of Flops:\t2000000000
MFlops/s:\t\t967.06
Data volume (Byte):\t32000000000
MByte/s:\t\t15473.08
Cycles per update:\t39.707981
Cycles per cacheline:\t317.663849
Loads per update:\t3
Stores per update:\t1
--------------------------------------------------------------------------------
"""


def peak(kernel: str, mflops: str) -> str:
    return (TRIAD.replace("Test: triad", f"Test: {kernel}")
            .replace("MFlops/s:\t\t967.06", f"MFlops/s:\t\t{mflops}"))


def run(*args: str) -> int:
    return main(list(args))


@pytest.fixture
def ert(tmp_path):
    path = tmp_path / "ert.json"
    path.write_text(json.dumps(ERT_EDISON, indent=3))
    return path


@pytest.fixture
def kernels(tmp_path):
    path = tmp_path / "k.csv"
    # AI 1 (memory-bound on 83 GB/s: attainable 83 GFLOP/s) and AI 1000 (compute-bound)
    path.write_text("name,flop,bytes,seconds\nk1,1e9,1e9,0.02\nk2,1e11,1e8,0.5\n")
    return path


# --- ERT ---------------------------------------------------------------------------------
def test_ert_json_is_a_measured_roof_with_the_files_numbers(ert):
    measured, nominal = load_roofs(str(ert))
    assert measured.kind == "measured" and measured.name == "edison ERT"
    got = {c.level: c.value for c in measured.memory}
    assert got == pytest.approx({"L1": 1723.23e9, "L2": 1075.56e9, "L3": 669.08e9,
                                 "DRAM": 83.0e9}, rel=1e-12)
    (fp64,) = measured.compute
    assert (fp64.precision, fp64.unit) == ("fp64", "vector")
    assert fp64.value == pytest.approx(355.79e9, rel=1e-12)
    assert all(c.provenance == "measured" for c in measured.memory + measured.compute)
    # the winning runs differ: bandwidth at 4 procs x 6 threads, FLOP/s at 2 x 12
    assert measured.find_memory("DRAM").method.startswith(
        "ERT 1.1.0, 4 procs x 6 threads, 1 FLOP/element")
    assert fp64.method.startswith("ERT 1.1.0, 2 procs x 12 threads, 4 FLOP/element")
    # the spec: the ERT_SPEC_* figures of the config, nominal
    assert nominal.kind == "nominal" and nominal.name == "edison ERT spec"
    assert {c.level: c.value for c in nominal.memory} == pytest.approx(
        {"L1": 1843.2e9, "DRAM": 102.4e9}, rel=1e-12)
    assert nominal.compute[0].value == pytest.approx(460.4e9, rel=1e-12)
    assert all(c.provenance == "nominal" for c in nominal.memory + nominal.compute)
    assert "ERT_SPEC_GBYTES_L1" in nominal.find_memory("L1").method


def test_ert_later_layout_and_precision(tmp_path):
    path = tmp_path / "p100.json"
    path.write_text(json.dumps(ERT_P100))
    roofs = load_roofs(str(path))
    assert len(roofs) == 1   # an empty spec gives no nominal roof
    roof = roofs[0]
    assert roof.name == "kcadmin-UniServer-R5200-G3 ERT"
    assert roof.find_memory("DRAM").value == pytest.approx(68.76e9, rel=1e-12)
    assert roof.compute[0].method.startswith("ERT 1.1.0, 4 procs x 2 threads, 16 FLOP/element")
    single = copy.deepcopy(ERT_P100)
    single["empirical"]["metadata"]["CONFIG"]["ERT_PRECISION"] = ["FP32"]
    path.write_text(json.dumps(single))
    assert load_roofs(str(path))[0].compute[0].precision == "fp32"


def test_ert_through_specs_show_report_and_plot(ert, kernels, tmp_path, capsys):
    assert run("specs", "show", str(ert), "--json") == 0
    shown = json.loads(capsys.readouterr().out)["roof"]
    assert shown["kind"] == "measured"
    assert [m["level"] for m in shown["memory"]] == ["L1", "L2", "L3", "DRAM"]
    assert run("report", str(kernels), "--on", str(ert), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof"]["name"] == "edison ERT"
    k1 = next(p for p in doc["analysis"] if p["kernel"] == "k1")
    # AI 1 FLOP/B on 83 GB/s: 83 GFLOP/s attainable, 50 achieved (60.2 %)
    assert k1["level"] == "DRAM" and k1["ai"] == pytest.approx(1.0)
    assert k1["attainable_flop_per_s"] == pytest.approx(83e9)
    assert k1["percent_of_roof"] == pytest.approx(100 * 50 / 83)
    assert run("plot", str(kernels), "--on", str(ert), "-o", str(tmp_path / "e.png")) == 0
    assert (tmp_path / "e.png").stat().st_size > 0


@pytest.mark.parametrize("field,bad,said", [
    ("gbytes", [["L1", 1723.23], ["L2", "fast"]], "empirical.gbytes.data[1]: expected [name, "
                                                  "positive number]"),
    ("gbytes", [["L7", 5.0]], "empirical.gbytes.data[0]: level 'L7' is none of"),
    ("gflops", [], "empirical.gflops.data: no compute figure"),
])
def test_ert_errors_name_the_file_and_field(ert, field, bad, said, capsys):
    broken = copy.deepcopy(ERT_EDISON)
    broken["empirical"][field]["data"] = bad
    ert.write_text(json.dumps(broken))
    with pytest.raises(ParseError) as err:
        load_roofs(str(ert))
    assert str(err.value).startswith(f"{ert}: ") and said in str(err.value)
    assert run("specs", "show", str(ert)) == 2
    assert "Traceback" not in capsys.readouterr().err


# --- likwid-bench ------------------------------------------------------------------------
def test_likwid_bench_runs_become_ceilings():
    runs = parse_likwid_bench(TRIAD + peak("peakflops", "153600.00"), "runs.txt")
    assert [(r.kernel, r.threads, r.size_bytes, r.size_per_thread) for r in runs] == [
        ("triad", 4, 1e9, 2.5e8), ("peakflops", 4, 1e9, 2.5e8)]
    dram, fp64 = sorted(bench_ceilings(runs, "DRAM", "runs.txt"), key=lambda c: c.label)
    assert (dram.level, dram.value, dram.provenance) == ("DRAM", 15473.08e6, "measured")
    assert dram.method.startswith("likwid-bench -t triad, 4 threads, working set 1 GB "
                                  "(250 MB per thread)")
    # only a peakflops kernel's MFlops/s is a peak (triad's 967 MFlops/s is its loop's)
    assert (fp64.precision, fp64.value) == ("fp64", 153600e6)


def test_likwid_bench_best_of_several_runs_and_single_precision():
    text = TRIAD + TRIAD.replace("15473.08", "16001.50") + peak("peakflops_sp", "307200.00")
    dram, fp32 = sorted(bench_ceilings(parse_likwid_bench(text, "t.txt"), "DRAM", "t.txt"),
                        key=lambda c: c.label)
    assert dram.value == 16001.50e6 and dram.samples == (15473.08e6, 16001.50e6)
    assert fp32.precision == "fp32" and fp32.value == 307200e6


def test_likwid_bench_older_size_line_and_errors():
    old = TRIAD.replace("Size (Byte):", "Size:")
    assert parse_likwid_bench(old, "o.txt")[0].size_bytes == 1e9
    with pytest.raises(InputError, match=r"t.txt@L1, @L2, @L3 or @DRAM"):
        bench_ceilings(parse_likwid_bench(TRIAD, "t.txt"), None, "t.txt")
    with pytest.raises(ParseError, match=r"t.txt:20: 'MByte/s:' should be a number"):
        parse_likwid_bench(TRIAD.replace("15473.08", "n/a"), "t.txt")
    with pytest.raises(ParseError, match="no likwid-bench summary"):
        parse_likwid_bench("Test: triad\n", "t.txt")


def test_specs_import_likwid_bench_files(tmp_path, kernels, capsys):
    (tmp_path / "triad.txt").write_text(TRIAD)
    (tmp_path / "peak.txt").write_text(peak("peakflops", "153600.00"))
    out = tmp_path / "roof.json"
    assert run("specs", "import", f"{tmp_path / 'triad.txt'}@DRAM",
               str(tmp_path / "peak.txt"), "--name", "box", "-o", str(out)) == 0
    roof = load_roofs(str(out))[0]
    assert roof.name == "box" and roof.kind == "measured"
    assert roof.find_memory("DRAM").value == 15473.08e6
    assert roof.find_compute("fp64").value == 153600e6
    assert run("report", str(kernels), "--on", str(out)) == 0
    capsys.readouterr()
    # without @LEVEL: the error says which to add
    assert run("specs", "import", str(tmp_path / "triad.txt"), "--fp64", "1TFLOP/s") == 2
    assert "@L1, @L2, @L3 or @DRAM" in capsys.readouterr().err


# --- a roof from typed numbers -------------------------------------------------------------
def test_two_numbers_make_a_nominal_roof(tmp_path, kernels, capsys):
    out = tmp_path / "roof.json"
    assert run("specs", "import", "--dram", "83GB/s", "--fp64", "355GFLOP/s", "--name", "X",
               "-o", str(out)) == 0
    doc = json.loads(out.read_text())
    assert doc["name"] == "X" and doc["kind"] == "nominal"
    assert doc["memory"][0]["bytes_per_s"] == 83e9
    assert doc["compute"][0]["flop_per_s"] == 355e9
    assert doc["memory"][0]["kind"] == "nominal"
    assert doc["memory"][0]["method"] == "given: --dram 83GB/s (stated as nominal)"
    assert "wrote" in capsys.readouterr().err   # stderr, as every verb (s22 r3 F7)
    assert run("report", str(kernels), "--on", str(out), "--json") == 0
    rep = json.loads(capsys.readouterr().out)
    k1 = next(p for p in rep["analysis"] if p["kernel"] == "k1")
    # ridge 355/83 = 4.277 FLOP/B; k1 at AI 1 is held by DRAM: 83 GFLOP/s attainable
    assert k1["ridge"] == pytest.approx(355 / 83)
    assert run("specs", "import", "--dram", "83GB/s", "--fp64", "355GFLOP/s", "--l1",
               "1.7TB/s", "--measured", "-o", str(out)) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "measured" and doc["name"] == "imported roof"
    assert [m["level"] for m in doc["memory"]] == ["L1", "DRAM"]
    assert {m["kind"] for m in doc["memory"] + doc["compute"]} == {"measured"}


@pytest.mark.parametrize("args,said", [
    (("--dram", "83", "--fp64", "355GFLOP/s"), "--dram 83 would be 83 bytes/s"),
    (("--dram", "83GB/s", "--fp64", "355GB/s"), "--fp64 must be a compute rate"),
    (("--dram", "83GB/s",), "the roof has no compute ceiling"),
    (("--fp64", "355GFLOP/s",), "the roof has no bandwidth"),
    ((), "nothing to import"),
])
def test_typed_number_errors(args, said, capsys):
    assert run("specs", "import", *args) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_flop_rate_parser():
    assert parse_flop_rate("355GFLOP/s", "--fp64") == 355e9
    assert parse_flop_rate("1.2TFLOPS", "--fp64") == 1.2e12
    assert parse_flop_rate("3.55e11", "--fp64") == 3.55e11
    with pytest.raises(InputError):
        parse_flop_rate("355", "--fp64")   # a unit left out: 355 FLOP/s is no machine


# --- --on me.json@1t -------------------------------------------------------------------------
def _scaling_profile() -> dict:
    """A probed CPU profile with a thread scaling (probe --threads 1,2,4): DRAM 20 -> 36 ->
    40 GB/s, fp64 50 -> 98 -> 190 GFLOP/s; the measured roof is the 4-thread probe's."""
    def row(n, dram, fp64):
        return {"threads": n,
                "DRAM": {"bytes_per_s": dram, "samples": [dram], "ws_bytes_per_thread": 2**28},
                "fp64": {"flop_per_s": fp64, "samples": [fp64]},
                "fp32": {"flop_per_s": 2 * fp64, "samples": [2 * fp64]}}

    return {
        "schema_version": 1, "host": {"name": "box"},
        "measured": {"name": "box measured (4 threads)", "kind": "measured",
                     "compute": [{"precision": "fp64", "unit": "vector",
                                  "flop_per_s": 190e9},
                                 {"precision": "fp32", "unit": "vector",
                                  "flop_per_s": 380e9}],
                     "memory": [{"level": "DRAM", "bytes_per_s": 40e9}],
                     "overhead_s": 2e-6, "source": "rooflab probe"},
        "nominal": {"name": "box nominal", "kind": "nominal",
                    "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 256e9}],
                    "memory": []},
        "extras": {"threads": 4,
                   "scaling": {"counts": [1, 2, 4], "reference_threads": 4,
                               "by_threads": {"1": row(1, 20e9, 50e9),
                                              "2": row(2, 36e9, 98e9),
                                              "4": row(4, 40e9, 190e9)}}},
    }


@pytest.fixture
def scaled(tmp_path):
    path = tmp_path / "me.json"
    path.write_text(json.dumps(_scaling_profile()))
    return path


def test_split_threads_spelling():
    assert split_threads("me.json@1t") == ("me.json", 1)
    assert split_threads("a/b.json@16threads") == ("a/b.json", 16)
    assert split_threads("me.json") is None and split_threads("h100") is None


def test_on_profile_at_one_thread(scaled, kernels, capsys):
    one, nominal = load_roofs(f"{scaled}@1t")
    assert one.name == "box measured (1 thread)" and one.kind == "measured"
    assert one.find_memory("DRAM").value == 20e9 and one.find_compute("fp64").value == 50e9
    assert nominal.kind == "nominal"
    # the probed count is the measured roof itself
    assert load_roofs(f"{scaled}@4t")[0].find_memory("DRAM").value == 40e9
    assert run("report", str(kernels), "--on", f"{scaled}@1t", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof"]["name"] == "box measured (1 thread)"
    k1 = next(p for p in doc["analysis"] if p["kernel"] == "k1")
    # the CSV's kernels are fp32: at one thread ridge 100 GFLOP/s / 20 GB/s = 5 FLOP/B
    # (all 4 threads: 380/40 = 9.5)
    assert k1["ridge"] == pytest.approx(5.0)
    assert run("specs", "show", f"{scaled}@2t", "--json") == 0
    shown = json.loads(capsys.readouterr().out)["roof"]
    assert shown["memory"][0]["bytes_per_s"] == 36e9


def test_on_at_threads_errors(scaled, ert, kernels, capsys):
    assert run("report", str(kernels), "--on", f"{scaled}@8t") == 2
    err = capsys.readouterr().err
    assert "no roof for 8 threads (thread counts in this profile: 1, 2, 4)" in err
    assert run("report", str(kernels), "--on", f"{ert}@1t") == 2
    assert "'@1t' picks a thread count of a probed profile" in capsys.readouterr().err
    assert run("report", str(kernels), "--on", f"{scaled.parent / 'none.json'}@1t") == 2
    err = capsys.readouterr().err
    assert "none.json: file not found" in err and "Traceback" not in err


def test_specs_import_reads_ert_and_threads_given_twice_is_refused(ert, scaled, tmp_path,
                                                                   capsys):
    out = tmp_path / "r.json"
    assert run("specs", "import", str(ert), "-o", str(out)) == 0
    doc = json.loads(out.read_text())
    assert doc["name"] == "edison" and doc["kind"] == "measured"
    assert doc["compute"][0]["flop_per_s"] == pytest.approx(355.79e9, rel=1e-12)
    assert [m["level"] for m in doc["memory"]] == ["L1", "L2", "L3", "DRAM"]
    capsys.readouterr()
    assert run("specs", "show", f"{scaled}@1t", "--threads", "2") == 2
    assert "names a thread count already" in capsys.readouterr().err
