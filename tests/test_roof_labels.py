"""A profile's measured roof is named with its probe mode and day wherever it is shown
(review 14d L5): 'AMD EPYC measured (2 threads)' was all a report, bench or plot title said
of a roof; two probes of one machine (quick today, full last week) read the same. The
stored profile keeps the probe's name (no JSON key changes, no label added on each save)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.profile import (
    MachineProfile,
    probe_label,
    profile_from_dict,
    profile_to_dict,
    roof_at_threads,
    with_probe_label,
)
from rooflab.hardware.resolve import load_roofs
from rooflab.model.ceiling import Ceiling, Roof

CREATED = "2026-11-30T09:12:00+00:00"
NAME = "AMD EPYC measured (2 threads)"
LABELED = "AMD EPYC measured (2 threads), quick probe, 2026-11-30"


def _measured(name: str = NAME) -> Roof:
    return Roof(name, kind="measured",
                compute=(Ceiling(100e9, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(20e9, level="DRAM", provenance="measured"),))


def _nominal() -> Roof:
    return Roof("AMD EPYC nominal", kind="nominal",
                compute=(Ceiling(200e9, precision="fp64", unit="vector",
                                 provenance="nominal"),))


def _profile_dict(extras: dict | None = None, created: str = CREATED) -> dict:
    return profile_to_dict(MachineProfile(
        host={"name": "box"}, measured=_measured(), nominal=_nominal(),
        extras={"mode": "quick", "threads": 2} if extras is None else extras,
        created=created))


def test_probe_label_is_mode_and_day():
    assert probe_label({"mode": "quick"}, CREATED) == "quick probe, 2026-11-30"
    assert probe_label({"mode": "full"}, "") == "full probe"
    assert probe_label({"mode": "default"}, "not a date") == "default probe"
    # no mode: a hand-built or imported profile keeps its author's name
    assert probe_label({}, CREATED) == "" and probe_label({"mode": 3}, CREATED) == ""


def test_label_follows_the_name():
    assert with_probe_label(_measured(), {"mode": "quick"}, CREATED).name == LABELED
    gpu = with_probe_label(_measured("NVIDIA T4 measured"), {"mode": "full"}, CREATED)
    assert gpu.name == "NVIDIA T4 measured, full probe, 2026-11-30"
    # once only, and never on a nominal roof
    again = with_probe_label(with_probe_label(_measured(), {"mode": "quick"}, CREATED),
                             {"mode": "quick"}, CREATED)
    assert again.name == LABELED
    assert with_probe_label(_nominal(), {"mode": "quick"}, CREATED).name == "AMD EPYC nominal"


def test_loaded_profile_is_labeled_and_saved_without_it():
    p = profile_from_dict(_profile_dict())
    assert p.measured.name == LABELED and p.roofs[0].name == LABELED
    assert p.nominal.name == "AMD EPYC nominal"
    # the stored name is the probe's, however often the profile is loaded and saved
    saved = profile_to_dict(profile_from_dict(profile_to_dict(p)))
    assert saved["measured"]["name"] == NAME
    assert set(saved["measured"]) == set(_profile_dict()["measured"])   # same JSON keys


def test_profile_without_mode_keeps_its_name():
    assert profile_from_dict(_profile_dict(extras={"threads": 2})).measured.name == NAME


def test_roof_at_threads_carries_the_label():
    d = _profile_dict(extras={"mode": "full", "threads": 2, "scaling": {
        "counts": [1, 2], "reference_threads": 2,
        "by_threads": {"1": {"threads": 1, "DRAM": {"bytes_per_s": 12e9, "samples": [12e9]},
                             "fp64": {"flop_per_s": 5e10, "samples": [5e10]}},
                       "2": {"threads": 2}}}})
    one = roof_at_threads(d, 1)
    assert one.name == "AMD EPYC measured (1 thread), full probe, 2026-11-30"
    assert one.find_memory("DRAM").value == 12e9
    assert roof_at_threads(d, 2).name == "AMD EPYC measured (2 threads), full probe, 2026-11-30"


@pytest.fixture
def me(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOFLAB_ON", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "me.json").write_text(json.dumps(_profile_dict()))
    # one fp64 kernel: 1e9 FLOP, 1e8 B in 0.1 s
    (tmp_path / "k.json").write_text(json.dumps({"kernels": [
        {"name": "k1", "flops": 1e9, "bytes": 1e8, "seconds": 0.1, "precision": "fp64"}]}))
    return tmp_path


def test_on_profile_names_the_roof_in_report_and_json(me, capsys):
    assert load_roofs("me.json")[0].name == LABELED
    assert main(["report", "k.json", "--on", "me.json"]) == 0
    assert f"roof: {LABELED} (measured), from --on me.json" in capsys.readouterr().out
    assert main(["report", "k.json", "--on", "me.json", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof"]["name"] == LABELED and doc["roof"]["kind"] == "measured"
    # the profile file itself is unchanged
    assert json.loads((me / "me.json").read_text())["measured"]["name"] == NAME


def test_specs_show_names_it(me, capsys):
    assert main(["specs", "show", "me.json"]) == 0
    assert LABELED in capsys.readouterr().out
