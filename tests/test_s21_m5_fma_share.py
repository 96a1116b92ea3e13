"""meta fma_share from an ncu file: the (add + mul, fma) instructions of each launch
(ncu_flop.fma_instructions, carried on Counts.fma) summed over a kernel's launches, then
fma / (add + mul + fma) per precision, which the compute-side below-roof words name as the
no-FMA ceiling (model/fma_ceiling.py; review s21 r3 F9).

NERSC GPP output1.ncu-rep, sigma_gpp_gpu_34 (launch 0, smsp__ counts): dadd 158,180,752,242
+ dmul 803,017,623,077 = 961,198,375,319 add/mul, dfma 817,773,953,820; s = 817.774 G /
1778.972 G = 0.45969, so at most (1 + s) / 2 = 72.98 % of the fp64 peak = 2596.746 G FLOP /
(2 x 1778.972 G). (The 0.598 / 79.9 % figure is output.csv's later step, sigma_gpp_gpu_29:
dfma 734.8 G of 1229.0 G.) Its reduction launch: dadd 524,280 only, s = 0.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_inproc import json_of, run_cli

from rooflab.ingest.aggregate import Launch, group_kernel, group_launches
from rooflab.ingest.ncu_flop import fma_instructions
from rooflab.ingest.ncu_metrics import launch_counts
from rooflab.ingest.skips import SkipLog

GPP = Path("/work/shared/fixtures/ncu/nersc-gpp")
REP, CSV0 = GPP / "output1.ncu-rep", GPP / "output.csv"
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"

NON1, FMA1 = 158_180_752_242.0 + 803_017_623_077.0, 817_773_953_820.0
SHARE1 = FMA1 / (NON1 + FMA1)
NON0, FMA0 = 122_305_685_313.0 + 371_957_323_851.0, 734_774_600_586.0
SHARE0 = FMA0 / (NON0 + FMA0)


def _launch(i: int, **inst: float) -> Launch:
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e6,
         **{INST.format(op): v for op, v in inst.items()}}
    return Launch("k.csv", 2 + i, str(i), "axpy", m)


def _kernel(*launches: Launch):
    (g,) = group_launches(launches, SkipLog("k.csv"))
    return group_kernel(g, "axpy")


def test_shares_are_of_the_instructions_summed_over_launches():
    # launch 0: 100 + 200 add/mul, 300 fma (s 0.5); launch 1: 100 mul, 700 fma (s 0.875).
    # The sum, 1000 of 1400 = 0.714, not the launches' mean 0.6875. fp32: 50 fadd, no ffma.
    k = _kernel(_launch(0, dadd=100.0, dmul=200.0, dfma=300.0, fadd=50.0),
                _launch(1, dadd=0.0, dmul=100.0, dfma=700.0))
    assert k.flop == {"fp64": 100 + 300 + 2 * 1000, "fp32": 50.0}
    assert k.meta["fma_share"] == {"fp64": pytest.approx(1000 / 1400), "fp32": 0.0}
    assert launch_counts(_launch(0, dfma=3.0, hadd=2.0).metrics).fma == {
        "fp64": (0.0, 3.0), "fp16": (2.0, 0.0)}


@pytest.mark.parametrize("inst", [
    {"dadd": 158_180_752_242.0, "dmul": 803_017_623_077.0, "dfma": 817_773_953_820.0},
    {"dadd": 3.0, "dfma": 5.0, "hadd": 7.0, "hmul": 1.0, "hfma": 9.0},    # no dmul: partial
    {"fadd": float("nan"), "fmul": 2.0, "ffma": float("nan")},
    {"dadd": 0.0, "dmul": 0.0, "dfma": 0.0, "ffma": 4.0}])
def test_launch_counts_pairs_are_fma_instructions(inst):
    # launch_counts takes add + mul from the FLOP (a launch costs 3 gets, not 9): the same
    # pairs as counting each instruction, with the smsp__ spelling standing in for a nan sm__
    m = _launch(0, **inst).metrics
    if "ffma" in inst and inst["ffma"] != inst["ffma"]:
        m["smsp__" + INST.format("ffma")[4:]] = 6.0
    assert launch_counts(m).fma == fma_instructions(m) != {}


def test_tensor_flop_leave_the_pairs_to_the_instructions():
    # 4096 fp16 tensor ops sit in the fp16 FLOP: the pairs are still 3 hadd, 5 hfma
    m = {**_launch(0, hadd=3.0, hfma=5.0).metrics,
         "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 4096.0}
    c = launch_counts(m, (8, 9))
    assert c.flop["fp16"] == 2 * 3 + 4 * 5 + 4096 and c.tensor_flop == 4096
    assert c.fma == {"fp16": (3.0, 5.0)}


def test_no_share_without_instructions_or_for_a_precision_dropped_as_n_a():
    # no add/mul/fma counted: no fma_share key at all (a bytes-only copy keeps its meta)
    assert "fma_share" not in _kernel(_launch(0, dadd=0.0, dfma=0.0)).meta
    # fp32 n/a in launch 1: its FLOP are dropped for the kernel (drop_unknown), its share too
    nan = float("nan")
    k = _kernel(_launch(0, dadd=1.0, dfma=3.0, fadd=4.0, ffma=4.0),
                _launch(1, dadd=1.0, dfma=1.0, fadd=nan, fmul=nan, ffma=nan))
    assert "fp32" not in k.flop
    assert k.meta["fma_share"] == {"fp64": pytest.approx(4 / 6)}


def _recording(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    if path.suffix == ".ncu-rep":
        pytest.importorskip("ncu_report")
    return path


def _below_roof_words(doc: dict, kernel: str) -> str:
    (d,) = [d for d in doc["diagnosis"] if d["kernel"] == kernel]
    return next(x["words"] for x in d["distances"] if x["name"] == "below roof")


def test_gpp_report_names_the_no_fma_ceiling(capsys, tmp_path):
    rep = str(_recording(REP))
    assert SHARE1 == pytest.approx(0.45969, abs=1e-5)
    assert (1 + SHARE1) / 2 == pytest.approx(2596746282959.0 / (2 * (NON1 + FMA1)))
    doc = json_of(capsys, ["report", rep, "--json"])
    (k, red) = doc["kernels"]
    assert k["meta"]["fma_share"] == {"fp64": pytest.approx(SHARE1)}
    assert red["meta"]["fma_share"] == {"fp64": 0.0}
    said = ("FMA share 46 % of fp64 add/mul/fma instructions: this mix tops out at "
            "(1 + 0.46) / 2 = 73 % of the peak (the no-FMA ceiling")
    assert said in _below_roof_words(doc, "sigma_gpp_gpu_34")
    # read back from `ncu -o k.json`, meta.fma_share and the words stay
    out = tmp_path / "k.json"
    assert run_cli("ncu", rep, "-o", str(out)).returncode == 0
    saved = json.loads(out.read_text())["kernels"][0]["meta"]["fma_share"]
    assert saved == {"fp64": pytest.approx(SHARE1)}
    again = json_of(capsys, ["report", str(out), "--json"])
    assert said in _below_roof_words(again, "sigma_gpp_gpu_34")


def test_gpp_csv_step_share_0_598_on_an_l4(capsys):
    doc = json_of(capsys, ["report", str(_recording(CSV0)), "--on", "L4", "--json"])
    (k,) = doc["kernels"]
    assert k["meta"]["fma_share"]["fp64"] == pytest.approx(SHARE0)
    assert SHARE0 == pytest.approx(0.59785, abs=1e-5)
    assert ("FMA share 60 % of fp64 add/mul/fma instructions: this mix tops out at "
            "(1 + 0.60) / 2 = 80 % of the peak") in _below_roof_words(doc, "sigma_gpp_gpu_29")


def test_a_csv_fma_share_column_stands_for_the_meta(capsys, tmp_path):
    # a CSV holds no nested meta: an fma_share_fp64 column (kept as meta by the reader) does.
    # GPP output.csv's kernel (its fp64 part) on an L4, as in test_s21_m1_fma_ceiling.
    path = tmp_path / "k.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "flop", "precision", "bytes", "seconds", "fma_share_fp64"])
        w.writerow(["gpp", "1963.8e9", "fp64", "132e9", "22.77", f"{SHARE0!r}"])
    doc = json_of(capsys, ["report", str(path), "--on", "L4", "--json"])
    assert ("FMA share 60 % of fp64 add/mul/fma instructions: this mix tops out at "
            "(1 + 0.60) / 2 = 80 % of the peak") in _below_roof_words(doc, "gpp")
