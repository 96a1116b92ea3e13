"""Second fresh-user audit: the JSON analysis carries what the tables call "achieved" for a
kernel without FLOP (bench's copy row shows GB/s; the JSON had only achieved FLOP/s = 0)."""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.schema import point_to_dict

ROOF = Roof("cpu", "measured",
            compute=(Ceiling(1.18e11, precision="fp64", unit="vector", provenance="measured"),),
            memory=(Ceiling(5.13e10, level="DRAM", provenance="measured"),))


def test_copy_achieved_bytes_per_s_in_json():
    # bench copy_fp64: 2 x 64 MiB moved (read + write) in 5.77 ms -> 23.26 GB/s
    copy = Kernel("copy_fp64", {"fp64": 0.0}, {"DRAM": 134217728.0}, 5.77e-3)
    (p,) = analyze(ROOF, [copy]).points
    d = point_to_dict(p)
    assert d["achieved_flop_per_s"] == 0.0
    assert d["achieved_bytes_per_s"] == pytest.approx(134217728.0 / 5.77e-3)
    assert d["achieved_bytes_per_s"] == pytest.approx(23.26e9, rel=1e-3)


def test_untimed_kernel_has_no_achieved_rate():
    (p,) = analyze(ROOF, [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e7})]).points
    assert point_to_dict(p)["achieved_bytes_per_s"] is None
