"""Review s26 r2 F2, F3, F7 and the fp4 counters: Nsight Compute's precisions in rooflab.

F3: ncu draws one point per precision (double, single, ... charts); rooflab merged a
kernel's precisions into one point named after the biggest. `rooflab ncu --precision fp64`
gives ncu's double-precision point, `--precision each` a row per precision; the default
(one point, weighted ceiling, the same % of roof) is unchanged.
F2: the chart drew the label precision's ceiling only, so a mixed kernel's binding fp64
line was left out.
F7: an ncu default-set CSV (SOL display names) was told to "pass the .ncu-rep itself",
whose default set has no FLOP counts either.
fp4: Blackwell's fp4 (e2m1) tensor counters were counted as int4.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Kernel

ON = "RTX 4060 Laptop GPU"
# NERSC GPP output.csv's sigma_gpp_gpu_29 (review r2's hand working): fp64 = dadd + dmul +
# 2 dfma, fp32 = 2 ffma, in 36,873,068,823 cycles at 1,619,726,202.90 Hz
FP64 = 122_305_685_313 + 371_957_323_851 + 2 * 734_774_600_586
FP32 = 2 * 24_541_362_358
SECONDS = 36_873_068_823 / 1_619_726_202.90
DRAM = 134_957_158_144


@pytest.fixture
def output(fixtures_dir):
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    return path


def _ncu_json(capsys, *args: str) -> dict:
    assert main(["ncu", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _dram(doc: dict) -> list[dict]:
    return [p for p in doc["analysis"] if p["level"] == "DRAM"]


# --- F3: one point per precision, as ncu's charts ------------------------------------------

def test_fp64_view_is_ncus_double_precision_point(output, capsys):
    doc = _ncu_json(capsys, str(output), "--on", ON, "--precision", "fp64")
    (p,) = _dram(doc)
    assert p["flop"] == pytest.approx(FP64)                        # 1.9638e12, fp32 left out
    assert p["achieved_flop_per_s"] == pytest.approx(FP64 / SECONDS)
    assert round(p["achieved_flop_per_s"] / 1e9, 2) == 86.26       # ncu: 86.26 GFLOP/s
    assert round(p["ai"], 2) == 14.55                              # ncu: AI 14.55
    assert p["precision"] == "fp64" and round(p["percent_of_roof"]) == 55
    assert any("--precision fp64: each kernel's fp64 FLOP alone" in n
               for n in doc["import_notes"])


def test_each_view_gives_the_single_precision_point_too(output, capsys):
    doc = _ncu_json(capsys, str(output), "--on", ON, "--precision", "each")
    by = {p["kernel"]: p for p in _dram(doc)}
    assert set(by) == {"sigma_gpp_gpu_29 [fp64]", "sigma_gpp_gpu_29 [fp32]"}
    fp32 = by["sigma_gpp_gpu_29 [fp32]"]
    assert fp32["flop"] == pytest.approx(FP32)                     # 4.908e10
    assert round(fp32["achieved_flop_per_s"] / 1e9, 2) == 2.16     # ncu: 2.16 GFLOP/s
    assert round(fp32["ai"], 3) == 0.364                           # ncu: AI 0.364
    assert fp32["precision"] == "fp32" and fp32["seconds"] == pytest.approx(SECONDS)
    assert any("split into one row per precision" in n for n in doc["import_notes"])


def test_default_view_is_unchanged(output, capsys):
    doc = _ncu_json(capsys, str(output), "--on", ON)
    (p,) = _dram(doc)
    assert p["flop"] == pytest.approx(FP64 + FP32)
    assert round(p["achieved_flop_per_s"] / 1e9, 1) == 88.4


@pytest.mark.parametrize("word, says", [
    ("fp7", "not a precision; give each"),
    ("all", "rooflab plot FILE --on GPU --precision all"),
])
def test_bad_precision_is_a_clear_error(output, capsys, word, says):
    assert main(["ncu", str(output), "--precision", word]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert says in err and "Traceback" not in err


def test_precision_no_kernel_has(output, capsys):
    assert main(["ncu", str(output), "--precision", "fp16"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "no kernel has fp16 FLOP; the kernels have fp32, fp64" in err


def test_load_inputs_takes_the_view(output):
    # for report and plot: cli/inputs.load_inputs(precision=...), as `ncu --precision`
    from rooflab.cli.inputs import load_inputs

    inputs = load_inputs([str(output)], [ON], precision="fp64")
    (k,) = inputs.kernels
    assert dict(k.flop) == {"fp64": pytest.approx(FP64)}
    assert any(n.startswith("--precision fp64") for n in inputs.notes)


# --- F2: the chart draws every ceiling a mixed kernel is held to ---------------------------

def _tensor_kernel() -> Kernel:
    # review r2's tensor.csv: output.csv with sm__inst_executed_pipe_tensor.sum = 1e9, counted
    # as 1e9 x 4096 fp16 FLOP (Ada HMMA); fp64 still holds 97 % of the time at the roof
    return Kernel("sigma_gpp_gpu_29", {"fp16": 4.096e12, "fp64": float(FP64),
                                       "fp32": float(FP32)}, {"DRAM": DRAM},
                  seconds=SECONDS, unit="tensor")


def test_auto_ceilings_keep_a_mixed_kernels_binding_fp64():
    from rooflab.hardware.resolve import load_roof
    from rooflab.report.chart_ceilings import select_ceilings

    roof = load_roof(ON)
    (kept,), hidden, _ = select_ceilings([roof], [_tensor_kernel()])
    labels = {c.label for c in kept}
    # old: fp16 tensor and fp8 tensor only; fp64 vector (228 GFLOP/s) binds
    assert {"fp16 tensor", "fp64 vector", "fp32 vector"} <= labels
    assert not any("fp64 vector" in h for h in hidden)


def test_plot_of_a_mixed_ncu_kernel_draws_fp64(output, tmp_path, capsys):
    text = output.read_text()
    row = next(line for line in text.splitlines() if "sm__inst_executed_pipe_tensor.sum" in line)
    value = row.rsplit(",", 1)[1]
    (tmp_path / "tensor.csv").write_text(text.replace(row, row[: -len(value)] + '"1e9"'))
    assert main(["plot", str(tmp_path / "tensor.csv"), "--on", ON,
                 "-o", str(tmp_path / "t.png")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    left_out = err.split("left out", 1)[1].split(";", 1)[0]
    assert "fp64 vector" not in left_out and "fp16 tensor" not in left_out


# --- F7: the default set's CSV -------------------------------------------------------------

SOL_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
            '"Metric Unit","Metric Value"')
# rows of a real `ncu --csv` default-set export (microsoft/superbenchmark's cublaslt test)
SOL_ROWS = [("DRAM Frequency", "hz", "3995313115.40"), ("SM Frequency", "hz", "1239496049.13"),
            ("Elapsed Cycles", "cycle", "508757"), ("Duration", "us", "410.37"),
            ("Memory Throughput", "%", "22.35"), ("Compute (SM) Throughput", "%", "87.12")]


def test_default_set_csv_is_told_to_reprofile_with_a_roofline_set(tmp_path, capsys):
    rows = [SOL_HEAD] + [
        f'"0","1","cublaslt_gemm","h","gemm_f8","1","7","(384, 1, 1)","(9, 32, 1)","0",'
        f'"10.0","GPU Speed Of Light Throughput","{m}","{u}","{v}"' for m, u, v in SOL_ROWS]
    p = tmp_path / "sol.csv"
    p.write_text("\n".join(rows) + "\n")
    assert main(["ncu", str(p), "--on", "B200"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "re-profile with `ncu --set roofline` (or `--set full`)" in err
    assert "pass the .ncu-rep itself" not in err


# --- fp4: Blackwell's e2m1 tensor counters are fp4, not int4 -------------------------------

@pytest.mark.parametrize("metric", ["sm__ops_path_tensor_src_fp4.sum",
                                    "sm__ops_path_tensor_src_e2m1.sum",
                                    "sm__ops_path_tensor_src_fp4_fp6_dst_fp16.sum"])
def test_fp4_tensor_ops_are_fp4(metric):
    from rooflab.ingest.ncu_flop import flop_counts

    flop, notes, *_ = flop_counts({metric: 2.0e12}, (10, 0))
    assert flop == {"fp4": 2.0e12}        # old: {"int4": 2e12}, judged against int4 tensor
    assert ("fp6" in " ".join(notes)) == ("fp6" in metric)


def test_fp4_without_a_ceiling_is_worded_as_its_stand_in():
    # H100 lists no fp4: fp4 math is held to fp8 tensor (1.98 PFLOP/s); the cause named
    # "fp4 tensor at 1.98 PFLOP/s", a ceiling H100 does not have
    from rooflab.hardware.resolve import load_roof
    from rooflab.model import analyze
    from rooflab.model.sanity import check_analysis

    k = Kernel("gemm_fp4", {"fp4": 4e15}, {"DRAM": 1e9}, seconds=1.0, unit="tensor")
    (found,) = [f for f in check_analysis(analyze(load_roof("H100"), [k]))
                if f.check == "above_roof"]
    assert "held to fp8 tensor (standing in for fp4) at 1.98 PFLOP/s" in found.causes[0]
    assert "fp4 tensor at" not in found.causes[0]
