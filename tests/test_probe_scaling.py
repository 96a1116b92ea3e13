"""Thread scaling (`probe --threads 1,2,4,all`), affinity (`--cpus`) and the roof at N
threads (`hardware.profile.roof_at_threads`): recorded numbers and faked measurements,
plus one real quick scaling probe (slow)."""

from __future__ import annotations

import json
import os

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.profile import (
    MachineProfile,
    profile_to_dict,
    roof_at_threads,
    scaling_counts,
)
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.cpu import affinity as aff
from rooflab.probe.cpu import scaling
from rooflab.probe.cpu.runner import Rate


def rate(*samples: float) -> Rate:
    return Rate(samples=tuple(samples), reps=1, seconds=(1.0,) * len(samples))


def row(n: int, dram: float, fp64: float, l1: float | None = None) -> dict:
    r = {"threads": n, "DRAM": {"bytes_per_s": dram, "samples": [dram, 0.9 * dram],
                                "ws_bytes_per_thread": 2**28 / n},
         "fp64": {"flop_per_s": fp64, "samples": [fp64]},
         "fp32": {"flop_per_s": 2 * fp64, "samples": [2 * fp64, 1.9 * fp64]}}
    if l1:
        r["L1"] = {"bytes_per_s": l1, "samples": [l1], "ws_bytes_per_thread": 16384}
    return r


# A recorded-style sweep: DRAM 20 -> 36 -> 40 GB/s, fp64 50 -> 98 -> 190 GFLOP/s.
SCALING = {"counts": [1, 2, 4], "reference_threads": 4, "method": "m",
           "by_threads": {"1": row(1, 20e9, 50e9, 300e9), "2": row(2, 36e9, 98e9),
                          "4": row(4, 40e9, 190e9)}}


# --- parsing ---------------------------------------------------------------------------
def test_thread_counts_parse_and_resolve_all():
    assert aff.parse_thread_counts("4") == (4,)
    assert aff.parse_thread_counts("1, 2,4,ALL") == (1, 2, 4, "all")
    # 'all' is the CPUs available; duplicates go, ascending
    assert aff.resolve_counts((4, "all", 1, 2, 8), 8) == (1, 2, 4, 8)


@pytest.mark.parametrize("text", ["0", "1,x", "", "2.5", "-1"])
def test_bad_thread_counts_say_what_is_allowed(text):
    with pytest.raises(InputError, match="invalid value for '--threads': it takes thread "
                                         "counts and 'all'"):
        aff.parse_thread_counts(text)


def test_cpu_list_parse_and_format_round_trip():
    assert aff.parse_cpu_list("0-3,8") == (0, 1, 2, 3, 8)
    assert aff.parse_cpu_list("8,0-1,1") == (0, 1, 8)
    assert aff.format_cpu_list((0, 1, 2, 3, 8)) == "0-3,8"
    assert aff.format_cpu_list((5,)) == "5"
    for bad in ("3-1", "a", "0-", "1;2"):
        with pytest.raises(InputError, match="invalid value for '--cpus': it takes CPU numbers"):
            aff.parse_cpu_list(bad)


def test_unavailable_cpu_is_named_with_the_allowed_set():
    with pytest.raises(InputError) as e:
        aff.check_cpus((0, 8, 9), (0, 1, 2, 3))
    msg = str(e.value)
    assert "CPU 8-9 are not available" in msg and "0-3" in msg
    aff.check_cpus((1, 3), (0, 1, 2, 3))   # inside: no error
    with pytest.raises(InputError, match="Linux"):
        aff.check_cpus((0,), None)


def test_more_threads_than_cpus_is_refused():
    assert "--threads 4 is more than the 2 CPUs of --cpus 0-1" in aff.too_many_threads(4, (0, 1))
    assert "1 CPU of --cpus 3:" in aff.too_many_threads(2, (3,))


# --- the table and the saturation sentence ----------------------------------------------
def test_scaling_rows_per_thread_and_efficiency_by_hand():
    rows = scaling.scaling_rows(SCALING)
    assert [r.threads for r in rows] == [1, 2, 4]
    four = rows[-1]
    assert four.dram_per_thread == pytest.approx(10e9)           # 40 / 4
    assert four.fp64_per_thread == pytest.approx(47.5e9)         # 190 / 4
    assert four.efficiency == pytest.approx(0.95)                # 47.5 / 50
    assert rows[1].efficiency == pytest.approx(0.98)             # 49 / 50
    assert rows[0].l1 == 300e9 and rows[1].l1 is None and four.fp32 == 380e9


def quiet(scaling_extras: dict) -> dict:
    """The same rows with each DRAM figure's samples agreeing (row() gives them a 10 %
    spread, which flags them)."""
    by = {k: {**r, "DRAM": {**r["DRAM"], "samples": [r["DRAM"]["bytes_per_s"]] * 2}}
          for k, r in scaling_extras["by_threads"].items()}
    return {**scaling_extras, "by_threads": by}


def test_dram_saturates_at_the_first_count_within_90_percent_of_the_best():
    n, text = scaling.dram_saturation(quiet(SCALING))
    assert n == 2     # 36 >= 0.9 x 40; 20 is not
    assert text.startswith("DRAM saturates at 2 threads (>= 90 % of its best, 40 GB/s)")
    assert "may still add" not in text
    climbing = quiet({"by_threads": {"1": row(1, 10e9, 1e9), "2": row(2, 20e9, 2e9)}})
    n, text = scaling.dram_saturation(climbing)
    assert n == 2 and "most threads measured" in text
    assert scaling.dram_saturation({"by_threads": {"1": row(1, 10e9, 1e9)}}) is None


def test_noisy_or_uncalibrated_figures_are_flagged():
    r = {"DRAM": {"bytes_per_s": 1e10, "samples": [1e10, 1e10, 1e10]},
         "fp64": {"flop_per_s": 1e10, "samples": [1e10, 1e10], "calibrated": False},
         "L1": {"bytes_per_s": 1e11, "samples": [1e11, 0.5e11, 0.5e11, 0.5e11]}}
    assert scaling.flagged(r) == {"fp64", "L1"}   # L1's median is 50 % below its best
    # the full run's row: a ceiling's own warnings (an inversion, say) flag it too
    r = {"L1": {"bytes_per_s": 1e7, "samples": [1e7, 1e7], "warnings": ["L1 slower than DRAM"]}}
    assert scaling.flagged(r) == {"L1"}


# --- measurement wiring, with the kernels faked -----------------------------------------
def test_extra_counts_measure_dram_at_the_same_total_set(monkeypatch):
    pytest.importorskip("numba")
    seen = []

    def stream(kernel, ws, team, plan, clock=None, pool=None):
        seen.append((kernel.name, ws, team.threads, plan.budget_s))
        return rate(1e10, 2e10), 64

    class FakeMeasured:
        def __init__(self, r):
            self.rate = r

    monkeypatch.setattr(scaling.bw, "measure_stream", stream)
    monkeypatch.setattr(scaling, "fma_peak", lambda p, team, plan: FakeMeasured(rate(3e9)))
    ws = {"L1": 16384.0, "L2": 65536.0, "DRAM": 2.0**28}
    ref = {"threads": 2, "DRAM": {"bytes_per_s": 4e10}}
    out = scaling.measure_scaling((1, 2), ref, ws)
    # the full run's DRAM total (256 MiB/thread x 2) on one thread: 512 MiB per thread
    assert out["dram_ws_bytes_total"] == 2.0**29
    assert ("triad", 2.0**29, 1, 0.04) in seen            # quick plan: 0.04 s budget
    assert ("triad", 16384.0, 1, 0.04) in seen and ("triad", 65536.0, 1, 0.04) in seen
    one = out["by_threads"]["1"]
    assert one["DRAM"]["bytes_per_s"] == 2e10 and one["DRAM"]["median_bytes_per_s"] == 1.5e10
    assert one["DRAM"]["samples"] == [1e10, 2e10] and one["DRAM"]["spread"] == pytest.approx(
        (2e10 - 1e10) / 1.5e10)
    assert one["fp64"]["flop_per_s"] == 3e9
    assert out["by_threads"]["2"] is ref and list(out["by_threads"]) == ["1", "2"]
    # 20 GB/s is half of 40, but its samples (10 and 20 GB/s) are disturbed: no verdict
    assert out["dram_saturates_at"] is None


def test_reference_row_is_the_full_runs_ceilings():
    from rooflab.probe.cpu.flops import Measured

    dram = Ceiling(5e10, level="DRAM", provenance="measured", samples=(4e10, 5e10))
    peaks = {"fp64": Measured("fp64", "FMA", rate(1e11, 1.2e11))}
    r = scaling.reference_row(2, {"DRAM": dram, "L3": dram}, peaks, {"DRAM": 2.0**27})
    assert r["DRAM"]["bytes_per_s"] == 5e10 and r["DRAM"]["median_bytes_per_s"] == 4.5e10
    assert r["fp64"]["flop_per_s"] == 1.2e11 and "L3" not in r and "fp32" not in r


def _assembled(scaling_extras):
    """A profile assembled as the probe does, with a scaling record (cpu_probe_fakes)."""
    from cpu_probe_fakes import assembled_profile

    p = assembled_profile(1e11, 2e11)
    return MachineProfile(host=p.host, nominal=p.nominal, measured=p.measured,
                          extras=dict(p.extras) | {"scaling": scaling_extras})


def test_assemble_keeps_scaling_and_affinity(monkeypatch):
    """_assemble puts raw.scaling and raw.affinity in extras and the CPU list in host."""
    import cpu_probe_fakes

    from rooflab.probe.cpu import suite

    made = {}
    real = suite._Raw

    def raw_with(**kw):
        made["raw"] = r = real(**kw)
        r.scaling = SCALING
        r.affinity = {"cpus": "0-3", "cpu_list": [0, 1, 2, 3], "pinned": True,
                      "threading_layer": "omp", "method": "m"}
        return r

    monkeypatch.setattr(cpu_probe_fakes.suite, "_Raw", raw_with)
    p = cpu_probe_fakes.assembled_profile(1e11, 2e11)
    assert p.extras["scaling"] is SCALING and p.extras["affinity"]["pinned"] is True
    assert p.host["cpus"] == "0-3"
    plain = (monkeypatch.undo(), cpu_probe_fakes.assembled_profile(1e11, 2e11))[1]
    assert "scaling" not in plain.extras and "affinity" not in plain.extras  # as before


# --- the roof at N threads ----------------------------------------------------------------
def test_roof_at_one_thread_from_a_scaling_profile():
    d = profile_to_dict(_assembled(SCALING))
    roof = roof_at_threads(d, 1)
    assert roof.kind == "measured" and "(1 thread)" in roof.name
    assert roof.find_memory("DRAM").value == 20e9
    assert roof.find_memory("DRAM").samples == (20e9, 18e9)
    assert roof.find_memory("L1").value == 300e9 and roof.find_memory("L2") is None
    assert roof.find_compute("fp64").value == 50e9 and roof.find_compute("fp32").value == 100e9
    # every measured ceiling is the row's; the derived real-traffic DRAM is triad's x 4/3
    assert all(c.method.startswith("measured (1 thread)") for c in roof.memory + roof.compute
               if c.provenance == "measured")
    assert roof.find_memory("DRAM (real traffic)").value == pytest.approx(20e9 * 4 / 3)
    assert all(c.provenance == "measured" for c in roof.memory + roof.compute
               if c.level != "DRAM (real traffic)")
    # the ridge at one thread: 50 GFLOP/s / 20 GB/s = 2.5 FLOP/B
    assert roof.find_compute("fp64").value / roof.find_memory("DRAM").value == 2.5
    # the overhead floor is the measured roof's (one call, not per thread)
    assert roof.overhead_s == d["measured"]["overhead_s"]


def test_roof_at_the_reference_count_is_the_measured_roof():
    d = profile_to_dict(_assembled(SCALING))
    full = roof_at_threads(d, 4)
    assert full.find_memory("DRAM").value == 2e10   # the assembled roof's, not the row's 40
    assert scaling_counts(d) == [1, 2, 4]


def test_missing_count_names_the_counts_there_are():
    d = profile_to_dict(_assembled(SCALING))
    with pytest.raises(InputError, match=r"no roof for 8 threads \(thread counts in this "
                                         r"profile: 1, 2, 4\)"):
        roof_at_threads(d, 8, "me.json")


def test_a_one_count_profile_answers_for_its_own_count():
    from cpu_probe_fakes import assembled_profile

    d = profile_to_dict(assembled_profile(1e11, 2e11))   # probed with 1 thread
    assert roof_at_threads(d, 1).find_compute("fp64").value == 1e11
    with pytest.raises(InputError, match="thread counts in this profile: 1"):
        roof_at_threads(d, 2)


# --- the CLI ------------------------------------------------------------------------------
@pytest.fixture
def keep_affinity():
    """--cpus pins this process; put the mask back after the test."""
    before = tuple(sorted(os.sched_getaffinity(0)))
    yield before
    aff.pin(before)


@pytest.mark.parametrize("args,msg", [
    (["--threads", "1,x"], "invalid value for '--threads': it takes thread counts"),
    (["--cpus", "4096"], "CPU 4096 is not available to this process"),
    (["--cpus", "0", "--threads", "2"], "--threads 2 is more than the 1 CPU of --cpus 0"),
    (["--cpus", "0", "--comm"], "--cpus does not apply to --comm"),
    (["--cpus", "0", "--device", "torch-cpu"], "--cpus applies to the CPU probe only"),
])
def test_cli_bad_threads_and_cpus_are_one_line_errors(args, msg, capsys, keep_affinity):
    assert main(["probe", "-q", "--quick", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and msg in err and "Traceback" not in err
    assert tuple(sorted(os.sched_getaffinity(0))) == keep_affinity   # nothing pinned


def test_cli_prints_the_scaling_table_and_saturation(monkeypatch, capsys, tmp_path):
    pytest.importorskip("numba")
    import rooflab.cli.probe as verb

    got = {}

    def fake(dev, mode, counts, progress, cpus=None):
        got.update(counts=counts, cpus=cpus)
        return _assembled(SCALING)

    monkeypatch.setattr(verb, "run_probe", fake)
    monkeypatch.setattr(verb, "warn_if_busy", lambda *a: None)
    out = tmp_path / "me.json"
    assert main(["probe", "-q", "--quick", "--threads", "1,all", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    flat = " ".join(text.split())   # the console folds long lines
    assert got["counts"] == (1, "all")   # 'all' is resolved by probe_cpu (quota, numba)
    # every DRAM row's samples spread 10.5 % ("!"): no verdict from them (review 16a I)
    assert "thread scaling" in text and ("DRAM saturation: cannot tell (the DRAM rows at 1, "
                                         "2, 4 threads are disturbed (!)") in flat
    assert "DRAM saturates at" not in flat
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("4 "))
    # DRAM's samples 40 and 36 GB/s: their range is 10.5 % of the median, above 5 %: "!"
    assert line.split()[:8] == ["4", "40", "!", "10", "190", "47.5", "95", "%"]
    assert "!: its samples disagree by more than 5 %" in text
    saved = json.loads(out.read_text())
    assert saved["extras"]["scaling"]["counts"] == [1, 2, 4]


def test_pin_confines_every_thread_of_the_process(keep_affinity):
    """Real: after pin, numba's workers (started now or before) run on that CPU only."""
    pytest.importorskip("numba")
    import numpy as np

    from rooflab.probe.cpu import kernels as K
    from rooflab.probe.cpu.runner import Team

    one = keep_affinity[:1]
    aff.pin(one)
    rows = np.zeros((1, 1))
    with Team(1):
        K.par_run(K.ALU, rows, rows, rows, 0.0, 0, 0, 1, np.zeros(1), 1)
    tasks = os.listdir("/proc/self/task")
    assert tasks and all(os.sched_getaffinity(int(t)) == set(one) for t in tasks)


def test_probe_cpu_pins_while_it_measures_and_puts_the_mask_back(monkeypatch,
                                                                  keep_affinity):
    pytest.importorskip("numba")
    from rooflab.probe.cpu import suite

    seen = {}

    def fake(spec, counts, host, allowed, pinned, *rest):
        seen.update(mask=tuple(sorted(os.sched_getaffinity(0))), counts=counts, pinned=pinned)
        return "profile"

    monkeypatch.setattr(suite, "_probe", fake)
    one = keep_affinity[:1]
    assert suite.probe_cpu("quick", threads=(1, "all"), cpus=one) == "profile"
    # 'all' is the one CPU of --cpus, so the counts collapse to (1,)
    assert seen == {"mask": one, "counts": (1,), "pinned": one}
    assert tuple(sorted(os.sched_getaffinity(0))) == keep_affinity
    with pytest.raises(InputError, match="--threads 2 is more than the 1 CPU"):
        suite.probe_cpu("quick", threads=2, cpus=one)
    assert suite.probe_cpu("quick", threads=(2, 1)) == "profile"
    assert seen["counts"] == (1, 2) and seen["pinned"] is None


@pytest.mark.slow
def test_real_quick_scaling_probe(tmp_path, capsys, monkeypatch):
    """One real `probe --threads 1,2 --quick`, its timing plans cut to a few short samples
    and its sweeps coarse: what is checked is the scaling rows' structure and the roof they
    make, not the rates (60 CPU-s at the quick mode's own plans, session 33). The DRAM
    working set keeps its size rule (12x the LLC, 64 MiB at least)."""
    pytest.importorskip("numba")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    from dataclasses import replace

    from rooflab.probe.cpu import modes
    from rooflab.probe.timer import TimingPlan

    plan = TimingPlan(warmup_s=0.001, sample_s=0.001, budget_s=0.003, min_samples=2,
                      max_samples=3)
    monkeypatch.setitem(modes.MODES, "quick", replace(
        modes.MODES["quick"], plan=plan, peak_plan=plan, sweep_step=8.0, gemm_sizes=(64,),
        intensity_ks=(1, 16)))
    out = tmp_path / "me.json"
    assert main(["probe", "-q", "--quick", "--threads", "1,2", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "thread scaling" in text
    # a quiet machine gives the count, a busy one says it cannot tell (review 16a I)
    assert "DRAM saturates at" in text or "DRAM saturation: cannot tell" in text
    d = json.loads(out.read_text())
    sc = d["extras"]["scaling"]
    assert sc["counts"] == [1, 2] and sc["reference_threads"] == 2
    assert d["extras"]["threads"] == 2 and d["host"]["cpus"]
    assert d["extras"]["affinity"]["threading_layer"] in ("omp", "tbb", "workqueue")
    one, two = sc["by_threads"]["1"], sc["by_threads"]["2"]
    for r in (one, two):
        for key in ("DRAM", "fp64", "fp32"):
            assert r[key]["samples"] and r[key]["spread"] is not None
    # the reference row is the roof; the one-thread roof is the row
    dram = next(c for c in d["measured"]["memory"] if c["level"] == "DRAM")
    assert two["DRAM"]["bytes_per_s"] == dram["bytes_per_s"]
    roof1 = roof_at_threads(d, 1)
    assert roof1.find_memory("DRAM").value == one["DRAM"]["bytes_per_s"]
    # None: a DRAM row the verdict rests on was disturbed (the shared VM's load)
    assert sc["dram_saturates_at"] in (1, 2, None)
    # DRAM at one thread: the same 12x-LLC total set, on one thread
    assert one["DRAM"]["ws_bytes_per_thread"] == sc["dram_ws_bytes_total"]
    assert isinstance(roof1, Roof)
