"""The everyday verbs start without numpy (session 36, helper E): model/roofline.py imported
it at module level for attainable()'s array path only, and every verb that places a point
imports roofline, so `rooflab llm`, `train`, `report` and `ai` paid numpy's import on each
call (~0.1 s CPU of 0.28-0.42 s: benchmarks/numpy_startup.py). Asserted by what a fresh
interpreter holds after the calls (sys.modules), not by timing; attainable() keeps its
numbers on both paths."""

from __future__ import annotations

import json

from fresh_modules import modules_after

from rooflab.model.roofline import attainable


def test_llm_train_report_ai_whatif_import_no_numpy(tmp_path):
    """One interpreter runs five verbs (one subprocess: the suite is shared); numpy is
    not among its modules afterwards (it was, through model.roofline, before)."""
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "triad", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 2.4e10},
         "seconds": 0.1}]}))
    calls = [["llm", "llama-2-7b", "--on", "H100"],
             ["train", "llama-2-7b", "--on", "H100", "--batch", "1", "--seq", "1024"],
             ["report", str(kernels), "--on", "T4"],
             ["whatif", str(kernels), "--on", "T4", "--precision", "fp16", "--json"],
             ["ai", "matmul", "64", "64", "64"]]
    code = "; ".join(f"assert main({c!r}) == 0, {c[0]!r}" for c in calls)
    mods = modules_after(f"from rooflab.cli.main import main; {code}")
    assert "rooflab.model.roofline" in mods      # the calls did place points
    assert "numpy" not in mods


def test_attainable_keeps_its_numbers_on_both_paths():
    """min(P, B x AI) with P = 10 FLOP/s, B = 2 B/s: AI 0.5 -> 1, AI 1000 -> 10; an int AI
    (the array path, numpy now imported there) gives the float 1.0 too; an array gives an
    array of the same numbers."""
    assert attainable(0.5, 10.0, 2.0) == 1.0
    assert attainable(1000.0, 10.0, 2.0) == 10.0
    got = attainable(1, 10.0, 2.0)
    assert got == 2.0 and type(got) is float
    arr = attainable([0.5, 1000.0], 10.0, 2.0)
    assert list(arr) == [1.0, 10.0]
