"""Small output fixes found by the docs audit: each pinned by its numbers."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose_evidence import evidence


def _latency_point(overhead_s):
    # 1 GFLOP fp32 over 10 MB in 1 s on 1 TFLOP/s / 100 GB/s: AI 100, roof 1 TFLOP/s,
    # achieved 1 GFLOP/s = 0.1 % of it -> latency-bound
    roof = Roof("R", compute=(Ceiling(1e12, precision="fp32"),),
                memory=(Ceiling(1e11, level="DRAM"),), overhead_s=overhead_s)
    (p,) = analyze(roof, [Kernel("k", {"fp32": 1e9}, {"DRAM": 1e7}, seconds=1.0)]).points
    assert p.bound == "latency"
    return p


def test_latency_evidence_without_a_launch_floor_says_so_not_a_dash():
    text = evidence(_latency_point(None))
    assert "floor -" not in text and "no launch floor is known" in text
    assert "the launch floor 5 us does not explain it" in evidence(_latency_point(5e-6))


def test_llm_says_what_it_wrote(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "-o", str(out)]) == 0
    # stderr, as every verb (s22 r3 F7)
    assert capsys.readouterr().err.rstrip().endswith(f"wrote {out}") and out.exists()
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--json", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err


def test_moving_from_a_roof_without_a_launch_floor_does_not_count_launches_twice():
    # rocprof-compute's roofline.csv has no launch floor: a measured 40 us holds its launch.
    # The target is 2x faster with a 5 us launch floor: work 10 us -> 5 us at the same 25 %
    # efficiency = 20 us, above the 5 us floor (not 5 + 20 = 25 us).
    from rooflab.model.whatif import move_hardware

    def roof(scale, overhead_s):
        return Roof(f"x{scale}", compute=(Ceiling(1e12 * scale, precision="fp16"),),
                    memory=(Ceiling(1e11 * scale, level="DRAM"),), overhead_s=overhead_s)

    k = Kernel("k", {"fp16": 1e6}, {"DRAM": 1e6}, seconds=40e-6)   # floor 1e6 / 1e11 = 10 us
    w = move_hardware(roof(1, None), [k], roof(2, 5e-6))
    (new,) = [n for _, n in w.moves]
    assert new.seconds == pytest.approx(20e-6)
    assert "bounds each prediction from below" in w.assumption
    # a 4 us kernel (mostly launch) on the same hardware with a 5 us floor: 5 us, not 9 us
    tiny = Kernel("t", {"fp16": 5e4}, {"DRAM": 5e4}, seconds=4e-6)  # floor 0.5 us
    (new,) = [n for _, n in move_hardware(roof(1, None), [tiny], roof(1, 5e-6)).moves]
    assert new.seconds == pytest.approx(5e-6)
    # a source roof with a launch floor keeps the additive model: 5 us + 5 us of work
    k2 = Kernel("k2", {"fp16": 1e6}, {"DRAM": 1e6}, seconds=15e-6)  # 5 us launch + 10 us
    (new,) = [n for _, n in move_hardware(roof(1, 5e-6), [k2], roof(2, 5e-6)).moves]
    assert new.seconds == pytest.approx(5e-6 + 5e-6)


def test_a_roofline_csv_without_l2bw_given_as_kernels_says_pass_it_as_the_roof(tmp_path, capsys):
    # one header rule everywhere: any bandwidth column makes it rocprof-compute's roofline.csv
    f = tmp_path / "roofline.csv"
    f.write_text("device,HBMBw,FP32Flops\n0,4000,80000\n")
    assert main(["report", str(f)]) == 2
    err = capsys.readouterr().err
    assert "roofline.csv" in err and "--on" in err and "missing column" not in err
