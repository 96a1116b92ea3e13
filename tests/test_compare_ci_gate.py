"""rooflab in a nightly CI job: `compare --fail-if-slower` as the gate, `--json` archived.

A CI script must tell "a kernel got slower" (exit 1) from "the call is broken" (exit 2) and
from "rooflab crashed" (was exit 1 too: Python's code for an uncaught exception). Each test
runs the real CLI and asserts the exit code, what stdout holds and what stderr says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli import common, exit_codes
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.compare import compare_kernels

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


def _gpp(name: str) -> str:
    path = GPP / name
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} absent (CI lays ../shared beside the clone)")
    return str(path)


def _kernels_file(path: Path, rows: list[tuple[str, float | None]]) -> str:
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": name, "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": s}
        for name, s in rows]}))
    return str(path)


def test_exit_codes_are_distinct():
    codes = (exit_codes.EXIT_OK, exit_codes.EXIT_REGRESSION, exit_codes.EXIT_USAGE,
             exit_codes.EXIT_INTERNAL,
             exit_codes.EXIT_INTERRUPTED)
    assert codes == (0, 1, 2, 70, 130)


def test_regression_exits_1_with_the_whole_json_on_stdout(capsys):
    # step 5 -> step 4 of NERSC GPP: 12.29 s -> 26.29 s, +113.8 %
    assert main(["compare", _gpp("output5.csv"), _gpp("output4.csv"), "--json",
                 "--fail-if-slower", "5"]) == exit_codes.EXIT_REGRESSION
    cap = capsys.readouterr()
    doc = json.loads(cap.out)                    # stdout is the document, nothing else
    assert doc["schema_version"] == 2 and doc["regressions"] == ["sigma_gpp_gpu_34"]
    assert doc["fail_if_slower_pct"] == 5.0
    (m,) = doc["matches"]
    assert m["change_pct"] == pytest.approx(100 * (26.2855 / 12.2940 - 1), rel=1e-4)
    assert cap.err == "slower by more than 5 %: sigma_gpp_gpu_34\n"


def test_no_regression_exits_0(capsys):
    assert main(["compare", _gpp("output4.csv"), _gpp("output5.csv"), "--json",
                 "--fail-if-slower", "5"]) == exit_codes.EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressions"] == [] and doc["speedup"] == pytest.approx(2.138, rel=1e-3)


def test_calls_per_side_are_in_the_json(capsys):
    # step 1 launched sigma_gpp_gpu_34 once, step 5 twice: the totals' speed-up (1.24x)
    # hides a per-call one of 2.48x, which a dashboard can now compute
    assert main(["compare", _gpp("output1.ncu-rep"), _gpp("output5.ncu-rep"),
                 "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["matches"][0]
    assert (m["kernel"], m["before_calls"], m["after_calls"]) == ("sigma_gpp_gpu_34", 1, 2)
    per_call = (m["before_s"] / m["before_calls"]) / (m["after_s"] / m["after_calls"])
    assert per_call == pytest.approx(2.48, rel=1e-2)


@pytest.mark.parametrize("pct", ["nan", "inf", "-1"])
def test_a_gate_that_cannot_fail_is_a_usage_error(tmp_path, capsys, pct):
    # `--fail-if-slower nan` passed every run (NaN > x is False) and, with --json, died in
    # a ValueError traceback (exit 1: a "regression"); inf could never fail either
    b = _kernels_file(tmp_path / "b.json", [("gemm", 1.0)])
    a = _kernels_file(tmp_path / "a.json", [("gemm", 9.0)])
    assert main(["compare", b, a, "--json", "--fail-if-slower", pct]) == exit_codes.EXIT_USAGE
    cap = capsys.readouterr()
    # nan and inf in compare's own words since s35 B (cli/finite_options.OWN_RANGE)
    assert json.loads(cap.out)["error"]["kind"] == "input"
    assert cap.err.startswith("error: --fail-if-slower takes a finite percentage >= 0")
    assert "Traceback" not in cap.err


def test_a_bug_exits_70_with_a_traceback_not_1(tmp_path, capsys, monkeypatch):
    import rooflab.model.compare as model_compare

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(model_compare, "compare_kernels", broken)
    b = _kernels_file(tmp_path / "b.json", [("gemm", 1.0)])
    rc = main(["compare", b, b, "--json", "--fail-if-slower", "5"])
    cap = capsys.readouterr()
    assert rc == exit_codes.EXIT_INTERNAL and rc != exit_codes.EXIT_REGRESSION
    # no half document for the archiver: the error document only
    assert json.loads(cap.out)["error"] == {
        "message": cap.err.rstrip().splitlines()[-1].removeprefix("error: "),
        "kind": "internal", "path": None, "line": None, "exit_code": 70,
        "detail": None}
    assert "Traceback" in cap.err and "RuntimeError: boom" in cap.err
    assert cap.err.rstrip().splitlines()[-1].startswith(
        "error: internal error in rooflab (RuntimeError)")


def test_user_errors_still_exit_2_without_a_traceback(tmp_path, capsys):
    b = _kernels_file(tmp_path / "b.json", [("gemm", 1.0)])
    assert main(["compare", b, str(tmp_path / "missing.json"), "--json"]) == 2
    assert main(["compare", b, b, "--bogus"]) == 2
    err = capsys.readouterr().err
    assert "missing.json: file not found" in err and "No such option: --bogus" in err
    assert "Traceback" not in err


def test_a_kernel_timed_in_one_run_only_is_noted_and_not_gated(tmp_path, capsys):
    # it matched, but without a before-time it has no change: the gate skipped it in silence
    b = _kernels_file(tmp_path / "b.json", [("gemm", 2.0), ("add", None), ("gone", 1.0),
                                            ("mul", None)])
    a = _kernels_file(tmp_path / "a.json", [("gemm", 1.0), ("add", 5.0), ("fresh", 1.0),
                                            ("mul", None)])
    assert main(["compare", b, a, "--json", "--fail-if-slower", "10"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["only_before"] == ["gone"] and doc["only_after"] == ["fresh"]
    assert doc["regressions"] == [] and doc["total_after_s"] == 1.0
    assert doc["notes"] == [
        "add: no time in the first run: no speed-up; left out of the totals and of "
        "--fail-if-slower",
        "mul: no time in either run: no speed-up; left out of the totals and of "
        "--fail-if-slower",
        # no samples in these files: the gate says it could not judge noise (review 11 F-I)
        "no timing samples in both runs: --fail-if-slower could not judge noise and gates "
        "each change as measured (time with rooflab.measure or `rooflab bench`, which keep "
        "the samples)"]


def test_no_note_per_kernel_when_nothing_is_timed():
    # two `rooflab ai`/`llm` files: one statement covers it, not a note per kernel
    k = Kernel("a", {"fp32": 1e9}, {"DRAM": 1e9})
    assert compare_kernels([k], [k]).notes == ()


def test_a_gate_over_untimed_kernels_says_which_run_lacks_the_time(tmp_path, capsys):
    b = _kernels_file(tmp_path / "b.json", [("gemm", 1.0)])
    a = _kernels_file(tmp_path / "a.json", [("gemm", None)])
    assert main(["compare", b, a, "--fail-if-slower", "5"]) == 2
    err = capsys.readouterr().err
    assert "(no time: gemm (after))" in err      # was "(before)" whichever side it was
    b2 = _kernels_file(tmp_path / "b2.json", [("gemm", None)])
    assert main(["compare", b2, a, "--fail-if-slower", "5"]) == 2
    assert "(no time: gemm (before and after))" in capsys.readouterr().err


def test_a_saved_json_is_a_baseline(tmp_path, capsys):
    # last night's `rooflab ncu --json` archived, tonight's CSV compared against it
    assert main(["ncu", _gpp("output4.csv"), "--json"]) == 0
    base = tmp_path / "baseline.json"
    base.write_text(capsys.readouterr().out)
    assert main(["compare", str(base), _gpp("output5.csv"), "--json"]) == 0
    from_json = capsys.readouterr().out
    assert main(["compare", _gpp("output4.csv"), _gpp("output5.csv"), "--json"]) == 0
    from_csv = capsys.readouterr().out
    # the same bytes as from the CSV, but for the generator block, which names each
    # command line (review 14d J)
    assert _without_generator(from_json) == _without_generator(from_csv)
    assert json.loads(from_json)["matches"][0]["speedup"] == pytest.approx(2.1381, rel=1e-4)


def test_the_table_in_a_log_keeps_one_line_per_kernel(tmp_path, capsys, monkeypatch):
    # piped to a CI log, rich wrapped the table at 80 columns: "old_add ->" / "new_add"
    monkeypatch.delenv("COLUMNS", raising=False)
    b = _kernels_file(tmp_path / "b.json", [("gemm_bf16_tile128x128_old", 2.0), ("x", 1.0)])
    a = _kernels_file(tmp_path / "a.json", [("gemm_bf16_tile128x128_new", 1.0), ("x", 1.0)])
    assert main(["compare", b, a, "--map",
                 "gemm_bf16_tile128x128_old=gemm_bf16_tile128x128_new"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "gemm_bf16" in line)
    assert "gemm_bf16_tile128x128_old -> gemm_bf16_tile128x128_new" in row
    assert "2 s" in row and "2.00x" in row and "\x1b" not in out
    assert max(len(line) for line in out.splitlines()) <= common.PIPE_WIDTH


def test_sets_serialise_sorted():
    # a set's iteration order follows the per-process string hash: 20 names are all but
    # never in sorted order by chance, so this fails without the sort
    from rooflab.files import dumps_json

    names = [f"flag{i:02d}" for i in range(20)]
    assert json.loads(dumps_json({"f": frozenset(names)})) == {"f": names}


def test_stdin_as_a_run_is_read(tmp_path, capsys, monkeypatch):
    # `rooflab ncu ... --json | rooflab compare base.json -` once said "-: file not found",
    # then that a run is read from a file only; `-` now reads standard input (review 12c I)
    import io
    import sys

    b = _kernels_file(tmp_path / "b.json", [("gemm", 1.0)])
    a = _kernels_file(tmp_path / "a.json", [("gemm", 0.5)])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(a).read_bytes())))
    assert main(["compare", b, "-", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(m["kernel"], m["speedup"]) for m in doc["matches"]] == [("gemm", 2.0)]  # 1 -> 0.5 s


def test_a_mistyped_map_target_is_an_error_not_an_ungated_kernel(tmp_path, capsys):
    # --map old_add=new_ad (typo): both kernels fell to only_before/only_after, and the gate
    # passed a 25 % slower kernel with exit 0
    b = _kernels_file(tmp_path / "b.json", [("gemm", 2.0), ("old_add", 0.4)])
    a = _kernels_file(tmp_path / "a.json", [("gemm", 2.0), ("new_add", 0.5)])
    assert main(["compare", b, a, "--map", "old_add=new_ad", "--fail-if-slower", "10",
                 "--json"]) == 2
    cap = capsys.readouterr()
    assert json.loads(cap.out)["error"]["kind"] == "input"
    assert cap.err == ("error: --map names 'new_ad', not a kernel of the "
                       "second run (it has: gemm, new_add)\n")
    assert main(["compare", b, a, "--map", "old_add=new_add", "--fail-if-slower", "10",
                 "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["regressions"] == ["new_add"]


def test_output_onto_an_input_is_refused_before_it_replaces_the_baseline(tmp_path, capsys,
                                                                          monkeypatch):
    # `-o baseline.json` (meant: cmp.json) replaced the baseline with the comparison, which
    # the next night's `compare baseline.json ...` then refused as "a comparison"
    base = _kernels_file(tmp_path / "baseline.json", [("gemm", 2.0)])
    tonight = _kernels_file(tmp_path / "tonight.json", [("gemm", 1.0)])
    kept = Path(base).read_text()
    monkeypatch.chdir(tmp_path)
    for out in (base, "baseline.json", "./baseline.json"):
        assert main(["compare", base, tonight, "-o", out]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: -o {out}: is also an input ({base})")
    assert Path(base).read_text() == kept
    assert main(["compare", "baseline.json", tonight, "-o", "cmp.json"]) == 0
    assert json.loads((tmp_path / "cmp.json").read_text())["speedup"] == 2.0


def _without_generator(text: str) -> str:
    doc = json.loads(text)
    assert doc.pop("generator")["command"][:2] == ["rooflab", "compare"]
    return json.dumps(doc)
