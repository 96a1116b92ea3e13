"""whatif on n kernels asked Analysis.primary() (a pass over every point) three times per
kernel through retime._primary: n x n, 10k kernels >43 s of CPU (review s23 r5 F6).
Counted passes of placement.primary_points, not timings."""

from __future__ import annotations

from pathlib import Path

from rooflab.model import analysis as analysis_mod


def _csv(path: Path, n: int) -> str:
    rows = ["name,flop,bytes,seconds,precision"]
    rows += [f"k{i:03d},{1e9 * (i + 1):g},{1e8:g},{1e-3 * (i + 1):g},fp32" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _passes(tmp_path, monkeypatch, n: int) -> int:
    from rooflab.cli.inputs import load_inputs
    from rooflab.cli.whatif import run_whatif

    inputs = load_inputs([_csv(tmp_path / f"k{n}.csv", n)], ["A100"])
    seen = []
    real = analysis_mod.primary_points
    monkeypatch.setattr(analysis_mod, "primary_points",
                        lambda pts: seen.append(len(pts := tuple(pts))) or real(pts))
    run_whatif(inputs.roof, inputs.kernels, precision="fp16")
    # passes over the whole file's points (the per-kernel floors analyze one kernel each)
    return sum(1 for size in seen if size >= n)


def test_whatif_reads_each_analysis_primary_points_once(tmp_path, monkeypatch):
    small, big = _passes(tmp_path, monkeypatch, 20), _passes(tmp_path, monkeypatch, 80)
    assert small == big <= 4   # was 3 per kernel: 61 and 241
