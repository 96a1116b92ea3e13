"""Session 9: an analysis document links each point to its kernel by position, and the
Python loader takes a pathlib.Path as well as a str."""

from __future__ import annotations

from pathlib import Path

from rooflab import load_kernels
from rooflab.hardware.resolve import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel
from rooflab.model.schema import analysis_to_dict

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "seeds"


def test_points_carry_their_kernels_index_when_names_repeat():
    small = Kernel("gemm", {"fp16": 2 * 256**3}, {"DRAM": 3 * 256**2 * 2}, seconds=1e-5)
    large = Kernel("gemm", {"fp16": 2 * 4096**3}, {"DRAM": 3 * 4096**2 * 2}, seconds=2e-3)
    doc = analysis_to_dict(analyze(load_roof("h100"), [small, large]))
    rows = {row["kernel_index"]: row for row in doc["analysis"]}
    assert sorted(rows) == [0, 1]
    # AI 2n^3 / (3 n^2 2 B) = n / 3: 85.3 for the small one, 1365 for the large one
    assert rows[0]["ai"] == 256 / 3 and rows[1]["ai"] == 4096 / 3


def test_unplaced_rows_carry_the_index_too():
    nowhere = Kernel("reduce", {"fp32": 1e6}, {"L2": 4e6}, seconds=1e-5)
    doc = analysis_to_dict(analyze(load_roof("h100"), [nowhere]))
    assert doc["unplaced"][0]["kernel_index"] == 0


def test_load_kernels_takes_a_path():
    assert load_kernels(EXAMPLES / "k.json") == load_kernels(str(EXAMPLES / "k.json"))
