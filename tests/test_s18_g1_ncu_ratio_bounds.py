"""Review s18 r4 follow-ups (fixer g1).

F5: an Nsight Compute report records device__attribute_single_to_double_precision_perf_ratio
(64 on the RTX 4060 Laptop GPU) but its roofline section only the fp64 FMA peak: the roof had
no fp32 ceiling, and output.csv's sigma_gpp_gpu_29 (fp64 + 2 % fp32 FLOP) read 57 % "only
indicative". Now fp32 = 64 x the fp64 peak, with its own method words, and the weighted
ceiling gives 55.5 %.
f3's leftovers: a chart point drawn with --level L2 said "latency" for a point the tables
call "not binding (DRAM binds)"; the .md report printed "compute" on the envelope roof where
the terminal says "no roof (give --on)".
"""

from __future__ import annotations

import json

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze

DFMA_PEAK = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"
RATIO = "device__attribute_single_to_double_precision_perf_ratio"
# output.csv's sigma_gpp_gpu_29: dadd + dmul + 2 dfma, 2 ffma, cycles / clock
GPP_FP64 = 122_305_685_313 + 371_957_323_851 + 2 * 734_774_600_586
GPP_FP32 = 2 * 24_541_362_358
GPP_T = 36_873_068_823 / 1_619_726_202.90


def _gpp(name: str) -> str:
    return str(gpp_recording(name))


# --- F5: fp32 ceiling from the single/double ratio ------------------------------------

def test_f5_fp32_peak_is_the_ratio_times_the_fp64_peak():
    from rooflab.ingest.ncu_metrics import derived_peaks, is_used, recorded_peaks

    m = {DFMA_PEAK: 48.0, "sm__cycles_elapsed.avg.per_second": 1.62e9, RATIO: 64.0}
    compute, _ = recorded_peaks(m)
    assert compute == {"fp64": pytest.approx(2 * 48 * 1.62e9)}     # 155.5 GFLOP/s
    fp32, how = derived_peaks(m, compute)["fp32"]
    assert fp32 == pytest.approx(64 * 2 * 48 * 1.62e9)              # 9.95 TFLOP/s
    assert how == "derived: fp64 peak x single/double ratio 64 (ncu)"
    assert is_used(RATIO)     # kept from a report's or a raw page's launch metrics
    # a recorded fp32 peak stands; no ratio, nothing derived
    assert derived_peaks(m, {"fp64": 1.0, "fp32": 5.0}) == {}
    assert derived_peaks({DFMA_PEAK: 48.0}, compute) == {}


def test_f5_failed_launch_is_still_failed_with_the_device_ratio():
    from rooflab.ingest.ncu_metrics import launch_counts

    nan = float("nan")
    # a device attribute is a number even when every metric of the launch is nan
    c = launch_counts({"dram__bytes.sum": nan, "gpu__time_duration.sum": nan, RATIO: 64.0})
    assert c.problem == "every metric is nan (a failed launch)"


def test_f5_peaks_roof_names_each_ceilings_method():
    from rooflab.ingest.profile_import import RecordedPeaks, peaks_roof

    roof = peaks_roof(RecordedPeaks({"fp64": 155.52e9, "fp32": 64 * 155.52e9},
                                    {"DRAM": 255.8e9}, "r.ncu-rep",
                                    methods={"fp32": "derived: fp64 peak x ratio"}))
    said = {c.precision: c.method for c in roof.compute}
    assert said == {"fp64": "peak_sustained x clock (ncu)", "fp32": "derived: fp64 peak x ratio"}
    assert roof.memory[0].method == "peak_sustained x clock (ncu)"


def test_f5_output_csv_on_output1_rep_reads_55_5(capsys):
    csv, rep = _gpp("output.csv"), _gpp("output1.ncu-rep")
    assert main(["ncu", csv, "--on", rep, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ceilings = {c["precision"]: c for c in doc["roof"]["compute"]}
    p64 = ceilings["fp64"]["flop_per_s"]
    assert p64 == pytest.approx(155.52e9, rel=1e-3)                 # 2 x 48 x 1.62 GHz
    assert ceilings["fp64"]["method"] == "peak_sustained x clock (ncu)"
    assert ceilings["fp32"]["flop_per_s"] == pytest.approx(64 * p64)   # 9.95 TFLOP/s
    assert ceilings["fp32"]["method"].startswith("derived: fp64 peak x single/double ratio 64")
    assert ceilings["fp32"]["kind"] == "derived"
    # weighted ceiling (fp64 at 155.5, fp32 at 9.95 T): 159.3 GFLOP/s; 88.42 of it = 55.5 %
    # (the fp64 ceiling alone, as before: 56.9 %, printed 57 %)
    hand = 100 * (GPP_FP64 / p64 + GPP_FP32 / (64 * p64)) / GPP_T
    assert hand == pytest.approx(55.49, abs=0.01)
    dram = next(p for p in doc["analysis"] if p["level"] == "DRAM")
    assert dram["percent_of_roof"] == pytest.approx(hand, rel=1e-4)
    assert main(["ncu", csv, "--on", rep]) == 0
    text = capsys.readouterr().out
    dram_row = next(r for r in text.splitlines() if "DRAM" in r and "GFLOP/s" in r)
    assert "55 %" in dram_row and "compute" in dram_row
    out = " ".join(text.split())
    assert "only indicative" not in out and "held to a weighted 159.3 GFLOP/s" in out


# --- chart points: bound with every level in view ------------------------------------

# DRAM 300 GB/s, L2 2 TB/s: a reduction at 16 % of DRAM is 2.4 % of L2
GPU = Roof("test GPU", "nominal",
           compute=(Ceiling(10e12, precision="fp32"), Ceiling(5e12, precision="fp64")),
           memory=(Ceiling(300e9, level="DRAM"), Ceiling(2e12, level="L2")))


def _red() -> Kernel:
    return Kernel("red", {"fp64": 5e5}, {"DRAM": 4e6, "L2": 4e6},
                  seconds=4e6 / (0.16 * 300e9))


def test_chart_point_at_one_level_keeps_not_binding():
    from rooflab.report.chart import roofline_data

    k = _red()
    # at L2 alone it is 2.4 % of its roof: "latency" if DRAM is not in view
    (alone,) = analyze(GPU, [k], levels=["L2"]).points
    assert alone.bound == "latency" and alone.percent_of_roof == pytest.approx(2.4)
    (p,) = roofline_data([GPU], [k], level="L2", place_labels=False).points
    assert (p.level, p.bound) == ("L2", "not binding (DRAM binds)")
    drawn = {q.level: q.bound for q in roofline_data([GPU], [k], place_labels=False).points}
    assert drawn == {"DRAM": "memory", "L2": "not binding (DRAM binds)"}


def test_plot_json_level_l2_on_output1_rep(capsys):
    assert main(["plot", _gpp("output1.ncu-rep"), "--level", "L2", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["drawn"]["points"]
    red = next(p for p in pts if p["kernel"] == "sigma_gpp_gpu_34_gpu__red")
    # 3.3 % of L2; its DRAM point (16 %) binds, as `rooflab ncu --level L2` says
    assert red["percent_of_roof"] == pytest.approx(3.31, abs=0.01)
    assert red["bound"] == "not binding (DRAM binds)"


def test_chart_point_on_the_envelope_says_no_roof():
    from rooflab.ingest.profile_envelope import envelope_roof
    from rooflab.report.chart import roofline_data

    k = Kernel("one", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.01)
    (p,) = roofline_data([envelope_roof([k])], [k], place_labels=False).points
    assert p.bound == "no roof (give --on)"     # as the terminal's tables say


# --- markdown report: bound words on the envelope roof -------------------------------

def _envelope_report(kernels: list[Kernel]) -> str:
    from rooflab.ingest.profile_envelope import envelope_roof
    from rooflab.model.diagnose import diagnose
    from rooflab.report.markdown import machine_for, markdown_report

    an = analyze(envelope_roof(kernels), kernels)
    return markdown_report(an, diags=diagnose(an, machine_for(an)))


def test_markdown_on_the_envelope_says_no_roof_and_relative():
    # "a" sets both envelope ceilings (10 GFLOP/s, 1 GB/s: AI 10 at the ridge); "b" at
    # AI 2 reaches 1 of the 2 GFLOP/s the DRAM envelope allows: 50 %, memory relative
    a = Kernel("a", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.1)
    b = Kernel("b", {"fp64": 1e8}, {"DRAM": 5e7}, seconds=0.1)
    md = _envelope_report([a, b])
    rows = {r.split("|")[2].strip(): r.split("|")[3].strip()
            for r in md.splitlines() if r.startswith("| 1 |") or r.startswith("| 2 |")}
    assert rows == {"a": "no roof (give --on)", "b": "memory (relative)"}
    assert "### 1. b — memory-bound relative to the best here (no roof: give --on)" in md \
        or "### 2. b — memory-bound relative to the best here (no roof: give --on)" in md
    assert "a — no roof to judge against; give --on" in md
    assert "1 at the best here (no roof: give --on), 1 memory-bound (relative)" in md \
        or "1 memory-bound (relative), 1 at the best here (no roof: give --on)" in md
    assert "compute-bound" not in md and "| compute |" not in md


def test_report_md_of_output3_csv(tmp_path, capsys):
    out = tmp_path / "o3.md"
    assert main(["report", _gpp("output3.csv"), "-o", str(out)]) == 0
    md = out.read_text()
    # output3 alone sets its envelope: the terminal's words, not "compute" by a tie
    assert "| 1 | sigma_gpp_gpu_34 | no roof (give --on) |" in md
    assert "### 1. sigma_gpp_gpu_34 — no roof to judge against; give --on" in md
    assert "compute-bound" not in md and "| compute |" not in md
    # on the GPU's own roof the class stands (56 % of fp64: compute)
    assert main(["report", _gpp("output3.csv"), "--on", _gpp("output1.ncu-rep"),
                 "-o", str(out)]) == 0
    md = out.read_text()
    assert "| 1 | sigma_gpp_gpu_34 | compute |" in md and "— compute-bound" in md
