"""s33 C: the profiler verbs took a file twice, and a missing file among several, with exit 0.

- `rooflab ncu output1.csv output1.csv` (NERSC GPP) printed two identical steps,
  `sigma_gpp_gpu_34 [.../output1.csv]` and `[... #2]`, each 30.5 s and 100 % of "its" file;
  `rooflab rocprof results.csv results.csv` six kernels for three, `rooflab torch t.json
  t.json` every op twice. `report` and `plot` refuse it ("is given twice: its kernels would
  be counted twice"), as docs/ingest.md says of every verb.
- `rooflab ncu output1.csv outptu5.csv` (a typo) warned "outptu5.csv: file not found (file
  skipped)" and exit 0 with one step of two; `report`, `plot` and `torch` say
  "error: outptu5.csv: file not found", exit 2. So do `ncu` and `rocprof` now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main

ROCPROF = Path(__file__).parent / "data" / "rocprof_occupancy" / "results.csv"


def _refused(capsys, args: list[str], words: str) -> None:
    assert main(args) == 2
    got = capsys.readouterr()
    assert got.err.startswith("error: ") and words in got.err, got.err
    assert "Traceback" not in got.err and got.out == ""


def test_ncu_refuses_a_file_given_twice(gpp, capsys):
    f = str(gpp / "output1.csv")
    _refused(capsys, ["ncu", f, f], f"{f} is given twice: its kernels would be counted twice")


def test_ncu_refuses_a_link_to_a_file_given(gpp, tmp_path, capsys):
    link = tmp_path / "same.csv"
    link.symlink_to(gpp / "output1.csv")
    _refused(capsys, ["ncu", str(gpp / "output1.csv"), str(link)],
             f"is given twice (the same file as {gpp / 'output1.csv'})")


def test_rocprof_refuses_a_file_given_twice(capsys):
    _refused(capsys, ["rocprof", str(ROCPROF), str(ROCPROF), "--on", "mi300x"],
             "is given twice")


def test_torch_refuses_a_trace_given_twice(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": []}')
    _refused(capsys, ["torch", str(trace), str(trace)], "t.json is given twice")


@pytest.mark.parametrize("verb", ["ncu", "rocprof"])
def test_a_missing_file_among_several_is_an_error(gpp, verb, tmp_path, capsys):
    first = str(gpp / "output1.csv") if verb == "ncu" else str(ROCPROF)
    missing = str(tmp_path / "outptu5.csv")
    _refused(capsys, [verb, first, missing, "--on", "mi300x" if verb == "rocprof" else "L4"],
             f"error: {missing}: file not found")


def test_two_files_still_make_two_steps(gpp, capsys):
    # output1 (30.5 s) and output5 (12.3 s): two steps, one kernel each
    assert main(["ncu", str(gpp / "output1.csv"), str(gpp / "output5.csv"), "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert sorted(k["name"] for k in doc["kernels"]) == [
        "sigma_gpp_gpu_34 [output1]", "sigma_gpp_gpu_34 [output5]"]
