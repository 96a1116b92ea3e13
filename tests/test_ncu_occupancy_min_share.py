"""ncu leftovers: compute-bound advice cites occupancy, .ncu-rep launches named by their
CSV ID, one share computation (model.analysis.share_totals), --min-share on the
profiler verbs' charts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.advice_compute import occupancy_words
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"

# The GPP main kernel as output1.ncu-rep records it: 5 blocks of 128 threads (4 warps)
# per SM, limited by registers: 20 of the SM's 48 warp slots = 41.67 % theoretical.
ROOF = Roof("gpu", "nominal", compute=(Ceiling(10e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(1e12, level="DRAM"),))
GPP_MAIN = {"block": "(128, 1, 1)", "grid": "(65535, 1, 1)", "sms": 24,
            "occupancy_theoretical": 100 * 20 / 48, "occupancy_achieved": 41.649,
            "occupancy_limiter": "registers", "occupancy_limit_blocks": 5.0}


def _rep(name: str) -> Path:
    if not (GPP / name).is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    pytest.importorskip("ncu_report")
    return GPP / name


def test_occupancy_words_count_the_warps():
    assert occupancy_words(GPP_MAIN) == ("theoretical 41.7 % (20 of 48 warps), limited by "
                                         "registers; achieved 41.6 %")
    # the reduction: 6 blocks of 256 threads (8 warps) fill all 48 slots
    red = {"block": "(256, 1, 1)", "occupancy_theoretical": 100.0, "occupancy_limit_blocks": 6.0}
    assert occupancy_words(red) == "theoretical 100.0 % (48 of 48 warps)"
    assert occupancy_words({"occupancy_achieved": 17.0}) == ""


def test_compute_bound_raise_occupancy_cites_the_profile():
    # 1e12 FLOP over 1e9 B (AI 1000) in 1 s on a 10 TFLOP/s roof: 10 % of it, compute-bound
    k = Kernel("k", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=1.0, meta=dict(GPP_MAIN))
    (p,) = analyze(ROOF, [k]).points
    assert p.bound == "compute"
    (occ,) = [a for a in advise(p, ROOF, k) if a.action.startswith("raise occupancy")]
    # old code: no occupancy figure in the advice
    assert occ.detail.endswith("; the profile says: occupancy theoretical 41.7 % (20 of 48 "
                               "warps), limited by registers; achieved 41.6 %")


def test_ncu_rep_launches_named_by_csv_id(capsys):
    rep = _rep("output1.ncu-rep")
    assert main(["ncu", str(rep), "--per-launch", "--json"]) == 0
    import json

    names = {k["name"] for k in json.loads(capsys.readouterr().out)["kernels"]}
    # old code: range.action, 'sigma_gpp_gpu_34 #0.0' and '... #0.1'; output1.csv says ID 0
    assert names == {"sigma_gpp_gpu_34 #0", "sigma_gpp_gpu_34_gpu__red #1"}


def test_shares_per_file_reads_analyze_not_a_second_count():
    from rooflab.cli.profiled import shares_per_file

    ks = [Kernel("a", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1e-3, meta={"step_index": 0}),
          Kernel("b", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=3e-3, meta={"step_index": 1})]
    a = analyze(ROOF, ks)
    got, note = shares_per_file(a)
    # old code rebuilt every point (a copy); the shares are analyze's (share_totals): 1, 1
    assert got is a
    assert [p.time_share for p in got.points] == [1.0, 1.0]
    assert note.startswith("share is of each kernel's own file: the 2 files")
    assert shares_per_file(analyze(ROOF, ks[:1])) == (analyze(ROOF, ks[:1]), "")


def test_ncu_chart_min_share(tmp_path, capsys):
    rep = _rep("output1.ncu-rep")
    out = tmp_path / "x.png"
    # the reduction is 102 us of 30.5 s (< 0.1 %): under 1 %, not drawn
    assert main(["ncu", str(rep), "-o", str(out), "--min-share", "1"]) == 0
    cap = capsys.readouterr()   # the chart's `wrote` line is on stderr (s22 r3 F7)
    said = " ".join((cap.out + cap.err).split())
    assert out.is_file()
    assert "1 kernel under 1 % of the time not drawn" in said


def test_min_share_without_a_chart_is_refused(capsys):
    rep = _rep("output1.ncu-rep")
    assert main(["ncu", str(rep), "--min-share", "1"]) != 0
    err = capsys.readouterr().err
    assert "--min-share leaves kernels out of the chart only: add -o x.png" in err
    assert "Traceback" not in err
