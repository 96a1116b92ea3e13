"""The one H200 run of benchmarks/gpu_check.py (issue 4) keeps its table when one step
fails, and says in that table (printed last: the device tool returns the output's tail)
what failed and what the probe skipped.

Before: a stage error ("probe memory: sweep") or a skipped precision (fp8 unsupported) was
only in tracebacks logged before the table and in the JSON; checks() or table() raising on
an unexpected figure ended the script with a traceback and no table; a numpy or ctypes
number in the report stopped gpu_check.json from being written; nothing bounded a run
stuck inside this process.
"""

from __future__ import annotations

import ctypes
import json
from types import SimpleNamespace

import pytest
from gpu_check_script import load_gpu_check, tiny_cpu_sizes


def _run(gc, tmp_path, capsys, *extra):
    rc = gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli", *extra])
    return rc, capsys.readouterr().out.strip().splitlines()


def test_a_failed_stage_and_a_skipped_precision_are_rows_of_the_table(
        tmp_path, monkeypatch, capsys):
    """The sweep raises "sweep broke" and fp8's matmul "fp8 unsupported here": the table
    ends with [FAIL] stage failed: probe memory: sweep: RuntimeError: sweep broke, and the
    skip row names matmul_fp8_64 (the tiny size, n = 64) with its one-line reason; the rest
    of the probe (bf16, DRAM) is still measured."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import compute, memory

    gc = load_gpu_check("gpu_check_s37f_rows")
    tiny_cpu_sizes(monkeypatch)
    op = compute.matmul_op

    def no_fp8(torch, dev, precision, n):
        if precision == "fp8":
            raise RuntimeError("fp8 unsupported here\nsecond line of the message")
        return op(torch, dev, precision, n)

    def broken(ctx):
        raise RuntimeError("sweep broke")
    monkeypatch.setattr(compute, "matmul_op", no_fp8)
    monkeypatch.setattr(memory, "cache_sweep", broken)
    rc, out = _run(gc, tmp_path, capsys)
    assert rc == 1
    assert out[-1].startswith("total ")
    assert "[FAIL] stage failed: probe memory: sweep: RuntimeError: sweep broke" in out
    (skips,) = [ln for ln in out if ln.startswith("[info] skipped by the probe (")]
    assert "matmul_fp8_64: RuntimeError: fp8 unsupported here" in skips
    assert "second line" not in skips
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    rows = {c["name"]: c for c in report["checks"]}
    assert rows["stage failed: probe memory: sweep"]["status"] == "FAIL"
    precisions = {c["precision"] for c in report["profile"]["measured"]["compute"]}
    assert "bf16" in precisions and "fp8" not in precisions


def _run_raising(tmp_path, monkeypatch, capsys, step: str, error: Exception):
    """The dry run with gpu_check's `step` raising `error`: (exit code, output lines)."""
    pytest.importorskip("torch")
    gc = load_gpu_check(f"gpu_check_s37f_{step}")
    tiny_cpu_sizes(monkeypatch)

    def boom(*a, **k):
        raise error
    monkeypatch.setattr(gc, step, boom)
    return _run(gc, tmp_path, capsys)


def test_checks_that_raise_still_print_the_table(tmp_path, monkeypatch, capsys):
    """checks() raising KeyError('nominal_checks') on an unexpected profile: the table (its
    header, the ceilings) still comes, with the failure as its last row before the total."""
    rc, out = _run_raising(tmp_path, monkeypatch, capsys, "checks", KeyError("nominal_checks"))
    assert rc == 1
    assert out[-1].startswith("total ")
    assert "[FAIL] stage failed: checks: KeyError: 'nominal_checks'" in out[-3:]
    assert any(ln.startswith("== rooflab GPU check: PyTorch CPU device") for ln in out)
    assert any(ln.startswith("DRAM ") for ln in out)
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert "checks" in report["errors"] and report["profile"]["measured"]["memory"]


def test_a_table_that_raises_leaves_the_verdicts_last(tmp_path, monkeypatch, capsys):
    """table() raising ValueError('bad width'): the plain table lists every verdict (the
    H200 copy target reads n/a on the CPU device), then the table's failure, then the
    total."""
    rc, out = _run_raising(tmp_path, monkeypatch, capsys, "table", ValueError("bad width"))
    assert rc == 1
    assert out[-1].startswith("total ")
    assert out[-2] == "[FAIL] stage failed: table: ValueError: bad width"
    assert any(ln.startswith("[n/a ] copy >= 4.2 TB/s (read + write)") for ln in out)
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["checks"][-1]["name"] == "stage failed: table"


def test_the_report_holds_numbers_and_names_of_any_library_type(tmp_path):
    """numpy's int64 3 -> 3.0, a ctypes c_uint -> its text 'c_uint(7)', a torch dtype -> its
    name, nan -> null, a non-string key -> its text: gpu_check.json is still written."""
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    gc = load_gpu_check("gpu_check_s37f_json")
    gc._save(tmp_path, {"a": np.int64(3), "b": ctypes.c_uint(7), "c": torch.float16,
                        "d": float("nan"), "e": [np.float32(0.5), True, None], 4: "four"})
    doc = json.loads((tmp_path / "gpu_check.json").read_text())
    assert doc == {"a": 3.0, "b": "c_uint(7)", "c": "torch.float16", "d": None,
                   "e": [0.5, True, None], "4": "four"}


def test_a_run_stuck_in_this_process_dumps_its_stacks_and_exits(tmp_path, monkeypatch):
    """main arms faulthandler for HANG_EXIT_S = 250 s (past the 200 s the CLI runs are held
    to, within the device run's 4 min and 10 s of start-up) with exit=True, and disarms it
    on every return (here the TRITON_INTERPRET refusal, exit 2)."""
    gc = load_gpu_check("gpu_check_s37f_hang")
    calls = []
    monkeypatch.setattr(gc, "faulthandler", SimpleNamespace(
        dump_traceback_later=lambda s, exit=False, file=None: calls.append(("arm", s, exit)),
        cancel_dump_traceback_later=lambda: calls.append(("disarm",))))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert gc.main([str(tmp_path), "--device", "cuda"]) == 2
    assert calls == [("arm", 250.0, True), ("disarm",)]
    assert gc.TOTAL_BUDGET_S + 25 <= gc.HANG_EXIT_S <= 250
