"""Audit 7: no guessed nominal peak for CPU designs the table does not know, and hybrid
(P + E core) CPUs counted at each core type's own rate."""

from __future__ import annotations

import pytest

from rooflab.hardware import host
from rooflab.hardware.cpu_arch import get_arch
from rooflab.hardware.cpu_detect import detect_microarch, e_core_arch
from rooflab.hardware.cpu_nominal import cpu_nominal_roof, hybrid_nominal_roof
from rooflab.hardware.host import Caches, CoreSplit, HostInfo
from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import assemble
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Rate
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing

AVX2 = frozenset("fpu sse2 avx avx2 fma".split())
GIB = 2**30


# --- 1. unknown designs: no nominal compute ceilings --------------------------------------
def test_unknown_e_core_xeon_gets_no_guessed_peak():
    # Clearwater Forest (family 6 model 0xDD, Darkmont E-cores) is not in the table (Sierra
    # Forest, 0xAF, now is: audit 9). The old flag guess, 2 x 256-bit, was 2x Sierra Forest.
    arch = detect_microarch("GenuineIntel", 6, 0xDD, AVX2 | {"avx_vnni"},
                            "Intel(R) Xeon(R) CPU")
    assert not arch.nominal_known and arch.fma_pipes == 0
    assert arch.simd_bits == 256 and arch.fp64_flop_per_cycle == 0
    note = " ".join(arch.notes)
    assert "Intel family 0x6 model 0xdd" in note
    assert "cpu_arch.py" in note and "--on" in note
    # The VNNI path is still known to exist, so the probe measures int8 through torch.
    assert arch.fast_path("int8").via == "VNNI dot product"
    roof = cpu_nominal_roof("x", 144, 2.2, arch, 300e9, "https://example.org")
    assert roof.compute == () and roof.bandwidth("DRAM").value == 300e9


def test_hygon_gets_no_guessed_peak():
    # Hygon Dhyana is Zen 1 (AVX2 on 128-bit pipes, 8 fp64 FLOP/cycle); the guess said 16.
    arch = detect_microarch("HygonGenuine", 0x18, 0x01, AVX2,
                            "Hygon C86 7185 32-core Processor")
    assert arch.name == "unknown AVX2 design" and not arch.nominal_known


def test_known_designs_still_have_a_nominal():
    zen4 = detect_microarch("AuthenticAMD", 25, 17, AVX2 | {"avx512f"}, "AMD EPYC 9B45")
    assert zen4.nominal_known
    roof = cpu_nominal_roof("vm", 2, 3.69, zen4, None, "")
    # 2 cores x 3.69 GHz x 4 lanes x 2 pipes x 2 = 118.08 GFLOP/s fp64, 236.16 fp32.
    assert roof.find_compute("fp64").value == pytest.approx(118.08e9)
    assert roof.find_compute("fp32", "vector").value == pytest.approx(236.16e9)


def _host(**kw) -> HostInfo:
    base = dict(cpu_model="cpu", vendor="GenuineIntel", family=6, model=0xDD, flags=AVX2,
                cores=4, threads=4, caches=Caches(48 * 1024, 2 * 2**20, 32 * 2**20),
                memory_bytes=64 * GIB, memory_available_bytes=32 * GIB, hypervisor=None,
                os="Linux", machine="x86_64")
    return HostInfo(**(base | kw))


def _rate(v: float) -> Rate:
    return Rate(samples=(v, v, v), reps=1, seconds=(1.0, 1.0, 1.0))


def _raw(clock_hz: float) -> assemble._Raw:
    fma = Measured("fp64", "FMA throughput", _rate(50e9))
    fma32 = Measured("fp32", "FMA throughput", _rate(100e9))
    dram = Ceiling(value=20e9, level="DRAM", provenance="measured", samples=(20e9,) * 3)
    t = (1e-6,) * 5
    over = {"numba empty call": Timing(samples=t, inner=1, stats=summarize(t))}
    return assemble._Raw(
        clock0=_rate(clock_hz), clock_1t=_rate(clock_hz), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, mem_ceilings={"DRAM": dram}, stream={}, ws_intensity=1e6,
        intensity=(), gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={}, lowp=[],
        not_measured={}, overhead=over, peak_end=fma, clock1=_rate(clock_hz), notes=[])


def test_probe_of_an_unknown_design_has_no_nominal_and_says_why():
    h = _host()
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    profile = assemble._assemble(_raw(2.2e9), get_mode("quick"), h, arch, 4, 1.0)
    assert profile.nominal is None
    assert profile.measured.find_compute("fp64").value == 50e9   # measured ones stay
    notes = " ".join(profile.measured.notes)
    assert "no nominal compute peak" in notes and "cpu_arch.py" in notes


# --- 2. hybrid CPUs -----------------------------------------------------------------------
RPL = dict(model=0xB7, cpu_model="13th Gen Intel(R) Core(TM) i9-13900K", cores=24,
           threads=32)


def test_hybrid_nominal_counts_e_cores_at_their_rate():
    # i9-13900K: 8 Raptor Cove (16 fp64 FLOP/cycle) + 16 Gracemont (8 FLOP/cycle).
    split = CoreSplit(8, 16, tuple(range(16)), tuple(range(16, 32)), 4.3 / 5.8, "sysfs")
    h = _host(core_split=split, **RPL)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = assemble._nominal(h, arch, 5.0, 32)
    e_ghz = 5.0 * 4.3 / 5.8
    # 8 x 5.0 x 16 + 16 x 3.707 x 8 = 640 + 474.5 = 1114.5 GFLOP/s (all-P: 1920).
    assert roof.find_compute("fp64").value == pytest.approx((8 * 5.0 * 16 + 16 * e_ghz * 8)
                                                            * 1e9)
    assert roof.find_compute("fp64").value == pytest.approx(1114.48e9, rel=1e-4)
    assert roof.find_compute("fp32", "vector").value == pytest.approx(2228.97e9, rel=1e-4)
    assert "8 P + 16 E cores" in notes[0] and "E/P cpufreq" in notes[1]
    assert "P-cores:" in roof.find_compute("fp64").method


def test_hybrid_with_few_threads_counts_p_cores_first():
    split = CoreSplit(8, 16, tuple(range(16)), tuple(range(16, 32)), None, "sysfs")
    h = _host(core_split=split, **RPL)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = assemble._nominal(h, arch, 5.0, 4)
    assert roof.find_compute("fp64").value == pytest.approx(4 * 5.0 * 16 * 1e9)
    roof, notes = assemble._nominal(h, arch, 5.0, 10)   # 8 P + 2 E, E at the same clock
    assert roof.find_compute("fp64").value == pytest.approx((8 * 16 + 2 * 8) * 5.0e9)
    assert any("upper bound" in n for n in notes)


def test_hybrid_family_without_a_split_says_it_assumes_p_cores():
    h = _host(**RPL)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = assemble._nominal(h, arch, 5.0, 32)
    assert roof.find_compute("fp64").value == pytest.approx(24 * 5.0 * 16 * 1e9)
    assert "P/E split is unknown" in notes[0] and "all 24 cores as P-cores" in notes[0]


def test_hybrid_with_an_unknown_e_core_design_has_no_nominal():
    # Arrow Lake-H (model 0xC5): its E-cores are not in the table (Skymont beside SoC-tile
    # low-power E-cores; 0xC6, Arrow Lake-S, now has Skymont: tests/test_kernel_provenance.py).
    split = CoreSplit(6, 10, tuple(range(6)), tuple(range(6, 16)), 0.9, "sysfs")
    h = _host(model=0xC5, cpu_model="Intel(R) Core(TM) Ultra 9 285H", cores=16,
              threads=16, core_split=split)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = assemble._nominal(h, arch, 5.0, 16)
    assert roof is None and "E-core design is not in rooflab's table" in notes[0]
    assert e_core_arch("GenuineIntel", 6, 0xC5) is None
    assert e_core_arch("GenuineIntel", 6, 0x97).name == "Gracemont (E-core)"


def test_hybrid_nominal_roof_adds_p_and_e():
    roof = hybrid_nominal_roof("x", 6, 3.0, get_arch("Golden Cove/Raptor Cove (client)"), 8,
                               2.0, get_arch("Gracemont (E-core)"), "")
    # 6 x 3 x 16 + 8 x 2 x 8 = 288 + 128 = 416 GFLOP/s; VNNI int8 is 4x fp32 on both.
    assert roof.find_compute("fp64").value == pytest.approx(416e9)
    assert roof.find_compute("int8", "vector").value == pytest.approx(4 * 832e9)


# --- the host side: core types from sysfs -------------------------------------------------
CPUINFO_12600 = "\n\n".join(
    f"processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\n"
    f"model name\t: 12th Gen Intel(R) Core(TM) i5-12600K\nphysical id\t: 0\n"
    f"core id\t\t: {i // 2 if i < 12 else 20 + i}\nflags\t\t: fpu sse2 avx avx2 fma"
    for i in range(16))   # 6 P-cores with 2 threads (cpu 0-11) + 4 E-cores (cpu 12-15)


def _sysfs(tmp_path, types: bool):
    sys_cpu, pmu = tmp_path / "cpu", tmp_path / "pmu"
    if types:
        for name, cpus in (("intel_core_0", "0-11"), ("intel_atom_0", "12-15")):
            (sys_cpu / "types" / name).mkdir(parents=True)
            (sys_cpu / "types" / name / "cpulist").write_text(cpus + "\n")
    else:
        for name, cpus in (("cpu_core", "0-11"), ("cpu_atom", "12-15")):
            (pmu / name).mkdir(parents=True)
            (pmu / name / "cpus").write_text(cpus + "\n")
    for cpu, khz in ((0, 4900000), (12, 3600000)):
        (sys_cpu / f"cpu{cpu}" / "cpufreq").mkdir(parents=True)
        (sys_cpu / f"cpu{cpu}" / "cpufreq" / "cpuinfo_max_freq").write_text(f"{khz}\n")
    return sys_cpu, pmu


@pytest.mark.parametrize("types", [True, False], ids=["types-dir", "pmu-dirs"])
def test_core_split_from_sysfs(tmp_path, types):
    sys_cpu, pmu = _sysfs(tmp_path, types)
    split = host.detect_core_split(host.parse_cpuinfo(CPUINFO_12600), sys_cpu, pmu)
    assert (split.p_cores, split.e_cores) == (6, 4)
    assert split.p_cpus == tuple(range(12)) and split.e_cpus == (12, 13, 14, 15)
    assert split.e_clock_ratio == pytest.approx(3.6 / 4.9)


def test_no_split_on_a_non_hybrid_host(tmp_path):
    assert host.detect_core_split([], tmp_path / "cpu", tmp_path / "pmu") is None
    assert host.parse_cpulist("0-3,8,10-11") == (0, 1, 2, 3, 8, 10, 11)
    assert host.parse_cpulist("") == ()


def test_detect_host_fills_the_split(tmp_path, monkeypatch):
    sys_cpu, pmu = _sysfs(tmp_path, False)
    monkeypatch.setattr(host, "SYS_CPU", sys_cpu)
    monkeypatch.setattr(host, "PMU_DEVICES", pmu)
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    h = host.detect_host(CPUINFO_12600)
    assert (h.core_split.p_cores, h.core_split.e_cores) == (6, 4)
    assert h.to_dict()["core_split"]["e_cores"] == 4
