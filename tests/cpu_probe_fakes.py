"""A CPU probe's raw measurements made up in a test and assembled into a profile the way
`rooflab probe` assembles them (suite._assemble): one Zen 4 core at 3 GHz, DRAM 20 GB/s,
fp64/fp32 peaks as given."""

from __future__ import annotations

from rooflab.hardware.host import Caches, HostInfo
from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import suite
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Rate
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing


def rate(v: float) -> Rate:
    return Rate(samples=(v, v, v), reps=1, seconds=(1.0, 1.0, 1.0))


def assembled_profile(fp64: float, fp32: float, notes=(), load=None):
    """The profile of a quick probe that measured these fp64/fp32 FLOP/s (and `load`)."""
    fma, fma32 = Measured("fp64", "FMA", rate(fp64)), Measured("fp32", "FMA", rate(fp32))
    t = (1e-6,) * 3
    raw = suite._Raw(
        clock0=rate(3e9), clock_1t=rate(3e9), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, mem_ceilings={"DRAM": Ceiling(2e10, level="DRAM")}, stream={},
        ws_intensity=1e6, intensity=(), gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={},
        lowp=[], not_measured={"bf16": "skipped"},
        overhead={"call": Timing(samples=t, inner=1, stats=summarize(t))}, peak_end=fma,
        clock1=rate(3e9), notes=list(notes), load=load)
    host = HostInfo(cpu_model="cpu", vendor="AuthenticAMD", family=25, model=17,
                    flags=frozenset({"avx2", "fma", "avx512f"}), cores=1, threads=1,
                    caches=Caches(32768, 2**20, 2**25), memory_bytes=2**34,
                    memory_available_bytes=2**33, hypervisor=None, os="Linux",
                    machine="x86_64")
    from rooflab.hardware.cpu_detect import detect_microarch

    arch = detect_microarch(host.vendor, host.family, host.model, host.flags, host.cpu_model)
    return suite._assemble(raw, get_mode("quick"), host, arch, 1, 10.0)
