"""`rooflab compare before.json after.json --on h100-sxm -o cmp.png`: no "rename the
kernels" warning (compare pairs kernels by their shared names), and a point drawn above
its roof is named on stderr, as `rooflab plot` names it (review s18 r5 F5)."""

from __future__ import annotations

import json


def _write(path, seconds):
    # hot: 3.35 GFLOP over 14.4 MB (AI 233, right of the H100's fp32 ridge 20), cold: AI 1
    path.write_text(json.dumps({"kernels": [
        {"name": "hot", "flop": {"fp32": 3.35e9}, "bytes": {"DRAM": 14.4e6},
         "seconds": seconds},
        {"name": "cold", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}, "seconds": 1e-3}]}))
    return str(path)


def test_compare_chart_names_above_roof_point_and_keeps_shared_names(tmp_path, capsys):
    from rooflab.cli.main import main

    before = _write(tmp_path / "before.json", 1e-4)     # 33.5 TFLOP/s: 50 % of 67
    after = _write(tmp_path / "after.json", 4.1875e-5)  # 80 TFLOP/s: 119 % of 67
    capsys.readouterr()
    assert main(["compare", before, after, "--on", "h100-sxm",
                 "-o", str(tmp_path / "cmp.png")]) == 0
    err = capsys.readouterr().err
    assert "rename the kernels" not in err
    assert "kernel names in more than one file" not in err
    line = next(ln for ln in err.splitlines() if "above the roof" in ln)
    # 3.35e9 / 4.1875e-5 s = 80.0 TFLOP/s over the fp32 vector 67 TFLOP/s: 119 %
    assert line.startswith("warning: 1 point(s) above the roof that judges them: hot (after")
    assert "119 % of fp32 vector 67 TFLOP/s" in line
    assert "cold" not in line
