"""s21 x2 F1 (whatif --fuse): the fused kernel gets back only the share of its launches the
members' measured times held (retime.held_launch_share), as every other what-if does. Two
1-call elementwise kernels on a roof of 100 GB/s with a 5 us launch floor: a (4 MB, work
floor 40 us) timed at 42 us holds 2 us of its 5 us launch (share 0.4); b (4 MB) timed at
60 us holds all 5 us. The fused kernel launches once, as the member with the most calls
(a: the first of two with 1 call); adding back the full 5 us instead of a's 2 us made the
prediction 3 us slower than the split the report uses."""

from __future__ import annotations

import pytest

import rooflab.model.whatif as whatif
from rooflab.model import Ceiling, Kernel, Roof

ROOF = Roof("cpu", "measured", compute=(Ceiling(1e12, precision="fp32"),),
            memory=(Ceiling(1e11, level="DRAM"),), overhead_s=5e-6)
A = Kernel("a", {"fp32": 1e6}, {"DRAM": 4e6}, seconds=42e-6, meta={"op": "add"})
B = Kernel("b", {"fp32": 1e6}, {"DRAM": 4e6}, seconds=60e-6, meta={"op": "relu"})


def _fused_seconds(monkeypatch=None, full=False) -> float:
    if full:
        monkeypatch.setattr(whatif, "held_launch_share", lambda before, k: 1.0)
    w = whatif.fuse(ROOF, [A, B], ["a", "b"])
    (k,) = w.after.kernels
    return k.seconds


def test_fused_kernel_adds_back_the_held_share_only(monkeypatch):
    held = _fused_seconds()
    full = _fused_seconds(monkeypatch, full=True)
    # the only difference: (1 - 0.4) x 5 us of launch not added back
    assert full - held == pytest.approx(3e-6, rel=1e-6)
