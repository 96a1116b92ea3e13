"""Third audit of rooflab.measure(): when a measurement calls itself noisy."""

from __future__ import annotations

import pytest

from rooflab.measuring import timed_kernel
from rooflab.probe.timer import FakeClock, TimingPlan

PLAN = TimingPlan(warmup_s=0.0, sample_s=0.01, budget_s=0.5, min_samples=5, max_samples=40)


def _kernel(costs):
    clock = FakeClock(lambda i: costs(i))
    return timed_kernel(clock.tick, name="gemm", flop={"fp64": 1.0}, bytes={"DRAM": 1.0},
                        provenance={}, plan=PLAN, clock=clock)


def test_one_held_up_call_among_many_is_not_noise():
    # `rooflab bench --json`: gemm_fp64_256 had 53 samples around 0.51-0.56 ms and one of
    # 13 ms, so meta["warning"] said "samples spread 2510% (> 5%) ... rerun or use --full"
    # (bench has no --full) while its IQR was 15 % and the `noisy` flag used IQR.
    # One slow call among 26 leaves the median and the quartiles where they were.
    k = _kernel(lambda i: 0.25 if i == 20 else 0.01)
    assert len(k.samples) >= 20 and k.meta["spread"] == pytest.approx(24.0)
    assert k.seconds == pytest.approx(0.01)
    assert "warning" not in k.meta


def test_samples_that_disagree_still_warn_with_advice_python_users_can_follow():
    k = _kernel(lambda i: 0.01 if i % 2 else 0.013)       # alternating 10 and 13 ms
    w = k.meta["warning"]
    assert w.startswith("gemm: timing samples vary (interquartile range ")
    assert "plan='full'" in w and "--full" not in w


def test_a_number_of_flop_on_fp64_arrays_says_it_counts_as_fp32():
    # `rooflab.measure(np.multiply, x, 2.0, out=y, flop=1e7, bytes=1.6e8)` on float64 x:
    # the kernel is recorded as fp32 work (the documented meaning of a bare number) and
    # judged against the fp32 ceiling, 236 vs 118 GFLOP/s here, with nothing said.
    import warnings

    import numpy as np

    import rooflab

    x = np.random.default_rng(0).random(1000)
    y = np.empty_like(x)
    with pytest.warns(UserWarning, match=r"counts as fp32 FLOP, but the array arguments "
                                         r"are fp64; pass flop=\{'fp64': 1000\.0\}"):
        k = rooflab.measure(np.multiply, x, 2.0, out=y, flop=1e3, bytes=1.6e4, plan="quick")
    assert dict(k.flop) == {"fp32": 1e3}                 # the documented meaning is kept
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # none of these warn
        # about precision; timing noise on a busy CI machine is another warning
        warnings.simplefilter("ignore", rooflab.measuring.TimingWarning)
        rooflab.measure(np.multiply, x, 2.0, out=y, flop={"fp64": 1e3}, bytes=1.6e4,
                        plan="quick")
        x32 = x.astype(np.float32)
        rooflab.measure(np.multiply, x32, 2.0, out=np.empty_like(x32), flop=1e3, bytes=8e3,
                        plan="quick")

    @rooflab.measure(flop=1e3, bytes=1.6e4)
    def step(a):
        return a * 2.0

    with pytest.warns(UserWarning, match="are fp64"):
        step(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", rooflab.measuring.TimingWarning)   # a 1 µs single run
        step(x)                                          # said once, at the first call
    # both calls ran and were kept as samples; .calls may count one where a loaded machine
    # made the first (warning) call slow enough to be left out as a warm-up (CI, s37)
    assert len(step.runs) == 2


def test_bench_on_a_missing_gpu_names_the_cli_flag(tmp_path, capsys):
    # `rooflab bench --only gemm --device cuda:0 --on profile.json` on a CPU-only machine
    # said "use the CPU (device='cpu')": Python keyword syntax on the command line
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible here")
    from rooflab.cli.main import main

    assert main(["bench", "--only", "gemm_fp64_64", "--device", "cuda:0", "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "no CUDA device is visible for 'cuda:0'" in err and "--device cpu" in err
