"""ROOFLAB_ON is --on's default for `llm` and `scale` too (they declared their own --on and
ignored it), with the note every verb without a roof line prints; and `probe --comm`
profiles record host.libraries.rooflab as `probe` profiles do."""

from __future__ import annotations

import json
import sys

import pytest

from rooflab import __version__
from rooflab.cli.main import main


@pytest.fixture
def env_t4(monkeypatch):
    monkeypatch.setenv("ROOFLAB_ON", "T4")


def test_llm_takes_rooflab_on(env_t4, capsys):
    assert main(["llm", "tinyllama-1.1b", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["roof"]["name"] == "NVIDIA T4"
    assert "note: --on T4 (from ROOFLAB_ON)" in captured.err


def test_llm_on_given_wins(env_t4, capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", "H100", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["roof"]["name"].startswith("NVIDIA H100")
    assert "ROOFLAB_ON" not in captured.err


def test_scale_takes_rooflab_on(env_t4, capsys):
    assert main(["scale", "--hidden", "1024", "--blocks", "4", "--tokens", "512",
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["device"] == "NVIDIA T4"
    assert "note: --on T4 (from ROOFLAB_ON)" in captured.err


def test_scale_without_on_says_how(monkeypatch, capsys):
    monkeypatch.delenv("ROOFLAB_ON", raising=False)
    assert main(["scale", "--hidden", "1024"]) == 2
    err = capsys.readouterr().err
    assert "--on is required" in err and "ROOFLAB_ON" in err and "Traceback" not in err


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/stat")
def test_probe_comm_profile_records_rooflab_version(monkeypatch, tmp_path, capsys):
    pytest.importorskip("torch", reason="`probe --comm` checks that torch is installed first")
    from rooflab.cli import probe_comm
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof

    roof = Roof("2 x cpu", kind="measured",
                memory=(Ceiling(5e9, level="loopback", provenance="measured"),))
    prof = MachineProfile(host={"name": "2 x cpu", "kind": "cluster"}, measured=roof,
                          extras={"comm": {"collectives": []}, "wall_s": 1.0})
    monkeypatch.setattr("rooflab.probe.comm.run.probe_comm", lambda *a, **k: prof)
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **k: None)
    for key in ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "c.json"
    assert probe_comm.run(2, "quick", str(out), json_out=True) == 0
    assert json.loads(out.read_text())["host"]["libraries"] == {"rooflab": __version__}
    assert json.loads(capsys.readouterr().out)["host"]["libraries"]["rooflab"] == __version__
