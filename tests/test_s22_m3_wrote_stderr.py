"""Review s22 h1 H2: `wrote FILE` was still on stdout in probe (and probe --comm) and in
demo, whose path was also printed as markup: every verb now says it on stderr, as text
(common.wrote), so stdout holds only the verb's data."""

from __future__ import annotations

import pytest

from rooflab.hardware.profile import MachineProfile
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

ROOF = Roof("cpu measured (2 threads)", kind="measured",
            compute=(Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),),
            memory=(Ceiling(36e9, level="DRAM", provenance="measured"),))
PROFILE = MachineProfile(host={"cpu_model": "cpu"}, measured=ROOF, extras={"wall_s": 8.5})


def test_probe_says_wrote_on_stderr(monkeypatch, tmp_path, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    import rooflab.cli.probe as verb
    from rooflab.cli.main import main

    monkeypatch.setattr(verb, "run_probe", lambda dev, mode, threads, progress: PROFILE)
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "--quick", "-q", "-o", "p[red]x.json"]) == 0
    cap = capsys.readouterr()
    assert (tmp_path / "p[red]x.json").exists()
    # old: stdout ended "probe took 8.5 s; wrote p[red]x.json"
    assert cap.out.strip().splitlines()[-1] == "probe took 8.5 s"
    assert "wrote" not in cap.out
    assert cap.err.strip().splitlines()[-1] == "wrote p[red]x.json"


def test_demo_says_wrote_on_stderr_as_text(tmp_path, capsys):
    from rooflab.cli.demo import print_demo

    analysis = analyze(ROOF, [Kernel(name="triad", flop={"fp64": 2e6}, bytes={"DRAM": 2.4e7},
                                     seconds=1e-3)])
    folder = tmp_path / "out[red]put"
    written = [folder / n for n in ("profile.json", "kernels.json")]
    print_demo(PROFILE, analysis, written, [])
    cap = capsys.readouterr()
    # old: both lines on stdout, "[red]" eaten as markup
    assert not [x for x in cap.out.splitlines() if x.startswith("wrote")]
    assert [x for x in cap.err.splitlines() if x.startswith("wrote")] == [
        f"wrote {folder}/profile.json", f"wrote {folder}/kernels.json"]
    assert "next: rooflab report" in cap.out   # the next steps stay with the data
