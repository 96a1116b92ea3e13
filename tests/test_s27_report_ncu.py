"""Session 27 fA: what s26 left of `report` with ncu's files.

1. `report K.csv --json` (K.csv from `rooflab ncu -o`) said roof.kind "nominal" for a
   catalog roof whose compute ceilings were scaled to the SM clock ncu recorded (fp64 228
   x 1.62/2.37 = 155.5 GFLOP/s, each ceiling "derived"), where the CSV's roof_kind said
   "derived" (cli/profiled.judged_kind, now model/roof_schema.judged_kind).
2. A kernel file written by the old `ncu --precision each -o` ('k [fp64]', 'k [fp32]', each
   with the kernel's whole 22.765 s) read back as two kernels: 45.5 s, two 50 % shares.
   Now joined back into the one kernel (ingest/kernelfile_views.py).
3. `report --precision` was "No such option"; now refused with the way to ncu's view.
"""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main

ON = "RTX 4060 Laptop GPU"
NCU_FP64 = 155.5e9            # 96 FLOP/cycle x 1.62 GHz (ncu's peak of output1)
# NERSC GPP output.csv's sigma_gpp_gpu_29 (test_s26_ncu_precisions' hand working)
FP64 = 122_305_685_313 + 371_957_323_851 + 2 * 734_774_600_586
FP32 = 2 * 24_541_362_358
SECONDS = 36_873_068_823 / 1_619_726_202.90      # 22.765 s


def _json(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _roof_kinds(path) -> set[str]:
    with open(path, newline="") as fh:
        return {row["roof_kind"] for row in csv.DictReader(fh)}


# --- 1: the JSON's roof.kind says what the CSV's roof_kind says ----------------------------

@pytest.fixture
def kernel_csv(gpp, tmp_path, capsys):
    out = tmp_path / "K.csv"
    assert main(["ncu", str(gpp / "output1.csv"), "--on", ON, "-o", str(out)]) == 0
    capsys.readouterr()
    return out


def test_report_json_roof_kind_is_the_csvs(kernel_csv, capsys):
    doc = _json(capsys, "report", str(kernel_csv), "--on", ON)
    fp64 = next(c for c in doc["roof"]["compute"] if c["precision"] == "fp64")
    assert fp64["flop_per_s"] == pytest.approx(NCU_FP64, rel=1e-3) and fp64["kind"] == "derived"
    # old: "nominal" beside ceilings every one of which is derived
    assert _roof_kinds(kernel_csv) == {"derived"}
    assert doc["roof"]["kind"] == "derived"
    assert doc["roof"]["memory"][0]["kind"] == "nominal"     # DRAM as listed


@pytest.mark.parametrize("verb", ["ncu", "report"])
def test_every_verbs_json_says_derived(gpp, capsys, verb):
    doc = _json(capsys, verb, str(gpp / "output1.csv"), "--on", ON)
    assert doc["roof"]["kind"] == "derived"                    # old: "nominal"


def test_at_boost_stays_nominal(gpp, capsys):
    doc = _json(capsys, "report", str(gpp / "output1.csv"), "--on", f"{ON}@boost")
    assert doc["roof"]["kind"] == "nominal"


def test_a_catalog_roof_as_listed_stays_nominal(tmp_path, capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "triad", "flop": {"fp64": 2e9},
                                          "bytes": {"DRAM": 2.4e10}, "seconds": 0.01}]}))
    assert _json(capsys, "report", str(k), "--on", "H100")["roof"]["kind"] == "nominal"


def test_saved_document_read_back_as_the_roof(gpp, kernel_csv, tmp_path, capsys):
    # `--on doc.json`: the derived roof as saved, not scaled again (55 %, ncu's)
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps(_json(capsys, "report", str(gpp / "output1.csv"), "--on", ON)))
    doc = _json(capsys, "report", str(kernel_csv), "--on", str(saved))
    assert doc["roof"]["kind"] == "derived"
    (p,) = [p for p in doc["analysis"] if p["level"] == "DRAM"]
    assert round(p["percent_of_roof"]) == 55


def test_judged_kind_unit():
    from rooflab.hardware.resolve import load_roof
    from rooflab.ingest.profile_checks import at_recorded_clock
    from rooflab.model.roof_schema import judged_kind, roof_to_dict

    roof = load_roof(ON)
    scaled, _ = at_recorded_clock(roof, 1_619_726_202.90)
    assert scaled.kind == "nominal"               # in memory: still the catalog's roof
    assert judged_kind(scaled) == roof_to_dict(scaled)["kind"] == "derived"
    assert judged_kind(roof) == roof_to_dict(roof)["kind"] == "nominal"


# --- 2: an old `ncu --precision each -o` file's rows joined back ---------------------------

def _old_each_file(gpp, tmp_path, monkeypatch, suffix: str):
    """The file the old `ncu --precision each -o x.csv` wrote (s26 refused it since)."""
    import rooflab.cli.profiled as profiled

    out = tmp_path / f"each{suffix}"
    with monkeypatch.context() as m:
        m.setattr(profiled, "refuse_split_views", lambda *a, **k: None)
        assert main(["ncu", str(gpp / "output.csv"), "--on", ON, "--precision", "each",
                     "-o", str(out)]) == 0
    return out


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_old_each_file_is_one_kernel_again(gpp, tmp_path, monkeypatch, capsys, suffix):
    old = _old_each_file(gpp, tmp_path, monkeypatch, suffix)
    plain = tmp_path / f"plain{suffix}"
    assert main(["ncu", str(gpp / "output.csv"), "--on", ON, "-o", str(plain)]) == 0
    capsys.readouterr()
    assert main(["report", str(old), "--on", ON, "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    # old: two kernels 'sigma_gpp_gpu_29 [fp64]' and '[fp32]', 45.5 s, 50 % each
    (k,) = doc["kernels"]
    assert k["name"] == "sigma_gpp_gpu_29" and k["seconds"] == pytest.approx(SECONDS)
    assert k["flop"] == {"fp64": pytest.approx(FP64), "fp32": pytest.approx(FP32)}
    assert "precision_view" not in k.get("meta", {})
    (p,) = [p for p in doc["analysis"] if p["level"] == "DRAM"]
    assert p["time_share"] == 1.0
    # the kernel `rooflab ncu -o` writes without the split: the same point
    (q,) = [q for q in _json(capsys, "report", str(plain), "--on", ON)["analysis"]
            if q["level"] == "DRAM"]
    assert p["percent_of_roof"] == pytest.approx(q["percent_of_roof"])   # 55.5 %
    assert round(p["percent_of_roof"], 1) == 55.5
    err = " ".join(got.err.split())
    assert "'sigma_gpp_gpu_29 [fp64]', 'sigma_gpp_gpu_29 [fp32]' are one kernel's" in err
    assert "joined back into 1 kernel ('sigma_gpp_gpu_29')" in err


def test_old_each_file_in_whatif_and_compare(gpp, tmp_path, monkeypatch, capsys):
    old = _old_each_file(gpp, tmp_path, monkeypatch, ".csv")
    capsys.readouterr()
    doc = _json(capsys, "whatif", str(old), "--on", ON, "--hardware", "L4")
    assert doc["total_before_s"] == pytest.approx(SECONDS)      # old: 45.53 s
    assert main(["compare", str(old), str(old), "--on", ON]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "[fp32]" not in out and "sigma_gpp_gpu_29" in out


def _view_kernel(unit):
    from rooflab.model import Kernel

    return Kernel("gemm", {"fp16": 4.096e12, "fp32": 4.9e10}, {"DRAM": 1.35e11, "L2": 2e11},
                  seconds=SECONDS, unit=unit, meta={"source": "ncu"})


@pytest.mark.parametrize("unit", ["tensor", "vector", None])
def test_join_gives_back_the_split_kernel(unit):
    from rooflab.ingest.kernelfile_views import join_precision_views
    from rooflab.ingest.ncu_precision import EACH, kernel_view

    k = _view_kernel(unit)
    parts = kernel_view(k, EACH)
    assert [p.name for p in parts] == ["gemm [fp16]", "gemm [fp32]"]
    if unit == "tensor":
        assert [p.unit for p in parts] == ["tensor", "vector"]   # the epilogue on vector
    with pytest.warns(Warning, match="joined back into 1 kernel"):
        (back,) = join_precision_views(parts, "k.csv")
    assert back == k and back.unit == unit


def test_rows_that_are_not_one_kernel_stay_apart(recwarn):
    from rooflab.ingest.kernelfile_views import join_precision_views
    from rooflab.model import Kernel

    a = Kernel("k [fp64]", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0)
    b = Kernel("k [fp32]", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=2.0)     # another time
    c = Kernel("m [fp64]", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0)
    d = Kernel("m [fp32]", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0)     # FLOP not fp32
    e = Kernel("n [fp64]", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0)
    f = Kernel("n [fp32]", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1.0)
    g = Kernel("n", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1.0)           # its base is a kernel
    kernels = (a, b, c, d, e, f, g)
    assert join_precision_views(kernels, "k.csv") == kernels
    assert not recwarn.list


# --- 3: report --precision: refused, with the way to the view ------------------------------

@pytest.mark.parametrize("word", ["each", "fp64"])
def test_report_precision_points_to_ncu(gpp, capsys, word):
    code = main(["report", str(gpp / "output.csv"), "--on", ON, "--precision", word])
    err = " ".join(capsys.readouterr().err.split())
    # old: "No such option: --precision"
    assert code == 2 and "Traceback" not in err
    assert f"use `rooflab ncu FILE --precision {word}`" in err
    assert "judges each kernel whole" in err


def test_report_precision_error_document(gpp, capsys):
    code = main(["report", str(gpp / "output1.ncu-rep"), "--precision", "each", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["error"]["kind"] == "input"
    assert "rooflab ncu FILE --precision each" in doc["error"]["message"]
