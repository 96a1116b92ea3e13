"""rooflab plot: PNG and SVG written, drawn data checked through --json, errors."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.schema import kernel_to_dict

T4_MEASURED = Roof("T4", "measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                    provenance="measured"),),
                   memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
T4_NOMINAL = Roof("T4", "nominal", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                  memory=(Ceiling(320e9, level="DRAM"),))
# Seed 004's points.
KERNELS = [Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, 0.015),
           Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                  2 * 4096**3 / 50e12, unit="tensor")]


@pytest.fixture
def files(tmp_path):
    profile = tmp_path / "t4.json"
    save_profile(profile, MachineProfile(host={"name": "T4"}, measured=T4_MEASURED,
                                         nominal=T4_NOMINAL))
    kernels = tmp_path / "kernels.json"
    write_json(kernels, {"kernels": [kernel_to_dict(k) for k in KERNELS]})
    csv = tmp_path / "more.csv"
    csv.write_text("name,flop,bytes,seconds,precision\nx + 1,1e8,4e8,0.00148148,fp16\n")
    return profile, kernels, csv


def test_png_and_svg_with_drawn_data(tmp_path, files, capsys):
    profile, kernels, csv = files
    png, svg = tmp_path / "chart.png", tmp_path / "chart.svg"
    assert main(["plot", str(kernels), str(csv), "--on", str(profile), "-o", str(png)]) == 0
    assert "wrote" in capsys.readouterr().err   # stderr, as every verb (s22 r3 F7)
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(kernels), str(csv), "--on", str(profile), "-o", str(svg),
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "<svg" in svg.read_text()
    drawn = d["drawn"]
    # A profile gives two roofs: measured solid, nominal dashed.
    styles = {(ln["roof"], ln["kind"]): ln["style"] for ln in drawn["lines"]}
    assert styles[("T4 (measured)", "memory")] == "solid"
    assert styles[("T4 (nominal)", "compute")] == "dashed"
    slope = next(ln for ln in drawn["lines"]
                 if ln["roof"] == "T4 (measured)" and ln["kind"] == "memory")
    assert slope["xs"][1] == pytest.approx(185.19, rel=1e-4) and slope["ys"][1] == 50e12
    assert sorted(round(r["ai"], 1) for r in drawn["ridges"]) == [185.2, 203.1]
    pts = {p["kernel"]: p for p in drawn["points"]}
    assert pts["decode b=1"]["flop_per_s"] == pytest.approx(146.7e9, rel=1e-3)
    # Okabe-Ito blue / orange (were #2b53d8 / #b26a12); the side is also said in words
    assert pts["decode b=1"]["color"] == "#0072B2" and pts["decode b=1"]["side"] == "memory"
    assert pts["matmul 4096"]["color"] == "#E69F00" and pts["matmul 4096"]["side"] == "compute"
    assert pts["x + 1"]["ai"] == pytest.approx(0.25)
    assert [a["percent_of_roof"] for a in d["analysis"] if a["kernel"] == "decode b=1"] == \
        [pytest.approx(54.3, abs=0.1)]


def test_roofs_only_several_on(tmp_path, files, capsys):
    profile, _, _ = files
    out = tmp_path / "roofs.svg"
    assert main(["plot", "--on", str(profile), "--on", "h200", "-o", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["roofs"]) == 3 and d["drawn"]["points"] == []
    assert {ln["roof"] for ln in d["drawn"]["lines"]} >= {"T4 (measured)", "T4 (nominal)"}
    assert out.exists()


def test_trajectory_joins_steps(tmp_path, capsys):
    roof = tmp_path / "roof.json"
    write_json(roof, {"roof": {"name": "gpu", "kind": "measured",
                               "compute": [{"precision": "fp64", "flop_per_s": 1e13}],
                               "memory": [{"level": "DRAM", "bytes_per_s": 1e12}]}})
    steps = []
    for i, (nbytes, secs) in enumerate(((4e9, 8e-3), (1e9, 2e-3), (5e8, 1e-3))):
        p = tmp_path / f"step{i}.json"
        write_json(p, [kernel_to_dict(Kernel("gpp", {"fp64": 4e9}, {"DRAM": nbytes}, secs))])
        steps.append(str(p))
    assert main(["plot", *steps, "--on", str(roof), "--trajectory", "-o",
                 str(tmp_path / "t.png"), "--json"]) == 0
    arrows = json.loads(capsys.readouterr().out)["drawn"]["arrows"]
    assert [(a["start"][0], a["end"][0]) for a in arrows] == [(1.0, 4.0), (4.0, 8.0)]
    assert all(a["kind"] == "trajectory" for a in arrows)


@pytest.mark.parametrize(("content", "suffix", "needle"), [
    ("name,flop,bytes\nbad,abc,1\n", ".csv", ":2: field 'flop' is not a number"),
    ('{"kernels": [{"name": "a", "flop": -1}]}', ".json", "must be >= 0"),
    ('{"kernels": [', ".json", ":1: invalid JSON"),
])
def test_malformed_kernel_file(tmp_path, files, capsys, content, suffix, needle):
    profile = files[0]
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(content)
    assert main(["plot", str(bad), "--on", str(profile), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}") and needle in err and "\n" not in err
    assert not (tmp_path / "x.png").exists()


def test_errors_no_roof_bad_suffix_unknown_hardware(tmp_path, files, capsys):
    profile, kernels, _ = files
    assert main(["plot", str(kernels), "-o", str(tmp_path / "x.png")]) == 2
    assert "no roof to draw against" in capsys.readouterr().err
    assert main(["plot", str(kernels), "--on", str(profile), "-o", str(tmp_path / "x.pdf")]) == 2
    assert ".png or .svg" in capsys.readouterr().err
    assert main(["plot", "--on", "no-such-gpu-9000", "-o", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_analysis_json_carries_its_roof(tmp_path, capsys):
    # An analysis file (roof + kernels, as other verbs write) plots without --on.
    analysis = tmp_path / "analysis.json"
    write_json(analysis, {"schema_version": 1,
                          "roof": {"name": "T4", "kind": "measured",
                                   "compute": [{"precision": "fp16", "unit": "tensor",
                                                "flop_per_s": 50e12}],
                                   "memory": [{"level": "DRAM", "bytes_per_s": 270e9}]},
                          "kernels": [kernel_to_dict(k) for k in KERNELS]})
    assert main(["plot", str(analysis), "-o", str(tmp_path / "a.png"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["roofs"][0]["name"] == "T4" and len(d["drawn"]["points"]) == 2


def test_precision_option_and_default_selection(tmp_path, files, capsys):
    _, kernels, _ = files
    out = tmp_path / "c.png"
    # Catalog T4 has 6 compute ceilings (> 5): the default draws the kernels' one (fp16
    # tensor, also the top float) and says what it left out.
    assert main(["plot", str(kernels), "--on", "t4", "-o", str(out), "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    drawn = [ln["label"] for ln in d["drawn"]["lines"] if ln["kind"] == "compute"]
    assert drawn == ["fp16 tensor 65 TFLOP/s"]
    assert len(d["drawn"]["hidden_ceilings"]) == 5
    assert "left out fp32 vector, fp64 vector" in cap.err and "--precision all" in cap.err
    assert main(["plot", str(kernels), "--on", "t4", "--precision", "fp16,fp32", "-o",
                 str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert sorted(ln["label"] for ln in d["drawn"]["lines"] if ln["kind"] == "compute") == [
        "fp16 tensor 65 TFLOP/s", "fp16 vector 16.2 TFLOP/s", "fp32 vector 8.1 TFLOP/s"]
    assert {r["compute"] for r in d["drawn"]["ridges"]} == {"fp16 tensor"}
    assert main(["plot", "--on", "t4", "--precision", "all", "-o", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert sum(ln["kind"] == "compute" for ln in d["drawn"]["lines"]) == 6
    assert main(["plot", "--on", "t4", "--precision", "fp8", "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: no roof has a 'fp8' compute ceiling")


def test_profile_sweep_drawn_and_no_sweep(tmp_path, capsys):
    # A CPU profile as `rooflab probe` writes it: the intensity sweep in extras.
    points = [{"ai": 0.125, "flop_per_s": 4.1e9}, {"ai": 1.0, "flop_per_s": 30e9},
              {"ai": 4.0, "flop_per_s": 110.8e9}, {"ai": 32.0, "flop_per_s": 115.9e9}]
    roof = Roof("cpu", "measured",
                compute=(Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),),
                memory=(Ceiling(38.8e9, level="DRAM", provenance="measured"),))
    prof = tmp_path / "cpu.json"
    save_profile(prof, MachineProfile(host={"name": "cpu"}, measured=roof,
                                      extras={"intensity_sweep": {"precision": "fp64",
                                                                  "points": points}}))
    out = tmp_path / "p.png"
    assert main(["plot", "--on", str(prof), "-o", str(out)]) == 0
    assert "4 sweep point(s)" in capsys.readouterr().err   # the wrote line: stderr (s22 r3 F7)
    assert main(["plot", "--on", str(prof), "-o", str(out), "--json"]) == 0
    (sweep,) = [ln for ln in json.loads(capsys.readouterr().out)["drawn"]["lines"]
                if ln["kind"] == "sweep"]
    assert sweep["xs"] == [0.125, 1.0, 4.0, 32.0] and sweep["ys"][2] == 110.8e9
    assert sweep["label"] == "intensity sweep fp64 (measured)"
    assert main(["plot", "--on", str(prof), "-o", str(out), "--no-sweep", "--json"]) == 0
    assert not [ln for ln in json.loads(capsys.readouterr().out)["drawn"]["lines"]
                if ln["kind"] == "sweep"]
    # A GPU profile's sweep is over working-set size: nothing to draw, and it says so.
    gpu = tmp_path / "gpu.json"
    save_profile(gpu, MachineProfile(host={"name": "gpu"}, measured=roof,
                                     extras={"gpu": {"sweep": {"points": []}}}))
    assert main(["plot", "--on", str(gpu), "-o", str(out)]) == 0
    assert "working-set size" in capsys.readouterr().err
