"""`rooflab whatif --bytes-scale F`: the same FLOP over F x the bytes (more reuse), retimed as
the other what-ifs are, at the efficiency the kernel reaches now (seed 000 §5.3: tiling took
a conv from AI ~5 to 20+, "nearly 3x" faster).

Hand numbers. A roof of 14 TFLOP/s fp32 over 1 TB/s (ridge 14 FLOP/B), no launch floor.
conv2d_3x3: 1e9 FLOP over 2e8 B = AI 5, measured 400 us.
  floor before = max(1e9 / 14e12, 2e8 / 1e12) = max(71.4 us, 200 us) = 200 us
  efficiency   = 200 / 400 = 0.5
  bytes x 0.25 -> 5e7 B, AI 20 > ridge 14: compute-bound
  floor after  = max(71.43 us, 50 us) = 71.43 us -> 71.43 / 0.5 = 142.9 us, 2.8x ("nearly 3x")
On a 25 TFLOP/s roof (ridge 25) AI 20 stays memory-bound: max(40, 50) us / 0.5 = 100 us, 4x.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.whatif import scale_bytes


def _roof(peak: float) -> Roof:
    return Roof(f"ridge {peak / 1e12:g}", "measured",
                compute=(Ceiling(peak, precision="fp32", unit="vector"),),
                memory=(Ceiling(1e12, level="DRAM"),))


CONV = Kernel("conv2d_3x3", {"fp32": 1e9}, {"DRAM": 2e8}, seconds=400e-6,
              meta={"op": "conv"})
RELU = Kernel("relu", {"fp32": 1e7}, {"DRAM": 8e7}, seconds=100e-6)


def test_seed_conv_crosses_the_ridge():
    w = scale_bytes(_roof(14e12), [CONV, RELU], 0.25, names=["conv2d_3x3"])
    ((old, new),) = w.moves
    assert new.bytes == {"DRAM": 5e7} and new.flop == {"fp32": 1e9}
    assert new.seconds == pytest.approx(1e9 / 14e12 / 0.5)          # 142.86 us
    assert old.seconds / new.seconds == pytest.approx(2.8)
    (p,) = [p for p in w.after.points if p.kernel == "conv2d_3x3"]
    assert p.ai == pytest.approx(20) and p.bound == "compute"
    # relu untouched; total 500 us -> 242.86 us
    assert w.total_after_s == pytest.approx(100e-6 + 1e9 / 14e12 / 0.5)
    assert new.provenance["seconds"] == "derived"


def test_seed_conv_short_of_the_ridge_is_4x():
    w = scale_bytes(_roof(25e12), [CONV], 0.25)
    ((_, new),) = w.moves
    assert new.seconds == pytest.approx(100e-6)
    assert w.after.points[0].bound == "memory"


def test_weight_bytes_scale_with_the_bytes():
    k = Kernel("gemv", {"fp32": 1e9}, {"DRAM": 2e9}, seconds=4e-3,
               meta={"op": "gemv", "weight_bytes": 1.5e9})
    ((_, new),) = scale_bytes(_roof(14e12), [k], 0.5).moves
    assert new.meta["weight_bytes"] == pytest.approx(0.75e9)
    assert new.bytes == {"DRAM": 1e9}


@pytest.mark.parametrize("factor", [0.0, -0.25])
def test_factor_must_be_positive(factor):
    with pytest.raises(InputError, match="bytes scale must be > 0"):
        scale_bytes(_roof(14e12), [CONV], factor)


def test_cli_bytes_scale(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({
        "name": "ridge14", "kind": "measured",
        "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 14e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1e12}]}))
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"kernels": [
        {"name": "conv2d_3x3", "op": "conv", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 2e8},
         "seconds": 400e-6},
        {"name": "relu", "flop": {"fp32": 1e7}, "bytes": {"DRAM": 8e7}, "seconds": 100e-6}]}))
    args = ["whatif", str(kernels), "--on", str(roof), "--bytes-scale", "0.25",
            "--only", "conv2d_3x3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "conv2d_3x3" in line)
    assert "5 -> 20" in row and "2.80x" in row and "compute (was memory)" in row
    # the total counts both kernels (relu unchanged), the work floor conv2d_3x3 only
    assert "total (all 2 kernels, 1 of them unchanged): 500 us -> 243 us (2.06x)" in out
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["label"] == "bytes x 0.25"
    (row,) = d["moves"]
    assert row["kernel"] == "conv2d_3x3" and row["speedup"] == pytest.approx(2.8)
    # one change at a time
    assert main([*args, "--batch", "2"]) == 2
    assert "--bytes-scale" in capsys.readouterr().err
