"""One real quick probe of this machine (a few seconds; the session's `quick_cpu_probe`,
conftest.py), and the `rooflab probe` verb driven with it (the CLI tests reuse the
measured profile instead of probing again)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from quick_probe import undisturbed

pytest.importorskip("numba", reason="the CPU probe needs numba (pip install 'rooflab[cpu]')")

from rooflab.cli.main import main  # noqa: E402
from rooflab.hardware.profile import load_profile  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def profile(quick_cpu_probe):
    """The session's one real quick probe (conftest.py), with its progress stages."""
    p, stages = quick_cpu_probe
    return replace(p, extras={**p.extras, "_progress": list(stages)})


def test_quick_probe_has_the_acceptance_ceilings(profile):
    m = profile.measured
    assert m.kind == "measured"
    for level in ("L1", "L2", "DRAM"):
        c = m.find_memory(level)
        if c is None and level in (profile.extras.get("dropped_ceilings") or {}):
            # measured below DRAM under load: dropped with a note (review 16a L7)
            assert any(n.startswith(f"{level} bandwidth dropped") for n in m.notes)
            continue
        assert c is not None, f"no {level} ceiling; notes: {m.notes}"
        assert c.provenance == "measured" and len(c.samples) >= 5 and c.spread is not None
        assert c.value == max(c.samples)
        assert "no write-allocate" in c.method and "threads" in c.method
    if not undisturbed(profile):
        # Twice disturbed: then the probe itself must say that other work took the CPUs
        # (on a quiet machine this fails, as a wrong ordering should).
        load = profile.extras.get("machine_load") or {}
        share = load.get("other_cpu_share")
        assert share is not None and share >= 0.10, (
            f"cache/DRAM or fp32/fp64 ordering is wrong on a machine that was not busy "
            f"(other processes' share {share}); notes: {m.notes}")
        assert any("other processes used" in n for n in m.notes), m.notes
        pytest.skip(f"other processes used {share:.0%} of the CPUs during both probes: the "
                    f"ordering checks need a quiet machine (the probe said so in its notes)")
    assert m.find_memory("L1").value > m.find_memory("DRAM").value
    assert m.find_memory("L2").value > m.find_memory("DRAM").value
    fp64, fp32 = m.find_compute("fp64"), m.find_compute("fp32")
    for c in (fp64, fp32):
        assert c.provenance == "measured" and len(c.samples) >= 5 and c.spread is not None
    # fp32 SIMD lanes are twice fp64's on every CPU: allow for a noisy machine
    assert fp32.value > 1.2 * fp64.value
    assert 1e-8 < m.overhead_s < 1e-4


def test_quick_probe_extras_and_nominal(profile):
    ex = profile.extras
    pts = ex["intensity_sweep"]["points"]
    assert [p["ai"] for p in pts] == [k / 8 for k in (1, 4, 16, 64, 256)]
    assert pts[-1]["flop_per_s"] > pts[0]["flop_per_s"]           # climbs the slope
    assert set(ex["stream"]["DRAM"]) == {"copy", "scale", "add", "triad", "sum"}
    assert ex["wall_s"] > 0          # its duration is measured, not asserted (docs/probe.md)
    assert 0.5e9 < profile.host["clock_hz"] < 7e9
    if profile.nominal is not None:
        assert profile.nominal.find_compute("fp64").provenance == "derived"
    for prec, why in ex["not_measured"].items():
        assert prec in ("bf16", "fp16", "int8") and why
    fracs = [f for _s, f in ex["_progress"]]
    assert fracs == sorted(fracs) and fracs[-1] == pytest.approx(1.0)


def _use(monkeypatch, profile):
    import rooflab.cli.probe as verb

    monkeypatch.setattr(verb, "run_probe", lambda dev, mode, threads, progress: profile)


def test_cli_writes_profile_chart_and_table(profile, tmp_path, monkeypatch, capsys):
    _use(monkeypatch, profile)
    out, chart = tmp_path / "p.json", tmp_path / "roof.png"
    assert main(["probe", "--quick", "-q", "-o", str(out), "--chart", str(chart)]) == 0
    text = capsys.readouterr().out
    assert "fp64 vector peak" in text and "DRAM bandwidth" in text and "ridge" in text
    back = load_profile(out)
    assert back.measured.find_memory("DRAM").samples == profile.measured.find_memory(
        "DRAM").samples
    assert chart.read_bytes()[:4] == b"\x89PNG"


def test_cli_json_to_stdout(profile, monkeypatch, capsys):
    _use(monkeypatch, profile)
    assert main(["probe", "--quick", "-q", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema_version"] == 2 and d["measured"]["kind"] == "measured"
    # a cache measured below DRAM (a loaded machine) is dropped into extras (review 16a L7)
    dropped = set(d["extras"].get("dropped_ceilings") or {})
    assert {c["level"] for c in d["measured"]["memory"]} | dropped >= {"L1", "L2", "DRAM"}


def test_cli_interrupt_writes_nothing(tmp_path, monkeypatch, capsys):
    import rooflab.cli.probe as verb

    def interrupted(*_a):
        raise KeyboardInterrupt

    monkeypatch.setattr(verb, "run_probe", interrupted)
    out = tmp_path / "p.json"
    assert main(["probe", "-q", "-o", str(out)]) == 130
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert "nothing was written" in capsys.readouterr().err


@pytest.mark.parametrize("args,msg", [
    (["--quick", "--full"], "not both"),
    (["-o", "p.txt"], "must end in .json"),
    (["--device", "tpu"], "--device must be"),
    (["--nproc", "2"], "--comm only"),
])
def test_cli_bad_input_is_one_line_error(args, msg, capsys):
    assert main(["probe", "-q", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and msg in err
