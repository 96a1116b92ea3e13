"""Review s20 r2 F4 (and docs/gpu.md's "as on the CPU"): the GPU probe's measured ceilings
and the comm probe's light per-rank roof warned on (max - min) / median > 5 %, a test
the CPU probe dropped because one disturbed sample among many makes it large. Both use
the CPU's rule now, probe.stats.rates_warning. Pure functions: no GPU needed."""

from __future__ import annotations

from rooflab.probe.comm.device import _ceiling
from rooflab.probe.gpu.context import measured_ceiling
from rooflab.probe.stats import rates, rates_warning, summarize
from rooflab.probe.timer import Timing

WORK = 2.0 * 256 ** 3          # an fp32 256^3 matmul: 33.55 MFLOP


def _timing(seconds):
    return Timing(samples=tuple(seconds), inner=1, stats=summarize(seconds))


# r2's case: 99 calls of 1.0 ms and one of 1.2 ms. (max - min) / median of the rates is
# (1/1.0 - 1/1.2) / (1/1.0) = 16.7 % > 5 %: it warned; IQR 0 and median = best: it does not
ONE_SLOW = [1.0e-3] * 99 + [1.2e-3]
# a scattered run: calls of 1.0, 1.1, 1.2, 1.3 ms in turn: the median rate 10.6 % below the
# best, the interquartile range 14.5 % of the median: the CPU's rule warns
SCATTER = [1.0e-3, 1.1e-3, 1.2e-3, 1.3e-3] * 5


def test_gpu_ceiling_ignores_one_slow_call():
    c = measured_ceiling(WORK, _timing(ONE_SLOW), method="m", source="s", precision="fp32",
                         unit="vector")
    assert c.value == WORK / 1.0e-3
    assert c.warnings == ()


def test_gpu_ceiling_warns_as_the_cpu_probe_does():
    c = measured_ceiling(WORK, _timing(SCATTER), method="m", source="s", precision="fp32",
                         unit="vector")
    expected = rates_warning("fp32 vector", rates(WORK, SCATTER))
    assert expected is not None and "samples vary" in expected
    assert c.warnings == (expected,)
    st = summarize(rates(WORK, SCATTER))
    assert 1 - st.median / st.maximum > 0.05


def test_comm_light_roof_uses_the_same_rule():
    quiet = _ceiling(WORK, _timing(ONE_SLOW), "fp32 matmul 256x256x256 (torch): x",
                     precision="fp32", unit="vector")
    assert quiet.warnings == ()
    noisy = _ceiling(WORK, _timing(SCATTER), "fp32 matmul 256x256x256 (torch): x",
                     precision="fp32", unit="vector")
    assert noisy.warnings == (rates_warning("fp32 matmul 256x256x256 (torch)",
                                            rates(WORK, SCATTER)),)
