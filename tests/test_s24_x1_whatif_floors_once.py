"""`rooflab whatif` at 10k-100k kernels (s24 x1): each kernel's floor built a whole
one-kernel Analysis (retime._floor), and move_floors / WhatIf.floors recomputed every
kernel's floors for the JSON, the totals and the table: 13 analyses per kernel, 2,000
kernels 13 s, 100,000 past 195 s. The floors are now worked out once per what-if, straight
off the roof's ceilings (model/work_floor.py), to the same float. Counted placements, not
timings; the floors against hand calculations and against analyze() itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_inproc import run_cli

from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model import analysis as analysis_mod

N = 200
A100 = "NVIDIA A100 80GB SXM"   # DRAM 2.039 TB/s, fp32 vector 19.5 TFLOP/s (catalog)


def _csv(path: Path, n: int = N) -> str:
    # k000: 1 GFLOP fp32 over 100 MB; k001: 2 GFLOP ...: the first ones memory-bound
    rows = ["name,flop,bytes,seconds,precision"]
    rows += [f"k{i:03d},{1e9 * (i + 1):g},{1e8:g},{1e-3 * (i + 1):g},fp32" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _placements(monkeypatch, *argv: str) -> tuple[int, object]:
    """(analyze_point calls, the run) of `rooflab ARGV` in this process."""
    seen = [0]
    real = analysis_mod.analyze_point

    def counted(*args, **kwargs):
        seen[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis_mod, "analyze_point", counted)
    done = run_cli(*argv)
    monkeypatch.setattr(analysis_mod, "analyze_point", real)
    return seen[0], done


@pytest.mark.parametrize("json_out", [True, False])
def test_whatif_places_each_kernel_a_few_times_not_a_dozen(tmp_path, monkeypatch, json_out):
    path = _csv(tmp_path / "k.csv")
    argv = ["whatif", path, "--on", A100, "--precision", "fp16", *(["--json"] if json_out else [])]
    placed, done = _placements(monkeypatch, *argv)
    assert done.returncode == 0, done.stderr
    # the before and after analyses, one placement each per kernel (400): was 2,200 (11
    # per kernel) with --json and 3,000 (15) for the table
    assert placed <= 3 * N, placed


def test_whatif_floors_match_hand_calculation(tmp_path):
    done = run_cli("whatif", _csv(tmp_path / "k.csv"), "--on", A100, "--precision", "fp16",
                   "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    row = next(r for r in doc["moves"] if r["kernel"] == "k000")
    # before: max(1e9 / 19.5e12, 1e8 / 2.039e12) = 51.28 us (compute: fp32 vector)
    assert row["before_work_floor_s"] == pytest.approx(1e9 / 19.5e12, rel=1e-12)
    # after: fp16 halves the bytes, 5e7 / 2.039e12 = 24.52 us (memory-bound on either fp16
    # ceiling); one launch of 5 us under either floor adds nothing to with_launches
    assert row["after_work_floor_s"] == pytest.approx(5e7 / 2.039e12, rel=1e-12)
    assert row["after_with_launches_s"] == row["after_work_floor_s"]
    # the older key, now the with-launches floor: 51.3 us of work over one 5 us launch
    assert row["before_floor_s"] == row["before_with_launches_s"] == row["before_work_floor_s"]
    # the totals sum the same per-kernel floors the rows give
    assert doc["total_before_work_floor_s"] == pytest.approx(
        sum(r["before_work_floor_s"] for r in doc["moves"]), rel=1e-12)


def _roof(**extra) -> Roof:
    memory = [Ceiling(2.0e12, level="DRAM", provenance="nominal"),
              Ceiling(6.0e12, level="L2", provenance="nominal")]
    compute = [Ceiling(19.5e12, precision="fp32", unit="vector", provenance="nominal"),
               Ceiling(312e12, precision="fp16", unit="tensor", provenance="nominal")]
    return Roof(name="test gpu", compute=compute, memory=memory, overhead_s=5e-6, **extra)


KERNELS = [
    Kernel("dram only", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-3),
    # L2 binds (6 TB/s but 20x the bytes): the lower attainable, not the first level
    Kernel("two levels", flop={"fp32": 1e10}, bytes={"DRAM": 1e8, "L2": 2e9}),
    Kernel("mixed", flop={"fp16": 9e9, "fp32": 1e9}, bytes={"DRAM": 1e7}, unit="tensor"),
    Kernel("copy", flop=0, bytes={"DRAM": 1e9}, seconds=2e-3),
    Kernel("no dram bytes", flop={"fp32": 1e9}, bytes={"DRAM": 0.0, "L2": 1e8}),
    Kernel("a tie", flop={"fp32": 1e9}, bytes={"DRAM": 1e8, "L2": 3e8}),
]


@pytest.mark.parametrize("k", KERNELS, ids=lambda k: k.name)
def test_work_floor_is_analyzes_floor(k):
    from rooflab.model.work_floor import work_floor

    roof = _roof()
    points = analyze(roof, [k.with_(seconds=None, samples=())]).primary()
    assert work_floor(roof, k) == points[0].floor_s            # the same float, not approx
    assert work_floor(roof, k, {}) == points[0].floor_s


def test_work_floor_binding_level_by_hand():
    from rooflab.model.work_floor import work_floor

    # DRAM 1e8 / 2e12 = 50 us, L2 6e9 / 6e12 = 1 ms, compute 1e9 / 19.5e12 = 51.3 us: L2
    # binds (attains 1 TFLOP/s to DRAM's 19.5), though DRAM is listed first
    k = Kernel("l2 bound", flop={"fp32": 1e9}, bytes={"DRAM": 1e8, "L2": 6e9})
    assert work_floor(_roof(), k) == pytest.approx(6e9 / 6e12, rel=1e-12)
    # mixed: 9 GFLOP at fp16 tensor + 1 at fp32 vector, weighted P = 10e9 / (9e9 / 312e12
    # + 1e9 / 19.5e12) = 124.8 TFLOP/s; 10e9 / 124.8e12 = 80.1 us over DRAM's 5 us
    assert work_floor(_roof(), KERNELS[2]) == pytest.approx(9e9 / 312e12 + 1e9 / 19.5e12,
                                                            rel=1e-12)


def test_work_floor_missing_level_says_what_analyze_said():
    from rooflab.model.work_floor import floor_s, work_floor

    k = Kernel("l1 only", flop={"fp32": 1e9}, bytes={"L1": 1e8})
    with pytest.raises(InputError, match="kernel 'l1 only' has no bytes at a level roof "
                                         "'test gpu' has \\(it has: DRAM, L2\\)"):
        work_floor(_roof(), k)
    assert floor_s(_roof(), k) is None


def test_whatif_floors_once_per_whatif(tmp_path):
    from rooflab import load_kernels, load_roof
    from rooflab.model import work_floor as work_floor_mod
    from rooflab.model.whatif_floors import describe, move_floors, total_floors
    from rooflab.model.whatif_precision import change_precision

    kernels = load_kernels(_csv(tmp_path / "k.csv", 20))
    w = change_precision(load_roof(A100), kernels, "fp16")
    calls = [0]
    real = work_floor_mod.work_floor

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    work_floor_mod.work_floor, saved = counted, work_floor_mod.work_floor
    try:
        describe(w), move_floors(w), total_floors(w), w.total_floors
        first = calls[0]
        describe(w), move_floors(w), total_floors(w), w.total_floors
    finally:
        work_floor_mod.work_floor = saved
    assert first == 2 * 20 and calls[0] == first   # before and after, once each
    # the older floor (WhatIf.floors, the notebook's): work + one 5 us launch
    assert w.floors[0][0] == pytest.approx(1e9 / 19.5e12 + 5e-6, rel=1e-12)
