"""A bad roof or profile file's error carries its file and field on the exception
(errors.parse_error_in), so the `--json` error document names them from the exception, not
from the message (s20 d1 item 2: 'badroof.json.compute[0]: ...' gave "path": null, a
'p.json@1t' row error too, and no document named the field). The `error:` line is the
same, word for word.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import json_error

from rooflab.errors import InputError, ParseError
from rooflab.hardware.profile import load_profile

KERNELS = {"schema_version": 1, "kernels": [
    {"name": "k1", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}
DRAM = [{"level": "DRAM", "bytes_per_s": 1e11}]
FP32 = {"precision": "fp32", "unit": "vector", "flop_per_s": 1e12}
BAD_ROOF = {"name": "x", "compute": [FP32, dict(FP32, precision="fp64", flop_per_s="abc")],
            "memory": DRAM}
BAD_HOST = {"schema_version": 1, "host": {"name": "b", "multiprocessors": -3},
            "measured": {"name": "m", "kind": "measured", "compute": [FP32], "memory": DRAM}}
NO_ROWS = {"schema_version": 1, "host": {"name": "b"},
           "measured": {"name": "m", "kind": "measured", "compute": [FP32], "memory": DRAM}}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, doc in (("k.json", KERNELS), ("badroof.json", BAD_ROOF),
                      ("badhost.json", BAD_HOST), ("norows.json", NO_ROWS),
                      ("kroof.json", KERNELS | {"roof": {"name": "r", "compute": [FP32],
                                                         "memory": [{"level": "DRAM"}]}})):
        (tmp_path / name).write_text(json.dumps(doc))
    return tmp_path


# (argv, path, field, the error: line, unchanged from before)
CASES = [
    (["report", "k.json", "--on", "badroof.json"], "badroof.json", "compute[1].flop_per_s",
     "error: badroof.json.compute[1]: field 'flop_per_s' must be a plain number of FLOP/s "
     "(SI base units, no unit suffix); got 'abc'"),
    (["report", "k.json", "--on", "badhost.json"], "badhost.json", "host.multiprocessors",
     "error: badhost.json: field 'host.multiprocessors' must be a positive whole number "
     "(the GPU's SM count, e.g. 108), or null; got -3"),
    # the command line names 'norows.json@1t', which the message-reading fallback never
    # took for the file: the path is the exception's
    (["report", "k.json", "--on", "norows.json@1t"], "norows.json", None,
     "error: norows.json: no roof for 1 thread (thread counts in this profile: none "
     "recorded); probe them with `rooflab probe --threads 1,2,all -o profile.json`"),
    # a kernel file's own roof: the field under its 'roof' key
    (["report", "kroof.json"], "kroof.json", "roof.memory[0]",
     "error: kroof.json: roof.memory[0]: needs 'flop_per_s' (with 'precision') or "
     "'bytes_per_s' (with 'level')"),
]


@pytest.mark.parametrize("argv,path,field,line", CASES,
                         ids=["roof-file", "profile-host", "profile-at-1t", "kernel-file-roof"])
def test_the_json_error_names_the_file_and_field(files, capsys, argv, path, field, line):
    error, said = json_error(capsys, argv)
    assert said == line
    assert error["message"] == line.removeprefix("error: ")
    assert (error["kind"], error["path"], error["line"]) == ("parse", path, None)
    assert error.get("field") == field
    assert ("field" in error) == (field is not None)   # no field: the keys as before


def test_the_exception_itself_carries_them(files):
    with pytest.raises(ParseError) as got:
        load_profile("badhost.json")
    assert (got.value.path, got.value.line, got.value.field) == (
        "badhost.json", None, "host.multiprocessors")
    assert str(got.value).startswith("badhost.json: field 'host.multiprocessors' ")


def test_the_field_of_each_place_a_reader_names():
    from rooflab.errors import parse_error_in

    def field(message: str, path: str = "p.json") -> str | None:
        return parse_error_in(InputError(message), path).field

    assert field("p.json.measured.compute[0]: field 'flop_per_s' must be") == \
        "measured.compute[0].flop_per_s"
    assert field("p.json: profile: field 'host.multiprocessors' must be") == \
        "profile.host.multiprocessors"
    assert field("p.json: profile.nominal: missing field 'precision'") == \
        "profile.nominal.precision"
    assert field("p.json: no roof for 2 threads (thread counts ...)") is None
    # a message that does not start with the file (it names none): no field guessed
    assert field("roof.compute[0]: field 'flop_per_s' must be") is None
    # one the raiser named: kept as given
    assert parse_error_in(InputError("p.json: x", field="extras.scaling"), "p.json") \
        .field == "extras.scaling"
