"""Review s34 E: a cluster profile (`rooflab probe --comm`) read by --link-from and scale --on
whose alpha/beta fit or collectives were hand-edited to the wrong kind.

Before: beta "abc" or Infinity, ranks "2", a fit or collectives of the wrong shape, and a
profile's extras given as a list were tracebacks (exit 70: TypeError/AttributeError deep in
model/link_fits and comm_link); alpha NaN was taken and printed "alpha nan us" (exit 0).
Now each is exit 2 with the file and the field named and how to fix it, and no -o file.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scale_measured_link import cluster

from rooflab.cli.main import main
from rooflab.errors import RooflabError
from rooflab.hardware.profile import load_profile
from rooflab.model.link_fits import measured_links

SCALE = ["--hidden", "1024", "--blocks", "1", "--tokens", "512"]
FIT = "extras.comm.collectives[0].fit"


_BASE: list[str] = []


def _edited(tmp_path, edit) -> str:
    if not _BASE:                      # all-reduce alpha 600 us, beta 1 GB/s, 2 ranks
        _BASE.append(open(cluster(tmp_path / "comm.json")).read())
    doc = json.loads(_BASE[0])
    edit(doc)
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(doc))              # NaN and Infinity as Python's json writes them
    return str(out)


def _fit(key, value):
    return lambda d: d["extras"]["comm"]["collectives"][0]["fit"].__setitem__(key, value)


CASES = {
    "beta text": (_fit("beta_bytes_per_s", "abc"), f"{FIT}.beta_bytes_per_s", "'abc'"),
    "beta Infinity": (_fit("beta_bytes_per_s", math.inf), f"{FIT}.beta_bytes_per_s", "inf"),
    "beta 0": (_fit("beta_bytes_per_s", 0), f"{FIT}.beta_bytes_per_s", "got 0"),
    "alpha NaN": (_fit("alpha_s", math.nan), f"{FIT}.alpha_s", "nan"),
    "alpha text": (_fit("alpha_s", "abc"), f"{FIT}.alpha_s", "'abc'"),
    "residual text": (_fit("max_rel_residual", "x"), f"{FIT}.max_rel_residual", "'x'"),
    "ranks text": (lambda d: d["extras"]["comm"]["collectives"][0].__setitem__("ranks", "2"),
                   "extras.comm.collectives[0].ranks", "'2'"),
    "fit a list": (lambda d: d["extras"]["comm"]["collectives"][0].__setitem__("fit", [1]),
                   FIT, "list"),
    "collectives a dict": (lambda d: d["extras"]["comm"].__setitem__("collectives", {"a": 1}),
                           "extras.comm.collectives", "a list of objects"),
    "comm a text": (lambda d: d["extras"].__setitem__("comm", "x"), "extras.comm", "str"),
    "extras a list": (lambda d: d.__setitem__("extras", [1]), "extras", "list [1]"),
}


def test_each_wrong_field_is_exit_2_naming_file_and_field_and_no_output(tmp_path, capsys):
    for name, (edit, field, got) in CASES.items():
        path = _edited(tmp_path, edit)
        out = tmp_path / "scale.json"
        code = main(["scale", "--on", "H100 SXM", "--link-from", path, *SCALE, "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 2, (name, err)
        assert "Traceback" not in err, name
        assert f"error: {path}: field '{field}' must be" in err, (name, err)
        assert f"got {got}" in err or got in err, (name, err)
        assert not out.exists(), name
        if field != "extras":
            assert "rerun `rooflab probe --comm`, or fix the value" in err, name


def test_llm_and_train_link_from_and_scale_on_refuse_it_too(tmp_path, capsys):
    path = _edited(tmp_path, _fit("beta_bytes_per_s", "abc"))
    field = f"error: {path}: field '{FIT}.beta_bytes_per_s' must be a number of bytes/s > 0"
    for argv in (["llm", "tinyllama-1.1b", "--on", "H100 SXM", "--tp", "2", "--link-from", path],
                 ["train", "tinyllama-1.1b", "--on", "H100 SXM", "--dp", "2",
                  "--link-from", path],
                 ["scale", "--on", path, *SCALE]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert field in err and "Traceback" not in err, (argv, err)
    # an alpha of 0 (what the probe pins a fit below 0 at) is read: 2 ranks, beta 1 GB/s:
    # bus bandwidth 1e9 x 2(2-1)/2 = 1 GB/s; one below 0 is refused (s35 D:
    # tests/test_s35_d_comm_profile.py)
    links = measured_links(load_profile(_edited(tmp_path, _fit("alpha_s", 0.0))).extras)
    assert links.intra.hop_latency_s == 0.0
    assert math.isclose(links.intra.bus_bytes_per_s, 1e9, rel_tol=1e-9)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


@settings(max_examples=25, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["alpha_s", "beta_bytes_per_s", "max_rel_residual", "ranks", "fit",
                            "collectives", "comm"]),
       value=JSON)
def test_any_value_in_any_comm_field_loads_or_is_a_clean_error(tmp_path, key, value):
    """Property: whatever JSON value stands in a field the link code reads, the profile
    either gives links or raises rooflab's own error (exit 2), never a TypeError."""
    def edit(d):
        comm = d["extras"]["comm"]
        row = comm["collectives"][0]
        where = {"alpha_s": row["fit"], "beta_bytes_per_s": row["fit"],
                 "max_rel_residual": row["fit"], "ranks": row, "fit": row,
                 "collectives": comm, "comm": d["extras"]}[key]
        where[key] = value
    path = _edited(tmp_path, edit)
    try:
        links = measured_links(load_profile(path).extras, where=path)
    except RooflabError:
        return
    assert links.intra.bus_bytes_per_s > 0 and math.isfinite(links.intra.hop_latency_s)
