"""Fourth audit, machine-readable side: every verb's JSON output and file input, as a
script that chains rooflab's files would use them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.schema import analysis_to_dict, kernel_to_dict

ROOF = Roof("box", kind="measured", compute=(Ceiling(1e11, precision="fp64", unit="vector"),),
            memory=(Ceiling(1e10, level="DRAM"),))
# a zero-FLOP copy moving 1 GB in 10 ms: 100 GB/s through a 10 GB/s DRAM roof (above it)
COPY = Kernel("copy", flop={"fp64": 0.0}, bytes={"DRAM": 1e9}, seconds=1e-2,
              provenance={"flop": "derived", "bytes": "derived", "seconds": "measured"},
              meta={"op": "elementwise"})
GEMM = Kernel("gemm", flop={"fp64": 2e9}, bytes={"DRAM": 2.4e7}, seconds=0.05,
              provenance={"flop": "derived", "bytes": "derived", "seconds": "measured"},
              meta={"op": "matmul"})


def _write(path: Path, kernels=(COPY, GEMM), roof=ROOF) -> Path:
    path.write_text(json.dumps(analysis_to_dict(analyze(roof, list(kernels)))))
    return path


def test_report_json_on_a_zero_flop_kernel_above_its_roof(tmp_path, capsys):
    # `rooflab bench -o b.json` writes copy_fp64 (0 FLOP); on a noisy probe it can sit above
    # the DRAM roof. `rooflab report b.json --json` died with a TypeError traceback
    # (percent_of_roof is None for 0 FLOP and went into a ':.0f' format).
    f = _write(tmp_path / "b.json")
    assert main(["report", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    copy = [x for d in doc["diagnosis"] if d["kernel"] == "copy"
            for x in d["findings"] if x["check"] == "above_roof"]
    assert copy[0]["message"] == ("copy at DRAM sits above its roof: moves 100 GB/s > DRAM "
                                  "bandwidth 10 GB/s (1000 % of it)")


FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
GPP = FIXTURES / "ncu" / "nersc-gpp"


def _kernel_rows(doc):
    return [(k["name"], k["seconds"], k["calls"], k["flop"], k["bytes"]) for k in doc["kernels"]]


def test_ncu_csv_output_reads_back_as_kernels(tmp_path, capsys):
    # `rooflab ncu output1.csv -o k.csv` then `rooflab report k.csv`: the analysis CSV names
    # the kernel 'kernel', and the reader wanted 'name' ("missing column(s) name", exit 2).
    if not (GPP / "output1.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    out = tmp_path / "k.csv"
    assert main(["ncu", str(GPP / "output1.csv"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["ncu", str(GPP / "output1.csv"), "--json"]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert main(["report", str(out), "--on", "H200", "--json"]) == 0
    back = json.loads(capsys.readouterr().out)
    # one kernel per name with its bytes at every level, the total time of its 2 launches
    assert _kernel_rows(back) == _kernel_rows(direct)
    assert back["kernels"][0]["seconds"] == pytest.approx(30.4926, rel=1e-5)
    assert set(back["kernels"][0]["bytes"]) == {"DRAM", "L2", "L1"}


def test_whatif_output_feeds_compare_and_report(tmp_path, capsys):
    f = _write(tmp_path / "b.json", kernels=(GEMM,))
    w = tmp_path / "w.json"
    assert main(["whatif", str(f), "--on", "H200", "--precision", "fp16", "-o", str(w)]) == 0
    doc = json.loads(w.read_text())
    assert doc["schema_version"] == 2
    capsys.readouterr()
    # before: "expected a list of kernels or an object with a 'kernels' list", exit 2
    assert main(["compare", str(f), str(w), "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["schema_version"] == 2
    assert cmp["total_before_s"] == doc["total_before_s"] == 0.05
    assert cmp["total_after_s"] == doc["total_after_s"]
    assert cmp["matches"][0]["after_s"] == doc["after"]["kernels"][0]["seconds"]
    assert main(["report", str(w), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["kernels"][0]["flop"] == {"fp16": 2e9}
    assert rep["roof"]["name"] == "NVIDIA H200 SXM"     # the roof it was predicted on
    # the terminal summary calls the what-if's times predicted, not measured
    assert main(["report", str(w)]) == 0
    assert "predicted;" in capsys.readouterr().out


def test_a_comparison_file_is_not_read_as_kernels(tmp_path, capsys):
    f = _write(tmp_path / "b.json")
    c = tmp_path / "c.json"
    assert main(["compare", str(f), str(f), "-o", str(c)]) == 0
    capsys.readouterr()
    assert main(["report", str(c)]) == 2
    err = capsys.readouterr().err
    assert "this is a comparison (`rooflab compare` output)" in err and "Traceback" not in err


def _edited(tmp_path, name, edit, doc=None):
    doc = json.loads(json.dumps(doc or analysis_to_dict(analyze(ROOF, [COPY, GEMM]))))
    edit(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_level_and_precision_names_as_scripts_write_them(tmp_path, capsys):
    # bytes under "HBM" or "dram" made the kernel vanish from the analysis (the roof has no
    # such level); flop under "FP64" or "double" held it to the wrong (fallback) ceiling.
    def edit(doc):
        doc["kernels"][1]["flop"] = {"FP64": 1.5e9, "double": 0.5e9}
        doc["kernels"][1]["bytes"] = {"HBM": 2.4e7}
        doc["kernels"][0]["bytes"] = {"dram": 1e9}
    f = _edited(tmp_path, "k.json", edit)
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "box", "kind": "nominal",
                                "compute": [{"precision": "FP64", "unit": "vector",
                                             "flop_per_s": 1e11}],
                                "memory": [{"level": "hbm3e", "bytes_per_s": 1e10}]}))
    assert main(["report", str(f), "--on", str(roof), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pts = {p["kernel"]: p for p in doc["analysis"]}
    assert pts["gemm"]["level"] == "DRAM" and pts["gemm"]["precision"] == "fp64"
    assert pts["gemm"]["flop"] == 2e9 and pts["gemm"]["peak_flop_per_s"] == 1e11
    assert pts["gemm"]["ai"] == pytest.approx(2e9 / 2.4e7)
    assert pts["copy"]["level"] == "DRAM" and pts["copy"]["bytes"] == 1e9
    assert doc["notes"] == []     # nothing fell back, nothing was dropped


@pytest.mark.parametrize(("edit", "words"), [
    (lambda d: d["kernels"][1].__setitem__("calls", 2.5),
     "kernels[1] 'gemm': field 'calls' must be a whole number of launches; got 2.5"),
    (lambda d: d["kernels"][0].__setitem__("seconds", "4 ms"),
     "kernels[0] 'copy': field 'seconds' must be a plain number of seconds"),
    (lambda d: d.__setitem__("schema_version", 3),
     "schema_version 3 is newer than this rooflab understands (2); upgrade rooflab"),
    (lambda d: d.__setitem__("schema_version", "1"),
     "field 'schema_version' must be a whole number"),
    (lambda d: d["kernels"][1]["flop"].__setitem__("fp64", -5),
     "kernels[1]: kernel 'gemm': flop[fp64] must be >= 0 and finite; got -5.0"),
])
def test_edited_kernel_files_fail_with_field_and_place(tmp_path, capsys, edit, words):
    # calls 2.5 was read as 2 (changing the time per call); a newer
    # schema_version was accepted; "4 ms" gave Python's "could not convert string to float"
    f = _edited(tmp_path, "k.json", edit)
    assert main(["report", str(f), "--on", "H200", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {f}: ") and words in err and "Traceback" not in err


def _profile():
    return {"schema_version": 1, "host": {"name": "box"}, "nominal": None,
            "measured": {"name": "box measured", "kind": "measured", "overhead_s": 5e-7,
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 1e11, "samples": [9e10, 1e11]}],
                         "memory": [{"level": "DRAM", "bytes_per_s": 1e10,
                                     "samples": [9e9, 1e10]}]}}


@pytest.mark.parametrize(("edit", "words"), [
    # was a TypeError traceback (exit 1): the string reached a comparison deep in analyze
    (lambda d: d["measured"].__setitem__("overhead_s", "5us"),
     ".measured: field 'overhead_s' must be a plain number of seconds"),
    # was "could not convert string to float: '13.4 GB/s'" (no field named)
    (lambda d: d["measured"]["memory"][0].__setitem__("bytes_per_s", "13.4 GB/s"),
     ".measured.memory[0]: field 'bytes_per_s' must be a plain number of bytes/s"),
    # was "float() argument must be a string or a real number, not 'NoneType'"
    (lambda d: d["measured"]["compute"][0].__setitem__("flop_per_s", None),
     ".measured.compute[0]: field 'flop_per_s' must be a plain number of FLOP/s"),
    # was "ceiling DRAM must be positive; got -1.0" with no file or place
    (lambda d: d["measured"]["memory"][0].__setitem__("bytes_per_s", -1),
     ".measured.memory[0]: ceiling DRAM must be positive; got -1.0"),
    (lambda d: d["measured"]["memory"][0].__setitem__("samples", [1e10, "fast"]),
     ".measured.memory[0]: field 'samples' must be a plain number"),
])
def test_edited_profiles_fail_with_field_and_place(tmp_path, capsys, edit, words):
    prof = _profile()
    edit(prof)
    p = tmp_path / "me.json"
    p.write_text(json.dumps(prof))
    f = _write(tmp_path / "b.json")
    assert main(["report", str(f), "--on", str(p), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}") and words in err and "Traceback" not in err


def test_a_trimmed_profile_with_unknown_fields_still_reads(tmp_path, capsys):
    # a script drops the optional fields (samples, method, notes) and adds its own
    prof = _profile()
    for c in prof["measured"]["compute"] + prof["measured"]["memory"]:
        c.pop("samples")
        c["my_tag"] = "x"
    prof["measured"].pop("overhead_s")
    prof["extra"] = {"who": "script"}
    p = tmp_path / "me.json"
    p.write_text(json.dumps(prof))
    f = _write(tmp_path / "b.json", kernels=(GEMM,))
    assert main(["report", str(f), "--on", str(p), "--json"]) == 0
    point = json.loads(capsys.readouterr().out)["analysis"][0]
    # gemm: AI 2e9 / 2.4e7 = 83.3 > ridge 10: compute-bound, 2e9 / 0.05 = 40 GFLOP/s = 40 %
    assert point["peak_flop_per_s"] == 1e11 and point["bytes_per_s"] == 1e10
    assert point["achieved_flop_per_s"] == pytest.approx(4e10)
    assert point["percent_of_roof"] == pytest.approx(40.0)
    assert point["bound"] == "compute"


@pytest.mark.parametrize("where", ["ceiling", "samples", "kernel"])
def test_nan_or_infinity_in_a_file_is_refused_where_it_is(tmp_path, capsys, where):
    # Python's json.dump writes NaN/Infinity and json.load reads them back: they went through
    # the analysis and crashed the strict JSON writer ("Out of range float values", exit 1)
    prof, kernels = _profile(), analysis_to_dict(analyze(ROOF, [COPY, GEMM]))
    if where == "ceiling":
        prof["measured"]["memory"][0]["bytes_per_s"] = float("inf")
    elif where == "samples":
        prof["measured"]["compute"][0]["samples"] = [1e11, float("nan")]
    else:
        kernels["kernels"][1]["samples"] = [0.05, float("nan")]
    p, f = tmp_path / "me.json", tmp_path / "b.json"
    p.write_text(json.dumps(prof))
    f.write_text(json.dumps(kernels))
    assert main(["report", str(f), "--on", str(p), "--json"]) == 2
    err = capsys.readouterr().err
    assert "must be a finite number" in err and "Traceback" not in err
    assert (".measured.memory[0]: field 'bytes_per_s'" in err if where == "ceiling" else
            ".measured.compute[0]: field 'samples'" in err if where == "samples" else
            "kernels[1] 'gemm': field 'samples'" in err)


def test_compare_json_of_untimed_kernels_has_no_zero_totals(tmp_path, capsys):
    # `rooflab ai ... --json > a.json; rooflab compare a.json a.json --json` printed
    # "total_before_s": 0 and "total_after_s": 0, as if both runs took no time
    assert main(["ai", "matmul", "64", "64", "64", "--json"]) == 0
    a = tmp_path / "a.json"
    a.write_text(capsys.readouterr().out)
    assert main(["compare", str(a), str(a), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 2
    assert doc["matches"][0]["before_s"] is None and doc["matches"][0]["speedup"] is None
    assert doc["total_before_s"] is None and doc["total_after_s"] is None
    assert doc["speedup"] is None
    assert doc["matches"][0]["ai_dram_before"] == pytest.approx(2 * 64**3 / (3 * 64 * 64 * 2))


def test_ncu_csv_keeps_each_kernels_unit(tmp_path, capsys):
    # -o k.csv had no unit column, so `rooflab report k.csv --on H100` held ncu's fp64
    # *vector* FLOP to the fp64 tensor-core ceiling (67 TFLOP/s instead of 34)
    if not (GPP / "output.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    out = tmp_path / "k.csv"
    assert main(["ncu", str(GPP / "output.csv"), str(GPP / "output1.csv"), "--on", "H100",
                 "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert ",bound,unit," in rows[0]
    assert {r.split(",")[0] for r in rows[1:]} == {"sigma_gpp_gpu_34 [output1]",
                                                   "sigma_gpp_gpu_29 [output]"}
    capsys.readouterr()
    assert main(["report", str(out), "--on", "H100", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["analysis"]
    peaks = {p["kernel"]: (p["unit"], p["peak_flop_per_s"]) for p in points}
    assert peaks["sigma_gpp_gpu_34 [output1]"] == ("vector", 34e12)
    # review 12b A: the fp64 kernel's 2 % fp32 part is kept (flop_fp32 column), so it is
    # held to the weighted vector ceiling `rooflab ncu` gave it (34.41 TFLOP/s), not to
    # fp64's alone
    unit, peak = peaks["sigma_gpp_gpu_29 [output]"]
    assert unit == "vector" and 34e12 < peak < 34.5e12


def test_bench_csv_reads_back_and_llm_csv_is_refused_by_name(tmp_path, capsys):
    # bench's table CSV (kernel, precision, level, flop, bytes, ai, seconds, ...)
    bench_csv = tmp_path / "b.csv"
    bench_csv.write_text("kernel,precision,level,flop,bytes,ai,seconds,achieved_flop_per_s,"
                         "achieved_bytes_per_s,percent_of_roof,bound,floor_s,floor_ratio,flags\n"
                         "copy_fp64,fp64,DRAM,0.0,134217728.0,0.0,0.009,0.0,1.49e10,,memory,"
                         "0.01,0.9,noisy\n")
    assert main(["report", str(bench_csv), "--on", "H200", "--json"]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    assert (k["name"], k["flop"], k["bytes"], k["seconds"]) == (
        "copy_fp64", {"fp64": 0.0}, {"DRAM": 134217728.0}, 0.009)
    # llm's CSV has no precision or time: it must not be read as fp32 kernels
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "-o", str(tmp_path / "l.csv")]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "l.csv"), "--on", "T4"]) == 2
    assert "this is `rooflab llm`'s CSV" in capsys.readouterr().err


def test_a_kernel_without_bytes_is_named_not_dropped(tmp_path, capsys):
    # a script left out "bytes": the kernel vanished from the analysis, with no note (exit 0)
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"kernels": [{"name": "a", "flop": {"fp32": 1e9}, "seconds": 0.01},
                                         kernel_to_dict(GEMM)]}))
    assert main(["report", str(f), "--on", "H200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["kernel"] for p in doc["analysis"]] == ["gemm"]
    assert any(n.startswith("a: no bytes at any memory level") for n in doc["notes"])


def test_unit_names_as_scripts_write_them(tmp_path, capsys):
    # "unit": "Vector" matched no ceiling, so the kernel fell back to the fastest fp64 unit:
    # tensor cores at 67 TFLOP/s on H200 instead of the 34 TFLOP/s vector ceiling it asked for
    for written, unit, peak in (("Vector", "vector", 34e12), ("Tensor cores", "tensor", 67e12)):
        f = _edited(tmp_path, "k.json", lambda d, w=written: d["kernels"][1].__setitem__("unit", w))
        assert main(["report", str(f), "--on", "H200", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        gemm = next(p for p in doc["analysis"] if p["kernel"] == "gemm")
        assert (gemm["unit"], gemm["peak_flop_per_s"]) == (unit, peak)
        # no fallback note; the one note is that a datasheet roof judges (review 18a F8)
        assert [n[:25] for n in doc["notes"]] == ["judged on datasheet peaks"]


@pytest.mark.parametrize(("edit", "words"), [
    # was a ValueError traceback: dict("mybox")
    (lambda d: d.__setitem__("host", "mybox"), "field 'host' must be an object"),
    # was "compute[0]: expected an object ...; got 'precision'" (the dict's first key)
    (lambda d: d["measured"].__setitem__("compute", {"precision": "fp64", "flop_per_s": 1e11}),
     ".measured: field 'compute' must be a list of ceilings"),
    # was "roof 'box measured' has no compute ceilings" without the file
    (lambda d: d.__setitem__("measured", {"name": "empty", "compute": [], "memory": []}),
     "roof 'empty' has no ceilings; add at least one"),
])
def test_profiles_of_the_wrong_shape(tmp_path, capsys, edit, words):
    prof = _profile()
    edit(prof)
    p = tmp_path / "me.json"
    p.write_text(json.dumps(prof))
    f = _write(tmp_path / "b.json")
    assert main(["report", str(f), "--on", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}") and words in err and "Traceback" not in err


def test_roof_notes_as_one_string_and_kernel_fields_of_the_wrong_shape(tmp_path, capsys):
    prof = _profile()
    prof["measured"]["notes"] = "quiet machine"     # was kept as 13 one-letter notes
    p = tmp_path / "me.json"
    p.write_text(json.dumps(prof))
    assert main(["plot", "--on", str(p), "-o", str(tmp_path / "r.png"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["roofs"][0]["notes"] == ["quiet machine"]
    # was "dictionary update sequence element #0 has length 1; 2 is required"
    f = _edited(tmp_path, "k.json", lambda d: d["kernels"][0].__setitem__("meta", "x"))
    assert main(["report", str(f), "--on", "H200"]) == 2
    assert "kernels[0] 'copy': field 'meta' must be an object" in capsys.readouterr().err


def test_demo_json_reads_as_kernels_and_as_roof(tmp_path, capsys):
    # `rooflab demo --json > d.json` nests the profile and the analysis; report/plot refused
    # it ("expected a list of kernels ...", "not a profile or roof file")
    doc = {"schema_version": 1, "profile": _profile(),
           "analysis": analysis_to_dict(analyze(ROOF, [GEMM])), "files": {}}
    f = tmp_path / "d.json"
    f.write_text(json.dumps(doc))
    assert main(["report", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["roof"]["name"] == "box measured"          # the profile's measured roof
    assert out["analysis"][0]["percent_of_roof"] == pytest.approx(40.0)
    assert main(["plot", "--on", str(f), "-o", str(tmp_path / "r.png")]) == 0


def test_semicolon_separated_csv_says_so(tmp_path, capsys):
    # was "missing column(s) name, flop, bytes" for a header that has all three
    f = tmp_path / "k.csv"
    f.write_text("name;flop;bytes;seconds\ngemm;2e9;2.4e7;0.05\n")
    assert main(["report", str(f), "--on", "H200"]) == 2
    assert f"error: {f}:1: the columns are separated by ';'" in capsys.readouterr().err


def test_two_kernels_of_one_name_keep_their_own_diagnosis(tmp_path, capsys):
    # a kernel file may list one name twice (two launches with different sizes); the report
    # gave both the diagnosis of the second (headroom 2400x for both)
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"kernels": [
        {"name": "g", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 1e7}, "seconds": 0.01},
        {"name": "g", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}, "seconds": 0.5}]}))
    assert main(["report", str(f), "--on", "H200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # H200: fp32 vector 67 TFLOP/s, DRAM 4.8 TB/s. First: AI 200 > ridge 13.96, attainable
    # 67e12, achieved 2e11: 335x; second: AI 1, attainable 4.8e12, achieved 2e9: 2400x
    assert sorted(d["headroom"] for d in doc["diagnosis"]) == [pytest.approx(335.0),
                                                               pytest.approx(2400.0)]


def test_choose_and_scale_json_carry_the_vocabulary(tmp_path, capsys):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "gemv", "flop": {"fp16": 2e9}, "bytes": {"DRAM": 2e9}}]}))
    assert main(["choose", str(path), "--among", "T4,H100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema_version"] == 2
    assert [c["name"] for c in d["devices"]] == ["NVIDIA H100 SXM", "NVIDIA T4"]
    # 2 GB at 3.35 TB/s on the H100 (above its one 5 us launch: max, not sum)
    assert d["devices"][0]["seconds"] == pytest.approx(2e9 / 3.35e12)
    assert main(["scale", "--on", "H100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema_version"] == 2 and d["device"] == "NVIDIA H100 SXM"
    assert d["roof"]["name"] == "NVIDIA H100 SXM" and d["roof"]["memory"][0]["level"] == "DRAM"
