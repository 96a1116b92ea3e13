"""Small output fixes found by the docs audit: each pinned by its numbers."""

from __future__ import annotations

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import evidence


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
    assert capsys.readouterr().out.rstrip().endswith(f"wrote {out}") and out.exists()
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--json", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err
