"""s21 x2 F1 (whatif --fuse): the fused kernel gets back only the share of its launches the
members' measured times held (retime_launch.launch_share), as every other what-if does. Two
1-call elementwise kernels on a roof of 100 GB/s with a 5 us launch floor: a (4 MB, work
floor 40 us) timed at 42 us holds 2 us of its 5 us launch (share 0.4); b (4 MB) timed at
60 us holds all 5 us. The fused kernel launches once, as the member with the most calls
(a: the first of two with 1 call); adding back the full 5 us instead of a's 2 us made the
prediction 3 us slower than the split the report uses. Since s27 v2-F1 the fused kernel
holds the most a member holds (b's 5 us here); the share held, not the full floor, is still
what comes back where every member holds less."""

from __future__ import annotations

import pytest

import rooflab.model.whatif as whatif
from rooflab.model import Ceiling, Kernel, Roof

ROOF = Roof("cpu", "measured", compute=(Ceiling(1e12, precision="fp32"),),
            memory=(Ceiling(1e11, level="DRAM"),), overhead_s=5e-6)
A = Kernel("a", {"fp32": 1e6}, {"DRAM": 4e6}, seconds=42e-6, meta={"op": "add"})
B = Kernel("b", {"fp32": 1e6}, {"DRAM": 4e6}, seconds=60e-6, meta={"op": "relu"})


def _fused(*members) -> Kernel:
    w = whatif.fuse(ROOF, list(members), [k.name for k in members])
    (k,) = w.after.kernels
    return k


def test_fused_kernel_adds_back_the_held_share_only():
    # s27 v2-F1: the fused kernel holds the most launch time a member holds (it was the
    # least of the most-called members', a's 2 us here, while b's time shows that this
    # file's times hold their launch: a fusion with a third member read under its own
    # launch floor). a and b at 42 and 43 us both hold less than the 5 us launch (2 and
    # 3 us, what their 40 us work floors leave): the fused kernel (4 MB, 40 us at
    # efficiency 80 / 80 us) gets back b's 3 us, not the full 5 us: 43 us, not 45
    b43 = B.with_(seconds=43e-6)
    k = _fused(A, b43)
    assert k.seconds == pytest.approx(40e-6 + 3e-6, rel=1e-9)
    assert k.meta["launch_share_held"] == pytest.approx(0.6, rel=1e-9)
    # with b at 60 us (5 us held, 55 us of work): 40 us x 95 / 80 + 5 us = 52.5 us
    assert _fused(A, B).seconds == pytest.approx(40e-6 * 95 / 80 + 5e-6, rel=1e-9)
