"""Review s23 r2 F3: `rooflab ncu a.csv b.csv -o k.csv` then `report k.csv` pooled the two
profiling runs (time shares 100 % / 100 % became 54 % / 46 %): the CSV now carries each
kernel's step and step_index, read back into meta as the JSON round trip keeps them.
Review s23 r4 F7 (compare of an llm document whose prefill is null) and F8 (--smem of 400
digits): one error line or a result, never a traceback.
"""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main


def test_ncu_csv_round_trip_keeps_each_files_share(fixtures_dir, tmp_path, capsys):
    gpp = fixtures_dir / "ncu" / "nersc-gpp"
    out = tmp_path / "k.csv"
    assert main(["ncu", str(gpp / "output.csv"), str(gpp / "output3.csv"), "--on", "L4",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(out.open()))
    assert {(r["kernel"], r["step"], r["step_index"]) for r in rows} == {
        ("sigma_gpp_gpu_29 [output]", "output", "0"),
        ("sigma_gpp_gpu_34 [output3]", "output3", "1")}
    assert main(["report", str(out), "--on", "L4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # each kernel is the whole of its own run, as `ncu` itself said (time_share 1.0 in the
    # CSV), not 22.8 / (22.8 + 26.5) = 0.462 of two runs added up
    shares = {r["kernel"]: r["time_share"] for r in doc["analysis"] if r["level"] == "DRAM"}
    assert shares == {"sigma_gpp_gpu_29 [output]": 1.0, "sigma_gpp_gpu_34 [output3]": 1.0}
    meta = {k["name"]: (k["meta"]["step"], k["meta"]["step_index"]) for k in doc["kernels"]}
    assert meta == {"sigma_gpp_gpu_29 [output]": ("output", 0),
                    "sigma_gpp_gpu_34 [output3]": ("output3", 1)}
    # the three level rows of each kernel are joined again, one kernel per step
    assert len(doc["kernels"]) == 2


def test_csv_step_label_of_digits_stays_text(tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("name,flop,bytes,seconds,precision,step,step_index\n"
                 "a,2e9,1e8,0.01,fp32,1,0\na,2e9,1e8,0.03,fp32,2,1\n")
    assert main(["report", str(f), "--on", "H100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(k["meta"]["step"], k["meta"]["step_index"]) for k in doc["kernels"]] == [
        ("1", 0), ("2", 1)]
    assert [r["time_share"] for r in doc["analysis"]] == [1.0, 1.0]


def test_compare_llm_documents_one_with_prefill_null(tmp_path, capsys):
    a = tmp_path / "llm.json"
    assert main(["llm", "tinyllama-1.1b", "--on", "H100", "-o", str(a)]) == 0
    doc = json.loads(a.read_text())
    doc["llm"]["prefill"] = None
    b = tmp_path / "llm_null.json"
    b.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--json"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert json.loads(out)   # a document, not exit 70


@pytest.mark.parametrize("flag, value", [("--smem", "9" * 400), ("--carveout", "9" * 400 + "K")],
                         ids=["smem", "carveout"])
def test_ai_occupancy_smem_of_400_digits_is_one_error_line(capsys, flag, value):
    argv = ["ai", "occupancy", "--block", "256", "--regs", "32", "--on", "H100", flag, value]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert [ln for ln in err.splitlines() if ln.startswith("error:")] == [
        f"error: {flag} must be bytes (4096) or KiB (48K), a number of a few digits (no SM "
        f"has more than 228 KiB); got 400 digits"]
