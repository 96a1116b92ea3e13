"""Review s21 r2, F2/F3/F4/F8/F9: the nominal CPU roof counts the physical cores of the CPUs
the probe ran on (SMT siblings share one core's FMA pipes), the P- and E-cores of that
set on a hybrid CPU, and the E-cores' clock as the all-thread reading on a hybrid CPU.

The /proc/cpuinfo texts are generated here in the kernel's layout (the reviewer's inputs:
an i9-13900K with P-core threads 0-15 as SMT pairs, core ids 0, 4, ..., 28, and E-cores
16-31, core ids 32-47; a 2-socket Xeon Platinum 8480+, 56 cores per socket, CPU i and
i+112 siblings; an i5-12400, 6 cores x 2 threads)."""

from __future__ import annotations

import pytest

from rooflab.hardware import host as H
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.thread_rows import _nominal_cores
from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import assemble
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Rate
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing

RPL_FLAGS = "fpu sse sse2 ht fma cx16 avx f16c avx2 avx_vnni sha_ni"
SPR_FLAGS = ("fpu sse sse2 ht fma avx f16c avx2 avx512f avx512dq avx512cd avx512bw avx512vl "
             "avx_vnni avx512_bf16 avx512_vnni amx_bf16 avx512_fp16 amx_tile amx_int8")


def _block(i: int, fam: int, model: int, name: str, pkg: int, core: int, flags: str) -> str:
    return (f"processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: {fam}\n"
            f"model\t\t: {model}\nmodel name\t: {name}\nphysical id\t: {pkg}\n"
            f"core id\t\t: {core}\nflags\t\t: {flags}\n")


I9_13900K = "\n".join(
    _block(i, 6, 183, "13th Gen Intel(R) Core(TM) i9-13900K", 0,
           (i // 2) * 4 if i < 16 else 32 + i - 16, RPL_FLAGS) for i in range(32))
SPR_2S = "\n".join(
    _block(i, 6, 143, "Intel(R) Xeon(R) Platinum 8480+", (i % 112) // 56, i % 56, SPR_FLAGS)
    for i in range(224))
I5_12400 = "\n".join(
    _block(i, 6, 151, "12th Gen Intel(R) Core(TM) i5-12400", 0, i // 2, RPL_FLAGS)
    for i in range(12))


def rpl_sysfs(tmp_path):
    """The 13900K's hybrid PMUs (cpu_core 0-15, cpu_atom 16-31) and cpufreq maxima: 5.8 GHz
    P, 4.3 GHz E (Intel ARK i9-13900K: P-core / E-core max turbo)."""
    sys_cpu, pmu = tmp_path / "cpu", tmp_path / "pmu"
    for name, cpus in (("cpu_core", "0-15"), ("cpu_atom", "16-31")):
        (pmu / name).mkdir(parents=True)
        (pmu / name / "cpus").write_text(cpus + "\n")
    for cpu, khz in ((0, 5800000), (16, 4300000)):
        (sys_cpu / f"cpu{cpu}" / "cpufreq").mkdir(parents=True)
        (sys_cpu / f"cpu{cpu}" / "cpufreq" / "cpuinfo_max_freq").write_text(f"{khz}\n")
    return sys_cpu, pmu


def fake_host(monkeypatch, tmp_path, text, sys_cpu=None, pmu=None):
    """detect_host on `text` with every other reader stubbed (as the reviewer's driver)."""
    monkeypatch.setattr(H, "lscpu_text", lambda: "")
    monkeypatch.setattr(H, "sysfs_caches", lambda root=None: H.Caches())
    monkeypatch.setattr(H, "numa_nodes", lambda root=None: {})
    monkeypatch.setattr(H, "meminfo", lambda text=None: (None, None))
    monkeypatch.setattr(H, "library_versions", lambda: {})
    monkeypatch.setattr(H, "blas_info", lambda: "")
    monkeypatch.setattr(H, "SYS_CPU", sys_cpu or tmp_path / "none")
    monkeypatch.setattr(H, "PMU_DEVICES", pmu or tmp_path / "none")
    h = H.detect_host(cpuinfo=text)
    return h, detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)


def fp64(roof) -> float:
    return roof.find_compute("fp64").value


# --- F3: SMT siblings are not cores --------------------------------------------------------
def test_cpus_0_3_on_a_13900k_are_two_p_cores(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    roof, notes = assemble._nominal(h, arch, 5.0, 4, cpus=(0, 1, 2, 3))
    # Raptor Cove: 2 x 256-bit FMA = 16 fp64 FLOP/cycle (Intel optimization manual);
    # 2 cores x 5.0 GHz x 16 = 160 GFLOP/s (the old code: 4 "cores", 320)
    assert fp64(roof) == pytest.approx(160e9)
    assert "2 P + 0 E cores of the CPUs used" in notes[0]
    assert any("SMT siblings" in n for n in notes)


def test_one_core_of_a_2s_8480_is_one_core(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, SPR_2S)
    assert h.cores == 112
    roof, notes = assemble._nominal(h, arch, 2.0, 2, cpus=(0, 112))
    # Golden Cove server: 2 x 512-bit FMA = 32 fp64 FLOP/cycle (ARK: 2 AVX-512 FMA units);
    # CPUs 0 and 112 are one core: 1 x 2.0 x 32 = 64 GFLOP/s (the old code: 128)
    assert fp64(roof) == pytest.approx(64e9)
    assert "1 core (SMT siblings" in notes[0]


def test_the_whole_set_still_counts_every_core(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, SPR_2S)
    roof, notes = assemble._nominal(h, arch, 2.0, 224, cpus=tuple(range(224)))
    assert fp64(roof) == pytest.approx(112 * 2.0 * 32 * 1e9) and notes == []


# --- F4: the P/E split of the CPUs given -------------------------------------------------
def test_e_cores_only_count_as_e_cores(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    roof, notes = assemble._nominal(h, arch, 5.0, 16, cpus=tuple(range(16, 32)))
    # --cpus 16-31: 16 Gracemont (2 x 128-bit FMA = 8 fp64 FLOP/cycle) at 5.0 x 4.3/5.8
    # = 3.707 GHz: 16 x 3.707 x 8 = 474.5 GFLOP/s (the old code: 8 P + 8 E, 877)
    assert fp64(roof) == pytest.approx(16 * 5.0 * 4.3 / 5.8 * 8 * 1e9)
    assert fp64(roof) == pytest.approx(474.48e9, rel=1e-4)
    assert "0 P + 16 E cores" in notes[0]


# --- F2: on a hybrid CPU the all-thread clock is the E-cores' ---------------------------
def _rate(v: float) -> Rate:
    return Rate(samples=(v, v, v), reps=1, seconds=(1.0, 1.0, 1.0))


def _raw(all_hz: float, one_hz: float, cpus) -> assemble._Raw:
    fma = Measured("fp64", "FMA throughput", _rate(900e9))
    fma32 = Measured("fp32", "FMA throughput", _rate(1800e9))
    dram = Ceiling(value=80e9, level="DRAM", provenance="measured", samples=(80e9,) * 3)
    t = (1e-6,) * 5
    over = {"numba empty call": Timing(samples=t, inner=1, stats=summarize(t))}
    return assemble._Raw(
        clock0=_rate(all_hz), clock_1t=_rate(one_hz), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, mem_ceilings={"DRAM": dram}, stream={}, ws_intensity=1e6,
        intensity=(), gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={}, lowp=[],
        not_measured={}, overhead=over, peak_end=fma, clock1=_rate(all_hz), notes=[],
        affinity={"cpu_list": list(cpus), "pinned": False})


def test_a_quiet_13900k_is_not_blamed_on_other_load(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # all 32 threads: the E-cores' 4.3 GHz sets the reading; one thread runs at 5.8 GHz
    p = assemble._assemble(_raw(4.3e9, 5.8e9, range(32)), get_mode("quick"), h, arch, 32, 1.0)
    notes = " ".join(p.measured.notes)
    assert "other load shared the cores" not in notes   # 4.3/5.8 = 0.741 is the E/P ratio
    assert "is the E-cores'" in notes
    # P-cores at 4.3 / (4.3/5.8) = 5.8 GHz, E-cores at 4.3 GHz (the reading):
    # 8 x 5.8 x 16 + 16 x 4.3 x 8 = 742.4 + 550.4 = 1292.8 GFLOP/s
    assert fp64(p.nominal) == pytest.approx(1292.8e9)
    assert p.host["clock_hz"] == pytest.approx(5.8e9)


def test_the_e_clock_is_not_discounted_twice(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # all-thread reading 4.0 GHz (E-cores at their all-core clock), one thread 5.0 GHz:
    # 0.8 >= 0.75 x 0.741 -> no other-load note. P = 4.0 / 0.7414 = 5.395 GHz, E = 4.0:
    # 8 x 5.395 x 16 + 16 x 4.0 x 8 = 690.6 + 512 = 1202.6 GFLOP/s; the old code ran P at
    # 4.0 and E at 4.0 x 0.741 = 2.97 GHz: 512 + 379.6 = 891.6
    p = assemble._assemble(_raw(4.0e9, 5.0e9, range(32)), get_mode("quick"), h, arch, 32, 1.0)
    assert fp64(p.nominal) == pytest.approx((8 * 4.0 * 5.8 / 4.3 * 16 + 16 * 4.0 * 8) * 1e9)
    assert fp64(p.nominal) == pytest.approx(1202.6e9, rel=1e-4)


def test_other_load_is_still_caught_on_a_hybrid(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # 2.5 / 5.8 = 0.43 < 0.75 x 0.741 = 0.556: other load. The one-thread clock stands in,
    # scaled to the E-cores (5.8 x 0.741 = 4.3 GHz): the nominal is the quiet one.
    p = assemble._assemble(_raw(2.5e9, 5.8e9, range(32)), get_mode("quick"), h, arch, 32, 1.0)
    assert "other load shared the cores" in " ".join(p.measured.notes)
    assert fp64(p.nominal) == pytest.approx(1292.8e9)


# --- F9: a Golden Cove part the kernel shows as one core type --------------------------
def test_i5_12400_with_a_plain_cpu_pmu_has_no_hybrid_note(monkeypatch, tmp_path):
    (tmp_path / "pmu" / "cpu").mkdir(parents=True)
    # kernels >= 5.13 list hybrid PMUs, so a plain `cpu` one there is one core type (x1 F6)
    monkeypatch.setattr(H.platform, "release", lambda: "6.1.0-13-amd64")
    h, arch = fake_host(monkeypatch, tmp_path, I5_12400, pmu=tmp_path / "pmu")
    roof, notes = assemble._nominal(h, arch, 4.0, 12)
    assert fp64(roof) == pytest.approx(6 * 4.0 * 16 * 1e9)   # 384 GFLOP/s
    assert notes == [] and h.hybrid_pmu is False
    # no PMU directory at all: the split stays unknown, and the note says so
    h2, _ = fake_host(monkeypatch, tmp_path, I5_12400)
    assert "P/E split is unknown" in assemble._nominal(h2, arch, 4.0, 12)[1][0]


# --- F8: Apple silicon P/E counts from sysctl --------------------------------------------
def test_apple_m2_e_cores_are_not_counted_as_p_cores(monkeypatch, tmp_path):
    # An M2 MacBook Air: hw.physicalcpu 8 = hw.perflevel0.physicalcpu 4 (Avalanche) +
    # hw.perflevel1.physicalcpu 4 (Blizzard).
    values = {"machdep.cpu.brand_string": "Apple M2", "hw.physicalcpu": "8",
              "hw.logicalcpu": "8", "hw.perflevel0.physicalcpu": "4",
              "hw.perflevel1.physicalcpu": "4", "hw.memsize": str(16 * 2**30)}
    monkeypatch.setattr(H.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(H, "sysctl", values.get)
    h, arch = fake_host(monkeypatch, tmp_path, "")
    assert (h.core_split.p_cores, h.core_split.e_cores) == (4, 4)
    roof, notes = assemble._nominal(h, arch, 3.49, 8)
    # the E-core design is not in the table: no nominal (was 8 x 3.49 x 16 = 446.7)
    assert roof is None and "E-core design is not in rooflab's table" in notes[0]


# --- resolve: a thread row's nominal partner uses the cores the probe summed over ------
def test_thread_rows_use_the_probe_s_core_count():
    profile = {"host": {"kind": "cpu", "cores": 112, "nominal_cores": 1},
               "extras": {"threads": 2}}
    assert _nominal_cores(profile) == 1   # was min(2, 112) = 2
    assert _nominal_cores({"host": {"kind": "cpu", "cores": 112}, "extras": {"threads": 2}}) == 2
