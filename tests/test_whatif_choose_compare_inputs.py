"""whatif / choose / compare leftovers (round F5): --hardware without --on takes the
efficiency against the input's own profile like for like, and the `llm` block the three
verbs read besides the kernels is checked once (model.schema.llm_part), so one bad file
gets the same error (file, field, fix; exit 2) in every verb instead of a traceback, a
skipped fit check or a negative step time.

Every input is written here by hand; no fixture is copied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.model.document_parts import analysis_floors, llm_part

# a T4 probed: the datasheet roof (nominal) and a measurement of it (measured)
T4PROF = {"schema_version": 1, "host": {"name": "colab T4"},
          "nominal": {"name": "T4", "kind": "nominal",
                      "compute": [{"precision": "fp16", "unit": "tensor",
                                   "flop_per_s": 65e12}],
                      "memory": [{"level": "DRAM", "bytes_per_s": 320e9}],
                      "overhead_s": 5e-6},
          "measured": {"name": "T4", "kind": "measured",
                       "compute": [{"precision": "fp16", "unit": "tensor",
                                    "flop_per_s": 50e12}],
                       "memory": [{"level": "DRAM", "bytes_per_s": 270e9}],
                       "overhead_s": 5e-6}}
# AI 1 FLOP/B: DRAM-bound on every roof here; floor 2.2e9 B / 270e9 B/s = 8.15 ms measured
DECODE = {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
          "seconds": 0.015}


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(tmp_path: Path, name: str, doc) -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


# --- 1. --hardware without --on: the input's own profile, like for like --------------------

def test_hardware_without_on_uses_the_inputs_nominal_roof(tmp_path, capsys):
    # a demo-shaped document: a profile (measured, nominal) and the kernels
    demo = _write(tmp_path, "demo.json", {"schema_version": 1, "profile": T4PROF,
                                          "analysis": {"kernels": [DECODE]}})
    code, out, err = _run(capsys, "whatif", demo, "--hardware", "T4", "--json")
    assert code == 0, err
    data = json.loads(out)
    # the catalog T4's DRAM is the profile's nominal 320 GB/s: the same machine, 1.00x.
    # Was 1.19x: 15 ms at 8.15 / 15 of the measured 270 GB/s carried onto 320 GB/s,
    # 15 ms x 270 / 320 = 12.66 ms, because only the judging (measured) roof was offered
    assert load_roof("T4").find_memory("DRAM").value == pytest.approx(320e9)
    assert data["speedup"] == pytest.approx(1.0)
    assert data["moves"][0]["after_s"] == pytest.approx(0.015)
    assert data["efficiency_basis"] == {"name": "T4", "kind": "nominal",
                                        "target_kind": "nominal"}
    code, out, _ = _run(capsys, "whatif", demo, "--hardware", "T4")
    flat = " ".join(out.split())
    # the line names where the "from" roof came from: not an --on that was never given
    assert "the input's profile's nominal roof rather than its measured one" in flat
    assert "--on profile" not in flat
    assert "like for like" in flat and "not like for like" not in flat


def test_hardware_without_on_ignores_another_files_roof(tmp_path, capsys):
    # two analyses: the kernels' own T4 (judging) and an H100 one from another file; the
    # H100's nominal roof says nothing of the T4 kernels' efficiency
    t4 = _write(tmp_path, "t4.json", {"schema_version": 1, "profile": T4PROF,
                                      "analysis": {"kernels": [DECODE]}})
    h100 = _write(tmp_path, "h100.json", {
        "schema_version": 1, "roof": {"name": "H100", "kind": "nominal",
                                      "compute": [{"precision": "fp16", "flop_per_s": 989e12}],
                                      "memory": [{"level": "DRAM", "bytes_per_s": 3.35e12}]},
        "kernels": [{**DECODE, "name": "other"}]})
    code, out, err = _run(capsys, "whatif", t4, h100, "--hardware", "T4", "--json")
    assert code == 0, err
    assert json.loads(out)["efficiency_basis"]["name"] == "T4"


def test_h100_to_b200_dram_bound_gains_the_bandwidth_ratio(tmp_path, capsys):
    h100, b200 = load_roof("H100"), load_roof("B200")
    bw_h, bw_b = (r.find_memory("DRAM").value for r in (h100, b200))
    # the catalog (hardware/data/nvidia.toml): H100 SXM 3.35 TB/s; B200 7.7 TB/s, NVIDIA's
    # per-GPU HGX B200 figure (the 8 TB/s often quoted is DGX B200's)
    assert (bw_h, bw_b) == (pytest.approx(3.35e12), pytest.approx(7.7e12))
    # a copy: 3.35e10 B, 1 GFLOP (AI 0.03): 10 ms floor on the H100, run in 12.5 ms (80 %)
    k = _write(tmp_path, "copy.json", {"schema_version": 1, "kernels": [
        {"name": "copy", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 3.35e10},
         "seconds": 0.0125}]})
    code, out, err = _run(capsys, "report", k, "--on", "H100", "--json")
    assert code == 0, err
    analysis = _write(tmp_path, "analysis.json", out)
    code, out, err = _run(capsys, "whatif", analysis, "--hardware", "B200", "--json")
    assert code == 0, err
    data = json.loads(out)
    # the work floors: 3.35e10 B / 3.35e12 B/s = 10 ms -> / 7.7e12 = 4.351 ms, 2.299x
    move = data["moves"][0]
    assert move["before_floor_s"] == pytest.approx(0.01, rel=1e-12)
    assert move["after_floor_s"] == pytest.approx(3.35e10 / 7.7e12, rel=1e-12)
    # the time (model/retime.py): the 5 us launch floor of both catalog roofs stays fixed,
    # the work part keeps its efficiency e = 10 ms / (12.5 ms - 5 us) = 80.03 %:
    # 5 us + 4.3506 ms / e = 5.4411 ms, 2.2973x (the bandwidth ratio 2.2985x, less 0.05 %
    # for the launch that does not shrink)
    e = 0.01 / (0.0125 - 5e-6)
    after = 5e-6 + 3.35e10 / 7.7e12 / e
    assert move["after_s"] == pytest.approx(after, rel=1e-9)
    assert after == pytest.approx(5.4411e-3, abs=1e-7)
    assert data["speedup"] == pytest.approx(0.0125 / after, rel=1e-9)
    assert data["speedup"] == pytest.approx(bw_b / bw_h, rel=1e-3)
    assert data["efficiency_basis"] == {"name": "NVIDIA H100 SXM", "kind": "nominal",
                                        "target_kind": "nominal"}


# --- 2 + 3. the llm block: one check, the same words in every verb -------------------------

ROOF = {"name": "T4", "kind": "nominal",
        "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 65e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 320e9}], "overhead_s": 5e-6}
# an untimed `rooflab llm --json` document cut to what the verbs read: floors 6.875 ms
# (2.2e9 B / 320e9 B/s) and 1 ms
LLM_KERNELS = [{"name": "matmul", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9}},
               {"name": "attn", "flop": {"fp16": 1e8}, "bytes": {"DRAM": 3.2e8}}]
LLM_ROWS = [{"kernel": "matmul", "seconds": None, "floor_s": 6.875e-3},
            {"kernel": "attn", "seconds": None, "floor_s": 1e-3}]
LLM = {"settings": {"weights": "fp16", "kv": "fp16", "weight_bytes_per_param": 2.0,
                    "tp": 1, "pp": 1},
       "footprint": {"weights_bytes": 2.2e9, "kv_bytes": 1.4e7,
                     "activations_bytes": 1.4e7, "total_bytes": 2.228e9},
       "decode": {"floor_s": 7.875e-3}}


def _llm_doc(tmp_path, name="llm.json", llm=None, rows=None, text=None) -> str:
    doc = {"schema_version": 1, "roof": ROOF, "kernels": LLM_KERNELS,
           "analysis": rows if rows is not None else LLM_ROWS,
           "llm": llm if llm is not None else LLM}
    return _write(tmp_path, name, text(json.dumps(doc)) if text else doc)


def _with(section, field, value):
    return {**LLM, section: {**LLM[section], field: value}}


BAD = {
    "units": (_with("footprint", "total_bytes", "3 GB"), "'llm.footprint.total_bytes'",
              "plain number of bytes"),
    "negative": (_with("footprint", "total_bytes", -5), "'llm.footprint.total_bytes'",
                 ">= 0 bytes"),
    "tp_text": (_with("settings", "tp", "two"), "'llm.settings.tp'", "plain number"),
    "tp_half": (_with("settings", "tp", 1.5), "'llm.settings.tp'", "whole number >= 1"),
    "llm_list": ([1, 2], "'llm'", "must be an object"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_llm_block_is_one_error_in_every_verb(tmp_path, capsys, case):
    llm, field, words = BAD[case]
    bad = _llm_doc(tmp_path, "bad.json", llm=llm)
    good = _llm_doc(tmp_path, "good.json")
    errors = []
    # whatif read settings.tp with int() (a traceback: exit 70), choose skipped a "3 GB" or
    # negative footprint (no fit check, exit 0) and broke on a list (exit 70), compare
    # never looked
    for args in (("whatif", bad, "--hardware", "T4"), ("choose", bad, "--among", "T4,H100"),
                 ("compare", bad, good)):
        code, _, err = _run(capsys, *args)
        assert code == 2, (args, err)
        assert "Traceback" not in err
        errors.append(" ".join(err.split()))
    assert errors[0] == errors[1] == errors[2]                   # the same words
    assert errors[0].startswith(f"error: {bad}: field {field}")   # the file and the field
    assert words in errors[0]
    assert "rooflab llm" in errors[0]                              # how to fix it


def test_nan_footprint_is_refused_not_read_as_does_not_fit(tmp_path, capsys):
    # Python's json reads NaN: whatif's fit said "does not fit" (NaN <= memory is False)
    bad = _llm_doc(tmp_path, "nan.json",
                   llm=_with("footprint", "total_bytes", 1.5),
                   text=lambda t: t.replace('"total_bytes": 1.5', '"total_bytes": NaN'))
    code, _, err = _run(capsys, "whatif", bad, "--hardware", "T4", "--json")
    assert code == 2
    assert "'llm.footprint.total_bytes' must be a finite number of bytes" in err


def test_a_good_llm_block_still_fits_and_ranks(tmp_path, capsys):
    good = _llm_doc(tmp_path)
    code, out, err = _run(capsys, "choose", good, "--among", "T4,H100", "--json")
    assert code == 0, err
    rows = json.loads(out)["devices"]
    # 2.228e9 B against the T4's 16 GB and the H100's 80 GB: both fit
    assert {r["needs_bytes"] for r in rows} == {2.228e9}
    assert all(r["fits"] for r in rows)
    # a --tp 2.0 written as a float is --tp 2 (a whole number), not skipped
    tp2 = _llm_doc(tmp_path, "tp2.json", llm=_with("settings", "tp", 2.0))
    code, out, err = _run(capsys, "choose", tp2, "--among", "T4", "--json")
    assert code == 0, err
    assert json.loads(out)["devices"][0]["gpus"] == 2


def test_compare_refuses_a_negative_floor(tmp_path, capsys):
    before = _llm_doc(tmp_path, "before.json",
                      rows=[{**LLM_ROWS[0], "floor_s": -1.0}, LLM_ROWS[1]])
    after = _llm_doc(tmp_path, "after.json")
    code, out, err = _run(capsys, "compare", before, after)
    # was exit 0 with a step of -1 s + 1 ms = -999 ms
    assert code == 2, out
    assert "analysis[0] 'matmul': field 'floor_s' must be >= 0 seconds" in err
    code, out, err = _run(capsys, "compare", after, after, "--json")
    assert code == 0, err
    # the step floor: 6.875 ms + 1 ms, both sides
    assert json.loads(out)["floors"]["step"]["before_floor_s"] == pytest.approx(7.875e-3)


def test_schema_accessors():
    assert llm_part({"kernels": []}, "k.json") is None            # no llm block
    assert llm_part([{"name": "k"}], "k.json") is None            # a list at top level
    assert llm_part({"llm": LLM}, "x.json") is LLM
    with pytest.raises(InputError, match=r"x\.json: field 'llm\.parallel\.link_bytes_per_s' "
                                         r"must be >= 1 bytes/s"):
        llm_part({"llm": {"parallel": {"link_bytes_per_s": 0}}}, "x.json")
    assert analysis_floors({"analysis": LLM_ROWS}, "x.json") == [("matmul", 6.875e-3),
                                                                 ("attn", 1e-3)]
    with pytest.raises(InputError, match=r"analysis\[1\] must be an object"):
        analysis_floors({"analysis": [LLM_ROWS[0], 3]}, "x.json")


def test_choose_refuses_an_empty_among(tmp_path, capsys):
    k = _write(tmp_path, "k.json", {"schema_version": 1, "kernels": [DECODE]})
    # an empty shell variable (`--among "$DEVICES"`) ranked every catalog device, exit 0
    code, out, err = _run(capsys, "choose", k, "--among", "")
    assert code == 2, out
    assert "--among needs comma-separated device names" in err


def test_choose_sends_a_profile_given_as_kernels_to_among(tmp_path, capsys):
    prof = _write(tmp_path, "t4prof.json", T4PROF)
    code, _, err = _run(capsys, "choose", prof, "--among", "T4")
    # the kernel reader said "pass it as the roof, e.g. `--on t4prof.json`": choose has
    # no --on
    assert code == 2
    flat = " ".join(err.split())
    assert f"{prof}: this is a machine profile or roof, not a list of kernels" in flat
    assert f"--among {prof},H100" in flat and "--on" not in flat
