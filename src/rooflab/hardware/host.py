"""Host identity: CPU model and flags, cores, caches, memory, OS and library versions.

Sources, in order: /proc/cpuinfo (Linux), sysfs cache descriptions
(/sys/devices/system/cpu/cpu0/cache/index*/: size and the CPUs sharing it) and NUMA nodes
(/sys/devices/system/node), `lscpu`, sysctl (macOS), the registry and kernel32
(Windows: windows.py, windows_topology.py), then the platform module.
Virtual machines often report cache sizes that belong to a different CPU than the one
the guest runs on (CPUID is filtered or emulated); callers compare them with what the
bandwidth sweep sees and say so (`probe.cpu.bandwidth`).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import cpu_topology as topo
from .cpu_name import cpu_name
from .cpu_topology import (  # noqa: F401  (CoreSplit, parse_cpulist: imported from here too)
    CoreSplit,
    core_map,
    hybrid_pmu,
    l3_instances,
    parse_cpulist,
    physical_cores,
)

# the caches' record and readers (host_caches); detect_caches below picks among them
from .host_caches import (
    SYS_CPU,
    Caches,
    _lscpu_field,
    parse_lscpu,
    sysfs_caches,
    windows_caches,
)
from .memory_limit import memory_cap, parse_meminfo
from .os_files import read as _read
from .os_files import to_int as _int
from .windows import windows_cpu
from .windows_topology import SOURCE as WIN_SOURCE
from .windows_topology import WinTopology, windows_memory, windows_topology

CPUINFO = Path("/proc/cpuinfo")
MEMINFO = Path("/proc/meminfo")
PMU_DEVICES = Path("/sys/bus/event_source/devices")


@dataclass(frozen=True)
class HostInfo:
    """What the OS says about this machine. Sizes in bytes."""

    cpu_model: str
    vendor: str
    family: int | None
    model: int | None
    flags: frozenset[str]
    cores: int
    threads: int
    caches: Caches
    memory_bytes: int | None
    memory_available_bytes: int | None
    hypervisor: str | None
    os: str
    machine: str
    libraries: dict[str, str] = field(default_factory=dict)
    core_split: CoreSplit | None = None   # None: not hybrid, or the OS does not say
    numa_nodes: int | None = None   # online NUMA nodes (sysfs); None where the OS does not say
    # (logical CPU, core key): which CPUs are SMT siblings (cpu_topology.core_map);
    # used to count physical cores in a CPU set, left out of to_dict (one pair per CPU)
    cpu_cores: tuple[tuple[int, str], ...] = ()
    # False where the kernel shows one `cpu` PMU and no cpu_core/cpu_atom: not hybrid
    hybrid_pmu: bool | None = None
    # False where no OS source counted physical cores and `cores` is os.cpu_count()'s
    # logical CPUs (2x the cores with SMT): the probe then gives no nominal (s23 r3 F1)
    cores_known: bool = True
    # the least of a cgroup limit and `ulimit -v` this process ran under, and its file
    memory_limit_bytes: int | None = None
    memory_limit_source: str | None = None

    def cores_in(self, cpus) -> int:
        """Physical cores among the logical CPUs `cpus` (SMT siblings are one core), at
        most the host's: what the nominal roof and the cache capacities count."""
        return min(physical_cores(cpus, self.cpu_cores), self.cores)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("cpu_cores")
        d["flags"] = sorted(self.flags)
        d["name"] = self.cpu_model
        d["kind"] = "cpu"
        return d


# --- /proc/cpuinfo ----------------------------------------------------------------------
def parse_cpuinfo(text: str) -> list[dict[str, str]]:
    """One dict per logical CPU (blocks separated by blank lines).

    Arm kernels may end the file with a machine-wide block (Raspberry Pi: Hardware,
    Revision, Serial, Model) that is no CPU: when some blocks have a `processor` line,
    only those count."""
    blocks: list[dict[str, str]] = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        entry = {}
        for line in chunk.splitlines():
            if ":" in line:
                key, _, value = line.partition(":")
                entry[key.strip().lower()] = value.strip()
        if entry:
            blocks.append(entry)
    cpus = [b for b in blocks if "processor" in b]
    return cpus or blocks


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """Instruction-set flags (x86 `flags`, Arm `Features`), lower case."""
    blocks = parse_cpuinfo(_read(CPUINFO) if cpuinfo is None else cpuinfo)
    for b in blocks:
        text = b.get("flags") or b.get("features")
        if text:
            return frozenset(text.lower().split())
    if cpuinfo is None and not blocks and platform.system() == "Darwin":
        # Intel Macs list CPUID features in sysctl ("AVX1.0 FMA ... AVX2 AVX512F"), named
        # like Linux's flags but for AVX; Apple silicon lists none (NEON is always there).
        text = " ".join(sysctl(k) or "" for k in ("machdep.cpu.features",
                                                  "machdep.cpu.leaf7_features"))
        return frozenset("avx" if f == "avx1.0" else f for f in text.lower().split())
    return frozenset()


def lscpu_text() -> str:
    """`lscpu`'s output in the C locale, '' where there is no lscpu (macOS, minimal images)."""
    try:
        return subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5,
                              env={**os.environ, "LC_ALL": "C"}).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def lscpu_caches() -> Caches:
    return parse_lscpu(lscpu_text())


# --- macOS (no /proc, no sysfs, no lscpu) ------------------------------------------------
def sysctl(name: str) -> str | None:
    """One sysctl value (`sysctl -n NAME`, macOS/BSD), None when absent or unreadable."""
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def sysctl_caches() -> Caches:
    """Cache sizes from sysctl: hw.perflevel0.* (the performance cores on Apple silicon,
    whose efficiency cores have smaller caches), else hw.*. Apple's L2 is one per core
    cluster (16 MiB shared by 4 P-cores on an M2 Pro): hw.perflevel0.cpusperl2 says how many
    CPUs share it, which the sweep's per-thread capacity divides by (s23 r3 F4)."""
    def size(key: str) -> int | None:
        for prefix in ("hw.perflevel0.", "hw."):
            value = _int(sysctl(prefix + key))
            if value:
                return value
        return None

    l1, l2, l3 = size("l1dcachesize"), size("l2cachesize"), size("l3cachesize")
    if not (l1 or l2 or l3):
        return Caches()
    per_l2 = _int(sysctl("hw.perflevel0.cpusperl2")) if l2 else None
    return Caches(l1d=l1, l2=l2, l3=l3, source="sysctl", l2_sharing=max(1, per_l2 or 1))


def windows_split(topo: WinTopology) -> CoreSplit | None:
    """A hybrid CPU's P/E counts from the cores' EfficiencyClass (counts only, no clock
    ratio: Windows has no cpufreq maximum per core to read)."""
    pe = topo.p_e_split()
    return CoreSplit(pe[0], pe[1], (), (), None, f"{WIN_SOURCE} EfficiencyClass") if pe else None


def detect_caches(logical_cpus: int | None = None) -> Caches:
    """sysfs first (exact per-instance sizes), lscpu for what sysfs lacks; sysctl on macOS.
    The L3 instance count: sysfs's (at least `logical_cpus` over the CPUs sharing cpu0's
    L3; at most those the affinity mask's CPUs reach), else lscpu's (only lscpu >= 2.37
    prints one)."""
    a, b = sysfs_caches(), lscpu_caches()
    if a.l1d is None and b.l1d is None:
        if platform.system() == "Darwin":
            c = sysctl_caches()
            if c.l1d is not None or c.l2 is not None:
                return c
        return Caches(source="unknown")
    n = (l3_instances((a.l3_instances, a.l3_sharing), logical_cpus or os.cpu_count() or 1)
         if a.l3 else b.l3_instances if b.l3 else 1)
    # only the L3s of the CPUs this process may run on hold its data (a cpuset)
    reach = topo.l3_reach(SYS_CPU, os.sched_getaffinity(0)) if (
        a.l3 and hasattr(os, "sched_getaffinity")) else None
    return Caches(l1d=a.l1d or b.l1d, l2=a.l2 or b.l2, l3=a.l3 or b.l3,
                  l3_instances=min(n, reach) if reach else n,
                  source="+".join(s for s in (a.source, b.source) if s),
                  l1d_sharing=a.l1d_sharing if a.l1d else 1,
                  l2_sharing=a.l2_sharing if a.l2 else 1,
                  l3_sharing=a.l3_sharing if a.l3 else 1)


# --- NUMA ---------------------------------------------------------------------------------
SYS_NODE = Path("/sys/devices/system/node")


def numa_nodes(root: Path = SYS_NODE) -> dict[int, tuple[int, ...]]:
    """Online NUMA nodes and their logical CPUs, from sysfs (`online`: "0-1";
    nodeN/cpulist). {} where the OS shows no node directory (macOS, Windows, containers
    without sysfs): callers treat that as unknown, not as one node."""
    nodes = parse_cpulist(_read(root / "online"))
    if not nodes:
        nodes = tuple(sorted(int(d.name[4:]) for d in root.glob("node*")
                             if d.name[4:].isdigit()))
    return {n: parse_cpulist(_read(root / f"node{n}" / "cpulist")) for n in nodes}


# --- memory, cores, libraries -------------------------------------------------------------
def meminfo(text: str | None = None) -> tuple[int | None, int | None]:
    """(MemTotal, MemAvailable) in bytes."""
    return parse_meminfo(_read(MEMINFO) if text is None else text)


def core_count(blocks: list[dict[str, str]], sys_cpu: Path | None = None) -> int:
    """Physical cores: distinct (physical id, core id) pairs, else sysfs topology's SMT
    groups (`sys_cpu`; s24 r2 F6: gVisor's thin cpuinfo has no core id); logical CPUs if
    neither says (detect_host then marks the count unknown)."""
    cores = core_map(blocks, sys_cpu)
    cpus = [int(b["processor"]) for b in blocks if b.get("processor", "").isdigit()]
    return (physical_cores(cpus or [c for c, _ in cores], cores) if cores
            else len(blocks) or (os.cpu_count() or 1))


def library_versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "llvmlite", "scipy", "torch"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return out


def blas_info() -> str:
    """numpy's BLAS library and the OpenBLAS core type forced by the environment, if any."""
    try:
        import numpy as np

        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        text = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # numpy builds differ; this is descriptive only
        text = "unknown"
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    return f"{text} (OPENBLAS_CORETYPE={coretype})" if coretype else text


def detect_core_split(blocks: list[dict[str, str]], sys_cpu: Path | None = None,
                      pmu: Path | None = None) -> CoreSplit | None:
    """The P/E split of a hybrid CPU from sysfs (cpu_topology), None when the OS shows none."""
    return topo.detect_core_split(blocks, sys_cpu or SYS_CPU, pmu or PMU_DEVICES)


def _darwin_split() -> CoreSplit | None:
    """Apple silicon's performance and efficiency cores (hw.perflevel0/1.physicalcpu):
    counts only, no CPU numbers and no clocks."""
    p, e = (_int(sysctl(f"hw.perflevel{i}.physicalcpu")) for i in (0, 1))
    return CoreSplit(p, e, (), (), None, "sysctl hw.perflevel0/1.physicalcpu") if p and e else None


def detect_host(cpuinfo: str | None = None) -> HostInfo:
    blocks = parse_cpuinfo(_read(CPUINFO) if cpuinfo is None else cpuinfo)
    first = blocks[0] if blocks else {}
    flags = cpu_flags(cpuinfo)
    darwin = not blocks and platform.system() == "Darwin"
    windows = not blocks and platform.system() == "Windows"
    if windows:
        first = windows_cpu()   # no /proc on Windows: the registry has the same fields
    # Arm Linux has no `model name` (lscpu decodes the part: "Neoverse-V1"), macOS no /proc
    # ("Apple M2" from sysctl), gVisor says "unknown" (cpu_name.py; s26 fC)
    model_name = cpu_name(first.get("model name", first.get("cpu model")), (lambda: (
        _lscpu_field(lscpu_text(), "Model name") if not (darwin or windows) else None)),
        ident=(first.get("vendor_id", ""), _int(first.get("cpu family")), _int(first.get("model"))))
    model_name = (model_name or (sysctl("machdep.cpu.brand_string") if darwin else None)
                  or platform.machine())
    vendor = (first.get("vendor_id") or first.get("cpu implementer")
              or (sysctl("machdep.cpu.vendor") if darwin else None) or platform.machine())
    # Arm has no CPUID family/model; its `CPU part` is what identifies the core
    # (hardware.cpu_arch looks Arm parts up by this number).
    family, model = _int(first.get("cpu family")), _int(first.get("model"))
    if model is None and first.get("cpu part"):
        model = _int(first.get("cpu part"), 0)
    if darwin and family is None and vendor in ("GenuineIntel", "AuthenticAMD"):
        # an Intel Mac prints CPUID's family/model as Linux's cpuinfo does (6 / 158 on an
        # i9-9880H): the table knows the design though no name pattern matches (s23 r3 F5)
        family, model = _int(sysctl("machdep.cpu.family")), _int(sysctl("machdep.cpu.model"))
    total, avail = meminfo()
    if total is None and darwin:
        total = _int(sysctl("hw.memsize"))
    linux_sys = None if darwin or windows else SYS_CPU   # sysfs: Linux only
    cores = core_count(blocks, linux_sys)
    threads = len(blocks) or (os.cpu_count() or 1)
    split = detect_core_split(blocks)
    # known only from cpuinfo's core ids or sysfs's SMT groups: a thin cpuinfo (gVisor) or
    # none at all leaves logical CPUs, 2x the cores with SMT (s23 r3 F1, s24 r2 F6)
    cores_known = bool(core_map(blocks, linux_sys))
    caches = None
    if darwin:
        phys = _int(sysctl("hw.physicalcpu"))
        cores, cores_known = phys or cores, phys is not None
        threads = _int(sysctl("hw.logicalcpu")) or threads
        split = _darwin_split()
    win = windows_topology() if windows else None
    if win is not None:
        cores, threads, cores_known = win.cores, win.threads, True
        split, caches = windows_split(win), windows_caches(win)
    if windows and total is None:
        total, avail = windows_memory()
    hyper = None
    if "hypervisor" in flags:
        hyper = _lscpu_field(lscpu_text(), "Hypervisor vendor") or "unknown hypervisor"
    libs = library_versions()
    libs["blas"] = blas_info()
    cap = None if windows or darwin else memory_cap()
    return HostInfo(
        cpu_model=model_name, vendor=vendor, family=family,
        model=model, flags=flags, cores=cores, threads=threads,
        caches=caches or detect_caches(len(blocks) or None),
        memory_bytes=total, memory_available_bytes=avail, hypervisor=hyper,
        os=f"{platform.system()} {platform.release()}", machine=platform.machine(),
        libraries=libs, core_split=split, numa_nodes=len(numa_nodes()) or None,
        cpu_cores=core_map(blocks, SYS_CPU),
        # Windows' EfficiencyClass all alike says "one core type" as one `cpu` PMU does
        hybrid_pmu=False if win is not None and split is None else hybrid_pmu(PMU_DEVICES),
        cores_known=cores_known, memory_limit_bytes=cap.limit if cap else None,
        memory_limit_source=cap.named if cap else None)
