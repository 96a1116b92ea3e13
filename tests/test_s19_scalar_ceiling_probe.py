"""The CPU probe's scalar (no SIMD) FMA ceiling (s19 f3): the kernel measured through the
fake clock the other probe functions use, its ceilings (unit "scalar") assembled beside
the vector ones, kept through a saved profile, and the unit in the JSON vocabulary.

The numba kernel is replaced by a stand-in that advances a fake clock by the time the
scripted machine takes (times are powers of two: exact arithmetic), as in
test_s18_g4_cpu_probe_fake_clock.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU probe's kernels need numba (rooflab[cpu])")

from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.profile import load_profile, save_profile
from rooflab.model.canonical_names import unit_name, unknown_unit
from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import kernels as K
from rooflab.probe.cpu import kernels_scalar as KS
from rooflab.probe.cpu import suite
from rooflab.probe.cpu.flops import FMA_PER_CALL, Measured, scalar_fma_peak
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Team
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing, TimingPlan

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_probe_fakes as fakes  # noqa: E402

US = 2.0**-20          # one repetition of the scripted kernel
SAMPLE = 2.0**-10      # each sample's target length
CALL = 2.0**-14        # fixed cost of each call
# calibration: (2^-10 - 2^-14) / 2^-20 = 960 repetitions fill a sample (the s18 g4 plan)
REPS = 960
PLAN = TimingPlan(warmup_s=SAMPLE, sample_s=SAMPLE, budget_s=2.0**-6, min_samples=5,
                  max_samples=5)


class _Clock:
    """Reading it returns `now`; the stand-in kernel advances it: a call of `reps`
    repetitions lasts CALL + reps x US, the i-th sample call (REPS repetitions) `slow[i]`
    times that."""

    def __init__(self, slow=()):
        self.now = 0.0
        self._slow = iter(slow)
        self.log: list[tuple] = []

    def __call__(self) -> float:
        return self.now

    def par_ert_scalar(self, a, b, m, k, nblocks, reps, out):
        self.log.append((a.dtype, a.shape, type(m), k, nblocks, reps))
        factor = next(self._slow, 1.0) if reps == REPS else 1.0
        self.now += (CALL + reps * US) * factor


@pytest.mark.parametrize("precision, dtype", [("fp64", np.float64), ("fp32", np.float32)])
def test_scalar_fma_peak_is_one_lane_flop_over_the_fastest_sample(monkeypatch, precision,
                                                                   dtype):
    clock = _Clock(slow=(1.25, 1.0, 1.125, 1.5, 1.0))
    monkeypatch.setattr(KS, "par_ert_scalar", clock.par_ert_scalar)
    got = scalar_fma_peak(precision, Team(2), PLAN, clock=clock)
    # NVEC scalars per thread (one lane each, not NVEC vectors), FMA_PER_CALL FMAs each, 2
    # FLOP per FMA, 2 threads: 2 x 2048 x 12 x 2 = 98304 FLOP a repetition with AVX2's NVEC
    work = 2 * FMA_PER_CALL * K.NVEC * 2
    if K.NVEC == 12:
        assert work == 98304
    best = work * REPS / SAMPLE            # 96.6 GFLOP/s for the scripted 2^-20 s per rep
    assert got.rate.reps == REPS
    assert got.rate.samples == pytest.approx(
        [best / f for f in (1.25, 1.0, 1.125, 1.5, 1.0)], rel=1e-12)
    assert got.rate.best == pytest.approx(best, rel=1e-12)
    assert got.rate.median == pytest.approx(best / 1.125, rel=1e-12)
    # every call: one row of NVEC elements per thread of the precision's dtype, one block
    assert {(e[0], e[1], e[3], e[4]) for e in clock.log} == {
        (np.dtype(dtype), (2, K.NVEC), FMA_PER_CALL, 1)}
    assert {e[2] for e in clock.log} == {dtype}
    bits = 8 * np.dtype(dtype).itemsize
    assert got.precision == precision
    assert f"(LLVM llvm.fma.f{bits})" in got.method and "no SIMD" in got.method


def test_the_scalar_kernel_computes_the_fma_chain_with_scalar_instructions():
    # the real compiled kernel: 4 FMAs of 0.999x + 0.001 from 0.5 on each of NVEC elements
    src = np.full(K.NVEC, 0.5)
    dst = np.zeros(K.NVEC)
    KS.ert_scalar(src, dst, 1, 4, 0.999, 0.001, 1)
    x = 0.5
    for _ in range(4):
        x = 0.999 * x + 0.001
    assert dst == pytest.approx([x] * K.NVEC, rel=1e-15)
    if KS.barrier_isa() == "=x,0":   # x86: scalar sd FMAs on xmm registers, no packed ones
        import numba  # a fresh, uncached compile: numba does not inspect cached code

        fresh = numba.njit(fastmath=True)(KS.ert_scalar.py_func)
        fresh(src, dst, 1, 4, 0.999, 0.001, 1)
        asm = fresh.inspect_asm(fresh.signatures[0])
        assert "vfmadd213sd" in asm or "vfmadd231sd" in asm or "vfmadd132sd" in asm
        assert "pd\t%ymm" not in asm and "vfmadd213pd" not in asm


def _profile(fp64_vector: float, fp64_scalar: float, fp32_scalar: float):
    """A quick probe's profile (cpu_probe_fakes' host) with these FMA peaks (fp32 vector
    twice fp64's), scalar ceilings included."""
    fma = Measured("fp64", "FMA", fakes.rate(fp64_vector))
    fma32 = Measured("fp32", "FMA", fakes.rate(2 * fp64_vector))
    scalar = {"fp64": Measured("fp64", "scalar FMA", fakes.rate(fp64_scalar)),
              "fp32": Measured("fp32", "scalar FMA", fakes.rate(fp32_scalar))}
    t = (1e-6,) * 3
    raw = suite._Raw(
        clock0=fakes.rate(3e9), clock_1t=fakes.rate(3e9), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, mem_ceilings={"DRAM": Ceiling(2e10, level="DRAM")}, stream={},
        ws_intensity=1e6, intensity=(), gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={},
        lowp=[], not_measured={}, overhead={"call": Timing(samples=t, inner=1,
                                                           stats=summarize(t))},
        peak_end=fma, clock1=fakes.rate(3e9), notes=[], scalar=scalar)
    host = HostInfo(cpu_model="cpu", vendor="AuthenticAMD", family=25, model=1,
                    flags=frozenset({"avx2", "fma"}), cores=1, threads=1,
                    caches=Caches(32768, 2**19, 2**25), memory_bytes=2**34,
                    memory_available_bytes=2**33, hypervisor=None, os="Linux",
                    machine="x86_64")
    return suite._assemble(raw, get_mode("quick"), host, None, 1, 10.0)


def test_scalar_ceilings_are_measured_beside_the_vector_ones_and_survive_a_save(tmp_path):
    # one Zen 3 core at 3 GHz: 2 FMA pipes x 4 fp64 lanes x 2 FLOP = 48 GFLOP/s vector,
    # 2 pipes x 1 lane x 2 FLOP = 12 GFLOP/s scalar (fp32 scalar the same rate)
    prof = _profile(48e9, 12e9, 12e9)
    got = {(c.precision, c.unit): c for c in prof.measured.compute}
    assert set(got) == {("fp64", "vector"), ("fp32", "vector"), ("fp64", "scalar"),
                        ("fp32", "scalar")}
    assert got["fp64", "scalar"].value == 12e9
    assert got["fp64", "scalar"].provenance == "measured"
    assert got["fp64", "scalar"].label == "fp64 scalar"
    assert prof.measured.find_compute("fp64").value == 48e9   # no unit: the fastest
    sf = prof.extras["scalar_fma"]
    assert sf["fp64"]["simd_ratio"] == pytest.approx(4.0)     # 48 / 12: AVX2's 4 lanes
    assert sf["fp32"]["simd_ratio"] == pytest.approx(8.0)     # 96 / 12: 8 fp32 lanes
    assert not [n for n in prof.measured.notes if "scalar one" in n]
    path = tmp_path / "p.json"
    save_profile(path, prof)
    back = load_profile(path)
    c = back.measured.find_compute("fp64", "scalar")
    assert (c.value, c.unit, c.provenance, c.samples) == (12e9, "scalar", "measured",
                                                          (12e9, 12e9, 12e9))
    assert back.extras["scalar_fma"]["fp64"]["simd_ratio"] == pytest.approx(4.0)


def test_a_vector_peak_near_the_scalar_one_is_noted():
    prof = _profile(48e9, 40e9, 12e9)   # 1.2x: the vector kernel was held up
    notes = [n for n in prof.measured.notes if "scalar one" in n]
    assert notes == ["fp64: the vector FMA peak is only 1.20x the scalar one (SIMD lanes "
                     "would give 2-16x): other load held the vector kernel up, or the "
                     "scalar kernel was vectorised; rerun on a quiet machine"]


def test_scalar_is_a_compute_unit_of_the_vocabulary():
    assert unit_name("Scalar") == "scalar"
    assert unknown_unit("scalar") is None
    assert Ceiling(1e9, precision="fp64", unit="SCALAR").label == "fp64 scalar"
