"""Review 18a's seed-reader findings on roofs, examples and docs (F7, F9, L4, L6) and review
18c F20 (the working-set chart), with values by hand from the seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.report.sweep_chart import plot_sweep, sweep_table, sweep_to_json, table_rows

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"
KiB, MiB = 2**10, 2**20


def run(capsys, *args):
    code = main([str(SEEDS / a) if (SEEDS / a).is_file() else str(a) for a in args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


# ------------------------------------------------------------------ F7: seed 000's roof

def test_seed000_roof_is_the_seeds_fp16_tensor_roof():
    # seed 000 §3.3: peak_flops = 280000 # GFLOPS (FP16 Tensor Core), 1.8 TB/s
    roof = json.loads((SEEDS / "seed000roof.json").read_text())["roof"]
    (c,) = roof["compute"]
    assert (c["precision"], c["unit"], c["flop_per_s"]) == ("fp16", "tensor", 280e12)
    assert roof["memory"][0]["bytes_per_s"] == 1.8e12
    assert "fp32" not in roof["name"]
    # the relabelled copies are gone: fp32-counted bytes are not called fp16
    assert not (SEEDS / "seed000_fp16.csv").exists()
    assert not (SEEDS / "seed000roof_fp16.json").exists()


def test_seed000_table_keeps_the_honest_fallback(capsys):
    code, out, err = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json")
    assert code == 0
    assert "has no fp32 ceiling; using fp16 tensor" in out + err
    code, out, _ = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json", "--json")
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # gemm_1024 on the fp16-tensor flat: 4.2 TFLOP/s / 280 TFLOP/s = 1.5 %
    assert pts["gemm_1024"]["percent_of_roof"] == pytest.approx(4200e9 / 280e12 * 100)


def test_seed000_gemm_on_an_fp32_roof_is_compute_bound_at_22_percent(capsys):
    code, out, _ = run(capsys, "report", "seed000.csv", "--on", "A100", "--json")
    assert code == 0
    g = {p["kernel"]: p for p in json.loads(out)["analysis"]}["gemm_1024"]
    # AI 175 > the A100's fp32 ridge 19.5e12 / 2.039e12 = 9.56: on the fp32 flat,
    # 4.2 / 19.5 = 21.5 % (docs/seeds.md says so; "2 %, latency" is the seed's mismatch)
    assert g["bound"] == "compute"
    assert g["percent_of_roof"] == pytest.approx(4.2 / 19.5 * 100)
    page = (ROOT / "docs" / "seeds.md").read_text()
    assert "mixes" in page and "22 %" in page


# ----------------------------------------------------------- L4: elementwise_add's bytes

def test_elementwise_add_row_is_fp16_shaped_and_the_page_says_so():
    row = next(r for r in (SEEDS / "seed000.csv").read_text().splitlines()
               if r.startswith("elementwise_add"))
    flop, nbytes = (float(v) for v in row.split(",")[1:3])
    # 4 B per FLOP: y = x + 1 in fp16 (2 B read + 2 B written per 1 FLOP); fp32 would be
    # 8 B, fp32 z = x + y 12 B
    assert nbytes / flop == pytest.approx(4.0)
    page = " ".join((ROOT / "docs" / "seeds.md").read_text().split())
    assert "three of the four rows" in page


# ------------------------------------------------------ L6: specs compare measured/nominal

@pytest.mark.parametrize("order", [("T4", "t4p.json"), ("t4p.json", "T4")])
def test_specs_compare_gives_measured_over_nominal(capsys, order):
    code, out, _ = run(capsys, "specs", "compare", *order)
    assert code == 0
    # seed 004's 实测 ÷ 标称: 270 / 320 = 84 %, 50 / 65 = 77 % (not 1.19 and 1.3)
    assert "measured / nominal" in out
    dram = re.search(r"│ DRAM │[^\n]*?│ (\S+) │", out)
    assert "270 GB/s" in out and " 84 % " in out and " 77 % " in out
    assert "1.19" not in out and dram is not None


# -------------------------------------------------------------- 18c F20: the sweep chart

def _point(ws, rate, calibrated=True):
    return {"ws_bytes_per_thread": ws, "ws_bytes_total": ws, "bytes_per_s": rate,
            "median_bytes_per_s": rate, "spread": None, "calibrated": calibrated,
            "samples": [rate, rate]}


def _profile():
    sweep = {"kernel": "triad", "threads": 1,
             # 18c F20's me.json: 12 MB/s at 8 KiB, uncalibrated, among 100+ GB/s points
             "points": [_point(4 * KiB, 120e9), _point(8 * KiB, 1.2e7, calibrated=False),
                        _point(16 * KiB, 125e9), _point(256 * MiB, 20e9)],
             "plateaus": []}
    measured = Roof("box measured", kind="measured",
                    compute=(Ceiling(1e11, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=(Ceiling(20e9, level="DRAM", provenance="measured"),))
    return profile_to_dict(MachineProfile(host={"name": "EPYC 7B13 box"}, measured=measured,
                                          extras={"bandwidth_sweep": sweep}))


def test_uncalibrated_points_are_marked_not_drawn_as_readings():
    t = sweep_table(_profile())
    assert [r.calibrated for r in t.rows] == [True, False, True, True]
    assert [p["calibrated"] for p in sweep_to_json(t)["points"]] == [True, False, True, True]
    assert "! uncalibrated" in table_rows(t)[1][-1]
    d = plot_sweep(t)
    # the lines skip the 8 KiB point; it is drawn apart, hollow, and says why
    assert list(d.lines_["best"].get_xdata()) == [4 * KiB, 16 * KiB, 256 * MiB]
    assert list(d.lines_["uncalibrated"].get_xdata()) == [8 * KiB]
    assert "uncalibrated" in d.lines_["uncalibrated"].get_label()


def test_sweep_chart_names_the_machine_and_sizes_in_kib(tmp_path, capsys):
    t = sweep_table(_profile())
    d = plot_sweep(t)
    assert d.ax_.get_title() == "EPYC 7B13 box: triad bandwidth vs working set"
    fmt = d.ax_.xaxis.get_major_formatter()
    assert [fmt(b, 0) for b in (4 * KiB, 256 * MiB, 2 * 2**30)] == ["4 KiB", "256 MiB",
                                                                   "2 GiB"]
    path = tmp_path / "me.json"
    path.write_text(json.dumps(_profile()))
    png = tmp_path / "ws.png"
    code, _, _ = run(capsys, "specs", "show", path, "--sweep", "-o", png)
    assert code == 0 and png.stat().st_size > 0


# ------------------------------------------------------- F9: the page's new seed sections

def test_day10_top5_headroom_is_the_seeds_time_over_bandwidth_floor(capsys):
    assert "day10.csv" in (ROOT / "docs" / "seeds.md").read_text()
    code, out, _ = run(capsys, "report", "day10.csv", "--on", "t4p.json", "--json")
    assert code == 0
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # lm_head: 131e6 B / 270e9 B/s = 485 us floor, 600 us measured: 1.24x
    floor = 131e6 / 270e9
    assert pts["lm_head gemm"]["seconds"] / floor == pytest.approx(600e-6 / floor)
    assert pts["lm_head gemm"]["percent_of_roof"] == pytest.approx(floor / 600e-6 * 100)
    # rmsnorm: 12e3 B / 270e9 = 44.4 ns, 6 us measured: 135x, the launch binds
    assert pts["rmsnorm"]["bound"] == "overhead"
    assert pts["down gemm"]["seconds"] is None          # the seed's None: untimed


def test_seed002_gelu_raises_ai_not_speed(capsys):
    # 1e8 fp16 elements: 400 MB read + written / 2.039 TB/s = 196 us, with 1 FLOP per
    # element (AI 0.25) and with 14 (AI 3.5): both memory-bound, the same floor
    for extra, ai in (([], "AI 0.25 FLOP/byte"), (["--flop-per-element", "14"],
                                                  "AI 3.5 FLOP/byte")):
        code, out, _ = run(capsys, "ai", "elementwise", "1e8", *extra, "--on", "A100")
        assert code == 0 and ai in out and "time floor 196 us" in out
        assert "bound memory" in out
    page = " ".join((ROOT / "docs" / "seeds.md").read_text().split())
    assert "AI rises 14x and the time floor stays 196 us" in page
