"""Review s35 D: a cluster profile (`rooflab probe --comm`, read by --link-from and scale
--on) with fields hand-edited past what the links can be built from.

Hand calculations: the profile (test_scale_measured_link.cluster) is an all-reduce over 2
ranks with alpha 600 us, beta 1 GB/s. The probe pins a fit's alpha at 0 where least
squares puts it below (probe/comm/fit.py), so alpha -100 us in a file was edited in.
Before: alpha -1e-4 was read as 0 silently (exit 0, hop latency 0 us); world_size "abc"
and levels [1] were tracebacks (exit 70); world_size -3 was taken ("-3 ranks"); host.hosts
[1, 2, 3] was counted as 3 hosts; levels.world 5 failed in `train` as "analyze(): levels
5: ..." naming no file. Now each is exit 2, `error: FILE: field 'F' must be ...`, the
--json error document's path and field the same, and no -o file.
"""

from __future__ import annotations

import json

import pytest
from test_scale_measured_link import cluster

from rooflab.cli.main import main

SCALE = ["--hidden", "1024", "--blocks", "1", "--tokens", "512"]
ROW = "extras.comm.collectives[0]"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict:
    return json.loads(open(cluster(tmp_path_factory.mktemp("c") / "comm.json")).read())


def _alpha(d):
    d["extras"]["comm"]["collectives"][0]["fit"]["alpha_s"] = -1e-4


CASES = {
    "alpha below 0": (_alpha, f"{ROW}.fit.alpha_s", "must be a number of seconds >= 0",
                      "got -0.0001"),
    "world_size text": (lambda d: d["extras"]["comm"].__setitem__("world_size", "abc"),
                        "extras.comm.world_size", "must be a whole number >= 2", "got 'abc'"),
    "world_size -3": (lambda d: d["extras"]["comm"].__setitem__("world_size", -3),
                      "extras.comm.world_size", "must be a whole number >= 2", "got -3"),
    "levels a list": (lambda d: d["extras"]["comm"].__setitem__("levels", [1]),
                      "extras.comm.levels", "must be an object of link levels", "got [1]"),
    "levels.world 5": (lambda d: d["extras"]["comm"]["levels"].__setitem__("world", 5),
                       "extras.comm.levels", "must be an object of link levels", "'world': 5"),
    "hosts a list": (lambda d: d["host"].__setitem__("hosts", [1, 2, 3]), "host.hosts",
                     "must be an object of host name -> its ranks", "got [1, 2, 3]"),
}


def _edited(tmp_path, base, edit) -> str:
    doc = json.loads(json.dumps(base))
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


@pytest.mark.parametrize("name", list(CASES))
def test_each_edited_field_is_exit_2_naming_file_and_field(tmp_path, capsys, base, name):
    edit, field, must, got = CASES[name]
    path = _edited(tmp_path, base, edit)
    out = tmp_path / "scale.json"
    for argv in (["scale", "--on", "H100 SXM", "--link-from", path, *SCALE, "-o", str(out)],
                 ["train", "tinyllama-1.1b", "--on", "H100 SXM", "--dp", "2", "--link-from",
                  path]):
        assert main(argv) == 2, (name, argv)
        err = capsys.readouterr().err
        assert "Traceback" not in err, (name, err)
        assert f"error: {path}: field '{field}' {must}" in err, (name, err)
        assert got in err and "rerun `rooflab probe --comm`, or fix the value" in err, err
    assert not out.exists()
    assert main(["scale", "--on", path, *SCALE, "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)["error"]
    assert (doc["path"], doc["field"], doc["kind"]) == (path, field, "parse")


def test_an_alpha_of_0_is_still_read(tmp_path, capsys, base):
    # what the probe writes for a fit it pinned: hop latency 0, bus bandwidth
    # beta x 2(n-1)/n = 1 GB/s x 2 x 1 / 2 = 1 GB/s
    def zero(d):
        d["extras"]["comm"]["collectives"][0]["fit"]["alpha_s"] = 0.0
    path = _edited(tmp_path, base, zero)
    assert main(["scale", "--on", path, *SCALE, "--json"]) == 0
    intra = json.loads(capsys.readouterr().out)["links"]["intra"]
    assert intra["bus_bytes_per_s"] == pytest.approx(1e9)
    assert intra["hop_latency_s"] == 0.0


def test_a_profile_without_the_fit_names_its_file_in_the_json_document(tmp_path, capsys,
                                                                         base):
    # "--link-from FILE: the cluster profile's all-reduce has no alpha/beta fit": the
    # message names the file after the option; the document said "path": null
    def unnamed(d):
        d["extras"]["comm"]["collectives"][0]["collective"] = "other"
    path = _edited(tmp_path, base, unnamed)
    for option in ("--link-from", "--on"):
        on = ["--on", "H100 SXM", "--link-from", path] if option == "--link-from" else [
            "--on", path]
        assert main(["scale", *on, *SCALE, "--json"]) == 2
        captured = capsys.readouterr()
        assert (f"error: {option} {path}: the cluster profile's all-reduce has no "
                f"alpha/beta fit") in captured.err
        doc = json.loads(captured.out)["error"]
        assert (doc["path"], doc["line"], doc["kind"]) == (path, None, "input")
