"""A kernel named 'np_sum' or 'sum' is a read-only reduction (review r6 F3): held to the
real-traffic DRAM ceiling as 'reduce_sum' and the zoo's sum_fp64 are, not to the
STREAM-counted one (where np.sum read 117 % and was flagged below its floor).

The roof: triad at 24 B/element counted = 42.6 GB/s; the real-traffic ceiling is
42.6 x 32/24 = 56.8 GB/s. The kernel: 1e7 fp64 elements read once (8e7 B) in 1.6 ms =
50 GB/s: 117 % of the counted ceiling, 88 % of the real-traffic one."""

from __future__ import annotations

import pytest

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.opkind import kind_from_name
from rooflab.probe.cpu.dram_ceiling import real_traffic

N = 1.775e9


def _roof() -> Roof:
    dram = Ceiling(24 * N, level="DRAM", provenance="measured",
                   method="STREAM triad a[i] = b[i] + s*c[i] (numba); value = best sample")
    return Roof(name="measured", kind="measured", memory=(dram, real_traffic(dram, {})),
                compute=(Ceiling(1.18e11, precision="fp64", unit="vector",
                                 provenance="measured"),))


@pytest.mark.parametrize("name", ["np_sum", "sum", "nb_sum", "reduce_sum", "reduction_kernel"])
def test_a_sum_is_judged_on_the_real_traffic_ceiling(name):
    assert kind_from_name(name) == "reduction"
    k = Kernel(name, flop={"fp64": 1e7 - 1}, bytes={"DRAM": 8e7}, seconds=1.6e-3)
    (p,) = analyze(_roof(), [k]).points
    assert p.percent_of_roof == pytest.approx(100 * 5e10 / (32 * N))   # 88.0 %, was 117.3


def test_words_that_only_contain_sum_are_no_reduction():
    assert kind_from_name("cumsum") == "" and kind_from_name("checksum") == ""
    assert kind_from_name("gemm_sum") == "gemm"      # a matrix word still wins
