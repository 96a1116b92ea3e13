"""-q/--quiet after the verb is the global quiet (review s20 r5 F9): `rooflab llm ... -q`
and `choose ... --quiet` were refused with "No such option: -q", and `probe -q` meant only
"no progress bar", its busy-machine `warning:` still said."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

NOTE = "note: --on T4 (from ROOFLAB_ON)\n"


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_q_after_the_verb_drops_the_notes_as_before_it(flag, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    args = ["ai", "matmul", "4096", "4096", "4096", "--json"]
    assert main(args) == 0
    loud = capsys.readouterr()
    assert loud.err == NOTE
    assert main([*args, flag]) == 0
    after = capsys.readouterr()
    assert main([flag, *args]) == 0
    before = capsys.readouterr()
    assert after.err == before.err == ""
    # the result is the same: 2 x 4096^3 FLOP, fp16 A, B and C moved once: 3 x 4096^2 x 2 B
    for out in (loud.out, after.out, before.out):
        doc = json.loads(out)
        assert doc["flop"] == 2 * 4096**3 and doc["bytes"] == 3 * 4096**2 * 2
    assert main(args) == 0                     # one command's -q does not outlive it
    assert capsys.readouterr().err == NOTE


def test_scale_and_llm_take_q_after_the_verb(monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    # 12 h^2 x 32 blocks = 6.44 G parameters: 25.8 GB of bf16 weights + gradients on a
    # 16 GB T4, the does-not-fit warning
    assert main(["scale"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(NOTE) and "warning: the model does not fit: its weights + " \
        "gradients alone are 25.8 GB > the device's 16 GB" in err
    assert main(["scale", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["llm", "llama-3-8b"]) == 0
    assert NOTE in capsys.readouterr().err
    assert main(["llm", "llama-3-8b", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_ai_group_and_its_ops_take_q(monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    assert main(["ai", "-q", "gemv", "1024", "1024"]) == 0
    assert main(["ai", "gemv", "1024", "1024", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_probe_q_also_drops_the_busy_warning(monkeypatch, tmp_path, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    import rooflab.cli.probe as verb
    from rooflab.cli.common import warn
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof

    roof = Roof("cpu measured (2 threads)", kind="measured",
                compute=(Ceiling(118e9, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(36e9, level="DRAM", provenance="measured"),))
    profile = MachineProfile(host={"cpu_model": "cpu"}, measured=roof, extras={"wall_s": 8.5})
    monkeypatch.setattr(verb, "run_probe", lambda dev, mode, threads, progress: profile)
    monkeypatch.setattr(verb, "warn_if_busy", lambda *a: warn("3 other processes are busy"))
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "--quick", "-o", "p.json"]) == 0
    assert "warning: 3 other processes are busy" in capsys.readouterr().err
    assert main(["probe", "--quick", "-q", "-o", "p.json"]) == 0
    cap = capsys.readouterr()
    assert "warning:" not in cap.err and "note:" not in cap.err
    assert cap.out.strip().splitlines()[-1] == "probe took 8.5 s"
    assert cap.err.strip().splitlines()[-1] == "wrote p.json"   # review s22 h1 H2
