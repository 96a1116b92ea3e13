"""rooflab ncu on the real NERSC GPP recordings (../shared/fixtures/ncu/nersc-gpp)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
STEPS = ["output.csv"] + [f"output{i}.csv" for i in range(1, 8)]


@pytest.fixture
def gpp() -> Path:
    if not (GPP / "output.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    return GPP


def metrics_of(path: Path) -> dict[str, float]:
    """The file's own numbers, read with the csv module (the independent reference)."""
    rows = list(csv.reader(line for line in path.read_text().splitlines()
                           if line.startswith('"')))
    head = rows[0]
    i, v = head.index("Metric Name"), head.index("Metric Value")
    return {r[i]: float(r[v].replace(",", "")) for r in rows[1:]}


def test_acceptance_output_csv_json(gpp, capsys):
    assert main(["ncu", str(gpp / "output.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    m = metrics_of(gpp / "output.csv")
    (k,) = [k for k in data["kernels"] if k["name"] == "sigma_gpp_gpu_29"]
    inst = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    fp64 = m[inst.format("dadd")] + m[inst.format("dmul")] + 2 * m[inst.format("dfma")]
    assert k["flop"]["fp64"] == fp64 == 1_963_812_210_336
    assert k["bytes"]["DRAM"] == m["dram__bytes.sum"] == 134_957_158_144
    assert k["bytes"]["L2"] == m["lts__t_bytes.sum"]
    assert k["bytes"]["L1"] == m["l1tex__t_bytes.sum"]
    seconds = m["sm__cycles_elapsed.avg"] / m["sm__cycles_elapsed.avg.per_second"]
    assert k["seconds"] == pytest.approx(seconds, rel=1e-12)
    assert k["seconds"] == pytest.approx(22.765, rel=1e-4)
    rows = [a for a in data["analysis"] if a["kernel"] == "sigma_gpp_gpu_29"]
    assert sorted(a["level"] for a in rows) == ["DRAM", "L1", "L2"]
    dram = next(a for a in rows if a["level"] == "DRAM")
    assert dram["ai"] == pytest.approx((fp64 + 2 * m[inst.format("ffma")]) / m["dram__bytes.sum"])
    assert {"achieved_flop_per_s", "attainable_flop_per_s", "percent_of_roof", "bound",
            "time_share"} <= set(dram)
    assert "no roof" in data["roof_source"] or "none known" in data["roof_source"]


def _main_kernel(path: Path):
    imp = load_ncu([str(path)])
    k = max(imp.kernels, key=lambda k: k.seconds)
    return k.flop["fp64"] / k.seconds, k.flop["fp64"] / k.bytes["DRAM"] * 1.0, imp


@pytest.mark.parametrize("step", ["output1", "output5"])
def test_ncu_rep_matches_csv_within_10_percent(gpp, step):
    pytest.importorskip("ncu_report")
    rep_rate, rep_ai, imp = _main_kernel(gpp / f"{step}.ncu-rep")
    csv_rate, csv_ai, _ = _main_kernel(gpp / f"{step}.csv")
    assert rep_rate == pytest.approx(csv_rate, rel=0.10)
    assert rep_ai == pytest.approx(csv_ai, rel=0.10)
    # the report names its device and records its peaks: fp64 2 x 48 inst/cycle x 1.62 GHz
    assert imp.devices == ("NVIDIA GeForce RTX 4060 Laptop GPU",)
    assert imp.peaks.compute["fp64"] == pytest.approx(2 * 48 * 1.62e9, rel=1e-3)
    assert imp.peaks.memory["DRAM"] == pytest.approx(32 * 7.993e9, rel=1e-3)


def test_rep_roof_comes_from_recorded_peaks(gpp, capsys):
    pytest.importorskip("ncu_report")
    assert main(["ncu", str(gpp / "output1.ncu-rep"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "peaks ncu recorded" in data["roof_source"]
    names = {k["name"] for k in data["kernels"]}
    # the main kernel has the name a CSV export gives it; the reduction its mangled key
    assert names == {"sigma_gpp_gpu_34", "sigma_gpp_gpu_34_gpu__red"}
    main_dram = next(a for a in data["analysis"]
                     if a["kernel"] == "sigma_gpp_gpu_34" and a["level"] == "DRAM")
    assert main_dram["bound"] == "compute"           # fp64 at 1/64 rate on a GeForce part
    assert 40 < main_dram["percent_of_roof"] < 70


def test_steps_trajectory_chart_and_failed_launch(gpp, tmp_path, capsys):
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "test GPU", "kind": "nominal",
                                "compute": [{"precision": "fp64", "unit": "vector",
                                             "flop_per_s": 155.5e9}],
                                "memory": [{"level": "DRAM", "bytes_per_s": 256e9},
                                           {"level": "L2", "bytes_per_s": 1.66e12},
                                           {"level": "L1", "bytes_per_s": 4.98e12}]}))
    chart = tmp_path / "gpp.png"
    files = [str(gpp / f) for f in STEPS + ["output8.csv"]]
    assert main(["ncu", *files, "--on", str(roof), "-o", str(chart)]) == 0
    out, err = capsys.readouterr()
    assert chart.stat().st_size > 10_000
    assert "output8.csv" in err and "failed launch" in err and "LaunchFailed" in err
    assert "from --on" in out and "sigma_gpp_gpu_29 [output]" in out

    from rooflab.cli.profiled import trajectory_kernels
    from rooflab.report.chart import roofline_data

    imp = load_ncu([str(gpp / f) for f in STEPS])
    assert [k.meta["step_index"] for k in sorted(imp.kernels,
                                                 key=lambda k: k.meta["step_index"])] == \
        list(range(8))
    from rooflab.hardware.resolve import load_roof

    traj = trajectory_kernels(imp.kernels)
    assert [k.meta["step"] for k in traj] == [Path(f).stem for f in STEPS]
    assert {k.name for k in traj} == {"sigma_gpp_gpu (steps)"}
    display = roofline_data([load_roof(str(roof))], traj, level="DRAM", trajectory=True)
    assert len([a for a in display.arrows if a.kind == "trajectory"]) == 7


def test_output8_alone_is_an_error(gpp, capsys):
    assert main(["ncu", str(gpp / "output8.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "failed launch" in err and "Traceback" not in err


def test_top_and_csv_output(gpp, tmp_path, capsys):
    out_csv = tmp_path / "k.csv"
    files = [str(gpp / f) for f in STEPS]
    assert main(["ncu", *files, "--top", "2", "-o", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "(top 2)" in out
    rows = list(csv.DictReader(out_csv.open()))
    # the file holds every step (as the .json does); --top trims only the screen
    assert {r["kernel"].split(" [")[1] for r in rows} == {f"{Path(f).stem}]" for f in STEPS}
    assert len({r["kernel"] for r in rows}) == len(STEPS) == 8   # one kernel per step
    assert float(rows[0]["seconds"]) == pytest.approx(30.49, rel=1e-3)   # longest first


def test_on_an_ncu_rep_judges_csv_steps_at_the_reports_clock(gpp, capsys):
    """--on output5.ncu-rep: the CSV steps are placed on the peaks ncu recorded in the report
    (fp64 2 x dfma.peak_sustained x SM clock = 155.5 GFLOP/s on this RTX 4060 Laptop GPU)."""
    csvs = [str(gpp / f"output{i}.csv") for i in (5, 6, 7)]
    assert main(["ncu", *csvs, "--on", str(gpp / "output5.ncu-rep"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fp64 = next(c for c in doc["roof"]["compute"] if c["precision"] == "fp64")
    assert fp64["flop_per_s"] == pytest.approx(155.5e9, rel=0.01)
    assert {c["level"] for c in doc["roof"]["memory"]} >= {"DRAM", "L2", "L1"}
    # output7's main kernel: 1.11 TFLOP in 12.9 s = 85.7 GFLOP/s, 55 % of 155.5 GFLOP/s
    row = next(r for r in doc["analysis"] if "output7" in r["kernel"] and r["level"] == "DRAM")
    assert row["percent_of_roof"] == pytest.approx(55.1, abs=1.0)
    assert row["bound"] == "compute"


def test_roof_line_uses_the_recorded_compute_capability(gpp, capsys):
    # The GPP CSVs record CC 8.9 (Ada) and no device name or peaks.
    assert main(["ncu", str(gpp / "output5.csv"), "--json"]) == 0
    src = json.loads(capsys.readouterr().out)["roof_source"]
    assert src.startswith("roof: none known")
    assert "the files record compute capability 8.9: e.g. --on 'L4'" in src
    assert "RTX 4090" in src and "H100" not in src
    assert main(["ncu", str(gpp / "output5.csv")]) == 0      # the table says what 100 % means
    assert ("note: % roof and bound are measured against the best these kernels reached, "
            "not against the machine") in capsys.readouterr().out
    assert main(["ncu", str(gpp / "output5.csv"), "--on", "T4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)   # the warning in notes (review r1 F10)
    assert doc["roof_source"] == "roof: NVIDIA T4 (nominal), from --on T4"
    assert doc["notes"][0] == ("warning: the kernels were profiled on a compute capability "
                               "8.9 GPU, but NVIDIA T4 is 7.5 — its ceilings may not apply")
    # judged at boost on request (else the ceilings scale to the clock: review s26 r2 F1)
    assert main(["ncu", str(gpp / "output5.csv"), "--on", "L4@boost", "--json"]) == 0
    # review 12b J: output5 ran at 1.62 GHz, L4's catalog peaks assume 30.3 TFLOP/s /
    # (58 SMs x 128 x 2) = 2.04 GHz: 1.62 / 2.04 = 79 %
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof_source"] == "roof: NVIDIA L4 (nominal), from --on L4@boost"
    src = doc["notes"][0]
    assert src.startswith("note: the kernels ran at 1.62 GHz")
    assert "assume 2.04 GHz (boost)" in src and "at most 79 %" in src
