"""`rooflab demo`: probe, zoo kernels on the measured roof, tables, four files, atomically."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from zoo_clock import TINY, TickClock

from rooflab.bench import zoo
from rooflab.cli import demo as demo_cli
from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, load_profile
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof

# The demo's kernels that exist at the zoo's small (test) sizes.
SMALL_DEMO = [n for n in zoo.DEMO_NAMES if n in zoo.kernel_names(small=True)]


def fake_run_demo(progress=None):
    roof = Roof(name="fake measured", kind="measured",
                compute=(Ceiling(1e11, precision="fp64", unit="vector", provenance="measured"),
                         Ceiling(2e11, precision="fp32", unit="vector", provenance="measured")),
                memory=(Ceiling(2e10, level="DRAM", provenance="measured"),))
    kernels = zoo.run_zoo(roof, SMALL_DEMO, plan=TINY, small=True, clock=TickClock())
    noted = replace(roof, notes=("bf16: not measured: skipped in quick mode; the default "
                                 "mode measures it",))
    profile = MachineProfile(host={"name": "fake host"}, measured=noted)
    return profile, analyze(roof, kernels)


def test_demo_writes_four_files_from_a_fake_probe(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "demo"
    assert main(["demo", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "triad_fp64" in text and "softmax_fp32" in text and "measured/floor" in text
    # The probe's own notes, as `rooflab probe` prints them.
    assert "note: bf16: not measured: skipped in quick mode" in text
    names = sorted(p.name for p in out.iterdir())
    expected = sorted(n for n in demo_cli.FILES
                      if n != "report.md" or "report.md not written" not in text)
    assert names == expected
    assert load_profile(out / "profile.json").measured.name == "fake measured"
    data = json.loads((out / "kernels.json").read_text())
    assert [k["name"] for k in data["kernels"]] == SMALL_DEMO
    assert {p["kernel"] for p in data["analysis"]} == set(SMALL_DEMO)
    assert (out / "roofline.png").read_bytes()[:4] == b"\x89PNG"
    # The report shows the chart written beside it, under its title.
    md = (out / "report.md").read_text().split("\n\n")
    assert md[0].startswith("# rooflab demo: ")
    # the chart under the title, its alt text the HTML report's description (19c N13)
    assert md[1].startswith("![") and md[1].endswith("](roofline.png)")
    assert "the roofline chart]" not in md[1] and "ridge" in md[1]


def test_demo_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    assert main(["demo", "-o", str(tmp_path / "d"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"]["measured"]["name"] == "fake measured"
    assert len(data["analysis"]["kernels"]) == len(SMALL_DEMO) >= 4
    assert len(data["files"]) >= 3


def test_interrupted_demo_leaves_no_half_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    real = demo_cli._write_temp
    calls = []

    def flaky(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, data)

    monkeypatch.setattr(demo_cli, "_write_temp", flaky)
    out = tmp_path / "demo"
    out.mkdir()
    (out / "profile.json").write_text("OLD")
    assert main(["demo", "-o", str(out)]) == 130
    # the files are one set: all temporaries first, so nothing was replaced, none left over
    assert sorted(p.name for p in out.iterdir()) == ["profile.json"]
    assert (out / "profile.json").read_text() == "OLD"


def test_demo_output_must_be_a_directory(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["demo", "-o", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_end_to_end(quick_cpu_profile, tmp_path, capsys):
    pytest.importorskip("numba")
    out = tmp_path / "demo"
    # the probe answers with the session's real quick profile (conftest.py)
    assert main(["demo", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    for name in zoo.DEMO_NAMES:
        assert name in text
    profile = load_profile(out / "profile.json")
    assert profile.measured is not None and profile.measured.find_memory("DRAM") is not None
    data = json.loads((out / "kernels.json").read_text())
    assert data["roof"]["kind"] == "measured"
    triad = next(k for k in data["kernels"] if k["name"] == "triad_fp64")
    n = triad["meta"]["shape"]["n"]
    assert triad["flop"] == {"fp64": 2 * n} and triad["bytes"] == {"DRAM": 24 * n}
    assert triad["meta"]["floor_ratio"] > 0
    assert (out / "roofline.png").stat().st_size > 10_000
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
