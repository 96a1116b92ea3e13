"""hardware/profile.py's own refusals carry the field they name on the InputError (`field=`,
hardware/profile_checks.py), so `report k.json --on bad.json --json` names the field from
the exception, not from errors._field_in reading the message (s21 d1 item 1). Every test
below turns that fallback off; the `error:` lines are the ones rooflab printed before,
word for word.
"""

from __future__ import annotations

import json

import pytest

import rooflab.errors
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.profile import MachineProfile, profile_from_dict, save_profile
from rooflab.model.ceiling import Ceiling, Roof

KERNELS = {"schema_version": 1, "kernels": [
    {"name": "k1", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}
FP32 = {"precision": "fp32", "unit": "vector", "flop_per_s": 1e12}
DRAM = [{"level": "DRAM", "bytes_per_s": 1e11}]
MEASURED = {"name": "m", "kind": "measured", "compute": [FP32], "memory": DRAM}
NOMINAL = {"name": "n", "kind": "nominal", "compute": [FP32], "memory": DRAM}


def _profile(**over) -> dict:
    return {"schema_version": 1, "host": {"name": "b"}, "measured": MEASURED} | over


FILES = {
    "k.json": KERNELS,
    "hoststr.json": _profile(host="box"),
    "sms.json": _profile(host={"name": "b", "multiprocessors": -3}),
    "cc.json": _profile(host={"name": "b", "compute_capability": 8.0}),
    "demo.json": {"schema_version": 1, "profile": _profile(host={"multiprocessors": 2.5})},
    "nomonly.json": {"schema_version": 1, "host": {"name": "b"}, "nominal": NOMINAL,
                     "extras": {"threads": 1}},
}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, doc in FILES.items():
        (tmp_path / name).write_text(json.dumps(doc))
    # the message-reading fallback off: a field in the document is the raiser's
    monkeypatch.setattr(rooflab.errors, "_field_in", lambda message, path: None)
    return tmp_path


CASES = [
    ("hoststr.json", "host",
     "error: hoststr.json: field 'host' must be an object, e.g. {\"name\": \"my box\"}; "
     "got 'box'"),
    ("sms.json", "host.multiprocessors",
     "error: sms.json: field 'host.multiprocessors' must be a positive whole number (the "
     "GPU's SM count, e.g. 108), or null; got -3"),
    ("cc.json", "host.compute_capability",
     "error: cc.json: field 'host.compute_capability' must be a string major.minor such as "
     "\"8.0\" (quoted), or null; got 8.0"),
    # a demo document's profile: the field under its 'profile' key
    ("demo.json", "profile.host.multiprocessors",
     "error: demo.json: profile: field 'host.multiprocessors' must be a positive whole "
     "number (the GPU's SM count, e.g. 108), or null; got 2.5"),
    # a thread row of a profile with a nominal roof only: the 'measured' it lacks
    ("nomonly.json@1t", "measured",
     "error: nomonly.json: no measured roof; `rooflab probe` writes one"),
]


@pytest.mark.parametrize("on,field,line", CASES,
                         ids=["host", "multiprocessors", "cc", "demo-profile", "no-measured"])
def test_report_on_a_bad_profile_names_the_raisers_field(files, capsys, on, field, line):
    assert main(["report", "k.json", "--on", on, "--json"]) == 2
    got = capsys.readouterr()
    (said,) = [x for x in got.err.splitlines() if x.startswith("error: ")]
    assert said == line
    error = json.loads(got.out)["error"]
    assert (error["path"], error["field"]) == (on.removesuffix("@1t"), field)


def test_profile_from_dict_names_the_field_from_its_place():
    with pytest.raises(InputError) as got:
        profile_from_dict(_profile(host={"multiprocessors": 108, "compute_capability": "8"}),
                          where="p.json: profile")
    assert got.value.field == "p.json: profile.host.compute_capability"
    with pytest.raises(InputError) as got:
        profile_from_dict({"host": {}}, where="p.json")
    assert got.value.field == "p.json"   # the document itself: no roof at all


ROOF = Roof(name="r", kind="measured", compute=(Ceiling(1e12, "fp32", unit="vector"),),
            memory=(Ceiling(1e11, level="DRAM"),))


@pytest.mark.parametrize("kwargs,field", [
    ({"host": "box"}, "host"),
    ({"host": {}, "nominal": {"name": "n"}}, "nominal"),
    ({"host": {}, "measured": "T4"}, "measured"),
    ({"host": {}, "extras": []}, "extras"),
    ({"host": {}, "created": 2026}, "created"),
], ids=["host", "nominal", "measured", "extras", "created"])
def test_machine_profile_names_the_argument(kwargs, field):
    with pytest.raises(InputError) as got:
        MachineProfile(**kwargs)
    assert got.value.field == field


def test_save_profile_names_the_argument(tmp_path):
    with pytest.raises(InputError) as got:
        save_profile(tmp_path / "p.json", ROOF)
    assert got.value.field == "profile"
    empty = Roof(name="e", kind="nominal", compute=(), memory=())
    with pytest.raises(InputError) as got:
        save_profile(tmp_path / "p.json", MachineProfile(host={}, nominal=empty))
    assert got.value.field == "nominal"
    assert not (tmp_path / "p.json").exists()
