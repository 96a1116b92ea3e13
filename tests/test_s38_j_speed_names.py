"""Session 38, helper J: a mixed-precision kernel's chart points out of the joint analysis,
the weighted-ceiling words built once per mix, `rooflab --version` before typer loads, and
driver names that end in 'PCIe' for cards whose catalog name gives no board."""

from __future__ import annotations

import subprocess
import sys

from rooflab.hardware.catalog import lookup_roof, match_device_name
from rooflab.model.kernel import Kernel
from rooflab.report.chart_batch import _alone, _batched


def _gemm(name: str, scale: float) -> Kernel:
    # 9 parts fp16 to 1 part fp32, timed: the fp32 part is the epilogue, on vector units
    return Kernel(name=name, flop={"fp16": 9e9 * scale, "fp32": 1e9 * scale},
                  bytes={"DRAM": 4e7 * scale}, seconds=1e-3 * scale, unit="tensor")


def test_mixed_kernels_come_out_of_the_joint_analysis():
    """T4: fp16 tensor 65 TFLOP/s, fp32 vector 8.1 TFLOP/s. 9e9 + 1e9 FLOP take
    9e9 / 65e12 + 1e9 / 8.1e12 = 138.46 + 123.46 = 261.92 us at peak, so the kernel is held
    to 1e10 / 261.92e-6 = 38.18 TFLOP/s. Each kernel's note names it, so the old code
    analysed every one alone; now _batched gives the same points and notes (its weighted
    note, then the datasheet note) without doing so. Two launches of one name still go
    alone (None)."""
    roof = lookup_roof("T4")
    kernels = [_gemm("g1", 1.0), _gemm("g2", 3.0)]
    got = _batched(roof, kernels, None)
    for k, batched in zip(kernels, got, strict=True):
        assert batched is not None, k.name
        notes: list[str] = []
        points, bounds = _alone(roof, k, None, notes)
        assert batched[1] == notes
        assert notes[0] == (f"{k.name}: held to a weighted 38.18 TFLOP/s: 90.0 % fp16 tensor "
                            f"(65 TFLOP/s) + 10.0 % fp32 vector (8.1 TFLOP/s)")
        assert notes[1].startswith("judged on datasheet peaks (NVIDIA T4)")
        assert [p.attainable_flop_per_s for p in batched[0]] == \
            [p.attainable_flop_per_s for p in points]
        assert abs(points[0].peak_flop_per_s / 38.18e12 - 1) < 1e-3
    # two launches named alike share one deduplicated note: whose it is cannot be told,
    # so each is analysed alone, as before
    assert _batched(roof, [_gemm("g", 1.0), _gemm("g", 2.0)], None) == [None, None]


def test_version_answers_before_typer_loads():
    """`rooflab --version` and `-V` alone print 'rooflab 0.1.0' and exit 0 without importing
    typer (and its pydantic): ~70 of the ~130 ms CPU it took (benchmarks/cli_startup.py)."""
    code = ("import sys; from rooflab.cli.main import main; "
            "rc = [main([a]) for a in ('--version', '-V')]; "
            "print(rc, sorted(m for m in ('typer', 'pydantic', 'click') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines() == ["rooflab 0.1.0", "rooflab 0.1.0", "[0, 0] []"]
    assert done.stderr == ""


def test_driver_names_with_pcie():
    """NVML's names with the board in them find that board; a 'PCIe' after a card whose
    catalog name gives no board (the L40S, T4, L4 and RTX 4090 are PCIe cards only) finds
    that card, as the typed 'l40s pcie' does (round 1); one the catalog has only as SXM
    (H800, V100) or in another size finds none."""
    want = {"NVIDIA H100 PCIe": "NVIDIA H100 PCIe",
            "NVIDIA A100-PCIE-40GB": "NVIDIA A100 40GB PCIe",
            "NVIDIA A100-PCIE-80GB": "NVIDIA A100 80GB PCIe",
            "NVIDIA L40S": "NVIDIA L40S",
            "Tesla T4": "NVIDIA T4",
            "NVIDIA L40S PCIe": "NVIDIA L40S",
            "NVIDIA T4 PCIe": "NVIDIA T4",
            "NVIDIA L4 PCIe": "NVIDIA L4",
            "NVIDIA GeForce RTX 4090 PCIe": "NVIDIA GeForce RTX 4090",
            "NVIDIA GeForce RTX 4090 24GB PCIe": "NVIDIA GeForce RTX 4090",
            "NVIDIA GeForce RTX 4090 48GB PCIe": None,
            "NVIDIA H800 PCIe": None,
            "Tesla V100-PCIE-16GB": None}
    got = {s: getattr(match_device_name(s), "name", None) for s in want}
    assert got == want
