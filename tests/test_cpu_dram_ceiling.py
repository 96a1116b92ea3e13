"""The CPU probe's DRAM ceiling and counter-measured bytes (review 16a A, K, L7).

Synthetic samples only: the probe's raw measurements are made up and assembled the way
`rooflab probe` assembles them (suite._assemble), as tests/cpu_probe_fakes.py does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rooflab.hardware.host import Caches, HostInfo
from rooflab.ingest.perf_stat import load_perf_stat
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.real_traffic import REAL_TRAFFIC
from rooflab.model.sanity import check_analysis
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu import suite
from rooflab.probe.cpu.dram_ceiling import dram_from_add, drop_below_dram, real_traffic
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Rate
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing

MIB = 2.0 ** 20
# Review 16a K (q.json, extras.stream.DRAM): triad's samples bimodal, best 42.57 GB/s over
# a median of 22.4; add (same 2 loads + 1 store) 54.4-56.1 GB/s, spread 3 %.
TRIAD = (22.41e9, 22.40e9, 22.36e9, 42.57e9, 22.38e9, 22.39e9)
ADD = (55.4e9, 56.1e9, 55.8e9, 55.9e9, 55.6e9, 56.0e9)
SUM = 59.8e9
METHOD = f"STREAM triad a[i] = b[i] + s*c[i] (numba); {bw.BYTE_MODEL}; value = best sample"


def _rate(samples) -> Rate:
    return Rate(samples=tuple(samples), reps=1, seconds=(1.0,) * len(samples))


def _ceiling(level: str, samples) -> Ceiling:
    """A sweep ceiling as suite._sweep makes it: best sample, the Rate's own warning."""
    r = _rate(samples)
    warn = r.warning(f"{level} bandwidth")
    return Ceiling(value=r.best, level=level, provenance="measured", source="probe",
                   method=METHOD, samples=r.samples, warnings=(warn,) if warn else ())


def _stream(add=ADD, total=SUM) -> dict:
    return {"DRAM": {"add": {"bytes_per_s": max(add), "samples": list(add),
                             "ws_bytes_per_thread": 2**28},
                     "sum": {"bytes_per_s": total, "samples": [total]}}}


def _profile(mem: dict, stream: dict):
    """A quick one-thread probe of a Zen 4 core with these memory ceilings and extras."""
    flat = _rate((3e10,) * 3)
    fma, fma32 = Measured("fp64", "FMA", flat), Measured("fp32", "FMA", _rate((6e10,) * 3))
    t = (1e-6,) * 3
    raw = suite._Raw(
        clock0=_rate((3e9,) * 3), clock_1t=_rate((3e9,) * 3),
        peaks={"fp64": fma, "fp32": fma32}, sweep_extras={}, mem_ceilings=mem,
        stream=stream, ws_intensity=1e6, intensity=(), gemm={"fp64": fma, "fp32": fma32},
        gemm_by_size={}, lowp=[], not_measured={},
        overhead={"call": Timing(samples=t, inner=1, stats=summarize(t))}, peak_end=fma,
        clock1=_rate((3e9,) * 3), notes=[])
    host = HostInfo(cpu_model="cpu", vendor="AuthenticAMD", family=25, model=17,
                    flags=frozenset({"avx2", "fma", "avx512f"}), cores=1, threads=1,
                    caches=Caches(32768, 2**20, 2**25), memory_bytes=2**34,
                    memory_available_bytes=2**33, hypervisor=None, os="Linux",
                    machine="x86_64")
    return suite._assemble(raw, get_mode("quick"), host, None, 1, 10.0)


# --- K: a disturbed triad gives way to a clean add of the same run -----------------

def test_disturbed_triad_gives_way_to_clean_add():
    triad = _ceiling("DRAM", TRIAD)
    assert triad.warnings                                  # triad's own flag fired
    chosen, note = dram_from_add(triad, _stream()["DRAM"])
    assert chosen.value == 56.1e9 and chosen.samples == ADD
    assert chosen.provenance == "measured" and not chosen.warnings
    assert chosen.method.startswith("STREAM add") and "in place of triad" in chosen.method
    assert "42.6 GB/s" in chosen.method and "22.4 GB/s" in chosen.method  # triad best, median
    assert "add's 56.1 GB/s instead of triad's 42.6 GB/s" in note


def test_triad_kept_when_clean_or_add_noisy_or_lower():
    clean = _ceiling("DRAM", (42.0e9, 42.3e9, 42.5e9, 42.6e9))
    assert dram_from_add(clean, _stream()["DRAM"]) == (clean, None)
    disturbed = _ceiling("DRAM", TRIAD)
    noisy_add = (30e9, 56.1e9, 40e9, 45e9)
    assert dram_from_add(disturbed, _stream(add=noisy_add)["DRAM"]) == (disturbed, None)
    low_add = (40.0e9, 40.1e9, 40.2e9)
    assert dram_from_add(disturbed, _stream(add=low_add)["DRAM"]) == (disturbed, None)


def test_probe_profile_takes_add_and_keeps_both_sample_sets():
    stream = _stream()
    prof = _profile({"DRAM": _ceiling("DRAM", TRIAD)}, stream)
    dram = prof.measured.find_memory("DRAM")
    assert dram.value == 56.1e9                            # old code: triad's 42.57e9
    assert "add's 56.1 GB/s instead of triad's 42.6 GB/s" in " ".join(prof.measured.notes)
    assert prof.extras["stream"]["DRAM"]["add"]["samples"] == list(ADD)
    # the triad-vs-add consistency note would now contradict what was done
    assert not any("rerun before trusting" in n for n in prof.measured.notes)


def test_end_of_probe_drift_note_names_the_ceiling_written():
    from rooflab.probe.cpu.flags import dram_drift_note

    note = dram_drift_note(42.57e9, 22.4e9, add=56.1e9)
    assert "the DRAM ceiling is add's 56.1 GB/s of the same run" in note
    assert "the sweep's 42.6 GB/s" in dram_drift_note(42.57e9, 22.4e9)


# --- A: the DRAM rate in real-traffic units ------------------------------------------

def test_real_traffic_is_the_largest_real_rate_of_the_runs_stream_kernels():
    # Moved with review 17a N1 (was: max(sum, triad x 32/24) = sum's 59.8 GB/s): add's
    # 56.1 GB/s counted is 56.1 x 4/3 = 74.8 GB/s real, the review's hand figure.
    # Review 19c N1: a rate must agree with the DRAM ceiling (at most 3/2 x + 10 % = 1.65x):
    # beside triad's 42.6 (limit 70.3 GB/s) add's 74.8 was read at another moment of a
    # disturbed run and is left out (the probe writes add's 56.1 as DRAM in that case,
    # dram_from_add, and then 74.8 agrees: 1.33x).
    triad = _ceiling("DRAM", (42.6e9,) * 4)
    real = real_traffic(triad, _stream()["DRAM"])
    # hand: triad 42.6 x 4/3 = 56.8, add 56.1 x 4/3 = 74.8, sum 59.8 x 1 GB/s
    assert real.level == REAL_TRAFFIC and real.provenance == "derived"
    assert real.value == pytest.approx(59.8e9)
    assert "56.8 GB/s" in real.method and "74.8 GB/s" in real.method
    assert "sum's 59.8 GB/s" in real.method
    assert "left out as disturbed: add 74.8 GB/s" in real.method
    assert "write-allocate" in real.method
    add = replace(triad, value=56.1e9, method="STREAM add a[i] = b[i] + c[i] (numba)")
    assert real_traffic(add, _stream()["DRAM"]).value == pytest.approx(56.1e9 * 4 / 3)
    no_add = real_traffic(triad, {"sum": {"bytes_per_s": 59.8e9}})
    assert no_add.value == pytest.approx(59.8e9)              # sum > triad's 56.8
    slow_sum = real_traffic(triad, {"sum": {"bytes_per_s": 50e9}})
    assert slow_sum.value == pytest.approx(42.6e9 * 32 / 24)   # 56.8 GB/s


def test_probe_profile_has_both_dram_ceilings():
    prof = _profile({"DRAM": _ceiling("DRAM", (42.6e9,) * 4)}, _stream())
    levels = [c.level for c in prof.measured.memory]
    assert levels == ["DRAM", REAL_TRAFFIC]                # old code: DRAM only
    assert prof.measured.find_memory("DRAM").value == 42.6e9


# The probe's own triad at its own speed, read through perf (review 16a A): 1.775e9
# elements in 1 s, one FMA each (2 FLOP); counted 24 B/element = 42.6 GB/s, the memory
# controller sees 32 (b, c and a's write-allocate read: 24 read, 8 written).
N = 1.775e9
PERF = f"""\
1000000000,ns,duration_time,1000000000,100.00,,
{N * 2 / 8:.0f},,fp_arith_inst_retired.512b_packed_double,1000000000,100.00,,
{24 * N / MIB:.4f},MiB,uncore_imc/cas_count_read/,1000000000,100.00,,
{8 * N / MIB:.4f},MiB,uncore_imc/cas_count_write/,1000000000,100.00,,
"""


def _roof(real: bool) -> Roof:
    mem = [Ceiling(24 * N, level="DRAM", provenance="measured", method=METHOD)]
    if real:
        mem.append(real_traffic(mem[0], {}))           # triad x 32/24 = 56.8 GB/s
    return Roof(name="zen4 measured", kind="measured", memory=tuple(mem),
                compute=(Ceiling(1.18e11, precision="fp64", unit="vector",
                                 provenance="measured"),))


def _perf_kernel(tmp_path=None) -> Kernel:
    """PERF as `rooflab perf` reads it (test_perf_reads_it_so checks the reader): counter
    bytes say "counted" (they said "measured" before model/provenance.py; too_fast below
    keeps the old word, which still reads as counter bytes)."""
    return Kernel("triad_atroof", flop={"fp64": 2 * N}, bytes={"DRAM": 32 * N},
                  seconds=1.0, provenance={"flop": "counted", "bytes": "counted",
                                           "seconds": "measured"})


def test_perf_reads_it_so(tmp_path):
    p = tmp_path / "triad_atroof.csv"
    p.write_text(PERF)
    (k,) = load_perf_stat(str(p)).kernels
    want = _perf_kernel()
    assert k.provenance == want.provenance               # what the judging keys on
    assert k.flop["fp64"] == pytest.approx(want.flop["fp64"])
    assert k.bytes["DRAM"] == pytest.approx(want.bytes["DRAM"], rel=1e-6)


def test_counter_bytes_are_judged_against_real_traffic(tmp_path):
    k = _perf_kernel(tmp_path)
    a = analyze(_roof(real=True), [k])
    (p,) = a.points
    # hand: AI 3.55e9 / 5.68e10 = 0.0625; attainable 0.0625 x 56.8e9 = 3.55 GFLOP/s
    assert p.ai == pytest.approx(0.0625, rel=1e-6)
    assert p.percent_of_roof == pytest.approx(100.0, rel=1e-4)   # old code: 133 %
    assert p.binding == REAL_TRAFFIC and p.level == "DRAM"
    assert any("measured by hardware counters" in n and "56.8 GB/s" in n for n in a.notes)
    assert not any(f.check == "above_roof" for f in check_analysis(a))


def test_hand_counts_stay_on_the_stream_counted_ceiling():
    k = Kernel("triad_hand", flop={"fp64": 2 * N}, bytes={"DRAM": 24 * N}, seconds=1.0)
    (p,) = analyze(_roof(real=True), [k]).points
    assert p.bytes_per_s == 24 * N and p.percent_of_roof == pytest.approx(100.0)


def test_sanity_names_write_allocate_on_a_roof_without_real_traffic(tmp_path):
    k = _perf_kernel(tmp_path)
    a = analyze(_roof(real=False), [k])
    assert a.points[0].percent_of_roof == pytest.approx(400 / 3, rel=1e-4)   # 133 %
    (f,) = [f for f in check_analysis(a) if f.level == "DRAM"]
    assert f.check == "write_allocate" and f.severity == "info"   # old code: above_roof
    assert ("counters include the write-allocate read the STREAM-counted roof leaves out"
            in f.message)
    assert "133 %" in f.message


def test_above_four_thirds_or_hand_counts_are_still_above_the_roof(tmp_path):
    hand = Kernel("triad_hand", flop={"fp64": 2 * N}, bytes={"DRAM": 32 * N}, seconds=1.0)
    fast = Kernel("too_fast", flop={"fp64": 2 * N}, bytes={"DRAM": 40 * N}, seconds=1.0,
                  provenance={"flop": "counted", "bytes": "measured",
                              "seconds": "measured"})
    found = check_analysis(analyze(_roof(real=False), [hand, fast]))
    checks = {(f.kernel, f.check) for f in found}
    assert {("triad_hand", "above_roof"), ("too_fast", "above_roof")} <= checks
    assert not any(c == "write_allocate" for _, c in checks)


# --- L7: a cache measured below DRAM is dropped -----------------------------------------

def test_cache_below_dram_is_dropped_naming_both_numbers():
    mem = {"L1": _ceiling("L1", (8.36e6,) * 3), "L2": _ceiling("L2", (1.2e11,) * 3),
           "DRAM": _ceiling("DRAM", (5.72e9,) * 3)}
    keep, notes, dropped = drop_below_dram(mem)
    assert set(keep) == {"L2", "DRAM"} and set(dropped) == {"L1"}
    (note,) = notes
    assert "8.36 MB/s" in note and "5.72 GB/s" in note and "L1" in note


def test_probe_profile_without_the_impossible_l1():
    mem = {"L1": _ceiling("L1", (8.36e6,) * 3), "DRAM": _ceiling("DRAM", (5.72e9,) * 3)}
    prof = _profile(mem, {})
    assert prof.measured.find_memory("L1") is None         # old code: written at 8.36 MB/s
    assert prof.extras["dropped_ceilings"]["L1"]["bytes_per_s"] == 8.36e6
    assert any("8.36 MB/s" in n and "5.72 GB/s" in n for n in prof.measured.notes)
    # a slow but possible cache stays (flagged by bw.flag_inversions only below 0.9x)
    ok = _profile({"L1": _ceiling("L1", (6e9,) * 3),
                   "DRAM": _ceiling("DRAM", (5.72e9,) * 3)}, {})
    assert ok.measured.find_memory("L1").value == 6e9


def test_add_a_hair_above_a_disturbed_triad_is_not_swapped_in():
    # 37.2 vs 37.1 GB/s (seen in a demo run): the same figure within noise; no swap, no note
    from rooflab.model.ceiling import Ceiling
    from rooflab.probe.cpu.dram_ceiling import dram_from_add

    triad = Ceiling(37.1e9, level="DRAM", provenance="measured",
                    samples=(37.1e9, 30.0e9, 36.1e9, 31.0e9, 36.5e9))
    add = {"samples": [37.2e9, 37.0e9, 37.1e9, 37.15e9, 37.05e9]}
    chosen, note = dram_from_add(triad, {"add": add})
    assert chosen is triad and note is None
