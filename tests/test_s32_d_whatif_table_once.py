"""The what-if table's binding points (display_whatif.move_points) looked up once per side
(s32 D): each move built the set of every binding point again, 2 x 10,000 sets of 10,000
ids, 50 s of the 10,000-kernel terminal report's CPU (200 million id() calls). The pairs
stay each kernel's own (review s28 R3 F8: three convs of one name)."""

from __future__ import annotations

from rooflab.model import Ceiling, Kernel, Roof, analysis
from rooflab.model.display_whatif import move_points
from rooflab.model.whatif import scale_bytes


def _roof() -> Roof:
    return Roof(name="test gpu", compute=[Ceiling(19.5e12, precision="fp32", unit="vector",
                                                  provenance="nominal")],
                memory=[Ceiling(2.0e12, level="DRAM", provenance="nominal")],
                overhead_s=5e-6)


def test_move_points_reads_each_sides_binding_points_once(monkeypatch):
    # three kernels of one name, AI 1, 10 and 100 FLOP/B; bytes x 0.5 doubles each AI
    kernels = [Kernel("conv", flop={"fp32": 1e9 * ai}, bytes={"DRAM": 1e9}, seconds=1e-2)
               for ai in (1, 10, 100)]
    w = scale_bytes(_roof(), kernels, 0.5)
    calls = [0]
    real = analysis.Analysis.primary

    def counted(self):
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(analysis.Analysis, "primary", counted)
    pairs = move_points(w)
    assert calls[0] == 2   # once before, once after (was once per move and side: 6)
    # each kernel its own point: AI 1 -> 2, 10 -> 20, 100 -> 200
    assert [(b.ai, a.ai) for b, a in pairs] == [(1, 2), (10, 20), (100, 200)]
