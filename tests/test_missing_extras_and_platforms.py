"""Audit 6: a core-only install (extras missing) and other platforms (Arm, macOS).

Missing modules are simulated with sys.modules[name] = None (import raises ImportError);
other platforms with monkeypatched /proc text, lscpu and sysctl answers.
"""

from __future__ import annotations

import sys

import pytest

from rooflab.cli.main import main
from rooflab.hardware import host
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.probe.cpu.simd import simd_bits

# A Raspberry Pi 4 style /proc/cpuinfo: per-CPU blocks, then a machine-wide block.
ARM_PI = "".join(f"""processor\t: {i}
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm crc32 cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd08
CPU revision\t: 3

""" for i in range(4)) + """Hardware\t: BCM2835
Revision\t: c03111
Serial\t\t: 10000000abcdef01
Model\t\t: Raspberry Pi 4 Model B Rev 1.1
"""

# An AWS Graviton3 (Neoverse V1) /proc/cpuinfo block: no model name, the part says it all.
GRAVITON3 = """processor\t: 0
BogoMIPS\t: 2100.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm \
jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs \
paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd40
CPU revision\t: 1
"""


def _missing(monkeypatch, *names):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


class _NotInstalled:
    """A meta-path finder that refuses `names`: the module is absent from sys.modules, as on
    a machine without it. (sys.modules[name] = None is not absent to every library: scipy's
    array-API check reads sys.modules['torch'].Tensor, so a timing that slowed under load,
    whose Mann-Whitney test runs in scipy, raised AttributeError: 1 run in 4 on a busy box.)"""

    def __init__(self, names):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(f"No module named {fullname!r} (simulated)")
        return None


def _not_installed(monkeypatch, *names):
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NotInstalled(names), *sys.meta_path])


# --- missing extras: one error line naming the right extra, before any work ---------------
def test_probe_torch_cpu_without_torch_names_the_torch_extra(monkeypatch, capsys, tmp_path):
    _missing(monkeypatch, "torch")
    out = tmp_path / "p.json"
    assert main(["probe", "--device", "torch-cpu", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    # [gpu] would pull triton, nvidia-ml-py and a CUDA torch onto a CPU-only machine.
    assert "pip install 'rooflab[torch]'" in err and "rooflab[gpu]" not in err
    assert "Traceback" not in err and err.count("error:") == 1 and not out.exists()


def test_probe_cuda_without_torch_still_names_the_gpu_extra(monkeypatch, capsys):
    _missing(monkeypatch, "torch")
    assert main(["probe", "--device", "cuda"]) == 2
    assert "pip install 'rooflab[gpu]'" in capsys.readouterr().err


@pytest.mark.parametrize("device,extra", [("torch-cpu", "torch"), ("cuda", "gpu")])
def test_bench_on_torch_device_without_torch_fails_before_warning_and_bar(
        monkeypatch, capsys, tmp_path, device, extra):
    _missing(monkeypatch, "torch")
    out = tmp_path / "zoo.png"
    # --on T4 with a CPU device used to print the unlike-machines warning and start the
    # progress bar, then fail inside the zoo naming device 'cpu'.
    assert main(["bench", "--device", device, "--on", "T4", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    from rooflab.errors import install_command, install_reason

    # the command ends its line (copyable as is), the reason for the torch one follows
    assert err.strip().splitlines() == [
        f"error: the Python package 'torch' is not installed (needed for rooflab bench "
        f"--device {device}); install it with: {install_command(extra)}"] + (
        [install_reason(extra)] if extra == "torch" else [])
    # the torch line names the CPU build first: a plain `pip install 'rooflab[torch]'`
    # pulls the multi-GB CUDA build (review 18b A)
    if extra == "torch":
        assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in err
    assert not out.exists()


def test_measure_api_with_given_counts_needs_neither_numba_nor_torch(monkeypatch):
    import rooflab
    from rooflab.errors import MissingDependency

    _not_installed(monkeypatch, "torch", "numba")
    k = rooflab.measure(lambda: sum(range(1000)), flop=1e3, bytes=8e3, plan="quick")
    assert k.seconds > 0 and k.flop == {"fp32": 1e3} and k.bytes == {"DRAM": 8e3}
    with pytest.raises(MissingDependency, match=r"rooflab\[torch\]"):
        rooflab.measure(lambda: None, plan="quick")


# --- Arm Linux ------------------------------------------------------------------------
def test_arm_machine_block_is_not_a_cpu(monkeypatch):
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    h = host.detect_host(ARM_PI)
    # The trailing Hardware/Revision/Serial/Model block used to count as a fifth CPU.
    assert (h.threads, h.cores) == (4, 4)
    assert len(host.parse_cpuinfo(ARM_PI)) == 4
    assert h.model == 0xD08 and h.vendor == "0x41"


def test_arm_cpu_part_reaches_the_microarch_table(monkeypatch):
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    h = host.detect_host(GRAVITON3)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    # Before: model None, "generic NEON" at 128 bits - half the V1's 2 x 256-bit SVE peak.
    assert arch.name == "Neoverse V1" and arch.simd_bits == 256
    assert "Arm CPU part 0xd40" in " ".join(arch.notes)


def test_arm_model_name_from_lscpu(monkeypatch):
    lscpu = ("Architecture:            aarch64\nVendor ID:               ARM\n"
             "Model name:              Neoverse-V1\nL1d cache:  64 KiB (1 instance)\n")
    monkeypatch.setattr(host, "lscpu_text", lambda: lscpu)
    assert host.detect_host(GRAVITON3).cpu_model == "Neoverse-V1"


# --- macOS: no /proc, no sysfs, no lscpu; sysctl instead ---------------------------------
def _macos(monkeypatch, tmp_path, values: dict[str, str]):
    import platform

    monkeypatch.setattr(host, "CPUINFO", tmp_path / "no-cpuinfo")
    monkeypatch.setattr(host, "MEMINFO", tmp_path / "no-meminfo")
    monkeypatch.setattr(host, "sysfs_caches", lambda root=None: host.Caches())
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    monkeypatch.setattr(host, "sysctl", values.get)
    monkeypatch.setattr(platform, "system", lambda: "Darwin")


APPLE_M2 = {"machdep.cpu.brand_string": "Apple M2", "hw.memsize": str(16 * 2**30),
            "hw.physicalcpu": "8", "hw.logicalcpu": "8",
            "hw.perflevel0.l1dcachesize": "131072", "hw.l1dcachesize": "65536",
            "hw.perflevel0.l2cachesize": "16777216", "hw.l2cachesize": "4194304"}


def test_macos_apple_silicon_host_from_sysctl(monkeypatch, tmp_path):
    _macos(monkeypatch, tmp_path, APPLE_M2)
    h = host.detect_host()
    assert h.cpu_model == "Apple M2" and h.memory_bytes == 16 * 2**30
    assert (h.cores, h.threads) == (8, 8)
    # The performance cores' caches, not the efficiency cores'.
    assert (h.caches.l1d, h.caches.l2, h.caches.l3, h.caches.source) == (
        128 * 1024, 16 * 2**20, None, "sysctl")
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    assert arch.name == "Apple M1-M4 (P-core)"


def test_intel_mac_flags_from_sysctl(monkeypatch, tmp_path):
    _macos(monkeypatch, tmp_path, {
        "machdep.cpu.brand_string": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz",
        "machdep.cpu.vendor": "GenuineIntel",
        "machdep.cpu.features": "FPU VME SSE SSE2 SSE3 AVX1.0 FMA F16C",
        "machdep.cpu.leaf7_features": "SMEP BMI1 AVX2 BMI2"})
    flags = host.cpu_flags()
    assert {"avx", "avx2", "fma", "sse2"} <= flags
    assert simd_bits(flags, "x86_64") == 256       # was 128: no flags without /proc
    assert host.detect_host().vendor == "GenuineIntel"


def test_bare_platform_degrades_without_crashing(monkeypatch, tmp_path):
    _macos(monkeypatch, tmp_path, {})              # no sysctl answers either
    h = host.detect_host()
    assert h.caches.source == "unknown" and h.memory_bytes is None
    assert h.threads >= 1 and h.cores >= 1 and h.flags == frozenset()


# --- usage errors without click -----------------------------------------------------------
def test_usage_error_without_click_is_one_error_line(monkeypatch, capsys):
    # typer >= 0.2x vendors click and no longer installs it: a fresh core venv has no
    # click, and every mistyped option used to end in "No module named 'click'".
    from rooflab.cli.app import build_app

    build_app()                                    # typer's modules loaded, as in a CLI run
    _missing(monkeypatch, "click")
    assert main(["demo", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No such option: --device") and "Traceback" not in err


# --- the FMA kernel's width comes from what numba compiles for --------------------------
def test_fma_kernel_width_follows_numba_not_proc_cpuinfo(monkeypatch, tmp_path):
    pytest.importorskip("numba")
    from numba.core import config

    from rooflab.probe.cpu import kernels as K

    # The width was simd_bits() of /proc/cpuinfo; numba's cached kernels are keyed by
    # LLVM's features, so without /proc (or with other flags) a cached 512-bit kernel ran
    # on arrays sized for 128 bits and the probe died with `malloc(): invalid size`.
    monkeypatch.setattr(host, "CPUINFO", tmp_path / "no-cpuinfo")
    assert simd_bits(K.compile_features()) == K.SIMD_BITS
    monkeypatch.setattr(config, "CPU_FEATURES", "+64bit,+sse2,+avx,+avx2,+fma,-avx512f")
    feats = K.compile_features()
    assert {"avx", "avx2", "fma"} <= feats and "avx512f" not in feats
    assert simd_bits(feats, "x86_64") == 256
    monkeypatch.setattr(config, "CPU_FEATURES", "+neon,+fp-armv8,+sve")
    assert simd_bits(K.compile_features(), "aarch64") == 128


def test_python_dash_m_rooflab_runs_the_cli():
    # Where pip put the `rooflab` script off PATH (pip install --user), `python -m` works.
    import subprocess

    r = subprocess.run([sys.executable, "-m", "rooflab", "ai", "matmul", "2", "3", "4",
                        "--dtype", "fp32", "--json"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    import json

    d = json.loads(r.stdout)
    assert d["flop"] == 2 * 2 * 3 * 4                        # 2 FLOP per multiply-add
    assert d["bytes"] == 4 * (2 * 4 + 4 * 3 + 2 * 3)          # A, B read; C written
    bad = subprocess.run([sys.executable, "-m", "rooflab", "ai", "matmul", "2"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


def test_probe_gpu_on_the_cpu_device_names_the_torch_extra(monkeypatch):
    import sys

    import pytest

    from rooflab.errors import MissingDependency
    from rooflab.probe.gpu import probe_gpu

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependency, match=r"rooflab\[torch\]"):
        probe_gpu("cpu", "quick")
    with pytest.raises(MissingDependency, match=r"rooflab\[gpu\]"):
        probe_gpu("cuda", "quick")


def test_unknown_llm_config_is_said_before_a_missing_on(capsys):
    from rooflab.cli.main import main

    assert main(["llm", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'nosuch' is not a file or a bundled config")


def test_plot_to_html_points_at_report(tmp_path, capsys):
    import json

    from rooflab.cli.main import main

    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "a", "flop": 1e9, "bytes": 1e8}]}))
    assert main(["plot", str(k), "--on", "T4", "-o", str(tmp_path / "x.html")]) == 2
    assert "use `rooflab report ... -o report.html`" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_scale_header_says_the_ceiling_a_missing_dtype_falls_back_to(capsys, monkeypatch):
    from rooflab.cli.main import main

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["scale", "--on", "T4", "--dtype", "bf16"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # no bf16 math on a T4: bf16 runs at the fp32 rate (s19 r1 F9), on fp32 vector
    assert "4096 tokens/GPU, bf16 (on fp32 vector)" in out
    assert main(["scale", "--on", "H100"]) == 0
    assert "(on " not in capsys.readouterr().out.split("\n")[0]
