"""Review r1 F3: a kernel file row with no precision is judged as fp32, and the documents
say so. `rooflab -q report noprec.csv --on A100 --json` once recorded flop {"fp32": ...}
with provenance flop "given" and nothing else: -q dropped the stderr warning and the JSON
never had it (docs/json.md: "What a warning says is in the document too"). Now the kernel
carries provenance "precision": "assumed" (CSV and JSON readers alike), the report's
documents (--json, -o x.json, x.md) carry the warning as a note, and stderr keeps it.

Hand numbers: dgemm_512 = 2 x 512^3 = 2.68435e8 FLOP over 6.291456e6 B (3 x 512^2 x 8 B)
in 3 ms: 2.68435e8 / 0.003 = 89.478 GFLOP/s, AI 2.68435e8 / 6.291456e6 = 42.67, past the
A100's fp32 ridge 19.5e12 / 2.039e12 = 9.56, so judged as fp32 it reads
89.478e9 / 19.5e12 = 0.4589 % of its roof (as fp64 it would read 89.478e9 / 9.7e12 =
0.9225 %, the 2x the note warns of).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.ingest.kernelfile import load_kernels

DGEMM = "dgemm_512,2.68435e8,6.291456e6,0.003"
SAID = "precision not given for 1 kernel ('dgemm_512'): judged as fp32"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _report(capsys, path, *more) -> tuple[dict, str]:
    code, out, err = _run(capsys, *more, "report", str(path), "--on", "A100", "--json")
    assert code == 0, err
    return json.loads(out), err


def _assumed_notes(doc: dict) -> list[str]:
    return [n for n in doc["notes"] if "precision not given" in n]


@pytest.fixture
def noprec(tmp_path):
    path = tmp_path / "noprec.csv"
    path.write_text(f"name,flop,bytes,seconds\n{DGEMM}\n")
    return path


def test_quiet_report_json_says_the_precision_was_assumed(noprec, capsys):
    """The reviewer's command: -q, so stderr is empty, and the document says it all."""
    doc, err = _report(capsys, noprec, "-q")
    assert err == ""
    kernel = doc["kernels"][0]
    assert kernel["flop"] == {"fp32": pytest.approx(2.68435e8)}
    assert kernel["provenance"] == {"flop": "given", "bytes": "given",
                                    "seconds": "measured", "precision": "assumed"}
    # judged as fp32: 89.478e9 / 19.5e12 = 0.4589 % of the roof (see the docstring)
    assert doc["analysis"][0]["precision"] == "fp32"
    assert doc["analysis"][0]["percent_of_roof"] == pytest.approx(0.45886, rel=1e-4)
    (note,) = _assumed_notes(doc)
    assert note.startswith(SAID)
    assert "CSV precision column" in note and '{"fp64": 2.68435e8}' in note
    assert note.endswith("by BLAS naming (d/z fp64, s/c fp32): fp64 for dgemm_512")


def test_the_stderr_warning_stays_and_names_the_line(noprec, capsys):
    doc, err = _report(capsys, noprec)
    assert f"warning: {noprec}:2: {SAID}" in " ".join(err.split())
    assert "add a precision column" in " ".join(err.split())
    assert len(_assumed_notes(doc)) == 1


def test_a_given_precision_is_not_marked(tmp_path, capsys):
    """A precision column marks nothing; an empty cell in it marks that row's kernel only
    (and a copy, 0 FLOP, has no precision to judge)."""
    path = tmp_path / "mixed.csv"
    path.write_text("name,flop,bytes,seconds,precision\n"
                    f"{DGEMM},\n"
                    "sgemm_512,2.68435e8,3.145728e6,0.002,fp32\n"
                    "copy,0,1e8,0.001,\n")
    doc, _ = _report(capsys, path, "-q")
    marked = {k["name"]: k["provenance"].get("precision") for k in doc["kernels"]}
    assert marked == {"dgemm_512": "assumed", "sgemm_512": None, "copy": None}
    (note,) = _assumed_notes(doc)
    assert note.startswith(SAID)


def test_the_json_reader_marks_a_bare_flop_as_the_csv_reader_does(tmp_path, capsys):
    path = tmp_path / "noprec.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "dgemm_512", "flop": 2.68435e8, "bytes": 6.291456e6, "seconds": 0.003,
         "provenance": {"flop": "counted"}},
        {"name": "dgemm_keyed", "flop": {"fp64": 2.68435e8}, "bytes": 6.291456e6,
         "seconds": 0.003}]}))
    doc, err = _report(capsys, path, "-q")
    assert err == ""
    first, keyed = doc["kernels"]
    # its own provenance words kept, the assumption added
    assert first["provenance"] == {"flop": "counted", "bytes": "given",
                                   "seconds": "measured", "precision": "assumed"}
    assert "precision" not in keyed["provenance"]
    (note,) = _assumed_notes(doc)
    assert note.startswith(SAID)
    # the same kernel marked the same way by both readers
    csv_path = tmp_path / "noprec.csv"
    csv_path.write_text(f"name,flop,bytes,seconds\n{DGEMM}\n")
    with pytest.warns(Warning, match="judged as fp32"):
        (from_csv,) = load_kernels(csv_path)
    with pytest.warns(Warning, match="judged as fp32"):
        from_json = load_kernels(path)[0]
    assert from_csv.provenance["precision"] == from_json.provenance["precision"] == "assumed"


def test_level_rows_are_one_kernel_marked_once(tmp_path, capsys):
    """Two rows of one kernel at DRAM and L2 (hierarchical roofline) are one kernel, one
    mark, one name in the note."""
    path = tmp_path / "levels.csv"
    path.write_text(f"name,flop,bytes,seconds,level\n{DGEMM},DRAM\n"
                    "dgemm_512,2.68435e8,2.5e7,0.003,L2\n")
    doc, _ = _report(capsys, path, "-q")
    (kernel,) = doc["kernels"]
    assert kernel["bytes"] == {"DRAM": 6.291456e6, "L2": 2.5e7}
    assert kernel["provenance"]["precision"] == "assumed"
    (note,) = _assumed_notes(doc)
    assert note.startswith(SAID)


def test_the_report_files_keep_the_note_and_a_rewrite_keeps_the_mark(noprec, tmp_path,
                                                                     capsys):
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    assert _run(capsys, "-q", "report", str(noprec), "--on", "A100", "-o", str(md))[0] == 0
    assert SAID in md.read_text()
    assert _run(capsys, "-q", "report", str(noprec), "--on", "A100", "-o", str(js))[0] == 0
    assert len(_assumed_notes(json.loads(js.read_text()))) == 1
    # the archived document read back: the kernel is still marked, the note said once
    again, _ = _report(capsys, js, "-q")
    assert again["kernels"][0]["provenance"]["precision"] == "assumed"
    assert len(_assumed_notes(again)) == 1
