"""The JSON contract findings of review s19 r2, with the reviewer's cases:
F16 rows name the ceilings they were judged by; F20 an analysis CSV read back keeps no old
verdicts in meta; F4 `notes` always present; F5 compare's untimed explanation in `notes`;
F6 `wrote FILE` on stderr under --json; F10 `specs import --from` byte-stable; F11 error
documents fill path/line and keep a script's traceback in `detail`; F3 schema_version 2,
version-1 files read, newer refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import run_cli

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
NCU = Path("/work/shared/fixtures/ncu/nersc-gpp")

# A probed CPU's roof as review s19 r2 F16 had it: DRAM 7.68 GB/s measured and the derived
# real-traffic ceiling 11.35 GB/s beside it (STREAM triad x 4/3 and more).
ROOF = {"name": "test cpu", "compute": [{"precision": "fp64", "unit": "vector",
                                          "flop_per_s": 5e10, "kind": "measured"}],
        "memory": [{"level": "DRAM", "bytes_per_s": 7.68e9, "kind": "measured"},
                   {"level": "DRAM (real traffic)", "bytes_per_s": 1.135e10,
                    "kind": "derived"}]}
# one counted fp64 kernel (1e10 FLOP, 1e7 DRAM bytes: counter bytes are real traffic)
# and a copy without FLOP (hand-counted bytes: the STREAM-counted DRAM ceiling)
RUN = {"kernels": [{"name": "k", "flop": {"fp64": 1e10}, "bytes": {"DRAM": 1e7},
                    "seconds": 1.0, "provenance": {"flop": "counted", "bytes": "counted",
                                                   "seconds": "measured"}},
                   {"name": "copy", "flop": {"fp64": 0}, "bytes": {"DRAM": 1e9},
                    "seconds": 1.0}]}


def _doc(*args, rc=0):
    r = run_cli(*args, "--json")
    assert r.returncode == rc, r.stderr
    return json.loads(r.stdout)


@pytest.fixture()
def cpu(tmp_path):
    (tmp_path / "roof.json").write_text(json.dumps(ROOF))
    (tmp_path / "run.json").write_text(json.dumps(RUN))
    return tmp_path


def test_rows_name_the_memory_ceiling_they_were_judged_by(cpu):
    doc = _doc("report", str(cpu / "run.json"), "--on", str(cpu / "roof.json"))
    rows = {r["kernel"]: r for r in doc["analysis"]}
    k = rows["k"]
    # judged against 11.35 GB/s, the real-traffic ceiling: ridge 5e10 / 1.135e10 = 4.405
    assert k["bytes_per_s"] == 1.135e10 and k["ridge"] == pytest.approx(4.40529, rel=1e-5)
    assert (k["memory_ceiling"], k["memory_ceiling_kind"]) == ("DRAM (real traffic)",
                                                               "derived")
    assert (k["compute_ceiling"], k["compute_ceiling_kind"]) == ("fp64 vector", "measured")
    # the row's memory_ceiling is a roof.memory[] level, whose bandwidth is the row's
    memory = {m["level"]: m for m in doc["roof"]["memory"]}
    assert memory[k["memory_ceiling"]]["bytes_per_s"] == k["bytes_per_s"]
    copy = rows["copy"]
    assert (copy["memory_ceiling"], copy["memory_ceiling_kind"]) == ("DRAM", "measured")
    assert copy["bytes_per_s"] == 7.68e9
    assert copy["compute_ceiling"] is None        # no FLOP: no compute side, as `ai` says


def test_an_analysis_csv_read_back_keeps_no_old_verdicts(tmp_path):
    csv = tmp_path / "kk.csv"
    r = run_cli("ncu", str(NCU / "output1.csv"), "--on", "H200", "-o", str(csv))
    assert r.returncode == 0, r.stderr
    assert "percent_of_roof" in csv.read_text().splitlines()[0]
    doc = _doc("report", str(csv), "--on", "L4")
    meta = doc["kernels"][0].get("meta", {})
    for stale in ("percent_of_roof", "bound", "time_share", "ai", "achieved_flop_per_s"):
        assert stale not in meta
    # one verdict per kernel, L4's: 85.2 GFLOP/s of L4's fp64 roof, compute-bound; since
    # session 26 that roof is at the SM clock ncu recorded (kept in the CSV beside the
    # capability, 8.9 as L4's): 17.989 % at boost x 2.04 / 1.62 GHz = 22.66 %, as
    # `rooflab report output1.csv --on L4` reads the recording itself
    (row,) = [p for p in doc["analysis"] if p["level"] == "DRAM"]
    assert row["percent_of_roof"] == pytest.approx(17.989 * 2.04e9 / 1.62e9, rel=2e-3)
    assert row["bound"] == "compute"


def test_notes_are_always_a_list(cpu):
    quiet = {"name": "box", "kind": "measured",
             "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 1e11,
                          "kind": "measured"}],
             "memory": [{"level": "DRAM", "bytes_per_s": 1e10, "kind": "measured"}]}
    (cpu / "box.json").write_text(json.dumps(quiet))
    (cpu / "one.json").write_text(json.dumps({"kernels": [RUN["kernels"][0]]}))
    k, box = str(cpu / "one.json"), str(cpu / "box.json")
    assert _doc("report", k, "--on", box)["notes"] == []
    assert _doc("whatif", k, "--on", box, "--bytes-scale", "0.5")["notes"] == []
    assert _doc("ncu", str(NCU / "output1.csv"))["notes"] == []


def test_compare_says_why_untimed_runs_have_no_speedup(tmp_path):
    a1, a2 = tmp_path / "a1.json", tmp_path / "a2.json"
    for path, n in ((a1, "256"), (a2, "512")):
        r = run_cli("ai", "matmul", n, n, n, "--on", "t4", "--json")
        assert r.returncode == 0, r.stderr
        path.write_text(r.stdout)
    doc = _doc("compare", str(a1), str(a2))
    assert doc["speedup"] is None and doc["total_after_s"] is None
    assert any(n.startswith("no matched kernel has a time in both runs") for n in doc["notes"])


def test_json_runs_say_what_they_wrote(tmp_path):
    k = str(SEEDS / "k.json")
    for argv in (("report", k, "--on", "T4"), ("whatif", k, "--on", "T4", "--bytes-scale",
                                                  "0.5"), ("compare", k, k)):
        out = tmp_path / f"{argv[0]}.json"
        r = run_cli(*argv, "-o", str(out), "--json")
        assert r.returncode == 0, r.stderr
        assert f"wrote {out}" in r.stderr and out.is_file()
        json.loads(r.stdout)                      # stdout still one document


def test_specs_import_from_is_byte_stable():
    argv = ("specs", "import", "--from", "T4", "--dram", "270GB/s", "--fp16",
            "50TFLOP/s@tensor", "--json")
    first = run_cli(*argv)
    assert first.returncode == 0, first.stderr
    assert "created" not in json.loads(first.stdout)
    assert run_cli(*argv).stdout == first.stdout


def _error(*args):
    return _doc(*args, rc=2)["error"]


def test_error_documents_name_the_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    newer = {**json.loads((SEEDS / "k.json").read_text()), "schema_version": 3}
    Path("v3.json").write_text(json.dumps(newer))
    e = _error("report", "v3.json")
    assert (e["path"], e["line"]) == ("v3.json", None)
    assert "schema_version 3 is newer than this rooflab understands (2)" in e["message"]
    bad = {"roof": {**ROOF, "memory": [{"level": "DRAM", "bytes_per_s": "13.4 GB/s"}]},
           "kernels": RUN["kernels"]}
    Path("gbs.json").write_text(json.dumps(bad))
    assert _error("report", "gbs.json")["path"] == "gbs.json"
    e = _error("ncu", str(NCU / "output8.csv"))
    assert (e["path"], e["line"]) == (str(NCU / "output8.csv"), 9)   # "(line 9: launch 0"
    assert _error("report", str(SEEDS / "k.json"), "--on", "T4", "-o",
                  "/proc/x.json")["path"] == "/proc/x.json"
    Path("boom.py").write_text('import sys\nx = 1\n\nraise ValueError("boom")\n')
    e = _error("bench", "--run", "boom.py", "--on", "T4")
    assert (e["kind"], e["path"], e["line"]) == ("probe", "boom.py", 4)
    assert e["message"] == "boom.py:4: the script raised ValueError: boom"
    assert e["detail"].startswith("Traceback (the script's frames):")
    assert 'line 4' in e["detail"]
    # an option's name in front of a message is no file
    e = _error("compare", str(SEEDS / "k.json"), str(SEEDS / "k.json"), "--fail-if-slower",
               "nan")
    assert (e["path"], e["line"], e["detail"]) == (None, None, None)


def test_schema_version_2_reads_version_1_files(tmp_path):
    # seed files of version 1 (examples/seeds/k.json, t4p.json: a kernel file, a profile)
    assert json.loads((SEEDS / "k.json").read_text())["schema_version"] == 1
    assert json.loads((SEEDS / "t4p.json").read_text())["schema_version"] == 1
    doc = _doc("report", str(SEEDS / "k.json"), "--on", str(SEEDS / "t4p.json"))
    assert doc["schema_version"] == 2
    # gemm_ai190: AI 190 on seed 004's T4 measured roof
    assert doc["analysis"][0]["ai"] == pytest.approx(190.0)
    # a version-1 analysis document (old keys only) is a run compare reads
    old = {**doc, "schema_version": 1}
    (tmp_path / "old.json").write_text(json.dumps(old))
    cmp = _doc("compare", str(tmp_path / "old.json"), str(SEEDS / "k.json"))
    assert cmp["schema_version"] == 2 and cmp["speedup"] == pytest.approx(1.0)
