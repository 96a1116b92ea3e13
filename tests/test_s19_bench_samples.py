"""`rooflab bench --samples N` and `rooflab.measure(..., samples=N)`: at least N timing
samples, so a before/after pair reaches compare's U test (9 a side, compare_trust
MIN_TRUSTED_SAMPLES); without it a bench plan takes 5-8 and compare reads 'too few'."""

from __future__ import annotations

import json

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.files import write_json
from rooflab.probe.timer import QUICK, FakeClock, TimingPlan, bench


def test_with_min_samples_takes_n_samples_past_the_budget_on_a_fake_clock():
    # QUICK: an 80 ms budget of 11 ms calls (inner 1, >= its 10 ms sample) -> 8 samples
    clock = FakeClock(0.011)
    assert len(bench(clock.tick, QUICK, clock=clock).samples) == 8
    clock = FakeClock(0.011)
    assert len(bench(clock.tick, QUICK.with_min_samples(9), clock=clock).samples) == 9
    # max_samples raised to fit; a smaller N leaves the plan as it is
    capped = TimingPlan(max_samples=3).with_min_samples(12)
    assert (capped.min_samples, capped.max_samples, capped.budget_s) == (12, 12, 0.25)
    assert QUICK.with_min_samples(3) is QUICK and QUICK.with_min_samples(None) is QUICK


def test_bench_kernel_samples_9(capsys):
    pytest.importorskip("numba")
    code = main(["bench", "--kernel", "copy", "--size", "32KiB", "--quick", "--samples", "9",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["samples"] >= 9


def _zoo(path, roof_file, capsys) -> dict:
    code = main(["bench", "--quick", "--samples", "9", "--on", roof_file, "--only",
                 "gemm_fp64_64", "-o", str(path)])
    capsys.readouterr()
    assert code == 0
    return json.loads(path.read_text())


def test_a_before_after_pair_with_samples_9_gets_a_p_value(roof_file, tmp_path, capsys):
    before = _zoo(tmp_path / "before.json", roof_file, capsys)
    _zoo(tmp_path / "after.json", roof_file, capsys)
    (k,) = before["kernels"]
    assert len(k["samples"]) >= 9 and k["meta"]["plan"]["min_samples"] == 9
    assert main(["compare", str(tmp_path / "before.json"), str(tmp_path / "after.json"),
                 "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["matches"]
    assert m["noise_not_judged"] is None           # judged by the U test, not 'too few'
    assert 0 <= m["noise_p_value"] <= 1


def test_too_few_note_names_the_fix(tmp_path, capsys):
    def doc(samples):
        return {"kernels": [{"name": "k", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6},
                             "seconds": sorted(samples)[2], "samples": samples}]}
    write_json(tmp_path / "b.json", doc([1.0e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3]))
    write_json(tmp_path / "a.json", doc([1.5e-3, 1.6e-3, 1.7e-3, 1.8e-3, 1.9e-3]))
    main(["compare", str(tmp_path / "b.json"), str(tmp_path / "a.json"), "--json"])
    (m,) = json.loads(capsys.readouterr().out)["matches"]
    assert m["noise_not_judged"].startswith("5 and 5 samples, fewer than 9 a side")
    assert m["noise_not_judged"].endswith("re-run both with `rooflab bench --samples 9` "
                                          "(or rooflab.measure(..., samples=9))")


@pytest.mark.parametrize("args, message", [
    (["--kernel", "copy", "--samples", "0"], "error: --samples must be 1 or more"),
    (["--only", "copy", "--samples", "-1"], "error: --samples must be 1 or more"),
    (["--run", "k.py", "--samples", "9"], "error: --samples does not reach --run k.py"),
])
def test_bad_samples_is_one_error_line_exit_2(args, message, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_measure_samples():
    k = rooflab.measure(lambda: None, flop=1, bytes=8, plan="quick", samples=30)
    # the quick plan alone stops near 8 samples of 10 ms (its 80 ms budget)
    n = k.meta["samples_n"]
    assert n >= 30
    if "raw_samples" in k.meta:
        # both runs of 30 still sped up (a loaded machine, measure_trend.steady_timing): the
        # second's steady tail, topped up to the 30 asked; all 30 were taken twice first
        assert len(k.meta["raw_samples"]) >= 60 and n == 30
        assert "warm-up still running" in k.meta["warning"]
    assert len(k.samples) == n
    assert k.meta["plan"]["min_samples"] == 30

    @rooflab.measure(flop=1, bytes=8)
    def step():
        return None

    assert step.bench(plan="quick", samples=12).meta["samples_n"] >= 12
    for bad in (0, 2.5, True):
        with pytest.raises(InputError, match="samples must be a whole number of 1 or more"):
            rooflab.measure(lambda: None, flop=1, bytes=8, samples=bad)
    with pytest.raises(InputError, match="drop samples="):
        rooflab.measure(flop=1, samples=9)
