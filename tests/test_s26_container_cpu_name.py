"""s26 fC: gVisor (Cloud Run, GKE Sandbox) writes "model name : unknown" in /proc/cpuinfo,
and rooflab named the CPU "unknown" (the roofs read "unknown measured (2 threads)"). A
placeholder is no name: lscpu, then the vendor, family and model (cpuinfo's, else the
kernel's CPU modalias), then platform.processor(); else "unknown CPU (the sandbox hides
it)"."""

from __future__ import annotations

import platform

from rooflab.hardware import cpu_name as cn
from rooflab.hardware import host
from rooflab.hardware.cpu_detect import detect_microarch

# gVisor's cpuinfo (pkg/cpuid: the host's vendor, family, model and flags, no brand
# string, no topology), on a Cascade Lake host
GVISOR = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: unknown
stepping\t: unknown
cpu MHz\t\t: 2800.000
fpu\t\t: yes
fpu_exception\t: yes
cpuid level\t: 13
wp\t\t: yes
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr sse sse2 avx fma avx2 avx512f
bogomips\t: 5600.00
clflush size\t: 64
cache_alignment\t: 64
address sizes\t: 46 bits physical, 48 bits virtual
power management:

"""
# this VM's own modalias line (an AMD family 0x1a model 0x2 EPYC), features cut short
MODALIAS = "cpu:type:x86,ven0002fam001Amod0002:feature:,0000,0001,0002,0003,0004\n"


def test_modalias_gives_the_vendor_family_and_model(tmp_path):
    assert cn.parse_modalias(MODALIAS) == ("AMD", 0x1A, 0x2)
    assert cn.parse_modalias("cpu:type:x86,ven0000fam0006mod0055:feature:,0000") == (
        "Intel", 6, 0x55)
    assert cn.parse_modalias("cpu:type:aarch64:feature:,0000,0001") is None
    assert cn.parse_modalias("") is None


def test_placeholders_are_no_name(tmp_path):
    alias = tmp_path / "modalias"
    alias.write_text(MODALIAS)
    none = tmp_path / "absent"
    assert cn.cpu_name("Intel(R) Xeon(R) Gold 6242 CPU @ 2.80GHz", modalias=alias) == (
        "Intel(R) Xeon(R) Gold 6242 CPU @ 2.80GHz")
    # gVisor: cpuinfo and lscpu (which reads cpuinfo) both say unknown
    assert cn.cpu_name("unknown", lambda: "unknown", none, processor="x86_64") == (
        "unknown CPU (the sandbox hides it)")
    assert cn.cpu_name("unknown", lambda: None, alias, processor="") == (
        "AMD CPU, family 0x1a model 0x2 (the sandbox hides its name)")
    # cpuinfo's own family/model come first (the modalias is another machine's in a test)
    assert cn.cpu_name("unknown", lambda: None, alias, ident=("GenuineIntel", 6, 85)) == (
        "Intel CPU, family 0x6 model 0x55 (the sandbox hides its name)")
    assert cn.cpu_name("unknown", lambda: "Neoverse-V1", none) == "Neoverse-V1"
    assert cn.cpu_name(" Unknown ", lambda: None, none,
                       processor="Intel64 Family 6 Model 85 Stepping 7, GenuineIntel") == (
        "Intel64 Family 6 Model 85 Stepping 7, GenuineIntel")
    # no name line at all (Arm without lscpu): the caller's own fallbacks, as before
    assert cn.cpu_name(None, lambda: None, alias, processor="aarch64") is None


def test_detect_host_under_gvisor(monkeypatch, tmp_path):
    monkeypatch.setattr(host, "lscpu_text", lambda: "Model name:            unknown\n")
    monkeypatch.setattr(cn, "MODALIAS", tmp_path / "absent")
    monkeypatch.setattr(platform, "processor", lambda: "x86_64")
    h = host.detect_host(GVISOR)
    assert h.cpu_model == "Intel CPU, family 0x6 model 0x55 (the sandbox hides its name)"
    assert (h.vendor, h.family, h.model) == ("GenuineIntel", 6, 85)
    # the design still comes from family/model (Skylake-SP/Cascade Lake's model 0x55)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    assert arch is not None and any("from Intel family 6 model 0x55" in n for n in arch.notes)
    # no family/model either: the modalias where there is one, else the plain words
    thin = "\n".join(x for x in GVISOR.splitlines() if not x.startswith(("cpu family", "model\t")))
    assert host.detect_host(thin).cpu_model == "unknown CPU (the sandbox hides it)"
    alias = tmp_path / "modalias"
    alias.write_text("cpu:type:x86,ven0002fam0019mod0001:feature:,0000\n")
    monkeypatch.setattr(cn, "MODALIAS", alias)
    assert host.detect_host(thin).cpu_model == (
        "AMD CPU, family 0x19 model 0x1 (the sandbox hides its name)")
