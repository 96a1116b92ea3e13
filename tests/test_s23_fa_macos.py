"""macOS CPU identity and wording on other OSes (review s23 r3 F4, F5, F9): an Intel Mac's
family/model from sysctl, Apple silicon's clock readings and L2 sharing, and no
Linux-only words in the probe's notes and records where Linux is not the OS. The sysctl
values are the reviewer's (an M2 Pro and a 2019 MacBook Pro's i9-9880H as they print)."""

from __future__ import annotations

import platform
from types import SimpleNamespace as NS

import pytest

from rooflab.hardware import host
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.host import Caches
from rooflab.probe.cpu.assemble import _clock_for, _nominal, core_use

KiB, MiB = 2**10, 2**20

M2_PRO = {
    "machdep.cpu.brand_string": "Apple M2 Pro", "hw.physicalcpu": 12, "hw.logicalcpu": 12,
    "hw.memsize": 34359738368, "hw.perflevel0.physicalcpu": 8, "hw.perflevel1.physicalcpu": 4,
    "hw.perflevel0.l1dcachesize": 131072, "hw.perflevel0.l2cachesize": 16777216,
    "hw.perflevel0.cpusperl2": 4, "hw.perflevel1.l1dcachesize": 65536,
    "hw.perflevel1.l2cachesize": 4194304, "hw.perflevel1.cpusperl2": 4,
    "hw.l1dcachesize": 65536, "hw.l2cachesize": 4194304, "hw.cachelinesize": 128,
}
I9_9880H = {
    "machdep.cpu.brand_string": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz",
    "machdep.cpu.vendor": "GenuineIntel", "machdep.cpu.family": 6, "machdep.cpu.model": 158,
    "machdep.cpu.features": "FPU SSE SSE2 SS HTT SSE3 SSSE3 FMA CX16 SSE4.1 SSE4.2 POPCNT "
                            "AES XSAVE OSXSAVE AVX1.0 RDRAND F16C",
    "machdep.cpu.leaf7_features": "BMI1 HLE AVX2 SMEP BMI2 ERMS",
    "hw.physicalcpu": 8, "hw.logicalcpu": 16, "hw.memsize": 17179869184,
    "hw.l1dcachesize": 32768, "hw.l2cachesize": 262144, "hw.l3cachesize": 16777216,
}


def _mac(monkeypatch, tmp_path, values, machine):
    """detect_host as on macOS: no /proc, sysfs or lscpu; sysctl answers from `values`."""
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.setattr(host, "CPUINFO", tmp_path / "no-cpuinfo")
    monkeypatch.setattr(host, "MEMINFO", tmp_path / "no-meminfo")
    monkeypatch.setattr(host, "sysfs_caches", lambda *a: Caches())
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    monkeypatch.setattr(host, "sysctl", lambda name: (str(values[name]) if name in values
                                                      else None))
    return host.detect_host()


def test_intel_mac_family_and_model_come_from_sysctl(monkeypatch, tmp_path):
    h = _mac(monkeypatch, tmp_path, I9_9880H, "x86_64")
    assert (h.vendor, h.family, h.model) == ("GenuineIntel", 6, 158)
    assert (h.cores, h.threads, h.cores_known) == (8, 16, True)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    assert arch.name == "Skylake (client)"   # was "unknown AVX2 design", no nominal
    roof, _ = _nominal(h, arch, 4.0, 16)
    # 8 cores x 4.0 GHz x 4 fp64 lanes x 2 FMA pipes x 2 FLOP = 512 GFLOP/s
    assert next(c.value for c in roof.compute if c.precision == "fp64") == pytest.approx(512e9)


def test_apple_family_is_not_looked_up_in_x86_tables(monkeypatch, tmp_path):
    values = M2_PRO | {"machdep.cpu.family": 6, "machdep.cpu.model": 158}
    h = _mac(monkeypatch, tmp_path, values, "arm64")
    assert (h.family, h.model) == (None, None)


def test_apple_l2_is_shared_by_a_cluster(monkeypatch, tmp_path):
    h = _mac(monkeypatch, tmp_path, M2_PRO, "arm64")
    c = h.caches
    assert (c.l1d, c.l2, c.l2_sharing, c.source) == (128 * KiB, 16 * MiB, 4, "sysctl")
    assert (h.core_split.p_cores, h.core_split.e_cores) == (8, 4)


def _raw(every: float, one: float):
    return NS(clock0=NS(best=every), clock_1t=NS(best=one), clock1=NS(best=every))


def test_quiet_m2_pro_clock_is_the_e_cores_not_other_load(monkeypatch, tmp_path):
    h = _mac(monkeypatch, tmp_path, M2_PRO, "arm64")
    use = core_use(h, 12)
    # a quiet M2 Pro: 12 threads, the E-cores (2.42 GHz) set the team's reading; one
    # thread on a P-core at 3.49 GHz (0.69x, under the 0.75 "contended" bar)
    ghz, note, hybrid, e_ratio = _clock_for(_raw(2.42e9, 3.49e9), h, 12, use)
    assert ghz == pytest.approx(3.49)
    assert note is None   # was "other load shared the cores ... rerun on a quiet machine"
    assert "E-cores' clock" in hybrid and "2.42 GHz" in hybrid and "other load" not in hybrid
    assert e_ratio == pytest.approx(2.42 / 3.49)   # the E/P ratio, measured (s23 h1 F1)
    # far lower than E-cores run (0.30x): still other load, and no measured E/P ratio
    ghz, note, hybrid, e_ratio = _clock_for(_raw(1.05e9, 3.49e9), h, 12, use)
    assert hybrid is None and e_ratio is None and "other load shared the cores" in note


def test_m2_pro_sweep_notes_blame_e_cores_not_a_vm(monkeypatch, tmp_path):
    # the reviewer's synthetic quiet M2 Pro curve: L1 to 64 KiB/thread, L2 to 3 MiB/thread
    from rooflab.probe.cpu import bandwidth as bw
    from rooflab.probe.cpu.modes import get_mode
    from rooflab.probe.cpu.suite import dram_working_set, hybrid_cache_notes, sweep_sizes_for

    h = _mac(monkeypatch, tmp_path, M2_PRO, "arm64")

    def curve(s):
        return 1.5e12 if s <= 64 * KiB else 0.6e12 if s <= 3 * MiB else 0.2e12

    spec = get_mode("default")
    sizes = sweep_sizes_for(spec, dram_working_set(h, spec)[0], 12)
    vals = [curve(s) for s in sizes]
    _, _, notes = bw.label_levels(vals, sizes, h.caches, 12, medians=vals)
    notes = hybrid_cache_notes(notes, h)
    text = " ".join(notes)
    assert "virtual machine" not in text and "two plateaus fall in L2" not in text
    assert "E-cores have smaller caches" in text


# --- Linux-only words elsewhere (F9) ------------------------------------------------------
def test_cpu_causes_name_cgroups_only_on_linux(monkeypatch):
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.probe import nominal as nom

    nominal = Roof("cpu", compute=(Ceiling(118e9, precision="fp64", unit="vector"),))
    measured = Roof("cpu measured", kind="measured",
                    compute=(Ceiling(40e9, precision="fp64", unit="vector"),))
    for system, cgroup in (("Linux", True), ("Darwin", False), ("Windows", False)):
        monkeypatch.setattr(platform, "system", lambda s=system: s)
        (note,) = nom.below_nominal_notes(measured, nominal, "cpu")
        assert ("cgroup cpu.max" in note) is cgroup
        assert "CPU quota" in note


def test_affinity_record_and_low_precision_reasons_off_linux(monkeypatch):
    from rooflab.probe.cpu import suite
    from rooflab.probe.cpu.modes import get_mode

    rec = suite._affinity_record(None, None)   # no os.sched_getaffinity: no mask
    assert "affinity mask (os.sched_getaffinity)" not in rec["method"]
    assert "no affinity mask" in rec["method"]
    assert "os.sched_getaffinity" in suite._affinity_record(None, (0, 1))["method"]
    _, why = suite._low_precision(get_mode("quick"), None, 2, flags_read=False)
    assert "flags show no instructions" not in why["bf16"]
    assert "no instruction-set flags" in why["bf16"]
    _, why = suite._low_precision(get_mode("quick"), None, 2)
    assert why["bf16"] == "no fast path on this CPU: its flags show no instructions for it"
